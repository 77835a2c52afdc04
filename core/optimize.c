/* optimize.c — sid_fit: the NLopt L-BFGS run (see sid.h, "fitting"), with or without randomized
 * smoothing of the loss, on the driver of fit_driver.c; sid_optimize (optimizer_auto.c) runs it
 * or Levenberg-Marquardt (lm.c) on the same driver, or both. */
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

const char *sid_optimizer_str(sid_optimizer o)
{
    return o == SID_OPT_LM ? "lm" : o == SID_OPT_AUTO ? "auto" : "lbfgs";
}

void sid_fit_opts_defaults(sid_fit_opts *o)
{
    *o = (sid_fit_opts){.optimizer = SID_OPT_LBFGS, .nfree = 0, .idx = NULL, .lo = NULL, .hi = NULL, .max_iter = 1000, .ftol_rel = 1e-10,
                        .time_limit = 0, .progress = NULL, .ctx = NULL, .interrupt = NULL, .smoothing_sigma = 0,
                        .smoothing_pairs = 0, .smoothing_seed = 1};
}

/* The loss at x + s e, clamped to the bounds (outside them the loss is not the user's). */
static double perturbed(sid_driver *d, const double *x, const double *e, double s)
{
    for (int k = 0; k < d->nf; k++) d->xp[k] = fmin(fmax(x[k] + s * e[k], d->lo[k]), d->hi[k]);
    return sid_driver_loss(d, d->xp, NULL);
}

/* The smoothed loss 1/(2N) sum_i [L(x + sigma e_i) + L(x - sigma e_i)] and, with gx, fscale
 * times its antithetic gradient estimate sum_i (L(x + sigma e_i) - L(x - sigma e_i)) e_i /
 * (2 N sigma). The pairs are summed in a fixed order: the result depends on the seed alone. */
static double smoothed(sid_driver *d, const double *x, double *gx)
{
    const int nf = d->nf, pairs = d->o->smoothing_pairs;
    const double sigma = d->o->smoothing_sigma;
    double sum = 0;
    for (int k = 0; gx && k < nf; k++) gx[k] = 0;
    for (int i = 0; i < pairs; i++) {
        const double *e = d->dir + (size_t)i * (size_t)nf;
        const double lp = perturbed(d, x, e, sigma), lm = perturbed(d, x, e, -sigma);
        sum += lp + lm;
        for (int k = 0; gx && k < nf; k++) gx[k] += (lp - lm) * e[k];
    }
    for (int k = 0; gx && k < nf; k++) gx[k] *= d->fscale / (2 * pairs * sigma);
    return sum / (2 * pairs);
}

static double evaluate(sid_driver *d, const double *x, double *gx)
{
    return d->dir ? smoothed(d, x, gx) : sid_driver_loss(d, x, gx);
}

static double objective(unsigned n, const double *x, double *gx, void *data)
{
    sid_driver *d = data;
    sid_fit_result *r = d->r;
    if (d->o->interrupt && *d->o->interrupt) {
        r->stop = SID_STOP_INTERRUPTED;
        nlopt_force_stop(d->opt);
    }
    if (nlopt_get_force_stop(d->opt)) {
        /* L-BFGS looks at a stop request only between line searches: until then, answer
         * without simulating, with a loss above any seen, so the line search ends at once */
        for (unsigned k = 0; gx && k < n; k++) gx[k] = 0;
        return d->reject_loss * d->fscale;
    }
    r->evaluations++;
    const double f = evaluate(d, x, gx);
    double gnorm = 0;
    for (int k = 0; gx && k < d->nf; k++) gnorm += gx[k] * gx[k];
    if (f < d->best_f) {
        d->best_f = f;
        memcpy(d->best, x, sizeof(double) * n);
        if (r->evaluations > 1) {
            r->iterations++;
            sid_driver_accept(d, f);
            if (d->o->progress) d->o->progress(d->o->ctx, r->iterations, f, sqrt(gnorm) / d->fscale, sid_driver_now() - d->t0);
            if (d->o->max_iter > 0 && r->iterations >= d->o->max_iter) nlopt_force_stop(d->opt);
            else if (!d->dir && (d->judged = sid_driver_judge(d, SID_OPT_LBFGS, NAN))) nlopt_force_stop(d->opt);
        }
    }
    /* NLopt's L-BFGS stops on an absolute gradient size: keep the objective near 1 */
    return f * d->fscale;
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
        *f = evaluate(&d, d.x, gx);
        if (d.failed) s = sid_error_set(err, d.fail.status, "%s", d.fail.msg);
    }
    sid_driver_free(&d);
    return s;
}

