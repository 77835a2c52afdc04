/* backlash.c — the smoothed dead-zone coupling of a backlash joint's motor and link, its
 * adjoint and tangent, and the motor side's place in the state (backlash.h). */
#include "backlash.h"

#include <math.h>
#include <string.h>

/* log(1 + exp(z)) and the logistic, without overflow for any z */
static double softplus(double z) { return z > 0 ? z + log1p(exp(-z)) : log1p(exp(z)); }
static double logistic(double z) { return z >= 0 ? 1 / (1 + exp(-z)) : exp(z) / (1 + exp(z)); }

double sid_backlash_dz(double b, double w, double x, double *gate)
{
    const double a = (x - b / 2) / w, c = (-x - b / 2) / w;
    if (gate) *gate = logistic(a) + logistic(c);
    return w * (softplus(a) - softplus(c));
}

/* The coupling of one joint at (x, xd) and its partial derivatives. */
typedef struct {
    double tau, dx, dxd;                    /* tau_c, d/dx, d/dxd */
    double db, dk, dc, dw;                  /* d/d(width, stiffness, damping, smoothing) */
} coupling;

static coupling couple(const double *pb, double x, double xd)
{
    const double b = pb[P_BACKLASH_WIDTH], k = pb[P_BACKLASH_STIFFNESS], c = pb[P_BACKLASH_DAMPING], w = pb[P_BACKLASH_SMOOTHING];
    const double a = (x - b / 2) / w, e = (-x - b / 2) / w;
    const double sa = logistic(a), se = logistic(e), pa = sa * (1 - sa), pe = se * (1 - se);
    const double dz = w * (softplus(a) - softplus(e)), g = sa + se;
    const double g_x = (pa - pe) / w, g_b = -(pa + pe) / (2 * w), g_w = -(pa * a + pe * e) / w;
    const double dz_b = (se - sa) / 2, dz_w = (softplus(a) - sa * a) - (softplus(e) - se * e);
    coupling r;
    r.tau = k * dz + c * xd * g;
    r.dx = k * g + c * xd * g_x;
    r.dxd = c * g;
    r.db = k * dz_b + c * xd * g_b;
    r.dk = dz;
    r.dc = xd * g;
    r.dw = k * dz_w + c * xd * g_w;
    return r;
}

void sid_backlash_force(const sid_model *m, const double *theta, const double *q, const double *v, double *F)
{
    for (int b = 1; b < m->nbody && m->nbacklash; b++) {
        const sid_body *bd = &m->body[b];
        if (bd->p_backlash < 0) continue;
        const coupling r = couple(theta + bd->p_backlash, q[bd->bl_q] - q[bd->qadr], v[bd->bl_v] - v[bd->vadr]);
        F[bd->vadr] += r.tau;
        F[bd->bl_v] -= r.tau;
    }
}

void sid_backlash_force_vjp(const sid_fd_point *p, const double *Fbar, const sid_state_bar *bar)
{
    const sid_model *m = p->m;
    const double *theta = p->theta, *q = p->q, *v = p->v;
    double *qbar = bar->qbar, *vbar = bar->vbar, *thetabar = bar->thetabar;
    for (int b = 1; b < m->nbody && m->nbacklash; b++) {
        const sid_body *bd = &m->body[b];
        if (bd->p_backlash < 0) continue;
        const coupling r = couple(theta + bd->p_backlash, q[bd->bl_q] - q[bd->qadr], v[bd->bl_v] - v[bd->vadr]);
        const double t = Fbar[bd->vadr] - Fbar[bd->bl_v];
        double *tb = thetabar + bd->p_backlash;
        if (qbar) qbar[bd->bl_q] += t * r.dx, qbar[bd->qadr] -= t * r.dx;
        if (vbar) vbar[bd->bl_v] += t * r.dxd, vbar[bd->vadr] -= t * r.dxd;
        tb[P_BACKLASH_WIDTH] += t * r.db;
        tb[P_BACKLASH_STIFFNESS] += t * r.dk;
        tb[P_BACKLASH_DAMPING] += t * r.dc;
        tb[P_BACKLASH_SMOOTHING] += t * r.dw;
    }
}

