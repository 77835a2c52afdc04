/* step_choice.c — the simulation step when none is given: the longest step, an integer
 * division of the logs' median sample interval, whose position error over a window is within
 * what the data can see, estimated by step doubling at the given parameters on a few of the
 * logs' windows.
 *
 * Why: one step per sample interval makes the integrator's error part of what a fit explains
 * (a 500 Hz log, Euler: -3.5 % on a 7-joint arm's viscous friction); the error of the step,
 * not the rate of the log, should set it. Step doubling: with steps h and h/2, the error of
 * the solution at h is about 2^p / (2^p - 1) |q_h - q_h/2| for an integrator of order p
 * (euler 1, rk4 4). Candidates are h = interval / N for N = 1, 2, 4, ... up to
 * SID_STEP_MAX_SUBSTEPS; the first whose error is within every coordinate's allowance is
 * taken. The allowance of coordinate i is the larger of SID_STEP_TOL of its spread (the loss's
 * residual scale) and SID_STEP_NOISE of the noise its logs show (sid_traj_position_noise): an
 * error below the noise of a noisy log biases a fit less than the noise scatters it
 * (docs/simulation-step.md), so a noisy log is not stepped finer than it can tell.
 * A step the user gives (substeps, max_dt) or the robot file states (its timestep) is kept
 * and nothing is simulated here. Deterministic: the windows tested are fixed by the logs,
 * nothing depends on time or threads. */
#include "linalg.h"
#include "problem.h"

#include <math.h>
#include <string.h>

#define TEST_WINDOWS 8          /* windows simulated per candidate, spread over the logs */
#define TEST_WINDOW_SECONDS SID_STEP_TEST_WINDOW /* their length when the loss has one window per log */

/* Median of every sample interval of every log; -1 when out of memory. */
static double median_interval(const sid_traj *const *logs, int nlog)
{
    size_t n = 0, i = 0;
    for (int l = 0; l < nlog; l++) n += (size_t)(logs[l]->n - 1);
    double *dt = sid_alloc(sizeof(double) * n);
    if (!dt) return -1;
    for (int l = 0; l < nlog; l++)
        for (int k = 0; k + 1 < logs[l]->n; k++) dt[i++] = logs[l]->t[k + 1] - logs[l]->t[k];
    sid_sort_doubles(dt, n);
    const double med = n % 2 ? dt[n / 2] : 0.5 * (dt[n / 2 - 1] + dt[n / 2]);
    sid_free(dt);
    return med;
}

/* Simulate window w from its logged start under p->o.sim; q after each of its samples into out. */
static sid_status run_window(const sid_problem *p, lane *L, const double *theta, const window *w, double *out,
                             sid_error *err)
{
    const size_t nq = (size_t)p->m->nqo;   /* the logged positions (the state's first nqo) */
    sid_rollout_start_state(p, theta, w, NULL, L->x);
    for (int k = w->k0; k < w->k1; k++) {
        const sid_window_pass wp = {p, L, theta, w, NULL};
        sid_status s = sid_rollout_span(&wp, k, k + 1, NULL, NULL, err);
        if (s) return s;
        memcpy(out + (size_t)(k - w->k0) * nq, L->x, sizeof(double) * nq);
    }
    return SID_OK;
}

typedef struct {
    double scaled, abs;   /* worst |error| / allowance, and that coordinate's |error| */
    int coord;
} estimate;

/* Step-doubling error of options a (b: a halved) over the tested windows, each coordinate's
 * relative to its allowance allow[i]; a simulation that diverges gives HUGE_VAL. p->o.sim is switched between the two (the problem is ours). With a
 * shard each process simulates the tested windows of its chunks (of the logs it holds): each
 * window's worst error (the first coordinate and sample of the largest, as one pass over all
 * windows finds it) and status into est (nwin x 4: status, scaled, abs, coord), gathered; then
 * every process takes the windows in order as one pass would, stopping at the first that
 * diverged or failed. */
typedef struct {
    sid_problem *p;
    const double *theta;
    const int *tested;      /* the windows tested */
    int ntest;
    double factor;          /* the step-doubling estimate's factor (2 for Euler, 16/15 for RK4) */
    const double *allow;    /* each coordinate's allowance */
    double *qa, *qb, *est;  /* scratch: the two runs' positions, the windows' estimates */
} step_test;

