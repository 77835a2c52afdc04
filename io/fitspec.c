/* fitspec.c — reading fit specs, applying flags over them, selecting free parameters. */
#include "fitspec.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colpattern.h"
#include "warn.h"
#include "jsonfile.h"
#include "names.h"
#include "units.h"

void fitspec_init(fitspec *s)
{
    /* core's defaults, so that a spec and the library agree on what "unset" means (no
     * wall-clock limit among them: it would make results depend on the machine) */
    sid_loss_opts lo;
    sid_fit_opts fo;
    sid_loss_opts_defaults(&lo);
    sid_fit_opts_defaults(&fo);
    memset(s, 0, sizeof *s);
    s->window = lo.window;
    s->sim = lo.sim;
    s->w_q = lo.weight_q;
    s->w_qd = lo.weight_qd;
    s->w_tau = lo.weight_tau;
    s->max_iter = fo.max_iter;
    s->ftol_rel = fo.ftol_rel;
    s->time_limit = fo.time_limit;
    s->optimizer = SID_OPT_AUTO;   /* the tool's choice (core's default is L-BFGS) */
    s->start = FITSPEC_START_UNSET;
    s->start_velocity_from_q = -1;
    s->smoothing_seed = fo.smoothing_seed;
    s->contact_model = -1;
    traj_colmap_init(&s->columns);
}

void fitspec_free(fitspec *s)
{
    for (int i = 0; i < s->nfree; i++)
        free(s->free[i].glob);
    for (int i = 0; i < s->nfixed; i++)
        free(s->fixed[i].glob);
    for (int i = 0; i < s->nbound; i++)
        free(s->bound[i].glob);
    free(s->free);
    free(s->fixed);
    free(s->bound);
    traj_colmap_free(&s->columns);
    memset(s, 0, sizeof *s);
}

static char *dup_str(const char *s)
{
    char *d = malloc(strlen(s) + 1);
    return d ? strcpy(d, s) : NULL;
}

static void set_origin(char *out, const char *fmt, const char *a, const char *b)
{
    if (snprintf(out, FITSPEC_ORIGIN, fmt, a, b) >= FITSPEC_ORIGIN)
        strcpy(out + FITSPEC_ORIGIN - 4, "...");
}

static int nomem(sid_error *err)
{
    sid_error_set(err, SID_ERR_NOMEM, "out of memory");
    return -1;
}

/* Append glob to a list of globs (the free or the fixed ones). */
static int add_glob(fitspec_glob **list, int *n, const char *glob, const char *origin, sid_error *err)
{
    fitspec_glob *g = realloc(*list, (size_t)(*n + 1) * sizeof *g);
    if (!g)
        return nomem(err);
    *list = g;
    g += *n;
    if (!(g->glob = dup_str(glob)))
        return nomem(err);
    set_origin(g->origin, "%s%s", origin, "");
    (*n)++;
    return 0;
}

/* Insert a bound at position `at` (flags go before the file's entries). */
static int add_bound(fitspec *s, int at, const fitspec_bound *b, sid_error *err)
{
    fitspec_bound *nb = realloc(s->bound, (size_t)(s->nbound + 1) * sizeof *nb);
    if (!nb)
        return nomem(err);
    s->bound = nb;
    memmove(nb + at + 1, nb + at, (size_t)(s->nbound - at) * sizeof *nb);
    nb[at] = *b;
    if (!(nb[at].glob = dup_str(b->glob))) {
        memmove(nb + at, nb + at + 1, (size_t)(s->nbound - at) * sizeof *nb);
        return nomem(err);
    }
    s->nbound++;
    return 0;
}

/* ---- JSON values ------------------------------------------------------------------------ */

typedef struct {
    const char *file;
    sid_error *err;
} ctx;

static int expected(ctx *c, const char *path, const char *what, const cJSON *v)
{
    return jsonfile_expected(c->err, c->file, path, what, v);
}

/* A finite number; lo_ok: the least value allowed (-HUGE_VAL: any), strict: > not >=. */
static int number(ctx *c, const cJSON *v, const char *path, double lo, int strict,
                  const char *what, double *out)
{
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) ||
        (strict ? !(v->valuedouble > lo) : !(v->valuedouble >= lo)))
        return expected(c, path, what, v);
    *out = v->valuedouble;
    return 0;
}

static int integer(ctx *c, const cJSON *v, const char *path, int lo, const char *what, int *out)
{
    double x = 0;
    if (number(c, v, path, lo, 0, what, &x) || x != floor(x) || x > 1e9)
        return expected(c, path, what, v);
    *out = (int)x;
    return 0;
}

static void warn_keys(ctx *c, const cJSON *obj, const char *where, const char *const *known)
{
    for (const cJSON *k = obj->child; k; k = k->next) {
        int ok = k->string[0] == '_';
        for (int i = 0; known[i] && !ok; i++)
            ok = strcmp(k->string, known[i]) == 0;
        if (!ok)
            sid_io_warn("%s: %s%s%s: unknown key (ignored)", c->file, where, *where ? "." : "",
                     k->string);
    }
}

