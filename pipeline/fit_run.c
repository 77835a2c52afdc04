/* fit_run.c — the fit's pipeline (fit_run.h): the one sequence of calls behind `sysid fit`
 * and sid_io_fit_run, with its messages and progress. */
#include "fit_run.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stepchoice.h"
#include "warn.h"
#include "window_select.h"

static sid_status nomem(sid_error *err)
{
    return sid_error_set(err, SID_ERR_NOMEM, "out of memory");
}

/* The status of a failure: err's, as the function that failed set it. */
static sid_status failed(const sid_error *err)
{
    return err->status != SID_OK ? err->status : SID_ERR_INPUT;
}

static void tell(const sid_io_fit *f, sid_io_phase phase, sid_io_progress_event event, int step, int total,
                 double loss, double gnorm, double seconds)
{
    if (!f->hooks || !f->hooks->progress)
        return;
    const sid_io_progress p = { phase, event, step, total, loss, gnorm, seconds };
    f->hooks->progress(f->hooks->ctx, &p);
}

/* Each accepted iteration: into the trace (grown as needed; a failed growth drops the rest of
 * the trace, never the fit), then to the hooks. */
static void on_iteration(void *ctx, int iter, double loss, double gnorm, double seconds)
{
    sid_io_fit *f = ctx;
    if (f->ntrace == f->cap) {
        const int cap = f->cap ? 2 * f->cap : 256;
        double *a = realloc(f->trace_loss, (size_t)cap * sizeof *a);
        double *g = a ? realloc(f->trace_gnorm, (size_t)cap * sizeof *g) : NULL;
        if (a)
            f->trace_loss = a;
        if (g)
            f->trace_gnorm = g, f->cap = cap;
    }
    if (f->ntrace < f->cap) {
        f->trace_loss[f->ntrace] = loss;
        f->trace_gnorm[f->ntrace++] = gnorm;
    }
    tell(f, SID_IO_PHASE_FIT, SID_IO_PROGRESS_STEP, iter, 0, loss, gnorm, seconds);
}

typedef struct {
    const sid_io_fit *f;
    double t0;
} window_ctx;

static void on_window(void *ctx, int done, int total)
{
    const window_ctx *w = ctx;
    tell(w->f, SID_IO_PHASE_COVARIANCE, SID_IO_PROGRESS_STEP, done, total, 0, 0, sid_clock_seconds() - w->t0);
}

/* RMSE per position (nq) and velocity (nv) coordinate, before and after. */
static int prediction_alloc(report_prediction *p, int nq, int nv)
{
    for (int s = 0; s < 2; s++) {
        p->rmse_q[s] = calloc((size_t)(nq ? nq : 1), sizeof(double));
        p->rmse_qd[s] = calloc((size_t)(nv ? nv : 1), sizeof(double));
        p->rmse_tau[s] = calloc((size_t)(nv ? nv : 1), sizeof(double));
        if (!p->rmse_q[s] || !p->rmse_qd[s] || !p->rmse_tau[s])
            return -1;
    }
    return 0;
}

static void prediction_free(report_prediction *p)
{
    for (int s = 0; s < 2; s++) {
        free(p->rmse_q[s]);
        free(p->rmse_qd[s]);
        free(p->rmse_tau[s]);
    }
}

static int has_velocities(sid_traj *const *tr, int n)
{
    for (int j = 0; j < n; j++)
        if (sid_traj_has_velocities(tr[j]))
            return 1;
    return 0;
}

/* Loss and RMSE of the predictions from logged start states at theta, into slot s. */
static void predict(sid_problem *p, const double *theta, report_prediction *out, int s, const char *what)
{
    sid_error err = { 0 };
    out->has_tau = sid_problem_tau_scored(p);
    out->ok[s] = sid_problem_loss(p, theta, NULL, &out->loss[s], NULL, NULL, &err) == SID_OK &&
                 sid_problem_rmse(p, theta, NULL, out->rmse_q[s], out->rmse_qd[s], &err) == SID_OK &&
                 sid_problem_rmse_tau(p, theta, out->rmse_tau[s], &err) == SID_OK &&
                 isfinite(out->loss[s]);
    if (!out->ok[s])
        sid_io_warn("%s, %s the fit: the prediction from the logged start states failed: %s", what,
                    s ? "after" : "before", err.msg[0] ? err.msg : "not finite");
}

