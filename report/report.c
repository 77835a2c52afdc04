/* report.c — the fit report: JSON for scripts, a table and warnings for people. */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "coords.h"
#include "warn.h"
#include "numfmt.h"

/* ---- classification --------------------------------------------------------------------- */

double report_relative_change(double x, double x0)
{
    return (x - x0) / x0 + 0.0;   /* + 0.0: no change of a negative value is 0, not -0 */
}

int report_robust_shown(const report *r)
{
    return r->cov && r->cov->mismatch;
}

void report_param_classify(const report *r, int k, report_param *out)
{
    const int i = r->sel->idx[k];
    const double x = r->theta[i], x0 = r->theta0[i], lo = r->sel->lo[k], hi = r->sel->hi[k];
    memset(out, 0, sizeof *out);
    out->identifiable = -1;
    out->stderr_ = out->shown = HUGE_VAL;
    if (r->cov) {
        out->identifiable = r->cov->identifiable[k] && isfinite(r->cov->stderr_[k]);
        if (out->identifiable) {
            out->stderr_ = r->cov->stderr_[k];
            out->shown = report_robust_shown(r) ? r->cov->stderr_robust[k] : out->stderr_;
        }
    }
    /* "within 1e-6 relative of the bound": relative to the bound, or to the value's own size
     * when the bound is 0 (a friction coefficient pinned at 0). */
    double tol = REPORT_AT_BOUND_REL * fmax(fabs(x0), fabs(x));
    if (isfinite(lo) && x <= lo + fmax(tol, REPORT_AT_BOUND_REL * fabs(lo)))
        out->at_bound = -1;
    else if (isfinite(hi) && x >= hi - fmax(tol, REPORT_AT_BOUND_REL * fabs(hi)))
        out->at_bound = 1;
    /* A nominal value on its bound that stays there is only "at a bound" if the loss would fall
     * beyond it (the gradient pushes outward, by more than rounding): a zero Coulomb friction
     * that the data leave at zero is no finding. */
    if (out->at_bound && r->grad && x == x0) {
        const double s = fmax(fabs(x), sid_model_param(r->m, i)->row->typical);
        const double push = -out->at_bound * r->grad[i] * s;   /* loss decrease per scale step outward */
        if (!(push > REPORT_AT_BOUND_PUSH * r->fit->loss && r->fit->loss > REPORT_LOSS_ROUNDING * r->fit->loss0))
            out->at_bound = 0;
    }
    double size = x != 0 ? fabs(x) : fabs(x0);
    out->poor = out->identifiable == 1 && size > 0 && out->shown > REPORT_POOR_REL_STDERR * size;
}

static double max_of(const double *v, int n)
{
    double w = 0;
    for (int j = 0; j < n; j++)
        w = fmax(w, v[j]);
    return w;
}

double report_worst_rmse(const report *r)
{
    const int nq = sid_model_nq(r->m);
    double w = 0;
    const report_prediction *sets[2] = { &r->pred_fit, &r->pred_val };
    for (int s = 0; s < 2; s++) {
        if (!sets[s]->present)
            continue;
        if (!sets[s]->ok[1])
            return HUGE_VAL;
        w = fmax(w, max_of(sets[s]->rmse_q[1], nq));
    }
    return w;
}

int report_gates_pass(const report *r)
{
    if (r->has_max_rmse && !(report_worst_rmse(r) <= r->max_rmse))
        return 0;
    if (r->has_max_loss && !(r->fit->loss <= r->max_loss))
        return 0;
    return 1;
}

/* ---- JSON ------------------------------------------------------------------------------- */

/* Builder state: the first non-finite number or failed allocation is remembered. */
typedef struct {
    sid_error *err;
    int bad;
    const char *where;   /* the object being filled, for messages */
} jb;

static void nomem(jb *b)
{
    if (!b->bad)
        sid_error_set(b->err, SID_ERR_NOMEM, "report: out of memory");
    b->bad = 1;
}

static cJSON *add(jb *b, cJSON *o, const char *key, cJSON *v)
{
    if (!v || !o) {
        cJSON_Delete(v);
        nomem(b);
        return NULL;
    }
    if (key ? !cJSON_AddItemToObject(o, key, v) : !cJSON_AddItemToArray(o, v)) {
        cJSON_Delete(v);
        nomem(b);
        return NULL;
    }
    return v;
}

/* A number that must be finite: anything else is a bug or a numerical failure upstream,
 * never something to write. */
static void num(jb *b, cJSON *o, const char *key, double x)
{
    if (!isfinite(x)) {
        if (!b->bad)
            sid_error_set(b->err, SID_ERR_NONFINITE, "report not written: %s%s%s is %g",
                          b->where, b->where[0] ? "." : "", key ? key : "[]", x);
        b->bad = 1;
        add(b, o, key, cJSON_CreateNull());
        return;
    }
    add(b, o, key, numfmt_json(x));
}

/* A number where "not finite" means "undefined" (no standard error, no bound): null. */
static void num_or_null(jb *b, cJSON *o, const char *key, double x)
{
    if (isfinite(x))
        add(b, o, key, numfmt_json(x));
    else
        add(b, o, key, cJSON_CreateNull());
}

