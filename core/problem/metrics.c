/* metrics.c — how far a simulation is from the logs in physical units: the root-mean-square
 * error of q and qd per joint over all residual samples, and of the torque sensors' readings,
 * unscaled and unweighted. */
#include "delay.h"
#include "torque_sensor.h"

sid_status sid_problem_rmse(sid_problem *p, const double *theta, const double *x0, double *rmse_q, double *rmse_qd,
                            sid_error *err)
{
    const int nq = p->m->nq, nv = p->m->nv, nx = nq + nv;
    sid_status s = sid_problem_run_chunks(p, theta, x0, &(sid_run_wants){0, NULL, 1, NULL}, err);
    if (s) return s;
    long nsamp = 0, nsamp_qd = 0;
    for (int w = 0; w < p->nwin; w++) {
        const int ns = p->win[w].rb - p->win[w].ra + 1;
        nsamp += ns;
        if (sid_traj_has_velocities(p->logs[p->win[w].log])) nsamp_qd += ns;
    }
    /* per chunk: q's squared errors at [0, nqo), qd's at [nq, nq + nvo) (the state's layout) */
    for (int i = 0; i < nx; i++) {
        double sse = 0;
        for (int c = 0; c < p->nchunk; c++) sse += p->chunk_sse[(size_t)c * (size_t)nx + (size_t)i];
        if (i < p->m->nqo) rmse_q[i] = sqrt(sse / (double)nsamp);
        else if (rmse_qd && i >= nq && i < nq + p->m->nvo) rmse_qd[i - nq] = nsamp_qd ? sqrt(sse / (double)nsamp_qd) : 0;
    }
    return SID_OK;
}

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
            sid_unmeasure_q(m, theta, qs);
            const sid_fd_point pt = {m, theta, p->lane[0].ws, NULL, qs, v + j * (size_t)nv,
                                     sid_delay_u(m, theta, tr, k, p->lane[0].ws), 0, 0};
            s = sid_tau_link(&pt, a, tau, err);
            for (int i = 0; i < nv && !s; i++) {
                if (!tr->tau_has[i]) continue;
                double g, bb;
                int pg;
                sid_tau_gain_bias(m, theta, i, &g, &bb, &pg);
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
