/* torque_sensor.c — joint torque sensor residuals, their adjoint seeds and tangent rows
 * (torque_sensor.h). tau_link = RNEA(q, v, a(q, v, u; theta); theta): the adjoint of a reading
 * error goes into RNEA's adjoint at fixed a and, through abar = M taubar (dtau/da = M, links
 * only), into the forward dynamics' adjoint (fd.c's implicit-function adjoint); the tangent is
 * RNEA's tangent at fixed a plus M adot, adot the forward dynamics' tangent. */
#include "torque_sensor.h"

#include "delay.h"
#include "fd.h"

#include <string.h>

/* RMS of tau column i over the logs that have it, from the last log's running sums (problem.c's
 * column_scale), floored (a still, unloaded joint reads ~0). */
static double tau_scale(const sid_problem *p, const double *last, int i)
{
    const int nq = p->m->nqo, nv = p->m->nvo;
    const double *has = last + SID_SUM_Q + 2 * nq + 2 * nv;
    const double s2 = has[nv + i];
    const long n = (long)has[2 * nv + i];
    const double rms = n ? sqrt(s2 / (double)n) : 1;
    return rms > 1e-3 ? rms : 1e-3;
}

sid_status sid_tau_setup(sid_problem *p, const double *last, sid_error *err)
{
    const sid_model *m = p->m;
    if (!(p->o.weight_tau >= 0) || !isfinite(p->o.weight_tau))
        return sid_error_set(err, SID_ERR_INPUT, "weight_tau: expected a non-negative number, got %g", p->o.weight_tau);
    const int any = last[SID_SUM_RUN_TAU] != 0, push = last[SID_SUM_RUN_TAU_PUSH] != 0;
    p->tau_on = any && p->o.weight_tau > 0;
    if (!p->tau_on) return SID_OK;
    const char *no = m->nsphere > 0 || m->p_ground >= 0 ? "contact"
                     : m->nfree > 0                      ? "free joints"
                     : m->ndry > 0                       ? "dry friction"
                     : push                              ? "logged pushes (f.* columns)"
                     : m->nbacklash > 0                  ? "backlash (the link's torque is the coupling's)"
                                                         : NULL;
    for (int b = 1; b < m->nbody && !no; b++)
        if (m->body[b].climit) no = "constraint joint limits (limit.model \"constraint\")";
    if (no)
        return sid_error_set(err, SID_ERR_INPUT,
                             "torque sensor residuals (weight_tau > 0): not supported with %s; set weight_tau 0", no);
    if (!(p->stau = sid_alloc(sizeof(double) * (size_t)(m->nv + 1))))
        return sid_error_set(err, SID_ERR_NOMEM, "out of memory");
    for (int i = 0; i < m->nv; i++) p->stau[i] = i < m->nvo ? tau_scale(p, last, i) : 1e-3;
    return SID_OK;
}

int sid_tau_sample_rows(const sid_problem *p, const sid_traj *tr)
{
    const double *stub = sid_traj_summary_of(tr);
    if (stub) return p->tau_on ? (int)stub[SID_SUM_TAU_COLS] : 0;
    if (!p->tau_on || !tr->tau) return 0;
    int n = 0;
    for (int i = 0; i < tr->nv; i++) n += tr->tau_has[i] != 0;
    return n;
}

/* the lane's scratch: M (nv x nv), a, tau, taubar, abar, adot, taudot (nv each) */
size_t sid_tau_lane_doubles(const sid_problem *p)
{
    const size_t nv = (size_t)p->m->nv;
    return p->tau_on ? nv * nv + 6 * nv : 0;
}

sid_status sid_tau_link(const sid_model *m, const double *theta, sid_workspace *ws, const double *q, const double *v,
                        const double *u, double *a, double *tau, sid_error *err)
{
    const sid_status s = sid_fd(m, theta, ws, NULL, q, v, u, 0, a, err);
    if (s) return s;
    sid_rnea(m, theta, ws, v, a, NULL, tau);
    return SID_OK;
}

/* The sensor's gain and bias of dof i (1, 0 without a torque_sensor row). */
static void gain_bias(const sid_model *m, const double *theta, int i, double *g, double *b, int *pg)
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

