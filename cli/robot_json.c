/* robot_json.c — reading robot.json into a sid_robot_desc, writing fitted values back.
 *
 * A reader walks the document with a small context (file name, error) and a JSON path
 * string that grows as it descends ("joints[1]" -> "joints[1].friction.viscous"), so that
 * every message can name the exact place of a mistake.
 */
#include "robot_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic.h"
#include "diag.h"
#include "numfmt.h"
#include "jsonfile.h"

#define PATH_LEN 256

typedef struct {
    const char *file;
    sid_error *err;
} reader;

typedef enum { ANY, POSITIVE, NONNEGATIVE } range;

static const double gravity_default[3] = { 0, 0, -9.81 };
static const char *const inertia_key[6] = { "ixx", "iyy", "izz", "ixy", "ixz", "iyz" };

/* ---- messages --------------------------------------------------------------------------- */

static int expected(reader *r, const char *where, const char *what, const cJSON *got)
{
    return jsonfile_expected(r->err, r->file, where, what, got);
}

static void join(char *out, const char *base, const char *key)
{
    /* Paths are short; a cut one still points the user to the right place. */
    if (snprintf(out, PATH_LEN, "%s%s%s", base, *base ? "." : "", key) >= PATH_LEN)
        strcpy(out + PATH_LEN - 4, "...");
}

/* ---- typed getters: each returns 0 or -1 with the error set ------------------------------ */

/* Warn about keys not in `known` (NULL-terminated); a repeated key is an error, because
 * cJSON would silently use the first and the user probably edited the second. */
static int check_keys(reader *r, const cJSON *obj, const char *where, const char *const *known)
{
    for (const cJSON *c = obj->child; c; c = c->next) {
        for (const cJSON *d = obj->child; d != c; d = d->next)
            if (strcmp(c->string, d->string) == 0) {
                char p[PATH_LEN];
                join(p, where, c->string);
                sid_error_set(r->err, SID_ERR_INPUT, "%s: %s: key given twice", r->file,
                              *where ? p : c->string);
                return -1;
            }
        int ok = c->string[0] == '_';
        for (int i = 0; known[i] && !ok; i++)
            ok = strcmp(c->string, known[i]) == 0;
        if (!ok) {
            char p[PATH_LEN];
            join(p, where, c->string);
            cli_warn("%s: %s: unknown key (ignored)", r->file, p);
        }
    }
    return 0;
}

static int get_object(reader *r, const cJSON *obj, const char *key, const char *where,
                      const cJSON **out, int required, const char *const *known)
{
    char p[PATH_LEN];
    join(p, where, key);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    *out = NULL;
    if (!v && !required)
        return 0;
    if (!cJSON_IsObject(v))
        return expected(r, p, "an object", v);
    *out = v;
    return check_keys(r, v, p, known);
}

static int check_number(reader *r, const cJSON *v, const char *p, range rg, double *out)
{
    static const char *const what[] = { "a finite number", "a positive number",
                                        "a non-negative number" };
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        return expected(r, p, what[rg], v);
    double x = v->valuedouble;
    if ((rg == POSITIVE && !(x > 0)) || (rg == NONNEGATIVE && !(x >= 0)))
        return expected(r, p, what[rg], v);
    *out = x;
    return 0;
}

/* obj.key as a number; absent keeps *out (the default) unless required. */
static int get_number(reader *r, const cJSON *obj, const char *key, const char *where,
                      range rg, int required, double *out)
{
    char p[PATH_LEN];
    join(p, where, key);
    const cJSON *v = obj ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
    if (!v && !required)
        return 0;
    return check_number(r, v, p, rg, out);
}