/* [lo, hi] or {"scale": [a, b]} */
static int read_bound(ctx *c, const cJSON *v, const char *path, fitspec_bound *b)
{
    static const char *const what = "[lo, hi] or {\"scale\": [a, b]} with lo <= hi";
    const cJSON *pair = v;
    b->relative = 0;
    if (cJSON_IsObject(v)) {
        pair = cJSON_GetObjectItemCaseSensitive(v, "scale");
        if (!pair || cJSON_GetArraySize(v) != 1)
            return expected(c, path, what, v);
        b->relative = 1;
    }
    if (!cJSON_IsArray(pair) || cJSON_GetArraySize(pair) != 2)
        return expected(c, path, what, v);
    const cJSON *lo = cJSON_GetArrayItem(pair, 0), *hi = cJSON_GetArrayItem(pair, 1);
    /* Infinite absolute bounds are fine as "no bound"; JSON has no Inf, so use +-1e308. */
    if (!cJSON_IsNumber(lo) || !cJSON_IsNumber(hi) || !(lo->valuedouble <= hi->valuedouble))
        return expected(c, path, what, v);
    if (b->relative && !(lo->valuedouble >= 0))
        return expected(c, path, "scale factors 0 <= a <= b", v);
    b->lo = lo->valuedouble;
    b->hi = hi->valuedouble;
    return 0;
}

/* "bounds": { GLOB: bound, ... }, inserted from position `at` on. */
static int read_bounds(ctx *c, fitspec *s, const cJSON *obj, const char *path, int at)
{
    if (!cJSON_IsObject(obj))
        return expected(c, path, "an object { \"GLOB\": [lo, hi], ... }", obj);
    for (const cJSON *k = obj->child; k; k = k->next) {
        fitspec_bound b;
        set_origin(b.origin, "%s[\"%s\"]", path, k->string);
        if (read_bound(c, k, b.origin, &b))
            return -1;
        char full[FITSPEC_ORIGIN];
        set_origin(full, "%s: %s", c->file, b.origin);
        strcpy(b.origin, full);
        b.glob = k->string;
        if (add_bound(s, at++, &b, c->err))
            return -1;
    }
    return 0;
}

/* What read_columns reads: "columns" (headers), "scale" (factors) or "units" (names). */
enum { COLS_HEADER, COLS_SCALE, COLS_UNIT };

/* "columns": { LOGICAL: "HEADER" }, "scale": { LOGICAL: x } or "units": { LOGICAL: "deg" }
 * into s->columns; LOGICAL may be a pattern ("q.*", with a header template). */
static int read_columns(ctx *c, fitspec *s, const cJSON *obj, const char *path, int kind)
{
    static const char *const shape[] = { "an object { \"q.JOINT\": \"header\", ... }",
                                          "an object { \"q.JOINT\": factor, ... }",
                                          "an object { \"q.JOINT\": \"unit\", ... }" };
    if (!cJSON_IsObject(obj))
        return expected(c, path, shape[kind], obj);
    for (const cJSON *k = obj->child; k; k = k->next) {
        char p[FITSPEC_ORIGIN], o[FITSPEC_ORIGIN], why[160];
        set_origin(p, "%s[\"%s\"]", path, k->string);
        set_origin(o, "%s: %s", c->file, p);
        traj_column *col = traj_colmap_get(&s->columns, k->string);
        if (!col)
            return expected(c, p, "a column name of at most 70 characters", NULL);
        if (kind == COLS_SCALE || kind == COLS_UNIT) {
            /* one conversion per column: a unit and a factor would both apply, or one hide */
            if (col->set & (TRAJ_COL_SCALE | TRAJ_COL_UNIT)) {
                sid_error_set(c->err, SID_ERR_INPUT, "%s: %s already has a %s (%s); give a "
                              "unit or a scale, not both", o, k->string,
                              col->set & TRAJ_COL_UNIT ? "unit" : "scale", col->conv_origin);
                return -1;
            }
            if (kind == COLS_SCALE) {
                if (!cJSON_IsNumber(k) || !isfinite(k->valuedouble) || k->valuedouble == 0)
                    return expected(c, p, "a non-zero number", k);
                col->scale = k->valuedouble;
                col->set |= TRAJ_COL_SCALE;
            } else {
                if (!cJSON_IsString(k) || !unit_find(k->valuestring)) {
                    char what[1300];
                    snprintf(what, sizeof what, "a unit: %s", unit_all_list());
                    return expected(c, p, what, k);
                }
                strcpy(col->unit, k->valuestring);
                col->set |= TRAJ_COL_UNIT;
            }
            snprintf(col->conv_origin, sizeof col->conv_origin, "%s", o);
        } else {
            if (!cJSON_IsString(k) || !k->valuestring[0] ||
                strlen(k->valuestring) >= sizeof col->source)
                return expected(c, p, "a column header (a non-empty string)", k);
            if (colpattern_is_pattern(k->string) &&
                colpattern_check(k->valuestring, why, sizeof why)) {
                char what[200];
                snprintf(what, sizeof what, "a header template: %s", why);
                return expected(c, p, what, k);
            }
            strcpy(col->source, k->valuestring);
            col->set |= TRAJ_COL_SOURCE;
            snprintf(col->origin, sizeof col->origin, "%s", o);
        }
    }
    return 0;
}