static sid_status doubling_error(const step_test *t, const sid_sim_opts *a, const sid_sim_opts *b, estimate *e,
                                 sid_error *err)
{
    sid_problem *p = t->p;
    const double *theta = t->theta, *allow = t->allow, factor = t->factor;
    const int *tested = t->tested, ntest = t->ntest;
    double *qa = t->qa, *qb = t->qb, *est = t->est;
    const int nq = p->m->nqo, w0 = p->chunk_lo * p->chunk_windows, w1 = p->chunk_hi * p->chunk_windows;
    lane *L = &p->lane[0];
    memset(est, 0, sizeof(double) * 4 * (size_t)p->nwin);
    for (int j = 0; j < ntest; j++) {
        if (tested[j] < w0 || tested[j] >= w1) continue;
        const window *w = &p->win[tested[j]];
        double *ej = est + 4 * (size_t)tested[j];
        sid_status s;
        p->o.sim = *a;
        if (!(s = run_window(p, L, theta, w, qa, err))) {
            p->o.sim = *b;
            s = run_window(p, L, theta, w, qb, err);
        }
        ej[0] = s, ej[3] = -1;
        if (s) continue;
        for (int k = 0; k < w->k1 - w->k0; k++)
            for (int i = 0; i < nq; i++) {
                const double d = factor * fabs(qa[(size_t)k * (size_t)nq + (size_t)i] - qb[(size_t)k * (size_t)nq + (size_t)i]);
                if (d / allow[i] > ej[1]) ej[1] = d / allow[i], ej[2] = d, ej[3] = i;
            }
    }
    sid_error gerr = {0};
    sid_status gs = sid_problem_gather(p, est, 4 * sizeof(double), 1, &gerr);
    if (gs) {
        if (err) *err = gerr;
        return gs;
    }
    e->scaled = 0, e->abs = 0, e->coord = -1;
    for (int j = 0; j < ntest; j++) {
        const double *ej = est + 4 * (size_t)tested[j];
        const sid_status s = (sid_status)ej[0];
        if (s == SID_ERR_NONFINITE || s == SID_ERR_SINGULAR) {
            e->scaled = e->abs = HUGE_VAL;
            return SID_OK;
        }
        if (s)   /* this process's err says why if the window was its own */
            return tested[j] >= w0 && tested[j] < w1
                       ? s
                       : sid_error_set(err, s, "window %d of the step test failed on another process", tested[j] + 1);
        if (ej[1] > e->scaled) e->scaled = ej[1], e->abs = ej[2], e->coord = (int)ej[3];
    }
    return SID_OK;
}

/* Options a with every step halved. */
static sid_sim_opts halved(const sid_sim_opts *a)
{
    sid_sim_opts b = *a;
    b.substeps = 2 * (a->substeps > 0 ? a->substeps : 1);
    b.max_dt = a->max_dt / 2;
    return b;
}

/* 1 if every log can be simulated under o (sid_sim_check's work limits). */
static int within_limits(const sid_sim_opts *o, const sid_traj *const *logs, int nlog)
{
    for (int l = 0; l < nlog; l++)
        if (sid_sim_check(o, logs[l], NULL)) return 0;
    return 1;
}

/* Each logged position coordinate's allowance: the larger of tol of its residual scale and
 * noise_tol of the noise its logs show (their noise levels pooled by sample count). */
static void allowances(const sid_problem *p, double tol, double noise_tol, double *noise, double *allow)
{
    const sid_traj *const *logs = p->logs;
    const int nq = p->m->nqo, nlog = p->nlog;
    double n = 0;
    for (int i = 0; i < nq; i++) allow[i] = 0;
    for (int l = 0; l < nlog; l++) {
        sid_traj_position_noise(p->m, logs[l], noise);
        for (int i = 0; i < nq; i++) allow[i] += logs[l]->n * noise[i] * noise[i];
        n += logs[l]->n;
    }
    for (int i = 0; i < nq; i++) {
        noise[i] = n > 0 ? sqrt(allow[i] / n) : 0;
        allow[i] = fmax(tol * p->sq[i], noise_tol * noise[i]);
    }
}

