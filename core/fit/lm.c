/* lm.c — trust-region Levenberg-Marquardt on the residuals' exact Jacobian, start states
 * eliminated window by window (the block-arrow structure of bundle adjustment).
 *
 * The loss is F(x) = 1/2 |r(x)|^2 / nres in the driver's scaled variables x (fit_driver.h).
 * At the current point, normal.c streams every window's Jacobian rows into
 *     A_pp = sum Jp^T Jp,  g_p = sum Jp^T r          (nf x nf, nf: the free parameters)
 * and, per window w, V_w = Js^T Js, C_w = Js^T Jp, g_w = Js^T r (Js: the window's nx start
 * state columns), all divided by nres and scaled to x. The step solves
 *     (A + lambda D) h = -g,  D = diag(A) floored at 1e-12 of its largest entry (Marquardt),
 * by eliminating each window's start state (M_w = V_w + lambda D_w):
 *     (A_pp + lambda D_p - sum C_w^T M_w^-1 C_w) h_p = -g_p + sum C_w^T M_w^-1 g_w,
 *     h_w = -M_w^-1 (g_w + C_w h_p),
 * so an iteration costs one Jacobian pass (windows in parallel, normal.c's fixed order) plus
 * O(nwin (nx^3 + nx^2 nf + nx nf^2) + nf^3), linear in the number of windows. The blocks of
 * every window are kept (nwin x nx (nx + nf) doubles) so that a new lambda needs no new pass;
 * the reduction runs serially in window order, so results do not depend on the thread count.
 *
 * Bounds (parameters only; start states are free): a parameter at a bound whose gradient
 * pushes against it is held there (left out of the system: its row and column of the reduced
 * matrix replaced by the identity); the other components of the step are clipped to the box
 * in the scaled variables. The predicted reduction L(0) - L(h) = -(g^T h + h^T A h / 2) is
 * computed for the clipped step, so the gain ratio rho = (F(x) - F(x + h)) / (L(0) - L(h))
 * judges the step actually tried. Only decreases are accepted; lambda follows Nielsen's rule
 * (Madsen, Nielsen & Tingleff, "Methods for non-linear least squares problems", 2004, 3.2):
 * accepted, lambda *= max(1/3, 1 - (2 rho - 1)^3), nu = 2; rejected, lambda *= nu, nu *= 2.
 * Converged (MINPACK's tests): an accepted step whose actual and predicted relative decreases
 * are both below ftol_rel, a step below xtol = 1e-12 relative, or a loss at rounding level. A
 * step below xtol while the undamped model still promises LM_STALL of the loss is a stall
 * (SID_STOP_ROUNDOFF), not convergence: damping or bounds made it short. The
 * first test also asks the undamped model: the Gauss-Newton step's predicted decrease from the
 * point the step left (g^T A^-1 g / 2 off the bounds) must be below ftol_rel too. MINPACK's
 * lmder judges the damped step's prediction alone, which is small whenever lambda is large
 * (Madsen-Nielsen-Tingleff test the gradient and the step instead): after a run of rejections a
 * short step that predicts and gains little looked converged (contact_recovery's noisy box fit,
 * on finite-difference Jacobians, stopped so at lambda 1.4e5, the Gauss-Newton model still
 * promising 4.4e-4 of the loss). */
#include "fit_driver.h"
#include "normal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* LAPACK's Fortran interface (Debian's liblapack-dev ships no C header for it). */
void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info);
void dpotrs_(const char *uplo, const int *n, const int *nrhs, const double *a, const int *lda, double *b,
             const int *ldb, int *info);

#define LM_LAMBDA0 1e-3       /* Marquardt's first damping, relative to diag(A) */
#define LM_XTOL 1e-12         /* as L-BFGS's xtol_rel */
#define LM_STALL 1e-3         /* a step below xtol with the Gauss-Newton model promising more than this
                               * fraction of the loss is a stall, not convergence */
#define LM_DIAG_FLOOR 1e-12   /* D's floor, relative to the largest diagonal entry of A */
#define LM_MAX_REJECT 60      /* rejections in a row before giving up (lambda grown 2^1800) */