static int read_integrator(ctx *c, const cJSON *v, const char *path, sid_integrator *out)
{
    char choice[64];
    if (!cJSON_IsString(v) || sid_integrator_parse(v->valuestring, out))
        return expected(c, path, names_choice(choice, sizeof choice, sid_integrator_name, 1), v);
    return 0;
}

static int read_start(const char *value, int *out)
{
    if (strcmp(value, "logged") == 0)
        *out = FITSPEC_START_LOGGED;
    else if (strcmp(value, "fitted") == 0)
        *out = FITSPEC_START_FITTED;
    else
        return -1;
    return 0;
}

static int read_start_velocity(const char *value, int *out)
{
    if (strcmp(value, "auto") == 0)
        *out = -1;
    else if (strcmp(value, "logged") == 0)
        *out = 0;
    else if (strcmp(value, "positions") == 0)
        *out = 1;
    else
        return -1;
    return 0;
}

static int read_optimizer(const char *value, sid_optimizer *out)
{
    if (strcmp(value, "lbfgs") == 0)
        *out = SID_OPT_LBFGS;
    else if (strcmp(value, "lm") == 0)
        *out = SID_OPT_LM;
    else if (strcmp(value, "auto") == 0)
        *out = SID_OPT_AUTO;
    else
        return -1;
    return 0;
}

static int read_contact(const char *value, int *out)
{
    sid_contact_model cm;
    if (sid_contact_model_parse(value, &cm)) return -1;
    *out = (int)cm;
    return 0;
}

/* "smoothing": { "sigma": s, "pairs": n, "seed": k }; without "seed" the current one stays.
 * The --smoothing flag comes here too, as such an object. */
static int read_smoothing(ctx *c, fitspec *s, const cJSON *v)
{
    static const char *const keys[] = { "sigma", "pairs", "seed", NULL };
    if (!cJSON_IsObject(v))
        return expected(c, "smoothing", "an object { \"sigma\": s, \"pairs\": n, \"seed\": k }", v);
    warn_keys(c, v, "smoothing", keys);
    const cJSON *seed = cJSON_GetObjectItemCaseSensitive(v, "seed");
    int k = 0;
    if (number(c, cJSON_GetObjectItemCaseSensitive(v, "sigma"), "smoothing.sigma", 0, 1,
               "a positive number (in the fit's scaled coordinates)", &s->smoothing_sigma) ||
        integer(c, cJSON_GetObjectItemCaseSensitive(v, "pairs"), "smoothing.pairs", 1,
                "a whole number >= 1", &s->smoothing_pairs) ||
        (seed && integer(c, seed, "smoothing.seed", 0, "a whole number >= 0", &k)))
        return -1;
    if (seed)
        s->smoothing_seed = (unsigned long)k;
    return 0;
}

/* "free" or "fixed": an array of parameter names or globs. */
static int read_globs(ctx *c, const cJSON *v, const char *key, fitspec_glob **list, int *n)
{
    if (!cJSON_IsArray(v))
        return expected(c, key, "an array of parameter names or globs", v);
    int i = 0;
    for (const cJSON *g = v->child; g; g = g->next, i++) {
        char p[32], o[FITSPEC_ORIGIN];
        snprintf(p, sizeof p, "%s[%d]", key, i);
        if (!cJSON_IsString(g) || !g->valuestring[0])
            return expected(c, p, "a parameter name or glob", g);
        set_origin(o, "%s: %s", c->file, p);
        if (add_glob(list, n, g->valuestring, o, c->err))
            return -1;
    }
    return 0;
}

