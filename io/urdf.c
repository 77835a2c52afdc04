/* urdf.c — URDF to robot.json text (urdf.h).
 *
 * urdf_read makes one picture of the file (urdf_doc, urdf_internal.h): per link and joint its
 * sysid name, its numbers as robot.json has them and the XML elements they came from.
 * urdf_import prints that picture as robot.json; urdf_export (urdf_export.c) reads the target
 * file the same way, so a fitted robot.json made from it finds each number's element again.
 */
#include "urdf.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <libxml/tree.h>

#include "warn.h"
#include "kinematics.h"
#include "linalg.h"
#include "names.h"
#include "numfmt.h"
#include "robot_json.h"
#include "textbuf.h"
#include "urdf_internal.h"
#include "xml_text.h"

void urdf_doc_free(urdf_doc *u)
{
    if (u->doc) xmlFreeDoc(u->doc);
    free(u->link);
    free(u->joint);
    memset(u, 0, sizeof *u);
}

static long line_of(const xmlNode *n) { return n ? xml_line(n) : 0; }

const char *urdf_attr(const xmlNode *n, const char *name)
{
    for (const xmlAttr *a = n->properties; a; a = a->next)
        if (strcmp((const char *)a->name, name) == 0 && a->children && a->children->content)
            return (const char *)a->children->content;
    return NULL;
}

static int is(const xmlNode *n, const char *tag)
{
    return n->type == XML_ELEMENT_NODE && strcmp((const char *)n->name, tag) == 0;
}

/* "<joint name=\"x\">" or "<origin>" for messages. */
static void describe(const xmlNode *n, char *buf, size_t len)
{
    const char *nm = urdf_attr(n, "name");
    if (nm)
        snprintf(buf, len, "<%s name=\"%.80s\">", (const char *)n->name, nm);
    else
        snprintf(buf, len, "<%s>", (const char *)n->name);
}

