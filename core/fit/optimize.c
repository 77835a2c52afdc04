/* optimize.c — sid_fit (see sid.h, "fitting"): the nominal loss, the driver of fit_driver.c,
 * sid_optimize (optimizer_auto.c: L-BFGS in lbfgs.c, Levenberg-Marquardt in lm.c, or both),
 * then what the result says (smoothing's plain loss at its optimum, no_progress). */
#include "fit_driver.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *sid_stop_str(sid_stop s)
{
    switch (s) {
    case SID_STOP_CONVERGED: return "converged";
    case SID_STOP_MAX_ITER: return "max_iter";
    case SID_STOP_TIME: return "time_limit";
    case SID_STOP_INTERRUPTED: return "interrupted";
    case SID_STOP_ROUNDOFF: return "roundoff_limited";
    case SID_STOP_FAILURE: return "failure";
    case SID_STOP_NO_PROGRESS: return "no_progress";
    }
    return "unknown";
}

int sid_stop_converged(sid_stop s) { return s == SID_STOP_CONVERGED; }

void sid_fit_opts_defaults(sid_fit_opts *o)
{
    *o = (sid_fit_opts){.optimizer = SID_OPT_LBFGS, .nfree = 0, .idx = NULL, .lo = NULL, .hi = NULL, .max_iter = 1000, .ftol_rel = 1e-10,
                        .time_limit = 0, .progress = NULL, .ctx = NULL, .interrupt = NULL, .smoothing_sigma = 0,
                        .smoothing_pairs = 0, .smoothing_seed = 1};
}

/* The loss at the nominal point, and the rejection loss scaled from it. */
static sid_status nominal_loss(sid_driver *d, double *loss0, sid_error *err)
{
    sid_status s = sid_problem_loss(d->p, d->theta, d->nstart ? d->x0_init : d->x0_fixed, loss0, NULL, NULL, err);
    if (s) sid_error_prefix(err, "at the nominal parameters");
    d->reject_loss = 1e6 * *loss0 + 1e-300;
    return s;
}

sid_status sid_fit_objective(sid_problem *p, const double *theta, const double *x0, const sid_fit_opts *o, double *f,
                             double *gx, sid_error *err)
{
    sid_fit_result r = {0};
    sid_driver d;
    double loss0;
    sid_status s = sid_driver_init(&d, p, theta, x0, o, &r, 0, err);
    if (s) return s;
    if (!(s = sid_model_check_theta(d.m, theta, err)) && !(s = nominal_loss(&d, &loss0, err))) {
        *f = sid_driver_objective(&d, d.x, gx);
        if (d.failed) s = sid_error_set(err, d.fail.status, "%s", d.fail.msg);
    }
    sid_driver_free(&d);
    return s;
}

/* With smoothing, the point returned is the best of the smoothed loss; its plain loss is
 * what r->loss reports. Should that point not even simulate, the nominal one is returned. */
static void smoothed_result(sid_driver *d)
{
    sid_fit_result *r = d->r;
    const int rejected = r->rejected;
    r->smoothed_loss = d->best_f;
    r->loss = sid_driver_loss(d, d->best, NULL);
    if (r->rejected == rejected) return;
    r->rejected = rejected;
    memset(d->best, 0, sizeof(double) * (size_t)d->n);
    r->loss = r->loss0;
    r->smoothed_loss = r->smoothed_loss0;
    const size_t len = strlen(r->message);
    snprintf(r->message + len, sizeof r->message - len, "; the smoothed optimum does not simulate: nominal returned");
}

/* A fit whose loss did not fall by more than SID_PROGRESS_REL of itself (moving one parameter by
 * one standard error changes the loss by about 1/nres of itself: 1e-6 is 1 % of that for logs of
 * 10^4 residuals, and far less for shorter ones) has shown nothing unless the optimizer converged there having
 * evaluated most of what it tried: then the start is a minimum to its tolerance. When most
 * trial points were rejected (unphysical or diverging), or the stop was roundoff or an
 * iteration limit, it says only that no step was found: no_progress, never a silent success. */
#define SID_PROGRESS_REL 1e-6
static void check_progress(sid_fit_result *r)
{
    if (r->loss0 <= SID_EXACT_LOSS || r->loss0 - r->loss > SID_PROGRESS_REL * r->loss0) return;
    if (r->stop == SID_STOP_CONVERGED ? 2 * r->rejected < r->evaluations
                                      : r->stop != SID_STOP_ROUNDOFF && r->stop != SID_STOP_MAX_ITER)
        return;
    char was[sizeof r->message];
    snprintf(was, sizeof was, "%s", r->message);
    snprintf(r->message, sizeof r->message, "the loss did not fall (%d iterations, %d of %d trial "
             "points rejected; %.60s)", r->iterations, r->rejected, r->evaluations, was);
    r->stop = SID_STOP_NO_PROGRESS;
}

sid_status sid_fit(sid_problem *p, double *theta, double *x0, const sid_fit_opts *o, sid_fit_result *r, sid_error *err)
{
    memset(r, 0, sizeof *r);
    sid_driver d;
    sid_status s = sid_driver_init(&d, p, theta, x0, o, r, 1, err);
    if (s) return s;
    if ((s = nominal_loss(&d, &r->loss0, err))) goto done;
    r->smoothed_loss0 = d.dir ? sid_driver_objective(&d, d.x, NULL) : r->loss0;
    r->rejected = 0;   /* perturbations of the nominal point are not trial points */
    if (r->loss0 <= SID_EXACT_LOSS) {
        /* the data are reproduced to rounding error: there is nothing to fit, and the
         * gradient is rounding noise that would only send L-BFGS astray */
        r->loss = r->loss0;
        r->smoothed_loss = r->smoothed_loss0;
        r->stop = SID_STOP_CONVERGED;
        snprintf(r->message, sizeof r->message, "converged: the nominal parameters reproduce the data to rounding error");
        r->seconds = sid_clock_seconds() - d.t0;
        goto done;
    }
    d.best_f = d.dir ? r->smoothed_loss0 : r->loss0;   /* the nominal point, until something beats it */
    d.fscale = 1 / (d.best_f > 0 ? d.best_f : r->loss0);
    if ((s = sid_optimize(&d, err))) goto done;
    if (d.dir) {
        smoothed_result(&d);
    } else {
        r->loss = d.best_f;
        r->smoothed_loss = r->loss;
    }
    check_progress(r);
    sid_driver_unpack(&d, d.best);
    memcpy(theta, d.theta, sizeof(double) * (size_t)d.m->nparam);
    if (d.nstart) memcpy(x0, d.x0, sizeof(double) * (size_t)d.nstart);
done:
    sid_driver_free(&d);
    return s;
}