static void str(jb *b, cJSON *o, const char *key, const char *s)
{
    add(b, o, key, s ? cJSON_CreateString(s) : cJSON_CreateNull());
}

static void boolean(jb *b, cJSON *o, const char *key, int v)
{
    add(b, o, key, cJSON_CreateBool(v));
}

static void integer(jb *b, cJSON *o, const char *key, int v)
{
    add(b, o, key, cJSON_CreateNumber(v));   /* small integers print exactly */
}

static void input(jb *b, cJSON *o, const char *key, const report_input *in, int samples)
{
    cJSON *x = add(b, o, key, cJSON_CreateObject());
    str(b, x, "path", in->path);
    str(b, x, "sha256", in->sha256[0] ? in->sha256 : NULL);
    if (samples)
        integer(b, x, "samples", in->samples);
}

/* {"COORDINATE": value, ...} over positions (vel = 0) or velocities (vel = 1); a one-dof
 * joint's coordinate is named after the joint. */
static void per_coord(jb *b, cJSON *o, const char *key, const sid_model *m, int vel, const double *v)
{
    cJSON *x = add(b, o, key, cJSON_CreateObject());
    for (int i = 0; i < (vel ? sid_model_nv(m) : sid_model_nq(m)); i++)
        num(b, x, vel ? sid_model_v_name(m, i) : sid_model_q_name(m, i), v[i]);
}

static void prediction(jb *b, cJSON *o, const char *key, const report *r, const report_prediction *p)
{
    if (!p->present) {
        add(b, o, key, cJSON_CreateNull());
        return;
    }
    cJSON *x = add(b, o, key, cJSON_CreateObject());
    cJSON *loss = add(b, x, "loss", cJSON_CreateObject());
    cJSON *rmse = add(b, x, "rmse", cJSON_CreateObject());
    static const char *const when[2] = { "before", "after" };
    for (int s = 0; s < 2; s++) {
        if (!p->ok[s]) {
            /* the prediction diverged: there is no error to show */
            add(b, loss, when[s], cJSON_CreateNull());
            add(b, rmse, when[s], cJSON_CreateNull());
            continue;
        }
        num(b, loss, when[s], p->loss[s]);
        cJSON *w = add(b, rmse, when[s], cJSON_CreateObject());
        per_coord(b, w, "q", r->m, 0, p->rmse_q[s]);
        if (p->has_qd)
            per_coord(b, w, "qd", r->m, 1, p->rmse_qd[s]);
        else
            add(b, w, "qd", cJSON_CreateNull());
        if (p->has_tau)   /* only when scored: reports without torque sensors read as before */
            per_coord(b, w, "tau", r->m, 1, p->rmse_tau[s]);
    }
}

static void settings(jb *b, cJSON *o, const report *r)
{
    const fitspec *s = r->spec;
    cJSON *x = add(b, o, "settings", cJSON_CreateObject());
    str(b, x, "start", r->estimate_start ? "fitted" : "logged");
    str(b, x, "start_velocity", s->start_velocity_from_q > 0 ? "positions" : "logged");
    num(b, x, "window", s->window);
    integer(b, x, "windows", r->nwindows);
    if (s->nwindow_cand > 0) {
        /* "window": "auto": the candidates, which the search tried and how each scored
         * (window_select.h); a candidate not tried, or whose fits failed, scores null */
        cJSON *ws = add(b, x, "window_selection", cJSON_CreateObject());
        cJSON *cand = add(b, ws, "candidates", cJSON_CreateArray()), *sc = add(b, ws, "scores", cJSON_CreateArray());
        cJSON *tried = add(b, ws, "tried", cJSON_CreateArray());
        for (int k = 0; k < s->nwindow_cand; k++) {
            num(b, cand, NULL, s->window_cand[k]);
            num_or_null(b, sc, NULL, s->window_score[k]);
            add(b, tried, NULL, cJSON_CreateBool(s->window_tried[k]));
        }
        integer(b, ws, "folds", s->window_folds);
        num(b, ws, "evaluation_window", s->window_eval);
        num(b, ws, "nominal_score", s->window_nominal);
        num(b, ws, "chosen", s->window);
    }
    str(b, x, "integrator", sid_integrator_name(s->sim.integrator));
    integer(b, x, "substeps", s->sim.substeps);
    num_or_null(b, x, "max_dt", s->sim.max_dt > 0 ? s->sim.max_dt : HUGE_VAL);
    /* the step used: chosen (automatic) or given, with its step-doubling error estimate */
    cJSON *st = add(b, x, "step", cJSON_CreateObject());
    num(b, st, "seconds", r->step.h);
    boolean(b, st, "automatic", r->step.automatic);
    if (r->step.from_robot) boolean(b, st, "robot_timestep", 1);   /* the robot file's own step */
    /* the step test's estimate (null: the step was given, or not estimated): the limiting
     * coordinate's error over its allowance, max(tolerance x spread, noise_factor x noise) */
    num_or_null(b, st, "error", r->step.error >= 0 ? r->step.error : HUGE_VAL);
    if (r->step.error >= 0 && isfinite(r->step.error) && r->step.coord >= 0) {
        str(b, st, "coordinate", sid_model_q_name(r->m, r->step.coord));
        num(b, st, "error_abs", r->step.error_abs);
        num(b, st, "allowance", r->step.allowance);
        num(b, st, "noise", r->step.noise);
    }
    num(b, st, "tolerance", r->step.tol);
    num(b, st, "noise_factor", r->step.noise_tol);
    cJSON *w = add(b, x, "weights", cJSON_CreateObject());
    num(b, w, "q", s->w_q);
    num(b, w, "qd", s->w_qd);
    if (s->w_tau > 0) num(b, w, "tau", s->w_tau);   /* torque sensors scored; absent: reports as before */
    cJSON *opt = add(b, x, "optimizer", cJSON_CreateObject());
    str(b, opt, "method", sid_optimizer_str(s->optimizer));
    integer(b, opt, "max_iter", s->max_iter);
    num(b, opt, "ftol_rel", s->ftol_rel);
    num(b, opt, "time_limit", s->time_limit);
}

