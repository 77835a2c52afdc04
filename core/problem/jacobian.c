/* jacobian.c — the residuals of one window and their exact Jacobian with respect to the free
 * parameters (and the window's start state), for LM, the covariance report and sysid excite:
 * forward-mode differentiation through every step (the step's jvp, step.h, which every step
 * variant has), all directions at once. Rows leave in blocks as the simulation reaches them
 * (jacobian.h), so a window of any length needs one block's memory. */
#include "jacobian.h"
#include "push.h"

#include "backlash.h"
#include "delay.h"
#include "torque_sensor.h"

#include <string.h>

/* The carving of sid_jac_work's buffer (c->base NULL: only counted). */
static void jac_carve(sid_jac_work *jw, const sid_problem *p, sid_carve *c)
{
    const size_t nq = (size_t)p->m->nq, nv = (size_t)p->m->nv, np = (size_t)p->m->nparam;
    const size_t nd = (size_t)jw->ncol;
    jw->r = sid_carve_take(c, (size_t)jw->cap, sizeof(double));
    jw->J = sid_carve_take(c, (size_t)jw->cap * nd, sizeof(double));
    jw->thd = sid_carve_take(c, nd * np, sizeof(double));
    jw->cols = sid_carve_take(c, nd + (size_t)p->m->nbody, sizeof(int));
    jw->qdot = sid_carve_take(c, nd * nq, sizeof(double));
    jw->vdot = sid_carve_take(c, nd * nv, sizeof(double));
    jw->scratch = sid_carve_take(c, nd * 9 * nv, sizeof(double));
}

int sid_jac_work_init(sid_jac_work *jw, const sid_problem *p, int nfree, int cap)
{
    const int nx = p->m->nq + p->m->nv, nxo = p->m->nqo + p->m->nvo;   /* start columns: logged coordinates */
    memset(jw, 0, sizeof *jw);
    jw->nfree = nfree;
    jw->ncol = nfree + (p->o.estimate_start ? nxo : 0);
    const int per = nx + (p->tau_on ? p->m->nv : 0);   /* with torque sensor rows (torque_sensor.h) */
    jw->cap = cap > per ? cap : per;   /* a sample's rows always fit */
    sid_carve c = {NULL, 0};
    jac_carve(jw, p, &c);
    if (!(jw->buf = sid_alloc(c.used))) return -1;
    c = (sid_carve){jw->buf, 0};
    jac_carve(jw, p, &c);
    return 0;
}

void sid_jac_work_free(sid_jac_work *jw)
{
    sid_free(jw->buf);
    memset(jw, 0, sizeof *jw);
}

/* The block's rows so far go to the consumer when a sample's rows might not fit. */
typedef struct {
    sid_jac_work *jw;
    sid_jac_rows_fn fn;
    void *ctx;
    int n, row0;   /* rows in the block, and the window row of its first */
} block;

static void block_make_room(block *b, int need)
{
    if (b->n + need <= b->jw->cap) return;
    b->fn(b->ctx, b->row0, b->n, b->jw->r, b->jw->J);
    b->row0 += b->n;
    b->n = 0;
}

static void block_flush(block *b)
{
    if (b->n) b->fn(b->ctx, b->row0, b->n, b->jw->r, b->jw->J);
    b->row0 += b->n;
    b->n = 0;
}

/* The sample's residual rows and their tangent rows into the block: the trajectory's (loss.c),
 * then the torque sensors' (torque_sensor.h; they reseed dirs->thetadot for the sample's
 * delayed command). */
static sid_status sample_rows(const sid_sample *smp, const double *x, const sid_sample_dirs *dirs, block *b,
                              sid_error *err)
{
    const size_t nd = (size_t)dirs->ndir;
    sid_rows out = {b->jw->r + b->n, b->jw->J + (size_t)b->n * nd, 0};
    sid_loss_residual_rows(smp, x, dirs, &out);
    b->n += out.n;
    out = (sid_rows){b->jw->r + b->n, b->jw->J + (size_t)b->n * nd, 0};
    const sid_status s = sid_tau_residual_rows(smp, x, dirs, &out, err);
    b->n += out.n;
    return s;
}

