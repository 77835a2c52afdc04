/* mjcf_export.c — fitted values written back into a copy of the user's MJCF.
 *
 * The target file is read again (mjcf_read) and imported; every parameter of fitted is
 * compared with that import, and only those that differ are written, by byte edits of the
 * original text (xml_text.h), at the node the reader found them on: the element itself, or
 * the <default> element whose class gave them. Where one default serves joints (or motors)
 * fitted to different values, each changed value goes onto its own element instead and the
 * default stays. What MJCF cannot hold is listed, never dropped. Frames: the link of a body is
 * its body frame moved by off (mjcf_internal.h), so inertial pos = com + off, body pos =
 * origin.xyz + off_parent (a body whose joint has no anchor offset: off = 0 for it).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "warn.h"
#include "mjcf.h"
#include "mjcf_internal.h"
#include "numfmt.h"
#include "robot_json.h"
#include "xml_text.h"

#define MAXNOTE 4096

/* ---- pending writes: one per (node, attribute), applied at the end -------------------------- */

typedef struct {
    xmlNode *node;
    const char *attr;
    int n;                  /* numbers the attribute holds (or will) */
    double v[6];
    unsigned char changed[6];
    int whole;              /* 1: write all n numbers as the value (attribute absent or replaced) */
} pending;

typedef struct {
    mjcf_doc *d;
    const sid_robot_desc *f, *o;   /* fitted, and the file's own import */
    pending *p;
    int np;
    xml_edits *e;
    char *unrep[MAXNOTE / 16];     /* "name = value" lines */
    int nunrep;
    char *unwritten[MAXNOTE / 16]; /* "name = value (in file)" */
    int nunwritten;
    int oom;
} exporter;