/* "gradient": how the optimizer got its gradient; "contact_model" when the robot has contact. */
static void method(jb *b, cJSON *o, const report *r)
{
    const fitspec *s = r->spec;
    if (s->smoothing_pairs > 0) {
        cJSON *g = add(b, o, "gradient", cJSON_CreateObject());
        str(b, g, "method", "smoothed");
        num(b, g, "sigma", s->smoothing_sigma);
        integer(b, g, "pairs", s->smoothing_pairs);
        integer(b, g, "seed", (int)s->smoothing_seed);
    } else {
        /* of each optimizer that ran: LM's Jacobian, L-BFGS's adjoint gradient */
        const sid_fit_result *fr = r->fit;
        const int lm = fr->nran && (fr->ran[0] == SID_OPT_LM || (fr->nran > 1 && fr->ran[1] == SID_OPT_LM));
        const int lbfgs = !fr->nran || fr->ran[0] == SID_OPT_LBFGS || (fr->nran > 1 && fr->ran[1] == SID_OPT_LBFGS);
        str(b, o, "gradient", lm && lbfgs ? "jacobian and adjoint" : lm ? "jacobian" : "adjoint");
    }
    if (sid_model_has_contact(r->m))
        str(b, o, "contact_model", sid_contact_model_name(sid_model_contact_model(r->m)));
}

static void parameter(jb *b, cJSON *list, const report *r, int k)
{
    const int i = r->sel->idx[k];
    const sid_param_info *pi = sid_model_param(r->m, i);
    const double x0 = r->theta0[i], x = r->theta[i], lo = r->sel->lo[k], hi = r->sel->hi[k];
    report_param c;
    report_param_classify(r, k, &c);
    cJSON *o = add(b, list, NULL, cJSON_CreateObject());
    b->where = pi->name;
    str(b, o, "name", pi->name);
    str(b, o, "unit", pi->unit ? pi->unit : "");
    num(b, o, "nominal", x0);
    num(b, o, "fitted", x);
    num(b, o, "change", x - x0);
    /* over the signed nominal: a negative quantity's change of magnitude (com[2] -0.56 -> -0.50
     * is -10 %, not +10 %) */
    num_or_null(b, o, "relative_change", x0 != 0 ? report_relative_change(x, x0) : HUGE_VAL);
    cJSON *bd = add(b, o, "bounds", cJSON_CreateArray());
    num_or_null(b, bd, NULL, lo);
    num_or_null(b, bd, NULL, hi);
    if (c.identifiable == 1) {
        num(b, o, "stderr", c.stderr_);
        num_or_null(b, o, "relative_stderr", x != 0 ? c.stderr_ / fabs(x) : HUGE_VAL);
        cJSON *ci = add(b, o, "ci95", cJSON_CreateArray());
        num(b, ci, NULL, x - 1.96 * c.stderr_);
        num(b, ci, NULL, x + 1.96 * c.stderr_);
    } else {
        add(b, o, "stderr", cJSON_CreateNull());
        add(b, o, "relative_stderr", cJSON_CreateNull());
        add(b, o, "ci95", cJSON_CreateNull());
    }
    /* the sandwich over windows (covariance.c), right for correlated residuals too */
    const double se_r = r->cov && c.identifiable == 1 ? r->cov->stderr_robust[k] : HUGE_VAL;
    if (r->cov) {
        num_or_null(b, o, "stderr_robust", se_r);
        if (isfinite(se_r)) {
            /* Student t on the sandwich's degrees of freedom: it is estimated from G windows */
            const double t = r->cov->t95_robust[k];
            cJSON *ci = add(b, o, "ci95_robust", cJSON_CreateArray());
            num(b, ci, NULL, x - t * se_r);
            num(b, ci, NULL, x + t * se_r);
            num(b, o, "dof_robust", r->cov->dof_robust[k]);
        } else {
            add(b, o, "ci95_robust", cJSON_CreateNull());
            add(b, o, "dof_robust", cJSON_CreateNull());
        }
    }
    add(b, o, "identifiable", c.identifiable < 0 ? cJSON_CreateNull() : cJSON_CreateBool(c.identifiable));
    str(b, o, "at_bound", c.at_bound < 0 ? "lower" : c.at_bound > 0 ? "upper" : NULL);
    boolean(b, o, "poorly_determined", c.poor);
    b->where = "";
}