/* Forward mode: the tangents of all ncol directions carried through every step. */
static sid_status window_rows_tangent(const sid_window_pass *wp, sid_jac_work *jw, const int *idx, block *b,
                                      sid_error *err)
{
    const sid_problem *p = wp->p;
    lane *L = wp->L;
    const double *theta = wp->theta, *x0w = wp->x0w;
    const sid_model *m = p->m;
    const int nq = m->nq, nv = m->nv, nx = nq + nv, np = m->nparam, nfree = jw->nfree, ndir = jw->ncol;
    const size_t nd = (size_t)ndir;
    double *thd = jw->thd, *qdot = jw->qdot, *vdot = jw->vdot;
    memset(thd, 0, sizeof(double) * nd * (size_t)np);
    memset(qdot, 0, sizeof(double) * nd * (size_t)nq);
    memset(vdot, 0, sizeof(double) * nd * (size_t)nv);
    memset(jw->scratch, 0, sizeof(double) * nd * 9 * (size_t)nv);
    const window *win = wp->w;
    const sid_traj *tr = p->logs[win->log];
    double *x = L->x;
    sid_status s;
    sid_rollout_start_state(p, theta, win, x0w, x);
    for (int d = 0; d < nfree; d++) {
        thd[(size_t)d * (size_t)np + (size_t)idx[d]] = 1;
        /* a logged start q0 = logged q - offset moves with the offset */
        if (!x0w) sid_unmeasure_q_jvp(m, thd + (size_t)d * (size_t)np, qdot + (size_t)d * (size_t)nq);
    }
    jw->ncols = sid_delay_jvp_cols(m, nfree, idx, jw->cols);
    for (int j = 0; j < ndir - nfree; j++)   /* a logged coordinate, and the motor side that starts at it */
        sid_backlash_seed(m, j, qdot + (size_t)(nfree + j) * (size_t)nq, vdot + (size_t)(nfree + j) * (size_t)nv);
    const sid_sample_dirs dirs = {ndir, nfree, idx, thd, qdot, vdot};
    if (win->ra == win->k0) {
        block_make_room(b, nx + sid_tau_sample_rows(p, tr));
        const sid_sample smp = {p, L, theta, tr, win->k0};
        if ((s = sample_rows(&smp, x, &dirs, b, err))) return s;
    }
    for (int k = win->k0; k < win->k1; k++) {
        double h;
        const int nsub = sid_interval_substeps(&p->o.sim, tr, k, &h);
        const double *u = sid_delay_u(m, theta, tr, k, L->ws);
        sid_step_ctx c = sid_step_context(p->step, m, theta, L->ws, h);
        c.cols = jw->cols, c.ncols = jw->ncols;
        sid_delay_jvp_seed(m, theta, tr, k, ndir, nfree, idx, thd);
        L->ws->push = sid_push_at(tr, m->nbody, k);   /* the interval's pushes, held */
        for (int j = 0; j < nsub; j++) {
            const sid_step_io io = {x, x + nq, u, L->x1, L->x1 + nq, NULL};
            const sid_step_dirs step_dirs = {ndir, thd, qdot, vdot, jw->scratch};
            if ((s = sid_step_tangent_take(p->step, &c, &io, &step_dirs, err))) {
                L->ws->push = NULL;
                return s;
            }
            memcpy(x, L->x1, sizeof(double) * (size_t)nx);
        }
        L->ws->push = NULL;
        if (k + 1 <= win->rb) {
            block_make_room(b, nx + sid_tau_sample_rows(p, tr));
            const sid_sample smp = {p, L, theta, tr, k + 1};
            if ((s = sample_rows(&smp, x, &dirs, b, err))) return s;
        }
    }
    return SID_OK;
}

sid_status sid_window_jacobian_rows(const sid_window_pass *wp, sid_jac_work *jw, const int *idx, sid_jac_rows_fn fn,
                                    void *ctx, sid_error *err)
{
    block b = {jw, fn, ctx, 0, 0};
    const sid_status s = window_rows_tangent(wp, jw, idx, &b, err);
    if (s) return s;
    block_flush(&b);
    return SID_OK;
}

/* The whole window into the caller's r and J, for tests and small windows. */
typedef struct {
    double *r, *J;
    int ncol;
} whole;

static void copy_rows(void *ctx, int row0, int rows, const double *r, const double *J)
{
    const whole *wh = ctx;
    memcpy(wh->r + row0, r, sizeof(double) * (size_t)rows);
    memcpy(wh->J + (size_t)row0 * (size_t)wh->ncol, J, sizeof(double) * (size_t)rows * (size_t)wh->ncol);
}

sid_status sid_problem_window_jacobian(sid_problem *p, const double *theta, const double *x0w, int w, int nfree,
                                       const int *idx, double *r, double *J, sid_error *err)
{
    sid_jac_work jw;
    if (sid_jac_work_init(&jw, p, nfree, 0)) return sid_error_set(err, SID_ERR_NOMEM, "out of memory");
    whole wh = {r, J, jw.ncol};
    const sid_window_pass wp = {p, &p->lane[0], theta, &p->win[w], x0w};
    const sid_status s = sid_window_jacobian_rows(&wp, &jw, idx, copy_rows, &wh, err);
    sid_free(jw.buf);
    return s;
}