/* obj.key as 3 numbers; absent keeps out (the default) unless required. */
static int get_vec3(reader *r, const cJSON *obj, const char *key, const char *where,
                    int required, double out[3])
{
    char p[PATH_LEN], pk[PATH_LEN + 16];   /* room for "[%d]" of any int, so -O1 sees no truncation */
    join(p, where, key);
    const cJSON *v = obj ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
    if (!v && !required)
        return 0;
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != 3)
        return expected(r, p, "an array of 3 numbers", v);
    for (int k = 0; k < 3; k++) {
        snprintf(pk, sizeof pk, "%s[%d]", p, k % 3);
        if (check_number(r, cJSON_GetArrayItem(v, k), pk, ANY, &out[k]))
            return -1;
    }
    return 0;
}

/* A name usable inside parameter names, globs and CSV headers. */
static int get_name(reader *r, const cJSON *obj, const char *key, const char *where,
                    char *out, int required)
{
    char p[PATH_LEN];
    join(p, where, key);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v && !required)
        return 0;
    if (!cJSON_IsString(v) || !v->valuestring[0])
        return expected(r, p, "a name (a non-empty string)", v);
    const char *s = v->valuestring;
    if (strlen(s) >= SID_MAX_NAME)
        return expected(r, p, "a name of at most 63 characters", v);
    /* These characters would make "joints.NAME.offset" or "q.NAME" ambiguous. */
    for (const char *c = s; *c; c++)
        if (strchr(".[]*?,\"' \t\n\r", *c))
            return expected(r, p, "a name without '.', '[', ']', '*', '?', ',', quotes or spaces", v);
    strcpy(out, s);
    return 0;
}

/* ---- links and joints ----------------------------------------------------------------- */

static int read_link(reader *r, const cJSON *v, const char *where, sid_link_desc *l)
{
    static const char *const keys[] = { "name", "mass", "com", "inertia", NULL };
    static const char *const ikeys[] = { "ixx", "iyy", "izz", "ixy", "ixz", "iyz", NULL };
    if (!cJSON_IsObject(v))
        return expected(r, where, "an object", v);
    if (check_keys(r, v, where, keys) || get_name(r, v, "name", where, l->name, 1))
        return -1;
    const cJSON *mass = cJSON_GetObjectItemCaseSensitive(v, "mass");
    const cJSON *inertia;
    if (get_object(r, v, "inertia", where, &inertia, 0, ikeys))
        return -1;
    if (!mass) {
        /* A massless link has no COM or inertia to give; refuse a half-described one. */
        if (inertia || cJSON_GetObjectItemCaseSensitive(v, "com")) {
            char p[PATH_LEN];
            join(p, where, "mass");
            return expected(r, p, "a positive number (com or inertia is given)", NULL);
        }
        return 0;
    }
    l->has_mass = 1;
    if (get_number(r, v, "mass", where, POSITIVE, 1, &l->mass) ||
        get_vec3(r, v, "com", where, 0, l->com))
        return -1;
    char p[PATH_LEN];
    join(p, where, "inertia");
    for (int k = 0; k < 6; k++)
        if (get_number(r, inertia, inertia_key[k], p, k < 3 ? NONNEGATIVE : ANY, inertia && k < 3,
                       &l->inertia[k]))
            return -1;
    return 0;
}

static int link_index(const sid_robot_desc *d, const char *name)
{
    for (int i = 0; i < d->nlink; i++)
        if (strcmp(d->link[i].name, name) == 0)
            return i;
    return -1;
}

/* joints[i].parent / .child: a link name, resolved to its index. */
static int get_link_ref(reader *r, const cJSON *v, const char *key, const char *where,
                        const sid_robot_desc *d, int *out)
{
    char name[SID_MAX_NAME], p[PATH_LEN];
    join(p, where, key);
    const cJSON *ref = cJSON_GetObjectItemCaseSensitive(v, key);
    if (!cJSON_IsString(ref))
        return expected(r, p, "the name of a link", ref);
    if (get_name(r, v, key, where, name, 1))
        return -1;
    *out = link_index(d, name);
    if (*out < 0) {
        sid_error_set(r->err, SID_ERR_INPUT, "%s: %s: unknown link '%s'", r->file, p, name);
        return -1;
    }
    return 0;
}

