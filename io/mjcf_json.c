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
#include "names.h"
#include "numfmt.h"
#include "textbuf.h"

static void num(textbuf *b, double x)
{
    tb_exact(b, x == 0 ? 0.0 : x);   /* no "-0" */
}

static void vec(textbuf *b, const double *v, int n)
{
    tb_printf(b, "[");
    for (int i = 0; i < n; i++) {
        if (i) tb_printf(b, ", ");
        num(b, v[i]);
    }
    tb_printf(b, "]");
}

static void link(textbuf *b, const char *name, const mjcf_body *B, const double *off, int *first)
{
    tb_printf(b, "%s\n    { \"name\": \"%s\"", *first ? "" : ",", name);
    *first = 0;
    if (B && B->inertia_from != MJ_INERTIA_NONE && B->mass > 0) {
        double com[3] = { B->com[0] - off[0], B->com[1] - off[1], B->com[2] - off[2] };
        static const char *const k[6] = { "ixx", "iyy", "izz", "ixy", "ixz", "iyz" };
        tb_printf(b, ", \"%s\": ", param_key(SID_P_MASS));
        num(b, B->mass);
        tb_printf(b, ", \"%s\": ", param_key(SID_P_COM));
        vec(b, com, 3);
        tb_printf(b, ",\n      \"inertia\": {");
        for (int i = 0; i < 6; i++) {
            tb_printf(b, "%s \"%s\": ", i ? "," : "", k[i]);
            num(b, B->I[i]);
        }
        tb_printf(b, " }");
    }
    tb_printf(b, " }");
}

static void joint_head(textbuf *b, const char *name, const char *type, const char *parent, const char *child, int *first)
{
    tb_printf(b, "%s\n    { \"name\": \"%s\", \"type\": \"%s\", \"parent\": \"%s\", \"child\": \"%s\"", *first ? "" : ",",
        name, type, parent, child);
    *first = 0;
}

static void origin(textbuf *b, const double xyz[3], const double rpy[3])
{
    tb_printf(b, ",\n      \"origin\": { \"xyz\": ");
    vec(b, xyz, 3);
    tb_printf(b, ", \"rpy\": ");
    vec(b, rpy, 3);
    tb_printf(b, " }");
}

static void joint_fields(textbuf *b, const mjcf_joint *j)
{
    tb_printf(b, ", \"axis\": ");
    vec(b, j->axis, 3);
    if (j->armature != 0) {
        tb_printf(b, ",\n      \"%s\": ", param_key(SID_P_ARMATURE));
        num(b, j->armature);
    }
    if (j->damping != 0 || j->frictionloss != 0) {
        tb_printf(b, ",\n      \"friction\": {");
        if (j->damping != 0) tb_printf(b, " \"%s\": ", param_key(SID_P_VISCOUS)), num(b, j->damping);
        if (j->frictionloss != 0)
            tb_printf(b, "%s \"%s\": ", j->damping != 0 ? "," : "", param_key(SID_P_COULOMB)), num(b, j->frictionloss);
        if (j->frictionloss > 0) tb_printf(b, ", \"model\": \"dry\"");   /* MuJoCo's frictionloss, as it is */
        tb_printf(b, " }");
    }
    if (j->motor) {
        tb_printf(b, ",\n      \"motor\": { \"input\": \"%s\", \"%s\": ",
                  j->servo == SID_MOTOR_POSITION ? "position" : j->servo == SID_MOTOR_VELOCITY ? "velocity" : "torque",
                  param_key(SID_P_GEAR));
        num(b, j->gear);
        if (j->servo == SID_MOTOR_POSITION) tb_printf(b, ", \"%s\": ", param_key(SID_P_KP)), num(b, j->kp);
        if (j->servo == SID_MOTOR_VELOCITY || (j->servo && j->kd != 0))
            tb_printf(b, ", \"%s\": ", param_key(SID_P_KD)), num(b, j->kd);
        if (j->servo && j->has_limit) tb_printf(b, ", \"%s\": ", param_key(SID_P_SERVO_LIMIT)), num(b, j->limit);
        tb_printf(b, " }");
    }
    if (j->limited) {
        tb_printf(b, ",\n      \"limit\": { \"%s\": ", param_key(SID_P_LIMIT_LOWER));
        num(b, j->range[0]);
        tb_printf(b, ", \"%s\": ", param_key(SID_P_LIMIT_UPPER));
        num(b, j->range[1]);
        if (j->effort > 0) tb_printf(b, ", \"effort\": "), num(b, j->effort);
        tb_printf(b, ", \"model\": \"constraint\" }");   /* MuJoCo's limit, as it is */
    } else if (j->effort > 0) {
        tb_printf(b, ",\n      \"limit\": { \"effort\": ");
        num(b, j->effort);
        tb_printf(b, " }");
    }
    tb_printf(b, " }");
}

