/* fit_driver.c — what both optimizers move and evaluate (fit_driver.h): the scaled variables
 * and their bounds, the working parameters and start states, and the loss at a trial point
 * with unphysical or diverging points rejected, or its randomized smoothing. lbfgs.c and lm.c
 * run on it. */
#include "fit_driver.h"
#include "inertia_param.h"

#include <math.h>
#include <string.h>

/* x into the working theta and (when they are variables) start states. An inertia block at
 * x = 0 is the nominal tensor bit for bit (not L0 L0^T's rounding), so that x = 0 is the
 * nominal point for every optimizer, as with the other parameters. */
void sid_driver_unpack(sid_driver *d, const double *x)
{
    for (int k = 0; k < d->nf; k++) {
        if (d->scale[k] < 0) continue;
        const double t = d->scale[k] > 0 ? d->nominal[k] + d->scale[k] * x[k] : d->nominal[k] * exp(x[k]);
        /* x at its bound maps to the bound up to rounding: never beyond it (a fit started from
         * a result at its bound would refuse that start as outside the bounds) */
        d->theta[d->o->idx[k]] = fmin(fmax(t, d->o->lo[k]), d->o->hi[k]);
    }
    for (int b = 0; b < d->nblock; b++) {
        sid_driver_inertia *B = &d->block[b];
        double xb[6], *I = d->theta + B->i0;
        int zero = 1;
        for (int j = 0; j < 6; j++) xb[j] = x[B->k[j]], zero &= xb[j] == 0;
        sid_inertia_from_x(I, B->G, B->L0, xb);
        if (zero) memcpy(I, B->I0, sizeof B->I0);
    }
    for (int j = 0; j < d->nstart; j++) d->x0[j] = d->x0_init[j] + d->x0_scale[j % d->nx] * x[d->nf + j];
}

/* The loss at x and, with gx, fscale times its adjoint gradient in x. A point that is
 * unphysical (say, an inertia no longer positive definite) or whose simulation diverges gets
 * the rejection loss and a zero gradient: far above any loss seen, it makes the line search
 * step back. */