static int get_enum(reader *r, const cJSON *obj, const char *key, const char *where,
                    const char *const *names, const char *what, int *out)
{
    char p[PATH_LEN];
    join(p, where, key);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    for (int i = 0; v && cJSON_IsString(v) && names[i]; i++)
        if (strcmp(v->valuestring, names[i]) == 0) {
            *out = i;
            return 0;
        }
    return expected(r, p, what, v);
}

static int read_friction(reader *r, const cJSON *v, const char *where, sid_joint_desc *j)
{
    static const char *const keys[] = { "viscous", "coulomb", "smoothing", "stribeck", NULL };
    static const char *const skeys[] = { "torque", "velocity", NULL };
    const cJSON *f, *s;
    char p[PATH_LEN];
    join(p, where, "friction");
    if (get_object(r, v, "friction", where, &f, 0, keys))
        return -1;
    if (!f)
        return 0;
    if (get_number(r, f, "viscous", p, NONNEGATIVE, 0, &j->viscous) ||
        get_number(r, f, "coulomb", p, NONNEGATIVE, 0, &j->coulomb) ||
        get_number(r, f, "smoothing", p, POSITIVE, 0, &j->smoothing) ||
        get_object(r, f, "stribeck", p, &s, 0, skeys))
        return -1;
    if (!s)
        return 0;
    char ps[PATH_LEN];
    join(ps, p, "stribeck");
    j->has_stribeck = 1;
    return get_number(r, s, "torque", ps, ANY, 1, &j->stribeck_torque) ||
                   get_number(r, s, "velocity", ps, POSITIVE, 1, &j->stribeck_velocity)
               ? -1
               : 0;
}

static int read_motor(reader *r, const cJSON *v, const char *where, sid_joint_desc *j)
{
    static const char *const keys[] = { "input", "gear", "kt", "ke", "resistance", NULL };
    static const char *const inputs[] = { "torque", "current", "voltage", NULL };
    static const sid_motor_input kinds[] = { SID_MOTOR_TORQUE, SID_MOTOR_CURRENT,
                                             SID_MOTOR_VOLTAGE };
    const cJSON *mo;
    char p[PATH_LEN];
    int input = 0;
    join(p, where, "motor");
    if (get_object(r, v, "motor", where, &mo, 0, keys))
        return -1;
    if (!mo)
        return 0;
    if (j->type == SID_JOINT_FIXED)
        return expected(r, p, "no motor on a fixed joint", mo);
    if (get_enum(r, mo, "input", p, inputs, "\"torque\", \"current\" or \"voltage\"", &input))
        return -1;
    j->motor = kinds[input];
    int voltage = j->motor == SID_MOTOR_VOLTAGE;
    /* The voltage model divides by the resistance: it must be given and positive. */
    return get_number(r, mo, "gear", p, ANY, 0, &j->gear) ||
                   get_number(r, mo, "kt", p, ANY, 0, &j->kt) ||
                   get_number(r, mo, "ke", p, ANY, 0, &j->ke) ||
                   get_number(r, mo, "resistance", p, voltage ? POSITIVE : ANY, voltage,
                              &j->resistance)
               ? -1
               : 0;
}

/* A free joint's six coordinates are state: it has none of the fields that describe a joint
 * with an axis. Naming the field and why beats ignoring what the user believes is used. */
static int check_free_joint(reader *r, const cJSON *v, const char *where)
{
    static const char *const field[][2] = {
        { "origin", "its pose is its state" },
        { "axis", "it moves in all six directions" },
        { "armature", "no rotor turns a floating link" },
        { "friction", "a floating link meets resistance only through contact" },
        { "motor", "nothing drives a floating link directly; motors go on the joints below it" },
        { "offset", "its pose is logged directly, without an encoder" },
    };
    for (size_t k = 0; k < sizeof field / sizeof field[0]; k++)
        if (cJSON_GetObjectItemCaseSensitive(v, field[k][0])) {
            char p[PATH_LEN];
            join(p, where, field[k][0]);
            sid_error_set(r->err, SID_ERR_INPUT, "%s: %s: a free joint has no %s; %s", r->file, p,
                          field[k][0], field[k][1]);
            return -1;
        }
    return 0;
}