/* The system at the current point and the scratch of a step; one allocation. */
typedef struct {
    sid_driver *d;
    int nf, ns, nwin;
    double *A, *g;        /* (nf x nf), (nf + nwin ns) scaled J^T J's parameter block and J^T r / nres */
    double *V, *C;        /* (nwin x ns x ns), (nwin x ns x nf): each window's blocks */
    double *Lw;           /* (nwin x ns x ns) Cholesky factors of M_w */
    double *S, *h;        /* (nf x nf) the reduced system, (nf + nwin ns) the step */
    double *Y, *t;        /* (ns x nf), (ns) scratch */
    double *D, *cp;       /* (nf) the parameters' damping diagonal, (nf) their column scales d theta / d x */
    double *Dw;           /* (nwin x ns) the damping diagonal of each window's start state */
    double *xt;           /* (nf + nwin ns) trial point */
    int *held;            /* (nf) 1: held at a bound */
    void *buf;
} lm_sys;

static int lm_init(lm_sys *L, sid_driver *d)
{
    memset(L, 0, sizeof *L);
    L->d = d;
    L->nf = d->nf;
    L->nwin = sid_problem_nwindows(d->p);
    L->ns = sid_problem_estimates_start(d->p) ? d->nx : 0;
    const size_t nf = (size_t)L->nf, ns = (size_t)L->ns, nw = (size_t)L->nwin, n = nf + nw * ns;
    const size_t total = 2 * nf * nf + n + nw * ns * (2 * ns + nf) + n + ns * nf + ns + 2 * nf + nw * ns + n;
    double *b = L->buf = sid_alloc(sizeof(double) * total + sizeof(int) * nf);
    if (!b) return -1;
    L->A = b, b += nf * nf;
    L->g = b, b += n;
    L->V = b, b += nw * ns * ns;
    L->C = b, b += nw * ns * nf;
    L->Lw = b, b += nw * ns * ns;
    L->S = b, b += nf * nf;
    L->h = b, b += n;
    L->Y = b, b += ns * nf;
    L->t = b, b += ns;
    L->D = b, b += nf;
    L->cp = b, b += nf;
    L->Dw = b, b += nw * ns;
    L->xt = b, b += n;
    L->held = (int *)b;
    return 0;
}

/* normal.c's callback: keep window w's blocks (raw; scaled after the pass). */
static sid_status keep_window(void *ctx, sid_normal_sums *S, int w, sid_error *err)
{
    lm_sys *L = ctx;
    const size_t ns = (size_t)L->ns, nf = (size_t)L->nf;
    (void)err;
    memcpy(L->V + (size_t)w * ns * ns, S->B, sizeof(double) * ns * ns);
    memcpy(L->C + (size_t)w * ns * nf, S->C, sizeof(double) * ns * nf);
    memcpy(L->g + nf + (size_t)w * ns, S->gs, sizeof(double) * ns);
    return SID_OK;
}

/* With a shard (sid_problem_set_shard): the other processes' windows' blocks, so that every
 * process solves the same system (the Schur reduction runs in window order, as here). */
static sid_status gather_windows(lm_sys *L, sid_error *err)
{
    sid_problem *p = L->d->p;
    const size_t ns = (size_t)L->ns, nf = (size_t)L->nf;
    sid_status s = sid_problem_gather(p, L->V, sizeof(double) * ns * ns, 1, err);
    if (!s) s = sid_problem_gather(p, L->C, sizeof(double) * ns * nf, 1, err);
    if (!s) s = sid_problem_gather(p, L->g + nf, sizeof(double) * ns, 1, err);
    return s;
}

/* The system at x (the driver's working theta and start states set from it): one Jacobian
 * pass, then every block scaled to the variables x and divided by nres. */
