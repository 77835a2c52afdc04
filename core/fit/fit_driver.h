/* fit_driver.h — what the fit's two optimizers share (internal to core/): the variables they
 * move, x = (nf scaled free parameters, then nstart scaled start states), their bounds, the
 * loss at a trial point with unphysical or diverging points rejected (fit_driver.c), the
 * flat/stall/crawl judgement (fit_judge.c) and the two runs (lm.c, lbfgs.c). */
#ifndef SID_FIT_DRIVER_H
#define SID_FIT_DRIVER_H

#include "model.h"

#include <nlopt.h>

/* A link whose six inertia entries are all free and unbounded moves them through
 * inertia_param.h's map:
 * k, the positions of ixx..iyz in the free list; i0, theta's index of ixx; L0, the nominal's
 * factor; I0, the nominal tensor (x = 0 gives it exactly); G, d I / d x at the last unpack. */
typedef struct {
    int k[6], i0;
    double L0[6], I0[6], G[36];
} sid_driver_inertia;

#define SID_HISTORY 64   /* accepted iterations whose losses the driver keeps */
#define SID_FLAT_ITERS 10 /* LM's span for the flat and crawl tests (fit_judge.c) */
#define SID_CRAWL_ITERS 50 /* L-BFGS's */
#define SID_CRAWL_GAIN 0.01 /* a span that gains less than this (and more than flat) crawls */

/* Every array below lives in one allocation (the inertia blocks in their own). */
typedef struct {
    sid_problem *p;
    const sid_model *m;
    const sid_fit_opts *o;
    sid_fit_result *r;
    int nf, nstart, nx, n;       /* free parameters, start-state variables (nwin * nx or 0), n = nf + nstart */
    const double *x0_fixed;      /* start states when they are not variables (NULL: the logged ones) */
    double *theta, *grad;        /* (nparam) working parameter vector and its gradient */
    double *x0, *gx0;            /* (nstart) working start states and their gradient */
    double *x0_init, *x0_scale;  /* (nstart) first guess, (nx) scale */
    double *nominal, *scale;     /* (nf) nominal value; typical magnitude, 0 for log space, -1 in an inertia block */
    double *x, *lo, *hi, *best;  /* (n) the variables, their bounds, the best point seen */
    double *dir, *xp;            /* smoothing: (pairs x nf) directions and (nf) a perturbed point; dir NULL: off */
    double best_f, reject_loss, fscale, t0;   /* objective = f * fscale, so that it starts near 1 */
    sid_driver_inertia *block;   /* (nblock) the links whose inertia moves through the log-Cholesky map */
    int nblock;
    sid_error fail;              /* why an evaluation failed for a reason other than divergence */
    int failed;
    nlopt_opt opt;
    double *buf;
    /* the loss after each of the last SID_HISTORY accepted iterations (sid_driver_accept), for
     * the flat and crawl tests (fit_judge.c); naccept counts them all */
    double hist[SID_HISTORY];
    int naccept;
    double nres;                 /* the problem's residual rows: one of them is 1/nres of the loss */
    int watch;                   /* under SID_OPT_AUTO: the optimizer may stop to hand over */
    char handover[160];          /* set by an optimizer that stopped to hand over: why ("" none) */
    int judged;                  /* L-BFGS: what sid_driver_judge said when it stopped it */
    int lm_possible;             /* LM can run on this problem (optimizer_auto.c): L-BFGS may hand to it */
} sid_driver;

/* Size d for a fit from (theta, x0) with options o (see optimize.c); nothing is left allocated
 * on failure; sid_driver_free releases it. */
sid_status sid_driver_init(sid_driver *d, sid_problem *p, const double *theta, const double *x0, const sid_fit_opts *o,
                           sid_fit_result *r, int start_vars, sid_error *err);
void sid_driver_free(sid_driver *d);
/* x into the driver's working theta and (when they are variables) start states; each inertia
 * block's G is updated. */
void sid_driver_unpack(sid_driver *d, const double *x);
/* The chain rule through the inertia blocks: v (nf entries at v[k * stride], each d/d theta_k
 * times theta_k's scale, which is 1 in a block) becomes d/dx by v_block <- G^T v_block. */
void sid_driver_chain(const sid_driver *d, double *v, size_t stride);
/* The plain loss at x (rejection loss for a point that is unphysical or diverges, counted in
 * r->rejected); with gx, fscale times its adjoint gradient in x. */
double sid_driver_loss(sid_driver *d, const double *x, double *gx);
/* The objective at x: sid_driver_loss, or with smoothing (d->dir) the smoothed loss
 * 1/(2N) sum_i [L(x + sigma e_i) + L(x - sigma e_i)] and, with gx, fscale times its antithetic
 * gradient estimate. */
double sid_driver_objective(sid_driver *d, const double *x, double *gx);

/* Record the loss f of an accepted iteration. */
void sid_driver_accept(sid_driver *d, double f);
/* The loss's decrease from k0 to k1 accepted iterations ago (k0 > k1 >= 0) relative to the
 * current loss, (F[-k0] - F[-k1]) / F; -1 when fewer than k0 have been accepted (or k0 exceeds
 * SID_HISTORY - 1). sid_driver_gain(d, k) is that from k ago to now. */
double sid_driver_gain_span(const sid_driver *d, int k0, int k1);
double sid_driver_gain(const sid_driver *d, int k);

/* After an accepted iteration of optimizer `which` (fit_judge.c): go on, converged
 * because the loss is flat (r->stop and r->message set), stalled (flat losses where the
 * Gauss-Newton model, gn_rel: its predicted decrease over the loss, still promises more;
 * r->stop and r->message set), or, under SID_OPT_AUTO, crawling or stalled (d->handover says
 * why, and the other optimizer takes over). gn_rel NAN: not known (L-BFGS; LM asks again with
 * it when the losses look flat). */
enum { SID_JUDGE_GO_ON, SID_JUDGE_FLAT, SID_JUDGE_CRAWL, SID_JUDGE_STALL };
int sid_driver_judge(sid_driver *d, sid_optimizer which, double gn_rel);

/* Levenberg-Marquardt from x = d->x (d->best_f the loss there): d->best and d->best_f receive
 * the result, d->r the counts and the stop reason (lm.c). */
sid_status sid_lm_run(sid_driver *d, sid_error *err);
/* NLopt's L-BFGS from x = d->x (d->best_f the loss there), likewise (lbfgs.c). */
sid_status sid_lbfgs_run(sid_driver *d, sid_error *err);
/* The optimizer d->o asks for, or under SID_OPT_AUTO the one that pays and a hand-over when
 * it stalls (optimizer_auto.c); d->r->choice says which ran and why. */
sid_status sid_optimize(sid_driver *d, sid_error *err);
/* What an LM iteration costs in L-BFGS iterations on problem p with nfree free parameters
 * (optimizer_auto.c's model); the ingredients into the optional outputs. */
double sid_lm_cost_ratio(const sid_problem *p, int nfree, int *ndir, double *tangents, double *normal);
/* The LM step h (nf + nstart) at x = 0 of a driver made for (p, theta, x0, o): the solution of
 * (A + lambda D) h = -g, A = J^T J / nres and g = J^T r / nres in the scaled variables, D the
 * diagonal of A floored at 1e-12 of its largest entry, the start states eliminated window by
 * window; for tests. */
sid_status sid_lm_step(sid_problem *p, const double *theta, const double *x0, const sid_fit_opts *o, double lambda,
                       double *h, sid_error *err);

#endif