/* r->stop and r->message from NLopt's result. */
static void stop_reason(nlopt_opt opt, nlopt_result nr, const sid_fit_opts *o, int judged, const char *d_handover,
                        sid_fit_result *r)
{
    const char *msg = nlopt_get_errmsg(opt);
    if (nlopt_get_force_stop(opt)) nr = NLOPT_FORCED_STOP;   /* whatever the line search made of it */
    switch (nr) {
    case NLOPT_FTOL_REACHED: case NLOPT_XTOL_REACHED: case NLOPT_STOPVAL_REACHED: case NLOPT_SUCCESS:
        snprintf(r->message, sizeof r->message, "converged (%s)", nlopt_result_to_string(nr));
        break;
    case NLOPT_MAXEVAL_REACHED:
        r->stop = SID_STOP_MAX_ITER;
        snprintf(r->message, sizeof r->message, "reached the evaluation limit");
        break;
    case NLOPT_MAXTIME_REACHED:
        r->stop = SID_STOP_TIME;
        snprintf(r->message, sizeof r->message, "reached the time limit of %g s", o->time_limit);
        break;
    case NLOPT_FORCED_STOP:
        if (r->stop != SID_STOP_INTERRUPTED && judged == SID_JUDGE_FLAT) break;   /* converged: judged so */
        if (r->stop != SID_STOP_INTERRUPTED && judged == SID_JUDGE_CRAWL) {
            r->stop = SID_STOP_ROUNDOFF;
            snprintf(r->message, sizeof r->message, "%s", d_handover);
            break;
        }
        if (r->stop != SID_STOP_INTERRUPTED) r->stop = SID_STOP_MAX_ITER;
        snprintf(r->message, sizeof r->message, "%s", r->stop == SID_STOP_INTERRUPTED ? "interrupted" : "reached max_iter");
        break;
    case NLOPT_ROUNDOFF_LIMITED:
        r->stop = SID_STOP_ROUNDOFF;
        snprintf(r->message, sizeof r->message, "no further progress possible in floating point (roundoff limited)");
        break;
    default:
        r->stop = SID_STOP_FAILURE;
        snprintf(r->message, sizeof r->message, "NLopt: %s%s%s", nlopt_result_to_string(nr), msg ? ": " : "", msg ? msg : "");
    }
}

sid_status sid_lbfgs_run(sid_driver *d, sid_error *err)
{
    const sid_fit_opts *o = d->o;
    nlopt_opt opt = nlopt_create(NLOPT_LD_LBFGS, (unsigned)d->n);
    if (!opt) return sid_error_set(err, SID_ERR_NOMEM, "out of memory (nlopt_create)");
    d->opt = opt;
    nlopt_set_lower_bounds(opt, d->lo);
    nlopt_set_upper_bounds(opt, d->hi);
    nlopt_set_min_objective(opt, objective, d);
    nlopt_set_ftol_rel(opt, o->ftol_rel > 0 ? o->ftol_rel : 1e-10);
    nlopt_set_xtol_rel(opt, 1e-12);
    nlopt_set_maxeval(opt, o->max_iter > 0 ? 20 * o->max_iter + 20 : 0);
    /* what is left of the time limit (LM may have run first) */
    if (o->time_limit > 0) nlopt_set_maxtime(opt, fmax(o->time_limit - (sid_driver_now() - d->t0), 1e-3));
    double fmin = 0;
    d->r->stop = SID_STOP_CONVERGED;
    if (!d->naccept) sid_driver_accept(d, d->best_f);
    d->judged = SID_JUDGE_GO_ON;
    const nlopt_result nr = nlopt_optimize(opt, d->x, &fmin);
    stop_reason(opt, nr, o, d->judged, d->handover, d->r);
    nlopt_destroy(opt);
    d->r->seconds = sid_driver_now() - d->t0;
    return d->failed ? sid_error_set(err, d->fail.status, "%s", d->fail.msg) : SID_OK;
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
    r->smoothed_loss0 = d.dir ? smoothed(&d, d.x, NULL) : r->loss0;
    r->rejected = 0;   /* perturbations of the nominal point are not trial points */
    if (r->loss0 <= SID_EXACT_LOSS) {
        /* the data are reproduced to rounding error: there is nothing to fit, and the
         * gradient is rounding noise that would only send L-BFGS astray */
        r->loss = r->loss0;
        r->smoothed_loss = r->smoothed_loss0;
        r->stop = SID_STOP_CONVERGED;
        snprintf(r->message, sizeof r->message, "converged: the nominal parameters reproduce the data to rounding error");
        r->seconds = sid_driver_now() - d.t0;
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
