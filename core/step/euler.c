/* euler.c — MuJoCo's semi-implicit Euler step with implicit joint damping (docs/adjoint.md):
 *   (M + B + h D) a = F - c - D v (+ J^T fext);  v1 = v + h a;  q1 = q (+) h v1
 * Its tape record is the acceleration a and the factor L of A = M + B + h D, so that the
 * adjoint forms no mass matrix. */
#include "fd.h"
#include "step.h"

#include <string.h>

int sid_euler_record_size(const sid_model *m) { return m->nv + m->nv * m->nv; }

sid_status sid_euler_step(const sid_step_ctx *c, const double *q, const double *v, const double *u, double *q1,
                          double *v1, double *rec, sid_error *err)
{
    const sid_model *m = c->m;
    const double *theta = c->theta;
    sid_workspace *ws = c->ws;
    const double h = c->h;
    const int nv = m->nv;
    double *a = ws->rk;
    sid_status s;
    if ((s = sid_fd(m, theta, ws, c->fx, q, v, u, h, a, err))) return s;
    for (int i = 0; i < nv; i++) v1[i] = v[i] + h * a[i];
    sid_integrate_q(m, q, v1, h, q1);
    if (rec) {
        memcpy(rec, a, sizeof(double) * (size_t)nv);
        memcpy(rec + nv, ws->M, sizeof(double) * (size_t)nv * (size_t)nv);
    }
    return SID_OK;
}

void sid_euler_after_jvp(const sid_step_ctx *c, const double *q, const double *v, double *q1, double *v1)
{
    const double *a = c->ws->rk, h = c->h;   /* sid_fd's a, as sid_euler_step's (sid_fd_jvp_prepare) */
    for (int i = 0; i < c->m->nv; i++) v1[i] = v[i] + h * a[i];
    sid_integrate_q(c->m, q, v1, h, q1);
}

/* The step's adjoint given its acceleration a and the factor L of A (step.h). */
void sid_euler_reverse(const sid_step_ctx *c, const double *q, const double *v, const double *u, const double *a,
                          const double *L, const double *q1bar, const double *v1bar, double *qbar, double *vbar,
                          double *thetabar)
{
    const sid_model *m = c->m;
    const double *theta = c->theta;
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
    sid_fd_vjp_factored(m, theta, ws, c->fx, q, v, u, h, a, L, abar, qbar, vbar, thetabar);
}

sid_status sid_euler_vjp_taped(const sid_step_ctx *c, const double *q, const double *v, const double *u,
                               const double *rec, const double *q1bar, const double *v1bar, double *qbar, double *vbar,
                               double *thetabar, sid_error *err)
{
    (void)err;
    sid_euler_reverse(c, q, v, u, rec, rec + c->m->nv, q1bar, v1bar, qbar, vbar, thetabar);
    return SID_OK;
}

sid_status sid_euler_vjp(const sid_step_ctx *c, const double *q, const double *v, const double *u, const double *q1bar,
                         const double *v1bar, double *qbar, double *vbar, double *thetabar, sid_error *err)
{
    double *a = c->ws->rk;
    sid_status s = sid_fd(c->m, c->theta, c->ws, c->fx, q, v, u, c->h, a, err);
    if (s) return s;
    sid_euler_reverse(c, q, v, u, a, c->ws->M, q1bar, v1bar, qbar, vbar, thetabar);
    return SID_OK;
}

sid_status sid_euler_jvp(const sid_step_ctx *c, const double *q, const double *v, const double *u, int ndir,
                         const double *thetadot, double *qdot, double *vdot, double *scratch, sid_error *err)
{
    const sid_model *m = c->m;
    const double *theta = c->theta;
    sid_workspace *ws = c->ws;
    const double h = c->h;
    const int nq = m->nq, nv = m->nv, np = m->nparam;
    double *a = ws->rk, *ad = a + nv, *v1 = ad + nv;   /* the step needs no scratch of its own */
    (void)scratch;
    sid_status s = sid_fd_jvp_prepare(m, theta, ws, c->fx, q, v, u, h, a, err);
    if (s) return s;
    for (int i = 0; i < nv; i++) v1[i] = v[i] + h * a[i];
    const int rows = c->cols && sid_fd_rows_pay(m, ndir);
    if (rows) sid_fd_jacobian_rows(m, theta, ws, c->fx, q, v, u, h, a, c->ncols, c->cols, ws->jrows);
    /* adot from A adot = Rdot; vdot1 = vdot + h adot, qdot1 = (q (+) h v1)' */
    for (int d = 0; d < ndir; d++) {
        double *qd = qdot + (size_t)d * (size_t)nq, *vd = vdot + (size_t)d * (size_t)nv;
        const double *thd = thetadot + (size_t)d * (size_t)np;
        if (rows) sid_fd_jvp_rows(m, ws->jrows, c->ncols, c->cols, qd, vd, thd, ad);
        else sid_fd_jvp_dir(m, theta, ws, c->fx, q, v, u, h, a, qd, vd, thd, ad);
        for (int i = 0; i < nv; i++) vd[i] += h * ad[i];
        sid_integrate_q_jvp(m, q, v1, h, qd, vd);
    }
    return SID_OK;
}
