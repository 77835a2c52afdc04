/* window_select.c — the window length by cross-validation on the fitted logs (window_select.h):
 * pieces (logs, or one log's halves), two folds over them, fits per fold and candidate warm
 * started from that fold's previous fit, a search over the candidates from the middle that
 * stops where the held-out score turns up, a fixed held-out score, the choice. Only the logs
 * to fit are used: --validate logs never are. */
#include "window_select.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "warn.h"

static const double grid[] = { 0.1, 0.2, 0.5, 1, 2 };   /* [s] geometric, about x2 apart */
#define NGRID (int)(sizeof grid / sizeof grid[0])
_Static_assert(sizeof grid / sizeof grid[0] + 1 <= FITSPEC_MAX_WINDOWS, "the spec records every candidate");

/* Samples a .. b-1 of tr, borrowing its arrays (never sid_traj_free'd). */
static sid_traj slice(const sid_traj *tr, int a, int b, int nbody)
{
    sid_traj s = *tr;
    s.n = b - a;
    s.t = tr->t + a;
    s.q = tr->q + (size_t)a * (size_t)tr->nq;
    s.qd = tr->qd ? tr->qd + (size_t)a * (size_t)tr->nv : NULL;
    s.u = tr->u + (size_t)a * (size_t)tr->nv;
    s.push = tr->push ? tr->push + (size_t)a * SID_PUSH_STRIDE * (size_t)nbody : NULL;
    return s;
}

static double duration(const sid_traj *tr) { return tr->t[tr->n - 1] - tr->t[0]; }

typedef struct {
    const fit_run_input *in;
    double t0;
} progress_ctx;

static void tell(const progress_ctx *c, sid_io_progress_event event, int step, double loss, double gnorm)
{
    const sid_io_fit_hooks *h = c->in->hooks;
    if (!h || !h->progress)
        return;
    const sid_io_progress p = { SID_IO_PHASE_FIT, event, step, 0, loss, gnorm, sid_clock_seconds() - c->t0 };
    h->progress(h->ctx, &p);
}

static void on_iteration(void *ctx, int iter, double loss, double gnorm, double seconds)
{
    (void)seconds;
    tell(ctx, SID_IO_PROGRESS_STEP, iter, loss, gnorm);
}

static int interrupted(const fit_run_input *in)
{
    return in->hooks && in->hooks->interrupt && *in->hooks->interrupt;
}

/* Fit the training pieces with window w from theta (the fold's previous fit, or the nominal
 * parameters), the fitted parameters back into theta; the held-out score into *score
 * (HUGE_VAL when the fit or the replay fails: warned, not fatal, theta unchanged). -1 only
 * when out of memory. */
static int score_one(const fit_run_input *in, const fitspec_selection *sel, const sid_traj *const *train, int ntrain,
                     sid_problem *held, double w, double *start, double *score, sid_error *err)
{
    const sid_model *m = in->m;
    const int np = sid_model_nparam(m), nx = sid_model_nq(m) + sid_model_nv(m);
    sid_loss_opts lo;
    fitspec_loss_opts(in->spec, &lo);
    lo.window = w;
    sid_fit_opts fo;
    fitspec_fit_opts(in->spec, sel, &fo);
    progress_ctx pc = { in, sid_clock_seconds() };
    fo.progress = on_iteration;
    fo.ctx = &pc;
    fo.interrupt = in->hooks ? in->hooks->interrupt : NULL;
    /* a fold's fit ranks a candidate: it need not creep to the last digit */
    fo.flat_factor = WINDOW_FLAT;
    if (fo.max_iter <= 0 || fo.max_iter > WINDOW_FIT_ITER)
        fo.max_iter = WINDOW_FIT_ITER;
    sid_problem *p = NULL;
    double *theta = malloc((size_t)np * sizeof *theta), *x0 = NULL;
    sid_error ferr = { 0 };
    sid_fit_result fr;
    int rc = 0;
    *score = HUGE_VAL;
    if (!theta) {
        rc = -1;
    } else if (sid_problem_create(&p, m, train, ntrain, &lo, &ferr) == SID_OK) {
        memcpy(theta, start, (size_t)np * sizeof *theta);
        if (lo.estimate_start && !(x0 = malloc((size_t)sid_problem_nwindows(p) * (size_t)nx * sizeof *x0)))
            rc = -1;
        if (x0)
            sid_problem_start_states(p, theta, x0);
        if (!rc) {
            tell(&pc, SID_IO_PROGRESS_BEGIN, 0, 0, 0);
            const sid_status st = sid_fit(p, theta, x0, &fo, &fr, &ferr);
            tell(&pc, SID_IO_PROGRESS_END, st == SID_OK ? fr.iterations : 0, st == SID_OK ? fr.loss : 0, 0);
            double loss;
            if (st == SID_OK && sid_problem_loss(held, theta, NULL, &loss, NULL, NULL, &ferr) == SID_OK &&
                isfinite(loss)) {
                *score = loss;
                memcpy(start, theta, (size_t)np * sizeof *theta);
            }
        }
    }
    if (rc)
        sid_error_set(err, SID_ERR_NOMEM, "out of memory");
    else if (!isfinite(*score) && !interrupted(in))
        sid_io_warn("window auto: the %g s candidate failed on a fold (%s): it is not chosen", w,
                    ferr.msg[0] ? ferr.msg : "the held-out replay is not finite");
    sid_problem_free(p);
    free(x0);
    free(theta);
    return rc;
}