static int read_spec(ctx *c, fitspec *s, const cJSON *root)
{
    static const char *const keys[] = { "free", "fixed", "bounds", "window", "substeps", "max_dt",
                                        "integrator", "weights", "optimizer", "columns",
                                        "scale", "start", "start_velocity", "smoothing",
                                        "contact_model", "units", "description", NULL };
    static const char *const wkeys[] = { "q", "qd", "tau", NULL };
    static const char *const okeys[] = { "method", "max_iter", "ftol_rel", "time_limit", NULL };
    const cJSON *v;
    if (!cJSON_IsObject(root))
        return expected(c, "top level", "an object", root);
    warn_keys(c, root, "", keys);
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "free"))) {
        s->free_given = 1;
        if (read_globs(c, v, "free", &s->free, &s->nfree))
            return -1;
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "fixed")) && read_globs(c, v, "fixed", &s->fixed, &s->nfixed))
        return -1;
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "bounds")) &&
        read_bounds(c, s, v, "bounds", s->nbound))
        return -1;
    /* "auto" exactly: a misspelt choice ("Auto") must not pass for a number or a default */
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "window"))) {
        if (cJSON_IsString(v) && strcmp(v->valuestring, "auto") == 0)
            s->window_auto = 1;
        else if (number(c, v, "window", 0, 0, "a non-negative number of seconds or \"auto\"", &s->window))
            return -1;
        else
            s->window_auto = 0;
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "substeps")) &&
        integer(c, v, "substeps", 1, "a whole number >= 1", &s->sim.substeps))
        return -1;
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "max_dt")) &&
        number(c, v, "max_dt", 0, 1, "a positive number of seconds", &s->sim.max_dt))
        return -1;
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "integrator"))) {
        if (read_integrator(c, v, "integrator", &s->sim.integrator))
            return -1;
        s->integrator_given = 1;
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "weights"))) {
        if (!cJSON_IsObject(v))
            return expected(c, "weights", "an object { \"q\": w, \"qd\": w }", v);
        warn_keys(c, v, "weights", wkeys);
        const cJSON *w;
        if ((w = cJSON_GetObjectItemCaseSensitive(v, "q")) &&
            number(c, w, "weights.q", 0, 0, "a non-negative number", &s->w_q))
            return -1;
        if ((w = cJSON_GetObjectItemCaseSensitive(v, "qd")) &&
            number(c, w, "weights.qd", 0, 0, "a non-negative number", &s->w_qd))
            return -1;
        if ((w = cJSON_GetObjectItemCaseSensitive(v, "tau")) &&
            number(c, w, "weights.tau", 0, 0, "a non-negative number", &s->w_tau))
            return -1;
    }
    /* "optimizer": "lm" is short for { "method": "lm" } */
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "optimizer")) && cJSON_IsString(v) &&
        read_optimizer(v->valuestring, &s->optimizer))
        return expected(c, "optimizer", "\"auto\", \"lbfgs\" or \"lm\"", v);
    if (v && !cJSON_IsString(v)) {
        if (!cJSON_IsObject(v))
            return expected(c, "optimizer", "\"auto\", \"lbfgs\", \"lm\" or an object { \"method\": \"lm\", \"max_iter\": n, ... }", v);
        warn_keys(c, v, "optimizer", okeys);
        const cJSON *o;
        if ((o = cJSON_GetObjectItemCaseSensitive(v, "method")) &&
            (!cJSON_IsString(o) || read_optimizer(o->valuestring, &s->optimizer)))
            return expected(c, "optimizer.method", "\"auto\", \"lbfgs\" or \"lm\"", o);
        if ((o = cJSON_GetObjectItemCaseSensitive(v, "max_iter")) &&
            integer(c, o, "optimizer.max_iter", 1, "a whole number >= 1", &s->max_iter))
            return -1;
        if ((o = cJSON_GetObjectItemCaseSensitive(v, "ftol_rel")) &&
            number(c, o, "optimizer.ftol_rel", 0, 0, "a non-negative number", &s->ftol_rel))
            return -1;
        if ((o = cJSON_GetObjectItemCaseSensitive(v, "time_limit")) &&
            number(c, o, "optimizer.time_limit", 0, 0, "a non-negative number of seconds",
                   &s->time_limit))
            return -1;
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "columns")) &&
        read_columns(c, s, v, "columns", COLS_HEADER))
        return -1;
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "scale")) &&
        read_columns(c, s, v, "scale", COLS_SCALE))
        return -1;
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "units")) &&
        read_columns(c, s, v, "units", COLS_UNIT))
        return -1;
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "start")) &&
        (!cJSON_IsString(v) || read_start(v->valuestring, &s->start)))
        return expected(c, "start", "\"logged\" or \"fitted\"", v);
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "start_velocity")) &&
        (!cJSON_IsString(v) || read_start_velocity(v->valuestring, &s->start_velocity_from_q)))
        return expected(c, "start_velocity", "\"auto\", \"logged\" or \"positions\"", v);
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "smoothing")) && read_smoothing(c, s, v))
        return -1;
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "contact_model"))) {
        char choice[64];
        if (!cJSON_IsString(v) || read_contact(v->valuestring, &s->contact_model))
            return expected(c, "contact_model", names_choice(choice, sizeof choice, sid_contact_model_name, 1), v);
        set_origin(s->contact_origin, "%s: %s", c->file, "contact_model");
    }
    return 0;
}

