/* api_load.c — sid_io.h's loaders: thin wrappers that keep what robot_model, fitspec and
 * traj_csv return together, so that a program holds three handles instead of their parts. */
#include <stdlib.h>
#include <string.h>

#include "api_types.h"
#include "robot_json.h"
#include "robot_load.h"
#include "sid_io.h"

const char *sid_version(void)
{
    return SID_VERSION;
}

/* The status of a failure: err's, as the function that failed set it. */
static sid_status failed(const sid_error *err)
{
    return err->status != SID_OK ? err->status : SID_ERR_INPUT;
}

static sid_status nomem(sid_error *err, const char *what)
{
    return sid_error_set(err, SID_ERR_NOMEM, "%s: out of memory", what);
}

/* ---- robot ---- */

sid_status sid_io_robot_load(const char *path, sid_io_robot **out, sid_error *err)
{
    sid_error local = { 0 };
    if (!err)
        err = &local;
    *out = NULL;
    sid_io_robot *r = calloc(1, sizeof *r);
    if (!r || !(r->path = strdup(path))) {
        free(r);
        return nomem(err, path);
    }
    if (robot_model(path, &r->m, &r->theta0, &r->doc, err)) {
        sid_io_robot_free(r);
        return failed(err);
    }
    *out = r;
    return SID_OK;
}

void sid_io_robot_free(sid_io_robot *r)
{
    if (!r)
        return;
    cJSON_Delete(r->doc);
    sid_free(r->theta0);
    sid_model_free(r->m);
    free(r->path);
    free(r);
}

sid_model *sid_io_robot_model(const sid_io_robot *r) { return r->m; }
const double *sid_io_robot_theta(const sid_io_robot *r) { return r->theta0; }
int sid_io_robot_nparam(const sid_io_robot *r) { return sid_model_nparam(r->m); }

const char *sid_io_robot_param_name(const sid_io_robot *r, int i)
{
    return i >= 0 && i < sid_model_nparam(r->m) ? sid_model_param(r->m, i)->name : NULL;
}

sid_status sid_io_robot_write(const sid_io_robot *r, const double *theta, const char *path, sid_error *err)
{
    sid_error local = { 0 };
    if (!err)
        err = &local;
    return robot_json_write(path, r->doc, r->m, theta, err) ? failed(err) : SID_OK;
}

/* ---- spec ---- */

sid_status sid_io_spec_load(const char *path, sid_io_spec **out, sid_error *err)
{
    sid_error local = { 0 };
    if (!err)
        err = &local;
    *out = NULL;
    sid_io_spec *s = calloc(1, sizeof *s);
    if (!s || (path && !(s->path = strdup(path)))) {
        free(s);
        return nomem(err, path ? path : "fit spec");
    }
    fitspec_init(&s->spec);
    if (path && fitspec_load(&s->spec, path, err)) {
        sid_io_spec_free(s);
        return failed(err);
    }
    *out = s;
    return SID_OK;
}

sid_status sid_io_spec_set(sid_io_spec *s, const char *flag, const char *value, sid_error *err)
{
    sid_error local = { 0 };
    if (!err)
        err = &local;
    char **f = realloc(s->flag, (size_t)(s->nflag + 1) * sizeof *f);
    if (f)
        s->flag = f;
    char **v = f ? realloc(s->value, (size_t)(s->nflag + 1) * sizeof *v) : NULL;
    if (v)
        s->value = v;
    if (!f || !v || !(f[s->nflag] = strdup(flag)))
        return nomem(err, flag);
    if (!(v[s->nflag] = strdup(value))) {
        free(f[s->nflag]);
        return nomem(err, flag);
    }
    if (fitspec_apply_flag(&s->spec, flag, value, err)) {
        free(f[s->nflag]);
        free(v[s->nflag]);
        return failed(err);
    }
    s->nflag++;   /* the report's "spec_flags", as the command line's */
    return SID_OK;
}

void sid_io_spec_free(sid_io_spec *s)
{
    if (!s)
        return;
    for (int k = 0; k < s->nflag; k++)
        free(s->flag[k]), free(s->value[k]);
    free(s->flag);
    free(s->value);
    fitspec_free(&s->spec);
    free(s->path);
    free(s);
}

/* ---- logs ---- */

sid_status sid_io_logs_load(const sid_io_robot *r, const sid_io_spec *s, int n, const char *const *paths,
                     sid_io_logs **out, sid_error *err)
{
    sid_error local = { 0 };
    if (!err)
        err = &local;
    *out = NULL;
    sid_io_logs *l = calloc(1, sizeof *l);
    if (!l || !(l->tr = calloc((size_t)(n > 0 ? n : 1), sizeof *l->tr)) ||
        !(l->path = calloc((size_t)(n > 0 ? n : 1), sizeof *l->path))) {
        sid_io_logs_free(l);
        return nomem(err, "logs");
    }
    for (int j = 0; j < n; j++, l->n++) {
        if (!(l->path[j] = strdup(paths[j]))) {
            sid_io_logs_free(l);
            return nomem(err, paths[j]);
        }
        if (traj_csv_load(paths[j], r->m, s ? &s->spec.columns : NULL, &l->tr[j], err)) {
            l->n++;
            sid_io_logs_free(l);
            return failed(err);
        }
    }
    *out = l;
    return SID_OK;
}

int sid_io_logs_count(const sid_io_logs *l) { return l->n; }

const sid_traj *sid_io_logs_get(const sid_io_logs *l, int j)
{
    return j >= 0 && j < l->n ? l->tr[j] : NULL;
}

void sid_io_logs_free(sid_io_logs *l)
{
    if (!l)
        return;
    for (int j = 0; l->tr && j < l->n; j++)
        sid_traj_free(l->tr[j]);
    for (int j = 0; l->path && j < l->n; j++)
        free(l->path[j]);
    free(l->tr);
    free(l->path);
    free(l);
}
