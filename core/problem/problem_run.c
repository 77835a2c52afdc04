/* problem_run.c — a problem's windows run on all cores: each chunk's windows simulated in
 * order (rollout.c) and, with a gradient wanted, swept back (adjoint.c), each chunk's sums
 * kept apart and added in chunk order at the end, so the loss and its gradient do not depend
 * on the number of threads or processes (problem.h). */
#include "problem.h"

#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* Loss sum of one window; with thetabar, accumulate its gradient (and the start state's, and
 * with ubar its commands', from sample ubar_k0). */
static sid_status window_loss(const sid_window_pass *wp, const sid_loss_sums *sums, const sid_window_bar *bar,
                              sid_error *err)
{
    int nseg;
    sid_status s = sid_rollout_window(wp, bar->thetabar != NULL, sums, &nseg, err);
    if (s || !bar->thetabar) return s;
    return sid_adjoint_window(wp, nseg, bar, err);
}

/* The other processes' chunks of a pass: statuses first (sid_problem_gather_status), then the
 * partials the pass made. */
static sid_status shard_gather_chunks(sid_problem *p, const sid_run_wants *want, sid_error *err)
{
    const int grad = want->grad, rmse = want->rmse;
    double *grad_x0 = want->grad_x0;
    const size_t np = (size_t)p->m->nparam, nx = (size_t)(p->m->nq + p->m->nv), nxo = (size_t)(p->m->nqo + p->m->nvo);
    int failed;
    sid_status s = sid_problem_gather_status(p, &failed, err);
    if (!s && !failed) s = sid_problem_gather(p, p->chunk_sum, sizeof(double), 0, err);
    if (!s && !failed && grad) s = sid_problem_gather(p, p->chunk_grad, sizeof(double) * np, 0, err);
    if (!s && !failed && grad_x0) s = sid_problem_gather(p, grad_x0, sizeof(double) * nxo, 1, err);
    if (!s && !failed && rmse) s = sid_problem_gather(p, p->chunk_sse, sizeof(double) * nx, 0, err);
    return s;
}

sid_status sid_problem_run_chunks(sid_problem *p, const double *theta, const double *x0, const sid_run_wants *want,
                                  sid_error *err)
{
    const int grad = want->grad, rmse = want->rmse;
    double *grad_x0 = want->grad_x0;
    const sid_ubar_out *ub = want->ub;
    const sid_model *m = p->m;
    /* x0 and grad_x0: nxo per window (logged coordinates); the squared errors: nx per chunk */
    const int np = m->nparam, nq = m->nq, nx = m->nq + m->nv, nxo = m->nqo + m->nvo;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(p->nlane)
#endif
    for (int c = p->chunk_lo; c < p->chunk_hi; c++) {
#ifdef _OPENMP
        lane *L = &p->lane[omp_get_thread_num()];
#else
        lane *L = &p->lane[0];
#endif
        double *g = grad ? p->chunk_grad + (size_t)c * (size_t)np : NULL;
        double *sse = rmse ? p->chunk_sse + (size_t)c * (size_t)nx : NULL;
        p->chunk_sum[c] = 0;
        p->chunk_status[c] = SID_OK;
        if (g) memset(g, 0, sizeof(double) * (size_t)np);
        if (sse) memset(sse, 0, sizeof(double) * (size_t)nx);
        const sid_loss_sums sums = {&p->chunk_sum[c], sse, sse ? sse + nq : NULL, NULL};
        for (int w = c * p->chunk_windows; w < (c + 1) * p->chunk_windows && w < p->nwin; w++) {
            const size_t off = (size_t)w * (size_t)nxo;
            const sid_window_pass wp = {p, L, theta, &p->win[w], x0 ? x0 + off : NULL};
            const sid_window_bar bar = {g, grad_x0 ? grad_x0 + off : NULL, ub ? ub->buf + ub->off[w] : NULL,
                                        ub ? ub->first[w] : 0};
            p->chunk_status[c] = window_loss(&wp, &sums, &bar, &p->chunk_err[c]);
            if (p->chunk_status[c]) break;
        }
    }
    if (p->shard.size) {
        sid_status s = shard_gather_chunks(p, want, err);
        if (s) return s;
    }
    for (int c = 0; c < p->nchunk; c++)
        if (p->chunk_status[c]) {
            if (err) *err = p->chunk_err[c];
            return p->chunk_status[c];
        }
    return SID_OK;
}

sid_status sid_problem_loss(sid_problem *p, const double *theta, const double *x0, double *loss, double *grad,
                            double *grad_x0, sid_error *err)
{
    const int np = p->m->nparam, nx = p->m->nqo + p->m->nvo;
    sid_status s = sid_problem_run_chunks(p, theta, x0, &(sid_run_wants){grad != NULL, grad_x0, 0, NULL}, err);
    if (s) return s;
    const double inv = 1.0 / p->nres;
    double sum = 0;
    for (int c = 0; c < p->nchunk; c++) sum += p->chunk_sum[c];
    *loss = sum * inv;
    if (grad) {
        memset(grad, 0, sizeof(double) * (size_t)np);
        for (int c = 0; c < p->nchunk; c++)
            for (int i = 0; i < np; i++) grad[i] += p->chunk_grad[(size_t)c * (size_t)np + (size_t)i];
        for (int i = 0; i < np; i++) grad[i] *= inv;
    }
    if (grad_x0)
        for (size_t i = 0; i < (size_t)p->nwin * (size_t)nx; i++) grad_x0[i] *= inv;
    if (!isfinite(*loss)) return sid_error_set(err, SID_ERR_NONFINITE, "loss is not finite");
    return SID_OK;
}