/* "0.1, 0.2, 0.5, whole" for the notes. */
static void list_candidates(char *buf, size_t n, const double *c, int nc)
{
    size_t k = 0;
    buf[0] = '\0';
    for (int i = 0; i < nc && k < n; i++) {
        const int w = c[i] > 0 ? snprintf(buf + k, n - k, "%s%g s", i ? ", " : "", c[i])
                               : snprintf(buf + k, n - k, "%swhole pieces", i ? ", " : "");
        if (w < 0)
            break;
        k += (size_t)w;
    }
}

/* The selection's state: pieces, folds, each fold's held-out problem and last fitted parameters. */
typedef struct {
    const fit_run_input *in;
    const fitspec_selection *sel;
    int npiece, nfold, np;
    const sid_traj **piece, **train;
    sid_problem **peval;          /* (nfold) */
    double *theta;                /* (nfold x np) each fold's last fitted parameters */
    int *fitted;                  /* (nfold) whether it has them */
    double *cand, *score;         /* (nc) candidates, mean held-out scores */
    int *tried, nfits;
} selection;

/* Candidate c's mean held-out score over the folds into s->score[c]: each fold's training
 * pieces fitted from that fold's previous fit (its first from the nominal parameters: a start
 * fitted on another fold would have seen this fold's held-out pieces). -1: out of memory or
 * interrupted (err set). */
static int evaluate(selection *s, int c, sid_error *err)
{
    const fit_run_input *in = s->in;
    double sum = 0;
    for (int k = 0; k < s->nfold && isfinite(sum); k++) {
        int nt = 0;
        for (int j = 0; j < s->npiece; j++)
            if (j % s->nfold != k)
                s->train[nt++] = s->piece[j];
        double *th = s->theta + (size_t)k * (size_t)s->np, sc;
        if (!s->fitted[k])
            memcpy(th, in->theta0, (size_t)s->np * sizeof *th);
        if (score_one(in, s->sel, s->train, nt, s->peval[k], s->cand[c], th, &sc, err))
            return -1;
        s->nfits++;
        if (interrupted(in)) {
            sid_error_set(err, SID_ERR_INTERRUPTED, "interrupted while choosing the window (fold %d of %d of the "
                          "%g s candidate): nothing written", k + 1, s->nfold, s->cand[c]);
            return -1;
        }
        if (isfinite(sc))
            s->fitted[k] = 1;
        sum += sc;
    }
    s->tried[c] = 1;
    s->score[c] = isfinite(sum) ? sum / s->nfold : HUGE_VAL;
    if (s->cand[c] > 0)
        sid_io_note("window auto: %5g s: held-out loss %.6g", s->cand[c], s->score[c]);
    else
        sid_io_note("window auto: whole: held-out loss %.6g", s->score[c]);
    return 0;
}

/* The lowest score tried, and whether x is within a tie of it. */
static double lowest(const selection *s, int nc)
{
    double b = HUGE_VAL;
    for (int c = 0; c < nc; c++)
        if (s->tried[c])
            b = fmin(b, s->score[c]);
    return b;
}

static int ties(double x, double best, double nominal)
{
    return x - best <= WINDOW_TIE * best + WINDOW_TIE_NOMINAL * nominal;
}