static int read_joint(reader *r, const cJSON *v, const char *where, const sid_robot_desc *d,
                      sid_joint_desc *j)
{
    static const char *const keys[] = { "name", "type", "parent", "child", "origin", "axis",
                                        "armature", "friction", "motor", "offset", NULL };
    static const char *const okeys[] = { "xyz", "rpy", NULL };
    static const char *const types[] = { "revolute", "continuous", "prismatic", "fixed", "free",
                                         NULL };
    static const sid_joint_type kinds[] = { SID_JOINT_REVOLUTE, SID_JOINT_REVOLUTE,
                                            SID_JOINT_PRISMATIC, SID_JOINT_FIXED, SID_JOINT_FREE };
    const cJSON *origin;
    char p[PATH_LEN];
    int type = 0;
    sid_joint_desc_defaults(j);
    j->axis[0] = 1; /* URDF's default axis */
    if (!cJSON_IsObject(v))
        return expected(r, where, "an object", v);
    if (check_keys(r, v, where, keys) || get_name(r, v, "name", where, j->name, 1) ||
        get_enum(r, v, "type", where, types,
                 "\"revolute\", \"continuous\", \"prismatic\", \"fixed\" or \"free\"", &type))
        return -1;
    j->type = kinds[type];
    if (j->type == SID_JOINT_FREE && check_free_joint(r, v, where))
        return -1;
    join(p, where, "origin");
    if (get_link_ref(r, v, "parent", where, d, &j->parent) ||
        get_link_ref(r, v, "child", where, d, &j->child) ||
        get_object(r, v, "origin", where, &origin, 0, okeys) ||
        get_vec3(r, origin, "xyz", p, 0, j->xyz) || get_vec3(r, origin, "rpy", p, 0, j->rpy) ||
        get_vec3(r, v, "axis", where, 0, j->axis) ||
        get_number(r, v, "armature", where, NONNEGATIVE, 0, &j->armature) ||
        get_number(r, v, "offset", where, ANY, 0, &j->offset) ||
        read_friction(r, v, where, j) || read_motor(r, v, where, j))
        return -1;
    return 0;
}

/* ---- contact ---------------------------------------------------------------------------- */

static int read_ground(reader *r, const cJSON *g, const char *where, sid_ground_desc *out)
{
    /* Ranges as core's sid_model_check_theta: the activation width and the friction's
     * velocity scale divide, so they must be positive. */
    return get_number(r, g, "height", where, ANY, 0, &out->height) ||
                   get_number(r, g, "stiffness", where, NONNEGATIVE, 0, &out->stiffness) ||
                   get_number(r, g, "damping", where, NONNEGATIVE, 0, &out->damping) ||
                   get_number(r, g, "friction", where, NONNEGATIVE, 0, &out->friction) ||
                   get_number(r, g, "width", where, POSITIVE, 0, &out->width) ||
                   get_number(r, g, "smoothing", where, POSITIVE, 0, &out->smoothing)
               ? -1
               : 0;
}

static int read_sphere(reader *r, const cJSON *v, const char *where, const sid_robot_desc *d,
                       sid_sphere_desc *sp)
{
    static const char *const keys[] = { "name", "link", "xyz", "radius", NULL };
    if (!cJSON_IsObject(v))
        return expected(r, where, "an object", v);
    return check_keys(r, v, where, keys) || get_name(r, v, "name", where, sp->name, 1) ||
                   get_link_ref(r, v, "link", where, d, &sp->link) ||
                   get_vec3(r, v, "xyz", where, 1, sp->xyz) ||
                   get_number(r, v, "radius", where, NONNEGATIVE, 0, &sp->radius)
               ? -1
               : 0;
}