int fitspec_load(fitspec *s, const char *path, sid_error *err)
{
    ctx c = { path, err };
    cJSON *root = jsonfile_load(path, err);
    if (!root)
        return -1;
    int rc = jsonfile_check_duplicates(err, path, root, "") ? -1 : read_spec(&c, s, root);
    cJSON_Delete(root);
    return rc;
}

/* ---- flags ------------------------------------------------------------------------------ */

static int bad_flag(sid_error *err, const char *flag, const char *what, const char *value)
{
    sid_error_set(err, SID_ERR_INPUT, "%s: expected %s, got '%s'", flag, what, value);
    return -1;
}

static int parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    *out = strtod(s, &end);
    return end == s || *end || errno == ERANGE || !isfinite(*out) ? -1 : 0;
}

/* "k=v,k=v" into a JSON object of strings (columns) or numbers (scale), so that the flag
 * and the file share one reader. */
static cJSON *pairs_to_json(const char *value, int numbers)
{
    cJSON *obj = cJSON_CreateObject();
    char *copy = dup_str(value), *save = NULL;
    if (!obj || !copy) {
        free(copy);
        cJSON_Delete(obj);
        return NULL;
    }
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        double x;
        if (!eq || eq == tok || !eq[1] || (numbers && parse_double(eq + 1, &x))) {
            cJSON_Delete(obj);
            obj = NULL;
            break;
        }
        *eq = '\0';
        if (numbers)
            cJSON_AddNumberToObject(obj, tok, x);
        else
            cJSON_AddStringToObject(obj, tok, eq + 1);
    }
    free(copy);
    return obj;
}

/* --columns, --scale, --units: a JSON object or NAME=VALUE,... as the file's key. */
static int flag_columns(fitspec *s, const char *flag, const char *value, sid_error *err)
{
    static const char *const key[] = { "columns", "scale", "units" };
    static const char *const what[] = { "a JSON object or NAME=HEADER,...",
                                        "a JSON object or NAME=FACTOR,...",
                                        "a JSON object or NAME=UNIT,..." };
    const int kind = strcmp(flag, "--scale") == 0   ? COLS_SCALE
                     : strcmp(flag, "--units") == 0 ? COLS_UNIT
                                                    : COLS_HEADER;
    ctx c = { flag, err };
    cJSON *obj;
    if (value[0] == '{') {
        if (!(obj = jsonfile_parse(flag, value, strlen(value), err)))
            return -1;
    } else if (!(obj = pairs_to_json(value, kind == COLS_SCALE)))
        return bad_flag(err, flag, what[kind], value);
    /* Flags replace what the file said for the same column; merge keeps the rest. */
    fitspec tmp;
    fitspec_init(&tmp);
    int rc = read_columns(&c, &tmp, obj, key[kind], kind);
    for (int i = 0; rc == 0 && i < tmp.columns.n; i++) {
        snprintf(tmp.columns.col[i].origin, sizeof tmp.columns.col[i].origin, "%s", flag);
        snprintf(tmp.columns.col[i].conv_origin, sizeof tmp.columns.col[i].conv_origin, "%s", flag);
    }
    if (rc == 0 && traj_colmap_merge(&s->columns, &tmp.columns))
        rc = nomem(err);
    fitspec_free(&tmp);
    cJSON_Delete(obj);
    return rc;
}

/* SIGMA,PAIRS[,SEED] or "off"; checked by the file's reader, as an object. */
static int flag_smoothing(fitspec *s, const char *value, sid_error *err)
{
    static const char *const what = "SIGMA,PAIRS[,SEED] (sigma > 0, pairs >= 1, seed >= 0) or off";
    static const char *const keys[] = { "sigma", "pairs", "seed" };
    if (strcmp(value, "off") == 0) {
        s->smoothing_pairs = 0;
        return 0;
    }
    cJSON *obj = cJSON_CreateObject();
    char *copy = dup_str(value);
    if (!obj || !copy) {
        free(copy);
        cJSON_Delete(obj);
        return nomem(err);
    }
    int n = 0, bad = 0;
    for (char *tok = copy; !bad && tok; n++) {
        char *comma = strchr(tok, ',');
        if (comma)
            *comma = '\0';
        double x;
        bad = n == 3 || parse_double(tok, &x) || !cJSON_AddNumberToObject(obj, keys[n], x);
        tok = comma ? comma + 1 : NULL;
    }
    free(copy);
    ctx c = { "--smoothing", err };
    int rc = bad || n < 2 ? bad_flag(err, "--smoothing", what, value) : read_smoothing(&c, s, obj);
    cJSON_Delete(obj);
    return rc;
}

