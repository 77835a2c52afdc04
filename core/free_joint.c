/* free_joint.c — the free joint's position update q1 = q (+) h v and its adjoint.
 * A free joint's q is (p, quat) with quat = (w, x, y, z); v is (world linear velocity, body
 * angular velocity) as in MuJoCo. The position moves by h v_lin; the orientation turns by
 *   quat1 = n(quat) * exp(h w / 2),   exp(u) = (cos|u|, sin|u| u / |u|),   n(q) = q / |q|,
 * normalised first so that a start state whose quaternion drifted off the unit sphere (it is an
 * unknown of the fit) still gives a rotation. */
#include "model.h"

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