void sid_io_fit_free(sid_io_fit *f)
{
    if (!f)
        return;
    prediction_free(&f->rep.pred_fit);
    prediction_free(&f->rep.pred_val);
    free(f->log_in);
    free(f->trace_loss);
    free(f->trace_gnorm);
    free(f->cov);
    free(f->grad);
    free(f->x0);
    free(f->theta);
    sid_problem_free(f->pval);
    sid_problem_free(f->ppred);
    sid_problem_free(f->pfit);
    fitspec_selection_free(&f->sel);
    free(f);
}

/* The problems (the fit's, and predictions from logged start states), the starting point and
 * the prediction buffers. */
static int setup(sid_io_fit *f, const fit_run_input *in, sid_loss_opts *lo, sid_error *err)
{
    fitspec *spec = in->spec;
    sid_model *m = in->m;
    sid_traj *const *tr = in->tr;
    const int nlog = in->nlog, nval = in->nval;
    fitspec_choose_start_velocity(spec, m, tr, in->path, nlog + nval);
    if (fitspec_select(spec, m, in->theta0, &f->sel, err))
        return -1;
    if (spec->start == FITSPEC_START_UNSET)
        spec->start = FITSPEC_START_FITTED;
    /* the simulation step, chosen at the nominal parameters on the fitted logs (stepchoice.h) */
    if (stepchoice_apply(spec, m, in->theta0, tr, in->path, nlog, 1, &f->rep.step, err)) {
        sid_error_prefix(err, "%s: choosing the simulation step", in->robot);
        return -1;
    }
    /* "window": "auto": chosen on the fitted logs with that step, before any problem is made */
    if (spec->window_auto && window_select(in, &f->sel, err))
        return -1;
    sid_loss_opts lp;
    fitspec_loss_opts(spec, lo);
    lp = *lo;
    lp.estimate_start = 0;
    if (sid_problem_create(&f->pfit, m, (const sid_traj *const *)tr, nlog, lo, err) ||
        sid_problem_create(&f->ppred, m, (const sid_traj *const *)tr, nlog, &lp, err) ||
        (nval && sid_problem_create(&f->pval, m, (const sid_traj *const *)tr + nlog, nval, &lp, err)))
        return -1;
    const int np = sid_model_nparam(m), nq = sid_model_nq(m), nv = sid_model_nv(m);
    const int nwin = sid_problem_nwindows(f->pfit);
    f->theta = malloc((size_t)np * sizeof *f->theta);
    if (lo->estimate_start)
        f->x0 = malloc((size_t)nwin * (size_t)(nq + nv) * sizeof *f->x0);
    if (!f->theta || (lo->estimate_start && !f->x0) || prediction_alloc(&f->rep.pred_fit, nq, nv) ||
        prediction_alloc(&f->rep.pred_val, nq, nv)) {
        nomem(err);
        return -1;
    }
    memcpy(f->theta, in->theta0, (size_t)np * sizeof *f->theta);
    if (f->x0)
        sid_problem_start_states(f->pfit, in->theta0, f->x0);
    f->rep.pred_fit.present = 1;
    f->rep.pred_fit.has_qd = has_velocities(tr, nlog);
    f->rep.pred_val.present = nval > 0;
    f->rep.pred_val.has_qd = has_velocities(tr + nlog, nval);
    return 0;
}

