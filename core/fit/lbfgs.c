/* lbfgs.c — NLopt's L-BFGS on the driver (sid_lbfgs_run, fit_driver.h): the objective NLopt
 * calls (the loss and its adjoint gradient, or the smoothed loss and its estimate), the flat
 * and crawl tests after each new best point (fit_judge.c), and NLopt's result as a stop reason. */
#include "fit_driver.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

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
    const double f = sid_driver_objective(d, x, gx);
    double gnorm = 0;
    for (int k = 0; gx && k < d->nf; k++) gnorm += gx[k] * gx[k];
    if (f < d->best_f) {
        d->best_f = f;
        memcpy(d->best, x, sizeof(double) * n);
        if (r->evaluations > 1) {
            r->iterations++;
            sid_driver_accept(d, f);
            if (d->o->progress) d->o->progress(d->o->ctx, r->iterations, f, sqrt(gnorm) / d->fscale, sid_clock_seconds() - d->t0);
            if (d->o->max_iter > 0 && r->iterations >= d->o->max_iter) nlopt_force_stop(d->opt);
            else if (!d->dir && (d->judged = sid_driver_judge(d, SID_OPT_LBFGS, NAN))) nlopt_force_stop(d->opt);
        }
    }
    /* NLopt's L-BFGS stops on an absolute gradient size: keep the objective near 1 */
    return f * d->fscale;
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
    if (o->time_limit > 0) nlopt_set_maxtime(opt, fmax(o->time_limit - (sid_clock_seconds() - d->t0), 1e-3));
    double fmin = 0;
    d->r->stop = SID_STOP_CONVERGED;
    if (!d->naccept) sid_driver_accept(d, d->best_f);
    d->judged = SID_JUDGE_GO_ON;
    const nlopt_result nr = nlopt_optimize(opt, d->x, &fmin);
    stop_reason(opt, nr, o, d->judged, d->handover, d->r);
    nlopt_destroy(opt);
    d->r->seconds = sid_clock_seconds() - d->t0;
    return d->failed ? sid_error_set(err, d->fail.status, "%s", d->fail.msg) : SID_OK;
}