/* The optional "contact" object: a ground plane and the spheres that touch it. */
static int read_contact(reader *r, const cJSON *root, sid_robot_desc *d)
{
    static const char *const keys[] = { "model", "ground", "spheres", NULL };
    static const char *const gkeys[] = { "height", "stiffness", "damping", "friction", "width",
                                         "smoothing", NULL };
    static const char *const models[] = { "compliant", "hard", NULL };
    static const sid_contact_model kinds[] = { SID_CONTACT_COMPLIANT, SID_CONTACT_HARD };
    const cJSON *c, *g;
    int model = 0;
    if (get_object(r, root, "contact", "", &c, 0, keys))
        return -1;
    if (!c)
        return 0;
    if (cJSON_GetObjectItemCaseSensitive(c, "model") &&
        get_enum(r, c, "model", "contact", models, "\"compliant\" or \"hard\"", &model))
        return -1;
    if (get_object(r, c, "ground", "contact", &g, 0, gkeys))
        return -1;
    sid_ground_desc_defaults(&d->ground);
    d->ground.present = g != NULL;
    d->ground.model = kinds[model];
    if (g && read_ground(r, g, "contact.ground", &d->ground))
        return -1;

    const cJSON *spheres = cJSON_GetObjectItemCaseSensitive(c, "spheres"), *v;
    if (!spheres)
        return 0;
    if (!cJSON_IsArray(spheres))
        return expected(r, "contact.spheres", "an array of spheres", spheres);
    if (cJSON_GetArraySize(spheres) > 0 && !g) {
        /* Without a plane nothing can touch them: surely the ground was forgotten. */
        sid_error_set(r->err, SID_ERR_INPUT, "%s: contact.ground: contact spheres need a ground "
                      "plane; expected an object (\"ground\": {} for the defaults), got nothing",
                      r->file);
        return -1;
    }
    d->sphere = calloc((size_t)cJSON_GetArraySize(spheres) + 1, sizeof *d->sphere);
    if (!d->sphere) {
        sid_error_set(r->err, SID_ERR_NOMEM, "%s: out of memory", r->file);
        return -1;
    }
    char p[PATH_LEN];
    cJSON_ArrayForEach(v, spheres)
    {
        snprintf(p, sizeof p, "contact.spheres[%d]", d->nsphere);
        if (read_sphere(r, v, p, d, &d->sphere[d->nsphere]))
            return -1;
        d->nsphere++;
    }
    return 0;
}

/* ---- loading ---------------------------------------------------------------------------- */

static int read_robot(reader *r, const cJSON *root, sid_robot_desc *d)
{
    static const char *const keys[] = { "name", "gravity", "links", "joints", "contact", NULL };
    if (!cJSON_IsObject(root))
        return expected(r, "top level", "an object", root);
    if (check_keys(r, root, "", keys) || get_name(r, root, "name", "", d->name, 0))
        return -1;
    memcpy(d->gravity, gravity_default, sizeof d->gravity);
    if (get_vec3(r, root, "gravity", "", 0, d->gravity))
        return -1;

    const cJSON *links = cJSON_GetObjectItemCaseSensitive(root, "links");
    if (!cJSON_IsArray(links) || cJSON_GetArraySize(links) == 0)
        return expected(r, "links", "a non-empty array of links", links);
    const cJSON *joints = cJSON_GetObjectItemCaseSensitive(root, "joints");
    if (joints && !cJSON_IsArray(joints))
        return expected(r, "joints", "an array of joints", joints);

    int nlink = cJSON_GetArraySize(links), njoint = joints ? cJSON_GetArraySize(joints) : 0;
    d->link = calloc((size_t)nlink, sizeof *d->link);
    d->joint = calloc(njoint ? (size_t)njoint : 1, sizeof *d->joint);
    if (!d->link || !d->joint) {
        sid_error_set(r->err, SID_ERR_NOMEM, "%s: out of memory", r->file);
        return -1;
    }
    char p[PATH_LEN];
    const cJSON *v;
    cJSON_ArrayForEach(v, links)
    {
        snprintf(p, sizeof p, "links[%d]", d->nlink);
        if (read_link(r, v, p, &d->link[d->nlink]))
            return -1;
        /* Joints refer to links by name: a repeated one would be ambiguous right away. */
        int same = link_index(d, d->link[d->nlink].name);
        if (same >= 0) {
            sid_error_set(r->err, SID_ERR_INPUT, "%s: %s.name: duplicate link name '%s' "
                          "(also links[%d])", r->file, p, d->link[same].name, same);
            return -1;
        }
        d->nlink++;
    }
    cJSON_ArrayForEach(v, joints)
    {
        snprintf(p, sizeof p, "joints[%d]", d->njoint);
        if (read_joint(r, v, p, d, &d->joint[d->njoint]))
            return -1;
        d->njoint++;
    }
    return read_contact(r, root, d);
}

