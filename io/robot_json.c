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
#include "warn.h"
#include "json_edit.h"
#include "jsonfile.h"
#include "keyframe.h"
#include "names.h"
#include "numfmt.h"
#include "readfile.h"

#define PATH_LEN 256

typedef struct {
    const char *file;
    sid_error *err;
} reader;

#define MAX_KEYS 24

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

/* The keys an object may hold: its structural ones (NULL-terminated) and the parameter
 * table's below prefix for owners of class cls (see known_keys). */
typedef struct {
    sid_param_owner cls;
    const char *prefix;
    const char *const *structural;
} keyset;

static const char *const *known_keys(sid_param_owner cls, const char *prefix,
                                     const char *const *structural, char (*buf)[32],
                                     const char **out);

/* Warn about keys not in ks; a repeated key is an error, because cJSON would silently use
 * the first and the user probably edited the second. */
static int check_keys(reader *r, const cJSON *obj, const char *where, const keyset *ks)
{
    char buf[MAX_KEYS][32];
    const char *list[MAX_KEYS];
    const char *const *known = known_keys(ks->cls, ks->prefix, ks->structural, buf, list);
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
            sid_io_warn("%s: %s: unknown key (ignored)", r->file, p);
        }
    }
    return 0;
}

static int get_object(reader *r, const cJSON *obj, const char *key, const char *where,
                      const cJSON **out, int required, const keyset *known)
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

static int check_number(reader *r, const cJSON *v, const char *p, sid_param_range rg, double *out)
{
    if (!cJSON_IsNumber(v) || !sid_param_in_range(rg, v->valuedouble))
        return expected(r, p, sid_param_range_what(rg), v);
    *out = v->valuedouble;
    return 0;
}

/* obj.key as a number; absent keeps *out (the default) unless required. */
static int get_number(reader *r, const cJSON *obj, const char *key, const char *where,
                      sid_param_range rg, int required, double *out)
{
    char p[PATH_LEN];
    join(p, where, key);
    const cJSON *v = obj ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
    if (!v && !required)
        return 0;
    return check_number(r, v, p, rg, out);
}

/* obj.key as n numbers; absent keeps out (the default) unless required. */
static int get_vector(reader *r, const cJSON *obj, const char *key, const char *where, int n,
                      sid_param_range rg, int required, double *out)
{
    char p[PATH_LEN], pk[PATH_LEN + 16];   /* room for "[%d]" of any int, so -O1 sees no truncation */
    join(p, where, key);
    const cJSON *v = obj ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
    if (!v && !required)
        return 0;
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != n) {
        char what[32];
        snprintf(what, sizeof what, "an array of %d numbers", n);
        return expected(r, p, what, v);
    }
    for (int k = 0; k < n; k++) {
        snprintf(pk, sizeof pk, "%s[%d]", p, k % 16);
        if (check_number(r, cJSON_GetArrayItem(v, k), pk, rg, &out[k]))
            return -1;
    }
    return 0;
}

/* ---- the parameter table's numbers ---------------------------------------------------------- */

/* The keys an object at `prefix` below an owner of class cls may hold: `structural` (NULL-
 * terminated) and every next key segment of the table's rows there ("friction." -> viscous,
 * coulomb, smoothing, stribeck; "inertia." -> the components). out holds MAX_KEYS names. */
static const char *const *known_keys(sid_param_owner cls, const char *prefix,
                                     const char *const *structural, char (*buf)[32],
                                     const char **out)
{
    const sid_param_row *rows;
    int nrow = sid_param_rows(&rows), n = 0;
    size_t lp = strlen(prefix);
    for (int i = 0; structural && structural[i] && n < MAX_KEYS - 1; i++)
        out[n++] = structural[i];
    for (int r = 0; r < nrow && n < MAX_KEYS - 1; r++) {
        const sid_param_row *row = &rows[r];
        if (row->owner != cls)
            continue;
        for (int k = 0; k < (row->comp_key ? row->ncomp : 1) && n < MAX_KEYS - 1; k++) {
            const char *seg;
            size_t len;
            if (lp && strncmp(row->key, prefix, lp - 1) == 0 && row->key[lp - 1] == '\0' &&
                row->comp_key) {
                seg = row->comp_key[k];   /* the components of a key that is this object */
                len = strlen(seg);
            } else if (strncmp(row->key, prefix, lp) == 0) {
                seg = row->key + lp;
                len = strcspn(seg, ".");
            } else {
                continue;
            }
            int dup = 0;
            for (int j = 0; j < n && !dup; j++)
                dup = strlen(out[j]) == len && strncmp(out[j], seg, len) == 0;
            if (dup || len >= 32)
                continue;
            memcpy(buf[n], seg, len);
            buf[n][len] = '\0';
            out[n] = buf[n];
            n++;
        }
    }
    out[n] = NULL;
    return out;
}

