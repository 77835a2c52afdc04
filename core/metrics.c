/* metrics.c — how far a simulation is from the logs in physical units: the root-mean-square
 * error of q and qd per joint over all residual samples, unscaled and unweighted. */
#include "problem.h"

sid_status sid_problem_rmse(sid_problem *p, const double *theta, const double *x0, double *rmse_q, double *rmse_qd,
                            sid_error *err)
{
    const int nq = p->m->nq, nv = p->m->nv, nx = nq + nv;
    sid_status s = sid_problem_run_chunks(p, theta, x0, 0, NULL, 1, NULL, err);
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
