/* mjcf_json.c — a read MJCF document printed as robot.json.
 *
 * One link per body (the world is the root link "world"); a body without joints hangs on a
 * fixed joint "<body>_fixed"; a body with n joints gets n - 1 massless links "<body>_<joint>"
 * before its own, one per joint but the last. sysid's joint k of a body rotates about the
 * origin of its child link, which is the body frame moved to that joint's anchor p_k:
 *   first joint:  origin.xyz = pos - off_parent + R p_0, rpy of R (the body's orientation)
 *   joint k > 0:  origin.xyz = p_k - p_{k-1}, rpy 0
 * (MuJoCo applies a body's joints in order, each about its anchor in the frame the previous
 * ones moved). COM and contact spheres shift by -off. Keys in robot.json's order, numbers in
 * numfmt's shortest exact form.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mjcf_internal.h"
#include "numfmt.h"

typedef struct {
    char *s;
    size_t len, cap;
    int oom;
} buf;

static void put(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (b->oom || n < 0) return;
    if (b->len + (size_t)n + 1 > b->cap) {
        size_t cap = 2 * (b->len + (size_t)n + 1) + 256;
        char *p = realloc(b->s, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->s = p, b->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

static void num(buf *b, double x)
{
    char t[NUMFMT_LEN];
    numfmt(t, x == 0 ? 0.0 : x);   /* no "-0" */
    put(b, "%s", t);
}

static void vec(buf *b, const double *v, int n)
{
    put(b, "[");
    for (int i = 0; i < n; i++) {
        if (i) put(b, ", ");
        num(b, v[i]);
    }
    put(b, "]");
}

static void link(buf *b, const char *name, const mjcf_body *B, const double *off, int *first)
{
    put(b, "%s\n    { \"name\": \"%s\"", *first ? "" : ",", name);
    *first = 0;
    if (B && B->inertia_from != MJ_INERTIA_NONE && B->mass > 0) {
        double com[3] = { B->com[0] - off[0], B->com[1] - off[1], B->com[2] - off[2] };
        static const char *const k[6] = { "ixx", "iyy", "izz", "ixy", "ixz", "iyz" };
        put(b, ", \"mass\": ");
        num(b, B->mass);
        put(b, ", \"com\": ");
        vec(b, com, 3);
        put(b, ",\n      \"inertia\": {");
        for (int i = 0; i < 6; i++) {
            put(b, "%s \"%s\": ", i ? "," : "", k[i]);
            num(b, B->I[i]);
        }
        put(b, " }");
    }
    put(b, " }");
}

static void joint_head(buf *b, const char *name, const char *type, const char *parent, const char *child, int *first)
{
    put(b, "%s\n    { \"name\": \"%s\", \"type\": \"%s\", \"parent\": \"%s\", \"child\": \"%s\"", *first ? "" : ",",
        name, type, parent, child);
    *first = 0;
}

static void origin(buf *b, const double xyz[3], const double rpy[3])
{
    put(b, ",\n      \"origin\": { \"xyz\": ");
    vec(b, xyz, 3);
    put(b, ", \"rpy\": ");
    vec(b, rpy, 3);
    put(b, " }");
}

static void joint_fields(buf *b, const mjcf_joint *j)
{
    put(b, ", \"axis\": ");
    vec(b, j->axis, 3);
    if (j->armature != 0) {
        put(b, ",\n      \"armature\": ");
        num(b, j->armature);
    }
    if (j->damping != 0 || j->frictionloss != 0) {
        put(b, ",\n      \"friction\": {");
        if (j->damping != 0) put(b, " \"viscous\": "), num(b, j->damping);
        if (j->frictionloss != 0) put(b, "%s \"coulomb\": ", j->damping != 0 ? "," : ""), num(b, j->frictionloss);
        put(b, " }");
    }
    if (j->motor) {
        put(b, ",\n      \"motor\": { \"input\": \"torque\", \"gear\": ");
        num(b, j->gear);
        put(b, " }");
    }
    if (j->limited) {
        put(b, ",\n      \"limit\": { \"lower\": ");
        num(b, j->range[0]);
        put(b, ", \"upper\": ");
        num(b, j->range[1]);
        put(b, " }");
    }
    put(b, " }");
}