int robot_json_load(const char *path, sid_robot_desc *d, cJSON **doc, sid_error *err)
{
    reader r = { path, err };
    memset(d, 0, sizeof *d);
    if (doc)
        *doc = NULL;
    cJSON *root = jsonfile_load(path, err);
    if (!root)
        return -1;
    if (read_robot(&r, root, d)) {
        cJSON_Delete(root);
        robot_desc_free(d);
        return -1;
    }
    if (doc)
        *doc = root;
    else
        cJSON_Delete(root);
    return 0;
}

void robot_desc_free(sid_robot_desc *d)
{
    free(d->link);
    free(d->joint);
    free(d->sphere);
    memset(d, 0, sizeof *d);
}

int robot_json_model(const char *path, sid_model **m, double **theta0, cJSON **doc,
                     sid_error *err)
{
    sid_robot_desc d;
    *m = NULL;
    *theta0 = NULL;
    if (robot_json_load(path, &d, doc, err))
        return -1;
    sid_status s = sid_model_create(m, theta0, &d, err);
    robot_desc_free(&d);
    if (s != SID_OK) {
        sid_error_prefix(err, "%s", path);
        if (doc) {
            cJSON_Delete(*doc);
            *doc = NULL;
        }
        return -1;
    }
    return 0;
}

/* ---- parameter locations ------------------------------------------------------------------ */

/* Where parameter p lives: root[scope][array][p->owner] (scope NULL: array is a key of the
 * root; array NULL: the root itself), then the object keys key[0..nkey-1]; index >= 0
 * selects an element of the last key's array. */
typedef struct {
    const char *scope;
    const char *array;
    const char *key[3];
    int nkey;
    int index;
    double dflt;       /* the loader's value when the field is absent */
} location;

/* contact.ground.KEY: every ground field is optional, with sid_ground_desc_defaults. */
static void locate_ground(sid_param_kind kind, location *l)
{
    sid_ground_desc g;
    sid_ground_desc_defaults(&g);
    l->array = NULL;
    l->key[0] = "contact";
    l->key[1] = "ground";
    l->nkey = 3;
    switch (kind) {
    case SID_P_GROUND_HEIGHT: l->key[2] = "height"; l->dflt = g.height; break;
    case SID_P_GROUND_STIFFNESS: l->key[2] = "stiffness"; l->dflt = g.stiffness; break;
    case SID_P_GROUND_DAMPING: l->key[2] = "damping"; l->dflt = g.damping; break;
    case SID_P_GROUND_FRICTION: l->key[2] = "friction"; l->dflt = g.friction; break;
    case SID_P_GROUND_WIDTH: l->key[2] = "width"; l->dflt = g.width; break;
    default: /* SID_P_GROUND_SMOOTHING */ l->key[2] = "smoothing"; l->dflt = g.smoothing; break;
    }
}