sid_status sid_tau_residual(const sid_problem *p, lane *L, const double *theta, const sid_traj *tr, int k,
                            const double *x, double *sum, double *sse_tau, double *xbar, double *thetabar,
                            sid_error *err)
{
    if (!p->tau_on || !tr->tau) return SID_OK;
    const sid_model *m = p->m;
    const int nq = m->nq, nv = m->nv;
    /* the sample's command as its interval's steps see it (delay.h); ws->ud is free here: every
     * caller sets it again before the next step or step adjoint */
    const double *q = x, *v = x + nq, *u = sid_delay_u(m, theta, tr, k, L->ws), *y = tr->tau + (size_t)k * (size_t)nv;
    double *M = L->tau_buf, *a = M + (size_t)nv * (size_t)nv, *tau = a + nv, *taubar = tau + nv, *abar = taubar + nv;
    sid_status s = sid_fd(m, theta, L->ws, NULL, q, v, u, 0, a, err);
    if (s) return s;
    if (xbar) sid_crba(m, L->ws, M);
    sid_rnea(m, theta, L->ws, v, a, NULL, tau);
    for (int i = 0; i < nv; i++) {
        taubar[i] = 0;
        if (!tr->tau_has[i]) continue;
        double g, b;
        int pg;
        gain_bias(m, theta, i, &g, &b, &pg);
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
    sid_rnea_vjp(m, L->ws, q, taubar, xbar, xbar + nq, thetabar);
    for (int i = 0; i < nv; i++) {
        abar[i] = 0;
        for (int j = 0; j < nv; j++) abar[i] += M[(size_t)i * (size_t)nv + (size_t)j] * taubar[j];
    }
    /* a delayed command's adjoint rides on torque_bias's (delay.h), for sample k's command */
    sid_delay_vjp_begin(m, thetabar, L->ws);
    s = sid_fd_vjp(m, theta, L->ws, NULL, q, v, u, 0, abar, xbar, xbar + nq, thetabar, err);
    sid_delay_vjp_end(m, theta, tr, k, thetabar, L->ws);
    return s;
}

sid_status sid_tau_residual_rows(const sid_problem *p, lane *L, const double *theta, const sid_traj *tr, int k,
                                 const double *x, int ndir, int nfree, const int *idx, double *thd,
                                 const double *qdot, const double *vdot, double *r, double *J, int *rows,
                                 sid_error *err)
{
    *rows = 0;
    if (!p->tau_on || !tr->tau) return SID_OK;
    const sid_model *m = p->m;
    const int nq = m->nq, nv = m->nv, np = m->nparam;
    const double *q = x, *v = x + nq, *u = sid_delay_u(m, theta, tr, k, L->ws), *y = tr->tau + (size_t)k * (size_t)nv;
    double *M = L->tau_buf, *a = M + (size_t)nv * (size_t)nv, *tau = a + nv, *adot = tau + 3 * nv, *taudot = adot + nv;
    /* a delayed command's tangent rides on torque_bias's (delay.h): seeded for sample k's command
     * (the caller seeds the next interval's steps again) */
    sid_delay_jvp_seed(m, theta, tr, k, ndir, nfree, idx, thd);
    /* fd, then RNEA at (q, v, a): the state both tangents below need (no contact or pushes: refused) */
    sid_status s = sid_fd_jvp_prepare(m, theta, L->ws, NULL, q, v, u, 0, a, err);
    if (s) return s;
    sid_crba(m, L->ws, M);
    sid_rnea(m, theta, L->ws, v, a, NULL, tau);
    int n = 0;
    for (int i = 0; i < nv; i++) {
        if (!tr->tau_has[i]) continue;
        double g, b;
        int pg;
        gain_bias(m, theta, i, &g, &b, &pg);
        r[n++] = sqrt(p->o.weight_tau) / p->stau[i] * (g * tau[i] + b - y[i]);
    }
    for (int d = 0; d < ndir; d++) {
        const double *qd = qdot + (size_t)d * (size_t)nq, *vd = vdot + (size_t)d * (size_t)nv;
        const double *td = thd + (size_t)d * (size_t)np;
        sid_fd_jvp_dir(m, theta, L->ws, NULL, q, v, u, 0, a, qd, vd, td, adot);
        sid_rnea_jvp(m, theta, L->ws, q, qd, vd, td, taudot);
        for (int i = 0, row = 0; i < nv; i++) {
            if (!tr->tau_has[i]) continue;
            double g, b, Ma = 0;
            int pg;
            gain_bias(m, theta, i, &g, &b, &pg);
            for (int j = 0; j < nv; j++) Ma += M[(size_t)i * (size_t)nv + (size_t)j] * adot[j];
            double t = g * (taudot[i] + Ma);
            if (pg >= 0 && d < nfree) t += (idx[d] == pg + P_SENSOR_GAIN) * tau[i] + (idx[d] == pg + P_SENSOR_BIAS);
            J[(size_t)row * (size_t)ndir + (size_t)d] = sqrt(p->o.weight_tau) / p->stau[i] * t;
            row++;
        }
    }
    *rows = n;
    return SID_OK;
}

int sid_problem_tau_scored(const sid_problem *p) { return p->tau_on; }

sid_status sid_problem_rmse_tau(sid_problem *p, const double *theta, double *rmse_tau, sid_error *err)
{
    const sid_model *m = p->m;
    const int nq = m->nq, nv = m->nv;
    /* rmse_tau has the logged velocity coordinates (a backlash model's hidden ones have no
     * reading); with readings scored there are no hidden ones (sid_tau_setup refuses backlash) */
    for (int i = 0; i < m->nvo; i++) rmse_tau[i] = 0;
    if (!p->tau_on) return SID_OK;
    /* per window: its status, then each coordinate's sum of squared errors and count; this
     * process's windows (with a shard, those of its chunks: of logs it holds), the others'
     * gathered, added in window order */
    const size_t unit = 2 * (size_t)nv + 1;
    double *part = sid_alloc(sizeof(double) * unit * (size_t)p->nwin);
    double *a = sid_alloc(sizeof(double) * (size_t)(3 * nv + nq + 1)), *tau = a + nv, *qs = tau + nv;
    if (!part || !a) {
        sid_free(part), sid_free(a);
        return sid_error_set(err, SID_ERR_NOMEM, "out of memory");
    }
    const int w0 = p->chunk_lo * p->chunk_windows, w1 = p->chunk_hi * p->chunk_windows;
    sid_status s = SID_OK;
    for (int w = w0; w < w1 && w < p->nwin && !s; w++) {
        const window *win = &p->win[w];
        const sid_traj *tr = p->logs[win->log];
        double *sum = part + unit * (size_t)w + 1, *cnt = sum + nv;
        if (!tr->tau) continue;
        const size_t len = (size_t)(win->rb - win->k0 + 1);
        double *q = sid_alloc(sizeof(double) * len * (size_t)nq), *v = sid_alloc(sizeof(double) * len * (size_t)nv);
        if (!q || !v) s = sid_error_set(err, SID_ERR_NOMEM, "out of memory");
        if (!s) s = sid_problem_window_predict(p, theta, NULL, w, q, v, err);
        for (int k = win->ra; k <= win->rb && !s; k++) {
            /* window_predict's q is as measured: the offsets come off again */
            const size_t j = (size_t)(k - win->k0);
            for (int i = 0; i < nq; i++) qs[i] = q[j * (size_t)nq + (size_t)i];
            for (int b = 1; b < m->nbody; b++)
                if (m->body[b].p_dof >= 0) qs[m->body[b].qadr] -= theta[m->body[b].p_dof + P_OFFSET];
            s = sid_tau_link(m, theta, p->lane[0].ws, qs, v + j * (size_t)nv, sid_delay_u(m, theta, tr, k, p->lane[0].ws),
                             a, tau, err);
            for (int i = 0; i < nv && !s; i++) {
                if (!tr->tau_has[i]) continue;
                double g, bb;
                int pg;
                gain_bias(m, theta, i, &g, &bb, &pg);
                const double d = g * tau[i] + bb - tr->tau[(size_t)k * (size_t)nv + (size_t)i];
                sum[i] += d * d;
                cnt[i]++;
            }
        }
        part[unit * (size_t)w] = s;
        sid_free(q), sid_free(v);
    }
    sid_error gerr = {0};
    sid_status gs = sid_problem_gather(p, part, sizeof(double) * unit, 1, &gerr);
    double *n = a;   /* the counts, over the scratch */
    for (int i = 0; i < nv; i++) n[i] = 0;
    for (int w = 0; !gs && w < p->nwin; w++) {
        const double *pw = part + unit * (size_t)w;
        const sid_status sw = (sid_status)pw[0];
        if (sw) {   /* the first window that failed, for every process */
            if (w < w0 || w >= w1) s = sid_error_set(err, sw, "torque sensor RMSE: window %d failed on another process", w + 1);
            break;
        }
        for (int i = 0; i < nv; i++) rmse_tau[i] += pw[1 + i], n[i] += pw[1 + nv + i];
    }
    if (gs) {
        if (err) *err = gerr;
        s = gs;
    }
    for (int i = 0; i < nv; i++) rmse_tau[i] = n[i] > 0 ? sqrt(rmse_tau[i] / n[i]) : 0;
    sid_free(part), sid_free(a);
    return s;
}