int urdf_fail(reader *r, const xmlNode *n, const char *fmt, ...)
{
    char what[400], el[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    describe(n, el, sizeof el);
    sid_error_set(r->err, SID_ERR_INPUT, "%s:%ld: %s: %s", r->path, line_of(n), el, what);
    return -1;
}

/* A note keyed by key (same key: counted, not repeated). */
static void notef(reader *r, const char *key, const xmlNode *n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void notef(reader *r, const char *key, const xmlNode *n, const char *fmt, ...)
{
    for (int i = 0; i < r->nnote; i++)
        if (strcmp(r->notes[i].key, key) == 0) {
            r->notes[i].count++;
            return;
        }
    if (r->nnote == MAX_NOTES) {
        r->dropped++;
        return;
    }
    note *t = &r->notes[r->nnote++];
    snprintf(t->key, sizeof t->key, "%s", key);
    t->line = line_of(n);
    t->count = 1;
    char el[160];
    describe(n, el, sizeof el);
    int k = snprintf(t->msg, sizeof t->msg, "%s: ", el);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->msg + k, sizeof t->msg - (size_t)k, fmt, ap);
    va_end(ap);
}

static void notes_print(const reader *r)
{
    if (r->quiet) return;
    for (int i = 0; i < r->nnote; i++) {
        const note *t = &r->notes[i];
        if (t->count > 1)
            sid_io_warn("%s:%ld: %s (and %d more like it)", r->path, t->line, t->msg, t->count - 1);
        else
            sid_io_warn("%s:%ld: %s", r->path, t->line, t->msg);
    }
    if (r->dropped)
        sid_io_warn("%s: %d more warnings of other kinds (ignored elements or attributes) not shown", r->path, r->dropped);
}

static int numbers(reader *r, const xmlNode *n, const char *a, int min, int max, double *out)
{
    return xml_attr_numbers(r->path, n, a, min, max, out, r->err);
}

/* A required attribute read as exactly n numbers. */
static int required(reader *r, const xmlNode *n, const char *a, int cnt, double *out)
{
    int k = numbers(r, n, a, cnt, cnt, out);
    if (k == 0) return urdf_fail(r, n, "expected attribute %s (%d number%s)", a, cnt, cnt == 1 ? "" : "s");
    return k < 0 ? -1 : 0;
}

/* Attributes of n other than the known ones: noted as not simulated. */
static void unknown_attrs(reader *r, const xmlNode *n, const char *const *known, const char *why)
{
    for (const xmlAttr *a = n->properties; a; a = a->next) {
        int k = 0;
        while (known[k] && strcmp(known[k], (const char *)a->name)) k++;
        if (known[k]) continue;
        char key[96];
        snprintf(key, sizeof key, "attr %.40s %.40s", (const char *)n->name, (const char *)a->name);
        notef(r, key, n, "attribute %s ignored (%s)", (const char *)a->name, why);
    }
}

static void unknown_child(reader *r, const xmlNode *parent, const xmlNode *c)
{
    char key[96];
    snprintf(key, sizeof key, "child %.40s %.40s", (const char *)parent->name, (const char *)c->name);
    notef(r, key, c, "element inside <%s> ignored (sysid cannot express it)", (const char *)parent->name);
}

/* ---- numbers ------------------------------------------------------------------------------ */

/* R = Rz(yaw) Ry(pitch) Rx(roll), URDF's fixed-axis rpy (row-major). */
/* I_link = R I' R^T: the tensor about the COM in axes of the inertial frame, turned into the
 * link frame's axes (the inertial origin's rpy). rpy 0 copies, so such files read back exactly. */
static void rotate_inertia(const double *rpy, const double *I0, double *I)
{
    if (rpy[0] == 0 && rpy[1] == 0 && rpy[2] == 0) {
        memcpy(I, I0, 6 * sizeof *I);
        return;
    }
    const sid_m3 R = sid_rpy_matrix(rpy, NULL), RT = sid_m3_transpose(&R);   /* as the simulator turns frames */
    const sid_m3 A = {{{I0[0], I0[3], I0[4]}, {I0[3], I0[1], I0[5]}, {I0[4], I0[5], I0[2]}}};
    const sid_m3 B = sid_m3_mul(&R, &A), C = sid_m3_mul(&B, &RT);
    I[0] = C.m[0][0]; I[1] = C.m[1][1]; I[2] = C.m[2][2];
    I[3] = 0.5 * (C.m[0][1] + C.m[1][0]);
    I[4] = 0.5 * (C.m[0][2] + C.m[2][0]);
    I[5] = 0.5 * (C.m[1][2] + C.m[2][1]);
}

/* Principal moments, ascending. */
static void principal(const double *I, double ev[3])
{
    double A[9] = { I[0], I[3], I[4], I[3], I[1], I[5], I[4], I[5], I[2] }, V[9];
    sid_jacobi_eigen(A, 3, ev, V);
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
            if (ev[j] < ev[i]) { double t = ev[i]; ev[i] = ev[j]; ev[j] = t; }
}

/* ---- names -------------------------------------------------------------------------------- */

static int bad_name_char(char c)
{
    return strchr(".[]*?,\"'", c) != NULL || isspace((unsigned char)c);
}

static int clean_name(const char *s)
{
    for (; *s; s++)
        if (bad_name_char(*s)) return 0;
    return 1;
}

/* names[i] (stride apart) taken: is s among the first n, or among the clean originals? */
static int name_taken(const char *s, char *names, size_t stride, int n, const char *const *orig, int norig)
{
    for (int i = 0; i < n; i++)
        if (names[i * stride] && strcmp(names + i * stride, s) == 0) return 1;
    for (int i = 0; i < norig; i++)
        if (clean_name(orig[i]) && strcmp(orig[i], s) == 0) return 1;
    return 0;
}

/* sysid names for the file's names (n of them, in document order): clean names stay; others get
 * '_' for each bad character and, if that is taken, "_2", "_3", ... (the first free). The list of
 * renamed ones goes to list. -1 (err set) on a name too long or two equal names. */
static int assign_names(reader *r, const char *kind, xmlNode *const *nodes, const char *const *orig, int n,
                        char *names, size_t stride, char *list, size_t listlen)
{
    for (int i = 0; i < n; i++) {
        if (strlen(orig[i]) >= SID_MAX_NAME)
            return urdf_fail(r, nodes[i], "a %s name may have at most %d characters", kind, SID_MAX_NAME - 1);
        for (int j = 0; j < i; j++)
            if (strcmp(orig[i], orig[j]) == 0)
                return urdf_fail(r, nodes[i], "a second %s of this name (the first is on line %ld)", kind,
                            line_of(nodes[j]));
    }
    for (int i = 0; i < n; i++)
        if (clean_name(orig[i])) snprintf(names + i * stride, SID_MAX_NAME, "%s", orig[i]);
        else names[i * stride] = 0;
    for (int i = 0; i < n; i++) {
        if (clean_name(orig[i])) continue;
        char base[SID_MAX_NAME], cand[SID_MAX_NAME + 16];
        snprintf(base, sizeof base, "%s", orig[i]);
        for (char *p = base; *p; p++)
            if (bad_name_char(*p)) *p = '_';
        snprintf(cand, sizeof cand, "%s", base);
        for (int k = 2; name_taken(cand, names, stride, n, orig, n); k++)
            snprintf(cand, sizeof cand, "%.*s_%d", SID_MAX_NAME - 8, base, k);
        if (strlen(cand) >= SID_MAX_NAME)
            return urdf_fail(r, nodes[i], "a %s name may have at most %d characters", kind, SID_MAX_NAME - 1);
        memcpy(names + i * stride, cand, strlen(cand) + 1);   /* shorter than SID_MAX_NAME (checked above) */
        size_t used = strlen(list);
        if (used + 8 < listlen)
            snprintf(list + used, listlen - used, "%s'%s' -> %s", used ? ", " : "", orig[i], cand);
    }
    return 0;
}

/* ---- reading ------------------------------------------------------------------------------ */

/* Radius of gyration given to point masses [m]. */
#define POINT_GYRATION 1e-6

static int read_inertial(reader *r, ulink *l)
{
    static const char *const none[] = { NULL };
    static const char *const origin_keys[] = { "xyz", "rpy", NULL };
    static const char *const inertia_keys[] = { "ixx", "iyy", "izz", "ixy", "ixz", "iyz", NULL };
    xmlNode *in = l->inertial;
    unknown_attrs(r, in, none, "an <inertial> has none");
    for (xmlNode *c = in->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE) continue;
        if (is(c, "origin") && !l->in_origin) l->in_origin = c;
        else if (is(c, "mass") && !l->mass_el) l->mass_el = c;
        else if (is(c, "inertia") && !l->inertia_el) l->inertia_el = c;
        else if (is(c, "origin") || is(c, "mass") || is(c, "inertia"))
            return urdf_fail(r, c, "a second <%s> in the <inertial> of link '%s'", (const char *)c->name, l->xml_name);
        else unknown_child(r, in, c);
    }
    if (l->in_origin) {
        if (numbers(r, l->in_origin, "xyz", 3, 3, l->com) < 0 || numbers(r, l->in_origin, "rpy", 3, 3, l->rpy) < 0)
            return -1;
        unknown_attrs(r, l->in_origin, origin_keys, "an <origin> has xyz and rpy");
    }
    if (!l->mass_el) return urdf_fail(r, in, "the <inertial> of link '%s' has no <mass value=\"...\">", l->xml_name);
    if (required(r, l->mass_el, "value", 1, &l->mass)) return -1;
    if (!(l->mass >= 0)) return urdf_fail(r, l->mass_el, "expected a mass >= 0, got %g", l->mass);
    if (!l->inertia_el) return urdf_fail(r, in, "the <inertial> of link '%s' has no <inertia>", l->xml_name);
    for (int k = 0; k < 6; k++)
        if (required(r, l->inertia_el, inertia_keys[k], 1, &l->I0[k])) return -1;
    unknown_attrs(r, l->inertia_el, inertia_keys, "an <inertia> has ixx iyy izz ixy ixz iyz");
    rotate_inertia(l->rpy, l->I0, l->inertia);
    if (l->mass == 0) {
        int any = 0;
        for (int k = 0; k < 6; k++) any |= l->I0[k] != 0;
        if (any)
            notef(r, "zero mass inertia", l->node,
                  "mass 0 with a nonzero inertia: imported as a massless link (its inertia is dropped)");
        return 0;
    }
    l->has_mass = 1;
    if (l->I0[0] == 0 && l->I0[1] == 0 && l->I0[2] == 0 && l->I0[3] == 0 && l->I0[4] == 0 && l->I0[5] == 0) {
        /* A point mass (sensor frames of CAD exports): core needs a positive definite tensor. A
         * radius of gyration of 1 um adds m*1e-12 kg*m^2, far below what any joint notices. */
        l->inertia[0] = l->inertia[1] = l->inertia[2] = l->mass * POINT_GYRATION * POINT_GYRATION;
        notef(r, "point mass", l->node,
              "a point mass (inertia 0): imported with the isotropic inertia m * (1e-6 m)^2 = %g kg*m^2, as sysid "
              "needs a positive definite tensor", l->inertia[0]);
        return 0;
    }
    double *ev = l->ev;
    principal(l->inertia, ev);
    if (!(ev[0] > 0)) l->bad_inertia = 1;
    /* core's own test (welded.c): a + b >= c (1 - 1e-9) on the principal moments */
    if (ev[0] > 0 && ev[0] + ev[1] < ev[2] * (1 - 1e-9)) {
        const double margin = ev[2] - ev[0] - ev[1];
        if (r->opts && r->opts->balance_inertia) {
            const double mean = (ev[0] + ev[1] + ev[2]) / 3;
            l->inertia[0] = l->inertia[1] = l->inertia[2] = mean;
            l->inertia[3] = l->inertia[4] = l->inertia[5] = 0;
            if (!r->quiet)
                sid_io_warn("%s:%ld: <link name=\"%s\">: principal moments %g, %g, %g break the triangle inequality "
                         "by %.3g kg*m^2: balanced to their mean %g (as MuJoCo's balanceinertia)",
                         r->path, line_of(l->inertia_el), l->xml_name, ev[0], ev[1], ev[2], margin, mean);
        } else {
            l->bad_inertia = 2;
        }
    }
    return 0;
}

