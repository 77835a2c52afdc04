/* stage.c — the accelerations an explicit integrator's stages take (step.h, sid_stage_dynamics):
 * the plain forward dynamics, and the same with the dry friction and constraint-limit rows of
 * dry_friction.h solved on M + B, as MuJoCo's forward pass solves its frictionloss and limit
 * rows at every stage of its RK4. */
#include "dry_friction.h"
#include "fd.h"
#include "step.h"

#include <string.h>

/* ---- smooth: a = fd(q, v, u) with hd = 0; record: the factor of M + B -------------------- */

static int smooth_size(const sid_model *m) { return m->nv * m->nv; }

/* The plain forward dynamics' point of a stage (hd = 0). */
static sid_fd_point stage_point(const sid_step_ctx *c, const sid_stage_at *at)
{
    return (sid_fd_point){c->m, c->theta, c->ws, c->fx, at->q, at->v, at->u, 0, 0};
}

static sid_status smooth_accel(const sid_step_ctx *c, const sid_stage_at *at, double *a, double *rec, sid_error *err)
{
    const sid_fd_point p = stage_point(c, at);
    sid_status s = sid_fd(&p, a, err);
    if (!s && rec) memcpy(rec, c->ws->M, sizeof(double) * (size_t)smooth_size(c->m));
    return s;
}

static sid_status smooth_vjp(const sid_step_ctx *c, const sid_stage_at *at, const double *rec, const double *abar,
                             const sid_state_bar *bar, sid_error *err)
{
    const sid_fd_point p = stage_point(c, at);
    if (!rec) return sid_fd_vjp(&p, abar, bar, err);
    sid_fd_vjp_factored(&p, at->a, rec, abar, bar);
    return SID_OK;
}

static sid_status smooth_jvp_prepare(const sid_step_ctx *c, const sid_stage_at *at, double *a, int rows,
                                     sid_error *err)
{
    const sid_fd_point p = stage_point(c, at);
    sid_status s = sid_fd_jvp_prepare(&p, a, err);
    if (!s && rows) sid_fd_jacobian_rows(&p, a, c->ncols, c->cols, c->ws->jrows);
    return s;
}

static void smooth_jvp_dir(const sid_step_ctx *c, const sid_stage_at *at, int rows, const sid_state_dir *dir, double *ad)
{
    const sid_fd_point p = stage_point(c, at);
    if (rows) sid_fd_jvp_rows(c->m, c->ws->jrows, c->ncols, c->cols, dir, ad);
    else sid_fd_jvp_dir(&p, at->a, dir, ad);
}

const sid_stage_dynamics sid_stage_smooth = {smooth_size, smooth_accel, smooth_vjp, smooth_jvp_prepare,
                                             smooth_jvp_dir};

/* ---- dry: ac = a0 + (M + B)^-1 E f, f the rows' solution (dry_friction.h) ----------------
 * Record: the factor of M + B, the rows' torques f and their states. The adjoint is the forward
 * dynamics' at ac with f held (w = (M + B)^-1 abar, whose rows are f's adjoint), plus the
 * solution's adjoint, whose a0 and A dependence is one more forward-dynamics adjoint at ac with
 * the same factor: both in one call, the adjoint being linear in abar. The tangent likewise:
 * t at ac with f held, fdot from it, ac' = t + (M + B)^-1 E fdot. */

static int dry_rows(const sid_model *m) { return m->ndry + m->nclim; }
static int dry_size(const sid_model *m) { return m->nv * m->nv + 2 * dry_rows(m); }

/* E x into D->e, then (M + B)^-1 of it */
static void rows_force(const sid_model *m, struct sid_dry *D, const double *x)
{
    memset(D->e, 0, sizeof(double) * (size_t)m->nv);
    for (int j = 0; j < D->nf; j++) D->e[D->dof[j]] += D->sgn[j] * x[j];
    sid_factor_solve(m, D->Lp, D->e);
}