/* The search: the middle candidate (0.5 s where it is one), then longer ones while their scores
 * stay within a tie of the lowest (the longest tie wins), then, if none beat the middle, shorter
 * ones while each beats the lowest so far. On a score that falls and then rises with the
 * window, as held-out scores do, it finds what trying every candidate would. */
static int search(selection *s, int nc, double nominal, sid_error *err)
{
    int mid = nc / 2;
    for (int c = 0; c < nc; c++)
        if (s->cand[c] == 0.5)
            mid = c;
    if (evaluate(s, mid, err))
        return -1;
    int best = mid;
    for (int c = mid + 1; c < nc; c++) {
        if (evaluate(s, c, err))
            return -1;
        if (s->score[c] < s->score[best])
            best = c;
        if (!ties(s->score[c], lowest(s, nc), nominal))
            break;
    }
    for (int c = mid - 1; best == mid && c >= 0; c--) {
        if (evaluate(s, c, err))
            return -1;
        if (!(s->score[c] < s->score[best]))
            break;
        best = c;
        mid = c;   /* keep walking while each shorter one beats the last */
    }
    return 0;
}

int window_select(const fit_run_input *in, const fitspec_selection *sel, sid_error *err)
{
    fitspec *spec = in->spec;
    const sid_model *m = in->m;
    const int nlog = in->nlog, single = nlog == 1;
    /* the pieces: the logs, or one log's halves */
    const int npiece = single ? WINDOW_BLOCKS : nlog, nfold = WINDOW_FOLDS, np = sid_model_nparam(m);
    sid_traj *block = NULL;
    selection s = { in, sel, npiece, nfold, np, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0 };
    s.piece = malloc((size_t)npiece * sizeof *s.piece);
    s.train = malloc((size_t)npiece * sizeof *s.train);
    const sid_traj **held = malloc((size_t)nfold * (size_t)npiece * sizeof *held);   /* fold k's at k npiece */
    s.peval = calloc((size_t)nfold, sizeof *s.peval);
    s.theta = malloc((size_t)nfold * (size_t)np * sizeof *s.theta);
    s.fitted = calloc((size_t)nfold, sizeof *s.fitted);
    s.cand = calloc(FITSPEC_MAX_WINDOWS, sizeof *s.cand);
    s.score = calloc(FITSPEC_MAX_WINDOWS, sizeof *s.score);
    s.tried = calloc(FITSPEC_MAX_WINDOWS, sizeof *s.tried);
    int rc = -1;
    if (!s.piece || !s.train || !held || !s.peval || !s.theta || !s.fitted || !s.cand || !s.score || !s.tried ||
        (single && !(block = malloc(WINDOW_BLOCKS * sizeof *block)))) {
        sid_error_set(err, SID_ERR_NOMEM, "out of memory");
        goto done;
    }
    if (single) {
        const sid_traj *tr = in->tr[0];
        if (tr->n < WINDOW_BLOCKS * 2 * WINDOW_MIN_SAMPLES) {
            sid_error_set(err, SID_ERR_INPUT, "%s: window auto: %d samples are too few to split into %d blocks of "
                          "at least %d (give --window S)", in->path[0], tr->n, WINDOW_BLOCKS, 2 * WINDOW_MIN_SAMPLES);
            goto done;
        }
        for (int b = 0; b < WINDOW_BLOCKS; b++) {
            block[b] = slice(tr, (int)((long)tr->n * b / WINDOW_BLOCKS), (int)((long)tr->n * (b + 1) / WINDOW_BLOCKS),
                             sid_model_nbody(m));
            s.piece[b] = &block[b];
        }
    } else {
        for (int j = 0; j < nlog; j++)
            s.piece[j] = in->tr[j];
    }
    /* candidates: the grid within [WINDOW_MIN_SAMPLES intervals, the shortest piece] */
    double shortest = HUGE_VAL, longest = 0, interval = 0;
    for (int j = 0; j < npiece; j++) {
        const double d = duration(s.piece[j]);
        shortest = fmin(shortest, d);
        longest = fmax(longest, d);
        interval = fmax(interval, d / (s.piece[j]->n - 1));   /* the coarsest mean sample interval */
    }
    int nc = 0;
    for (int g = 0; g < NGRID; g++)
        if (grid[g] >= WINDOW_MIN_SAMPLES * interval && grid[g] <= shortest)
            s.cand[nc++] = grid[g];
    if (longest <= WINDOW_FREE_RUN_MAX)
        s.cand[nc++] = 0;
    if (nc == 0) {
        sid_error_set(err, SID_ERR_INPUT, "window auto: no candidate window fits: the shortest %s is %g s, the "
                      "shortest candidate %g s and %d sample intervals of %g s (give --window S)",
                      single ? "block" : "log", shortest, grid[0], WINDOW_MIN_SAMPLES, interval);
        goto done;
    }
    /* the one evaluation protocol: positions only, the longest candidate's windows, logged starts */
    const double eval_w = s.cand[nc - 1];
    sid_loss_opts le;
    fitspec_loss_opts(spec, &le);
    le.window = eval_w;
    le.estimate_start = 0;
    le.weight_q = 1;
    le.weight_qd = 0;
    for (int k = 0; k < nfold; k++) {
        /* a problem borrows its list of logs: each fold keeps its own */
        const sid_traj **hk = held + (size_t)k * (size_t)npiece;
        int nh = 0;
        for (int j = 0; j < npiece; j++)
            if (j % nfold == k)
                hk[nh++] = s.piece[j];
        if (sid_problem_create(&s.peval[k], m, hk, nh, &le, err)) {
            sid_error_prefix(err, "window auto: the held-out %s of fold %d", single ? "half" : "logs", k + 1);
            goto done;
        }
    }
    char list[160];
    list_candidates(list, sizeof list, s.cand, nc);
    sid_io_note("window auto: cross-validation on the fitted %s: candidates %s, %d folds (%s), each scored by the "
                "held-out position loss in %s from logged starts; each fold's fits after its first start from its last",
                single ? "log" : "logs", list, nfold,
                single ? "the log's two halves, each held out in turn" : nlog == 2 ? "leave one log out"
                                                                         : "log j in fold j mod 2",
                eval_w > 0 ? "windows of the longest candidate" : "one window per piece");
    if (eval_w > 0)
        sid_io_note("window auto: evaluation windows %g s", eval_w);
    /* the nominal parameters' held-out loss: what there was to explain (the tie's scale) */
    double nominal = 0;
    for (int k = 0; k < nfold; k++) {
        double l;
        sid_error lerr = { 0 };
        nominal += sid_problem_loss(s.peval[k], in->theta0, NULL, &l, NULL, NULL, &lerr) == SID_OK && isfinite(l)
                       ? l / nfold : 0;
    }
    const double t0 = sid_clock_seconds();
    if (search(&s, nc, nominal, err))
        goto done;
    const double best = lowest(&s, nc);
    if (!isfinite(best)) {
        sid_error_set(err, SID_ERR_NUMERIC, "window auto: every candidate's fit failed (see the warnings); "
                      "give --window S");
        goto done;
    }
    /* the longest candidate tried within WINDOW_TIE of the best; candidates are in increasing
     * length with 0 (whole pieces) last */
    int chosen = 0, ntried = 0;
    for (int c = 0; c < nc; c++) {
        spec->window_cand[c] = s.cand[c];
        spec->window_score[c] = s.tried[c] ? s.score[c] : NAN;
        spec->window_tried[c] = s.tried[c];
        ntried += s.tried[c];
        if (s.tried[c] && ties(s.score[c], best, nominal))
            chosen = c;
    }
    spec->window_nominal = nominal;
    spec->nwindow_cand = nc;
    spec->window_folds = nfold;
    spec->window_eval = eval_w;
    spec->window = s.cand[chosen];
    char what[32];
    if (s.cand[chosen] > 0)
        snprintf(what, sizeof what, "%g s", s.cand[chosen]);
    else
        snprintf(what, sizeof what, "one window per log");
    sid_io_note("window auto: chose %s, %s (%d of %d candidates tried, %d fits in %.1f s)", what,
                s.score[chosen] == best ? "the lowest held-out loss" : "the longest of those that tie with the lowest "
                                                                        "held-out loss",
                ntried, nc, s.nfits, sid_clock_seconds() - t0);
    sid_io_note("window auto: a tie is within 1%% of the lowest, %.6g, plus 1e-6 of the nominal parameters' "
                "held-out loss, %.6g", best, nominal);
    rc = 0;
done:
    for (int k = 0; s.peval && k < nfold; k++)
        sid_problem_free(s.peval[k]);
    free(s.peval);
    free(s.theta);
    free(s.fitted);
    free(s.cand);
    free(s.score);
    free(s.tried);
    free(held);
    free(s.train);
    free(s.piece);
    free(block);
    return rc;
}
