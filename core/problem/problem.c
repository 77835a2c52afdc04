/* problem.c — a windowed fitting problem: the logs cut into windows, the residual scales,
 * the tape's size, the per-thread lanes, and the loss and gradient summed over all windows.
 *
 * A problem binds a model to logs cut into windows. For each window the forward pass
 * (rollout.c) simulates from the window's start state and adds the residuals of its samples
 * (loss.c) to the loss; with a gradient wanted, the backward pass (adjoint.c) sweeps the
 * window's steps in reverse. Windows are independent, so they run in parallel, grouped into
 * chunks fixed by the problem alone so that the sums do not depend on the number of threads.
 *
 * Start states. By default a window starts from the logged state and its residuals are the
 * samples after the start. Logged states are noisy, and noise in a start state biases every
 * parameter fitted through it; with estimate_start the start states are unknowns of their own
 * (multiple shooting): a window then starts from x0[w], and its residuals run from its start
 * sample up to, not including, the next window's start (the last window of a log keeps its
 * end sample), so every sample is counted once. */
#include "problem.h"

#include <math.h>

#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

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
    o->weight_tau = 0;
}

int sid_problem_default_threads(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

/* A lane's buffers after its workspace, carved from c (or only counted). */
static void lane_carve(lane *L, const sid_model *m, const sid_problem *p, sid_carve *c)
{
    const size_t nx = (size_t)(m->nq + m->nv);
    L->cp = sid_carve_take(c, nx * (size_t)p->max_cp, sizeof(double));
    L->tape = sid_carve_take(c, (size_t)p->stride * (size_t)(p->max_seg_steps + 1), sizeof(double));
    L->tape_sample = sid_carve_take(c, (size_t)(p->cp_every + 1), sizeof(int));
    L->x = sid_carve_take(c, 4 * nx, sizeof(double));
    const size_t ntau = sid_tau_lane_doubles(p);
    L->tau_buf = ntau ? sid_carve_take(c, ntau, sizeof(double)) : NULL;
    L->ubk = sid_carve_take(c, (size_t)(m->nv > 0 ? m->nv : 1), sizeof(double));
}

static int lane_init(lane *L, const sid_model *m, const sid_problem *p)
{
    const size_t nx = (size_t)(m->nq + m->nv), wsize = sid_workspace_size(m);
    sid_carve c = {NULL, wsize};
    lane_carve(L, m, p, &c);
    if (!(L->buf = sid_alloc(c.used))) return -1;
    L->ws = sid_workspace_init(m, L->buf, wsize);
    c = (sid_carve){L->buf, wsize};
    lane_carve(L, m, p, &c);
    L->x1 = L->x + nx;
    L->xbar = L->x1 + nx;
    L->xbar1 = L->xbar + nx;
    return 0;
}

const sid_model *sid_problem_model(const sid_problem *p) { return p->m; }
int sid_problem_nwindows(const sid_problem *p) { return p->nwin; }

void sid_problem_set_progress(sid_problem *p, sid_progress_fn fn, void *ctx)
{
    p->progress = fn;
    p->progress_ctx = ctx;
}

/* The shard new problems start with (sid_shard_set_default); size 0: none. */
static sid_shard default_shard;

void sid_shard_set_default(const sid_shard *s)
{
    default_shard = s ? *s : (sid_shard){0};
}

/* Process s's chunks of nchunk: [*lo, *hi). */
static void shard_range(const sid_shard *s, int nchunk, int *lo, int *hi)
{
    *lo = s->size ? (int)((long)nchunk * s->rank / s->size) : 0;
    *hi = s->size ? (int)((long)nchunk * (s->rank + 1) / s->size) : nchunk;
}

void sid_problem_set_shard(sid_problem *p, const sid_shard *s)
{
    p->shard = s && s->size > 1 ? *s : (sid_shard){0};
    shard_range(&p->shard, p->nchunk, &p->chunk_lo, &p->chunk_hi);
}

sid_status sid_problem_gather(const sid_problem *p, void *buf, size_t unit, int by_window, sid_error *err)
{
    const int size = p->shard.size;
    if (!size) return SID_OK;
    size_t *off = sid_alloc(sizeof(size_t) * (size_t)(size + 1));
    if (!off) return sid_error_set(err, SID_ERR_NOMEM, "out of memory");
    for (int r = 0; r <= size; r++) {
        const long c = (long)p->nchunk * r / size, w = c * p->chunk_windows;
        off[r] = unit * (size_t)(by_window ? (w < p->nwin ? w : p->nwin) : c);
    }
    sid_status s = p->shard.gather(p->shard.ctx, buf, off, err);
    sid_free(off);
    return s;
}

sid_status sid_problem_gather_status(sid_problem *p, int *failed, sid_error *err)
{
    *failed = 0;
    sid_status s = sid_problem_gather(p, p->chunk_status, sizeof(sid_status), 0, err);
    for (int c = 0; !s && c < p->nchunk; c++) *failed |= p->chunk_status[c] != SID_OK;
    if (s || !*failed) return s;
    if ((s = sid_problem_gather(p, p->chunk_err, sizeof(sid_error), 0, err))) return s;
    const int size = p->shard.size;
    for (int c = 0, r = 0; size && c < p->nchunk; c++) {
        while ((long)p->nchunk * (r + 1) / size <= c) r++;   /* rank r runs chunk c */
        if (p->chunk_status[c] == SID_ERR_NOMEM)
            sid_error_prefix(&p->chunk_err[c], "rank %d of %d, chunk %d", r, size, c);
    }
    return SID_OK;
}

int sid_problem_nresiduals(const sid_problem *p) { return p->nres; }
const double *sid_problem_scale_q(const sid_problem *p) { return p->sq; }
const double *sid_problem_scale_qd(const sid_problem *p) { return p->sqd; }
const double *sid_problem_scale_tau(const sid_problem *p) { return p->stau; }

size_t sid_problem_tape_bytes(const sid_problem *p)
{
    const size_t nx = (size_t)(p->m->nq + p->m->nv);
    return sizeof(double) * (nx * (size_t)p->max_cp + (size_t)p->stride * ((size_t)p->max_seg_steps + 1));
}

/* Windows whose whole tape fits this budget are taped in the forward pass and never
 * re-simulated; longer ones keep checkpoints (sqrt N of them) instead. */
#define TAPE_BUDGET_BYTES ((size_t)32 << 20)

/* Windows lie on a fixed time grid: window i of a log covers (t0 + iW, t0 + (i+1)W], t0 its
 * first sample's time, and scores the samples in it. Each sample's window comes from its own
 * time, never from the previous window's end, so boundaries cannot drift along a jittery log.
 * A sample within GRID_TOL windows of a boundary is on it (times like 0.1 k are inexact), and
 * a sample on a boundary closes the window before it. */
#define GRID_TOL 1e-6

/* The grid window that holds sample k >= 1 of tr. */
static long grid_window(const sid_traj *tr, int k, double len)
{
    return (long)ceil((tr->t[k] - tr->t[0]) / len - GRID_TOL) - 1;
}

/* Cut log l into windows of len seconds (0: one window); returns how many (writes them if
 * w != NULL). A window starts from the last sample at or before its start (the one before it
 * in time, across a gap of dropped samples) and simulates to its last sample; a window
 * without samples is no window. A trailing window covering less than len / 2 of the grid
 * (from its start to the log's end) is dropped, its samples unscored, unless it is the log's
 * only one. */
static int cut_windows(const sid_traj *tr, int l, double len, window *w)
{
    const int end = tr->n - 1;
    if (len <= 0) {
        if (w) w[0] = (window){l, 0, end, 1, end};
        return 1;
    }
    const long ie = grid_window(tr, end, len);
    const double cover = (tr->t[end] - tr->t[0]) / len - (double)ie;
    const long imax = ie > 0 && cover < 0.5 - GRID_TOL ? ie - 1 : ie;
    int n = 0;
    for (int k0 = 0, k1; k0 < end; k0 = k1) {
        const long i = grid_window(tr, k0 + 1, len);
        if (i > imax) break;
        for (k1 = k0 + 1; k1 < end && grid_window(tr, k1 + 1, len) == i;) k1++;
        if (w) w[n] = (window){l, k0, k1, k0 + 1, k1};
        n++;
    }
    return n;
}

/* Standard deviation of column i over all logs, from the last log's running sums (its summary:
 * the sums of one pass over every log's samples in order), floored so a still joint cannot
 * blow up. */
static double column_scale(const sid_problem *p, const double *last, int velocity, int i)
{
    const int nq = p->m->nqo, nv = p->m->nvo;
    const double *x1 = last + SID_SUM_Q + (velocity ? 2 * nq : 0), *x2 = x1 + (velocity ? nv : nq);
    const double s1 = x1[i], s2 = x2[i];
    const long n = (long)last[velocity ? SID_SUM_RUN_NQD : SID_SUM_RUN_N];
    if (n == 0) return 1;
    const double mean = s1 / (double)n, var = s2 / (double)n - mean * mean;
    const double sd = var > 0 ? sqrt(var) : 0;
    return sd > 1e-3 ? sd : 1e-3;
}

/* Windows per chunk and chunks of nwin windows (problem.h: fixed by the problem alone). */
/* RMS of tau column i over the logs that have it, from the last log's running sums (problem.c's
 * column_scale), floored (a still, unloaded joint reads ~0). */
static double tau_scale(const sid_problem *p, const double *last, int i)
{
    const int nq = p->m->nqo, nv = p->m->nvo;
    const double *has = last + SID_SUM_Q + 2 * nq + 2 * nv;
    const double s2 = has[nv + i];
    const long n = (long)has[2 * nv + i];
    const double rms = n ? sqrt(s2 / (double)n) : 1;
    return rms > 1e-3 ? rms : 1e-3;
}

sid_status sid_tau_setup(sid_problem *p, const double *last, sid_error *err)
{
    const sid_model *m = p->m;
    if (!(p->o.weight_tau >= 0) || !isfinite(p->o.weight_tau))
        return sid_error_set(err, SID_ERR_INPUT, "weight_tau: expected a non-negative number, got %g", p->o.weight_tau);
    const int any = last[SID_SUM_RUN_TAU] != 0, push = last[SID_SUM_RUN_TAU_PUSH] != 0;
    p->tau_on = any && p->o.weight_tau > 0;
    if (!p->tau_on) return SID_OK;
    const char *no = m->nsphere > 0 || m->p_ground >= 0 ? "contact"
                     : m->nfree > 0                      ? "free joints"
                     : m->ndry > 0                       ? "dry friction"
                     : push                              ? "logged pushes (f.* columns)"
                     : m->nbacklash > 0                  ? "backlash (the link's torque is the coupling's)"
                                                         : NULL;
    for (int b = 1; b < m->nbody && !no; b++)
        if (m->body[b].climit) no = "constraint joint limits (limit.model \"constraint\")";
    if (no)
        return sid_error_set(err, SID_ERR_INPUT,
                             "torque sensor residuals (weight_tau > 0): not supported with %s; set weight_tau 0", no);
    if (!(p->stau = sid_alloc(sizeof(double) * (size_t)(m->nv + 1))))
        return sid_error_set(err, SID_ERR_NOMEM, "out of memory");
    for (int i = 0; i < m->nv; i++) p->stau[i] = i < m->nvo ? tau_scale(p, last, i) : 1e-3;
    return SID_OK;
}

int sid_tau_sample_rows(const sid_problem *p, const sid_traj *tr)
{
    const double *stub = sid_traj_summary_of(tr);
    if (stub) return p->tau_on ? (int)stub[SID_SUM_TAU_COLS] : 0;
    if (!p->tau_on || !tr->tau) return 0;
    int n = 0;
    for (int i = 0; i < tr->nv; i++) n += tr->tau_has[i] != 0;
    return n;
}

/* the lane's scratch: M (nv x nv), a, tau, taubar, abar, adot, taudot (nv each) */
size_t sid_tau_lane_doubles(const sid_problem *p)
{
    const size_t nv = (size_t)p->m->nv;
    return p->tau_on ? nv * nv + 6 * nv : 0;
}

int sid_problem_tau_scored(const sid_problem *p) { return p->tau_on; }

int sid_problem_window_rows(const sid_problem *p, int w)
{
    const window *win = &p->win[w];
    const sid_traj *tr = p->logs[win->log];
    return (win->rb - win->ra + 1) *
           ((p->o.weight_q > 0 ? p->m->nqo : 0) + (p->o.weight_qd > 0 && sid_traj_has_velocities(tr) ? p->m->nvo : 0) +
            sid_tau_sample_rows(p, tr));
}

static void chunk_layout(int nwin, int *chunk_windows, int *nchunk)
{
    *chunk_windows = (nwin + MAX_CHUNKS - 1) / MAX_CHUNKS;
    *nchunk = (nwin + *chunk_windows - 1) / *chunk_windows;
}

/* Mark in need the logs of s's chunks of the windows of len seconds cut from logs. */
static void mark_needed(const sid_traj *const *logs, int nlog, double len, const sid_shard *s, int *need)
{
    int nwin = 0, cw, nchunk, lo, hi;
    for (int l = 0; l < nlog; l++) nwin += cut_windows(logs[l], l, len, NULL);
    chunk_layout(nwin, &cw, &nchunk);
    shard_range(s, nchunk, &lo, &hi);
    for (int l = 0, w = 0; l < nlog; l++) {
        const int n = cut_windows(logs[l], l, len, NULL);
        /* windows [w, w + n) of log l against the shard's [lo cw, hi cw) */
        if (w < hi * cw && w + n > lo * cw) need[l] = 1;
        w += n;
    }
}

void sid_shard_logs_needed(const sid_traj *const *logs, int nlog, const sid_loss_opts *o, const sid_shard *s,
                           int *need)
{
    const int all = !s || s->size <= 1;
    for (int l = 0; l < nlog; l++) need[l] = all;
    if (all) return;
    mark_needed(logs, nlog, o->window, s, need);
    if (!(o->window > 0)) mark_needed(logs, nlog, SID_STEP_TEST_WINDOW, s, need);
}

sid_status sid_problem_create(sid_problem **out, const sid_model *m, const sid_traj *const *logs, int nlog,
                              const sid_loss_opts *o, sid_error *err)
{
    *out = NULL;
    const int nq = m->nqo, nv = m->nvo, nx = m->nq + m->nv;   /* logged coordinates; the simulated state */
    if (nlog < 1) return sid_error_set(err, SID_ERR_INPUT, "no logs to fit");
    if (!(o->window >= 0)) return sid_error_set(err, SID_ERR_INPUT, "window: expected a non-negative number of seconds");
    if (!(o->weight_q >= 0) || !(o->weight_qd >= 0) || o->weight_q + o->weight_qd <= 0)
        return sid_error_set(err, SID_ERR_INPUT, "weights: expected non-negative q and qd weights, not both zero");
    for (int l = 0; l < nlog; l++) {
        if (logs[l]->nq != nq || logs[l]->nv != nv)
            return sid_error_set(err, SID_ERR_INPUT, "log %d: %d positions and %d velocities, the robot has %d and %d",
                                 l + 1, logs[l]->nq, logs[l]->nv, nq, nv);
        if (logs[l]->n < 2) return sid_error_set(err, SID_ERR_INPUT, "log %d: expected at least 2 samples", l + 1);
        /* bounds every step count below (they are ints) */
        if (sid_sim_check(&o->sim, logs[l], err)) {
            sid_error_prefix(err, "log %d", l + 1);
            return SID_ERR_INPUT;
        }
    }
    const sid_step_variant *step = sid_step_variant_find(m, o->sim.integrator, err);
    if (!step) return SID_ERR_INPUT;
    sid_problem *p = sid_alloc(sizeof *p);
    if (!p) return sid_error_set(err, SID_ERR_NOMEM, "out of memory");
    p->m = m;
    p->step = step;
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
    /* the running sums through every log (a stub's were made at its place in this list) */
    const size_t nsum = sid_log_summary_size(m);
    double *sum = sid_alloc(sizeof(double) * 2 * nsum);
    if (!sum) goto nomem;
    for (int l = 0; l < nlog; l++) {
        double *cur = sum + (size_t)(l % 2) * nsum;
        sid_log_sums(m, logs[l], l ? sum + (size_t)((l + 1) % 2) * nsum : NULL, cur);
        if (cur[SID_SUM_POS] != l) {
            const double made = cur[SID_SUM_POS] + 1;
            sid_free(sum);
            sid_problem_free(p);
            return sid_error_set(err, SID_ERR_INPUT, "log %d: a stub made as log %g of another list of logs", l + 1,
                                 made);
        }
    }
    const double *last = sum + (size_t)((nlog - 1) % 2) * nsum;
    for (int i = 0; i < nq; i++) p->sq[i] = column_scale(p, last, 0, i);
    for (int i = 0; i < nv; i++) p->sqd[i] = column_scale(p, last, 1, i);
    sid_status ts = sid_tau_setup(p, last, err);
    sid_free(sum);
    if (ts) {
        sid_problem_free(p);
        return ts;
    }

    /* Size the tape: samples between checkpoints, and the most steps any segment needs. */
    /* tape entry: the state, then the step's record of what its adjoint needs */
    p->stride = nx + step->record_size(m);
    int longest = 1, most_steps = 1;
    for (int w = 0; w < p->nwin; w++) {
        const sid_traj *tr = logs[p->win[w].log];
        if (p->win[w].k1 - p->win[w].k0 > longest) longest = p->win[w].k1 - p->win[w].k0;
        const int steps = sid_span_steps(&o->sim, tr, p->win[w].k0, p->win[w].k1);
        if (steps > most_steps) most_steps = steps;
    }
    const int whole = sizeof(double) * (size_t)p->stride * (size_t)(most_steps + 1) <= TAPE_BUDGET_BYTES;
    p->cp_every = o->checkpoint > 0 ? o->checkpoint : whole ? longest : (int)ceil(sqrt((double)longest));
    if (p->cp_every > longest) p->cp_every = longest;
    p->max_cp = (longest + p->cp_every - 1) / p->cp_every + 1;
    for (int w = 0; w < p->nwin; w++) {
        const sid_traj *tr = logs[p->win[w].log];
        for (int k = p->win[w].k0; k < p->win[w].k1; k += p->cp_every) {
            const int steps = sid_span_steps(&o->sim, tr, k, k + p->cp_every < p->win[w].k1 ? k + p->cp_every : p->win[w].k1);
            if (steps > p->max_seg_steps) p->max_seg_steps = steps;
        }
        const int rows = sid_problem_window_rows(p, w);
        p->nres += rows;
        if (rows > p->max_rows) p->max_rows = rows;
    }
    chunk_layout(p->nwin, &p->chunk_windows, &p->nchunk);
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
    sid_problem_set_shard(p, &default_shard);
    /* sharded reading: this process's windows must be of logs it holds */
    for (int w = p->chunk_lo * p->chunk_windows; w < p->nwin && w < p->chunk_hi * p->chunk_windows; w++)
        if (sid_traj_is_stub(logs[p->win[w].log])) {
            const int l = p->win[w].log;
            sid_problem_free(p);
            return sid_error_set(err, SID_ERR_INPUT, "log %d: not read by this process, whose windows it has", l + 1);
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
    sid_free(p->stau);
    for (int i = 0; p->lane && i < p->nlane; i++) sid_free(p->lane[i].buf);
    sid_free(p->lane);
    sid_free(p->chunk_sum);
    sid_free(p->chunk_grad);
    sid_free(p->chunk_sse);
    sid_free(p->chunk_status);
    sid_free(p->chunk_err);
    sid_free(p);
}

int sid_problem_estimates_start(const sid_problem *p) { return p->o.estimate_start; }

void sid_problem_window_samples(const sid_problem *p, int w, int *log, int *start, int *first, int *last)
{
    const window *win = &p->win[w];
    *log = win->log;
    *start = win->k0;
    *first = win->ra;
    *last = win->rb;
}
