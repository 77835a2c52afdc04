/* jacobian.c — the residuals of one window and their exact Jacobian with respect to the free
 * parameters (and the window's start state), for the covariance report: forward-mode
 * differentiation through every step (the step's jvp, step.h), all directions at once; for models
 * whose forward-mode derivatives are not written (free joints, contact), central differences
 * of whole-window simulations instead. */
#include "problem.h"

#include <string.h>

int sid_problem_window_rows(const sid_problem *p, int w)
{
    const window *win = &p->win[w];
    const sid_traj *tr = p->logs[win->log];
    return (win->rb - win->ra + 1) *
           ((p->o.weight_q > 0 ? p->m->nq : 0) + (p->o.weight_qd > 0 && tr->qd ? p->m->nv : 0));
}

/* Residuals r of window w from start x0w (NULL: the logged start), by simulation alone. */
static sid_status window_residuals(sid_problem *p, const double *theta, const double *x0w, int w, double *r,
                                   sid_error *err)
{
    const sid_model *m = p->m;
    const int nq = m->nq, nv = m->nv, nx = nq + nv;
    const window *win = &p->win[w];
    const sid_traj *tr = p->logs[win->log];
    lane *L = &p->lane[0];
    double *x = L->x;
    sid_status s;
    size_t row = 0;
    sid_rollout_start_state(p, theta, win, x0w, x);
    if (win->ra == win->k0) row += (size_t)sid_loss_residual_rows(p, theta, tr, win->k0, x, 0, 0, NULL, NULL, NULL, r, NULL);
    for (int k = win->k0; k < win->k1; k++) {
        const double dt = tr->t[k + 1] - tr->t[k];
        const int nsub = sid_substeps(&p->o.sim, dt);
        const double h = dt / nsub, *u = tr->u + (size_t)k * (size_t)nv;
        const sid_step_ctx c = sid_step_context(p->step, m, theta, L->ws, h);
        for (int j = 0; j < nsub; j++) {
            if ((s = sid_step_take(p->step, &c, x, x + nq, u, L->x1, L->x1 + nq, NULL, err))) return s;
            memcpy(x, L->x1, sizeof(double) * (size_t)nx);
        }
        if (k + 1 <= win->rb) row += (size_t)sid_loss_residual_rows(p, theta, tr, k + 1, x, 0, 0, NULL, NULL, NULL, r + row, NULL);
    }
    return SID_OK;
}

/* The window Jacobian by central differences, for models whose forward-mode derivatives are
 * not written (free joints, contact): two simulations per column, each step scaled to its
 * variable's size. Used only for the covariance report; gradients stay exact (adjoint). */
static sid_status window_jacobian_fd(sid_problem *p, const double *theta, const double *x0w, int w, int nfree,
                                     const int *idx, double *r, double *J, sid_error *err)
{
    const sid_model *m = p->m;
    const int nx = m->nq + m->nv, np = m->nparam, rows = sid_problem_window_rows(p, w);
    const int nstart = p->o.estimate_start ? nx : 0, ncol = nfree + nstart;
    double *th = sid_alloc(sizeof(double) * (size_t)np), *x0 = sid_alloc(sizeof(double) * (size_t)nx);
    double *rp = sid_alloc(sizeof(double) * (size_t)rows), *rm = sid_alloc(sizeof(double) * (size_t)rows);
    sid_status s = SID_OK;
    if (!th || !x0 || !rp || !rm) {
        s = sid_error_set(err, SID_ERR_NOMEM, "out of memory");
        goto done;
    }
    memcpy(th, theta, sizeof(double) * (size_t)np);
    if (x0w) memcpy(x0, x0w, sizeof(double) * (size_t)nx);
    else sid_rollout_start_state(p, theta, &p->win[w], NULL, x0);
    if ((s = window_residuals(p, theta, x0w, w, r, err))) goto done;
    for (int c = 0; c < ncol; c++) {
        double *z = c < nfree ? &th[idx[c]] : &x0[c - nfree];
        const double z0 = *z, dz = 1e-6 * fmax(fabs(z0), 0.1);
        /* a parameter column keeps the caller's start convention; a start column needs x0 */
        const double *start = c < nfree ? x0w : x0;
        *z = z0 + dz;
        if ((s = window_residuals(p, th, start, w, rp, err))) goto done;
        *z = z0 - dz;
        if ((s = window_residuals(p, th, start, w, rm, err))) goto done;
        *z = z0;
        for (int i = 0; i < rows; i++) J[(size_t)i * (size_t)ncol + (size_t)c] = (rp[i] - rm[i]) / (2 * dz);
    }
done:
    sid_free(th);
    sid_free(x0);
    sid_free(rp);
    sid_free(rm);
    return s;
}

