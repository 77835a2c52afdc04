/* loss.c — the windowed trajectory loss and its gradient by the adjoint method.
 *
 * A problem binds a model to logs cut into windows. For each window the forward pass
 * simulates from the window's start state and adds the residuals of its samples to the loss.
 * With a gradient wanted, the forward pass also tapes every step's state with what its adjoint
 * needs (accelerations and L^T L factors of each Euler step or RK4 stage), so that the
 * backward pass never forms a mass matrix; it sweeps the
 * steps in reverse (sid_euler_vjp_taped, sid_rk4_vjp_taped), adding each sample's
 * residual seed dL/dx_k to the state adjoint as it passes. A window whose tape would exceed
 * TAPE_BUDGET_BYTES keeps a checkpoint state every C = sqrt(N) samples instead, and the
 * backward pass re-simulates one segment at a time onto the tape: memory O(N/C + C), one
 * extra forward pass. Either way the cost does not depend on the number of parameters
 * (ADJOINT.md, "Across a window").
 *
 * Start states. By default a window starts from the logged state and its residuals are the
 * samples after the start. Logged states are noisy, and noise in a start state biases every
 * parameter fitted through it; with estimate_start the start states are unknowns of their own
 * (multiple shooting): a window then starts from x0[w], and its residuals run from its start
 * sample up to, not including, the next window's start (the last window of a log keeps its
 * end sample), so every sample is counted once. */
#include "workspace.h"

#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* Windows are independent, so they run on all cores. For results that do not depend on the
 * number of threads, windows are grouped into at most MAX_CHUNKS chunks fixed by the problem
 * alone; a chunk's windows add up in order into the chunk's own sums, and the chunks add up
 * in order at the end. MAX_CHUNKS bounds the per-chunk gradient buffers. */
#define MAX_CHUNKS 64

/* The scratch of one thread: workspace, checkpoints, tape and state buffers. */
typedef struct {
    sid_workspace *ws;
    double *cp;              /* (max_cp x (nq + nv)) checkpoint states of the current window */
    double *tape;            /* ((max_seg_steps + 1) x stride) step states of one segment */
    int *tape_sample;        /* (cp_every + 1) tape index of each sample of the segment */
    double *x, *x1, *xbar, *xbar1;   /* (nq + nv) each */
} lane;

typedef struct {
    int log, k0, k1;   /* log and samples [k0, k1] it simulates */
    int ra, rb;        /* samples [ra, rb] that give residuals */
} window;

struct sid_problem {
    const sid_model *m;
    const sid_traj *const *logs;
    int nlog;
    sid_loss_opts o;
    int nwin, nres, cp_every;
    window *win;
    double *sq, *sqd;        /* (nq), (nv) residual scales */
    int max_seg_steps, max_cp;
    int stride;              /* doubles per tape entry: state, and for Euler a and the factor L */
    int nlane, nchunk, chunk_windows;
    lane *lane;              /* (nlane) one per thread */
    double *chunk_sum;       /* (nchunk) loss sums */
    double *chunk_grad;      /* (nchunk x nparam) gradient sums */
    double *chunk_sse;       /* (nchunk x (nq + nv)) squared errors for the RMSE */
    sid_status *chunk_status;
    sid_error *chunk_err;
};

void sid_loss_opts_defaults(sid_loss_opts *o)
{
    o->window = 0.5;
    o->weight_q = 1.0;
    o->weight_qd = 0.1;
    sid_sim_opts_defaults(&o->sim);
    o->checkpoint = 0;
    o->estimate_start = 0;
    o->threads = 0;
    o->start_velocity_from_q = 0;
}