static sid_status dry_accel(const sid_step_ctx *c, const sid_stage_at *at, double *a, double *rec, sid_error *err)
{
    const sid_model *m = c->m;
    struct sid_dry *D = c->ws->dry;
    const size_t nn = (size_t)m->nv * (size_t)m->nv, nf = (size_t)D->nf;
    const sid_fd_point p = {m, c->theta, c->ws, c->fx, at->q, at->v, at->u, c->h, 0};
    sid_status s = sid_dry_accel(&p, 1, 0, err);
    if (s) return s;
    memcpy(a, D->ac, sizeof(double) * (size_t)m->nv);
    if (rec) {
        memcpy(rec, D->Lp, sizeof(double) * nn);
        memcpy(rec + nn, D->f, sizeof(double) * nf);
        for (size_t j = 0; j < nf; j++) rec[nn + nf + j] = D->state[j];
    }
    return SID_OK;
}

static sid_status dry_vjp(const sid_step_ctx *c, const sid_stage_at *at, const double *rec, const double *abar,
                          const sid_state_bar *bar, sid_error *err)
{
    const sid_model *m = c->m;
    sid_workspace *ws = c->ws;
    struct sid_dry *D = ws->dry;
    const int nv = m->nv;
    const size_t nn = (size_t)nv * (size_t)nv, nf = (size_t)D->nf;
    const sid_fd_point ph = {m, c->theta, ws, c->fx, at->q, at->v, at->u, c->h, 0};   /* the rows' time constant: the step's */
    sid_status s;
    if (rec) {   /* the stage again from its record, solving nothing */
        if ((s = sid_dry_prepare(m, c->theta, ws, err))) return s;
        memcpy(D->Lp, rec, sizeof(double) * nn);
        memcpy(D->f, rec + nn, sizeof(double) * nf);
        for (size_t j = 0; j < nf; j++) D->state[j] = (int)rec[nn + nf + j];
        memcpy(D->ac, at->a, sizeof(double) * (size_t)nv);
        sid_dry_restore(&ph);
    } else if ((s = sid_dry_accel(&ph, 1, 0, err))) {
        return s;
    }
    /* f's adjoint: the rows of w = (M + B)^-1 abar */
    memcpy(D->e, abar, sizeof(double) * (size_t)nv);
    sid_factor_solve(m, D->Lp, D->e);
    for (int j = 0; j < D->nf; j++) D->t[j] = D->sgn[j] * D->e[D->dof[j]];
    sid_dry_vjp_solution(m, ws, D->t, bar);
    for (int i = 0; i < nv; i++) D->e[i] = abar[i] + D->abar[i];
    const sid_fd_point p = stage_point(c, at);
    sid_fd_vjp_factored(&p, D->ac, D->Lp, D->e, bar);
    return SID_OK;
}

static sid_status dry_jvp_prepare(const sid_step_ctx *c, const sid_stage_at *at, double *a, int rows, sid_error *err)
{
    const sid_model *m = c->m;
    sid_workspace *ws = c->ws;
    struct sid_dry *D = ws->dry;
    const sid_fd_point ps = {m, c->theta, ws, c->fx, at->q, at->v, at->u, c->h, 0};
    sid_status s = sid_dry_accel(&ps, 1, 0, err);
    if (s) return s;
    memcpy(a, D->ac, sizeof(double) * (size_t)m->nv);
    /* ws->M holds the factor of M + B: the RNEA state at (q, v, ac) the tangents need */
    const sid_fd_point p = stage_point(c, at);
    sid_fd_jvp_at(&p, D->ac);
    if (rows) sid_fd_jacobian_rows(&p, D->ac, c->ncols, c->cols, ws->jrows);
    return SID_OK;
}

static void dry_jvp_dir(const sid_step_ctx *c, const sid_stage_at *at, int rows, const sid_state_dir *dir, double *ad)
{
    const sid_model *m = c->m;
    struct sid_dry *D = c->ws->dry;
    smooth_jvp_dir(c, at, rows, dir, ad);   /* t: f held */
    sid_dry_jvp_solution(m, c->ws, ad, dir, D->t);
    rows_force(m, D, D->t);
    for (int i = 0; i < m->nv; i++) ad[i] += D->e[i];
}

const sid_stage_dynamics sid_stage_dry = {dry_size, dry_accel, dry_vjp, dry_jvp_prepare, dry_jvp_dir};
