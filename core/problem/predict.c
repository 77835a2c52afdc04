/* predict.c — what one window predicts: the simulated positions and velocities at every sample
 * the window simulates, in the log's convention, so that a plot shows exactly what the loss
 * scores (the same windows, start states, step and residual convention as loss.c).
 *
 * Positions are reported as measured: encoder offsets added, and a free joint's quaternion
 * given the sign nearer the logged one (q and -q are the same orientation; loss.c compares
 * against the nearer sign too), so predicted minus logged is the residual the loss sees. */
#include "problem.h"

#include <string.h>

sid_status sid_problem_window_predict(sid_problem *p, const double *theta, const double *x0w, int w, double *q,
                                      double *v, sid_error *err)
{
    const sid_model *m = p->m;
    const window *win = &p->win[w];
    const sid_traj *tr = p->logs[win->log];
    const int nq = m->nqo, nv = m->nvo;   /* the logged coordinates of the state x */
    lane *L = &p->lane[0];
    double *x = L->x;
    sid_rollout_start_state(p, theta, win, x0w, x);
    for (int k = win->k0;; k++) {
        double *qk = q + (size_t)(k - win->k0) * (size_t)nq;
        memcpy(qk, x, sizeof(double) * (size_t)nq);
        memcpy(v + (size_t)(k - win->k0) * (size_t)nv, x + m->nq, sizeof(double) * (size_t)nv);
        sid_measure_q(m, theta, qk);
        for (int b = 1; b < m->nbody; b++) {
            const sid_body *bd = &m->body[b];
            if (bd->type != SID_JOINT_FREE) continue;
            double *qs = qk + bd->qadr + 3;
            const double *qm = tr->q + (size_t)k * (size_t)nq + bd->qadr + 3;
            if (qs[0] * qm[0] + qs[1] * qm[1] + qs[2] * qm[2] + qs[3] * qm[3] < 0)
                for (int j = 0; j < 4; j++) qs[j] = -qs[j];
        }
        if (k == win->k1) break;
        const sid_window_pass wp = {p, L, theta, win, x0w};
        sid_status s = sid_rollout_span(&wp, k, k + 1, NULL, NULL, err);
        if (s) return s;
    }
    return SID_OK;
}
