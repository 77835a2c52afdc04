/* free_joint.c — the free joint's position update q1 = q (+) h v, its adjoint and tangent, and
 * the tangent of the free joint's transform (E = R(n)^T, r = p).
 * A free joint's q is (p, quat) with quat = (w, x, y, z); v is (world linear velocity, body
 * angular velocity) as in MuJoCo. The position moves by h v_lin; the orientation turns by
 *   quat1 = n(quat) * exp(h w / 2),   exp(u) = (cos|u|, sin|u| u / |u|),   n(q) = q / |q|,
 * normalised first so that a start state whose quaternion drifted off the unit sphere (it is an
 * unknown of the fit) still gives a rotation. */
#include "free_joint.h"
#include "kinematics.h"

#include <math.h>
#include <string.h>

/* sin(t)/t and its derivative divided by t, d/dt(sin t / t) / t, safe at t = 0. */
static void sinc_terms(double t, double *s, double *ds_over_t)
{
    if (t < 1e-4) {
        const double t2 = t * t;
        *s = 1 - t2 / 6 + t2 * t2 / 120;
        *ds_over_t = -1.0 / 3 + t2 / 30;
    } else {
        *s = sin(t) / t;
        *ds_over_t = (cos(t) - *s) / (t * t);
    }
}

/* Hamilton product c = a * b. */
static void quat_mul(const double *a, const double *b, double *c)
{
    const double w = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
    const double x = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
    const double y = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
    const double z = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
    c[0] = w, c[1] = x, c[2] = y, c[3] = z;
}

/* Adjoint of c = a * b: abar += dc/da^T cbar, bbar += dc/db^T cbar. */
static void quat_mul_vjp(const double *a, const double *b, const double *cb, double *abar, double *bbar)
{
    /* c = L(a) b = R(b) a with L, R the left and right multiplication matrices */
    const double L[4][4] = {{a[0], -a[1], -a[2], -a[3]}, {a[1], a[0], -a[3], a[2]},
                            {a[2], a[3], a[0], -a[1]}, {a[3], -a[2], a[1], a[0]}};
    const double R[4][4] = {{b[0], -b[1], -b[2], -b[3]}, {b[1], b[0], b[3], -b[2]},
                            {b[2], -b[3], b[0], b[1]}, {b[3], b[2], -b[1], b[0]}};
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            if (abar) abar[j] += R[i][j] * cb[i];
            if (bbar) bbar[j] += L[i][j] * cb[i];
        }
}

/* e = exp(h w / 2) as a unit quaternion. */
static void quat_exp(const double *w, double h, double *e)
{
    const double u[3] = {0.5 * h * w[0], 0.5 * h * w[1], 0.5 * h * w[2]};
    const double t = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
    double s, dummy;
    sinc_terms(t, &s, &dummy);
    e[0] = cos(t);
    e[1] = s * u[0], e[2] = s * u[1], e[3] = s * u[2];
}

/* wbar += (de/dw)^T ebar for e = quat_exp(w, h). */
static void quat_exp_vjp(const double *w, double h, const double *eb, double *wbar)
{
    const double u[3] = {0.5 * h * w[0], 0.5 * h * w[1], 0.5 * h * w[2]};
    const double t = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
    double s, dst;
    sinc_terms(t, &s, &dst);
    /* e0 = cos t: de0/du = -sin t u / t = -s u;  e_k = s u_k: de_k/du_j = s d_kj + dst u_k u_j */
    const double ub = eb[1] * u[0] + eb[2] * u[1] + eb[3] * u[2];
    for (int j = 0; j < 3; j++) {
        const double g = -eb[0] * s * u[j] + s * eb[1 + j] + dst * ub * u[j];
        wbar[j] += 0.5 * h * g;
    }
}

void sid_integrate_q(const sid_model *m, const double *q, const double *v, double h, double *q1)
{
    for (int b = 1; b < m->nbody; b++) {
        const sid_body *bd = &m->body[b];
        if (bd->qadr < 0) continue;
        const int iq = bd->qadr, iv = bd->vadr;
        if (bd->type != SID_JOINT_FREE) {
            q1[iq] = q[iq] + h * v[iv];
            if (bd->bl_q >= 0) q1[bd->bl_q] = q[bd->bl_q] + h * v[bd->bl_v];   /* backlash's motor side */
            continue;
        }
        for (int k = 0; k < 3; k++) q1[iq + k] = q[iq + k] + h * v[iv + k];
        const double *qa = q + iq + 3;
        const double nrm = sqrt(qa[0] * qa[0] + qa[1] * qa[1] + qa[2] * qa[2] + qa[3] * qa[3]);
        const double n[4] = {qa[0] / nrm, qa[1] / nrm, qa[2] / nrm, qa[3] / nrm};
        double e[4], r[4];
        quat_exp(v + iv + 3, h, e);
        quat_mul(n, e, r);
        memcpy(q1 + iq + 3, r, sizeof r);
    }
}