static void note(exporter *x, char **list, int *n, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void note(exporter *x, char **list, int *n, const char *fmt, ...)
{
    if (*n >= MAXNOTE / 16) return;
    char buf[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (!(list[*n] = strdup(buf))) x->oom = 1;
    else (*n)++;
}

/* The pending write of node's attr, created with the file's numbers (n of them) if new. */
static pending *want(exporter *x, xmlNode *node, const char *attr, int n, const double *file)
{
    for (int i = 0; i < x->np; i++)
        if (x->p[i].node == node && strcmp(x->p[i].attr, attr) == 0) return &x->p[i];
    pending *q = realloc(x->p, sizeof *q * (size_t)(x->np + 1));
    if (!q) {
        x->oom = 1;
        return NULL;
    }
    x->p = q;
    q = &x->p[x->np++];
    memset(q, 0, sizeof *q);
    q->node = node, q->attr = attr, q->n = n;
    memcpy(q->v, file, sizeof(double) * (size_t)n);
    if (!xmlHasProp(node, (const xmlChar *)attr)) q->whole = 1;
    return q;
}

static int in_main_file(const exporter *x, const xmlNode *node)
{
    return mjcf_file_of(x->d, node) == &x->d->file[0];
}

/* Write component k of node's attr (n numbers, the file's own in file) as value v. */
static void set(exporter *x, xmlNode *node, const char *attr, int n, const double *file, int k, double v,
                const char *param)
{
    if (!in_main_file(x, node)) {
        char num[NUMFMT_LEN];
        numfmt(num, v);
        note(x, x->unwritten, &x->nunwritten, "%s = %s (defined in %s, line %ld)", param, num,
             mjcf_file_of(x->d, node)->path, xml_line(node));
        return;
    }
    pending *p = want(x, node, attr, n, file);
    if (!p) return;
    p->v[k] = v, p->changed[k] = 1;
}

static void unrepresentable(exporter *x, const char *param, double v, const char *why)
{
    char num[NUMFMT_LEN];
    numfmt(num, v);
    note(x, x->unrep, &x->nunrep, "%s = %s%s%s", param, num, why ? "  " : "", why ? why : "");
}

/* ---- lookups ------------------------------------------------------------------------------------- */

static int body_of(const mjcf_doc *d, const char *name)
{
    for (int b = 1; b < d->nbody; b++)
        if (strcmp(d->body[b].name, name) == 0) return b;
    return -1;
}

static int jnt_of(const mjcf_doc *d, const char *name)
{
    for (int j = 0; j < d->njnt; j++)
        if (strcmp(d->jnt[j].name, name) == 0) return j;
    return -1;
}

static int desc_link(const sid_robot_desc *r, const char *name)
{
    for (int i = 0; i < r->nlink; i++)
        if (strcmp(r->link[i].name, name) == 0) return i;
    return -1;
}

static int desc_joint(const sid_robot_desc *r, const char *name)
{
    for (int i = 0; i < r->njoint; i++)
        if (strcmp(r->joint[i].name, name) == 0) return i;
    return -1;
}

/* fitted has the file's structure: the same links and joints, types, parents and children. */
static int same_structure(const exporter *x, sid_error *err)
{
    const sid_robot_desc *f = x->f, *o = x->o;
    const char *path = x->d->path;
    for (int i = 0; i < f->nlink; i++)
        if (desc_link(o, f->link[i].name) < 0)
            return sid_error_set(err, SID_ERR_INPUT, "%s: link '%s' of the fitted robot is not in the file", path,
                                 f->link[i].name), -1;
    for (int i = 0; i < f->njoint; i++) {
        int j = desc_joint(o, f->joint[i].name);
        if (j < 0)
            return sid_error_set(err, SID_ERR_INPUT, "%s: joint '%s' of the fitted robot is not in the file", path,
                                 f->joint[i].name), -1;
        const sid_joint_desc *a = &f->joint[i], *b = &o->joint[j];
        if (a->type != b->type || strcmp(f->link[a->parent].name, o->link[b->parent].name) ||
            strcmp(f->link[a->child].name, o->link[b->child].name))
            return sid_error_set(err, SID_ERR_INPUT, "%s: joint '%s': the fitted robot has another type, parent or "
                                 "child than the file", path, a->name), -1;
    }
    if (f->nlink != o->nlink || f->njoint != o->njoint)
        return sid_error_set(err, SID_ERR_INPUT, "%s: the fitted robot has %d links and %d joints, the file %d and %d",
                             path, f->nlink, f->njoint, o->nlink, o->njoint), -1;
    return 0;
}

/* ---- where each kind goes ------------------------------------------------------------------------ */

/* A joint number (damping, armature, frictionloss) or a motor's gear: the node that defines it
 * for joint j, the fitted and file values of every joint sharing that node decide where it goes. */
typedef struct {
    const char *attr;
    sid_param_kind kind;
} joint_attr;

static xmlNode *jsrc(const mjcf_joint *j, sid_param_kind k)
{
    switch (k) {
    case SID_P_ARMATURE: return j->src_armature;
    case SID_P_VISCOUS: return j->src_damping;
    case SID_P_COULOMB: return j->src_frictionloss;
    default: return j->src_gear;
    }
}

static xmlNode *jelem(const mjcf_joint *j, sid_param_kind k)
{
    return k == SID_P_GEAR ? j->act : j->node;
}

static int attr_count(exporter *x, xmlNode *node, const char *attr, double *v)
{
    sid_error e = { 0 };
    int n = xml_attr_numbers(mjcf_file_of(x->d, node)->path, node, attr, 1, 6, v, &e);
    return n > 0 ? n : 1;
}

/* Joint parameter kind (the table's row: its key and where the description keeps it) onto the
 * MJCF attribute attr. */
static void joint_kind(exporter *x, sid_param_kind kind, const char *attr)
{
    const sid_param_row *row = sid_param_row_of(kind, 0);
    const char *key = row->key;
    mjcf_doc *d = x->d;
    unsigned char *done = calloc((size_t)d->njnt + 1, 1);
    if (!done) {
        x->oom = 1;
        return;
    }
    for (int a = 0; a < d->njnt; a++) {
        const mjcf_joint *ja = &d->jnt[a];
        int fa = desc_joint(x->f, ja->name), oa = desc_joint(x->o, ja->name);
        if (done[a] || ja->type == MJ_FREE || fa < 0 || oa < 0) continue;
        if (kind == SID_P_GEAR && !ja->motor) continue;
        xmlNode *src = jsrc(ja, kind), *elem = jelem(ja, kind);
        double vf = *sid_param_value(row, x->f, fa), vo = *sid_param_value(row, x->o, oa);
        char param[2 * SID_MAX_NAME + 32];
        snprintf(param, sizeof param, "joints.%s.%s", ja->name, key);
        if (!src || src == elem) {   /* on the element itself, or MuJoCo's built-in default */
            done[a] = 1;
            if (vf == vo) continue;
            double file[6] = { vo, 0, 0, 0, 0, 0 };
            int n = src ? attr_count(x, elem, attr, file) : 1;
            set(x, elem, attr, n, file, 0, vf, param);
            continue;
        }
        /* a default class gives it: the group of joints it serves */
        int same = 1, any = 0;
        double v0 = vf;
        for (int b = a; b < d->njnt; b++) {
            const mjcf_joint *jb = &d->jnt[b];
            int fb = desc_joint(x->f, jb->name), ob = desc_joint(x->o, jb->name);
            if (jsrc(jb, kind) != src || fb < 0 || ob < 0 || (kind == SID_P_GEAR && !jb->motor)) continue;
            double wf = *sid_param_value(row, x->f, fb), wo = *sid_param_value(row, x->o, ob);
            if (wf != v0) same = 0;
            if (wf != wo) any = 1;
        }
        if (!any) {
            for (int b = a; b < d->njnt; b++)
                if (jsrc(&d->jnt[b], kind) == src) done[b] = 1;
            continue;
        }
        double file[6] = { vo, 0, 0, 0, 0, 0 };
        int n = attr_count(x, src, attr, file);
        if (same) {
            set(x, src, attr, n, file, 0, v0, param);
            for (int b = a; b < d->njnt; b++)
                if (jsrc(&d->jnt[b], kind) == src) done[b] = 1;
            continue;
        }
        char names[600] = "", cls[SID_MAX_NAME] = "";
        xmlChar *c = xmlGetProp(src->parent, (const xmlChar *)"class");
        snprintf(cls, sizeof cls, "%s", c ? (const char *)c : "main");
        xmlFree(c);
        for (int b = a; b < d->njnt; b++) {
            const mjcf_joint *jb = &d->jnt[b];
            int fb = desc_joint(x->f, jb->name), ob = desc_joint(x->o, jb->name);
            if (jsrc(jb, kind) != src || fb < 0 || ob < 0 || (kind == SID_P_GEAR && !jb->motor)) continue;
            done[b] = 1;
            double wf = *sid_param_value(row, x->f, fb), wo = *sid_param_value(row, x->o, ob);
            if (wf == wo) continue;
            size_t l = strlen(names);
            snprintf(names + l, sizeof names - l, "%s%s", l ? ", " : "", jb->name);
            double one[6] = { wo, 0, 0, 0, 0, 0 };
            snprintf(param, sizeof param, "joints.%s.%s", jb->name, key);
            set(x, jelem(jb, kind), attr, 1, one, 0, wf, param);
        }
        if (!x->d->quiet)
            sid_io_warn("%s:%ld: <default class=\"%s\">: %s serves joints fitted to different values: written onto "
                     "each joint (%s), the default stays", mjcf_file_of(d, src)->path, xml_line(src), cls, attr, names);
    }
    free(done);
}

/* Inertial of link L (body b): mass, pos = com + off, the tensor as diaginertia in the inertial's
 * own frame when it stays diagonal there (to 1e-12 of its largest element), else fullinertia. */
static void link_inertial(exporter *x, int b, const sid_link_desc *lf, const sid_link_desc *lo)
{
    mjcf_doc *d = x->d;
    const mjcf_body *B = &d->body[b];
    char param[2 * SID_MAX_NAME + 32];
    int mass = lf->mass != lo->mass, com = 0, inertia = 0;
    for (int k = 0; k < 3; k++) com |= lf->com[k] != lo->com[k];
    for (int k = 0; k < 6; k++) inertia |= lf->inertia[k] != lo->inertia[k];
    if (!mass && !com && !inertia) return;
    if (B->inertia_from != MJ_INERTIA_ELEMENT) {
        snprintf(param, sizeof param, "links.%s.mass", lf->name);
        if (mass) unrepresentable(x, param, lf->mass, "(the body's inertia comes from its geoms: give it an <inertial>)");
        for (int k = 0; k < 3 && com; k++) {
            snprintf(param, sizeof param, "links.%s.com[%d]", lf->name, k);
            unrepresentable(x, param, lf->com[k], "(inertia from geoms)");
        }
        static const char *const ik[6] = { "ixx", "iyy", "izz", "ixy", "ixz", "iyz" };
        for (int k = 0; k < 6 && inertia; k++) {
            snprintf(param, sizeof param, "links.%s.inertia.%s", lf->name, ik[k]);
            unrepresentable(x, param, lf->inertia[k], "(inertia from geoms)");
        }
        return;
    }
    xmlNode *n = B->inertial;
    if (mass) {
        snprintf(param, sizeof param, "links.%s.mass", lf->name);
        set(x, n, "mass", 1, &lo->mass, 0, lf->mass, param);
    }
    if (com) {
        double file[3], v[3];
        for (int k = 0; k < 3; k++) file[k] = lo->com[k] + B->off[k], v[k] = lf->com[k] + B->off[k];
        for (int k = 0; k < 3; k++)
            if (lf->com[k] != lo->com[k]) {
                snprintf(param, sizeof param, "links.%s.com[%d]", lf->name, k);
                set(x, n, "pos", 3, file, k, v[k], param);
            }
    }
    if (!inertia) return;
    snprintf(param, sizeof param, "links.%s.inertia", lf->name);
    const double *I = lf->inertia;
    if (xmlHasProp(n, (const xmlChar *)"fullinertia")) {
        for (int k = 0; k < 6; k++)
            if (I[k] != lo->inertia[k]) set(x, n, "fullinertia", 6, lo->inertia, k, I[k], param);
        return;
    }
    /* D = R^T I R in the inertial's frame R (read as the import read it) */
    double q[4], R[9], M[9] = { I[0], I[3], I[4], I[3], I[1], I[5], I[4], I[5], I[2] }, D[9];
    sid_error e = { 0 };
    sid_error *keep = d->err;
    d->err = &e;
    int nq = mjcf_orientation(d, n, -1, NULL, q) == 0 ? 0 : -1;
    d->err = keep;
    mjcf_quat_mat(R, q);
    double big = 0, off = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double s = 0;
            for (int a = 0; a < 3; a++)
                for (int c = 0; c < 3; c++) s += R[3 * a + i] * M[3 * a + c] * R[3 * c + j];
            D[3 * i + j] = s;
            if (i == j) big = fmax(big, fabs(s));
            else off = fmax(off, fabs(s));
        }
    if (nq >= 0 && off <= 1e-12 * big) {
        double file[3] = { 0, 0, 0 }, v[3] = { D[0], D[4], D[8] };
        xml_attr_numbers(mjcf_file_of(d, n)->path, n, "diaginertia", 3, 3, file, &e);
        for (int k = 0; k < 3; k++)
            if (v[k] != file[k]) set(x, n, "diaginertia", 3, file, k, v[k], param);
        return;
    }
    /* fullinertia in the body frame replaces the orientation and diaginertia */
    if (!in_main_file(x, n)) {
        unrepresentable(x, param, I[0], "(not written: defined in an included file)");
        return;
    }
    char buf[6 * NUMFMT_LEN + 8] = "";
    for (int k = 0; k < 6; k++) {
        char t[NUMFMT_LEN];
        numfmt(t, I[k]);
        size_t l = strlen(buf);
        snprintf(buf + l, sizeof buf - l, "%s%s", k ? " " : "", t);
    }
    const mjcf_file *mf = &d->file[0];
    static const char *const orient[] = { "quat", "axisangle", "euler", "xyaxes", "zaxis", "diaginertia" };
    for (int i = 0; i < 6; i++)
        if (xml_edits_remove_attr(x->e, mf->text, mf->len, n, orient[i])) x->oom = 1;
    if (xml_edits_set_attr(x->e, mf->text, mf->len, n, "fullinertia", buf)) x->oom = 1;
    if (!d->quiet)
        sid_io_warn("%s:%ld: <inertial>: body %s: the fitted inertia is not diagonal in the inertial's frame: written as "
                 "fullinertia (orientation and diaginertia removed)", mf->path, xml_line(n), B->name);
}

/* q = qz(y) qy(p) qx(r): the rotation Rz(y) Ry(p) Rx(r) as a quaternion. */
static void rpy_quat(double q[4], const double rpy[3])
{
    double qx[4] = { cos(rpy[0] / 2), sin(rpy[0] / 2), 0, 0 }, qy[4] = { cos(rpy[1] / 2), 0, sin(rpy[1] / 2), 0 },
           qz[4] = { cos(rpy[2] / 2), 0, 0, sin(rpy[2] / 2) };
    mjcf_quat_mul(q, qz, qy);
    mjcf_quat_mul(q, q, qx);
}

/* The origin of the joint that hangs body b on its parent: the body's pos and quat, when the
 * link frame is the body frame (no anchor offset, at most one joint). */
static void body_origin(exporter *x, int b, const sid_joint_desc *jf, const sid_joint_desc *jo)
{
    mjcf_doc *d = x->d;
    const mjcf_body *B = &d->body[b], *P = &d->body[B->parent];
    int xyz = 0, rpy = 0;
    for (int k = 0; k < 3; k++) xyz |= jf->xyz[k] != jo->xyz[k], rpy |= jf->rpy[k] != jo->rpy[k];
    if (!xyz && !rpy) return;
    char param[2 * SID_MAX_NAME + 32];
    int ok = B->njnt <= 1 && B->off[0] == 0 && B->off[1] == 0 && B->off[2] == 0;
    for (int k = 0; k < 3; k++) {
        snprintf(param, sizeof param, "joints.%s.origin.xyz[%d]", jf->name, k);
        if (jf->xyz[k] == jo->xyz[k]) continue;
        if (!ok) unrepresentable(x, param, jf->xyz[k], "(the joint has an anchor offset or shares its body)");
        else {
            double file[3], v = jf->xyz[k] + P->off[k];
            for (int c = 0; c < 3; c++) file[c] = B->pos[c];
            set(x, B->node, "pos", 3, file, k, v, param);
        }
    }
    if (!rpy) return;
    snprintf(param, sizeof param, "joints.%s.origin.rpy", jf->name);
    if (!ok) {
        for (int k = 0; k < 3; k++)
            if (jf->rpy[k] != jo->rpy[k]) {
                snprintf(param, sizeof param, "joints.%s.origin.rpy[%d]", jf->name, k);
                unrepresentable(x, param, jf->rpy[k], "(the joint has an anchor offset or shares its body)");
            }
        return;
    }
    double q[4];
    rpy_quat(q, jf->rpy);
    static const char *const alt[] = { "axisangle", "euler", "xyaxes", "zaxis" };
    int other = 0;
    for (int i = 0; i < 4; i++) other |= xmlHasProp(B->node, (const xmlChar *)alt[i]) != NULL;
    if (other && in_main_file(x, B->node)) {
        const mjcf_file *mf = &d->file[0];
        for (int i = 0; i < 4; i++)
            if (xml_edits_remove_attr(x->e, mf->text, mf->len, B->node, alt[i])) x->oom = 1;
        if (!d->quiet)
            sid_io_warn("%s:%ld: <body name=\"%s\">: the fitted orientation is written as quat", mf->path,
                     xml_line(B->node), B->name);
    }
    pending *p = NULL;
    if (!in_main_file(x, B->node)) {
        set(x, B->node, "quat", 4, B->quat, 0, q[0], param);
        return;
    }
    p = want(x, B->node, "quat", 4, B->quat);
    if (!p) return;
    if (other) p->whole = 1;
    for (int k = 0; k < 4; k++) p->v[k] = q[k], p->changed[k] = 1;
}

/* ---- servo gains and limits: onto the actuator elements ------------------------------------------- */

/* The file's numbers of attr on node (n of them, from what the import read: file), and set its
 * component k to v. An attribute a class gives is written onto the element whole. */
static void set_num(exporter *x, xmlNode *node, const char *attr, int n, const double *file, int k, double v,
                    const char *param)
{
    double cur[6];
    memcpy(cur, file, sizeof(double) * (size_t)n);
    if (xmlHasProp(node, (const xmlChar *)attr)) n = attr_count(x, node, attr, cur);
    set(x, node, attr, n, cur, k, v, param);
}

/* ---- a joint's limit: its range --------------------------------------------------------------------- */

/* A fitted bound where it differs from the file's: component 0 or 1 of the joint's range (in the
 * file's angle unit), a range a class gives written onto the element whole; a bound the file's
 * joint has no limited range for has nowhere to go. */
static void joint_range(exporter *x, const mjcf_joint *J, const sid_joint_desc *jf, const sid_joint_desc *jo)
{
    const int has[2] = { jf->has_limit_lower, jf->has_limit_upper };
    const double vf[2] = { jf->limit_lower, jf->limit_upper }, vo[2] = { jo->limit_lower, jo->limit_upper };
    const int had[2] = { jo->has_limit_lower, jo->has_limit_upper };
    const double s = J && J->type == MJ_HINGE && x->d->degree ? 180 / 3.14159265358979323846 : 1;
    for (int k = 0; k < 2; k++) {
        if (!has[k] || (had[k] && vf[k] == vo[k])) continue;
        char param[2 * SID_MAX_NAME + 32];
        snprintf(param, sizeof param, "joints.%s.limit.%s", jf->name, k ? "upper" : "lower");
        if (!J || !J->limited) {
            unrepresentable(x, param, vf[k], "(no limited range on this joint in the file)");
            continue;
        }
        const double file[2] = { J->range[0] * s, J->range[1] * s };
        set_num(x, J->node, "range", 2, file, k, vf[k] * s, param);
    }
}

/* A fitted servo's kp, kd and limit where they differ from the file's: a <position>'s kp (its kd
 * on the merged <velocity>'s kv, or MuJoCo 3's kv when the file has one), a <velocity>'s kv, a
 * PD <general>'s gainprm and biasprm (0, -kp, -kd) or (0, 0, -kd), forcerange -L L. */
static void servo_gains(exporter *x, const mjcf_joint *J, const sid_joint_desc *jf, const sid_joint_desc *jo)
{
    char param[2 * SID_MAX_NAME + 32];
    const int general = mjcf_is(J->act, "general"), pos = jf->motor == SID_MOTOR_POSITION;
    const double bias_o[3] = { 0, pos ? -jo->kp : 0, -jo->kd };
    if (pos && jf->kp != jo->kp) {
        snprintf(param, sizeof param, "joints.%s.motor.kp", jf->name);
        if (general) {
            set_num(x, J->act, "gainprm", 1, &jo->kp, 0, jf->kp, param);
            set_num(x, J->act, "biasprm", 3, bias_o, 1, -jf->kp, param);
        } else {
            set_num(x, J->act, "kp", 1, &jo->kp, 0, jf->kp, param);
        }
    }
    if (jf->kd != jo->kd) {
        snprintf(param, sizeof param, "joints.%s.motor.kd", jf->name);
        if (general) {
            if (!pos) set_num(x, J->act, "gainprm", 1, &jo->kd, 0, jf->kd, param);
            set_num(x, J->act, "biasprm", 3, bias_o, 2, -jf->kd, param);
        } else if (J->act_kd || !pos || xmlHasProp(J->act, (const xmlChar *)"kv")) {
            set_num(x, J->act_kd ? J->act_kd : J->act, "kv", 1, &jo->kd, 0, jf->kd, param);
        } else {
            unrepresentable(x, param, jf->kd, "(a <position> of MuJoCo 2.2.2 has no kv: add a <velocity> on the joint)");
        }
    }
    if (jf->has_servo_limit && (!jo->has_servo_limit || jf->servo_limit != jo->servo_limit)) {
        snprintf(param, sizeof param, "joints.%s.motor.limit", jf->name);
        if (!jo->has_servo_limit) {
            unrepresentable(x, param, jf->servo_limit, "(the actuator in the file has no forcerange)");
        } else {
            const double r[2] = { -jo->servo_limit, jo->servo_limit };
            set_num(x, J->act, "forcerange", 2, r, 0, -jf->servo_limit, param);
            set_num(x, J->act, "forcerange", 2, r, 1, jf->servo_limit, param);
        }
    }
}

/* ---- the parameter table: what differs, and what MJCF cannot hold --------------------------------- */

static void others(exporter *x)
{
    const sid_param_row *rows;
    int nrow = sid_param_rows(&rows);
    for (int r = 0; r < nrow; r++) {
        const sid_param_row *row = &rows[r];
        sid_param_kind k = row->kind;
        int handled = k == SID_P_MASS || k == SID_P_COM || k == SID_P_INERTIA || k == SID_P_XYZ || k == SID_P_RPY ||
                      k == SID_P_ARMATURE || k == SID_P_VISCOUS || k == SID_P_COULOMB || k == SID_P_GEAR ||
                      k == SID_P_KP || k == SID_P_KD || k == SID_P_SERVO_LIMIT || k == SID_P_LIMIT_LOWER ||
                      k == SID_P_LIMIT_UPPER;
        if (handled) continue;
        int nowner = row->owner == SID_OWNER_LINK ? x->f->nlink : row->owner == SID_OWNER_JOINT ? x->f->njoint
                   : row->owner == SID_OWNER_SPHERE ? x->f->nsphere : 1;
        for (int i = 0; i < nowner; i++) {
            const char *oname = row->owner == SID_OWNER_JOINT ? x->f->joint[i].name
                              : row->owner == SID_OWNER_LINK ? x->f->link[i].name
                              : row->owner == SID_OWNER_SPHERE ? x->f->sphere[i].name : "";
            int io = row->owner == SID_OWNER_JOINT ? desc_joint(x->o, oname)
                   : row->owner == SID_OWNER_LINK ? desc_link(x->o, oname) : i;
            if (row->owner == SID_OWNER_SPHERE) {
                io = -1;
                for (int s = 0; s < x->o->nsphere; s++)
                    if (strcmp(x->o->sphere[s].name, oname) == 0) io = s;
            }
            if (!sid_param_exists(row, x->f, i)) continue;
            const double *vf = sid_param_value(row, x->f, i);
            const double *vo = io >= 0 && sid_param_exists(row, x->o, io) ? sid_param_value(row, x->o, io) : NULL;
            for (int c = 0; c < row->ncomp; c++) {
                if (vo && vf[c] == vo[c]) continue;
                char param[2 * SID_MAX_NAME + 48];
                sid_param_name(row, oname, row->comp0 + c, param, sizeof param);
                double file[3];
                if (k == SID_P_GRAVITY && x->d->option) {
                    memcpy(file, x->o->gravity, sizeof file);
                    set(x, x->d->option, "gravity", 3, file, c, vf[c], param);
                } else if (k == SID_P_GROUND_HEIGHT && x->d->ground) {
                    double pos[3] = { 0, 0, 0 };
                    sid_error e = { 0 };
                    xml_attr_numbers(mjcf_file_of(x->d, x->d->ground)->path, x->d->ground, "pos", 3, 3, pos, &e);
                    pos[2] = vo ? vo[c] : pos[2];
                    set(x, x->d->ground, "pos", 3, pos, 2, vf[c], param);
                } else if (k == SID_P_GROUND_FRICTION && x->d->ground) {
                    double fr[3] = { vo ? vo[c] : 1, 0.005, 0.0001 };
                    int n = attr_count(x, x->d->ground, "friction", fr);
                    set(x, x->d->ground, "friction", n, fr, 0, vf[c], param);
                } else if ((k == SID_P_SPHERE_XYZ || k == SID_P_SPHERE_RADIUS) && io >= 0) {
                    const mjcf_sphere *S = &x->d->sphere[io];
                    const mjcf_body *B = &x->d->body[S->body];
                    if (k == SID_P_SPHERE_RADIUS) {
                        double sz[3] = { S->radius, 0, 0 };
                        int n = xmlHasProp(S->node, (const xmlChar *)"size") ? attr_count(x, S->node, "size", sz) : 1;
                        set(x, S->node, "size", n, sz, 0, vf[c], param);
                    } else {
                        for (int a = 0; a < 3; a++) file[a] = S->xyz[a];
                        set(x, S->node, "pos", 3, file, row->comp0 + c, vf[c] + B->off[row->comp0 + c], param);
                    }
                } else if (k == SID_P_GRAVITY) {
                    unrepresentable(x, param, vf[c], "(the file has no <option>)");
                } else {
                    unrepresentable(x, param, vf[c], NULL);
                }
            }
        }
    }
}

static int apply(exporter *x, char **out, size_t *outlen)
{
    const mjcf_file *mf = &x->d->file[0];
    for (int i = 0; i < x->np && !x->oom; i++) {
        pending *p = &x->p[i];
        if (p->whole) {
            char buf[6 * NUMFMT_LEN + 8] = "";
            for (int k = 0; k < p->n; k++) {
                char t[NUMFMT_LEN];
                numfmt(t, p->v[k]);
                size_t l = strlen(buf);
                snprintf(buf + l, sizeof buf - l, "%s%s", k ? " " : "", t);
            }
            if (xml_edits_set_attr(x->e, mf->text, mf->len, p->node, p->attr, buf)) x->oom = 1;
        } else if (xml_edits_set_numbers(x->e, mf->text, mf->len, p->node, p->attr, p->n, p->v, p->changed)) {
            x->oom = 1;
        }
    }
    if (x->oom) return -1;
    return xml_edits_apply(x->e, mf->text, mf->len, out, outlen);
}

int mjcf_export(const char *path, const char *text, size_t len, const sid_robot_desc *fitted, char **out,
                size_t *outlen, sid_error *err)
{
    mjcf_doc d;
    sid_robot_desc o;
    memset(&o, 0, sizeof o);
    *out = NULL, *outlen = 0;
    char *json = NULL;
    exporter x = { 0 };
    int q = sid_io_warn_mute(1);   /* the file's import was warned about when it was imported */
    int rc = mjcf_read(&d, path, text, len, err);
    if (!rc && mjcf_json(&d, &json)) rc = -1, sid_error_set(err, SID_ERR_NOMEM, "out of memory");
    if (!rc) rc = robot_json_parse(path, json, strlen(json), &o, NULL, err);
    sid_io_warn_mute(q);
    x.d = &d, x.f = fitted, x.o = &o;
    if (!rc) rc = same_structure(&x, err);
    if (!rc && !(x.e = xml_edits_new())) rc = -1, sid_error_set(err, SID_ERR_NOMEM, "out of memory");
    if (!rc) {
        for (int i = 0; i < fitted->nlink; i++) {
            const sid_link_desc *lf = &fitted->link[i], *lo = &o.link[desc_link(&o, lf->name)];
            int b = body_of(&d, lf->name);
            if (lf->has_mass != lo->has_mass) {
                char param[2 * SID_MAX_NAME + 16];
                snprintf(param, sizeof param, "links.%s.mass", lf->name);
                if (lf->has_mass) unrepresentable(&x, param, lf->mass, "(a massless link in the file)");
                continue;
            }
            if (!lf->has_mass) continue;
            if (b < 0) {   /* an intermediate link of a multi-joint body is massless in the file */
                char param[2 * SID_MAX_NAME + 16];
                snprintf(param, sizeof param, "links.%s.mass", lf->name);
                unrepresentable(&x, param, lf->mass, NULL);
                continue;
            }
            link_inertial(&x, b, lf, lo);
        }
        for (int i = 0; i < fitted->njoint; i++) {
            const sid_joint_desc *jf = &fitted->joint[i], *jo = &o.joint[desc_joint(&o, jf->name)];
            if (jf->type == SID_JOINT_FREE) continue;
            int j = jnt_of(&d, jf->name), b = body_of(&d, fitted->link[jf->child].name);
            if (j >= 0 && d.jnt[j].body != b) b = -1;   /* a joint of a multi-joint body that moves a link of its own */
            if (j < 0 && jf->type == SID_JOINT_FIXED) j = -1;
            if (b < 0) {
                for (int k = 0; k < 3; k++) {
                    char param[2 * SID_MAX_NAME + 32];
                    snprintf(param, sizeof param, "joints.%s.origin.xyz[%d]", jf->name, k);
                    if (jf->xyz[k] != jo->xyz[k]) unrepresentable(&x, param, jf->xyz[k], "(a joint of a multi-joint body)");
                    snprintf(param, sizeof param, "joints.%s.origin.rpy[%d]", jf->name, k);
                    if (jf->rpy[k] != jo->rpy[k]) unrepresentable(&x, param, jf->rpy[k], "(a joint of a multi-joint body)");
                }
            } else {
                body_origin(&x, b, jf, jo);
            }
            const int servo = jf->motor == SID_MOTOR_POSITION || jf->motor == SID_MOTOR_VELOCITY;
            if (servo && j >= 0 && d.jnt[j].servo == (int)jf->motor && jo->motor == jf->motor) {
                servo_gains(&x, &d.jnt[j], jf, jo);
            } else if (servo) {   /* a servo the file has not: its gains have nowhere to go */
                static const sid_param_kind kinds[] = { SID_P_KP, SID_P_KD, SID_P_SERVO_LIMIT };
                for (int k = 0; k < 3; k++) {
                    const sid_param_row *row = sid_param_row_of(kinds[k], 0);
                    if (!sid_param_exists(row, fitted, i)) continue;
                    char param[2 * SID_MAX_NAME + 32];
                    sid_param_name(row, jf->name, 0, param, sizeof param);
                    unrepresentable(&x, param, *sid_param_value(row, fitted, i), "(no such servo on this joint in the file)");
                }
            }
            joint_range(&x, j >= 0 ? &d.jnt[j] : NULL, jf, jo);
            /* a motor the file has not: its gear has no element to go to */
            if (jf->motor != SID_MOTOR_NONE && (j < 0 || !d.jnt[j].motor) && jf->gear != jo->gear) {
                char param[2 * SID_MAX_NAME + 32];
                snprintf(param, sizeof param, "joints.%s.motor.gear", jf->name);
                unrepresentable(&x, param, jf->gear, "(no <motor> on this joint in the file)");
            }
        }
        joint_kind(&x, SID_P_ARMATURE, "armature");
        joint_kind(&x, SID_P_VISCOUS, "damping");
        joint_kind(&x, SID_P_COULOMB, "frictionloss");
        joint_kind(&x, SID_P_GEAR, "gear");
        others(&x);
        if (x.oom) rc = -1, sid_error_set(err, SID_ERR_NOMEM, "out of memory");
    }
    if (!rc && apply(&x, out, outlen)) rc = -1, sid_error_set(err, SID_ERR_NOMEM, "%s: the edits could not be applied", path);
    if (!rc && x.nunrep) {
        sid_io_warn("not representable in MJCF (kept in FITTED.json only):");
        for (int i = 0; i < x.nunrep; i++) sid_io_warn("  %s", x.unrep[i]);
    }
    if (!rc && x.nunwritten) {
        sid_io_warn("not written (defined in an included file, which one output cannot change):");
        for (int i = 0; i < x.nunwritten; i++) sid_io_warn("  %s", x.unwritten[i]);
    }
    for (int i = 0; i < x.nunrep; i++) free(x.unrep[i]);
    for (int i = 0; i < x.nunwritten; i++) free(x.unwritten[i]);
    free(x.p);
    xml_edits_free(x.e);
    free(json);
    robot_desc_free(&o);
    mjcf_doc_free(&d);
    if (rc) {
        free(*out);
        *out = NULL, *outlen = 0;
    }
    return rc;
}