static location locate(const sid_param_info *p)
{
    sid_joint_desc jd;
    sid_joint_desc_defaults(&jd);
    location l = { NULL, "joints", { NULL, NULL, NULL }, 1, -1, 0 };
    switch (p->kind) {
    case SID_P_GROUND_HEIGHT:
    case SID_P_GROUND_STIFFNESS:
    case SID_P_GROUND_DAMPING:
    case SID_P_GROUND_FRICTION:
    case SID_P_GROUND_WIDTH:
    case SID_P_GROUND_SMOOTHING:
        locate_ground(p->kind, &l);
        break;
    case SID_P_SPHERE_XYZ:
        l.scope = "contact";
        l.array = "spheres";
        l.key[0] = "xyz";
        l.index = p->comp;
        l.dflt = NAN; /* required */
        break;
    case SID_P_SPHERE_RADIUS:
        l.scope = "contact";
        l.array = "spheres";
        l.key[0] = "radius";
        break;
    case SID_P_GRAVITY:
        l.array = NULL;
        l.key[0] = "gravity";
        l.index = p->comp;
        l.dflt = gravity_default[p->comp];
        break;
    case SID_P_MASS:
        l.array = "links";
        l.key[0] = "mass";
        l.dflt = NAN; /* never absent when it is a parameter */
        break;
    case SID_P_COM:
        l.array = "links";
        l.key[0] = "com";
        l.index = p->comp;
        break;
    case SID_P_INERTIA:
        l.array = "links";
        l.key[0] = "inertia";
        l.key[1] = inertia_key[p->comp];
        l.nkey = 2;
        break;
    case SID_P_XYZ:
    case SID_P_RPY:
        l.key[0] = "origin";
        l.key[1] = p->kind == SID_P_XYZ ? "xyz" : "rpy";
        l.nkey = 2;
        l.index = p->comp;
        break;
    case SID_P_ARMATURE:
        l.key[0] = "armature";
        l.dflt = jd.armature;
        break;
    case SID_P_VISCOUS:
    case SID_P_COULOMB:
    case SID_P_SMOOTHING:
        l.key[0] = "friction";
        l.key[1] = p->kind == SID_P_VISCOUS ? "viscous"
                   : p->kind == SID_P_COULOMB ? "coulomb"
                                              : "smoothing";
        l.nkey = 2;
        l.dflt = p->kind == SID_P_VISCOUS ? jd.viscous
                 : p->kind == SID_P_COULOMB ? jd.coulomb
                                            : jd.smoothing;
        break;
    case SID_P_STRIBECK_TORQUE:
    case SID_P_STRIBECK_VELOCITY:
        l.key[0] = "friction";
        l.key[1] = "stribeck";
        l.key[2] = p->kind == SID_P_STRIBECK_TORQUE ? "torque" : "velocity";
        l.nkey = 3;
        l.dflt = NAN;
        break;
    case SID_P_GEAR:
    case SID_P_KT:
    case SID_P_KE:
    case SID_P_RESISTANCE:
        l.key[0] = "motor";
        l.key[1] = p->kind == SID_P_GEAR ? "gear"
                   : p->kind == SID_P_KT ? "kt"
                   : p->kind == SID_P_KE ? "ke"
                                         : "resistance";
        l.nkey = 2;
        l.dflt = p->kind == SID_P_GEAR ? jd.gear
                 : p->kind == SID_P_KT ? jd.kt
                 : p->kind == SID_P_KE ? jd.ke
                                       : jd.resistance;
        break;
    case SID_P_OFFSET:
        l.key[0] = "offset";
        l.dflt = jd.offset;
        break;
    }
    return l;
}

void robot_json_param_path(const sid_model *m, int i, char *buf, size_t n)
{
    const sid_param_info *p = sid_model_param(m, i);
    location l = locate(p);
    size_t k = 0;
    if (l.array)
        k += (size_t)snprintf(buf, n, "%s%s%s[%d]", l.scope ? l.scope : "", l.scope ? "." : "",
                              l.array, p->owner);
    for (int j = 0; j < l.nkey && k < n; j++)
        k += (size_t)snprintf(buf + k, n - k, "%s%s", k ? "." : "", l.key[j]);
    if (l.index >= 0 && k < n)
        snprintf(buf + k, n - k, "[%d]", l.index);
}

/* ---- writing ------------------------------------------------------------------------------ */

