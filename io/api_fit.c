/* api_fit.c — sid_io_fit_run: `sysid fit`'s sequence of calls (cli/cmd_fit.c) without its
 * printing, signals and progress: select the free parameters, choose the simulation step,
 * fit (core's sid_fit), then the covariance and the predictions from the logged start states
 * that the report shows. tests/cli_install.sh checks that both give the same numbers. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "api_types.h"
#include "atomic.h"
#include "derived.h"
#include "jsonfile.h"
#include "report.h"
#include "robot_json.h"
#include "sha256.h"
#include "sid_io.h"
#include "stepchoice.h"

struct sid_io_fit {
    const sid_io_robot *r;
    const sid_io_spec *s;
    fitspec_selection sel;
    sid_problem *pfit, *ppred;
    double *theta, *x0;
    double *grad;                 /* d loss / d theta at the result; NULL: unknown */
    sid_fit_result fr;
    sid_covariance_result *cov;   /* NULL: not computed */
    report_input robot_in, config_in, *log_in;
    derived_set derived;
    report rep;
};

/* The status of a failure: err's, as the function that failed set it. */
static sid_status failed(const sid_error *err)
{
    return err->status != SID_OK ? err->status : SID_ERR_INPUT;
}

static sid_status nomem(sid_error *err)
{
    return sid_error_set(err, SID_ERR_NOMEM, "out of memory");
}

/* The digest of an input (the report names each one by it); "" when it cannot be read again. */
static void hash_input(report_input *in, const char *path, int samples)
{
    sid_error ignored = { 0 };
    in->path = path;
    in->samples = samples;
    if (sha256_file(path, in->sha256, &ignored))
        in->sha256[0] = '\0';
}

static int prediction_alloc(report_prediction *p, int nq, int nv)
{
    for (int s = 0; s < 2; s++) {
        p->rmse_q[s] = calloc((size_t)(nq ? nq : 1), sizeof(double));
        p->rmse_qd[s] = calloc((size_t)(nv ? nv : 1), sizeof(double));
        if (!p->rmse_q[s] || !p->rmse_qd[s])
            return -1;
    }
    return 0;
}

static void predict(sid_problem *p, const double *theta, report_prediction *out, int s)
{
    sid_error err = { 0 };
    out->ok[s] = sid_problem_loss(p, theta, NULL, &out->loss[s], NULL, NULL, &err) == SID_OK &&
                 sid_problem_rmse(p, theta, NULL, out->rmse_q[s], out->rmse_qd[s], &err) == SID_OK &&
                 isfinite(out->loss[s]);
}

void sid_io_fit_free(sid_io_fit *f)
{
    if (!f)
        return;
    for (int s = 0; s < 2; s++)
        free(f->rep.pred_fit.rmse_q[s]), free(f->rep.pred_fit.rmse_qd[s]);
    free(f->cov);
    free(f->grad);
    free(f->x0);
    free(f->theta);
    free(f->log_in);
    sid_problem_free(f->ppred);
    sid_problem_free(f->pfit);
    fitspec_selection_free(&f->sel);
    free(f);
}

