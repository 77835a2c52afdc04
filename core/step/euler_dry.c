/* euler_dry.c — MuJoCo's Euler step with joint dry friction and constraint limits (their rows
 * J, dry_friction.h), a row of the step table for no contact and for compliant contact (whose
 * forces are part of a0); E f below is J^T f:
 *   (M + B) a0 = F - c - D v,  f = the box QP's solution,
 *   (M + B + h D) a = F - c - D v + E f,  v1 = v + h a,  q1 = q (+) h v1.
 * The adjoint is euler.c's with f as one more force (fbar = the solve's w at the rows), then
 * the solution's adjoint, whose a0 and A dependence is one more forward-dynamics adjoint at
 * ac = a0 + (M + B)^-1 E f with hd = 0 (dry_friction.c). The tape record keeps what the adjoint
 * needs of the step, so that it solves nothing again but the rows' small matrices. */
#include "dry_friction.h"
#include "fd.h"
#include "step.h"

#include <string.h>

/* The tape record: a, ac (nv each), the factors of M + B + h D and M + B (nv x nv each), the
 * friction torques and the rows' states (nf each). */
int sid_dry_record_size(const sid_model *m) { return 2 * m->nv + 2 * m->nv * m->nv + 2 * (m->ndry + m->nclim); }

sid_status sid_dry_accel(const sid_fd_point *p, int want_ac, int want_a, sid_error *err)
{
    const sid_model *m = p->m;
    const double *theta = p->theta, *q = p->q, *v = p->v, *u = p->u;
    sid_workspace *ws = p->ws;
    const sid_fd_point p0 = {m, theta, ws, p->fx, q, v, u, 0, 0};   /* the plain dynamics: a0 and ac */
    struct sid_dry *D = ws->dry;
    const int nv = m->nv;
    const size_t nn = sizeof(double) * (size_t)nv * (size_t)nv;
    sid_status s;
    if ((s = sid_dry_prepare(m, theta, ws, err))) return s;
    if ((s = sid_fd(&p0, D->a0, err))) return s;
    memcpy(D->Lp, ws->M, nn);
    sid_dry_solve(p);
    if (want_ac) {
        memset(D->e, 0, sizeof(double) * (size_t)nv);
        for (int j = 0; j < D->nf; j++) D->e[D->dof[j]] += D->sgn[j] * D->f[j];
        sid_factor_solve(m, D->Lp, D->e);
        for (int i = 0; i < nv; i++) D->ac[i] = D->a0[i] + D->e[i];
    }
    if (!want_a) return SID_OK;
    if ((s = sid_fd(p, D->a, err))) return s;
    memcpy(D->Lh, ws->M, nn);
    memset(D->e, 0, sizeof(double) * (size_t)nv);
    for (int j = 0; j < D->nf; j++) D->e[D->dof[j]] += D->sgn[j] * D->f[j];
    sid_factor_solve(m, D->Lh, D->e);
    for (int i = 0; i < nv; i++) D->a[i] += D->e[i];
    return SID_OK;
}

static sid_status dry_accel(const sid_step_ctx *c, const sid_step_io *io, int want_ac, sid_error *err)
{
    const sid_fd_point p = sid_step_point(c, io, c->h);
    return sid_dry_accel(&p, want_ac, 1, err);
}

sid_status sid_dry_step(const sid_step_ctx *c, const sid_step_io *io, sid_error *err)
{
    const double *q = io->q, *v = io->v;
    double *q1 = io->q1, *v1 = io->v1, *rec = io->rec;
    const struct sid_dry *D = c->ws->dry;
    const size_t nv = (size_t)c->m->nv, nf = (size_t)D->nf;
    sid_status s = dry_accel(c, io, rec != NULL, err);
    if (s) return s;
    for (size_t i = 0; i < nv; i++) v1[i] = v[i] + c->h * D->a[i];
    sid_integrate_q(c->m, q, v1, c->h, q1);
    if (rec) {
        memcpy(rec, D->a, sizeof(double) * nv);
        memcpy(rec + nv, D->ac, sizeof(double) * nv);
        memcpy(rec + 2 * nv, D->Lh, sizeof(double) * nv * nv);
        memcpy(rec + 2 * nv + nv * nv, D->Lp, sizeof(double) * nv * nv);
        memcpy(rec + 2 * nv + 2 * nv * nv, D->f, sizeof(double) * nf);
        for (size_t j = 0; j < nf; j++) rec[2 * nv + 2 * nv * nv + nf + j] = D->state[j];
    }
    return SID_OK;
}

/* The adjoint once the scratch holds the step's a, ac, factors and solution. */
static void dry_reverse(const sid_step_ctx *c, const sid_step_io *io, const sid_step_adj *adj)
{
    /* euler.c's adjoint with f held; its solve w = (M + B + h D)^-1 abar is f's adjoint */
    sid_euler_reverse(c, io, c->ws->dry->a, c->ws->dry->Lh, adj);
    const sid_fd_point p0 = sid_step_point(c, io, 0);
    sid_dry_rows_vjp(&p0, &adj->bar);
}

void sid_dry_rows_vjp(const sid_fd_point *p, const sid_state_bar *bar)
{
    sid_workspace *ws = p->ws;
    struct sid_dry *D = ws->dry;
    for (int j = 0; j < D->nf; j++) D->t[j] = D->sgn[j] * ws->w[D->dof[j]];
    sid_dry_vjp_solution(p->m, ws, D->t, bar);
    sid_fd_vjp_factored(p, D->ac, D->Lp, D->abar, bar);
}