/* One of a key's vectors as {"joint": value} in robot.json's coordinates: a hinge's or slide's
 * qpos less its ref (sysid's q = 0 is MuJoCo's ref), a free joint's 7 (or 6) as they are, a
 * motor's ctrl (the command u); what: 0 qpos, 1 qvel, 2 ctrl. */
static void key_vector(textbuf *b, const mjcf_doc *d, const double *x, int what)
{
    int first = 1;
    for (int j = 0, iq = 0, iv = 0; j < d->njnt; j++) {
        const mjcf_joint *J = &d->jnt[j];
        const int free = J->type == MJ_FREE, nq = free ? 7 : 1, nv = free ? 6 : 1;
        const double *at = what == 0 ? x + iq : what == 1 ? x + iv : x + J->act_ctrl;
        iq += nq, iv += nv;
        if (what == 2 && (!J->motor || free)) continue;
        tb_printf(b, "%s \"%s\": ", first ? "" : ",", J->name);
        first = 0;
        if (free && what != 2) vec(b, at, what == 0 ? 7 : 6);
        else num(b, what == 0 ? at[0] - J->ref : at[0]);
    }
}

/* "keyframes": a <key>'s qpos, qvel and ctrl by joint name (robot_json's reader checks them). */
static void keyframes(textbuf *b, const mjcf_doc *d)
{
    if (!d->nkey) return;
    static const char *const keys[3] = { "q", "qd", "u" };
    tb_printf(b, ",\n  \"keyframes\": [");
    for (int k = 0; k < d->nkey; k++) {
        const mjcf_key *K = &d->key[k];
        const double *x[3] = { K->qpos, K->qvel, K->ctrl };
        tb_printf(b, "%s\n    { \"name\": \"%s\"", k ? "," : "", K->name);
        for (int w = 0; w < 3; w++) {
            if (!x[w]) continue;
            tb_printf(b, ",\n      \"%s\": {", keys[w]);
            key_vector(b, d, x[w], w);
            tb_printf(b, " }");
        }
        tb_printf(b, " }");
    }
    tb_printf(b, "\n  ]");
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
    textbuf b = { 0 };
    static const double zero[3] = { 0, 0, 0 };
    tb_printf(&b, "{\n  \"name\": \"%s\",\n  \"gravity\": ", d->model);
    vec(&b, d->gravity, 3);
    /* the step MuJoCo's model is defined at: its dry friction and soft constraints depend on it */
    tb_printf(&b, ",\n  \"timestep\": ");
    num(&b, d->timestep);
    if (d->integrator >= 0) tb_printf(&b, ",\n  \"integrator\": \"%s\"", sid_integrator_name(d->integrator));
    tb_printf(&b, ",\n  \"links\": [");
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
    tb_printf(&b, "\n  ],\n  \"joints\": [");
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
            tb_printf(&b, " }");
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
                tb_printf(&b, " }");
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
    tb_printf(&b, "\n  ]");
    if (d->has_ground) {
        tb_printf(&b, ",\n  \"contact\": {\n    \"ground\": { \"height\": ");
        num(&b, d->ground_height);
        tb_printf(&b, ", \"friction\": ");
        num(&b, d->ground_friction);
        tb_printf(&b, " }");
        if (d->nsphere) {
            tb_printf(&b, ",\n    \"spheres\": [");
            for (int s = 0; s < d->nsphere; s++) {
                const mjcf_sphere *S = &d->sphere[s];
                const mjcf_body *B = &d->body[S->body];
                double xyz[3] = { S->xyz[0] - B->off[0], S->xyz[1] - B->off[1], S->xyz[2] - B->off[2] };
                tb_printf(&b, "%s\n      { \"name\": \"%s\", \"link\": \"%s\", \"xyz\": ", s ? "," : "", S->name, B->name);
                vec(&b, xyz, 3);
                tb_printf(&b, ", \"radius\": ");
                num(&b, S->radius);
                tb_printf(&b, " }");
            }
            tb_printf(&b, "\n    ]");
        }
        tb_printf(&b, "\n  }");
    }
    keyframes(&b, d);
    tb_printf(&b, "\n}\n");
    if (b.bad) {
        free(b.s);
        return -1;
    }
    *json = b.s;
    return 0;
}