void sid_backlash_force_jvp(const sid_fd_point *p, const sid_state_dir *dir, double *Fdot)
{
    const sid_model *m = p->m;
    const double *theta = p->theta, *q = p->q, *v = p->v, *qd = dir->qd, *vd = dir->vd, *thd = dir->thd;
    for (int b = 1; b < m->nbody && m->nbacklash; b++) {
        const sid_body *bd = &m->body[b];
        if (bd->p_backlash < 0) continue;
        const coupling r = couple(theta + bd->p_backlash, q[bd->bl_q] - q[bd->qadr], v[bd->bl_v] - v[bd->vadr]);
        const double *td = thd + bd->p_backlash;
        const double t = r.dx * (qd[bd->bl_q] - qd[bd->qadr]) + r.dxd * (vd[bd->bl_v] - vd[bd->vadr]) +
                         r.db * td[P_BACKLASH_WIDTH] + r.dk * td[P_BACKLASH_STIFFNESS] + r.dc * td[P_BACKLASH_DAMPING] +
                         r.dw * td[P_BACKLASH_SMOOTHING];
        Fdot[bd->vadr] += t;
        Fdot[bd->bl_v] -= t;
    }
}

void sid_backlash_inertia(const sid_model *m, const double *theta, double *A)
{
    for (int b = 1; b < m->nbody && m->nbacklash; b++) {
        const sid_body *bd = &m->body[b];
        if (bd->p_backlash >= 0) A[bd->bl_v * m->nv + bd->bl_v] += theta[bd->p_backlash + P_BACKLASH_INERTIA];
    }
}

void sid_backlash_inertia_vjp(const sid_model *m, const double *a, const double *w, double *thetabar)
{
    for (int b = 1; b < m->nbody && m->nbacklash; b++) {
        const sid_body *bd = &m->body[b];
        if (bd->p_backlash >= 0) thetabar[bd->p_backlash + P_BACKLASH_INERTIA] -= a[bd->bl_v] * w[bd->bl_v];
    }
}

void sid_backlash_inertia_jvp(const sid_model *m, const double *thd, const double *a, double *ad)
{
    for (int b = 1; b < m->nbody && m->nbacklash; b++) {
        const sid_body *bd = &m->body[b];
        if (bd->p_backlash >= 0) ad[bd->bl_v] -= thd[bd->p_backlash + P_BACKLASH_INERTIA] * a[bd->bl_v];
    }
}

void sid_backlash_zero_hidden(const sid_model *m, double *tau)
{
    for (int i = m->nvo; i < m->nv; i++) tau[i] = 0;
}

void sid_backlash_start(const sid_model *m, double *x)
{
    for (int b = 1; b < m->nbody && m->nbacklash; b++) {
        const sid_body *bd = &m->body[b];
        if (bd->p_backlash < 0) continue;
        x[bd->bl_q] = x[bd->qadr];
        x[m->nq + bd->bl_v] = x[m->nq + bd->vadr];
    }
}

void sid_backlash_expand(const sid_model *m, const double *xo, double *x)
{
    memmove(x + m->nq, xo + m->nqo, sizeof(double) * (size_t)m->nvo);
    if (x != xo) memcpy(x, xo, sizeof(double) * (size_t)m->nqo);
    sid_backlash_start(m, x);
}

void sid_backlash_fold(const sid_model *m, const double *xbar, double *xobar)
{
    memcpy(xobar, xbar, sizeof(double) * (size_t)m->nqo);
    memcpy(xobar + m->nqo, xbar + m->nq, sizeof(double) * (size_t)m->nvo);
    for (int b = 1; b < m->nbody && m->nbacklash; b++) {
        const sid_body *bd = &m->body[b];
        if (bd->p_backlash < 0) continue;
        xobar[bd->qadr] += xbar[bd->bl_q];
        xobar[m->nqo + bd->vadr] += xbar[m->nq + bd->bl_v];
    }
}

void sid_backlash_seed(const sid_model *m, int j, double *qdot, double *vdot)
{
    const int vel = j >= m->nqo, i = vel ? j - m->nqo : j;
    (vel ? vdot : qdot)[i] = 1;
    for (int b = 1; b < m->nbody && m->nbacklash; b++) {
        const sid_body *bd = &m->body[b];
        if (bd->p_backlash < 0) continue;
        if (!vel && bd->qadr == i) qdot[bd->bl_q] = 1;
        if (vel && bd->vadr == i) vdot[bd->bl_v] = 1;
    }
}
