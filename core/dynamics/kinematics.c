/* kinematics.c — where every body is: its transform from the parent at q (and, for models with
 * contact, its world pose), the quantities that depend on theta alone (origin rotations and
 * their derivatives, body inertias, cached per theta), and the adjoint of the transforms and
 * world poses back to q and theta.
 * A body's transform X = (E, r) maps parent coordinates to body coordinates: E = (RT Q)^T with
 * RT the origin rotation R(rpy) and Q the joint rotation; a free joint's E = R(quat)^T. */
#include "kinematics.h"

#include <string.h>

static sid_inertia body_inertia(const sid_body *bd, const double *theta)
{
    sid_inertia I = {0, {0, 0, 0}, {{{0}}}};
    if (bd->p_inertial < 0) return I;
    const double *p = theta + bd->p_inertial;
    const double *J = p + P_INERTIA;
    const sid_m3 Ic = {{{J[0], J[3], J[4]}, {J[3], J[1], J[5]}, {J[4], J[5], J[2]}}};
    I.m = p[P_MASS];
    I.c = sid_v3_load(p + P_COM);
    I.Ic = Ic;
    return I;
}

/* Rotation (body -> world) of the unit quaternion n = (w, x, y, z), and dR/dn_k if dR. */
static sid_m3 quat_matrix(const double *n, sid_m3 *dR)
{
    const double w = n[0], x = n[1], y = n[2], z = n[3];
    const sid_m3 R = {{{1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)},
                       {2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)},
                       {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)}}};
    if (dR) {
        const sid_m3 dw = {{{0, -2 * z, 2 * y}, {2 * z, 0, -2 * x}, {-2 * y, 2 * x, 0}}};
        const sid_m3 dx = {{{0, 2 * y, 2 * z}, {2 * y, -4 * x, -2 * w}, {2 * z, 2 * w, -4 * x}}};
        const sid_m3 dy = {{{-4 * y, 2 * x, 2 * w}, {2 * x, 0, 2 * z}, {-2 * w, 2 * z, -4 * y}}};
        const sid_m3 dz = {{{-4 * z, -2 * w, 2 * x}, {2 * w, -4 * z, 2 * y}, {2 * x, 2 * y, 0}}};
        dR[0] = dw, dR[1] = dx, dR[2] = dy, dR[3] = dz;
    }
    return R;
}

/* The unit quaternion of a free joint's q and the norm it was divided by. */
static double quat_normalize(const double *q, double *n)
{
    const double r = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    for (int k = 0; k < 4; k++) n[k] = q[k] / r;
    return r;
}

void sid_workspace_bind(const sid_model *m, const double *theta, sid_workspace *ws)
{
    const size_t bytes = sizeof(double) * (size_t)m->nparam;
    if (ws->cache_valid && !memcmp(ws->theta_seen, theta, bytes)) return;
    for (int b = 1; b < m->nbody; b++) {
        const sid_body *bd = &m->body[b];
        if (bd->p_origin >= 0) {
            ws->RT[b] = sid_rpy_matrix(theta + bd->p_origin + P_RPY, ws->dRT + 3 * b);
        } else {   /* a free joint: no origin */
            ws->RT[b] = sid_m3_identity();
            ws->dRT[3 * b] = ws->dRT[3 * b + 1] = ws->dRT[3 * b + 2] = sid_m3_zero();
        }
        ws->I[b] = body_inertia(bd, theta);
    }
    memcpy(ws->theta_seen, theta, bytes);
    ws->cache_valid = 1;
}

void sid_kinematics(const sid_model *m, const double *theta, sid_workspace *ws, const double *q)
{
    sid_workspace_bind(m, theta, ws);
    ws->jv_valid = 0;
    for (int b = 1; b < m->nbody; b++) {
        const sid_body *bd = &m->body[b];
        if (bd->type == SID_JOINT_FREE) {
            double n[4];
            quat_normalize(q + bd->qadr + 3, n);
            const sid_m3 R = quat_matrix(n, NULL);
            ws->Q[b] = R;
            ws->X[b].E = sid_m3_transpose(&R);
            ws->X[b].r = sid_v3_load(q + bd->qadr);
            continue;
        }
        const double *o = theta + bd->p_origin;
        const sid_m3 RT = ws->RT[b];
        sid_v3 r = sid_v3_load(o + P_XYZ);
        sid_m3 Q = sid_m3_identity();
        if (bd->type == SID_JOINT_REVOLUTE) Q = sid_m3_axis_angle(sid_v3_load(bd->axis), q[bd->qadr]);
        if (bd->type == SID_JOINT_PRISMATIC)
            r = sid_v3_add(r, sid_m3_mul_v3(&RT, sid_v3_scale(q[bd->qadr], sid_v3_load(bd->axis))));
        /* child -> parent rotation is RT Q, so E = (RT Q)^T */
        const sid_m3 RQ = sid_m3_mul(&RT, &Q);
        ws->X[b].E = sid_m3_transpose(&RQ);
        ws->X[b].r = r;
        ws->Q[b] = Q;
    }
    if (m->nsphere == 0 && !ws->push) return;
    /* world poses: R_b = R_p E_b^T, p_b = p_p + R_p r_b */
    ws->Rw[0] = sid_m3_identity();
    ws->pw[0] = sid_v3_make(0, 0, 0);
    for (int b = 1; b < m->nbody; b++) {
        const int p = m->body[b].parent;
        const sid_m3 Et = sid_m3_transpose(&ws->X[b].E);
        ws->Rw[b] = sid_m3_mul(&ws->Rw[p], &Et);
        ws->pw[b] = sid_v3_add(ws->pw[p], sid_m3_mul_v3(&ws->Rw[p], ws->X[b].r));
    }
}