void sid_integrate_q_vjp(const sid_model *m, const double *q, const double *v, double h, const double *q1bar,
                         double *qbar, double *vbar)
{
    for (int b = 1; b < m->nbody; b++) {
        const sid_body *bd = &m->body[b];
        if (bd->qadr < 0) continue;
        const int iq = bd->qadr, iv = bd->vadr;
        if (bd->type != SID_JOINT_FREE) {
            qbar[iq] += q1bar[iq];
            vbar[iv] += h * q1bar[iq];
            if (bd->bl_q >= 0) qbar[bd->bl_q] += q1bar[bd->bl_q], vbar[bd->bl_v] += h * q1bar[bd->bl_q];
            continue;
        }
        for (int k = 0; k < 3; k++) {
            qbar[iq + k] += q1bar[iq + k];
            vbar[iv + k] += h * q1bar[iq + k];
        }
        const double *qa = q + iq + 3;
        const double nrm = sqrt(qa[0] * qa[0] + qa[1] * qa[1] + qa[2] * qa[2] + qa[3] * qa[3]);
        const double n[4] = {qa[0] / nrm, qa[1] / nrm, qa[2] / nrm, qa[3] / nrm};
        double e[4], nb[4] = {0, 0, 0, 0}, eb[4] = {0, 0, 0, 0};
        quat_exp(v + iv + 3, h, e);
        quat_mul_vjp(n, e, q1bar + iq + 3, nb, eb);
        quat_exp_vjp(v + iv + 3, h, eb, vbar + iv + 3);
        /* n = qa / |qa|: qbar += (nb - n (n . nb)) / |qa| */
        const double d = n[0] * nb[0] + n[1] * nb[1] + n[2] * nb[2] + n[3] * nb[3];
        for (int k = 0; k < 4; k++) qbar[iq + 3 + k] += (nb[k] - n[k] * d) / nrm;
    }
}

/* edot = (de/dw) wdot for e = quat_exp(w, h). */
static void quat_exp_jvp(const double *w, double h, const double *wd, double *ed)
{
    const double u[3] = {0.5 * h * w[0], 0.5 * h * w[1], 0.5 * h * w[2]};
    const double ud[3] = {0.5 * h * wd[0], 0.5 * h * wd[1], 0.5 * h * wd[2]};
    const double t = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
    double s, dst;
    sinc_terms(t, &s, &dst);
    /* the transpose of quat_exp_vjp's Jacobian */
    const double uud = u[0] * ud[0] + u[1] * ud[1] + u[2] * ud[2];
    ed[0] = -s * uud;
    for (int k = 0; k < 3; k++) ed[1 + k] = s * ud[k] + dst * uud * u[k];
}

/* The unit quaternion n = qa / |qa| and its tangent nd. */
static void quat_normalize_jvp(const double *qa, const double *qad, double *n, double *nd)
{
    const double nrm = sqrt(qa[0] * qa[0] + qa[1] * qa[1] + qa[2] * qa[2] + qa[3] * qa[3]);
    for (int k = 0; k < 4; k++) n[k] = qa[k] / nrm;
    const double d = n[0] * qad[0] + n[1] * qad[1] + n[2] * qad[2] + n[3] * qad[3];
    for (int k = 0; k < 4; k++) nd[k] = (qad[k] - n[k] * d) / nrm;
}

void sid_integrate_q_jvp(const sid_model *m, const double *q, const double *v, double h, double *qd, const double *vd)
{
    for (int b = 1; b < m->nbody; b++) {
        const sid_body *bd = &m->body[b];
        if (bd->qadr < 0) continue;
        const int iq = bd->qadr, iv = bd->vadr;
        if (bd->type != SID_JOINT_FREE) {
            qd[iq] += h * vd[iv];
            if (bd->bl_q >= 0) qd[bd->bl_q] += h * vd[bd->bl_v];   /* backlash's motor side */
            continue;
        }
        for (int k = 0; k < 3; k++) qd[iq + k] += h * vd[iv + k];
        double n[4], nd[4], e[4], ed[4], r1[4], r2[4];
        quat_normalize_jvp(q + iq + 3, qd + iq + 3, n, nd);
        quat_exp(v + iv + 3, h, e);
        quat_exp_jvp(v + iv + 3, h, vd + iv + 3, ed);
        /* (n e)' = nd e + n ed */
        quat_mul(nd, e, r1);
        quat_mul(n, ed, r2);
        for (int k = 0; k < 4; k++) qd[iq + 3 + k] = r1[k] + r2[k];
    }
}

void sid_free_xform_jvp(const sid_body *bd, const double *q, const double *qd, sid_m3 *Ed, sid_v3 *rd)
{
    double n[4], t[4];
    quat_normalize_jvp(q + bd->qadr + 3, qd + bd->qadr + 3, n, t);
    const double w = n[0], x = n[1], y = n[2], z = n[3], wd = t[0], xd = t[1], yd = t[2], zd = t[3];
    /* the tangent of kinematics.c's R(n), body -> world; E = R^T */
    const sid_m3 Rd = {{{-4 * (y * yd + z * zd), 2 * (xd * y + x * yd - wd * z - w * zd), 2 * (xd * z + x * zd + wd * y + w * yd)},
                        {2 * (xd * y + x * yd + wd * z + w * zd), -4 * (x * xd + z * zd), 2 * (yd * z + y * zd - wd * x - w * xd)},
                        {2 * (xd * z + x * zd - wd * y - w * yd), 2 * (yd * z + y * zd + wd * x + w * xd), -4 * (x * xd + y * yd)}}};
    *Ed = sid_m3_transpose(&Rd);
    *rd = sid_v3_load(qd + bd->qadr);
}