/* GLOB=LO:HI, GLOB=scale:A:B, or a JSON object as in the file. */
static int flag_bounds(fitspec *s, const char *value, sid_error *err)
{
    static const char *const what = "GLOB=LO:HI, GLOB=scale:A:B or a JSON object";
    if (value[0] == '{') {
        ctx c = { "--bounds", err };
        cJSON *obj = jsonfile_parse("--bounds", value, strlen(value), err);
        if (!obj)
            return -1;
        int before = s->nbound;
        int rc = read_bounds(&c, s, obj, "bounds", s->nbound_flagged);
        s->nbound_flagged += s->nbound - before;
        cJSON_Delete(obj);
        return rc;
    }
    const char *eq = strrchr(value, '=');
    if (!eq || eq == value)
        return bad_flag(err, "--bounds", what, value);
    fitspec_bound b;
    const char *range = eq + 1;
    b.relative = strncmp(range, "scale:", 6) == 0;
    if (b.relative)
        range += 6;
    char lo[64], hi[64];
    const char *colon = strchr(range, ':');
    if (!colon || (size_t)(colon - range) >= sizeof lo || strlen(colon + 1) >= sizeof hi)
        return bad_flag(err, "--bounds", what, value);
    memcpy(lo, range, (size_t)(colon - range));
    lo[colon - range] = '\0';
    strcpy(hi, colon + 1);
    if (parse_double(lo, &b.lo) || parse_double(hi, &b.hi) || !(b.lo <= b.hi) ||
        (b.relative && b.lo < 0))
        return bad_flag(err, "--bounds", what, value);
    char *glob = malloc((size_t)(eq - value) + 1);
    if (!glob)
        return nomem(err);
    memcpy(glob, value, (size_t)(eq - value));
    glob[eq - value] = '\0';
    b.glob = glob;
    set_origin(b.origin, "--bounds %s", value, "");
    int rc = add_bound(s, s->nbound_flagged, &b, err);
    s->nbound_flagged += rc == 0;
    free(glob);
    return rc;
}

int fitspec_apply_flag(fitspec *s, const char *flag, const char *value, sid_error *err)
{
    double x;
    if (strcmp(flag, "--free") == 0 || strcmp(flag, "--free-only") == 0 || strcmp(flag, "--fix") == 0) {
        if (!value[0])
            return bad_flag(err, flag, "a parameter name or glob", value);
        if (strcmp(flag, "--fix") == 0)
            return add_glob(&s->fixed, &s->nfixed, value, flag, err);
        if (strcmp(flag, "--free-only") == 0 && !s->free_flagged) {
            /* the first --free-only replaces the file's list: the command line says it all */
            for (int i = 0; i < s->nfree; i++)
                free(s->free[i].glob);
            s->nfree = 0;
            s->free_flagged = 1;
        }
        s->free_given = 1;
        return add_glob(&s->free, &s->nfree, value, flag, err);
    }
    if (strcmp(flag, "--bounds") == 0)
        return flag_bounds(s, value, err);
    if (strcmp(flag, "--window") == 0) {
        if (strcmp(value, "auto") == 0) {
            s->window_auto = 1;
            return 0;
        }
        if (parse_double(value, &x) || x < 0)
            return bad_flag(err, flag, "a non-negative number of seconds or auto", value);
        s->window = x;
        s->window_auto = 0;
        return 0;
    }
    if (strcmp(flag, "--weight-tau") == 0) {
        if (parse_double(value, &x) || !(x >= 0) || !isfinite(x))
            return bad_flag(err, flag, "a non-negative number (0: torque columns not scored)", value);
        s->w_tau = x;
        return 0;
    }
    if (strcmp(flag, "--integrator") == 0) {
        char choice[64];
        if (sid_integrator_parse(value, &s->sim.integrator))
            return bad_flag(err, flag, names_choice(choice, sizeof choice, sid_integrator_name, 0), value);
        s->integrator_given = 1;
        return 0;
    }
    if (strcmp(flag, "--substeps") == 0 || strcmp(flag, "--max-iter") == 0) {
        if (parse_double(value, &x) || x < 1 || x != floor(x) || x > 1e9)
            return bad_flag(err, flag, "a whole number >= 1", value);
        *(flag[2] == 's' ? &s->sim.substeps : &s->max_iter) = (int)x;
        return 0;
    }
    if (strcmp(flag, "--threads") == 0) {
        if (parse_double(value, &x) || x < 0 || x != floor(x) || x > 4096)
            return bad_flag(err, flag, "a whole number >= 0 (0: all cores)", value);
        s->threads = (int)x;
        return 0;
    }
    if (strcmp(flag, "--max-dt") == 0) {
        if (parse_double(value, &x) || !(x > 0))
            return bad_flag(err, flag, "a positive number of seconds", value);
        s->sim.max_dt = x;
        return 0;
    }
    if (strcmp(flag, "--ftol-rel") == 0 || strcmp(flag, "--time-limit") == 0) {
        if (parse_double(value, &x) || x < 0)
            return bad_flag(err, flag, "a non-negative number", value);
        *(flag[2] == 'f' ? &s->ftol_rel : &s->time_limit) = x;
        return 0;
    }
    if (strcmp(flag, "--start-velocity") == 0) {
        if (read_start_velocity(value, &s->start_velocity_from_q))
            return bad_flag(err, flag, "auto, logged or positions", value);
        return 0;
    }
    if (strcmp(flag, "--start") == 0) {
        if (read_start(value, &s->start))
            return bad_flag(err, flag, "logged or fitted", value);
        return 0;
    }
    if (strcmp(flag, "--columns") == 0 || strcmp(flag, "--scale") == 0 ||
        strcmp(flag, "--units") == 0)
        return flag_columns(s, flag, value, err);
    if (strcmp(flag, "--smoothing") == 0)
        return flag_smoothing(s, value, err);
    if (strcmp(flag, "--optimizer") == 0) {
        if (read_optimizer(value, &s->optimizer))
            return bad_flag(err, flag, "auto, lbfgs or lm", value);
        return 0;
    }
    if (strcmp(flag, "--contact") == 0) {
        char choice[64];
        if (read_contact(value, &s->contact_model))
            return bad_flag(err, flag, names_choice(choice, sizeof choice, sid_contact_model_name, 0), value);
        set_origin(s->contact_origin, "%s%s", flag, "");
        return 0;
    }
    sid_error_set(err, SID_ERR_INPUT, "%s: not a fit-spec option", flag);
    return -1;
}