/* R_b = R_p E_b^T, p_b = p_p + R_p r_b, reversed leaves to root. */
void sid_world_pose_vjp(const sid_model *m, sid_workspace *ws)
{
    for (int b = m->nbody - 1; b >= 1; b--) {
        const int p = m->body[b].parent;
        const sid_m3 *Rp = &ws->Rw[p], *Rb = &ws->Rwbar[b];
        const sid_m3 RbT = sid_m3_transpose(Rb), G = sid_m3_mul(&RbT, Rp), RE = sid_m3_mul(Rb, &ws->X[b].E);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) ws->Ebar[b].m[i][j] += G.m[i][j], ws->Rwbar[p].m[i][j] += RE.m[i][j];
        sid_m3_acc_outer(&ws->Rwbar[p], ws->pwbar[b], ws->X[b].r);
        sid_v3_acc(&ws->pwbar[p], ws->pwbar[b]);
        sid_v3_acc(&ws->rbar[b], sid_m3_tmul_v3(Rp, ws->pwbar[b]));
    }
}

/* Adjoint of a free joint's transform E = R(n)^T, r = p, n = quat / |quat|, from (Ebar, rbar). */
static void free_xform_vjp(const sid_body *bd, const double *q, sid_m3 Ebar, sid_v3 rbar, double *qbar)
{
    if (!qbar) return;
    double n[4];
    const double r = quat_normalize(q + bd->qadr + 3, n);
    sid_m3 dR[4];
    quat_matrix(n, dR);
    double nb[4], d = 0;
    for (int k = 0; k < 4; k++) {
        /* <Rbar, dR_k> with Rbar = Ebar^T */
        double g = 0;
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) g += Ebar.m[j][i] * dR[k].m[i][j];
        nb[k] = g;
        d += n[k] * g;
    }
    double *qb = qbar + bd->qadr;
    qb[0] += rbar.x;
    qb[1] += rbar.y;
    qb[2] += rbar.z;
    for (int k = 0; k < 4; k++) qb[3 + k] += (nb[k] - n[k] * d) / r;
}

/* Adjoint of the body transform X_b(q, xyz, rpy) from (Ebar, rbar):
 * E = Q^T RT^T with dQ/dq = [axis]x Q;  r = xyz (+ RT axis q for a prismatic joint).
 * With G = Q Ebar:  dL/dq = -<G RT, [axis]x>,  dL/drpy_k = <G, dR_k^T>. */
static void xform_vjp(const sid_model *m, const sid_workspace *ws, int b, const double *q,
                      sid_m3 Ebar, sid_v3 rbar, double *qbar, double *thetabar)
{
    const sid_body *bd = &m->body[b];
    const sid_m3 *dR = ws->dRT + 3 * b;
    const sid_v3 ax = sid_v3_load(bd->axis);
    const sid_m3 G = sid_m3_mul(&ws->Q[b], &Ebar);
    if (qbar && bd->type == SID_JOINT_REVOLUTE) {
        /* <G RT, K> over the six non-zero entries of K = [axis]x */
        const sid_m3 *R = &ws->RT[b];
#define GR(i, j) (G.m[i][0] * R->m[0][j] + G.m[i][1] * R->m[1][j] + G.m[i][2] * R->m[2][j])
        qbar[bd->qadr] -= ax.x * (GR(2, 1) - GR(1, 2)) + ax.y * (GR(0, 2) - GR(2, 0)) + ax.z * (GR(1, 0) - GR(0, 1));
#undef GR
    }
    if (qbar && bd->type == SID_JOINT_PRISMATIC)
        qbar[bd->qadr] += sid_v3_dot(rbar, sid_m3_mul_v3(&ws->RT[b], ax));
    if (!thetabar) return;
    double *tb = thetabar + bd->p_origin;
    tb[P_XYZ + 0] += rbar.x;
    tb[P_XYZ + 1] += rbar.y;
    tb[P_XYZ + 2] += rbar.z;
    for (int k = 0; k < 3; k++) {
        double g = 0;
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) g += G.m[i][j] * dR[k].m[j][i];
        tb[P_RPY + k] += g;
        if (bd->type == SID_JOINT_PRISMATIC) tb[P_RPY + k] += q[bd->qadr] * sid_v3_dot(rbar, sid_m3_mul_v3(&dR[k], ax));
    }
}

void sid_kinematics_vjp(const sid_model *m, const sid_workspace *ws, const double *q, double *qbar, double *thetabar)
{
    for (int b = m->nbody - 1; b >= 1; b--) {
        const sid_body *bd = &m->body[b];
        if (bd->type == SID_JOINT_FREE) free_xform_vjp(bd, q, ws->Ebar[b], ws->rbar[b], qbar);
        else xform_vjp(m, ws, b, q, ws->Ebar[b], ws->rbar[b], qbar, thetabar);
    }
}