double sid_driver_loss(sid_driver *d, const double *x, double *gx)
{
    sid_driver_unpack(d, x);
    double loss = HUGE_VAL;
    sid_error e = {0};
    sid_status s = sid_model_check_theta(d->m, d->theta, &e);
    if (!s)
        s = sid_problem_loss(d->p, d->theta, d->nstart ? d->x0 : d->x0_fixed, &loss, gx ? d->grad : NULL,
                             gx && d->nstart ? d->gx0 : NULL, &e);
    if (s == SID_ERR_NOMEM) {
        d->failed = 1;
        d->fail = e;
    }
    if (s || !isfinite(loss)) {
        d->r->rejected++;
        for (int k = 0; gx && k < d->n; k++) gx[k] = 0;
        return d->reject_loss;
    }
    for (int k = 0; gx && k < d->nf; k++) {
        const int i = d->o->idx[k];
        gx[k] = d->fscale * d->grad[i] * (d->scale[k] > 0 ? d->scale[k] : d->scale[k] < 0 ? 1 : d->theta[i]);
    }
    if (gx) sid_driver_chain(d, gx, 1);
    for (int j = 0; gx && j < d->nstart; j++) gx[d->nf + j] = d->fscale * d->gx0[j] * d->x0_scale[j % d->nx];
    return loss;
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

double sid_driver_objective(sid_driver *d, const double *x, double *gx)
{
    return d->dir ? smoothed(d, x, gx) : sid_driver_loss(d, x, gx);
}

void sid_driver_accept(sid_driver *d, double f)
{
    d->hist[d->naccept++ % SID_HISTORY] = f;
}

double sid_driver_gain_span(const sid_driver *d, int k0, int k1)
{
    if (k0 <= k1 || k1 < 0 || k0 >= SID_HISTORY || d->naccept <= k0) return -1;
    const double f = d->hist[(d->naccept - 1) % SID_HISTORY];
    const double f0 = d->hist[(d->naccept - 1 - k0) % SID_HISTORY], f1 = d->hist[(d->naccept - 1 - k1) % SID_HISTORY];
    return f > 0 ? (f0 - f1) / f : HUGE_VAL;
}

double sid_driver_gain(const sid_driver *d, int k) { return sid_driver_gain_span(d, k, 0); }

/* Scaling and bounds of free parameter k (its nominal value v = theta[idx[k]]). */
static sid_status scale_param(sid_driver *d, int k, sid_error *err)
{
    const int i = d->o->idx[k];
    const sid_param_row *row = d->m->param[i].row;
    double l = d->o->lo[k], h = d->o->hi[k];
    const double v = d->theta[i];
    if (!(v >= l && v <= h))
        return sid_error_set(err, SID_ERR_INPUT, "%s: nominal value %g is outside its bounds [%g, %g]", d->m->param[i].name,
                             v, l, h);
    /* a strictly positive quantity moves in log space even when its bound says 0 */
    if (row->log_scale && l <= 0) l = v * 1e-6;
    d->nominal[k] = v;
    if (v > 0 && l > 0) {   /* log space */
        d->scale[k] = 0;
        d->lo[k] = log(l / v);
        d->hi[k] = isfinite(h) ? log(h / v) : HUGE_VAL;
    } else {
        d->scale[k] = fmax(fabs(v), row->typical);
        d->lo[k] = isfinite(l) ? (l - v) / d->scale[k] : -HUGE_VAL;
        d->hi[k] = isfinite(h) ? (h - v) / d->scale[k] : HUGE_VAL;
    }
    return SID_OK;
}

void sid_driver_chain(const sid_driver *d, double *v, size_t stride)
{
    for (int b = 0; b < d->nblock; b++) {
        const sid_driver_inertia *B = &d->block[b];
        double t[6];
        for (int j = 0; j < 6; j++) {
            t[j] = 0;
            for (int i = 0; i < 6; i++) t[j] += B->G[6 * i + j] * v[(size_t)B->k[i] * stride];
        }
        for (int j = 0; j < 6; j++) v[(size_t)B->k[j] * stride] = t[j];
    }
}

/* The links whose six inertia entries are all free and unbounded (and whose nominal tensor is
 * strictly a rigid body's, so that it has a factor) move through the log-Cholesky map: every
 * trial point is then a rigid body. The others keep the elementwise scaling, their unphysical
 * trial points rejected as before: a subset of the tensor has no such map, and bounds on its
 * entries are no box in x, while elementwise they stay exact box bounds. */
static sid_status find_blocks(sid_driver *d, sid_error *err)
{
    const sid_model *m = d->m;
    int nb = 0, *pos = sid_alloc(sizeof(int) * (size_t)(m->nparam ? m->nparam : 1));
    if (!pos) return sid_error_set(err, SID_ERR_NOMEM, "out of memory");
    for (int i = 0; i < m->nparam; i++) pos[i] = -1;
    for (int k = 0; k < d->nf; k++) pos[d->o->idx[k]] = k;
    for (int pass = 0; pass < 2; pass++) {
        nb = 0;
        for (int b = 0; b < m->nbody; b++) {
            const int i0 = m->body[b].p_inertial + P_INERTIA;
            if (m->body[b].p_inertial < 0) continue;
            int all = 1;
            double L0[6];
            for (int j = 0; j < 6; j++)
                all &= pos[i0 + j] >= 0 && d->o->lo[pos[i0 + j]] == -HUGE_VAL && d->o->hi[pos[i0 + j]] == HUGE_VAL;
            if (!all || sid_inertia_factor(L0, d->theta + i0)) continue;
            if (pass) {
                sid_driver_inertia *B = &d->block[nb];
                B->i0 = i0;
                memcpy(B->L0, L0, sizeof L0);
                memcpy(B->I0, d->theta + i0, sizeof B->I0);
                for (int j = 0; j < 6; j++) {
                    const int k = B->k[j] = pos[i0 + j];
                    d->scale[k] = -1;
                    const double xm = j < 3 ? SID_INERTIA_XMAX_DIAG : SID_INERTIA_XMAX_OFF;
                    d->lo[k] = -xm, d->hi[k] = xm;
                }
            }
            nb++;
        }
        if (!pass && nb && !(d->block = sid_alloc(sizeof(sid_driver_inertia) * (size_t)nb))) {
            sid_free(pos);
            return sid_error_set(err, SID_ERR_NOMEM, "out of memory");
        }
    }
    d->nblock = nb;
    sid_free(pos);
    return SID_OK;
}

/* Carve the driver's arrays out of one allocation; -1 if it fails. */
static int layout(sid_driver *d, int np, int pairs)
{
    const size_t nf = (size_t)d->nf, ns = (size_t)d->nstart, n = (size_t)d->n;
    double *b = d->buf = sid_alloc(sizeof(double) * (2 * (size_t)np + 4 * ns + (size_t)d->nx + 3 * nf + 4 * n +
                                                     (size_t)pairs * nf));
    if (!b) return -1;
    d->theta = b, d->grad = b + np, b += 2 * (size_t)np;
    d->x0 = b, d->gx0 = b + ns, d->x0_init = b + 2 * ns, d->x0_scale = b + 3 * ns, b += 4 * ns + (size_t)d->nx;
    d->nominal = b, d->scale = b + nf, d->xp = b + 2 * nf, b += 3 * nf;
    d->x = b, d->lo = b + n, d->hi = b + 2 * n, d->best = b + 3 * n, b += 4 * n;
    d->dir = pairs ? b : NULL;
    return 0;
}

/* Size the driver for a fit from (theta, x0) with options o: the start states are variables
 * when the problem estimates them, start_vars is set and there is no smoothing; otherwise
 * they are held at x0. On failure nothing is left allocated. */
sid_status sid_driver_init(sid_driver *d, sid_problem *p, const double *theta, const double *x0, const sid_fit_opts *o,
                           sid_fit_result *r, int start_vars, sid_error *err)
{
    memset(d, 0, sizeof *d);
    const int nf = o->nfree;
    if (nf < 1) return sid_error_set(err, SID_ERR_INPUT, "no free parameters");
    if (o->smoothing_pairs < 0 || (o->smoothing_pairs > 0 && !(o->smoothing_sigma > 0 && isfinite(o->smoothing_sigma))))
        return sid_error_set(err, SID_ERR_INPUT, "smoothing: expected sigma > 0 and pairs >= 0, got %g and %d",
                             o->smoothing_sigma, o->smoothing_pairs);
    if (o->optimizer != SID_OPT_LBFGS && o->optimizer != SID_OPT_LM && o->optimizer != SID_OPT_AUTO)
        return sid_error_set(err, SID_ERR_INPUT, "optimizer: expected SID_OPT_LBFGS, SID_OPT_LM or SID_OPT_AUTO, got %d",
                             (int)o->optimizer);
    /* LM needs the residuals' Jacobian, which smoothing has no use for: it estimates a gradient */
    if (o->optimizer == SID_OPT_LM && o->smoothing_pairs > 0)
        return sid_error_set(err, SID_ERR_INPUT, "smoothing works with the lbfgs optimizer only, not with lm");
    const sid_model *m = sid_problem_model(p);
    const int estimates = sid_problem_estimates_start(p), pairs = o->smoothing_pairs;
    if (estimates && start_vars && !x0)
        return sid_error_set(err, SID_ERR_INPUT, "start states are estimated but none were given");
    const int np = m->nparam, nx = m->nqo + m->nvo;   /* a window's start: the logged coordinates */
    const int nstart = estimates && start_vars && !pairs ? sid_problem_nwindows(p) * nx : 0;
    *d = (sid_driver){.p = p, .m = m, .o = o, .r = r, .nf = nf, .nstart = nstart, .nx = nx, .n = nf + nstart,
                      .t0 = sid_clock_seconds(), .x0_fixed = estimates && !nstart ? x0 : NULL, .best_f = HUGE_VAL, .fscale = 1,
                      .nres = sid_problem_nresiduals(p)};
    if (layout(d, np, pairs)) return sid_error_set(err, SID_ERR_NOMEM, "out of memory");
    memcpy(d->theta, theta, sizeof(double) * (size_t)np);
    if (nstart) {
        memcpy(d->x0_init, x0, sizeof(double) * (size_t)nstart);
        const double *sq = sid_problem_scale_q(p), *sqd = sid_problem_scale_qd(p);
        for (int i = 0; i < nx; i++) d->x0_scale[i] = i < m->nqo ? sq[i] : sqd[i - m->nqo];
        for (int j = 0; j < nstart; j++) d->lo[nf + j] = -HUGE_VAL, d->hi[nf + j] = HUGE_VAL;
    }
    sid_status s = SID_OK;
    for (int k = 0; k < nf && !s; k++) s = scale_param(d, k, err);
    if (!s && !o->inertia_raw) s = find_blocks(d, err);
    if (s) {
        sid_driver_free(d);
        return s;
    }
    if (d->nblock) sid_driver_unpack(d, d->x);   /* the blocks' G at x = 0 */
    if (pairs) sid_smoothing_directions(o->smoothing_seed, pairs, nf, d->dir);
    return SID_OK;
}

void sid_driver_free(sid_driver *d)
{
    sid_free(d->buf);
    sid_free(d->block);
    d->buf = NULL;
    d->block = NULL;
    d->nblock = 0;
}