/* A link whose inertia is no rigid body's: on a moving joint the model is refused; welded by a
 * fixed joint it is merged into the body it is fixed to (core's welded.c, as MuJoCo's fusestatic
 * and Pinocchio), refused only if that merged body is not physical. */
static void inertia_warnings(reader *r, const urdf_doc *u)
{
    for (int i = 0; i < u->nlink && !r->quiet; i++) {
        const ulink *l = &u->link[i];
        if (!l->bad_inertia) continue;
        const ujoint *in = NULL;
        for (int j = 0; j < u->njoint; j++)
            if (u->joint[j].child == i) in = &u->joint[j];
        char what[200];
        if (l->bad_inertia == 1) snprintf(what, sizeof what, "the inertia is not positive definite");
        else
            snprintf(what, sizeof what, "break the triangle inequality (a + b >= c) by %.3g kg*m^2",
                     l->ev[2] - l->ev[0] - l->ev[1]);
        if (in && in->type == SID_JOINT_FIXED)
            sid_io_warn("%s:%ld: <link name=\"%s\">: principal moments %g, %g, %g%s%s; welded to '%s' by the fixed "
                        "joint '%s', it is merged with it into one rigid body (as MuJoCo's fusestatic and Pinocchio "
                        "do), which sysid checks instead", r->path, line_of(l->inertia_el), l->xml_name, l->ev[0],
                        l->ev[1], l->ev[2], l->bad_inertia == 1 ? ": " : " ", what, u->link[in->parent].xml_name,
                        in->xml_name);
        else if (l->bad_inertia == 1)
            sid_io_warn("%s:%ld: <link name=\"%s\">: principal moments %g, %g, %g: %s, so sysid will reject the model",
                        r->path, line_of(l->inertia_el), l->xml_name, l->ev[0], l->ev[1], l->ev[2], what);
        else
            sid_io_warn("%s:%ld: <link name=\"%s\">: principal moments %g, %g, %g %s, so sysid will reject the model: "
                        "fix the file, or import with --balance-inertia to replace this tensor by its mean moment (as "
                        "MuJoCo's balanceinertia)", r->path, line_of(l->inertia_el), l->xml_name, l->ev[0], l->ev[1],
                        l->ev[2], what);
    }
}