/* Put x at p's location in root (whose numbers are all raw, see numfmt_json_tree). */
static int put_param(cJSON *root, const sid_param_info *p, double x)
{
    location l = locate(p);
    cJSON *node = l.scope ? cJSON_GetObjectItemCaseSensitive(root, l.scope) : root;
    if (l.array)
        node = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(node, l.array), p->owner);
    if (!cJSON_IsObject(node))
        return -1;
    /* Leave a default alone when the user did not write it (keeps files as written). */
    const cJSON *probe = node;
    for (int k = 0; k < l.nkey && probe; k++)
        probe = cJSON_GetObjectItemCaseSensitive(probe, l.key[k]);
    if (!probe && x == l.dflt)
        return 0;
    for (int k = 0; k < l.nkey - 1; k++) {
        cJSON *next = cJSON_GetObjectItemCaseSensitive(node, l.key[k]);
        if (!next)
            next = cJSON_AddObjectToObject(node, l.key[k]);
        if (!cJSON_IsObject(next))
            return -1;
        node = next;
    }
    const char *last = l.key[l.nkey - 1];
    cJSON *val = numfmt_json(x);
    if (!val)
        return -1;
    if (l.index < 0) {
        /* ReplaceItemInObject, not ViaPointer: only the former gives the new item its key. */
        if (cJSON_GetObjectItemCaseSensitive(node, last)
                ? cJSON_ReplaceItemInObjectCaseSensitive(node, last, val)
                : cJSON_AddItemToObject(node, last, val))
            return 0;
        cJSON_Delete(val);
        return -1;
    }
    cJSON *arr = cJSON_GetObjectItemCaseSensitive(node, last);
    if (!arr) {
        /* A vector the user left out: write it whole, with defaults around the element. */
        arr = cJSON_AddArrayToObject(node, last);
        for (int k = 0; arr && k < 3; k++)
            cJSON_AddItemToArray(arr, numfmt_json(l.array ? 0.0 : gravity_default[k]));
    }
    if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) <= l.index) {
        cJSON_Delete(val);
        return -1;
    }
    if (cJSON_ReplaceItemInArray(arr, l.index, val))
        return 0;
    cJSON_Delete(val);
    return -1;
}

/* cJSON indents with tabs and writes ":\t"; two spaces and ": " read better in diffs.
 * Raw tabs appear only as layout: inside strings cJSON escapes them as \t. */
int robot_json_write(const char *path, const cJSON *doc, const sid_model *m,
                     const double *theta, sid_error *err)
{
    int np = sid_model_nparam(m);
    for (int i = 0; i < np; i++)
        if (!isfinite(theta[i])) {
            sid_error_set(err, SID_ERR_NONFINITE, "%s: not written: %s is %g",
                          path, sid_model_param(m, i)->name, theta[i]);
            return -1;
        }
    cJSON *out = cJSON_Duplicate(doc, 1);
    if (!out || numfmt_json_tree(out)) {
        cJSON_Delete(out);
        sid_error_set(err, SID_ERR_INPUT, "%s: not written: the document has a number "
                      "that is not finite, or memory ran out", path);
        return -1;
    }
    for (int i = 0; i < np; i++)
        if (put_param(out, sid_model_param(m, i), theta[i])) {
            char where[PATH_LEN];
            robot_json_param_path(m, i, where, sizeof where);
            sid_error_set(err, SID_ERR_INPUT, "%s: not written: cannot put %s at %s", path,
                          sid_model_param(m, i)->name, where);
            cJSON_Delete(out);
            return -1;
        }
    atomic_file af;
    int rc = -1;
    if (atomic_open(&af, path, err) == SID_OK) {
        if (jsonfile_write(af.f, out) == 0)
            rc = atomic_commit(&af, err) == SID_OK ? 0 : -1;
        else {
            sid_error_set(err, SID_ERR_INPUT, "%s: cannot write (out of memory or disk)", path);
            atomic_abort(&af);
        }
    }
    cJSON_Delete(out);
    return rc;
}