/* The fit itself, with what it is about to do and how it ended. */
static int fit(sid_io_fit *f, const fit_run_input *in, sid_error *err)
{
    const fitspec *spec = in->spec;
    const int nlog = in->nlog, nwin = sid_problem_nwindows(f->pfit), nfree = f->sel.n;
    tell(f, SID_IO_PHASE_FIT, SID_IO_PROGRESS_BEGIN, 0, 0, 0, 0, 0);
    sid_fit_opts fo;
    fitspec_fit_opts(spec, &f->sel, &fo);
    fo.progress = on_iteration;
    fo.ctx = f;
    fo.interrupt = f->hooks ? f->hooks->interrupt : NULL;
    sid_io_note("fitting %d parameter%s of %s to %d log%s (%d window%s, start states %s)", nfree,
                nfree == 1 ? "" : "s", in->robot, nlog, nlog == 1 ? "" : "s", nwin, nwin == 1 ? "" : "s",
                !f->x0 ? "logged" : fo.smoothing_pairs ? "held at the logged ones" : "fitted");
    if (!spec->free_given) {
        const int g = f->sel.gauge;
        sid_io_note("free by default: masses of moving links; armature, viscous and Coulomb friction and motor "
                    "constants of moving joints%s%s%s (--free, --free-only and --fix choose others)",
                    g >= 0 ? "; " : "", g >= 0 ? sid_model_param(in->m, g)->name : "",
                    g >= 0 ? " held as the unit of torque" : "");
    }
    if (sid_model_nq_state(in->m) > sid_model_nq(in->m) && nwin > nlog)
        /* the hidden rotor is not a start-state variable: each window restarts it unloaded */
        sid_io_warn("backlash: each of the %d windows starts the motor side unloaded at its link, where the real one "
                    "may be pressed against a side; that start biases the backlash parameters: --window 0 fits each "
                    "log in one piece (docs/correctness.md, \"Backlash\")", nwin);
    if (fo.smoothing_pairs > 0 && fo.smoothing_pairs < nfree)
        /* L-BFGS only ever moves along combinations of the smoothed gradients */
        sid_io_warn("--smoothing with %d pairs for %d free parameters: the fit moves only within the span of "
                    "%d random directions", fo.smoothing_pairs, nfree, fo.smoothing_pairs);
    char why[sizeof f->fr.choice];
    sid_fit_choose(f->pfit, &fo, why, sizeof why);
    sid_io_note("optimizer: %s", why);
    const sid_status st = sid_fit(f->pfit, f->theta, f->x0, &fo, &f->fr, err);
    tell(f, SID_IO_PHASE_FIT, SID_IO_PROGRESS_END, f->fr.iterations, 0, f->fr.loss, 0, f->fr.seconds);
    if (st != SID_OK) {
        sid_error_prefix(err, "%s", in->robot);
        return -1;
    }
    const sid_fit_result *fr = &f->fr;
    if (fr->nran > 1)   /* the hand-over, as the report's optimizer.why ends */
        sid_io_note("optimizer: %s", fr->choice + strlen(why) + 2);
    if (fr->stop == SID_STOP_TIME)
        /* results then depend on the machine's speed: never silently */
        sid_io_warn("--time-limit %g s reached after %d iterations: the result is where the optimizer was "
                    "then (report: \"stop\": \"time_limit\")", spec->time_limit, fr->iterations);
    if (fr->stop == SID_STOP_FAILURE)
        /* the nominal point had a finite loss, so there is always a usable result */
        sid_io_warn("the optimizer stopped: %s; the best point found (loss %g, nominal %g) is reported",
                    fr->message, fr->loss, fr->loss0);
    if (fo.smoothing_pairs && fr->loss > fr->loss0)
        sid_io_warn("with smoothing the loss rose from %g to %g (the smoothed loss fell from %g to %g)",
                    fr->loss0, fr->loss, fr->smoothed_loss0, fr->smoothed_loss);
    return 0;
}

/* What the data determine: the covariance of the free parameters, if there are not too many.
 * Interrupted (during the fit or here) or failed, the result has no standard errors and the
 * report says why. */