static int read_link(reader *r, ulink *l)
{
    static const char *const keys[] = { "name", NULL };
    unknown_attrs(r, l->node, keys, "a <link> has a name");
    for (xmlNode *c = l->node->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE) continue;
        if (is(c, "inertial")) {
            if (l->inertial) return urdf_fail(r, c, "a second <inertial> in link '%s'", l->xml_name);
            l->inertial = c;
        } else if (!is(c, "visual") && !is(c, "collision")) {
            unknown_child(r, l->node, c);
        }
    }
    return l->inertial ? read_inertial(r, l) : 0;
}

static int link_index(const urdf_doc *u, const char *xml_name)
{
    for (int i = 0; i < u->nlink; i++)
        if (strcmp(u->link[i].xml_name, xml_name) == 0) return i;
    return -1;
}

/* <parent link="..."/> or <child link="..."/> of joint j. */
static int joint_link(reader *r, const urdf_doc *u, const ujoint *j, const char *tag, int *out)
{
    xmlNode *el = NULL;
    for (xmlNode *c = j->node->children; c; c = c->next)
        if (is(c, tag)) {
            if (el) return urdf_fail(r, c, "a second <%s> in joint '%s'", tag, j->xml_name);
            el = c;
        }
    if (!el) return urdf_fail(r, j->node, "expected a <%s link=\"...\"/>", tag);
    const char *nm = urdf_attr(el, "link");
    if (!nm) return urdf_fail(r, el, "expected attribute link (the %s link's name)", tag);
    *out = link_index(u, nm);
    if (*out < 0) return urdf_fail(r, el, "link '%s' is not in the file", nm);
    return 0;
}

