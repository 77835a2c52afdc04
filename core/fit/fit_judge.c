/* fit_judge.c — after each accepted iteration, is the fit flat, stalled or crawling?
 * (sid_driver_judge, fit_driver.h). Both optimizers ask it (lm.c, lbfgs.c); under
 * SID_OPT_AUTO its "crawling" and LM's "stalled" make optimizer_auto.c hand over. */
#include "fit_driver.h"

#include <math.h>
#include <stdio.h>

/* Flat: over its span (SID_FLAT_ITERS LM iterations, SID_CRAWL_ITERS L-BFGS ones) the loss fell by
 * less than flat_factor / nres of itself: the fit's chi-square changed by less than flat_factor
 * over the span (with nres residuals of variance 2F, chi2 = nres and d chi2 = nres dF / F), the
 * parameters by a fraction of one standard error. A model the data do not quite fit (real
 * hardware) otherwise creeps on at 1e-6 of the loss an iteration for thousands (the DFKI double
 * pendulum's LM: 1602 iterations at a loss of 1.19876e-3).
 * Crawling (under SID_OPT_AUTO only): the span gained less than SID_CRAWL_GAIN but more than
 * flat; for LM also no less than half the span before it (its steps are not converging, as
 * Gauss-Newton steps near a minimum do, by orders of magnitude a span, but creeping along a
 * valley its linearisation does not see: dry or sharply smoothed friction). */
int sid_driver_judge(sid_driver *d, sid_optimizer which, double gn_rel)
{
    const int span = which == SID_OPT_LM ? SID_FLAT_ITERS : SID_CRAWL_ITERS;
    const double gain = sid_driver_gain(d, span), factor = d->o->flat_factor > 0 ? d->o->flat_factor : 1;
    if (gain < 0) return SID_JUDGE_GO_ON;
    if (d->nres * gain <= factor) {
        /* flat losses, but the undamped model promises more than flat: no minimum, a stall
         * (damping or bounds keep the steps short: LM's steps refused as unphysical) */
        if (!isnan(gn_rel) && !(gn_rel >= 0 && d->nres * gn_rel <= factor)) {
            char why[sizeof d->handover];
            if (gn_rel < 0)
                snprintf(why, sizeof why, "stalled: the loss fell by %.2g of itself over the last %d iterations, and "
                         "the bounds clip the Gauss-Newton step into an ascent", gain, span);
            else
                snprintf(why, sizeof why, "stalled: the loss fell by %.2g of itself over the last %d iterations, "
                         "where the Gauss-Newton model promises %.2g of it", gain, span, gn_rel);
            if (d->watch) {   /* L-BFGS takes over */
                snprintf(d->handover, sizeof d->handover, "%s", why);
                return SID_JUDGE_CRAWL;
            }
            d->r->stop = SID_STOP_ROUNDOFF;
            snprintf(d->r->message, sizeof d->r->message, "%s", why);
            return SID_JUDGE_STALL;
        }
        d->r->stop = SID_STOP_CONVERGED;
        snprintf(d->r->message, sizeof d->r->message, "converged: the loss fell by %.2g of itself over the last %d "
                 "iterations, within %g residual's share (1/%.0f)", gain, span, factor, d->nres);
        return SID_JUDGE_FLAT;
    }
    if (!d->watch || gain >= SID_CRAWL_GAIN || (which == SID_OPT_LBFGS && !d->lm_possible)) return SID_JUDGE_GO_ON;
    if (which == SID_OPT_LM) {
        const double before = sid_driver_gain_span(d, 2 * span, span);
        if (before < 0 || gain < 0.5 * before) return SID_JUDGE_GO_ON;
    }
    snprintf(d->handover, sizeof d->handover, "crawling: the loss fell by %.2g of itself over the last %d iterations",
             gain, span);
    return SID_JUDGE_CRAWL;
}