static int covariance(sid_io_fit *f, sid_error *err)
{
    window_ctx w = { f, sid_clock_seconds() };
    tell(f, SID_IO_PHASE_COVARIANCE, SID_IO_PROGRESS_BEGIN, 0, sid_problem_nwindows(f->pfit), 0, 0, 0);
    sid_problem_set_progress(f->pfit, on_window, &w);
    int rc = 0;
    sid_error cerr = { 0 };
    if (f->sel.n > SID_MAX_FREE) {
        sid_io_warn("%d free parameters: standard errors are computed for at most %d", f->sel.n, SID_MAX_FREE);
    } else if (!(f->cov = malloc(sizeof *f->cov))) {
        nomem(err);
        rc = -1;
    } else if (sid_problem_covariance(f->pfit, f->theta, f->x0, f->sel.n, f->sel.idx,
                                      f->hooks ? f->hooks->interrupt : NULL, f->cov, &cerr) != SID_OK) {
        f->rep.cov_skipped = cerr.status == SID_ERR_INTERRUPTED ? "interrupted" : "failed";
        sid_io_warn("covariance: %s", cerr.msg);
        free(f->cov);
        f->cov = NULL;
    }
    const double seconds = sid_clock_seconds() - w.t0;
    tell(f, SID_IO_PHASE_COVARIANCE, SID_IO_PROGRESS_END, 0, sid_problem_nwindows(f->pfit), 0, 0, seconds);
    sid_problem_set_progress(f->pfit, NULL, NULL);
    f->rep.seconds_cov = seconds;
    return rc;
}

sid_status fit_run(const fit_run_input *in, sid_io_fit **out, sid_error *err)
{
    *out = NULL;
    sid_io_fit *f = calloc(1, sizeof *f);
    if (!f)
        return nomem(err);
    f->hooks = in->hooks;
    sid_model *m = in->m;
    const int np = sid_model_nparam(m), nlog = in->nlog;
    sid_loss_opts lo;
    if (setup(f, in, &lo, err) || fit(f, in, err) || covariance(f, err))
        goto fail;

    /* predictions from the logged start states, before and after */
    report *r = &f->rep;
    predict(f->ppred, in->theta0, &r->pred_fit, 0, "fitted logs");
    predict(f->ppred, f->theta, &r->pred_fit, 1, "fitted logs");
    if (f->pval) {
        predict(f->pval, in->theta0, &r->pred_val, 0, "validation logs");
        predict(f->pval, f->theta, &r->pred_val, 1, "validation logs");
    }

    r->m = m;
    r->spec = in->spec;
    r->sel = &f->sel;
    r->estimate_start = lo.estimate_start;
    r->nwindows = sid_problem_nwindows(f->pfit);
    r->nlog = nlog;
    r->nval = in->nval;
    r->theta0 = in->theta0;
    r->theta = f->theta;
    r->fit = &f->fr;
    r->cov = f->cov;
    /* the gradient at the result says which bounds hold a value back */
    double loss_end;
    sid_error gerr = { 0 };
    if ((f->grad = malloc((size_t)np * sizeof *f->grad)) &&
        sid_problem_loss(f->pfit, f->theta, f->x0, &loss_end, f->grad, NULL, &gerr) == SID_OK)
        r->grad = f->grad;
    derived_compute(m, in->doc, in->theta0, f->theta, &f->sel, f->cov, &f->derived);
    r->derived = &f->derived;
    r->ntrace = f->ntrace;
    r->trace_loss = f->trace_loss;
    r->trace_gnorm = f->trace_gnorm;
    for (int i = 0; i < np; i++)
        if (!isfinite(f->theta[i])) {
            sid_error_set(err, SID_ERR_NONFINITE, "%s: nothing written: the fitted %s is %g", in->robot,
                          sid_model_param(m, i)->name, f->theta[i]);
            goto fail;
        }
    *out = f;
    return SID_OK;
fail:
    sid_io_fit_free(f);
    return failed(err);
}