sid_status sid_dry_vjp(const sid_step_ctx *c, const sid_step_io *io, const sid_step_adj *adj, sid_error *err)
{
    sid_status s = dry_accel(c, io, 1, err);
    if (s) return s;
    dry_reverse(c, io, adj);
    return SID_OK;
}

sid_status sid_dry_vjp_taped(const sid_step_ctx *c, const sid_step_io *io, const double *rec, const sid_step_adj *adj, sid_error *err)
{
    struct sid_dry *D = c->ws->dry;
    const size_t nv = (size_t)c->m->nv, nf = (size_t)D->nf;
    sid_status s = sid_dry_prepare(c->m, c->theta, c->ws, err);
    if (s) return s;
    memcpy(D->a, rec, sizeof(double) * nv);
    memcpy(D->ac, rec + nv, sizeof(double) * nv);
    memcpy(D->Lh, rec + 2 * nv, sizeof(double) * nv * nv);
    memcpy(D->Lp, rec + 2 * nv + nv * nv, sizeof(double) * nv * nv);
    memcpy(D->f, rec + 2 * nv + 2 * nv * nv, sizeof(double) * nf);
    for (size_t j = 0; j < nf; j++) D->state[j] = (int)rec[2 * nv + 2 * nv * nv + nf + j];
    const sid_fd_point p = sid_step_point(c, io, c->h);
    sid_dry_restore(&p);
    dry_reverse(c, io, adj);
    return SID_OK;
}

/* Per direction: t from the forward-dynamics tangent at ac with M + B (hd = 0), fdot from it,
 * then the step's tangent at a with M + B + h D and E fdot added. */
sid_status sid_dry_jvp(const sid_step_ctx *c, const sid_step_io *io, const sid_step_dirs *dirs, sid_error *err)
{
    const double *q = io->q, *v = io->v, *thetadot = dirs->thetadot;
    const int ndir = dirs->ndir;
    double *qdot = dirs->qdot, *vdot = dirs->vdot, *scratch = dirs->scratch;
    const sid_model *m = c->m;
    sid_workspace *ws = c->ws;
    struct sid_dry *D = ws->dry;
    const double h = c->h;
    const int nq = m->nq, nv = m->nv, np = m->nparam;
    const size_t nn = sizeof(double) * (size_t)nv * (size_t)nv;
    double *t = scratch, *ad = scratch + nv, *fd = scratch + 2 * nv, *v1 = scratch + 3 * nv;   /* 4 nv of 9 nv */
    sid_status s = dry_accel(c, io, 1, err);
    if (s) return s;
    /* the forward dynamics with M + B (hd = 0: ac) and with M + B + h D (a), with the pushes'
     * (and any contact's) forces */
    const sid_fd_point p0 = sid_step_point(c, io, 0), ph = sid_step_point(c, io, h);
    for (int i = 0; i < nv; i++) v1[i] = v[i] + h * D->a[i];
    /* with many directions, the Jacobian rows of both forward dynamics once (fd.h) instead of
     * both RNEAs and tangents per direction */
    const int rows = c->cols && sid_fd_rows_pay(m, ndir);
    double *rows_c = ws->jrows, *rows_a = ws->jrows + (size_t)nv * (size_t)(nq + nv + c->ncols);
    if (rows) {
        memcpy(ws->M, D->Lp, nn);
        sid_fd_jvp_at(&p0, D->ac);
        sid_fd_jacobian_rows(&p0, D->ac, c->ncols, c->cols, rows_c);
        memcpy(ws->M, D->Lh, nn);
        sid_fd_jvp_at(&ph, D->a);
        sid_fd_jacobian_rows(&ph, D->a, c->ncols, c->cols, rows_a);
    }
    for (int d = 0; d < ndir; d++) {
        double *qd = qdot + (size_t)d * (size_t)nq, *vd = vdot + (size_t)d * (size_t)nv;
        const sid_state_dir dir = {qd, vd, thetadot + (size_t)d * (size_t)np};
        if (rows) {
            sid_fd_jvp_rows(m, rows_c, c->ncols, c->cols, &dir, t);
            sid_dry_jvp_solution(m, ws, t, &dir, fd);
            sid_fd_jvp_rows(m, rows_a, c->ncols, c->cols, &dir, ad);
        } else {
            memcpy(ws->M, D->Lp, nn);
            sid_fd_jvp_at(&p0, D->ac);
            sid_fd_jvp_dir(&p0, D->ac, &dir, t);
            sid_dry_jvp_solution(m, ws, t, &dir, fd);
            memcpy(ws->M, D->Lh, nn);
            sid_fd_jvp_at(&ph, D->a);
            sid_fd_jvp_dir(&ph, D->a, &dir, ad);
        }
        memset(D->e, 0, sizeof(double) * (size_t)nv);
        for (int j = 0; j < D->nf; j++) D->e[D->dof[j]] += D->sgn[j] * fd[j];
        sid_factor_solve(m, D->Lh, D->e);
        for (int i = 0; i < nv; i++) vd[i] += h * (ad[i] + D->e[i]);
        sid_integrate_q_jvp(m, q, v1, h, qd, vd);   /* a free joint's quaternion too */
    }
    return SID_OK;
}