/* Every number the parameter table puts on one element (index i of class cls, JSON object obj
 * at path where): read where given, checked against its row's range, kept in d. A number the
 * element cannot have (a fixed joint's friction) is named in a warning, never silently used. */
static int read_params(reader *r, const cJSON *obj, const char *where, sid_param_owner cls,
                       sid_robot_desc *d, int i)
{
    const sid_param_row *rows;
    int nrow = sid_param_rows(&rows);
    for (int k = 0; k < nrow; k++) {
        const sid_param_row *row = &rows[k];
        if (row->owner != cls)
            continue;
        /* down the key path to the object that holds the number */
        char p[PATH_LEN], key[PATH_LEN];
        const cJSON *node = obj;
        const char *seg = row->key, *dot;
        snprintf(p, sizeof p, "%s", where);
        while (node && (dot = strchr(seg, '.'))) {
            snprintf(key, sizeof key, "%.*s", (int)(dot - seg), seg);
            node = cJSON_GetObjectItemCaseSensitive(node, key);
            node = cJSON_IsObject(node) ? node : NULL;   /* a wrong type was named already */
            char up[PATH_LEN];
            join(up, p, key);
            strcpy(p, up);
            seg = dot + 1;
        }
        if (!node)
            continue;
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(node, seg);
        int exists = sid_param_exists(row, d, i);
        if (v && !exists) {
            char pk[PATH_LEN];
            join(pk, p, seg);
            if (row->comp0 == 0)
                sid_io_warn("%s: %s: ignored: %s", r->file, pk, sid_param_on_what(row->on));
            continue;
        }
        if (!exists)
            continue;
        double *x = sid_param_field(row, d, i);
        int rc;
        if (row->comp_key) {
            /* components as the keys of an object ("inertia": {"ixx": ...}) */
            char pk[PATH_LEN];
            join(pk, p, seg);
            if (!v)
                continue;
            rc = 0;
            for (int c = 0; c < row->ncomp && !rc; c++)
                rc = get_number(r, v, row->comp_key[c], pk, row->range, row->required, &x[c]);
        } else if (row->ncomp > 1) {
            rc = get_vector(r, node, seg, p, row->ncomp, row->range, row->required, x);
        } else {
            rc = get_number(r, node, seg, p, row->range, row->required, x);
        }
        if (rc)
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

static int read_link(reader *r, const cJSON *v, const char *where, sid_robot_desc *d, int i)
{
    static const char *const structural[] = { "name", NULL };
    static const keyset keys = { SID_OWNER_LINK, "", structural };
    static const keyset ikeys = { SID_OWNER_LINK, "inertia.", NULL };
    sid_link_desc *l = &d->link[i];
    if (!cJSON_IsObject(v))
        return expected(r, where, "an object", v);
    if (check_keys(r, v, where, &keys) || get_name(r, v, "name", where, l->name, 1))
        return -1;
    const cJSON *inertia;
    if (get_object(r, v, "inertia", where, &inertia, 0, &ikeys))
        return -1;
    if (!cJSON_GetObjectItemCaseSensitive(v, "mass")) {
        /* A massless link has no COM or inertia to give; refuse a half-described one. */
        if (inertia || cJSON_GetObjectItemCaseSensitive(v, "com")) {
            char p[PATH_LEN];
            join(p, where, "mass");
            return expected(r, p, "a positive number (com or inertia is given)", NULL);
        }
        return 0;
    }
    l->has_mass = 1;
    return read_params(r, v, where, SID_OWNER_LINK, d, i);
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

/* The structure of "friction" and "motor" (their numbers are the table's): which objects
 * are given, the Coulomb model ("smooth", the default, or "dry"), Stribeck friction present or
 * not, the motor's input. */
static int read_friction(reader *r, const cJSON *v, const char *where, sid_joint_desc *j)
{
    static const char *const structural[] = { "stribeck", "model", NULL };
    static const char *const models[] = { "smooth", "dry", NULL };
    static const sid_friction_model kinds[] = { SID_FRICTION_SMOOTH, SID_FRICTION_DRY };
    static const keyset keys = { SID_OWNER_JOINT, "friction.", structural };
    static const keyset skeys = { SID_OWNER_JOINT, "friction.stribeck.", NULL };
    const cJSON *f, *s;
    char p[PATH_LEN];
    join(p, where, "friction");
    if (get_object(r, v, "friction", where, &f, 0, &keys))
        return -1;
    if (!f)
        return 0;
    if (get_object(r, f, "stribeck", p, &s, 0, &skeys))
        return -1;
    j->has_stribeck = s != NULL;
    /* their rows exist where given (params.c); the numbers are read_params' */
    j->has_coulomb_negative = cJSON_GetObjectItemCaseSensitive(f, "coulomb_negative") != NULL;
    j->has_friction_load = cJSON_GetObjectItemCaseSensitive(f, "load") != NULL;
    if (cJSON_GetObjectItemCaseSensitive(f, "model")) {
        int model = 0;
        if (get_enum(r, f, "model", p, models, "\"smooth\" or \"dry\"", &model))
            return -1;
        j->friction_model = kinds[model];
        if (j->friction_model == SID_FRICTION_DRY && s) {
            char sp[PATH_LEN];
            join(sp, p, "stribeck");
            sid_error_set(r->err, SID_ERR_INPUT,
                          "%s: %s: the dry friction model has no Stribeck term (only \"model\": \"smooth\" has it)",
                          r->file, sp);
            return -1;
        }
    }
    return 0;
}

static int read_motor(reader *r, const cJSON *v, const char *where, sid_joint_desc *j)
{
    static const char *const structural[] = { "input", NULL };
    static const keyset keys = { SID_OWNER_JOINT, "motor.", structural };
    static const char *const inputs[] = { "torque", "current", "voltage", "position", "velocity", NULL };
    static const sid_motor_input kinds[] = { SID_MOTOR_TORQUE, SID_MOTOR_CURRENT,
                                             SID_MOTOR_VOLTAGE, SID_MOTOR_POSITION,
                                             SID_MOTOR_VELOCITY };
    const cJSON *mo;
    char p[PATH_LEN];
    int input = 0;
    join(p, where, "motor");
    if (get_object(r, v, "motor", where, &mo, 0, &keys))
        return -1;
    if (!mo)
        return 0;
    if (j->type == SID_JOINT_FIXED)
        return expected(r, p, "no motor on a fixed joint", mo);
    if (get_enum(r, mo, "input", p, inputs,
                 "\"torque\", \"current\", \"voltage\", \"position\" or \"velocity\"", &input))
        return -1;
    j->motor = kinds[input];
    /* a servo's torque limit exists where given (servo.h); a velocity servo's only gain is kd,
     * so it cannot be left to its default 0 (kp, a position servo's, is required by its row) */
    if (j->motor == SID_MOTOR_POSITION || j->motor == SID_MOTOR_VELOCITY)
        j->has_servo_limit = cJSON_GetObjectItemCaseSensitive(mo, "limit") != NULL;
    /* a delay exists where given (delay.h); a saturating servo's torque is not linear in the
     * command, which the delay's exact derivative needs */
    j->has_delay = cJSON_GetObjectItemCaseSensitive(mo, "delay") != NULL;
    if (j->has_delay && j->has_servo_limit) {
        char pk[PATH_LEN];
        join(pk, p, "delay");
        return expected(r, pk, "no delay on a servo with a torque limit (not supported: its torque is not linear in the command)",
                        cJSON_GetObjectItemCaseSensitive(mo, "delay"));
    }
    if (j->motor == SID_MOTOR_VELOCITY && !cJSON_GetObjectItemCaseSensitive(mo, "kd")) {
        char pk[PATH_LEN];
        join(pk, p, "kd");
        return expected(r, pk, "a non-negative number (a velocity servo's gain)", NULL);
    }
    return 0;
}

/* The optional "limit" of a revolute or prismatic joint: which bounds and gains it gives (the
 * numbers themselves are the parameter table's, read by read_params), and URDF's effort and
 * velocity limits, recorded (non-negative) but not simulated. */
static int read_limit(reader *r, const cJSON *v, const char *where, sid_joint_desc *j)
{
    static const char *const structural[] = { "effort", "velocity", "model", NULL };
    static const char *const models[] = { "spring", "constraint", NULL };
    static const sid_limit_model kinds[] = { SID_LIMIT_SPRING, SID_LIMIT_CONSTRAINT };
    static const keyset keys = { SID_OWNER_JOINT, "limit.", structural };
    const cJSON *l;
    char p[PATH_LEN];
    join(p, where, "limit");
    if (get_object(r, v, "limit", where, &l, 0, &keys))
        return -1;
    if (!l)
        return 0;
    if (j->type == SID_JOINT_FIXED)
        return expected(r, p, "no limit on a fixed joint", l);
    j->has_limit_lower = cJSON_GetObjectItemCaseSensitive(l, "lower") != NULL;
    j->has_limit_upper = cJSON_GetObjectItemCaseSensitive(l, "upper") != NULL;
    j->has_limit_stiffness = cJSON_GetObjectItemCaseSensitive(l, "stiffness") != NULL;
    j->has_limit_damping = cJSON_GetObjectItemCaseSensitive(l, "damping") != NULL;
    if (cJSON_GetObjectItemCaseSensitive(l, "model")) {
        int model = 0;
        if (get_enum(r, l, "model", p, models, "\"spring\" or \"constraint\"", &model))
            return -1;
        j->limit_model = kinds[model];
        /* the rows do not exist under the constraint model (its gains are MuJoCo's solref);
         * a value given for one is a belief the file holds, so an error, not an ignored key */
        if (j->limit_model == SID_LIMIT_CONSTRAINT && (j->has_limit_stiffness || j->has_limit_damping)) {
            char pk[PATH_LEN];
            join(pk, p, j->has_limit_stiffness ? "stiffness" : "damping");
            sid_error_set(r->err, SID_ERR_INPUT,
                          "%s: %s: the constraint limit model has no stiffness or damping (MuJoCo's default solref, "
                          "timeconst 0.02 s, dampratio 1, sets them; only \"model\": \"spring\" has them)",
                          r->file, pk);
            return -1;
        }
    }
    return get_number(r, l, "effort", p, SID_RANGE_NONNEGATIVE, 0, &j->limit_effort) ||
                   get_number(r, l, "velocity", p, SID_RANGE_NONNEGATIVE, 0, &j->limit_velocity)
               ? -1
               : 0;
}

/* The optional "torque_sensor" of a revolute or prismatic joint (core/problem/torque_sensor.h): its
 * presence makes the gain and bias rows (the numbers are read_params'). */
static int read_torque_sensor(reader *r, const cJSON *v, const char *where, sid_joint_desc *j)
{
    static const keyset keys = { SID_OWNER_JOINT, "torque_sensor.", NULL };
    const cJSON *ts;
    if (get_object(r, v, "torque_sensor", where, &ts, 0, &keys))
        return -1;
    j->has_torque_sensor = ts != NULL;
    return 0;
}

/* The optional "backlash" of a revolute or prismatic joint (backlash.h): present or not (its
 * numbers are the parameter table's). */
static int read_backlash(reader *r, const cJSON *v, const char *where, sid_joint_desc *j)
{
    static const keyset keys = { SID_OWNER_JOINT, "backlash.", NULL };
    const cJSON *bo;
    char p[PATH_LEN];
    join(p, where, "backlash");
    if (get_object(r, v, "backlash", where, &bo, 0, &keys))
        return -1;
    if (!bo)
        return 0;
    if (j->type == SID_JOINT_FIXED)
        return expected(r, p, "no backlash on a fixed joint", bo);
    j->has_backlash = 1;
    return 0;
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
        { "torque_bias", "nothing drives a floating link directly" },
        { "limit", "its coordinates are unbounded (contact is what stops a floating link)" },
        { "backlash", "no motor drives it through a gear" },
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

static int read_joint(reader *r, const cJSON *v, const char *where, sid_robot_desc *d, int i)
{
    static const char *const structural[] = { "name", "type", "parent", "child", "axis", NULL };
    static const keyset keys = { SID_OWNER_JOINT, "", structural };
    static const keyset okeys = { SID_OWNER_JOINT, "origin.", NULL };
    static const char *const types[] = { "revolute", "continuous", "prismatic", "fixed", "free",
                                         NULL };
    static const sid_joint_type kinds[] = { SID_JOINT_REVOLUTE, SID_JOINT_REVOLUTE,
                                            SID_JOINT_PRISMATIC, SID_JOINT_FIXED, SID_JOINT_FREE };
    sid_joint_desc *j = &d->joint[i];
    const cJSON *origin;
    int type = 0;
    sid_joint_desc_defaults(j);
    j->axis[0] = 1; /* URDF's default axis */
    if (!cJSON_IsObject(v))
        return expected(r, where, "an object", v);
    if (check_keys(r, v, where, &keys) || get_name(r, v, "name", where, j->name, 1) ||
        get_enum(r, v, "type", where, types,
                 "\"revolute\", \"continuous\", \"prismatic\", \"fixed\" or \"free\"", &type))
        return -1;
    j->type = kinds[type];
    if (j->type == SID_JOINT_FREE && check_free_joint(r, v, where))
        return -1;
    if (get_link_ref(r, v, "parent", where, d, &j->parent) ||
        get_link_ref(r, v, "child", where, d, &j->child) ||
        get_object(r, v, "origin", where, &origin, 0, &okeys) ||
        get_vector(r, v, "axis", where, 3, SID_RANGE_ANY, 0, j->axis) ||
        read_friction(r, v, where, j) || read_motor(r, v, where, j) || read_limit(r, v, where, j) ||
        read_torque_sensor(r, v, where, j) ||
        read_backlash(r, v, where, j) ||
        read_params(r, v, where, SID_OWNER_JOINT, d, i))
        return -1;
    if (j->has_limit_lower && j->has_limit_upper && j->limit_lower > j->limit_upper) {
        sid_error_set(r->err, SID_ERR_INPUT, "%s: %s.limit: expected lower <= upper, got lower %g > upper %g",
                      r->file, where, j->limit_lower, j->limit_upper);
        return -1;
    }
    return 0;
}

/* ---- contact ---------------------------------------------------------------------------- */

static int read_sphere(reader *r, const cJSON *v, const char *where, sid_robot_desc *d, int i)
{
    static const char *const structural[] = { "name", "link", NULL };
    static const keyset keys = { SID_OWNER_SPHERE, "", structural };
    sid_sphere_desc *sp = &d->sphere[i];
    if (!cJSON_IsObject(v))
        return expected(r, where, "an object", v);
    return check_keys(r, v, where, &keys) || get_name(r, v, "name", where, sp->name, 1) ||
                   get_link_ref(r, v, "link", where, d, &sp->link) ||
                   read_params(r, v, where, SID_OWNER_SPHERE, d, i)
               ? -1
               : 0;
}

/* The optional "contact" object: a ground plane and the spheres that touch it. */
static int read_contact(reader *r, const cJSON *root, sid_robot_desc *d)
{
    static const char *const structural[] = { "model", "ground", "spheres", NULL };
    static const keyset keys = { SID_OWNER_ROBOT, "contact.", structural };
    static const keyset gkeys = { SID_OWNER_GROUND, "", NULL };
    const char *models[SID_NCONTACT_MODEL + 1] = { NULL };   /* core's names (sid_contact_model_name) */
    for (int i = 0; i < SID_NCONTACT_MODEL; i++) models[i] = sid_contact_model_name(i);
    char choice[64];
    const cJSON *c, *g;
    int model = 0;
    if (get_object(r, root, "contact", "", &c, 0, &keys))
        return -1;
    if (!c)
        return 0;
    if (cJSON_GetObjectItemCaseSensitive(c, "model") &&
        get_enum(r, c, "model", "contact", models, names_choice(choice, sizeof choice, sid_contact_model_name, 1), &model))
        return -1;
    if (get_object(r, c, "ground", "contact", &g, 0, &gkeys))
        return -1;
    sid_ground_desc_defaults(&d->ground);
    d->ground.present = g != NULL;
    d->ground.model = (sid_contact_model)model;
    if (g && read_params(r, g, "contact.ground", SID_OWNER_GROUND, d, -1))
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
        sid_param_defaults(SID_OWNER_SPHERE, &d->sphere[d->nsphere]);
        if (read_sphere(r, v, p, d, d->nsphere))
            return -1;
        d->nsphere++;
    }
    return 0;
}

/* ---- loading ---------------------------------------------------------------------------- */

static int read_robot(reader *r, const cJSON *root, sid_robot_desc *d)
{
    static const char *const structural[] = { "name", "links", "joints", "contact", "timestep", "integrator",
                                                "keyframes", NULL };
    static const keyset keys = { SID_OWNER_ROBOT, "", structural };
    if (!cJSON_IsObject(root))
        return expected(r, "top level", "an object", root);
    if (check_keys(r, root, "", &keys) || get_name(r, root, "name", "", d->name, 0) ||
        get_number(r, root, "timestep", "", SID_RANGE_POSITIVE, 0, &d->timestep))
        return -1;
    if (cJSON_GetObjectItemCaseSensitive(root, "integrator")) {   /* core's names (sid_integrator_name) */
        const char *names[SID_NINTEGRATOR + 1] = { NULL };
        for (int i = 0; i < SID_NINTEGRATOR; i++) names[i] = sid_integrator_name(i);
        char choice[64];
        int integ;
        if (get_enum(r, root, "integrator", "", names, names_choice(choice, sizeof choice, sid_integrator_name, 1), &integ))
            return -1;
        d->has_integrator = 1, d->integrator = (sid_integrator)integ;
    }
    sid_param_defaults(SID_OWNER_ROBOT, d);
    if (read_params(r, root, "", SID_OWNER_ROBOT, d, -1))
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
        if (read_link(r, v, p, d, d->nlink))
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
        if (read_joint(r, v, p, d, d->njoint))
            return -1;
        d->njoint++;
    }
    return read_contact(r, root, d) || keyframes_check(r->file, root, d, r->err) ? -1 : 0;
}

int robot_json_parse(const char *path, const char *text, size_t len, sid_robot_desc *d, cJSON **doc,
                     sid_error *err)
{
    reader r = { path, err };
    memset(d, 0, sizeof *d);
    if (doc)
        *doc = NULL;
    cJSON *root = jsonfile_parse(path, text, len, err);
    if (!root || read_robot(&r, root, d)) {
        cJSON_Delete(root);
        robot_desc_free(d);
        return -1;
    }
    if (doc && strlen(text) == len && (root->valuestring = cJSON_malloc(len + 1)))
        memcpy(root->valuestring, text, len + 1);   /* the writer patches it (see the header) */
    if (doc)
        *doc = root;
    else
        cJSON_Delete(root);
    return 0;
}

int robot_json_load(const char *path, sid_robot_desc *d, cJSON **doc, sid_error *err)
{
    memset(d, 0, sizeof *d);
    if (doc)
        *doc = NULL;
    size_t len;
    char *text = readfile(path, &len, err);
    int rc = text ? robot_json_parse(path, text, len, d, doc, err) : -1;
    free(text);
    return rc;
}

void robot_desc_free(sid_robot_desc *d)
{
    free(d->link);
    free(d->joint);
    free(d->sphere);
    memset(d, 0, sizeof *d);
}

/* ---- writing ------------------------------------------------------------------------------ */

/* The object that owns parameter p in root: the root, contact.ground, or an element of
 * links, joints or contact.spheres (NULL if the document has none there). */
static cJSON *owner_node(cJSON *root, const sid_param_info *p)
{
    const char *arr = sid_param_owner_array(p->row->owner);
    cJSON *node = root;
    char key[32];
    while (node && *arr) {
        size_t n = strcspn(arr, ".");
        snprintf(key, sizeof key, "%.*s", (int)n, arr);
        node = cJSON_GetObjectItemCaseSensitive(node, key);
        arr += n + (arr[n] == '.');
    }
    if (p->row->owner == SID_OWNER_LINK || p->row->owner == SID_OWNER_JOINT ||
        p->row->owner == SID_OWNER_SPHERE)
        node = cJSON_GetArrayItem(node, p->owner);
    return cJSON_IsObject(node) ? node : NULL;
}

/* Bit for bit: -0 is not 0, so that a written file reads back to exactly theta. */
static int same_value(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* Put x at p's place in root (whose numbers are all raw, see numfmt_json_tree), creating the
 * objects on the way. An absent field whose value is what its absence stands for (absent: the
 * loader's default, or the value computed from the model, sid_model_absent_values) stays absent,
 * so a file keeps its shape when nothing changed there. */
static int put_param(cJSON *root, const sid_param_info *p, double x, double absent)
{
    const sid_param_row *row = p->row;
    const int c = p->comp - row->comp0;
    const int vector = row->ncomp > 1 && !row->comp_key;
    cJSON *node = owner_node(root, p);
    if (!node)
        return -1;
    /* the key path, then a component key ("inertia.ixx") */
    char path[PATH_LEN];
    snprintf(path, sizeof path, "%s%s%s", row->key, row->comp_key ? "." : "",
             row->comp_key ? row->comp_key[c] : "");
    const cJSON *probe = node;
    char key[PATH_LEN];
    for (const char *seg = path; probe && *seg;) {
        size_t n = strcspn(seg, ".");
        snprintf(key, sizeof key, "%.*s", (int)n, seg);
        probe = cJSON_GetObjectItemCaseSensitive(probe, key);
        seg += n + (seg[n] == '.');
    }
    if (!probe && same_value(x, absent))
        return 0;
    const char *seg = path;
    for (size_t n; (n = strcspn(seg, ".")), seg[n] == '.'; seg += n + 1) {
        snprintf(key, sizeof key, "%.*s", (int)n, seg);
        cJSON *next = cJSON_GetObjectItemCaseSensitive(node, key);
        if (!next)
            next = cJSON_AddObjectToObject(node, key);
        if (!cJSON_IsObject(next))
            return -1;
        node = next;
    }
    cJSON *val = numfmt_json(x);
    if (!val)
        return -1;
    if (!vector) {
        /* ReplaceItemInObject, not ViaPointer: only the former gives the new item its key. */
        if (cJSON_GetObjectItemCaseSensitive(node, seg)
                ? cJSON_ReplaceItemInObjectCaseSensitive(node, seg, val)
                : cJSON_AddItemToObject(node, seg, val))
            return 0;
        cJSON_Delete(val);
        return -1;
    }
    cJSON *arr = cJSON_GetObjectItemCaseSensitive(node, seg);
    if (!arr) {
        /* A vector the user left out: write it whole, with defaults around the element. */
        arr = cJSON_AddArrayToObject(node, seg);
        for (int k = 0; arr && k < row->ncomp; k++)
            cJSON_AddItemToArray(arr, numfmt_json(row->dflt[k]));
    }
    if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) <= c) {
        cJSON_Delete(val);
        return -1;
    }
    if (cJSON_ReplaceItemInArray(arr, c, val))
        return 0;
    cJSON_Delete(val);
    return -1;
}

/* The serialised form: a copy of doc with every parameter put in (numbers as numfmt's). */
/* The contact model the parameters were fitted with, when it is not the one the document
 * names (a fit spec's "contact_model" or --contact overrode it): NULL when they agree. The
 * fitted friction of a hard-contact fit would mislead a reader who simulates it compliant. */
static const char *contact_model_change(const cJSON *doc, const sid_model *m)
{
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(doc, "contact");
    if (!cJSON_IsObject(c))
        return NULL;
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(c, "model");
    sid_contact_model in_doc = SID_CONTACT_COMPLIANT;   /* absent or unknown: the default */
    if (cJSON_IsString(k)) sid_contact_model_parse(k->valuestring, &in_doc);
    const sid_contact_model cm = sid_model_contact_model(m);
    return cm == in_doc ? NULL : sid_contact_model_name(cm);
}

static cJSON *serialised(const char *path, const cJSON *doc, const sid_model *m,
                         const double *theta, const double *absent, sid_error *err)
{
    cJSON *out = cJSON_Duplicate(doc, 1);
    if (out) {
        cJSON_free(out->valuestring);   /* the copy of the input's text (robot_json_load) */
        out->valuestring = NULL;
    }
    if (!out || numfmt_json_tree(out)) {
        cJSON_Delete(out);
        sid_error_set(err, SID_ERR_INPUT, "%s: not written: the document has a number "
                      "that is not finite, or memory ran out", path);
        return NULL;
    }
    const char *model = contact_model_change(doc, m);
    if (model) {
        cJSON *c = cJSON_GetObjectItemCaseSensitive(out, "contact");
        cJSON *v = cJSON_CreateString(model);
        if (!v || (cJSON_GetObjectItemCaseSensitive(c, "model") ? !cJSON_ReplaceItemInObjectCaseSensitive(c, "model", v)
                                                                : !cJSON_AddItemToObject(c, "model", v))) {
            cJSON_Delete(v);
            cJSON_Delete(out);
            sid_error_set(err, SID_ERR_NOMEM, "%s: not written: out of memory", path);
            return NULL;
        }
    }
    for (int i = 0; i < sid_model_nparam(m); i++)
        if (put_param(out, sid_model_param(m, i), theta[i], absent[i])) {
            char where[PATH_LEN];
            sid_model_param_path(m, i, where, sizeof where);
            sid_error_set(err, SID_ERR_INPUT, "%s: not written: cannot put %s at %s", path,
                          sid_model_param(m, i)->name, where);
            cJSON_Delete(out);
            return NULL;
        }
    return out;
}

/* Is text[0, n) a JSON number that reads as x? */
static int spells(const char *text, size_t n, double x)
{
    char *end;
    if (n == 0 || !(*text == '-' || (*text >= '0' && *text <= '9')))
        return 0;
    const double v = strtod(text, &end);
    return end == text + n && same_value(v, x);
}

/* The input's text with each parameter that differs from it spliced in, by the rules of
 * put_param (an absent field is added only when it is not the default; a vector the file
 * lacks is written whole); NULL if that cannot be done. */
static char *patched(const char *src, const cJSON *doc, const sid_model *m, const double *theta,
                     const double *absent)
{
    char *text = malloc(strlen(src) + 1);
    if (!text)
        return NULL;
    strcpy(text, src);
    const char *model = contact_model_change(doc, m);
    char quoted[16];
    snprintf(quoted, sizeof quoted, "\"%s\"", model ? model : "");
    if (model && json_edit_set(&text, "contact.model", quoted)) {
        free(text);
        return NULL;
    }
    for (int i = 0; i < sid_model_nparam(m); i++) {
        const sid_param_info *p = sid_model_param(m, i);
        const sid_param_row *row = p->row;
        const int c = p->comp - row->comp0;
        const double x = theta[i];
        char where[PATH_LEN], num[NUMFMT_LEN];
        size_t a, b;
        sid_model_param_path(m, i, where, sizeof where);
        int r = json_edit_find(text, where, &a, &b), rc = 0;
        if (r == 1 && spells(text + a, b - a, x))
            continue;   /* kept as the user spelled it: "0.50" stays */
        if (r == 0 && same_value(x, absent[i]))
            continue;
        numfmt(num, x);
        if (r == 1 || (r == 0 && !(row->ncomp > 1 && !row->comp_key))) {
            rc = json_edit_set(&text, where, num);
        } else if (r == 0) {
            /* a vector the file lacks: all of it, the defaults around x */
            char arr[4 * NUMFMT_LEN] = "[", d[NUMFMT_LEN];
            for (int k = 0; k < row->ncomp; k++) {
                numfmt(d, k == c ? x : row->dflt[k]);
                strcat(strcat(arr, k ? ", " : ""), d);
            }
            strcat(arr, "]");
            *strrchr(where, '[') = '\0';
            rc = json_edit_set(&text, where, arr);
        } else {
            rc = -1;
        }
        if (rc) {
            free(text);
            return NULL;
        }
    }
    return text;
}

/* Does text read as the document `want` (whose numbers are numfmt raw items)? Printing both
 * compares numbers bit for bit (numfmt round-trips), keys and their order. */
static int reads_as(const char *text, const cJSON *want)
{
    sid_error e = { 0 };
    cJSON *got = jsonfile_parse("", text, strlen(text), &e);
    int same = 0;
    if (got && numfmt_json_tree(got) == 0) {
        char *a = cJSON_PrintUnformatted(got), *b = cJSON_PrintUnformatted(want);
        same = a && b && strcmp(a, b) == 0;
        cJSON_free(a);
        cJSON_free(b);
    }
    cJSON_Delete(got);
    return same;
}

cJSON *robot_json_fitted(const char *path, const cJSON *doc, const sid_model *m,
                         const double *theta, sid_error *err)
{
    int np = sid_model_nparam(m);
    for (int i = 0; i < np; i++)
        if (!isfinite(theta[i])) {
            sid_error_set(err, SID_ERR_NONFINITE, "%s: not written: %s is %g",
                          path, sid_model_param(m, i)->name, theta[i]);
            return NULL;
        }
    /* what each absent field stands for at theta: a fit that moved a mass moves a computed
     * limit gain's value on reload, so the gain it simulated with is then written out */
    double *absent = malloc(sizeof(double) * (size_t)(np > 0 ? np : 1));
    if (!absent) {
        sid_error_set(err, SID_ERR_NOMEM, "%s: not written: out of memory", path);
        return NULL;
    }
    if (sid_model_absent_values(m, theta, absent, err) != SID_OK) {
        sid_error_prefix(err, "%s: not written", path);
        free(absent);
        return NULL;
    }
    cJSON *out = serialised(path, doc, m, theta, absent, err);
    if (!out || !cJSON_IsObject(doc) || !doc->valuestring) {
        free(absent);
        return out;
    }
    /* The patched text must read as the serialised document, or it is not used: a bug here
     * then costs the layout, never a value. */
    char *text = patched(doc->valuestring, doc, m, theta, absent);
    free(absent);
    cJSON *raw = text && reads_as(text, out) ? cJSON_CreateRaw(text) : NULL;
    if (!raw)
        sid_io_warn("%s: the input's layout could not be kept; written in sysid's own layout", path);
    free(text);
    if (!raw)
        return out;
    cJSON_Delete(out);
    return raw;
}

int robot_json_write(const char *path, const cJSON *doc, const sid_model *m,
                     const double *theta, sid_error *err)
{
    cJSON *out = robot_json_fitted(path, doc, m, theta, err);
    if (!out)
        return -1;
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
