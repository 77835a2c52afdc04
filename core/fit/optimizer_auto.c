/* optimizer_auto.c — which optimizer a fit runs (sid_optimize): the one asked for, or under
 * SID_OPT_AUTO the one that pays on this problem, and a hand-over to the other when it stalls.
 *
 * The choice is priced, not guessed. An L-BFGS iteration is about 1.1 evaluations of the loss and
 * its adjoint gradient, 2.6 forward steps per simulated step (the gradient costs 2.35 forward
 * passes, docs/performance.md). An LM iteration is one Jacobian pass of ndir = nfree + the start
 * state's coordinates directions, priced per step by fd.c's rows model (min(ndir, 1.4 nv +
 * 0.012 nv ndir) tangents of about a forward step each), plus the normal matrix (rows x ndir^2 / 2
 * multiply-adds per sample, against about 450 nv for a forward step), plus 1.5 trial losses.
 * LM needs 10 to 30 times fewer iterations (tests/tools/lm_vs_lbfgs.sh: 9 against 282, 112 against
 * 1000), so it runs first when its iteration costs at most SID_AUTO_LM_RATIO L-BFGS iterations.
 * On arm7 this model says 7.2 for 28 free parameters and 18 for 97, where 6.3 and 19 were
 * measured; the choice depends on the problem alone, never on a clock, so results repeat.
 *
 * Hand-over, once: LM that stalls (a step below xtol that the Gauss-Newton model does not
 * call a minimum, or every step refused: roundoff_limited) or whose Jacobian fails hands its best
 * point to L-BFGS, which copes with rejected regions and non-smooth losses by its line search;
 * L-BFGS that crawls (fit_judge.c), fails or is roundoff-limited hands to LM, whose
 * Gauss-Newton steps either finish the fit or certify where it is. The iteration limit and the
 * time limit count both. */
#include "fit_driver.h"
#include "fd.h"
#include "problem.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define SID_AUTO_LM_RATIO 10.0    /* LM first while its iteration costs at most this many L-BFGS ones */
#define LBFGS_ITER_STEPS 2.6      /* an L-BFGS iteration in forward steps per simulated step */
#define LM_TRIAL_STEPS 1.5        /* an LM iteration's trial losses, likewise */
#define FORWARD_MACS_PER_DOF 450  /* multiply-adds of a forward step per degree of freedom (arm7: 3.1 k) */

const char *sid_optimizer_str(sid_optimizer o)
{
    return o == SID_OPT_LM ? "lm" : o == SID_OPT_AUTO ? "auto" : "lbfgs";
}

double sid_lm_cost_ratio(const sid_problem *p, int nfree, int *ndir_out, double *tangents_out, double *normal_out)
{
    const sid_model *m = p->m;
    const int ndir = nfree + (p->o.estimate_start ? m->nqo + m->nvo : 0);
    const double nv = m->nv > 0 ? m->nv : 1;
    /* simulated steps over every window */
    double steps = 0;
    for (int w = 0; w < p->nwin; w++) {
        const window *win = &p->win[w];
        const sid_traj *tr = p->logs[win->log];
        steps += sid_span_steps(&p->o.sim, tr, win->k0, win->k1);
    }
    if (steps < 1) steps = 1;
    const double tangents = p->step->jvp && sid_fd_rows_pay(m, ndir) ? 1.4 * nv + 0.012 * nv * ndir : ndir;
    const double normal = (double)p->nres * ndir * ndir / 2 / (FORWARD_MACS_PER_DOF * nv) / steps;
    if (ndir_out) *ndir_out = ndir;
    if (tangents_out) *tangents_out = tangents;
    if (normal_out) *normal_out = normal;
    return (tangents + normal + LM_TRIAL_STEPS) / LBFGS_ITER_STEPS;
}

/* Why LM cannot run on problem p with options o at all, or NULL. */
static const char *lm_impossible_for(const sid_problem *p, const sid_fit_opts *o)
{
    if (o->smoothing_pairs > 0) return "smoothing estimates a gradient from losses; LM needs the residuals' Jacobian";
    return sid_step_tangent_missing(p->step, p->m, 0);
}

sid_optimizer sid_fit_choose(const sid_problem *p, const sid_fit_opts *o, char *buf, size_t n)
{
    if (o->optimizer != SID_OPT_AUTO) {
        snprintf(buf, n, "%s, as asked", sid_optimizer_str(o->optimizer));
        return o->optimizer;
    }
    const char *no = lm_impossible_for(p, o);
    if (no) {
        snprintf(buf, n, "lbfgs: %s", no);
        return SID_OPT_LBFGS;
    }
    int ndir;
    const double ratio = sid_lm_cost_ratio(p, o->nfree, &ndir, NULL, NULL);
    const int lm = ratio <= SID_AUTO_LM_RATIO;
    char starts[64] = "";
    if (ndir > o->nfree) snprintf(starts, sizeof starts, " and %d start-state coordinates per window", ndir - o->nfree);
    snprintf(buf, n, "%s: an LM iteration (a Jacobian of %d directions: %d free parameters%s) costs about %.2g "
             "L-BFGS iterations, %s %g; LM needs 10 to 30 times fewer", lm ? "lm" : "lbfgs", ndir, o->nfree, starts,
             ratio, lm ? "within" : "above", SID_AUTO_LM_RATIO);
    return lm ? SID_OPT_LM : SID_OPT_LBFGS;
}

static sid_status run_one(sid_driver *d, sid_optimizer which, sid_error *err)
{
    sid_fit_result *r = d->r;
    const int it0 = r->iterations;
    r->ran[r->nran] = which;
    r->nran++;
    const sid_status s = which == SID_OPT_LM ? sid_lm_run(d, err) : sid_lbfgs_run(d, err);
    r->ran_iterations[r->nran - 1] = r->iterations - it0;
    return s;
}

sid_status sid_optimize(sid_driver *d, sid_error *err)
{
    const sid_fit_opts *o = d->o;
    sid_fit_result *r = d->r;
    const int automatic = o->optimizer == SID_OPT_AUTO;
    const sid_optimizer first = sid_fit_choose(d->p, o, r->choice, sizeof r->choice);
    d->watch = automatic;
    d->lm_possible = !lm_impossible_for(d->p, o);
    sid_status s = run_one(d, first, err);
    if (s || !automatic) return s;
    /* the hand-over, once */
    const int stalled = d->handover[0] || r->stop == SID_STOP_ROUNDOFF || r->stop == SID_STOP_FAILURE;
    const sid_optimizer second = first == SID_OPT_LM ? SID_OPT_LBFGS : SID_OPT_LM;
    if (!stalled || (second == SID_OPT_LM && !d->lm_possible) || (o->max_iter > 0 && r->iterations >= o->max_iter))
        return SID_OK;
    const size_t len = strlen(r->choice);
    snprintf(r->choice + len, sizeof r->choice - len, "; %s stopped after %d iterations (%s): %s took over",
             sid_optimizer_str(first), r->ran_iterations[0], d->handover[0] ? d->handover : r->message,
             sid_optimizer_str(second));
    memcpy(d->x, d->best, sizeof(double) * (size_t)d->n);
    d->handover[0] = '\0';
    d->watch = 0;
    r->stop = SID_STOP_CONVERGED;
    r->message[0] = '\0';
    return run_one(d, second, err);
}