static int read_joint(reader *r, const urdf_doc *u, ujoint *j)
{
    static const char *const keys[] = { "name", "type", NULL };
    static const char *const origin_keys[] = { "xyz", "rpy", NULL };
    static const char *const axis_keys[] = { "xyz", NULL };
    static const char *const limit_keys[] = { "lower", "upper", "effort", "velocity", NULL };
    static const char *const dyn_keys[] = { "damping", "friction", NULL };
    static const char *const mimic_keys[] = { "joint", "multiplier", "offset", NULL };
    const char *type = urdf_attr(j->node, "type");
    if (!type) return urdf_fail(r, j->node, "expected attribute type (revolute, continuous, prismatic, fixed or floating)");
    if (strcmp(type, "revolute") == 0) j->type = SID_JOINT_REVOLUTE;
    else if (strcmp(type, "continuous") == 0) j->type = SID_JOINT_REVOLUTE, j->continuous = 1;
    else if (strcmp(type, "prismatic") == 0) j->type = SID_JOINT_PRISMATIC;
    else if (strcmp(type, "fixed") == 0) j->type = SID_JOINT_FIXED;
    else if (strcmp(type, "floating") == 0) j->type = SID_JOINT_FREE;
    else if (strcmp(type, "planar") == 0)
        return urdf_fail(r, j->node, "planar joints are not supported (sysid has revolute, prismatic, fixed and free "
                                "joints): model it as two prismatic joints and a revolute one");
    else
        return urdf_fail(r, j->node, "unknown joint type '%s': expected revolute, continuous, prismatic, fixed or floating",
                    type);
    unknown_attrs(r, j->node, keys, "a <joint> has a name and a type");
    if (joint_link(r, u, j, "parent", &j->parent) || joint_link(r, u, j, "child", &j->child)) return -1;
    j->axis[0] = 1;   /* URDF's default axis */
    for (xmlNode *c = j->node->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE || is(c, "parent") || is(c, "child")) continue;
        xmlNode **slot = is(c, "origin") ? &j->origin : is(c, "axis") ? &j->axis_el : is(c, "limit") ? &j->limit
                         : is(c, "dynamics") ? &j->dynamics : is(c, "mimic") ? &j->mimic : NULL;
        if (!slot) {
            unknown_child(r, j->node, c);
            continue;
        }
        if (*slot) return urdf_fail(r, c, "a second <%s> in joint '%s'", (const char *)c->name, j->xml_name);
        *slot = c;
    }
    if (j->origin) {
        if (numbers(r, j->origin, "xyz", 3, 3, j->xyz) < 0 || numbers(r, j->origin, "rpy", 3, 3, j->rpy) < 0) return -1;
        unknown_attrs(r, j->origin, origin_keys, "an <origin> has xyz and rpy");
    }
    if (j->axis_el) {
        if (numbers(r, j->axis_el, "xyz", 3, 3, j->axis) < 0) return -1;
        unknown_attrs(r, j->axis_el, axis_keys, "an <axis> has xyz");
        if (j->axis[0] == 0 && j->axis[1] == 0 && j->axis[2] == 0 &&
            (j->type == SID_JOINT_REVOLUTE || j->type == SID_JOINT_PRISMATIC))
            return urdf_fail(r, j->axis_el, "expected a nonzero axis");
    }
    if (j->limit) {
        double *v[4] = { &j->lower, &j->upper, &j->effort, &j->velocity };
        int *h[4] = { &j->has_lower, &j->has_upper, &j->has_effort, &j->has_velocity };
        for (int k = 0; k < 4; k++) {
            int n = numbers(r, j->limit, limit_keys[k], 1, 1, v[k]);
            if (n < 0) return -1;
            *h[k] = n;
        }
        unknown_attrs(r, j->limit, limit_keys, "a <limit> has lower, upper, effort and velocity");
        if (j->has_lower && j->has_upper && j->lower > j->upper)
            return urdf_fail(r, j->limit, "lower %g is above upper %g", j->lower, j->upper);
    }
    if (j->dynamics) {
        int n = numbers(r, j->dynamics, "damping", 1, 1, &j->damping);
        if (n < 0) return -1;
        j->has_damping = n;
        if ((n = numbers(r, j->dynamics, "friction", 1, 1, &j->friction)) < 0) return -1;
        j->has_friction = n;
        unknown_attrs(r, j->dynamics, dyn_keys, "sysid reads damping and friction");
        if (j->damping < 0) return urdf_fail(r, j->dynamics, "expected damping >= 0, got %g", j->damping);
        if (j->friction < 0) return urdf_fail(r, j->dynamics, "expected friction >= 0, got %g", j->friction);
    }
    if (j->mimic) {
        double dummy;
        if (numbers(r, j->mimic, "multiplier", 1, 1, &dummy) < 0 || numbers(r, j->mimic, "offset", 1, 1, &dummy) < 0)
            return -1;
        unknown_attrs(r, j->mimic, mimic_keys, "a <mimic> has joint, multiplier and offset");
    }
    return 0;
}

/* The joint whose child is link c, -1 if none. */
static int joint_of_child(const urdf_doc *u, int c)
{
    for (int i = 0; i < u->njoint; i++)
        if (u->joint[i].child == c) return i;
    return -1;
}

