/* euler.c — MuJoCo's semi-implicit Euler step with implicit joint damping (docs/adjoint.md):
 *   (M + B + h D) a = F - c - D v (+ J^T fext);  v1 = v + h a;  q1 = q (+) h v1
 * Its tape record is the acceleration a and the factor L of A = M + B + h D, so that the
 * adjoint forms no mass matrix. */
#include "fd.h"
#include "step.h"

#include <string.h>

int sid_euler_record_size(const sid_model *m) { return m->nv + m->nv * m->nv; }

sid_status sid_euler_step(const sid_step_ctx *c, const sid_step_io *io, sid_error *err)
{
    const double *q = io->q, *v = io->v;
    double *q1 = io->q1, *v1 = io->v1, *rec = io->rec;
    const sid_model *m = c->m;
    sid_workspace *ws = c->ws;
    const double h = c->h;
    const int nv = m->nv;
    double *a = ws->rk;
    sid_status s;
    const sid_fd_point at = sid_step_point(c, io, h);
    if ((s = sid_fd(&at, a, err))) return s;
    for (int i = 0; i < nv; i++) v1[i] = v[i] + h * a[i];
    sid_integrate_q(m, q, v1, h, q1);
    if (rec) {
        memcpy(rec, a, sizeof(double) * (size_t)nv);
        memcpy(rec + nv, ws->M, sizeof(double) * (size_t)nv * (size_t)nv);
    }
    return SID_OK;
}

void sid_euler_after_jvp(const sid_step_ctx *c, const sid_step_io *io)
{
    const double *q = io->q, *v = io->v;
    double *q1 = io->q1, *v1 = io->v1;
    const double *a = c->ws->rk, h = c->h;   /* sid_fd's a, as sid_euler_step's (sid_fd_jvp_prepare) */
    for (int i = 0; i < c->m->nv; i++) v1[i] = v[i] + h * a[i];
    sid_integrate_q(c->m, q, v1, h, q1);
}

/* The step's adjoint given its acceleration a and the factor L of A (step.h). */
void sid_euler_reverse(const sid_step_ctx *c, const sid_step_io *io, const double *a, const double *L,
                       const sid_step_adj *adj)
{
    const double *q = io->q, *v = io->v, *q1bar = adj->q1bar, *v1bar = adj->v1bar;
    double *qbar = adj->bar.qbar, *vbar = adj->bar.vbar;
    const sid_model *m = c->m;
    sid_workspace *ws = c->ws;
    const double h = c->h;
    const int nv = m->nv;
    double *abar = ws->rkbar, *v1 = abar + nv;
    /* q1 = q (+) h v1, v1 = v + h a */
    for (int i = 0; i < nv; i++) v1[i] = v[i] + h * a[i], abar[i] = v1bar[i];
    sid_integrate_q_vjp(m, q, v1, h, q1bar, qbar, abar);
    for (int i = 0; i < nv; i++) {
        vbar[i] += abar[i];
        abar[i] *= h;
    }
    const sid_fd_point at = sid_step_point(c, io, h);
    sid_fd_vjp_factored(&at, a, L, abar, &adj->bar);
}

sid_status sid_euler_vjp_taped(const sid_step_ctx *c, const sid_step_io *io, const double *rec, const sid_step_adj *adj, sid_error *err)
{
    (void)err;
    sid_euler_reverse(c, io, rec, rec + c->m->nv, adj);
    return SID_OK;
}

sid_status sid_euler_vjp(const sid_step_ctx *c, const sid_step_io *io, const sid_step_adj *adj, sid_error *err)
{
    double *a = c->ws->rk;
    const sid_fd_point at = sid_step_point(c, io, c->h);
    sid_status s = sid_fd(&at, a, err);
    if (s) return s;
    sid_euler_reverse(c, io, a, c->ws->M, adj);
    return SID_OK;
}

sid_status sid_euler_jvp(const sid_step_ctx *c, const sid_step_io *io, const sid_step_dirs *dirs, sid_error *err)
{
    const double *q = io->q, *v = io->v, *thetadot = dirs->thetadot;
    const int ndir = dirs->ndir;
    double *qdot = dirs->qdot, *vdot = dirs->vdot;   /* the step needs no scratch of its own */
    const sid_model *m = c->m;
    sid_workspace *ws = c->ws;
    const double h = c->h;
    const int nq = m->nq, nv = m->nv, np = m->nparam;
    double *a = ws->rk, *ad = a + nv, *v1 = ad + nv;
    const sid_fd_point at = sid_step_point(c, io, h);
    sid_status s = sid_fd_jvp_prepare(&at, a, err);
    if (s) return s;
    for (int i = 0; i < nv; i++) v1[i] = v[i] + h * a[i];
    const int rows = c->cols && sid_fd_rows_pay(m, ndir);
    if (rows) sid_fd_jacobian_rows(&at, a, c->ncols, c->cols, ws->jrows);
    /* adot from A adot = Rdot; vdot1 = vdot + h adot, qdot1 = (q (+) h v1)' */
    for (int d = 0; d < ndir; d++) {
        double *qd = qdot + (size_t)d * (size_t)nq, *vd = vdot + (size_t)d * (size_t)nv;
        const double *thd = thetadot + (size_t)d * (size_t)np;
        const sid_state_dir dir = {qd, vd, thd};
        if (rows) sid_fd_jvp_rows(m, ws->jrows, c->ncols, c->cols, &dir, ad);
        else sid_fd_jvp_dir(&at, a, &dir, ad);
        for (int i = 0; i < nv; i++) vd[i] += h * ad[i];
        sid_integrate_q_jvp(m, q, v1, h, qd, vd);
    }
    return SID_OK;
}