static sid_status lm_linearize(lm_sys *L, const double *x, sid_error *err)
{
    sid_driver *d = L->d;
    const int nf = L->nf, ns = L->ns, nwin = L->nwin;
    double rr;
    sid_driver_unpack(d, x);
    const sid_normal_pass np = {d->p, d->theta, d->nstart ? d->x0 : d->x0_fixed, nf, d->o->idx, d->o->interrupt, 0,
                                ns ? keep_window : NULL, L};
    sid_status s = sid_normal_run(&np, &(sid_normal_out){L->A, L->g, &rr, NULL}, err);
    d->r->jacobians++;
    d->r->evaluations++;
    if (!s && ns) s = gather_windows(L, err);
    if (s) return s;
    /* d theta / d x: the scale, or theta itself in log space (1 in an inertia block, whose
     * columns then go through its 6 x 6 d I / d x: J_x = J_theta G, A_x = G^T A G, below);
     * d x0 / d x: the start scale */
    for (int k = 0; k < nf; k++)
        L->cp[k] = d->scale[k] > 0 ? d->scale[k] : d->scale[k] < 0 ? 1 : d->theta[d->o->idx[k]];
    const double inv = 1.0 / sid_problem_nresiduals(d->p), *cs = d->x0_scale;
    for (int a = 0; a < nf; a++) {
        L->g[a] *= L->cp[a] * inv;
        for (int b = 0; b < nf; b++) L->A[a * nf + b] *= L->cp[a] * L->cp[b] * inv;
    }
    for (int w = 0; w < nwin; w++) {
        double *V = L->V + (size_t)w * (size_t)(ns * ns), *C = L->C + (size_t)w * (size_t)(ns * nf);
        double *gw = L->g + nf + (size_t)w * (size_t)ns;
        for (int i = 0; i < ns; i++) {
            gw[i] *= cs[i] * inv;
            for (int j = 0; j < ns; j++) V[i * ns + j] *= cs[i] * cs[j] * inv;
            for (int b = 0; b < nf; b++) C[i * nf + b] *= cs[i] * L->cp[b] * inv;
        }
    }
    if (d->nblock) {
        sid_driver_chain(d, L->g, 1);
        for (int a = 0; a < nf; a++) sid_driver_chain(d, L->A + (size_t)a * (size_t)nf, 1);
        for (int b = 0; b < nf; b++) sid_driver_chain(d, L->A + b, (size_t)nf);
        for (int r = 0; r < nwin * ns; r++) sid_driver_chain(d, L->C + (size_t)r * (size_t)nf, 1);
    }
    /* Marquardt's D: diag(A), floored so that a direction the data do not see stays damped */
    double dmax = 0;
    for (int a = 0; a < nf; a++) dmax = fmax(dmax, L->A[a * nf + a]);
    for (int w = 0; w < nwin; w++)
        for (int i = 0; i < ns; i++) dmax = fmax(dmax, L->V[(size_t)w * (size_t)(ns * ns) + (size_t)(i * ns + i)]);
    const double floor = dmax > 0 ? LM_DIAG_FLOOR * dmax : 1;
    for (int a = 0; a < nf; a++) L->D[a] = fmax(L->A[a * nf + a], floor);
    for (int w = 0; w < nwin; w++)
        for (int i = 0; i < ns; i++)
            L->Dw[(size_t)w * (size_t)ns + (size_t)i] = fmax(L->V[(size_t)w * (size_t)(ns * ns) + (size_t)(i * ns + i)], floor);
    return SID_OK;
}

/* Cholesky solve of the n x n factor F for nrhs columns of B (n x nrhs, column-major: row-major
 * B^T, which is how the blocks are stored: each of the nrhs right-hand sides contiguous). */
static void chol_solve(int n, const double *F, int nrhs, double *B)
{
    int info;
    dpotrs_("L", &n, &nrhs, F, &n, B, &n, &info);
}

/* The step for damping lambda into L->h (parameters, then each window's start state), held
 * parameters at 0; -1 if a factorisation failed (the damped matrix is not positive definite
 * in floating point). */