/* Sign of null direction d chosen so that its largest coefficient is positive. */
static double null_sign(const report *r, int d)
{
    const int n = r->sel->n;
    const double *v = r->cov->null_dir + (size_t)d * (size_t)n;
    int big = 0;
    for (int a = 1; a < n; a++)
        if (fabs(v[a]) > fabs(v[big]))
            big = a;
    return v[big] < 0 ? -1 : 1;
}

static void identifiability(jb *b, cJSON *o, const report *r)
{
    const int n = r->sel->n;
    if (!r->cov && r->cov_skipped) {
        cJSON *x = add(b, o, "identifiability", cJSON_CreateObject());
        add(b, x, "skipped", cJSON_CreateString(r->cov_skipped));
        return;
    }
    if (!r->cov) {
        add(b, o, "identifiability", cJSON_CreateNull());
        return;
    }
    const sid_covariance_result *cv = r->cov;
    cJSON *x = add(b, o, "identifiability", cJSON_CreateObject());
    b->where = "identifiability";
    integer(b, x, "dof", cv->dof);
    num(b, x, "residual_variance", cv->sigma2);
    /* the classic covariance's noise model: one variance per residual channel, or pooled */
    str(b, x, "noise", cv->noise_per_channel ? "per_channel" : "pooled");
    num_or_null(b, x, "condition", cv->cond);
    cJSON *nd = add(b, x, "null_directions", cJSON_CreateArray());
    for (int d = 0; d < cv->nnull; d++) {
        cJSON *dir = add(b, nd, NULL, cJSON_CreateObject());
        num(b, dir, "ratio", cv->null_ratio[d]);
        cJSON *ps = add(b, dir, "parameters", cJSON_CreateArray());
        const double sg = null_sign(r, d);
        for (int a = 0; a < n; a++) {
            const double v = sg * cv->null_dir[(size_t)d * (size_t)n + (size_t)a];
            if (fabs(v) <= REPORT_NULL_COEF)
                continue;
            cJSON *p = add(b, ps, NULL, cJSON_CreateObject());
            str(b, p, "name", sid_model_param(r->m, r->sel->idx[a])->name);
            num(b, p, "coefficient", v);
        }
    }
    /* corr_ab = cov_ab / sqrt(cov_aa cov_bb) where both are determined, else null; a heat map
     * of more parameters than REPORT_CORRELATION_MAX would be unreadable and the report large */
    if (n <= REPORT_CORRELATION_MAX) {
        cJSON *cm = add(b, x, "correlation", cJSON_CreateArray());
        for (int a = 0; a < n; a++) {
            cJSON *row = add(b, cm, NULL, cJSON_CreateArray());
            for (int c = 0; c < n; c++) {
                const double caa = cv->cov[(size_t)a * (size_t)n + (size_t)a], ccc = cv->cov[(size_t)c * (size_t)n + (size_t)c];
                const int ok = cv->identifiable[a] && cv->identifiable[c] && caa > 0 && ccc > 0;
                num_or_null(b, row, NULL, ok ? cv->cov[(size_t)a * (size_t)n + (size_t)c] / sqrt(caa * ccc) : HUGE_VAL);
            }
        }
    }
    static const char *const lists[3] = { "unidentifiable", "at_bound", "poorly_determined" };
    for (int l = 0; l < 3; l++) {
        cJSON *arr = add(b, x, lists[l], cJSON_CreateArray());
        for (int k = 0; k < n; k++) {
            report_param c;
            report_param_classify(r, k, &c);
            if ((l == 0 && c.identifiable == 0) || (l == 1 && c.at_bound) || (l == 2 && c.poor))
                str(b, arr, NULL, sid_model_param(r->m, r->sel->idx[k])->name);
        }
    }
    b->where = "";
}

/* A residual channel's name: q.<coordinate> or qd.<coordinate>. */
static const char *channel_name(const sid_model *m, int c, char *buf, size_t len)
{
    const int nq = sid_model_nq(m);
    snprintf(buf, len, "%s.%s", c < nq ? "q" : "qd", c < nq ? sid_model_q_name(m, c) : sid_model_v_name(m, c - nq));
    return buf;
}