sid_status sid_step_choose(const sid_model *m, const double *theta, const sid_traj *const *logs, int nlog,
                           const sid_loss_opts *o, double tol, sid_step_choice *c, sid_error *err)
{
    memset(c, 0, sizeof *c);
    c->sim = o->sim;
    c->automatic = o->sim.substeps <= 0 && !(o->sim.max_dt > 0);
    if (!c->automatic && c->sim.substeps <= 0) c->sim.substeps = 1;   /* max_dt alone: what 0 means */
    c->tol = tol;
    c->noise_tol = SID_STEP_NOISE;
    c->coord = -1;
    c->error = -1;   /* not estimated */
    c->interval = median_interval(logs, nlog);
    if (c->interval < 0) return sid_error_set(err, SID_ERR_NOMEM, "out of memory");
    if (c->automatic && m->timestep > 0) {
        /* the robot's own step (an MJCF's timestep): its dry friction and constraints are
         * defined per step, so a finer one would be another model */
        c->automatic = 0;
        c->from_robot = 1;
        c->sim.max_dt = m->timestep;
        c->sim.substeps = 1;
    }
    if (!c->automatic) {   /* the user's word, or the robot file's: kept, and nothing simulated */
        c->substeps = sid_substeps(&c->sim, c->interval);
        c->h = c->interval / c->substeps;
        return SID_OK;
    }
    sid_loss_opts to = *o;
    to.window = o->window > 0 ? o->window : TEST_WINDOW_SECONDS;
    to.estimate_start = 0;
    to.threads = 1;
    to.checkpoint = 0;
    to.sim.substeps = 1;   /* until chosen: what the check below sizes */
    sid_problem *p = NULL;
    sid_status s = sid_problem_create(&p, m, logs, nlog, &to, err);
    if (s) return s;
    c->window = to.window;
    int *tested = NULL;
    double *qa = NULL, *qb = NULL, *est = sid_alloc(sizeof(double) * 4 * (size_t)p->nwin);
    double *noise = sid_alloc(sizeof(double) * 2 * (size_t)(m->nqo + 1)), *allow = noise ? noise + m->nqo + 1 : NULL;
    if (!est || !noise) goto nomem;
    allowances(p, tol, c->noise_tol, noise, allow);
    c->windows = p->nwin < TEST_WINDOWS ? p->nwin : TEST_WINDOWS;
    tested = sid_alloc(sizeof(int) * (size_t)c->windows);
    int longest = 1;
    for (int j = 0; tested && j < c->windows; j++) {
        /* spread over all windows of all logs: the middle of each of c->windows equal parts */
        tested[j] = (int)(((long)j * 2 + 1) * p->nwin / (2L * c->windows));
        const window *w = &p->win[tested[j]];
        if (w->k1 - w->k0 > longest) longest = w->k1 - w->k0;
    }
    qa = sid_alloc(sizeof(double) * (size_t)longest * (size_t)m->nq);
    qb = sid_alloc(sizeof(double) * (size_t)longest * (size_t)m->nq);
    if (!tested || !qa || !qb) goto nomem;
    const double p2 = ldexp(1, sid_integrator_order(o->sim.integrator)), factor = p2 / (p2 - 1);   /* 2^p / (2^p - 1) */
    estimate e = {-1, -1, -1};   /* -1: not estimated */
    const step_test test = {p, theta, tested, c->windows, factor, allow, qa, qb, est};
    for (int n = 1;; n *= 2) {
        /* n steps per median interval, and none longer than interval / n where jitter
         * makes an interval longer */
        const sid_sim_opts a = {o->sim.integrator, n, c->interval / n};
        const sid_sim_opts b = halved(&a);
        if (!within_limits(&b, logs, nlog)) {
            c->capped = 1;
            break;
        }
        if ((s = doubling_error(&test, &a, &b, &e, err))) goto done;
        c->sim = a;
        c->substeps = n;
        if (e.scaled <= 1) break;
        if (2 * n > SID_STEP_MAX_SUBSTEPS) {
            c->capped = 1;
            break;
        }
    }
    if (c->substeps == 0) {   /* even one step per interval is beyond the work limits */
        c->sim = (sid_sim_opts){o->sim.integrator, 1, 0};
        c->substeps = 1;
    }
    c->h = c->interval / c->substeps;
    c->error = e.scaled;
    c->error_abs = e.abs;
    c->coord = e.coord;
    c->scale = e.coord >= 0 ? p->sq[e.coord] : 0;
    c->noise = e.coord >= 0 ? noise[e.coord] : 0;
    c->allowance = e.coord >= 0 ? allow[e.coord] : 0;
    s = SID_OK;
    goto done;
nomem:
    s = sid_error_set(err, SID_ERR_NOMEM, "out of memory");
done:
    sid_free(qa);
    sid_free(qb);
    sid_free(est);
    sid_free(noise);
    sid_free(tested);
    sid_problem_free(p);
    return s;
}
