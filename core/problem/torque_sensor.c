/* torque_sensor.c — joint torque sensor residuals, their adjoint seeds and tangent rows
 * (torque_sensor.h). tau_link = RNEA(q, v, a(q, v, u; theta); theta): the adjoint of a reading
 * error goes into RNEA's adjoint at fixed a and, through abar = M taubar (dtau/da = M, links
 * only), into the forward dynamics' adjoint (fd.c's implicit-function adjoint); the tangent is
 * RNEA's tangent at fixed a plus M adot, adot the forward dynamics' tangent. */
#include "torque_sensor.h"

#include "delay.h"
#include "fd.h"

#include <string.h>

sid_status sid_tau_link(const sid_fd_point *p, double *a, double *tau, sid_error *err)
{
    const sid_status s = sid_fd(p, a, err);
    if (s) return s;
    sid_rnea(p->m, p->theta, p->ws, p->v, a, NULL, tau);
    return SID_OK;
}

/* The sensor's gain and bias of dof i (1, 0 without a torque_sensor row). */
void sid_tau_gain_bias(const sid_model *m, const double *theta, int i, double *g, double *b, int *pg)
{
    *g = 1;
    *b = 0;
    *pg = -1;
    for (int k = 1; k < m->nbody; k++)
        if (m->body[k].vadr == i && m->body[k].p_sensor >= 0) {
            *pg = m->body[k].p_sensor;
            *g = theta[*pg + P_SENSOR_GAIN];
            *b = theta[*pg + P_SENSOR_BIAS];
        }
}

sid_status sid_tau_residual(const sid_sample *smp, const double *x, const sid_loss_sums *sums, double *xbar,
                            double *thetabar, sid_error *err)
{
    const sid_problem *p = smp->p;
    const sid_traj *tr = smp->tr;
    if (!p->tau_on || !tr->tau) return SID_OK;
    lane *L = smp->L;
    const double *theta = smp->theta;
    const int k = smp->k;
    double *sum = sums->sum, *sse_tau = sums->sse_tau;
    const sid_model *m = p->m;
    const int nq = m->nq, nv = m->nv;
    /* the sample's command as its interval's steps see it (delay.h); ws->ud is free here: every
     * caller sets it again before the next step or step adjoint */
    const double *q = x, *v = x + nq, *u = sid_delay_u(m, theta, tr, k, L->ws), *y = tr->tau + (size_t)k * (size_t)nv;
    double *M = L->tau_buf, *a = M + (size_t)nv * (size_t)nv, *tau = a + nv, *taubar = tau + nv, *abar = taubar + nv;
    const sid_fd_point at = {m, theta, L->ws, NULL, q, v, u, 0, 0};
    sid_status s = sid_fd(&at, a, err);
    if (s) return s;
    if (xbar) sid_crba(m, L->ws, M);
    sid_rnea(m, theta, L->ws, v, a, NULL, tau);
    for (int i = 0; i < nv; i++) {
        taubar[i] = 0;
        if (!tr->tau_has[i]) continue;
        double g, b;
        int pg;
        sid_tau_gain_bias(m, theta, i, &g, &b, &pg);
        const double d = g * tau[i] + b - y[i], W = p->o.weight_tau / (p->stau[i] * p->stau[i]);
        if (sse_tau) sse_tau[i] += d * d;
        *sum += 0.5 * W * d * d;
        if (!xbar) continue;
        taubar[i] = W * d * g;
        if (pg >= 0) {
            thetabar[pg + P_SENSOR_GAIN] += W * d * tau[i];
            thetabar[pg + P_SENSOR_BIAS] += W * d;
        }
    }
    if (!xbar) return SID_OK;
    const sid_state_bar bar = {xbar, xbar + nq, thetabar};
    sid_rnea_vjp(m, L->ws, q, taubar, &bar);
    for (int i = 0; i < nv; i++) {
        abar[i] = 0;
        for (int j = 0; j < nv; j++) abar[i] += M[(size_t)i * (size_t)nv + (size_t)j] * taubar[j];
    }
    /* a delayed command's adjoint rides on torque_bias's (delay.h), for sample k's command */
    sid_delay_vjp_begin(m, thetabar, L->ws);
    s = sid_fd_vjp(&at, abar, &bar, err);
    sid_delay_vjp_end(m, theta, tr, k, thetabar, L->ws);
    return s;
}