/* Do the residuals look like the white noise sigma^2 (J^T J)^-1 assumes (covariance.c)? */
static void diagnostics(jb *b, cJSON *o, const report *r)
{
    if (!r->cov) {
        add(b, o, "diagnostics", cJSON_CreateNull());
        return;
    }
    const sid_covariance_result *cv = r->cov;
    cJSON *x = add(b, o, "diagnostics", cJSON_CreateObject());
    b->where = "diagnostics";
    boolean(b, x, "residuals_white", cv->residuals_white);
    static const char *const keys[3] = { "lag1_autocorrelation", "residual_rms", "noise_floor" };
    const double *vals[3] = { cv->lag1, cv->rms, cv->noise };
    char name[160];
    for (int t = 0; t < 3; t++) {
        cJSON *per = add(b, x, keys[t], cJSON_CreateObject());
        for (int c = 0; c < cv->nchan; c++)
            if (cv->count[c])
                num(b, per, channel_name(r->m, c, name, sizeof name), vals[t][c]);
    }
    cJSON *cor = add(b, x, "correlated", cJSON_CreateArray());
    for (int c = 0; c < cv->nchan; c++)
        if (cv->count[c] && cv->correlated[c])
            str(b, cor, NULL, channel_name(r->m, c, name, sizeof name));
    num(b, x, "rms_over_noise", cv->rms_over_noise);
    cJSON *th = add(b, x, "thresholds", cJSON_CreateObject());
    num(b, th, "lag1", SID_DIAG_LAG1);
    num(b, th, "rms_over_noise", SID_DIAG_RMS_RATIO);
    str(b, x, "verdict", cv->mismatch ? "model_mismatch" : "ok");
    str(b, x, "interval", report_robust_shown(r) ? "robust" : "classic");
    integer(b, x, "windows", cv->nwindows);
    b->where = "";
}

static void gates(jb *b, cJSON *o, const report *r)
{
    cJSON *x = add(b, o, "gates", cJSON_CreateObject());
    b->where = "gates";
    if (r->has_max_rmse) {
        cJSON *g = add(b, x, "max_rmse", cJSON_CreateObject());
        const double w = report_worst_rmse(r);
        num(b, g, "limit", r->max_rmse);
        num_or_null(b, g, "value", w);
        boolean(b, g, "passed", w <= r->max_rmse);
    }
    if (r->has_max_loss) {
        cJSON *g = add(b, x, "max_loss", cJSON_CreateObject());
        num(b, g, "limit", r->max_loss);
        num(b, g, "value", r->fit->loss);
        boolean(b, g, "passed", r->fit->loss <= r->max_loss);
    }
    boolean(b, x, "passed", report_gates_pass(r));
    b->where = "";
}