sid_status sid_io_fit_run(sid_io_robot *r, sid_io_spec *s, const sid_io_logs *l, sid_io_fit **out, sid_error *err)
{
    sid_error local = { 0 };
    if (!err)
        err = &local;
    *out = NULL;
    if (l->n < 1) {
        sid_error_set(err, SID_ERR_INPUT, "%s: a fit needs at least one log", r->path);
        return failed(err);
    }
    sid_io_fit *f = calloc(1, sizeof *f);
    if (!f)
        return nomem(err);
    f->r = r, f->s = s;
    fitspec *spec = &s->spec;
    sid_model *m = r->m;
    sid_traj *const *tr = l->tr;
    const char *const *paths = (const char *const *)l->path;
    const int nlog = l->n, np = sid_model_nparam(m), nq = sid_model_nq(m), nv = sid_model_nv(m);

    fitspec_apply_model(spec, m, r->path);
    fitspec_choose_start_velocity(spec, m, tr, paths, nlog);
    if (fitspec_select(spec, m, r->theta0, &f->sel, err))
        goto fail;
    if (spec->start == FITSPEC_START_UNSET)
        spec->start = FITSPEC_START_FITTED;
    if (stepchoice_apply(spec, m, r->theta0, tr, paths, nlog, &f->rep.step, err)) {
        sid_error_prefix(err, "%s: choosing the simulation step", r->path);
        goto fail;
    }
    sid_loss_opts lo, lp;
    fitspec_loss_opts(spec, &lo);
    lp = lo;
    lp.estimate_start = 0;
    if (sid_problem_create(&f->pfit, m, (const sid_traj *const *)tr, nlog, &lo, err) ||
        sid_problem_create(&f->ppred, m, (const sid_traj *const *)tr, nlog, &lp, err))
        goto fail;
    const int nwin = sid_problem_nwindows(f->pfit);
    f->theta = malloc((size_t)np * sizeof *f->theta);
    if (lo.estimate_start)
        f->x0 = malloc((size_t)nwin * (size_t)(nq + nv) * sizeof *f->x0);
    f->log_in = calloc((size_t)nlog, sizeof *f->log_in);
    if (!f->theta || (lo.estimate_start && !f->x0) || !f->log_in || prediction_alloc(&f->rep.pred_fit, nq, nv)) {
        nomem(err);
        goto fail;
    }
    memcpy(f->theta, r->theta0, (size_t)np * sizeof *f->theta);
    if (f->x0)
        sid_problem_start_states(f->pfit, r->theta0, f->x0);

    sid_fit_opts fo;
    fitspec_fit_opts(spec, &f->sel, &fo);
    if (sid_fit(f->pfit, f->theta, f->x0, &fo, &f->fr, err) != SID_OK) {
        sid_error_prefix(err, "%s", r->path);
        goto fail;
    }
    for (int i = 0; i < np; i++)
        if (!isfinite(f->theta[i])) {
            sid_error_set(err, SID_ERR_NONFINITE, "%s: the fitted %s is %g", r->path, sid_model_param(m, i)->name,
                          f->theta[i]);
            goto fail;
        }

    report *rep = &f->rep;
    if (f->sel.n <= SID_MAX_FREE && (f->cov = malloc(sizeof *f->cov))) {
        sid_error cerr = { 0 };
        if (sid_problem_covariance(f->pfit, f->theta, f->x0, f->sel.n, f->sel.idx, NULL, f->cov, &cerr) != SID_OK) {
            free(f->cov);
            f->cov = NULL;
            rep->cov_skipped = "failed";
        }
    }
    rep->pred_fit.present = 1;
    for (int j = 0; j < nlog; j++)
        rep->pred_fit.has_qd |= tr[j]->qd != NULL;
    predict(f->ppred, r->theta0, &rep->pred_fit, 0);
    predict(f->ppred, f->theta, &rep->pred_fit, 1);
    double loss_end;
    sid_error gerr = { 0 };
    if ((f->grad = malloc((size_t)np * sizeof *f->grad)) &&
        sid_problem_loss(f->pfit, f->theta, f->x0, &loss_end, f->grad, NULL, &gerr) != SID_OK)
        free(f->grad), f->grad = NULL;
    derived_compute(m, r->doc, r->theta0, f->theta, &f->sel, f->cov, &f->derived);

    hash_input(&f->robot_in, r->path, 0);
    if (s->path)
        hash_input(&f->config_in, s->path, 0);
    for (int j = 0; j < nlog; j++)
        hash_input(&f->log_in[j], paths[j], tr[j]->n);
    rep->m = m;
    rep->spec = spec;
    rep->sel = &f->sel;
    rep->estimate_start = lo.estimate_start;
    rep->nwindows = nwin;
    rep->robot = f->robot_in;
    rep->config = f->config_in;
    rep->nlog = nlog;
    rep->log = f->log_in;
    rep->theta0 = r->theta0;
    rep->theta = f->theta;
    rep->fit = &f->fr;
    rep->cov = f->cov;
    rep->derived = &f->derived;
    rep->grad = f->grad;
    rep->nflag = s->nflag;
    rep->flag = (const char *const *)s->flag;
    rep->flag_value = (const char *const *)s->value;
    rep->seconds_total = f->fr.seconds;
    *out = f;
    return SID_OK;
fail:
    sid_io_fit_free(f);
    return failed(err);
}

const double *sid_io_fit_theta(const sid_io_fit *f) { return f->theta; }
const sid_fit_result *sid_io_fit_result(const sid_io_fit *f) { return &f->fr; }
int sid_io_fit_nfree(const sid_io_fit *f) { return f->sel.n; }

int sid_io_fit_free_param(const sid_io_fit *f, int k)
{
    return k >= 0 && k < f->sel.n ? f->sel.idx[k] : -1;
}

double sid_io_fit_stderr(const sid_io_fit *f, int k)
{
    if (k < 0 || k >= f->sel.n)
        return HUGE_VAL;
    report_param p;
    report_param_classify(&f->rep, k, &p);
    return p.stderr_;
}

sid_status sid_io_fit_write_robot(const sid_io_fit *f, const char *path, sid_error *err)
{
    sid_error local = { 0 };
    if (!err)
        err = &local;
    return sid_io_robot_write(f->r, f->theta, path, err);
}

sid_status sid_io_fit_write_report(const sid_io_fit *f, const char *path, sid_error *err)
{
    sid_error local = { 0 };
    if (!err)
        err = &local;
    cJSON *doc = report_json(&f->rep, err);
    if (!doc)
        return failed(err);
    atomic_file af;
    int rc = -1;
    if (atomic_open(&af, path, err) == SID_OK) {
        if (jsonfile_write(af.f, doc) == 0)
            rc = atomic_commit(&af, err) == SID_OK ? 0 : -1;
        else {
            sid_error_set(err, SID_ERR_INPUT, "%s: cannot write (out of memory or disk)", path);
            atomic_abort(&af);
        }
    }
    cJSON_Delete(doc);
    return rc ? failed(err) : SID_OK;
}
