/* optimize.c — the NLopt L-BFGS driver (see sid.h, "fitting"). */
#include "model.h"

#include <math.h>
#include <nlopt.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

typedef struct {
    sid_problem *p;
    const sid_model *m;
    const sid_fit_opts *o;
    sid_fit_result *r;
    double *theta;               /* working parameter vector */
    double *x0, *x0_best, *gx0;  /* working / best start states and their gradient (estimated starts) */
    const double *x0_init, *x0_scale;   /* (nwin x nx) starting guess, (nx) scale */
    int nstart;                  /* number of start-state variables: nwin * nx, or 0 */
    int nx;
    double *best;                /* best valid theta seen */
    double *grad;                /* (nparam) */
    const double *nominal;       /* (nfree) */
    const double *scale;         /* (nfree) typical magnitude, or 0 for log space */
    double best_loss, reject_loss, t0;
    double fscale;               /* objective = loss * fscale, so it starts at 1 */
    sid_error *err;
    nlopt_opt opt;
    int failed;                  /* an evaluation failed for a reason other than divergence */
} driver;

const char *sid_stop_str(sid_stop s)
{
    switch (s) {
    case SID_STOP_CONVERGED: return "converged";
    case SID_STOP_MAX_ITER: return "max_iter";
    case SID_STOP_TIME: return "time_limit";
    case SID_STOP_INTERRUPTED: return "interrupted";
    case SID_STOP_ROUNDOFF: return "roundoff_limited";
    case SID_STOP_FAILURE: return "failure";
    }
    return "unknown";
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A magnitude to scale a parameter by when its nominal value is zero. */
static double typical(sid_param_kind kind)
{
    switch (kind) {
    case SID_P_GRAVITY: case SID_P_GEAR: case SID_P_MASS: case SID_P_RESISTANCE: return 1;
    case SID_P_COM: case SID_P_XYZ: case SID_P_RPY: case SID_P_SMOOTHING: case SID_P_STRIBECK_VELOCITY: case SID_P_KT:
        return 0.1;
    case SID_P_INERTIA: case SID_P_VISCOUS: case SID_P_COULOMB: case SID_P_STRIBECK_TORQUE: case SID_P_OFFSET:
    case SID_P_KE: return 0.01;
    case SID_P_ARMATURE: return 1e-3;
    }
    return 1;
}

static int strictly_positive(sid_param_kind kind)
{
    return kind == SID_P_MASS || kind == SID_P_SMOOTHING || kind == SID_P_STRIBECK_VELOCITY || kind == SID_P_RESISTANCE;
}

/* Variables: nfree scaled parameters, then the start states scaled by the data's scales. */
static void unpack(const driver *d, const double *x, double *theta, double *x0)
{
    const int n = d->o->nfree;
    for (int k = 0; k < n; k++)
        theta[d->o->idx[k]] = d->scale[k] > 0 ? d->nominal[k] + d->scale[k] * x[k] : d->nominal[k] * exp(x[k]);
    for (int j = 0; j < d->nstart; j++) x0[j] = d->x0_init[j] + d->x0_scale[j % d->nx] * x[n + j];
}

static double objective(unsigned n, const double *x, double *gx, void *data)
{
    driver *d = data;
    sid_fit_result *r = d->r;
    r->evaluations++;
    if (d->o->interrupt && *d->o->interrupt) {
        r->stop = SID_STOP_INTERRUPTED;
        nlopt_force_stop(d->opt);
    }
    unpack(d, x, d->theta, d->x0);
    double loss = HUGE_VAL;
    sid_error e = {0};
    sid_status s = sid_model_check_theta(d->m, d->theta, &e);
    if (!s) s = sid_problem_loss(d->p, d->theta, d->nstart ? d->x0 : NULL, &loss, gx ? d->grad : NULL, d->nstart ? d->gx0 : NULL, &e);
    if (s == SID_ERR_NOMEM) {
        d->failed = 1;
        *d->err = e;
    }
    if (s || !isfinite(loss)) {
        /* reject: a loss far above any seen makes the line search step back */
        r->rejected++;
        if (gx)
            for (unsigned k = 0; k < n; k++) gx[k] = 0;
        return d->reject_loss * d->fscale;
    }
    double gnorm = 0;
    const int nf = d->o->nfree;
    if (gx) {
        for (int k = 0; k < nf; k++) {
            const int i = d->o->idx[k];
            gx[k] = d->fscale * d->grad[i] * (d->scale[k] > 0 ? d->scale[k] : d->theta[i]);
            gnorm += gx[k] * gx[k];
        }
        for (int j = 0; j < d->nstart; j++) gx[nf + j] = d->fscale * d->gx0[j] * d->x0_scale[j % d->nx];
    }
    (void)n;
    if (loss < d->best_loss) {
        d->best_loss = loss;
        memcpy(d->best, d->theta, sizeof(double) * (size_t)d->m->nparam);
        if (d->nstart) memcpy(d->x0_best, d->x0, sizeof(double) * (size_t)d->nstart);
        if (r->evaluations > 1) {
            r->iterations++;
            if (d->o->progress) d->o->progress(d->o->ctx, r->iterations, loss, sqrt(gnorm) / d->fscale, now() - d->t0);
            if (d->o->max_iter > 0 && r->iterations >= d->o->max_iter) nlopt_force_stop(d->opt);
        }
    }
    /* NLopt's L-BFGS stops on an absolute gradient size: keep the objective near 1 */
    return loss * d->fscale;
}

sid_status sid_fit(sid_problem *p, double *theta, double *x0, const sid_fit_opts *o, sid_fit_result *r, sid_error *err)
{
    memset(r, 0, sizeof *r);
    const int nf = o->nfree;
    if (nf < 1) return sid_error_set(err, SID_ERR_INPUT, "no free parameters");
    const sid_model *m = sid_problem_model(p);
    const int np = m->nparam, nx = m->nq + m->nv;
    const int nstart = sid_problem_estimates_start(p) ? sid_problem_nwindows(p) * nx : 0, n = nf + nstart;
    if (nstart && !x0) return sid_error_set(err, SID_ERR_INPUT, "start states are estimated but none were given");
    double *buf = sid_alloc(sizeof(double) * (size_t)(3 * np + 3 * n + 2 * nf + 4 * nstart + nx));
    if (!buf) return sid_error_set(err, SID_ERR_NOMEM, "out of memory");
    double *work = buf, *best = work + np, *grad = best + np, *x = grad + np, *lo = x + n, *hi = lo + n;
    double *nominal = hi + n, *scale = nominal + nf;
    double *x0w = scale + nf, *x0b = x0w + nstart, *gx0 = x0b + nstart, *x0i = gx0 + nstart, *x0s = x0i + nstart;
    memcpy(work, theta, sizeof(double) * (size_t)np);
    memcpy(best, theta, sizeof(double) * (size_t)np);
    sid_status s = SID_OK;
    if (nstart) {
        memcpy(x0i, x0, sizeof(double) * (size_t)nstart);
        memcpy(x0b, x0, sizeof(double) * (size_t)nstart);
        const double *sq = sid_problem_scale_q(p), *sqd = sid_problem_scale_qd(p);
        for (int i = 0; i < nx; i++) x0s[i] = i < m->nq ? sq[i] : sqd[i - m->nq];
        for (int j = 0; j < nstart; j++) x[nf + j] = 0, lo[nf + j] = -HUGE_VAL, hi[nf + j] = HUGE_VAL;
    }
    for (int k = 0; k < nf; k++) {
        const int i = o->idx[k];
        const sid_param_kind kind = m->param[i].kind;
        double l = o->lo[k], h = o->hi[k];
        const double v = theta[i];
        if (!(v >= l && v <= h)) {
            s = sid_error_set(err, SID_ERR_INPUT, "%s: nominal value %g is outside its bounds [%g, %g]", m->param[i].name, v,
                              l, h);
            goto done;
        }
        if (strictly_positive(kind) && l <= 0) l = v * 1e-6;
        nominal[k] = v;
        x[k] = 0;
        if (v > 0 && l > 0) {   /* log space */
            scale[k] = 0;
            lo[k] = log(l / v);
            hi[k] = isfinite(h) ? log(h / v) : HUGE_VAL;
        } else {
            scale[k] = fmax(fabs(v), typical(kind));
            lo[k] = isfinite(l) ? (l - v) / scale[k] : -HUGE_VAL;
            hi[k] = isfinite(h) ? (h - v) / scale[k] : HUGE_VAL;
        }
    }
    sid_error e = {0};
    driver d = {p, m, o, r, work, x0w, x0b, gx0, x0i, x0s, nstart, nx, best, grad, nominal, scale, HUGE_VAL, 0, now(), 1,
                &e, NULL, 0};
    if ((s = sid_problem_loss(p, theta, nstart ? x0 : NULL, &r->loss0, NULL, NULL, err))) {
        sid_error_prefix(err, "at the nominal parameters");
        goto done;
    }
    if (r->loss0 <= SID_EXACT_LOSS) {
        /* the data are reproduced to rounding error: there is nothing to fit, and the
         * gradient is rounding noise that would only send L-BFGS astray */
        r->loss = r->loss0;
        r->stop = SID_STOP_CONVERGED;
        snprintf(r->message, sizeof r->message, "converged: the nominal parameters reproduce the data to rounding error");
        r->seconds = now() - d.t0;
        goto done;
    }
    d.fscale = 1 / r->loss0;
    d.reject_loss = 1e6 * r->loss0 + 1e-300;
    nlopt_opt opt = nlopt_create(NLOPT_LD_LBFGS, (unsigned)n);
    if (!opt) {
        s = sid_error_set(err, SID_ERR_NOMEM, "out of memory (nlopt_create)");
        goto done;
    }
    d.opt = opt;
    nlopt_set_lower_bounds(opt, lo);
    nlopt_set_upper_bounds(opt, hi);
    nlopt_set_min_objective(opt, objective, &d);
    nlopt_set_ftol_rel(opt, o->ftol_rel > 0 ? o->ftol_rel : 1e-10);
    nlopt_set_xtol_rel(opt, 1e-12);
    nlopt_set_maxeval(opt, o->max_iter > 0 ? 20 * o->max_iter + 20 : 0);
    if (o->time_limit > 0) nlopt_set_maxtime(opt, o->time_limit);
    double fmin = 0;
    r->stop = SID_STOP_CONVERGED;
    const nlopt_result nr = nlopt_optimize(opt, x, &fmin);
    const char *msg = nlopt_get_errmsg(opt);
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
    nlopt_destroy(opt);
    r->seconds = now() - d.t0;
    if (d.failed) {
        *err = e;
        s = e.status;
        goto done;
    }
    if (d.best_loss < r->loss0) {
        memcpy(theta, best, sizeof(double) * (size_t)np);
        if (nstart) memcpy(x0, x0b, sizeof(double) * (size_t)nstart);
        r->loss = d.best_loss;
    } else {
        r->loss = r->loss0;
    }
done:
    sid_free(buf);
    return s;
}
