/* rollout.c — the forward pass of a window: simulate it from its start state, add the residuals
 * of its samples, and keep what the backward pass needs.
 *
 * With a gradient wanted, the forward pass tapes every step's state with the record its step
 * writes of what the adjoint needs (step.h: accelerations and L^T L factors of each Euler step
 * or RK4 stage), so that the backward pass never forms a mass matrix. A window whose tape would exceed the budget
 * (problem.c) keeps a checkpoint state every C = sqrt(N) samples instead, and the backward
 * pass re-simulates one segment at a time onto the tape: memory O(N/C + C), one extra
 * forward pass. Either way the cost does not depend on the number of parameters
 * (docs/adjoint.md, "Across a window"). */
#include "backlash.h"
#include "delay.h"
#include "problem.h"
#include "push.h"
#include "torque_sensor.h"

#include <string.h>

void sid_rollout_start_logged(const sid_problem *p, const double *theta, const window *w, double *xo)
{
    const sid_traj *tr = p->logs[w->log];
    sid_traj_state_q(p->m, theta, tr, w->k0, xo);
    if (p->o.start_velocity_from_q) sid_traj_velocity_from_q(p->m, tr, w->k0, xo + p->m->nqo);
    else sid_traj_velocity(p->m, tr, w->k0, xo + p->m->nqo);
}

void sid_rollout_start_state(const sid_problem *p, const double *theta, const window *w, const double *x0w, double *x)
{
    /* the logged coordinates, then the motor sides of backlash joints at their links' (backlash.h) */
    if (x0w) sid_backlash_expand(p->m, x0w, x);
    else {
        sid_rollout_start_logged(p, theta, w, x);
        sid_backlash_expand(p->m, x, x);
    }
}

sid_status sid_rollout_span(const sid_window_pass *wp, int ka, int kb, double *tape, const sid_loss_sums *sums,
                            sid_error *err)
{
    const sid_problem *p = wp->p;
    lane *L = wp->L;
    const double *theta = wp->theta;
    const window *w = wp->w;
    double *x = L->x;
    const sid_model *m = p->m;
    const int l = w->log;
    const sid_traj *tr = p->logs[l];
    const int nq = m->nq, nv = m->nv, nx = nq + nv;
    int e = 0;
    for (int k = ka; k < kb; k++) {
        double h;
        const int nsub = sid_interval_substeps(&p->o.sim, tr, k, &h);
        const double *u = sid_delay_u(m, theta, tr, k, L->ws);
        const sid_step_ctx c = sid_step_context(p->step, m, theta, L->ws, h);
        L->ws->push = sid_push_at(tr, m->nbody, k);
        if (tape) L->tape_sample[k - ka] = e;
        for (int j = 0; j < nsub; j++, e++) {
            double *entry = tape ? tape + (size_t)e * (size_t)p->stride : NULL;
            if (tape) memcpy(entry, x, sizeof(double) * (size_t)nx);
            const sid_step_io io = {x, x + nq, u, L->x1, L->x1 + nq, tape ? entry + nx : NULL};
            sid_status s = sid_step_take(p->step, &c, &io, err);
            if (s) {
                L->ws->push = NULL;
                sid_error_prefix(err, "log %d, t = %g s", l + 1, tr->t[k]);
                return s;
            }
            memcpy(x, L->x1, sizeof(double) * (size_t)nx);
        }
        L->ws->push = NULL;
        if (sums && k + 1 <= w->rb) {
            const sid_sample smp = {p, L, theta, tr, k + 1};
            sid_loss_residual(&smp, x, sums, NULL, NULL);
            /* torque sensor residuals (torque_sensor.h): a no-op unless scored */
            const sid_loss_sums tau_sums = {sums->sum, NULL, NULL, NULL};
            const sid_status ts = sid_tau_residual(&smp, x, &tau_sums, NULL, NULL, err);
            if (ts) return ts;
        }
    }
    if (tape) {
        L->tape_sample[kb - ka] = e;
        memcpy(tape + (size_t)e * (size_t)p->stride, x, sizeof(double) * (size_t)nx);
    }
    return SID_OK;
}

sid_status sid_rollout_window(const sid_window_pass *wp, int taped, const sid_loss_sums *sums, int *nseg,
                              sid_error *err)
{
    const sid_problem *p = wp->p;
    lane *L = wp->L;
    const double *theta = wp->theta;
    const window *w = wp->w;
    const sid_model *m = p->m;
    const sid_traj *tr = p->logs[w->log];
    const int nx = m->nq + m->nv, C = p->cp_every;
    double *x = L->x;
    sid_status s;
    sid_rollout_start_state(p, theta, w, wp->x0w, x);
    if (w->ra == w->k0) {
        const sid_sample smp = {p, L, theta, tr, w->k0};
        const sid_loss_sums tau_sums = {sums->sum, NULL, NULL, NULL};
        sid_loss_residual(&smp, x, sums, NULL, NULL);
        if (sums->sum && (s = sid_tau_residual(&smp, x, &tau_sums, NULL, NULL, err))) return s;
    }
    /* a window of one segment is taped right away and not simulated again */
    const int single = w->k1 - w->k0 <= C;
    *nseg = 0;
    for (int k = w->k0; k < w->k1; k += C, (*nseg)++) {
        memcpy(L->cp + (size_t)*nseg * (size_t)nx, x, sizeof(double) * (size_t)nx);
        const int kb = k + C < w->k1 ? k + C : w->k1;
        if ((s = sid_rollout_span(wp, k, kb, single && taped ? L->tape : NULL, sums, err))) return s;
    }
    return SID_OK;
}

void sid_problem_start_states(const sid_problem *p, const double *theta, double *x0)
{
    const size_t nx = (size_t)(p->m->nqo + p->m->nvo);   /* a window's start: the logged coordinates */
    const int w0 = p->chunk_lo * p->chunk_windows, w1 = p->chunk_hi * p->chunk_windows;
    /* with a shard, this process's windows (of the logs it holds), the others' gathered */
    memset(x0, 0, sizeof(double) * nx * (size_t)p->nwin);
    for (int w = w0; w < w1 && w < p->nwin; w++) sid_rollout_start_logged(p, theta, &p->win[w], x0 + (size_t)w * nx);
    /* a gather fails only where the process cannot go on (mpi/ranks.c ends the job then) */
    sid_problem_gather(p, x0, sizeof(double) * nx, 1, NULL);
}