/* The name of the link that joint k of body B moves: the body's own for its last joint. */
static void link_name(char *out, const mjcf_doc *d, const mjcf_body *B, int k)
{
    if (k == B->njnt - 1 || B->njnt == 0)
        snprintf(out, 2 * SID_MAX_NAME, "%s", B->name);
    else
        snprintf(out, 2 * SID_MAX_NAME, "%s_%s", B->name, d->jnt[B->jnt0 + k].name);
}

int mjcf_json(const mjcf_doc *d, char **json)
{
    buf b = { 0 };
    static const double zero[3] = { 0, 0, 0 };
    put(&b, "{\n  \"name\": \"%s\",\n  \"gravity\": ", d->model);
    vec(&b, d->gravity, 3);
    put(&b, ",\n  \"links\": [");
    int first = 1;
    char name[2 * SID_MAX_NAME];
    for (int i = 0; i < d->nbody; i++) {
        const mjcf_body *B = &d->body[i];
        for (int k = 0; k + 1 < B->njnt; k++) {
            link_name(name, d, B, k);
            link(&b, name, NULL, zero, &first);
        }
        link(&b, B->name, i ? B : NULL, B->off, &first);
    }
    put(&b, "\n  ],\n  \"joints\": [");
    first = 1;
    for (int i = 1; i < d->nbody; i++) {
        const mjcf_body *B = &d->body[i], *P = &d->body[B->parent];
        char parent[2 * SID_MAX_NAME];
        double R[9], xyz[3], rpy[3];
        mjcf_quat_mat(R, B->quat);
        mjcf_mat_rpy(rpy, R);
        if (B->njnt == 0) {
            snprintf(name, sizeof name, "%s_fixed", B->name);
            joint_head(&b, name, "fixed", P->name, B->name, &first);
            for (int c = 0; c < 3; c++) xyz[c] = B->pos[c] - P->off[c];
            origin(&b, xyz, rpy);
            put(&b, " }");
            continue;
        }
        for (int k = 0; k < B->njnt; k++) {
            const mjcf_joint *j = &d->jnt[B->jnt0 + k];
            char child[2 * SID_MAX_NAME];
            link_name(child, d, B, k);
            if (k == 0) snprintf(parent, sizeof parent, "%s", P->name);
            else link_name(parent, d, B, k - 1);
            if (j->type == MJ_FREE) {
                joint_head(&b, j->name, "free", parent, child, &first);
                put(&b, " }");
                continue;
            }
            joint_head(&b, j->name, j->type == MJ_HINGE ? "revolute" : "prismatic", parent, child, &first);
            if (k == 0) {
                for (int c = 0; c < 3; c++)
                    xyz[c] = B->pos[c] - P->off[c] + R[3 * c] * j->pos[0] + R[3 * c + 1] * j->pos[1] + R[3 * c + 2] * j->pos[2];
                origin(&b, xyz, rpy);
            } else {
                const double *p0 = d->jnt[B->jnt0 + k - 1].pos;
                for (int c = 0; c < 3; c++) xyz[c] = j->pos[c] - p0[c];
                origin(&b, xyz, zero);
            }
            joint_fields(&b, j);
        }
    }
    put(&b, "\n  ]");
    if (d->has_ground) {
        put(&b, ",\n  \"contact\": {\n    \"ground\": { \"height\": ");
        num(&b, d->ground_height);
        put(&b, ", \"friction\": ");
        num(&b, d->ground_friction);
        put(&b, " }");
        if (d->nsphere) {
            put(&b, ",\n    \"spheres\": [");
            for (int s = 0; s < d->nsphere; s++) {
                const mjcf_sphere *S = &d->sphere[s];
                const mjcf_body *B = &d->body[S->body];
                double xyz[3] = { S->xyz[0] - B->off[0], S->xyz[1] - B->off[1], S->xyz[2] - B->off[2] };
                put(&b, "%s\n      { \"name\": \"%s\", \"link\": \"%s\", \"xyz\": ", s ? "," : "", S->name, B->name);
                vec(&b, xyz, 3);
                put(&b, ", \"radius\": ");
                num(&b, S->radius);
                put(&b, " }");
            }
            put(&b, "\n    ]");
        }
        put(&b, "\n  }");
    }
    put(&b, "\n}\n");
    if (b.oom) {
        free(b.s);
        return -1;
    }
    *json = b.s;
    return 0;
}