static int lm_solve(lm_sys *L, double lambda)
{
    const int nf = L->nf, ns = L->ns;
    double *S = L->S, *rhs = L->h;
    for (int a = 0; a < nf; a++) {
        for (int b = 0; b < nf; b++) S[a * nf + b] = L->A[a * nf + b];
        S[a * nf + a] += lambda * L->D[a];
        rhs[a] = -L->g[a];
    }
    for (int w = 0; w < L->nwin && ns; w++) {
        const size_t ss = (size_t)(ns * ns);
        double *F = L->Lw + (size_t)w * ss, *Y = L->Y, *t = L->t;
        const double *C = L->C + (size_t)w * (size_t)(ns * nf), *gw = L->g + nf + (size_t)w * (size_t)ns;
        const double *Dw = L->Dw + (size_t)w * (size_t)ns;
        memcpy(F, L->V + (size_t)w * ss, sizeof(double) * ss);
        for (int i = 0; i < ns; i++) F[i * ns + i] += lambda * Dw[i];
        int info;
        dpotrf_("L", &ns, F, &ns, &info);
        if (info) return -1;
        /* Y = M^-1 C, held as C^T (nf rows of length ns: LAPACK's nf right-hand sides) */
        for (int i = 0; i < ns; i++)
            for (int b = 0; b < nf; b++) Y[b * ns + i] = C[i * nf + b];
        chol_solve(ns, F, nf, Y);
        memcpy(t, gw, sizeof(double) * (size_t)ns);
        chol_solve(ns, F, 1, t);
        /* S -= C^T M^-1 C, rhs += C^T M^-1 g_w */
        for (int a = 0; a < nf; a++) {
            for (int b = 0; b < nf; b++) {
                double sum = 0;
                for (int i = 0; i < ns; i++) sum += C[i * nf + a] * Y[b * ns + i];
                S[a * nf + b] -= sum;
            }
            double sum = 0;
            for (int i = 0; i < ns; i++) sum += C[i * nf + a] * t[i];
            rhs[a] += sum;
        }
    }
    for (int a = 0; a < nf; a++)
        if (L->held[a]) {
            for (int b = 0; b < nf; b++) S[a * nf + b] = S[b * nf + a] = 0;
            S[a * nf + a] = 1;
            rhs[a] = 0;
        }
    int info, one = 1, n = nf;
    dpotrf_("L", &n, S, &n, &info);
    if (info) return -1;
    dpotrs_("L", &n, &one, S, &n, rhs, &n, &info);
    /* back-substitution: h_w = -M_w^-1 (g_w + C_w h_p) */
    for (int w = 0; w < L->nwin && ns; w++) {
        const double *C = L->C + (size_t)w * (size_t)(ns * nf), *gw = L->g + nf + (size_t)w * (size_t)ns;
        double *hw = L->h + nf + (size_t)w * (size_t)ns;
        for (int i = 0; i < ns; i++) {
            double sum = gw[i];
            for (int b = 0; b < nf; b++) sum += C[i * nf + b] * L->h[b];
            hw[i] = sum;
        }
        chol_solve(ns, L->Lw + (size_t)w * (size_t)(ns * ns), 1, hw);
        for (int i = 0; i < ns; i++) hw[i] = -hw[i];
    }
    return 0;
}

/* The model's decrease L(0) - L(h) = -(g^T h + h^T A h / 2) for the step in L->h. */
static double lm_predicted(const lm_sys *L)
{
    const int nf = L->nf, ns = L->ns;
    const double *h = L->h;
    double gh = 0, hAh = 0;
    for (int a = 0; a < nf; a++) {
        gh += L->g[a] * h[a];
        for (int b = 0; b < nf; b++) hAh += h[a] * L->A[a * nf + b] * h[b];
    }
    for (int w = 0; w < L->nwin && ns; w++) {
        const double *V = L->V + (size_t)w * (size_t)(ns * ns), *C = L->C + (size_t)w * (size_t)(ns * nf);
        const double *hw = h + nf + (size_t)w * (size_t)ns, *gw = L->g + nf + (size_t)w * (size_t)ns;
        for (int i = 0; i < ns; i++) {
            gh += gw[i] * hw[i];
            double ch = 0;
            for (int b = 0; b < nf; b++) ch += C[i * nf + b] * h[b];
            hAh += 2 * hw[i] * ch;
            for (int j = 0; j < ns; j++) hAh += hw[i] * V[i * ns + j] * hw[j];
        }
    }
    return -(gh + 0.5 * hAh);
}

/* Hold the parameters at a bound that the gradient pushes against. */
static void lm_hold(lm_sys *L, const double *x)
{
    const sid_driver *d = L->d;
    for (int a = 0; a < L->nf; a++) L->held[a] = (x[a] <= d->lo[a] && L->g[a] > 0) || (x[a] >= d->hi[a] && L->g[a] < 0);
}

/* The undamped model's decrease from x: the clipped Gauss-Newton step's L(0) - L(h), which is
 * g^T A^-1 g / 2 where no bound is reached (how far the model's minimum lies below F). A
 * singular A gets the least damping that factorises, below lambda; none: NAN. Negative when
 * the bounds clip the step into one the model does not trust. Overwrites L->h. */
static double lm_gn_predicted(lm_sys *L, const double *x, double lambda)
{
    const sid_driver *d = L->d;
    double mu = 0;
    while (lm_solve(L, mu)) {
        mu = mu > 0 ? 10 * mu : LM_DIAG_FLOOR;
        if (mu >= lambda) return NAN;
    }
    for (int k = 0; k < d->n; k++) L->h[k] = fmin(fmax(x[k] + L->h[k], d->lo[k]), d->hi[k]) - x[k];
    return lm_predicted(L);
}