sid_status sid_tau_residual_rows(const sid_sample *smp, const double *x, const sid_sample_dirs *dirs, sid_rows *out,
                                 sid_error *err)
{
    const sid_problem *p = smp->p;
    const sid_traj *tr = smp->tr;
    out->n = 0;
    if (!p->tau_on || !tr->tau) return SID_OK;
    lane *L = smp->L;
    const double *theta = smp->theta;
    const int k = smp->k, ndir = dirs->ndir, nfree = dirs->nfree, *idx = dirs->idx;
    double *thd = dirs->thetadot, *r = out->r, *J = out->J;
    const double *qdot = dirs->qdot, *vdot = dirs->vdot;
    const sid_model *m = p->m;
    const int nq = m->nq, nv = m->nv, np = m->nparam;
    const double *q = x, *v = x + nq, *u = sid_delay_u(m, theta, tr, k, L->ws), *y = tr->tau + (size_t)k * (size_t)nv;
    double *M = L->tau_buf, *a = M + (size_t)nv * (size_t)nv, *tau = a + nv, *adot = tau + 3 * nv, *taudot = adot + nv;
    /* a delayed command's tangent rides on torque_bias's (delay.h): seeded for sample k's command
     * (the caller seeds the next interval's steps again) */
    sid_delay_jvp_seed(m, theta, tr, k, ndir, nfree, idx, thd);
    /* fd, then RNEA at (q, v, a): the state both tangents below need (no contact or pushes: refused) */
    const sid_fd_point at = {m, theta, L->ws, NULL, q, v, u, 0, 0};
    sid_status s = sid_fd_jvp_prepare(&at, a, err);
    if (s) return s;
    sid_crba(m, L->ws, M);
    sid_rnea(m, theta, L->ws, v, a, NULL, tau);
    int n = 0;
    for (int i = 0; i < nv; i++) {
        if (!tr->tau_has[i]) continue;
        double g, b;
        int pg;
        sid_tau_gain_bias(m, theta, i, &g, &b, &pg);
        r[n++] = sqrt(p->o.weight_tau) / p->stau[i] * (g * tau[i] + b - y[i]);
    }
    for (int d = 0; d < ndir; d++) {
        const double *qd = qdot + (size_t)d * (size_t)nq, *vd = vdot + (size_t)d * (size_t)nv;
        const double *td = thd + (size_t)d * (size_t)np;
        const sid_state_dir dir = {qd, vd, td};
        sid_fd_jvp_dir(&at, a, &dir, adot);
        sid_rnea_jvp(m, theta, L->ws, q, &dir, taudot);
        for (int i = 0, row = 0; i < nv; i++) {
            if (!tr->tau_has[i]) continue;
            double g, b, Ma = 0;
            int pg;
            sid_tau_gain_bias(m, theta, i, &g, &b, &pg);
            for (int j = 0; j < nv; j++) Ma += M[(size_t)i * (size_t)nv + (size_t)j] * adot[j];
            double t = g * (taudot[i] + Ma);
            if (pg >= 0 && d < nfree) t += (idx[d] == pg + P_SENSOR_GAIN) * tau[i] + (idx[d] == pg + P_SENSOR_BIAS);
            J[(size_t)row * (size_t)ndir + (size_t)d] = sqrt(p->o.weight_tau) / p->stau[i] * t;
            row++;
        }
    }
    out->n = n;
    return SID_OK;
}