/* ---- selection -------------------------------------------------------------------------- */

void fitspec_selection_free(fitspec_selection *sel)
{
    free(sel->idx);
    free(sel->lo);
    free(sel->hi);
    memset(sel, 0, sizeof *sel);
}

/* 0 if glob matches some parameter of m; else -1 naming it and where it was given. */
static int matches_some(const sid_model *m, const char *glob, const char *origin, sid_error *err)
{
    if (sid_model_param_match(m, glob, NULL) > 0)
        return 0;
    sid_error_set(err, SID_ERR_INPUT, "%s: '%s' matches no parameter of the robot (see 'sysid params ROBOT.json')",
                  origin, glob);
    return -1;
}

static int matches_any(const fitspec_glob *g, int n, const char *name)
{
    for (int k = 0; k < n; k++)
        if (sid_glob_match(g[k].glob, name))
            return 1;
    return 0;
}

/* Does parameter i scale a motor's torque as a whole: a kt, a position servo's kp, or the kd of
 * a velocity servo (one without a kp)? */
static int is_torque_unit(const sid_model *m, int i)
{
    const sid_param_info *p = sid_model_param(m, i);
    if (p->kind == SID_P_KT || p->kind == SID_P_KP)
        return 1;
    if (p->kind != SID_P_KD)
        return 0;
    char kp[sizeof p->name];
    snprintf(kp, sizeof kp, "%.*skp", (int)(strlen(p->name) - 2), p->name);
    return sid_model_param_find(m, kp) < 0;
}

/* Is parameter i free: named by a free glob (or, with none given, marked fit_default in the
 * parameter table, or a velocity servo's kd, and moving something), and not fixed? */
static int is_free(const fitspec *s, const sid_model *m, int i)
{
    const sid_param_info *p = sid_model_param(m, i);
    const int dflt = p->row->fit_default || (p->kind == SID_P_KD && is_torque_unit(m, i));
    int on = s->free_given ? matches_any(s->free, s->nfree, p->name) : dflt && sid_model_param_moves(m, i);
    return on && !matches_any(s->fixed, s->nfixed, p->name);
}

static const fitspec_bound *bound_of(const fitspec *s, const char *name)
{
    for (int b = 0; b < s->nbound; b++)
        if (sid_glob_match(s->bound[b].glob, name))
            return &s->bound[b];
    return NULL;
}