cJSON *report_json(const report *r, sid_error *err)
{
    jb b = { err, 0, "" };
    cJSON *o = cJSON_CreateObject();
    if (!o) {
        nomem(&b);
        return NULL;
    }
    str(&b, o, "command", "fit");
    str(&b, o, "version", SID_VERSION);
    input(&b, o, "robot", &r->robot, 0);
    if (r->config.path)
        input(&b, o, "config", &r->config, 0);
    else
        add(&b, o, "config", cJSON_CreateNull());
    cJSON *logs = add(&b, o, "logs", cJSON_CreateArray());
    for (int j = 0; j < r->nlog; j++)
        input(&b, logs, NULL, &r->log[j], 1);
    cJSON *vals = add(&b, o, "validation_logs", cJSON_CreateArray());
    for (int j = 0; j < r->nval; j++)
        input(&b, vals, NULL, &r->val[j], 1);
    settings(&b, o, r);
    method(&b, o, r);
    str(&b, o, "stop", sid_stop_str(r->fit->stop));
    str(&b, o, "message", r->fit->message);
    integer(&b, o, "iterations", r->fit->iterations);
    integer(&b, o, "evaluations", r->fit->evaluations);
    integer(&b, o, "rejected", r->fit->rejected);
    if (r->fit->jacobians)
        integer(&b, o, "jacobians", r->fit->jacobians);
    /* which optimizers ran (a hand-over makes two), their iterations, and why */
    cJSON *ran = add(&b, o, "optimizer", cJSON_CreateObject());
    cJSON *names = add(&b, ran, "ran", cJSON_CreateArray()), *its = add(&b, ran, "iterations", cJSON_CreateArray());
    for (int k = 0; k < r->fit->nran; k++) {
        add(&b, names, NULL, cJSON_CreateString(sid_optimizer_str(r->fit->ran[k])));
        add(&b, its, NULL, cJSON_CreateNumber(r->fit->ran_iterations[k]));
    }
    str(&b, ran, "why", r->fit->choice);
    cJSON *loss = add(&b, o, "loss", cJSON_CreateObject());
    b.where = "loss";
    num(&b, loss, "before", r->fit->loss0);
    num(&b, loss, "after", r->fit->loss);
    if (r->spec->smoothing_pairs > 0) {
        cJSON *sm = add(&b, loss, "smoothed", cJSON_CreateObject());
        num(&b, sm, "before", r->fit->smoothed_loss0);
        num(&b, sm, "after", r->fit->smoothed_loss);
    }
    b.where = "prediction";
    cJSON *pred = add(&b, o, "prediction", cJSON_CreateObject());
    prediction(&b, pred, "fit", r, &r->pred_fit);
    prediction(&b, pred, "validation", r, &r->pred_val);
    b.where = "";
    cJSON *params = add(&b, o, "parameters", cJSON_CreateArray());
    for (int k = 0; k < r->sel->n; k++)
        parameter(&b, params, r, k);
    if (r->derived && r->derived->n) {
        b.where = "derived";
        cJSON *dl = add(&b, o, "derived", cJSON_CreateArray());
        for (int k = 0; k < r->derived->n; k++) {
            const derived_value *v = &r->derived->v[k];
            cJSON *d = add(&b, dl, NULL, cJSON_CreateObject());
            str(&b, d, "name", v->name);
            str(&b, d, "unit", v->unit);
            num(&b, d, "nominal", v->nominal);
            num(&b, d, "fitted", v->fitted);
            num_or_null(&b, d, "stderr", v->stderr_);
            num_or_null(&b, d, "stderr_robust", v->stderr_robust);
        }
        b.where = "";
    }
    identifiability(&b, o, r);
    diagnostics(&b, o, r);
    gates(&b, o, r);
    /* --threads changes no bit of the result, so it is not recorded: the same inputs give the
     * same report for any number of threads */
    cJSON *fl = add(&b, o, "spec_flags", cJSON_CreateArray());
    for (int k = 0; k < r->nflag; k++) {
        if (!strcmp(r->flag[k], "--threads"))
            continue;
        cJSON *f = add(&b, fl, NULL, cJSON_CreateArray());
        str(&b, f, NULL, r->flag[k]);
        str(&b, f, NULL, r->flag_value[k]);
    }
    cJSON *tr = add(&b, o, "trace", cJSON_CreateObject());
    b.where = "trace";
    cJSON *tl = add(&b, tr, "loss", cJSON_CreateArray()), *tg = add(&b, tr, "grad_norm", cJSON_CreateArray());
    for (int k = 0; k < r->ntrace; k++) {
        num_or_null(&b, tl, NULL, r->trace_loss[k]);
        num_or_null(&b, tg, NULL, r->trace_gnorm[k]);
    }
    b.where = "";
    cJSON *t = add(&b, o, "timing", cJSON_CreateObject());
    b.where = "timing";
    num(&b, t, "total_seconds", r->seconds_total);
    num(&b, t, "fit_seconds", r->fit->seconds);
    num(&b, t, "covariance_seconds", r->seconds_cov);
    if (b.bad) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* ---- for people ------------------------------------------------------------------------- */

/* One row per coordinate (coords.h); a cell the row has no coordinate for stays blank, and
 * without logged velocities the rows of velocity coordinates are left out. */
static void table_rmse(FILE *f, const report *r, const report_prediction *p, const char *what)
{
    int nrow, w;
    coords_row *rows = p->present ? coords_table(r->m, &nrow, &w) : NULL;
    if (!rows)
        return;   /* nothing to show, or out of memory: a summary for people; the report is complete */
    fprintf(f, "\nRMSE on %s, predicted from logged start states%s (as eval):\n", what,
            r->spec->start_velocity_from_q > 0 ? " with velocities from positions" : "");
    fprintf(f, "  %-*s  %-11s %-11s", w, "joint", "q nominal", "q fitted");
    if (p->has_qd)
        fprintf(f, "  %-11s %-11s", "qd nominal", "qd fitted");
    fputc('\n', f);
    for (int j = 0; j < nrow; j++) {
        if (rows[j].q < 0 && !p->has_qd)
            continue;
        fprintf(f, "  %-*s", w, rows[j].name);
        for (int v = 0; v < (p->has_qd ? 2 : 1); v++)
            for (int s = 0; s < 2; s++) {
                const int i = v ? rows[j].v : rows[j].q;
                if (i < 0)
                    fprintf(f, "%s%-11s", s ? " " : "  ", "");
                else if (p->ok[s])
                    fprintf(f, "%s%-11.4g", s ? " " : "  ", (v ? p->rmse_qd[s] : p->rmse_q[s])[i]);
                else
                    fprintf(f, "%s%-11s", s ? " " : "  ", "diverged");
            }
        fputc('\n', f);
    }
    free(rows);
    if (!p->has_tau)
        return;
    /* the torque sensors' readings (docs/formats.md, Torque sensors): every velocity coordinate */
    fprintf(f, "  torque sensors, RMSE of gain tau_link + bias - tau (N*m or N; 0: no tau column):\n");
    for (int i = 0; i < sid_model_nv(r->m); i++) {
        fprintf(f, "  tau.%-*s", w, sid_model_v_name(r->m, i));
        for (int s = 0; s < 2; s++)
            if (p->ok[s])
                fprintf(f, "%s%-11.4g", s ? " " : "  ", p->rmse_tau[s][i]);
            else
                fprintf(f, "%s%-11s", s ? " " : "  ", "diverged");
        fputc('\n', f);
    }
}

/* What the motion determines when the parameters above split it (derived.h). */
static void table_derived(FILE *f, const report *r, int w)
{
    if (!r->derived || !r->derived->n)
        return;
    fprintf(f, "\njoint inertias and first moments (what one joint's motion determines) from the parameters above:\n");
    for (int k = 0; k < r->derived->n; k++) {
        const derived_value *v = &r->derived->v[k];
        char change[32], se[32], ci[32];
        if (v->nominal != 0)
            snprintf(change, sizeof change, "%+.1f%%", 100 * report_relative_change(v->fitted, v->nominal));
        else
            snprintf(change, sizeof change, "%+.3g", v->fitted - v->nominal);
        /* the interval the parameters above show: robust where the residuals say so */
        const int robust = report_robust_shown(r);
        const double shown = robust ? v->stderr_robust : v->stderr_;
        snprintf(se, sizeof se, isfinite(shown) ? "%.3g" : "-", shown);
        snprintf(ci, sizeof ci, isfinite(shown) ? "%.3g" : "-", (robust ? v->t95_robust : 1.96) * shown);
        fprintf(f, "%-*s  %-12.6g %-12.6g %-9s %-11s %-11s %s\n", w, v->name, v->nominal, v->fitted, change, se, ci,
                v->unit);
    }
}

void report_table(FILE *f, const report *r)
{
    const sid_fit_result *fr = r->fit;
    /* the message repeats the stop reason more often than not */
    const char *stop = sid_stop_str(fr->stop);
    if (strncmp(fr->message, stop, strlen(stop)) == 0)
        fprintf(f, "\nstop: %s", fr->message);
    else
        fprintf(f, "\nstop: %s (%s)", stop, fr->message);
    fprintf(f, " after %d iterations, %d evaluations, %d rejected, %.2f s\n", fr->iterations,
            fr->evaluations, fr->rejected, fr->seconds);
    fprintf(f, "loss: %.6g -> %.6g (start states %s, %d windows)\n", fr->loss0, fr->loss,
            !r->estimate_start ? "logged" : r->spec->smoothing_pairs ? "held" : "fitted", r->nwindows);
    if (r->spec->smoothing_pairs > 0)
        fprintf(f, "smoothed loss: %.6g -> %.6g (sigma %g, %d pairs, seed %lu)\n", fr->smoothed_loss0,
                fr->smoothed_loss, r->spec->smoothing_sigma, r->spec->smoothing_pairs, r->spec->smoothing_seed);
    fputc('\n', f);
    int w = 9;
    for (int k = 0; k < r->sel->n; k++) {
        int len = (int)strlen(sid_model_param(r->m, r->sel->idx[k])->name);
        w = len > w ? len : w;
    }
    for (int k = 0; r->derived && k < r->derived->n; k++) {
        int len = (int)strlen(r->derived->v[k].name);
        w = len > w ? len : w;
    }
    const int robust = report_robust_shown(r);
    if (robust)
        fprintf(f, "intervals: robust (sandwich over windows): the residuals say the model does not fit the data\n");
    fprintf(f, "%-*s  %-12s %-12s %-9s %-11s %-11s %s\n", w, "parameter", "nominal", "fitted",
            "change", robust ? "stderr(rob)" : "stderr", "95% +-", "note");
    for (int k = 0; k < r->sel->n; k++) {
        const int i = r->sel->idx[k];
        const double x0 = r->theta0[i], x = r->theta[i];
        report_param c;
        report_param_classify(r, k, &c);
        char change[32], se[32], ci[32];
        if (x0 != 0)
            snprintf(change, sizeof change, "%+.1f%%", 100 * report_relative_change(x, x0));
        else
            snprintf(change, sizeof change, "%+.3g", x - x0);
        const double shown = c.shown;
        if (c.identifiable == 1 && isfinite(shown)) {
            snprintf(se, sizeof se, "%.3g", shown);
            snprintf(ci, sizeof ci, "%.3g", (robust ? r->cov->t95_robust[k] : 1.96) * shown);
        } else {
            snprintf(se, sizeof se, "-");
            snprintf(ci, sizeof ci, "-");
        }
        const char *note = c.identifiable == 0 ? "not identifiable"
                           : c.at_bound < 0    ? "at lower bound"
                           : c.at_bound > 0    ? "at upper bound"
                           : c.poor            ? "poorly determined"
                                               : "";
        fprintf(f, "%-*s  %-12.6g %-12.6g %-9s %-11s %-11s %s\n", w, sid_model_param(r->m, i)->name,
                x0, x, change, se, ci, note);
    }
    table_derived(f, r, w);
    table_rmse(f, r, &r->pred_fit, "the fitted logs");
    table_rmse(f, r, &r->pred_val, "the validation logs");
    fputc('\n', f);
}

/* Warnings of one kind about many parameters: each on its own line while there are few, else
 * one line naming the first few (a 700-parameter fit must not print 700 lines). */
#define WARN_EACH 3
typedef struct {
    int n;
    char names[512];
} warn_group;

static void group_add(warn_group *g, const char *name)
{
    size_t len = strlen(g->names);
    if (g->n < 8 && len + strlen(name) + 3 < sizeof g->names)
        snprintf(g->names + len, sizeof g->names - len, "%s%s", len ? ", " : "", name);
    g->n++;
}

static void group_print(const warn_group *g, const char *what, const char *where)
{
    if (g->n > WARN_EACH)
        sid_io_warn("%d parameters %s: %s%s (report: %s)", g->n, what, g->names, g->n > 8 ? ", ..." : "", where);
}

void report_warnings(const report *r)
{
    const int n = r->sel->n;
    if (!r->cov)
        sid_io_warn("no standard errors: the covariance %s", r->cov_skipped && !strcmp(r->cov_skipped, "interrupted")
                                                              ? "was skipped (interrupted)"
                                                              : "could not be computed");
    if (r->cov && r->cov->mismatch) {
        const sid_covariance_result *cv = r->cov;
        char name[160];
        if (!cv->residuals_white && cv->worst_lag1 >= 0)
            sid_io_warn("residuals are correlated (lag-1 autocorrelation %.2f on %s, white noise: within +-%g): the "
                        "model does not fit the data; sigma^2 (J^T J)^-1 intervals are %s, use the robust "
                        "ones (report: parameters[].ci95_robust; the table shows them)",
                        cv->lag1[cv->worst_lag1], channel_name(r->m, cv->worst_lag1, name, sizeof name), SID_DIAG_LAG1,
                        cv->lag1[cv->worst_lag1] > 0 ? "too narrow" : "not to be trusted");
        if (cv->rms_over_noise > SID_DIAG_RMS_RATIO && cv->worst_ratio >= 0)
            sid_io_warn("the residual RMS on %s is %.3g times the noise level the log shows (%.3g): the model does "
                        "not fit the data; sigma^2 (J^T J)^-1 intervals are too narrow, use the robust ones "
                        "(report: diagnostics)",
                        channel_name(r->m, cv->worst_ratio, name, sizeof name), cv->rms_over_noise,
                        cv->noise[cv->worst_ratio]);
    }
    for (int d = 0; r->cov && d < r->cov->nnull && d < WARN_EACH; d++) {
        /* "a*x + b*y" in scaled coordinates: moving along it does not change the fit */
        char buf[1024];
        size_t len = 0;
        const double sg = null_sign(r, d);
        for (int a = 0; a < n && len < sizeof buf; a++) {
            const double v = sg * r->cov->null_dir[(size_t)d * (size_t)n + (size_t)a];
            if (fabs(v) > REPORT_NULL_COEF)
                len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%.3g*%s", len ? (v < 0 ? " - " : " + ") : (v < 0 ? "-" : ""),
                                        fabs(v), sid_model_param(r->m, r->sel->idx[a])->name);
        }
        sid_io_warn("the data do not determine the combination %s (scaled); its parameters have no "
                 "standard error", buf);
    }
    if (r->cov && r->cov->nnull > WARN_EACH)
        sid_io_warn("and %d more combinations the data do not determine (report: identifiability.null_directions)",
                 r->cov->nnull - WARN_EACH);
    warn_group unident = { 0 }, bound = { 0 }, poor = { 0 };
    for (int k = 0; k < n; k++) {
        report_param c;
        report_param_classify(r, k, &c);
        const char *name = sid_model_param(r->m, r->sel->idx[k])->name;
        if (c.identifiable == 0)
            group_add(&unident, name);
        if (c.at_bound)
            group_add(&bound, name);
        if (c.poor)
            group_add(&poor, name);
    }
    group_print(&unident, "are not identifiable from these data (their fitted values are arbitrary)",
                "identifiability.unidentifiable");
    group_print(&bound, "are at a bound (the data may want them beyond; their intervals ignore it)",
                "identifiability.at_bound");
    group_print(&poor, "are poorly determined (standard error above 50% of the value)",
                "identifiability.poorly_determined");
    for (int k = 0; k < n; k++) {
        const int i = r->sel->idx[k];
        const char *name = sid_model_param(r->m, i)->name;
        report_param c;
        report_param_classify(r, k, &c);
        if (c.identifiable == 0 && unident.n <= WARN_EACH)
            sid_io_warn("%s is not identifiable from these data: its fitted value %g is arbitrary",
                     name, r->theta[i]);
        if (c.at_bound && bound.n <= WARN_EACH)
            sid_io_warn("%s is at its %s bound %g: the data may want it beyond; its interval ignores the bound",
                     name, c.at_bound < 0 ? "lower" : "upper", c.at_bound < 0 ? r->sel->lo[k] : r->sel->hi[k]);
        if (c.poor && poor.n <= WARN_EACH)
        {
            /* a fitted value of 0 has no relative error: compare with the nominal instead */
            const int zero = r->theta[i] == 0;
            sid_io_warn("%s is poorly determined: %sstandard error %.3g is %.0f%% of its %s value %g", name,
                        report_robust_shown(r) ? "its robust " : "", c.shown,
                        100 * c.shown / fabs(zero ? r->theta0[i] : r->theta[i]), zero ? "nominal" : "fitted",
                        zero ? r->theta0[i] : r->theta[i]);
        }
    }
}