/* One root, every link reached from it, each link the child of one joint at most. */
static int check_tree(reader *r, urdf_doc *u)
{
    for (int i = 0; i < u->njoint; i++) {
        const ujoint *j = &u->joint[i];
        if (j->parent == j->child) return urdf_fail(r, j->node, "parent and child are the same link '%s'", j->xml_name);
        for (int k = 0; k < i; k++)
            if (u->joint[k].child == j->child)
                return urdf_fail(r, j->node, "link '%s' is already the child of joint '%s' (line %ld): a URDF is a tree",
                            u->link[j->child].xml_name, u->joint[k].xml_name, line_of(u->joint[k].node));
    }
    u->root = -1;
    for (int l = 0; l < u->nlink; l++) {
        if (joint_of_child(u, l) >= 0) continue;
        if (u->root >= 0)
            return urdf_fail(r, u->link[l].node, "a second root: neither this link nor link '%s' (line %ld) is a joint's "
                                            "child; a URDF has one root",
                        u->link[u->root].xml_name, line_of(u->link[u->root].node));
        u->root = l;
    }
    if (u->root < 0) return urdf_fail(r, u->link[0].node, "every link is a joint's child: the joints form a cycle");
    /* From every link up to the root: more steps than links is a cycle. */
    for (int l = 0; l < u->nlink; l++) {
        int at = l;
        for (int steps = 0; at != u->root; steps++) {
            int j = joint_of_child(u, at);
            if (steps > u->nlink) return urdf_fail(r, u->joint[j].node, "the joints form a cycle through link '%s'",
                                              u->link[at].xml_name);
            at = u->joint[j].parent;
        }
    }
    for (int i = 0; i < u->njoint; i++)
        if (u->joint[i].type == SID_JOINT_FREE && u->joint[i].parent != u->root)
            return urdf_fail(r, u->joint[i].node, "a floating joint must connect a link to the root link '%s' (sysid's "
                                             "free joints float over the world), but its parent is '%s'",
                        u->link[u->root].xml_name, u->link[u->joint[i].parent].xml_name);
    return 0;
}

/* Joints with <mimic>: fixed at q = 0 (sysid has no coupled joints). */
static void fix_mimics(reader *r, urdf_doc *u)
{
    for (int i = 0; i < u->njoint; i++) {
        ujoint *j = &u->joint[i];
        if (!j->mimic || j->type == SID_JOINT_FIXED) continue;
        const char *master = urdf_attr(j->mimic, "joint");
        if (!r->quiet)
            sid_io_warn("%s:%ld: <joint name=\"%s\">: <mimic joint=\"%s\"> imported as a fixed joint at q = 0: sysid has "
                     "no coupled joints, so it does not follow %s (its motion and the inertia it adds to %s's "
                     "are lost; its limit and dynamics are dropped)",
                     r->path, line_of(j->mimic), j->xml_name, master ? master : "?", master ? master : "its master",
                     master ? master : "the master");
        j->is_mimic = 1;
        j->type = SID_JOINT_FIXED;
    }
}