int fitspec_select(const fitspec *s, const sid_model *m, const double *theta0,
                   fitspec_selection *sel, sid_error *err)
{
    int np = sid_model_nparam(m);
    memset(sel, 0, sizeof *sel);
    sel->gauge = -1;
    /* a glob that frees, fixes or bounds nothing is a typo */
    for (int k = 0; k < s->nfree; k++)
        if (matches_some(m, s->free[k].glob, s->free[k].origin, err))
            return -1;
    for (int k = 0; k < s->nfixed; k++)
        if (matches_some(m, s->fixed[k].glob, s->fixed[k].origin, err))
            return -1;
    for (int k = 0; k < s->nbound; k++)
        if (matches_some(m, s->bound[k].glob, s->bound[k].origin, err))
            return -1;
    sel->idx = malloc((size_t)(np ? np : 1) * sizeof *sel->idx);
    sel->lo = malloc((size_t)(np ? np : 1) * sizeof *sel->lo);
    sel->hi = malloc((size_t)(np ? np : 1) * sizeof *sel->hi);
    if (!sel->idx || !sel->lo || !sel->hi) {
        fitspec_selection_free(sel);
        return nomem(err);
    }
    for (int i = 0; i < np; i++) {
        const sid_param_info *p = sid_model_param(m, i);
        const char *name = p->name;
        if (!is_free(s, m, i))
            continue;
        if (!s->free_given && is_torque_unit(m, i) && sel->gauge < 0) {
            /* Scaling every mass, inertia, friction and motor constant together leaves the motion
             * unchanged: the default set holds the first motor's kt (a position servo's kp, a
             * velocity servo's kd) as the unit of torque. */
            sel->gauge = i;
            continue;
        }
        /* without a bound, the kind's own range (a friction cannot go negative) */
        double lo = p->row->range == SID_RANGE_ANY ? -HUGE_VAL : 0, hi = HUGE_VAL, x0 = theta0[i];
        const fitspec_bound *b = bound_of(s, name);
        if (b && b->relative) {
            if (x0 == 0) {
                sid_error_set(err, SID_ERR_INPUT, "%s: a scale bound needs a non-zero "
                              "nominal value, and %s is 0; give [lo, hi]", b->origin, name);
                fitspec_selection_free(sel);
                return -1;
            }
            /* a*x0 .. b*x0, in increasing order also for a negative nominal value */
            lo = fmin(b->lo * x0, b->hi * x0);
            hi = fmax(b->lo * x0, b->hi * x0);
        } else if (b) {
            lo = b->lo;
            hi = b->hi;
        }
        if (!(x0 >= lo && x0 <= hi)) {
            sid_error_set(err, SID_ERR_INPUT, "%s: %s has nominal value %.17g, outside its "
                          "bounds [%.17g, %.17g]", b ? b->origin : "bounds", name, x0, lo, hi);
            fitspec_selection_free(sel);
            return -1;
        }
        sel->idx[sel->n] = i;
        sel->lo[sel->n] = lo;
        sel->hi[sel->n] = hi;
        sel->n++;
    }
    if (sel->n == 0) {
        fitspec_selection_free(sel);
        if (s->nfixed)
            sid_error_set(err, SID_ERR_INPUT, "no free parameters: %s holds every one that %s frees", s->fixed[0].origin,
                          s->free_given ? "the free list" : "the default set");
        else
            sid_error_set(err, SID_ERR_INPUT, s->free_given ? "no free parameters: the free list is empty"
                          : "no free parameters: the robot has none that a fit frees by default (masses, armature, "
                          "friction, motor constants of moving joints); give \"free\" in the fit spec or --free GLOB");
        return -1;
    }
    return 0;
}

void fitspec_choose_start_velocity(fitspec *s, const sid_model *m, sid_traj *const *tr, const char *const *path,
                                   int n)
{
    if (s->start_velocity_from_q >= 0)
        return;
    double worst = 0, *v = malloc(sizeof(double) * (size_t)(sid_model_nv(m) + 1));
    int at = 0;
    for (int j = 0; v && j < n; j++) {
        const double r = sid_traj_velocity_noise(m, tr[j], v);
        if (r > worst)
            worst = r, at = j;
    }
    free(v);
    s->start_velocity_from_q = worst > FITSPEC_NOISY_VELOCITY;
    if (s->start_velocity_from_q)
        sid_io_note("start velocities from positions: the logged velocities of %s differ from the "
                    "positions' derivative by %.0f%% (rms; --start-velocity logged keeps them)", path[at], 100 * worst);
}

void fitspec_loss_opts(const fitspec *s, sid_loss_opts *o)
{
    sid_loss_opts_defaults(o);
    o->window = s->window;
    o->weight_q = s->w_q;
    o->weight_qd = s->w_qd;
    o->weight_tau = s->w_tau;
    o->sim = s->sim;
    o->estimate_start = s->start == FITSPEC_START_FITTED;
    o->threads = s->threads;
    o->start_velocity_from_q = s->start_velocity_from_q > 0;
}

void fitspec_fit_opts(const fitspec *s, const fitspec_selection *sel, sid_fit_opts *o)
{
    sid_fit_opts_defaults(o);
    o->nfree = sel->n;
    o->idx = sel->idx;
    o->lo = sel->lo;
    o->hi = sel->hi;
    o->max_iter = s->max_iter;
    o->ftol_rel = s->ftol_rel;
    o->time_limit = s->time_limit;
    o->optimizer = s->optimizer;
    o->smoothing_sigma = s->smoothing_sigma;
    o->smoothing_pairs = s->smoothing_pairs;
    o->smoothing_seed = s->smoothing_seed;
}

void fitspec_apply_model(fitspec *s, sid_model *m, const char *robot)
{
    if (!s->integrator_given && sid_model_integrator(m) >= 0)
        s->sim.integrator = (sid_integrator)sid_model_integrator(m);
    if (s->contact_model < 0)
        return;
    if (sid_model_has_contact(m))
        sid_model_set_contact_model(m, (sid_contact_model)s->contact_model);
    else
        sid_io_warn("%s: %s has no contact (no ground plane): the contact model has no effect",
                 s->contact_origin, robot);
}
