/* adjoint.c — the backward pass of a window: dL/dtheta (and dL/dx0) by sweeping its steps in
 * reverse from the tape that rollout.c recorded, segment by segment from the last checkpoint
 * back, adding each sample's residual seed dL/dx_k to the state adjoint as it passes
 * (docs/adjoint.md, "Across a window"). With ubar, the steps' adjoints also add the cotangent of
 * the commands they held (ws->ubar, one interval at a time), which the delay's adjoint then
 * hands to the log samples it read (delay.h). Windows restart from their own start states, so no adjoint
 * flows from one window to the previous. */
#include "backlash.h"
#include "delay.h"
#include "problem.h"
#include "push.h"
#include "torque_sensor.h"

#include <string.h>

/* Sample k's torque sensor seed (torque_sensor.h); with ubar, also its commands' share (the
 * reading's model holds the delayed command of sample k). */
static sid_status tau_seed(const sid_sample *smp, const double *xk, double *xbar, const sid_window_bar *bar,
                           sid_error *err)
{
    const sid_problem *p = smp->p;
    lane *L = smp->L;
    double dummy = 0;
    const sid_loss_sums sums = {&dummy, NULL, NULL, NULL};
    if (!bar->ubar || !p->tau_on || !smp->tr->tau) return sid_tau_residual(smp, xk, &sums, xbar, bar->thetabar, err);
    memset(L->ubk, 0, sizeof(double) * (size_t)p->m->nv);
    L->ws->ubar = L->ubk;
    const sid_status s = sid_tau_residual(smp, xk, &sums, xbar, bar->thetabar, err);
    L->ws->ubar = NULL;
    if (!s) sid_delay_u_vjp(p->m, smp->theta, smp->tr, smp->k, L->ubk, bar->ubar, bar->ubar_k0);
    return s;
}

sid_status sid_adjoint_window(const sid_window_pass *wp, int nseg, const sid_window_bar *bar, sid_error *err)
{
    const sid_problem *p = wp->p;
    lane *L = wp->L;
    const double *theta = wp->theta;
    const window *w = wp->w;
    double *thetabar = bar->thetabar, *ubar = bar->ubar;
    const sid_model *m = p->m;
    const sid_traj *tr = p->logs[w->log];
    const int nq = m->nq, nv = m->nv, nx = nq + nv, C = p->cp_every;
    double *x = L->x;
    sid_status s;
    const int single = w->k1 - w->k0 <= C;

    double *xbar = L->xbar, *xbar1 = L->xbar1;
    double dummy = 0;
    const sid_loss_sums seed_sums = {&dummy, NULL, NULL, NULL};   /* a seed's loss is not summed */
    memset(xbar, 0, sizeof(double) * (size_t)nx);
    for (int seg = nseg - 1; seg >= 0; seg--) {
        const int ka = w->k0 + seg * C, kb = ka + C < w->k1 ? ka + C : w->k1;
        memcpy(x, L->cp + (size_t)seg * (size_t)nx, sizeof(double) * (size_t)nx);
        if (!single && (s = sid_rollout_span(wp, ka, kb, L->tape, NULL, err))) return s;
        for (int k = kb - 1; k >= ka; k--) {
            /* the state at sample k + 1 carries its own residual seed */
            if (k + 1 <= w->rb) {
                const double *xk = L->tape + (size_t)L->tape_sample[k + 1 - ka] * (size_t)p->stride;
                const sid_sample smp = {p, L, theta, tr, k + 1};
                sid_loss_residual(&smp, xk, &seed_sums, xbar, thetabar);
                /* the torque sensors' seed (torque_sensor.h), before interval k's commands are set */
                if ((s = tau_seed(&smp, xk, xbar, bar, err))) return s;
            }
            double h;
            const int nsub = sid_interval_substeps(&p->o.sim, tr, k, &h);
            const double *u = sid_delay_u(m, theta, tr, k, L->ws);
            const sid_step_ctx c = sid_step_context(p->step, m, theta, L->ws, h);
            sid_delay_vjp_begin(m, thetabar, L->ws);
            L->ws->push = sid_push_at(tr, m->nbody, k);
            if (ubar) {
                memset(L->ubk, 0, sizeof(double) * (size_t)nv);
                L->ws->ubar = L->ubk;
            }
            for (int j = nsub - 1; j >= 0; j--) {
                const double *xs = L->tape + (size_t)(L->tape_sample[k - ka] + j) * (size_t)p->stride;
                memset(xbar1, 0, sizeof(double) * (size_t)nx);
                const sid_step_io io = {xs, xs + nq, u, NULL, NULL, NULL};
                const sid_step_adj adj = {xbar, xbar + nq, {xbar1, xbar1 + nq, thetabar}};
                s = p->step->vjp_taped(&c, &io, xs + nx, &adj, err);
                if (s) {
                    L->ws->push = NULL;
                    L->ws->ubar = NULL;
                    return s;
                }
                memcpy(xbar, xbar1, sizeof(double) * (size_t)nx);
            }
            sid_delay_vjp_end(m, theta, tr, k, thetabar, L->ws);
            L->ws->push = NULL;
            L->ws->ubar = NULL;
            if (ubar) sid_delay_u_vjp(m, theta, tr, k, L->ubk, ubar, bar->ubar_k0);
        }
    }
    if (w->ra == w->k0) {
        const sid_sample smp = {p, L, theta, tr, w->k0};
        sid_loss_residual(&smp, L->cp, &seed_sums, xbar, thetabar);
        if ((s = tau_seed(&smp, L->cp, xbar, bar, err))) return s;
    }
    /* back to the logged coordinates of the start (backlash.h: the motor sides start at their links') */
    sid_backlash_fold(m, xbar, xbar1);
    /* a logged start x0 = (logged q - offset, logged v): the offsets also shape it */
    if (!wp->x0w) sid_unmeasure_q_vjp(m, xbar1, thetabar);
    if (bar->x0bar) memcpy(bar->x0bar, xbar1, sizeof(double) * (size_t)(m->nqo + m->nvo));
    return SID_OK;
}