int sid_problem_default_threads(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

static int lane_init(lane *L, const sid_model *m, const sid_problem *p)
{
    const size_t nx = (size_t)(m->nq + m->nv);
    L->ws = sid_workspace_create(m);
    L->cp = sid_alloc(sizeof(double) * nx * (size_t)p->max_cp);
    L->tape = sid_alloc(sizeof(double) * (size_t)p->stride * (size_t)(p->max_seg_steps + 1));
    L->tape_sample = sid_alloc(sizeof(int) * (size_t)(p->cp_every + 1));
    L->x = sid_alloc(sizeof(double) * 4 * nx);
    if (!L->ws || !L->cp || !L->tape || !L->tape_sample || !L->x) return -1;
    L->x1 = L->x + nx;
    L->xbar = L->x1 + nx;
    L->xbar1 = L->xbar + nx;
    return 0;
}

static void lane_free(lane *L)
{
    sid_workspace_free(L->ws);
    sid_free(L->cp);
    sid_free(L->tape);
    sid_free(L->tape_sample);
    sid_free(L->x);
}

const sid_model *sid_problem_model(const sid_problem *p) { return p->m; }
int sid_problem_nwindows(const sid_problem *p) { return p->nwin; }
int sid_problem_nresiduals(const sid_problem *p) { return p->nres; }
const double *sid_problem_scale_q(const sid_problem *p) { return p->sq; }
const double *sid_problem_scale_qd(const sid_problem *p) { return p->sqd; }

size_t sid_problem_tape_bytes(const sid_problem *p)
{
    const size_t nx = (size_t)(p->m->nq + p->m->nv);
    return sizeof(double) * (nx * (size_t)p->max_cp + (size_t)p->stride * ((size_t)p->max_seg_steps + 1));
}

/* Windows whose whole tape fits this budget are taped in the forward pass and never
 * re-simulated; longer ones keep checkpoints (sqrt N of them) instead. */
#define TAPE_BUDGET_BYTES ((size_t)32 << 20)

/* Cut log l into windows of o->window seconds; returns how many (writes them if w != NULL). */
static int cut_windows(const sid_traj *tr, int l, double len, window *w)
{
    int n = 0;
    for (int k0 = 0; k0 < tr->n - 1;) {
        int k1 = k0 + 1;
        if (len <= 0) k1 = tr->n - 1;
        else
            while (k1 < tr->n - 1 && tr->t[k1 + 1] - tr->t[k0] <= len * (1 + 1e-9)) k1++;
        if (w) w[n] = (window){l, k0, k1, k0 + 1, k1};
        n++;
        k0 = k1;
    }
    return n;
}

/* Standard deviation of column i over all logs, floored so a still joint cannot blow up. */
static double column_scale(const sid_traj *const *logs, int nlog, int velocity, int i)
{
    double s1 = 0, s2 = 0;
    long n = 0;
    for (int l = 0; l < nlog; l++) {
        const sid_traj *tr = logs[l];
        const double *x = velocity ? tr->qd : tr->q;
        const int stride = velocity ? tr->nv : tr->nq;
        if (!x) continue;
        for (int k = 0; k < tr->n; k++) {
            const double y = x[(size_t)k * (size_t)stride + (size_t)i];
            s1 += y;
            s2 += y * y;
            n++;
        }
    }
    if (n == 0) return 1;
    const double mean = s1 / (double)n, var = s2 / (double)n - mean * mean;
    const double sd = var > 0 ? sqrt(var) : 0;
    return sd > 1e-3 ? sd : 1e-3;
}

sid_status sid_problem_create(sid_problem **out, const sid_model *m, const sid_traj *const *logs, int nlog,
                              const sid_loss_opts *o, sid_error *err)
{
    *out = NULL;
    const int nq = m->nq, nv = m->nv, nx = nq + nv;
    if (nlog < 1) return sid_error_set(err, SID_ERR_INPUT, "no logs to fit");
    if (!(o->window >= 0)) return sid_error_set(err, SID_ERR_INPUT, "window: expected a non-negative number of seconds");
    if (!(o->weight_q >= 0) || !(o->weight_qd >= 0) || o->weight_q + o->weight_qd <= 0)
        return sid_error_set(err, SID_ERR_INPUT, "weights: expected non-negative q and qd weights, not both zero");
    for (int l = 0; l < nlog; l++) {
        if (logs[l]->nq != nq || logs[l]->nv != nv)
            return sid_error_set(err, SID_ERR_INPUT, "log %d: %d positions and %d velocities, the robot has %d and %d",
                                 l + 1, logs[l]->nq, logs[l]->nv, nq, nv);
        if (logs[l]->n < 2) return sid_error_set(err, SID_ERR_INPUT, "log %d: expected at least 2 samples", l + 1);
    }
    sid_problem *p = sid_alloc(sizeof *p);
    if (!p) return sid_error_set(err, SID_ERR_NOMEM, "out of memory");
    p->m = m;
    p->logs = logs;
    p->nlog = nlog;
    p->o = *o;
    for (int l = 0; l < nlog; l++) p->nwin += cut_windows(logs[l], l, o->window, NULL);
    p->win = sid_alloc(sizeof(window) * (size_t)p->nwin);
    p->sq = sid_alloc(sizeof(double) * (size_t)(nq + 1));
    p->sqd = sid_alloc(sizeof(double) * (size_t)(nv + 1));
    if (!p->win || !p->sq || !p->sqd) goto nomem;
    for (int l = 0, w = 0; l < nlog; l++) w += cut_windows(logs[l], l, o->window, p->win + w);
    for (int w = 0; w < p->nwin; w++) {
        window *win = &p->win[w];
        const int last = w == p->nwin - 1 || p->win[w + 1].log != win->log;
        win->ra = o->estimate_start ? win->k0 : win->k0 + 1;
        win->rb = o->estimate_start && !last ? win->k1 - 1 : win->k1;
    }
    for (int i = 0; i < nq; i++) p->sq[i] = column_scale(logs, nlog, 0, i);
    for (int i = 0; i < nv; i++) p->sqd[i] = column_scale(logs, nlog, 1, i);

    /* Size the tape: samples between checkpoints, and the most steps any segment needs. */
    /* tape entry: the state, then what the step's adjoint needs so that nothing is recomputed:
     * Euler: a and the factor; RK4: the stage states and accelerations and the four factors */
    p->stride = nx + (o->sim.integrator == SID_EULER ? nv + nv * nv : sid_rk_size(m) + 4 * nv * nv);
    int longest = 1, most_steps = 1;
    for (int w = 0; w < p->nwin; w++) {
        const sid_traj *tr = logs[p->win[w].log];
        if (p->win[w].k1 - p->win[w].k0 > longest) longest = p->win[w].k1 - p->win[w].k0;
        int steps = 0;
        for (int k = p->win[w].k0; k < p->win[w].k1; k++) steps += sid_substeps(&o->sim, tr->t[k + 1] - tr->t[k]);
        if (steps > most_steps) most_steps = steps;
    }
    const int whole = sizeof(double) * (size_t)p->stride * (size_t)(most_steps + 1) <= TAPE_BUDGET_BYTES;
    p->cp_every = o->checkpoint > 0 ? o->checkpoint : whole ? longest : (int)ceil(sqrt((double)longest));
    if (p->cp_every > longest) p->cp_every = longest;
    p->max_cp = (longest + p->cp_every - 1) / p->cp_every + 1;
    for (int w = 0; w < p->nwin; w++) {
        const sid_traj *tr = logs[p->win[w].log];
        for (int k = p->win[w].k0; k < p->win[w].k1; k += p->cp_every) {
            int steps = 0;
            for (int j = k; j < k + p->cp_every && j < p->win[w].k1; j++) steps += sid_substeps(&o->sim, tr->t[j + 1] - tr->t[j]);
            if (steps > p->max_seg_steps) p->max_seg_steps = steps;
        }
        p->nres += (p->win[w].rb - p->win[w].ra + 1) * ((o->weight_q > 0 ? nq : 0) + (o->weight_qd > 0 && tr->qd ? nv : 0));
    }
    p->chunk_windows = (p->nwin + MAX_CHUNKS - 1) / MAX_CHUNKS;
    p->nchunk = (p->nwin + p->chunk_windows - 1) / p->chunk_windows;
    p->nlane = o->threads > 0 ? o->threads : sid_problem_default_threads();
    if (p->nlane > p->nchunk) p->nlane = p->nchunk;
    if (p->nlane < 1) p->nlane = 1;
    p->lane = sid_alloc(sizeof(lane) * (size_t)p->nlane);
    p->chunk_sum = sid_alloc(sizeof(double) * (size_t)p->nchunk);
    p->chunk_grad = sid_alloc(sizeof(double) * (size_t)p->nchunk * (size_t)(m->nparam > 0 ? m->nparam : 1));
    p->chunk_sse = sid_alloc(sizeof(double) * (size_t)p->nchunk * (size_t)nx);
    p->chunk_status = sid_alloc(sizeof(sid_status) * (size_t)p->nchunk);
    p->chunk_err = sid_alloc(sizeof(sid_error) * (size_t)p->nchunk);
    if (!p->lane || !p->chunk_sum || !p->chunk_grad || !p->chunk_sse || !p->chunk_status || !p->chunk_err) goto nomem;
    for (int i = 0; i < p->nlane; i++)
        if (lane_init(&p->lane[i], m, p)) goto nomem;
    if (p->nres == 0) {
        sid_problem_free(p);
        return sid_error_set(err, SID_ERR_INPUT, "no residuals: the logs have no velocities and the q weight is 0");
    }
    *out = p;
    return SID_OK;
nomem:
    sid_problem_free(p);
    return sid_error_set(err, SID_ERR_NOMEM, "out of memory");
}

void sid_problem_free(sid_problem *p)
{
    if (!p) return;
    sid_free(p->win);
    sid_free(p->sq);
    sid_free(p->sqd);
    for (int i = 0; p->lane && i < p->nlane; i++) lane_free(&p->lane[i]);
    sid_free(p->lane);
    sid_free(p->chunk_sum);
    sid_free(p->chunk_grad);
    sid_free(p->chunk_sse);
    sid_free(p->chunk_status);
    sid_free(p->chunk_err);
    sid_free(p);
}

/* Error of the simulated q against the logged one at a sample: q + offset - q_log; for a free
 * joint's quaternion, against the logged sign nearer the simulated one (q and -q are the same
 * orientation), so the error is smooth where it is small. */
static void q_error(const sid_model *m, const double *theta, const double *x, const double *ql, double *d)
{
    for (int i = 0; i < m->nq; i++) d[i] = x[i] - ql[i];
    for (int b = 1; b < m->nbody; b++) {
        const sid_body *bd = &m->body[b];
        if (bd->p_dof >= 0) d[bd->qadr] += theta[bd->p_dof + P_OFFSET];
        if (bd->type != SID_JOINT_FREE) continue;
        const double *qs = x + bd->qadr + 3, *qm = ql + bd->qadr + 3;
        if (qs[0] * qm[0] + qs[1] * qm[1] + qs[2] * qm[2] + qs[3] * qm[3] < 0)
            for (int j = 0; j < 4; j++) d[bd->qadr + 3 + j] = qs[j] + qm[j];
    }
}

/* Residual terms of sample k at simulated state x = (q, v): adds 1/2 sum w (delta / s)^2 to
 * *sum, squared raw errors to sse_q / sse_qd (if not NULL) and, with xbar, the seed
 * d(sum)/dx to xbar and d(sum)/d(offset) to thetabar. */
static void residual(const sid_problem *p, const double *theta, const sid_traj *tr, int k, const double *x,
                     double *sum, double *sse_q, double *sse_qd, double *xbar, double *thetabar)
{
    const sid_model *m = p->m;
    const int nq = m->nq, nv = m->nv;
    const double *v = x + nq;
    double d[7 * SID_MAX_JOINTS];
    q_error(m, theta, x, tr->q + (size_t)k * (size_t)nq, d);
    for (int i = 0; i < nq; i++) {
        if (sse_q) sse_q[i] += d[i] * d[i];
        if (p->o.weight_q <= 0) continue;
        const double g = p->o.weight_q / (p->sq[i] * p->sq[i]);
        *sum += 0.5 * g * d[i] * d[i];
        if (xbar) xbar[i] += g * d[i];
    }
    if (xbar && p->o.weight_q > 0)
        for (int b = 1; b < m->nbody; b++) {
            const sid_body *bd = &m->body[b];
            if (bd->p_dof >= 0) thetabar[bd->p_dof + P_OFFSET] += p->o.weight_q / (p->sq[bd->qadr] * p->sq[bd->qadr]) * d[bd->qadr];
        }
    if (!tr->qd) return;
    const double *vl = tr->qd + (size_t)k * (size_t)nv;
    for (int i = 0; i < nv; i++) {
        const double dv = v[i] - vl[i];
        if (sse_qd) sse_qd[i] += dv * dv;
        if (p->o.weight_qd <= 0) continue;
        const double g = p->o.weight_qd / (p->sqd[i] * p->sqd[i]);
        *sum += 0.5 * g * dv * dv;
        if (xbar) xbar[nq + i] += g * dv;
    }
}

/* Simulate samples [ka, kb] of tr from the state in x (overwritten with the state at kb).
 * With tape, record the state before every step and tape_sample[k - ka] for each sample. */
static sid_status simulate_span(const sid_problem *p, lane *L, const double *theta, const window *w, int ka, int kb,
                                double *x, double *tape, double *sum, double *sse_q, double *sse_qd, sid_error *err)
{
    const sid_model *m = p->m;
    const int l = w->log;
    const sid_traj *tr = p->logs[l];
    const int nq = m->nq, nv = m->nv, nx = nq + nv;
    int e = 0;
    for (int k = ka; k < kb; k++) {
        const double dt = tr->t[k + 1] - tr->t[k];
        const int nsub = sid_substeps(&p->o.sim, dt);
        const double h = dt / nsub, *u = tr->u + (size_t)k * (size_t)nv;
        if (tape) L->tape_sample[k - ka] = e;
        for (int j = 0; j < nsub; j++, e++) {
            double *entry = tape ? tape + (size_t)e * (size_t)p->stride : NULL;
            if (tape) memcpy(entry, x, sizeof(double) * (size_t)nx);
            sid_status s = sid_step(m, theta, L->ws, p->o.sim.integrator, h, x, x + nq, u, L->x1, L->x1 + nq, err);
            if (s) {
                sid_error_prefix(err, "log %d, t = %g s", l + 1, tr->t[k]);
                return s;
            }
            if (tape && p->o.sim.integrator == SID_EULER) {
                memcpy(entry + nx, L->ws->rk, sizeof(double) * (size_t)nv);
                memcpy(entry + nx + nv, L->ws->M, sizeof(double) * (size_t)nv * (size_t)nv);
            } else if (tape) {
                memcpy(entry + nx, L->ws->rk, sizeof(double) * (size_t)sid_rk_size(m));
                memcpy(entry + nx + sid_rk_size(m), L->ws->Lst, sizeof(double) * 4 * (size_t)nv * (size_t)nv);
            }
            memcpy(x, L->x1, sizeof(double) * (size_t)nx);
        }
        if (sum && k + 1 <= w->rb) residual(p, theta, tr, k + 1, x, sum, sse_q, sse_qd, NULL, NULL);
    }
    if (tape) {
        L->tape_sample[kb - ka] = e;
        memcpy(tape + (size_t)e * (size_t)p->stride, x, sizeof(double) * (size_t)nx);
    }
    return SID_OK;
}

/* The start state of window w: x0w when given, else the logged state (q = logged q minus the
 * offsets, v = logged or smoothed qd). */
static void start_state(const sid_problem *p, const double *theta, const window *w, const double *x0w, double *x)
{
    const sid_traj *tr = p->logs[w->log];
    if (x0w) {
        memcpy(x, x0w, sizeof(double) * (size_t)(p->m->nq + p->m->nv));
        return;
    }
    sid_traj_state_q(p->m, theta, tr, w->k0, x);
    if (p->o.start_velocity_from_q) sid_traj_velocity_from_q(p->m, tr, w->k0, x + p->m->nq);
    else sid_traj_velocity(p->m, tr, w->k0, x + p->m->nq);
}

void sid_problem_start_states(const sid_problem *p, const double *theta, double *x0)
{
    const size_t nx = (size_t)(p->m->nq + p->m->nv);
    for (int w = 0; w < p->nwin; w++) start_state(p, theta, &p->win[w], NULL, x0 + (size_t)w * nx);
}

int sid_problem_estimates_start(const sid_problem *p) { return p->o.estimate_start; }

/* Loss sum of one window; with thetabar, accumulate its gradient (and the start state's). */
static sid_status window_loss(const sid_problem *p, lane *L, const double *theta, const window *w, const double *x0w,
                              double *sum, double *sse_q, double *sse_qd, double *thetabar, double *x0bar, sid_error *err)
{
    const sid_model *m = p->m;
    const sid_traj *tr = p->logs[w->log];
    const int nq = m->nq, nv = m->nv, nx = nq + nv, C = p->cp_every;
    double *x = L->x;
    sid_status s;
    start_state(p, theta, w, x0w, x);
    if (w->ra == w->k0) residual(p, theta, tr, w->k0, x, sum, sse_q, sse_qd, NULL, NULL);
    /* a window of one segment is taped right away and not simulated again */
    const int single = w->k1 - w->k0 <= C;
    int nseg = 0;
    for (int k = w->k0; k < w->k1; k += C, nseg++) {
        memcpy(L->cp + (size_t)nseg * (size_t)nx, x, sizeof(double) * (size_t)nx);
        const int kb = k + C < w->k1 ? k + C : w->k1;
        if ((s = simulate_span(p, L, theta, w, k, kb, x, single && thetabar ? L->tape : NULL, sum, sse_q, sse_qd, err)))
            return s;
    }
    if (!thetabar) return SID_OK;

    double *xbar = L->xbar, *xbar1 = L->xbar1;
    double dummy = 0;
    memset(xbar, 0, sizeof(double) * (size_t)nx);
    for (int seg = nseg - 1; seg >= 0; seg--) {
        const int ka = w->k0 + seg * C, kb = ka + C < w->k1 ? ka + C : w->k1;
        memcpy(x, L->cp + (size_t)seg * (size_t)nx, sizeof(double) * (size_t)nx);
        if (!single && (s = simulate_span(p, L, theta, w, ka, kb, x, L->tape, NULL, NULL, NULL, err))) return s;
        for (int k = kb - 1; k >= ka; k--) {
            /* the state at sample k + 1 carries its own residual seed */
            if (k + 1 <= w->rb)
                residual(p, theta, tr, k + 1, L->tape + (size_t)L->tape_sample[k + 1 - ka] * (size_t)p->stride, &dummy,
                         NULL, NULL, xbar, thetabar);
            const double dt = tr->t[k + 1] - tr->t[k];
            const int nsub = sid_substeps(&p->o.sim, dt);
            const double h = dt / nsub, *u = tr->u + (size_t)k * (size_t)nv;
            for (int j = nsub - 1; j >= 0; j--) {
                const double *xs = L->tape + (size_t)(L->tape_sample[k - ka] + j) * (size_t)p->stride;
                memset(xbar1, 0, sizeof(double) * (size_t)nx);
                if (m->nsphere && m->contact == SID_CONTACT_HARD) {   /* the tape cannot replay a contact solve */
                    if ((s = sid_step_vjp(m, theta, L->ws, SID_EULER, h, xs, xs + nq, u, xbar, xbar + nq, xbar1, xbar1 + nq,
                                          thetabar, err)))
                        return s;
                } else if (p->o.sim.integrator == SID_EULER)
                    sid_euler_vjp_taped(m, theta, L->ws, h, xs, xs + nq, u, xs + nx, xs + nx + nv, xbar, xbar + nq, xbar1,
                                        xbar1 + nq, thetabar);
                else
                    sid_rk4_vjp_taped(m, theta, L->ws, h, xs, xs + nq, u, xs + nx, xs + nx + sid_rk_size(m), xbar, xbar + nq,
                                      xbar1, xbar1 + nq, thetabar);
                memcpy(xbar, xbar1, sizeof(double) * (size_t)nx);
            }
        }
    }
    if (w->ra == w->k0) residual(p, theta, tr, w->k0, L->cp, &dummy, NULL, NULL, xbar, thetabar);
    /* a logged start x0 = (logged q - offset, logged v): the offsets also shape it */
    if (!x0w)
        for (int b = 1; b < m->nbody; b++)
            if (m->body[b].p_dof >= 0) thetabar[m->body[b].p_dof + P_OFFSET] -= xbar[m->body[b].qadr];
    if (x0bar) memcpy(x0bar, xbar, sizeof(double) * (size_t)nx);
    return SID_OK;
}

/* Run the windows of every chunk, chunks in parallel; each chunk's sums start from zero.
 * With grad, chunk_grad holds each chunk's gradient; with rmse, chunk_sse its squared errors. */
static sid_status run_chunks(sid_problem *p, const double *theta, const double *x0, int grad, double *grad_x0,
                             int rmse, sid_error *err)
{
    const sid_model *m = p->m;
    const int np = m->nparam, nq = m->nq, nx = m->nq + m->nv;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(p->nlane)
#endif
    for (int c = 0; c < p->nchunk; c++) {
#ifdef _OPENMP
        lane *L = &p->lane[omp_get_thread_num()];
#else
        lane *L = &p->lane[0];
#endif
        double *g = grad ? p->chunk_grad + (size_t)c * (size_t)np : NULL;
        double *sse = rmse ? p->chunk_sse + (size_t)c * (size_t)nx : NULL;
        p->chunk_sum[c] = 0;
        p->chunk_status[c] = SID_OK;
        if (g) memset(g, 0, sizeof(double) * (size_t)np);
        if (sse) memset(sse, 0, sizeof(double) * (size_t)nx);
        for (int w = c * p->chunk_windows; w < (c + 1) * p->chunk_windows && w < p->nwin; w++) {
            const size_t off = (size_t)w * (size_t)nx;
            p->chunk_status[c] = window_loss(p, L, theta, &p->win[w], x0 ? x0 + off : NULL, &p->chunk_sum[c], sse,
                                             sse ? sse + nq : NULL, g, grad_x0 ? grad_x0 + off : NULL, &p->chunk_err[c]);
            if (p->chunk_status[c]) break;
        }
    }
    for (int c = 0; c < p->nchunk; c++)
        if (p->chunk_status[c]) {
            if (err) *err = p->chunk_err[c];
            return p->chunk_status[c];
        }
    return SID_OK;
}

sid_status sid_problem_loss(sid_problem *p, const double *theta, const double *x0, double *loss, double *grad,
                            double *grad_x0, sid_error *err)
{
    const int np = p->m->nparam, nx = p->m->nq + p->m->nv;
    sid_status s = run_chunks(p, theta, x0, grad != NULL, grad_x0, 0, err);
    if (s) return s;
    const double inv = 1.0 / p->nres;
    double sum = 0;
    for (int c = 0; c < p->nchunk; c++) sum += p->chunk_sum[c];
    *loss = sum * inv;
    if (grad) {
        memset(grad, 0, sizeof(double) * (size_t)np);
        for (int c = 0; c < p->nchunk; c++)
            for (int i = 0; i < np; i++) grad[i] += p->chunk_grad[(size_t)c * (size_t)np + (size_t)i];
        for (int i = 0; i < np; i++) grad[i] *= inv;
    }
    if (grad_x0)
        for (size_t i = 0; i < (size_t)p->nwin * (size_t)nx; i++) grad_x0[i] *= inv;
    if (!isfinite(*loss)) return sid_error_set(err, SID_ERR_NONFINITE, "loss is not finite");
    return SID_OK;
}

sid_status sid_problem_rmse(sid_problem *p, const double *theta, const double *x0, double *rmse_q, double *rmse_qd,
                            sid_error *err)
{
    const int nq = p->m->nq, nv = p->m->nv, nx = nq + nv;
    sid_status s = run_chunks(p, theta, x0, 0, NULL, 1, err);
    if (s) return s;
    long nsamp = 0, nsamp_qd = 0;
    for (int w = 0; w < p->nwin; w++) {
        const int ns = p->win[w].rb - p->win[w].ra + 1;
        nsamp += ns;
        if (p->logs[p->win[w].log]->qd) nsamp_qd += ns;
    }
    for (int i = 0; i < nx; i++) {
        double sse = 0;
        for (int c = 0; c < p->nchunk; c++) sse += p->chunk_sse[(size_t)c * (size_t)nx + (size_t)i];
        if (i < nq) rmse_q[i] = sqrt(sse / (double)nsamp);
        else if (rmse_qd) rmse_qd[i - nq] = nsamp_qd ? sqrt(sse / (double)nsamp_qd) : 0;
    }
    return SID_OK;
}

/* Residuals of sample k in the order of sid_problem_window_jacobian, with their tangent rows:
 * r = sqrt(w) delta / s, rows J[r][d] = sqrt(w) / s (qdot + offsetdot, or vdot), for ndir
 * directions of which the first nfree are parameters idx[d]. */
static int residual_rows(const sid_problem *p, const double *theta, const sid_traj *tr, int k, const double *x,
                         int ndir, int nfree, const int *idx, const double *qdot, const double *vdot, double *r, double *J)
{
    const sid_model *m = p->m;
    const int nq = m->nq, nv = m->nv;
    int n = 0;
    if (p->o.weight_q > 0) {
        double d[7 * SID_MAX_JOINTS];
        q_error(m, theta, x, tr->q + (size_t)k * (size_t)nq, d);
        for (int b = 1; b < m->nbody; b++) {
            const sid_body *bd = &m->body[b];
            if (bd->qadr < 0) continue;
            const int po = bd->p_dof >= 0 ? bd->p_dof + P_OFFSET : -1;
            for (int i = bd->qadr; i < bd->qadr + (bd->type == SID_JOINT_FREE ? 7 : 1); i++) {
                const double g = sqrt(p->o.weight_q) / p->sq[i];
                r[n] = g * d[i];
                for (int dd = 0; dd < ndir; dd++)
                    J[(size_t)n * (size_t)ndir + (size_t)dd] =
                        g * (qdot[(size_t)dd * (size_t)nq + (size_t)i] + (dd < nfree && idx[dd] == po));
                n++;
            }
        }
    }
    if (p->o.weight_qd > 0 && tr->qd)
        for (int i = 0; i < nv; i++) {
            const double g = sqrt(p->o.weight_qd) / p->sqd[i];
            r[n] = g * (x[nq + i] - tr->qd[(size_t)k * (size_t)nv + (size_t)i]);
            for (int d = 0; d < ndir; d++)
                J[(size_t)n * (size_t)ndir + (size_t)d] = g * vdot[(size_t)d * (size_t)nv + (size_t)i];
            n++;
        }
    return n;
}

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
    start_state(p, theta, win, x0w, x);
    if (win->ra == win->k0) row += (size_t)residual_rows(p, theta, tr, win->k0, x, 0, 0, NULL, NULL, NULL, r, NULL);
    for (int k = win->k0; k < win->k1; k++) {
        const double dt = tr->t[k + 1] - tr->t[k];
        const int nsub = sid_substeps(&p->o.sim, dt);
        const double h = dt / nsub, *u = tr->u + (size_t)k * (size_t)nv;
        for (int j = 0; j < nsub; j++) {
            if ((s = sid_step(m, theta, L->ws, p->o.sim.integrator, h, x, x + nq, u, L->x1, L->x1 + nq, err))) return s;
            memcpy(x, L->x1, sizeof(double) * (size_t)nx);
        }
        if (k + 1 <= win->rb) row += (size_t)residual_rows(p, theta, tr, k + 1, x, 0, 0, NULL, NULL, NULL, r + row, NULL);
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
    else start_state(p, theta, &p->win[w], NULL, x0);
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
    start_state(p, theta, win, x0w, x);
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
        row += (size_t)residual_rows(p, theta, tr, win->k0, x, ndir, nfree, idx, qdot, vdot, r, J);
    for (int k = win->k0; k < win->k1; k++) {
        const double dt = tr->t[k + 1] - tr->t[k];
        const int nsub = sid_substeps(&p->o.sim, dt);
        const double h = dt / nsub, *u = tr->u + (size_t)k * (size_t)nv;
        for (int j = 0; j < nsub; j++) {
            if ((s = sid_step_jvp(m, theta, L->ws, p->o.sim.integrator, h, x, x + nq, u, ndir, thd, qdot, vdot, scratch,
                                  err)) ||
                (s = sid_step(m, theta, L->ws, p->o.sim.integrator, h, x, x + nq, u, L->x1, L->x1 + nq, err)))
                goto done;
            memcpy(x, L->x1, sizeof(double) * (size_t)nx);
        }
        if (k + 1 <= win->rb)
            row += (size_t)residual_rows(p, theta, tr, k + 1, x, ndir, nfree, idx, qdot, vdot, r + row, J + row * nd);
    }
done:
    sid_free(thd);
    sid_free(qdot);
    sid_free(vdot);
    sid_free(scratch);
    return s;
}