/* Read the file into u (its doc kept for the writer). */
int urdf_read(reader *r, const char *text, size_t len, urdf_doc *u)
{
    memset(u, 0, sizeof *u);
    if (!(u->doc = xml_text_parse(r->path, text, len, r->err))) return -1;
    xmlNode *robot = xmlDocGetRootElement(u->doc);
    if (!robot || !is(robot, "robot")) {
        sid_error_set(r->err, SID_ERR_INPUT, "%s:%ld: expected a URDF (a <robot> element), got <%s>", r->path,
                      line_of(robot), robot ? (const char *)robot->name : "nothing");
        goto bad;
    }
    u->robot_name = urdf_attr(robot, "name");
    int ntrans = 0, ngazebo = 0;
    const xmlNode *first_ignored = NULL;
    for (xmlNode *c = robot->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE) continue;
        if (is(c, "link")) u->nlink++;
        else if (is(c, "joint")) u->njoint++;
        else if (is(c, "transmission") || is(c, "gazebo")) {
            if (!first_ignored) first_ignored = c;
            if (is(c, "transmission")) ntrans++;
            else ngazebo++;
        }
        else if (!is(c, "material")) unknown_child(r, robot, c);
    }
    if (u->nlink == 0) {
        sid_error_set(r->err, SID_ERR_INPUT, "%s:%ld: <robot>: expected at least one <link>", r->path, line_of(robot));
        goto bad;
    }
    u->link = calloc((size_t)u->nlink, sizeof *u->link);
    u->joint = calloc((size_t)(u->njoint ? u->njoint : 1), sizeof *u->joint);
    xmlNode **lnodes = calloc((size_t)u->nlink, sizeof *lnodes);
    xmlNode **jnodes = calloc((size_t)(u->njoint ? u->njoint : 1), sizeof *jnodes);
    const char **lnames = calloc((size_t)u->nlink, sizeof *lnames);
    const char **jnames = calloc((size_t)(u->njoint ? u->njoint : 1), sizeof *jnames);
    int rc = -1;
    if (!u->link || !u->joint || !lnodes || !jnodes || !lnames || !jnames) {
        sid_error_set(r->err, SID_ERR_NOMEM, "%s: out of memory", r->path);
        goto out;
    }
    int nl = 0, nj = 0;
    for (xmlNode *c = robot->children; c; c = c->next) {
        if (!is(c, "link") && !is(c, "joint")) continue;
        const char *nm = urdf_attr(c, "name");
        if (!nm || !*nm) {
            urdf_fail(r, c, "expected attribute name");
            goto out;
        }
        if (is(c, "link")) lnodes[nl] = c, lnames[nl] = nm, u->link[nl].node = c, u->link[nl++].xml_name = nm;
        else jnodes[nj] = c, jnames[nj] = nm, u->joint[nj].node = c, u->joint[nj++].xml_name = nm;
    }
    char lrenamed[600] = "", jrenamed[600] = "";
    if (assign_names(r, "link", lnodes, lnames, nl, u->link[0].name, sizeof(ulink), lrenamed, sizeof lrenamed) ||
        assign_names(r, "joint", jnodes, jnames, nj, u->joint[0].name, sizeof(ujoint), jrenamed, sizeof jrenamed))
        goto out;
    if ((lrenamed[0] || jrenamed[0]) && !r->quiet)
        sid_io_warn("%s: names with characters sysid's names cannot have (. [ ] * ? , quotes, spaces) renamed: %s%s%s",
                 r->path, lrenamed, lrenamed[0] && jrenamed[0] ? "; " : "", jrenamed);
    for (int i = 0; i < nl; i++)
        if (read_link(r, &u->link[i])) goto out;
    for (int i = 0; i < nj; i++)
        if (read_joint(r, u, &u->joint[i])) goto out;
    if (check_tree(r, u)) goto out;
    inertia_warnings(r, u);
    fix_mimics(r, u);
    const ujoint *dry = NULL;   /* the first joint with dry friction, and how many have it */
    int ndry = 0;
    for (int i = 0; i < nj; i++) {
        const ujoint *j = &u->joint[i];
        if ((j->type == SID_JOINT_REVOLUTE || j->type == SID_JOINT_PRISMATIC) && j->friction > 0)
            dry = dry ? dry : j, ndry++;
        else if (j->type == SID_JOINT_REVOLUTE || j->type == SID_JOINT_PRISMATIC) continue;
        else if (!j->is_mimic && (j->limit || j->dynamics || j->axis_el)) {
            char key[96];
            snprintf(key, sizeof key, "%s extras", j->type == SID_JOINT_FIXED ? "fixed" : "free");
            notef(r, key, j->node, "a %s joint moves nothing: its <axis>, <limit> and <dynamics> are ignored",
                  j->type == SID_JOINT_FIXED ? "fixed" : "floating");
        }
        if (j->type == SID_JOINT_FREE && j->origin &&
            (j->xyz[0] || j->xyz[1] || j->xyz[2] || j->rpy[0] || j->rpy[1] || j->rpy[2]))
            notef(r, "free origin", j->origin, "a floating joint's origin is its initial pose, which is state in "
                                               "sysid (the log's first sample), not part of the model: ignored");
    }
    if (dry && !r->quiet)
        sid_io_warn("%s:%ld: <dynamics friction> (joint '%s' and %d more): imported as dry friction (friction.model "
                    "\"dry\", MuJoCo's frictionloss, which sticks; every integrator and contact model takes it)",
                 r->path, line_of(dry->dynamics), dry->xml_name, ndry - 1);
    if ((ntrans || ngazebo) && !r->quiet)
        sid_io_warn("%s:%ld: ignored: %d <transmission> and %d <gazebo> element%s (from this line on; no actuator model "
                 "in URDF: every moving joint gets a torque motor, u = the joint torque)",
                 r->path, line_of(first_ignored), ntrans, ngazebo, ntrans + ngazebo == 1 ? "" : "s");
    notes_print(r);
    rc = 0;
out:
    free(lnodes);
    free(jnodes);
    free(lnames);
    free(jnames);
    if (rc == 0) return 0;
bad:
    urdf_doc_free(u);
    return -1;
}

/* ---- robot.json text ---------------------------------------------------------------------- */

static void put_vec(textbuf *b, const double *v)
{
    tb_printf(b, "[");
    for (int k = 0; k < 3; k++) {
        if (k) tb_printf(b, ", ");
        tb_exact(b, v[k]);
    }
    tb_printf(b, "]");
}

/* A JSON string (cJSON escapes it). */
static void put_str(textbuf *b, const char *s)
{
    cJSON *item = cJSON_CreateString(s);
    char *t = item ? cJSON_PrintUnformatted(item) : NULL;
    if (t) tb_printf(b, "%s", t);
    else b->bad = 1;
    cJSON_free(t);
    cJSON_Delete(item);
}