sid_status sid_problem_window_jacobian(sid_problem *p, const double *theta, const double *x0w, int w, int nfree,
                                       const int *idx, double *r, double *J, sid_error *err)
{
    if (p->m->nfree || p->m->nsphere) return window_jacobian_fd(p, theta, x0w, w, nfree, idx, r, J, err);
    const sid_model *m = p->m;
    const int nq = m->nq, nv = m->nv, nx = nq + nv, np = m->nparam;
    const int nstart = p->o.estimate_start ? nx : 0, ndir = nfree + nstart;
    const size_t nd = (size_t)(ndir > 0 ? ndir : 1);
    double *thd = sid_alloc(sizeof(double) * nd * (size_t)np);
    double *qdot = sid_alloc(sizeof(double) * nd * (size_t)nq), *vdot = sid_alloc(sizeof(double) * nd * (size_t)nv);
    double *scratch = sid_alloc(sizeof(double) * nd * 9 * (size_t)nv);
    sid_status s = SID_OK;
    if (!thd || !qdot || !vdot || !scratch) {
        s = sid_error_set(err, SID_ERR_NOMEM, "out of memory");
        goto done;
    }
    const window *win = &p->win[w];
    const sid_traj *tr = p->logs[win->log];
    lane *L = &p->lane[0];
    double *x = L->x;
    sid_rollout_start_state(p, theta, win, x0w, x);
    for (int d = 0; d < nfree; d++) {
        thd[(size_t)d * (size_t)np + (size_t)idx[d]] = 1;
        /* a logged start q0 = logged q - offset moves with the offset */
        if (!x0w)
            for (int b = 1; b < m->nbody; b++)
                if (m->body[b].p_dof >= 0 && idx[d] == m->body[b].p_dof + P_OFFSET)
                    qdot[(size_t)d * (size_t)nq + (size_t)m->body[b].qadr] = -1;
    }
    for (int j = 0; j < nstart; j++) {
        if (j < nq) qdot[(size_t)(nfree + j) * (size_t)nq + (size_t)j] = 1;
        else vdot[(size_t)(nfree + j) * (size_t)nv + (size_t)(j - nq)] = 1;
    }
    size_t row = 0;
    if (win->ra == win->k0)
        row += (size_t)sid_loss_residual_rows(p, theta, tr, win->k0, x, ndir, nfree, idx, qdot, vdot, r, J);
    for (int k = win->k0; k < win->k1; k++) {
        const double dt = tr->t[k + 1] - tr->t[k];
        const int nsub = sid_substeps(&p->o.sim, dt);
        const double h = dt / nsub, *u = tr->u + (size_t)k * (size_t)nv;
        const sid_step_ctx c = sid_step_context(p->step, m, theta, L->ws, h);
        for (int j = 0; j < nsub; j++) {
            if ((s = sid_step_tangent(p->step, &c, x, x + nq, u, ndir, thd, qdot, vdot, scratch, err)) ||
                (s = sid_step_take(p->step, &c, x, x + nq, u, L->x1, L->x1 + nq, NULL, err)))
                goto done;
            memcpy(x, L->x1, sizeof(double) * (size_t)nx);
        }
        if (k + 1 <= win->rb)
            row += (size_t)sid_loss_residual_rows(p, theta, tr, k + 1, x, ndir, nfree, idx, qdot, vdot, r + row, J + row * nd);
    }
done:
    sid_free(thd);
    sid_free(qdot);
    sid_free(vdot);
    sid_free(scratch);
    return s;
}