static double gnorm_p(const lm_sys *L)
{
    double s = 0;
    for (int a = 0; a < L->nf; a++) s += L->g[a] * L->g[a];
    return sqrt(s);
}

sid_status sid_lm_step(sid_problem *p, const double *theta, const double *x0, const sid_fit_opts *o, double lambda,
                       double *h, sid_error *err)
{
    sid_fit_result r = {0};
    sid_driver d;
    lm_sys L;
    sid_status s = sid_driver_init(&d, p, theta, x0, o, &r, 1, err);
    if (s) return s;
    if (lm_init(&L, &d)) {
        sid_driver_free(&d);
        return sid_error_set(err, SID_ERR_NOMEM, "out of memory");
    }
    if (!(s = lm_linearize(&L, d.x, err))) {
        if (lm_solve(&L, lambda)) s = sid_error_set(err, SID_ERR_NUMERIC, "LM: the damped system is not positive definite");
        else memcpy(h, L.h, sizeof(double) * (size_t)d.n);
    }
    sid_free(L.buf);
    sid_driver_free(&d);
    return s;
}

static void set_stop(sid_fit_result *r, sid_stop stop, const char *msg)
{
    r->stop = stop;
    snprintf(r->message, sizeof r->message, "%s", msg);
}

sid_status sid_lm_run(sid_driver *d, sid_error *err)
{
    const sid_fit_opts *o = d->o;
    sid_fit_result *r = d->r;
    const int n = d->n;
    const double ftol = o->ftol_rel > 0 ? o->ftol_rel : 1e-10;
    lm_sys L;
    if (lm_init(&L, d)) return sid_error_set(err, SID_ERR_NOMEM, "out of memory");
    double *x = d->best, F = d->best_f, lambda = LM_LAMBDA0, nu = 2;
    sid_status s = SID_OK;
    int rejects = 0;
    memcpy(x, d->x, sizeof(double) * (size_t)n);
    if (!d->naccept) sid_driver_accept(d, F);
    r->stop = SID_STOP_CONVERGED;
    if ((s = lm_linearize(&L, x, err))) goto stopped;
    for (;;) {
        if (o->interrupt && *o->interrupt) {
            set_stop(r, SID_STOP_INTERRUPTED, "interrupted");
            break;
        }
        if (o->time_limit > 0 && sid_clock_seconds() - d->t0 >= o->time_limit) {
            r->stop = SID_STOP_TIME;
            snprintf(r->message, sizeof r->message, "reached the time limit of %g s", o->time_limit);
            break;
        }
        if (F <= SID_EXACT_LOSS) {
            set_stop(r, SID_STOP_CONVERGED, "converged: the loss is at rounding level");
            break;
        }
        lm_hold(&L, x);
        double gmax = 0;
        for (int a = 0; a < L.nf; a++) gmax = fmax(gmax, L.held[a] ? 0 : fabs(L.g[a]));
        for (int j = L.nf; j < n; j++) gmax = fmax(gmax, fabs(L.g[j]));
        if (gmax == 0) {
            set_stop(r, SID_STOP_CONVERGED, "converged: zero gradient");
            break;
        }
        if (rejects >= LM_MAX_REJECT || !isfinite(lambda)) {
            set_stop(r, SID_STOP_ROUNDOFF, "no further progress possible in floating point (roundoff limited)");
            break;
        }
        if (lm_solve(&L, lambda)) {   /* not positive definite at this damping: more */
            lambda *= nu, nu *= 2, rejects++;
            continue;
        }
        /* clip to the box; the step tried is the clipped one */
        double hmax = 0, xmax = 0;
        for (int k = 0; k < n; k++) {
            L.xt[k] = fmin(fmax(x[k] + L.h[k], d->lo[k]), d->hi[k]);
            L.h[k] = L.xt[k] - x[k];
            hmax = fmax(hmax, fabs(L.h[k]));
            xmax = fmax(xmax, fabs(x[k]));
        }
        if (hmax <= LM_XTOL * (xmax + LM_XTOL)) {
            /* a step shortened by damping or by the bounds is no evidence of a minimum while the
             * undamped model still promises a real decrease (LM_STALL of the loss; less is what a
             * non-smooth model such as hard contact leaves at its minimum, 1.3e-4 in
             * contact_recovery's noisy box) */
            const double gn = lm_gn_predicted(&L, x, lambda);
            if (!isnan(gn) && (gn < 0 || gn > LM_STALL * F)) {
                r->stop = SID_STOP_ROUNDOFF;
                snprintf(r->message, sizeof r->message,
                         gn < 0 ? "stalled: the step is below xtol, and the bounds clip the Gauss-Newton step into an "
                                  "ascent (%.3g of the loss)"
                                : "stalled: the step is below xtol, the Gauss-Newton model still predicts %.3g of the loss",
                         gn / F);
            } else {
                set_stop(r, SID_STOP_CONVERGED, "converged: the step is below xtol");
            }
            break;
        }
        const double pred = lm_predicted(&L);
        if (!(pred > 0)) {
            lambda *= nu, nu *= 2, rejects++;
            continue;
        }
        if (o->interrupt && *o->interrupt) continue;   /* stops at the top, before simulating */
        r->evaluations++;
        const double Ft = sid_driver_loss(d, L.xt, NULL);
        if (d->failed) {
            s = sid_error_set(err, d->fail.status, "%s", d->fail.msg);
            set_stop(r, SID_STOP_FAILURE, "failure");
            break;
        }
        const double rho = (F - Ft) / pred;
        if (!(Ft < F)) {
            lambda *= nu, nu *= 2, rejects++;
            continue;
        }
        const double actred = F - Ft;
        /* a small actual and predicted decrease says converged only if the damping is not what
         * made the prediction small: a heavily damped step is short and predicts little wherever
         * it is taken. So the undamped (Gauss-Newton) model at the point left must predict a
         * small decrease too; the step tried stays accepted either way. */
        int small = actred <= ftol * F && pred <= ftol * F;
        if (small) {   /* NAN: the damped test stands */
            const double gn = lm_gn_predicted(&L, x, lambda);
            small = isnan(gn) || (gn >= 0 && gn <= ftol * F);
        }
        memcpy(x, L.xt, sizeof(double) * (size_t)n);
        F = Ft;
        d->best_f = F;
        rejects = 0;
        const double c = 2 * rho - 1;
        lambda *= fmax(1.0 / 3, 1 - c * c * c);
        nu = 2;
        r->iterations++;
        sid_driver_accept(d, F);
        /* flat (converged), stalled or, under auto, crawling (optimizer_auto.c): judged on the
         * losses and, where they look flat, on the undamped model at the new point */
        int judged = small ? SID_JUDGE_GO_ON : sid_driver_judge(d, SID_OPT_LM, NAN);
        int last = small || (o->max_iter > 0 && r->iterations >= o->max_iter);
        /* a loss at rounding level stops at the top of the loop before the system is used: no
         * pass for it (unless progress reports the gradient) */
        if ((!last && F > SID_EXACT_LOSS) || judged == SID_JUDGE_FLAT || o->progress) {
            if ((s = lm_linearize(&L, x, err))) goto stopped;
        }
        if (judged == SID_JUDGE_FLAT) {   /* the undamped model at the new point, its bounds held as the next step's */
            lm_hold(&L, x);
            judged = sid_driver_judge(d, SID_OPT_LM, lm_gn_predicted(&L, x, lambda) / F);
        }
        last = last || judged != SID_JUDGE_GO_ON;
        if (o->progress) o->progress(o->ctx, r->iterations, F, gnorm_p(&L), sid_clock_seconds() - d->t0);
        if (small) {
            set_stop(r, SID_STOP_CONVERGED, "converged: relative decrease below ftol_rel");
            break;
        }
        if (judged == SID_JUDGE_FLAT || judged == SID_JUDGE_STALL) break;   /* r->stop and r->message set */
        if (judged == SID_JUDGE_CRAWL) {
            set_stop(r, SID_STOP_ROUNDOFF, d->handover);
            break;
        }
        if (last) {
            set_stop(r, SID_STOP_MAX_ITER, "reached max_iter");
            break;
        }
    }
    goto done;
stopped:
    /* a Jacobian pass failed: interrupted there, or an error at an accepted point */
    if (s == SID_ERR_INTERRUPTED) {
        s = SID_OK;
        set_stop(r, SID_STOP_INTERRUPTED, "interrupted");
    } else {
        set_stop(r, SID_STOP_FAILURE, "LM: the Jacobian failed");
        if (err) snprintf(r->message, sizeof r->message, "LM: %.150s", err->msg);
        if (s != SID_ERR_NOMEM) s = SID_OK;   /* the best point so far is still the result */
    }
done:
    r->seconds = sid_clock_seconds() - d->t0;
    sid_free(L.buf);
    return s;
}
