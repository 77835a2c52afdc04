/* api_fit.c — sid_io_fit_run: `sysid fit`'s pipeline (fit_run.c, the same calls and
 * messages), on the library's handles, and what a program reads from the fit. */
#include <math.h>
#include <stdlib.h>

#include "api_types.h"
#include "atomic.h"
#include "fit_run.h"
#include "jsonfile.h"
#include "report.h"
#include "sha256.h"
#include "sid_io.h"

/* The status of a failure: err's, as the function that failed set it. */
static sid_status failed(const sid_error *err)
{
    return err->status != SID_OK ? err->status : SID_ERR_INPUT;
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

sid_status sid_io_fit_run(sid_io_robot *r, sid_io_spec *s, const sid_io_logs *l, sid_io_fit **out, sid_error *err)
{
    return sid_io_fit_run_hooked(r, s, l, NULL, out, err);
}

sid_status sid_io_fit_run_hooked(sid_io_robot *r, sid_io_spec *s, const sid_io_logs *l, const sid_io_fit_hooks *hooks,
                                 sid_io_fit **out, sid_error *err)
{
    sid_error local = { 0 };
    if (!err)
        err = &local;
    *out = NULL;
    if (l->n < 1) {
        sid_error_set(err, SID_ERR_INPUT, "%s: a fit needs at least one log", r->path);
        return failed(err);
    }
    fitspec_apply_model(&s->spec, r->m, r->path);
    const fit_run_input in = { r->path, r->m, r->theta0, r->doc, &s->spec, l->n, 0, l->tr,
                               (const char *const *)l->path, hooks };
    sid_io_fit *f;
    if (fit_run(&in, &f, err) != SID_OK)
        return failed(err);
    f->r = r;
    report *rep = &f->rep;
    if (!(f->log_in = calloc((size_t)l->n, sizeof *f->log_in))) {
        sid_io_fit_free(f);
        return sid_error_set(err, SID_ERR_NOMEM, "out of memory");
    }
    hash_input(&rep->robot, r->path, 0);
    if (s->path)
        hash_input(&rep->config, s->path, 0);
    for (int j = 0; j < l->n; j++)
        hash_input(&f->log_in[j], l->path[j], l->tr[j]->n);
    rep->log = f->log_in;
    rep->nflag = s->nflag;
    rep->flag = (const char *const *)s->flag;
    rep->flag_value = (const char *const *)s->value;
    rep->seconds_total = f->fr.seconds;
    *out = f;
    return SID_OK;
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