static void put_link(textbuf *b, const ulink *l)
{
    static const char *const keys[] = { "ixx", "iyy", "izz", "ixy", "ixz", "iyz" };
    tb_printf(b, "    { \"name\": ");
    put_str(b, l->name);
    if (l->has_mass) {
        tb_printf(b, ", \"%s\": ", param_key(SID_P_MASS));
        tb_exact(b, l->mass);
        tb_printf(b, ", \"%s\": ", param_key(SID_P_COM));
        put_vec(b, l->com);
        tb_printf(b, ",\n      \"inertia\": {");
        for (int k = 0; k < 6; k++) {
            tb_printf(b, "%s \"%s\": ", k ? "," : "", keys[k]);
            tb_exact(b, l->inertia[k]);
        }
        tb_printf(b, " }");
    }
    tb_printf(b, " }");
}

static void put_joint(textbuf *b, const urdf_doc *u, const ujoint *j)
{
    static const char *const types[] = { "fixed", "revolute", "prismatic", "free" };
    tb_printf(b, "    { \"name\": ");
    put_str(b, j->name);
    tb_printf(b, ", \"type\": \"%s\", \"parent\": ", types[j->type]);
    put_str(b, u->link[j->parent].name);
    tb_printf(b, ", \"child\": ");
    put_str(b, u->link[j->child].name);
    if (j->type == SID_JOINT_FREE) {
        tb_printf(b, " }");
        return;
    }
    tb_printf(b, ",\n      \"origin\": { \"xyz\": ");
    put_vec(b, j->xyz);
    tb_printf(b, ", \"rpy\": ");
    put_vec(b, j->rpy);
    tb_printf(b, " }");
    if (j->type == SID_JOINT_FIXED) {
        tb_printf(b, " }");
        return;
    }
    tb_printf(b, ", \"axis\": ");
    put_vec(b, j->axis);
    if (j->has_damping || j->has_friction) {
        tb_printf(b, ",\n      \"friction\": {");
        if (j->has_damping) tb_printf(b, " \"%s\": ", param_key(SID_P_VISCOUS)), tb_exact(b, j->damping);
        if (j->has_friction)
            tb_printf(b, "%s \"%s\": ", j->has_damping ? "," : "", param_key(SID_P_COULOMB)), tb_exact(b, j->friction);
        if (j->has_friction && j->friction > 0) tb_printf(b, ", \"model\": \"dry\"");   /* zero: no model to choose */
        tb_printf(b, " }");
    }
    tb_printf(b, ",\n      \"motor\": { \"input\": \"torque\" }");
    if (j->limit && !j->continuous && (j->has_lower || j->has_upper || j->has_effort || j->has_velocity)) {
        const char *keys[4] = { "lower", "upper", "effort", "velocity" };
        const double v[4] = { j->lower, j->upper, j->effort, j->velocity };
        const int h[4] = { j->has_lower, j->has_upper, j->has_effort, j->has_velocity };
        tb_printf(b, ",\n      \"limit\": {");
        int first = 1;
        for (int k = 0; k < 4; k++) {
            if (!h[k]) continue;
            tb_printf(b, "%s \"%s\": ", first ? "" : ",", keys[k]);
            tb_exact(b, v[k]);
            first = 0;
        }
        tb_printf(b, " }");
    }
    tb_printf(b, " }");
}

int urdf_write_json(reader *r, const urdf_doc *u, char **json)
{
    textbuf b = { 0 };
    tb_printf(&b, "{\n");
    if (u->robot_name) {
        tb_printf(&b, "  \"name\": ");
        put_str(&b, u->robot_name);
        tb_printf(&b, ",\n");
    }
    tb_printf(&b, "  \"links\": [\n");
    for (int i = 0; i < u->nlink; i++) {
        put_link(&b, &u->link[i]);
        tb_printf(&b, "%s\n", i + 1 < u->nlink ? "," : "");
    }
    tb_printf(&b, "  ],\n  \"joints\": [\n");
    for (int i = 0; i < u->njoint; i++) {
        put_joint(&b, u, &u->joint[i]);
        tb_printf(&b, "%s\n", i + 1 < u->njoint ? "," : "");
    }
    tb_printf(&b, "  ]\n}\n");
    if (b.bad) {
        free(b.s);
        return sid_error_set(r->err, SID_ERR_NOMEM, "%s: out of memory", r->path), -1;
    }
    *json = b.s;
    return 0;
}

int urdf_import_with(const char *path, const char *text, size_t len, const urdf_import_opts *opts,
                     char **json, sid_error *err)
{
    reader r = { .path = path, .opts = opts, .err = err };
    urdf_doc u;
    *json = NULL;
    if (urdf_read(&r, text, len, &u)) return -1;
    int rc = urdf_write_json(&r, &u, json);
    urdf_doc_free(&u);
    return rc;
}

int urdf_import(const char *path, const char *text, size_t len, char **json, sid_error *err)
{
    return urdf_import_with(path, text, len, NULL, json, err);
}

