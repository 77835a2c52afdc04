/* cmd_report.c — `sysid report REPORT.json -o PAGE.html`: the fit's HTML page rebuilt from a
 * saved report, the robot and the logs it names.
 *
 * The report records what the page needs: the robot, fit spec and logs by path and SHA-256,
 * the command line's fit-spec flags (so the logs are read with the same columns and units),
 * the settings the fit used (windows, weights, integrator, the chosen step, start velocities)
 * and every fitted value exactly. The logs are replayed here with those settings; a file that
 * changed since the report was written is an error, since the page would then show a fit of
 * other data. Paths are used as the fit was given them (relative to the directory it ran in).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic.h"
#include "cmd.h"
#include "diag.h"
#include "html_page.h"
#include "jsonfile.h"
#include "names.h"
#include "sha256.h"
#include "traj_csv.h"

static const cmd_info info = {
    "report", CMD_REPORT,
    "sysid report REPORT.json -o PAGE.html [-q]",
    "Rebuild the HTML page of a fit (what `sysid fit --html` writes) from its report\n"
    "(`sysid fit --report REPORT.json`), the robot, the fit spec and the logs the report\n"
    "names, replayed with the fit's settings and fitted values. Run it where the fit ran:\n"
    "paths are used as the fit was given them. Every input is checked against the\n"
    "SHA-256 the report recorded.\n",
    "The page is one self-contained file: inline SVG charts, CSS and a small script,\n"
    "nothing fetched from the network; it prints.\n\n"
    "Exit status: 0 success; 2 usage error, invalid or incomplete report, or an input\n"
    "missing or changed since the report was written (nothing written).\n",
};

/* An input the report names: its path, checked against its recorded digest. */
static int check_input(const char *report, const cJSON *in, const char *where, const char **path, sid_error *err)
{
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(in, "path"), *h = cJSON_GetObjectItemCaseSensitive(in, "sha256");
    char key[96];
    snprintf(key, sizeof key, "%s.path", where);
    if (!cJSON_IsString(p))
        return jsonfile_expected(err, report, key, "the input's path (a string)", p);
    *path = p->valuestring;
    char hex[SHA256_HEX];
    if (sha256_file(*path, hex, err)) {
        sid_error_prefix(err, "%s: %s", report, where);
        return -1;
    }
    if (cJSON_IsString(h) && strcmp(h->valuestring, hex) != 0) {
        sid_error_set(err, SID_ERR_INPUT, "%s: %s: %s changed since the report was written (sha256 %.12s..., the "
                      "report recorded %.12s...): rerun the fit", report, where, *path, hex, h->valuestring);
        return -1;
    }
    return 0;
}

static int expect_number(const char *report, const cJSON *o, const char *key, const char *where, double *x,
                         sid_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v)) {
        char path[96];
        snprintf(path, sizeof path, "%s.%s", where, key);
        return jsonfile_expected(err, report, path, "a number", v);
    }
    *x = v->valuedouble;
    return 0;
}

/* The fit's settings over the spec: what its problems used. */
static int apply_settings(const char *report, const cJSON *rep, fitspec *spec, sid_error *err)
{
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(rep, "settings");
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(st, "weights");
    double substeps = 0, max_dt = 0;
    if (!cJSON_IsObject(st))
        return jsonfile_expected(err, report, "settings", "an object", st);
    if (expect_number(report, st, "window", "settings", &spec->window, err) ||
        expect_number(report, st, "substeps", "settings", &substeps, err) ||
        expect_number(report, w, "q", "settings.weights", &spec->w_q, err) ||
        expect_number(report, w, "qd", "settings.weights", &spec->w_qd, err))
        return -1;
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(st, "max_dt");
    if (!cJSON_IsNull(md) && expect_number(report, st, "max_dt", "settings", &max_dt, err))
        return -1;
    const cJSON *in = cJSON_GetObjectItemCaseSensitive(st, "integrator"), *sv = cJSON_GetObjectItemCaseSensitive(st, "start_velocity");
    char choice[64];
    if (!cJSON_IsString(in) || sid_integrator_parse(in->valuestring, &spec->sim.integrator))
        return jsonfile_expected(err, report, "settings.integrator",
                                 names_choice(choice, sizeof choice, sid_integrator_name, 1), in);
    spec->integrator_given = 1;   /* the one the fit used */
    if (!cJSON_IsString(sv) || (strcmp(sv->valuestring, "positions") && strcmp(sv->valuestring, "logged")))
        return jsonfile_expected(err, report, "settings.start_velocity", "\"positions\" or \"logged\"", sv);
    if (!(substeps >= 1 && substeps <= SID_MAX_SUBSTEPS && substeps == floor(substeps)))
        return jsonfile_expected(err, report, "settings.substeps", "a whole number of steps >= 1",
                                 cJSON_GetObjectItemCaseSensitive(st, "substeps"));
    spec->sim.substeps = (int)substeps;
    spec->sim.max_dt = max_dt;
    spec->start_velocity_from_q = !strcmp(sv->valuestring, "positions");
    return 0;
}

/* The fit's command-line spec flags ([["--columns", "..."], ...]). */
static int spec_args(const char *report, const cJSON *rep, cmd_spec_args *sa, sid_error *err)
{
    const cJSON *fl = cJSON_GetObjectItemCaseSensitive(rep, "spec_flags"), *f;
    if (!fl)
        return 0;   /* a report of a fit before spec flags were recorded: the spec file alone */
    if (!cJSON_IsArray(fl) || cJSON_GetArraySize(fl) > CMD_MAX_SPEC_FLAGS)
        return jsonfile_expected(err, report, "spec_flags", "an array of [flag, value] pairs", fl);
    int k = 0;
    cJSON_ArrayForEach(f, fl) {
        const cJSON *a = cJSON_GetArrayItem(f, 0), *v = cJSON_GetArrayItem(f, 1);
        if (!cJSON_IsString(a) || !(cJSON_IsString(v) || cJSON_IsNull(v))) {
            char path[48];
            snprintf(path, sizeof path, "spec_flags[%d]", k);
            return jsonfile_expected(err, report, path, "a [flag, value] pair of strings", f);
        }
        sa->flag[sa->n] = a->valuestring;
        sa->value[sa->n++] = cJSON_IsString(v) ? v->valuestring : NULL;
        k++;
    }
    return 0;
}

/* Log list `key` of the report: paths checked, logs read. */
static int load_logs(const char *report, const cJSON *rep, const char *key, const sid_model *m, const fitspec *spec,
                     int *n, sid_traj ***tr, const char ***path, sid_error *err)
{
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(rep, key);
    if (!cJSON_IsArray(l))
        return jsonfile_expected(err, report, key, "an array of logs", l);
    *n = cJSON_GetArraySize(l);
    *tr = calloc((size_t)(*n ? *n : 1), sizeof **tr);
    *path = calloc((size_t)(*n ? *n : 1), sizeof **path);
    if (!*tr || !*path) {
        sid_error_set(err, SID_ERR_NOMEM, "out of memory");
        return -1;
    }
    for (int j = 0; j < *n; j++) {
        char where[48];
        snprintf(where, sizeof where, "%s[%d]", key, j);
        if (check_input(report, cJSON_GetArrayItem(l, j), where, &(*path)[j], err) ||
            traj_csv_load((*path)[j], m, &spec->columns, &(*tr)[j], err))
            return -1;
    }
    return 0;
}

static void free_logs(int n, sid_traj **tr, const char **path)
{
    for (int j = 0; tr && j < n; j++)
        sid_traj_free(tr[j]);
    free(tr);
    free(path);
}

int cmd_report(int argc, char **argv)
{
    cmd_args a;
    int rc = cmd_parse(&info, argc, argv, &a);
    if (rc != CMD_RUN)
        return rc;
    if (a.nop != 1)
        return cmd_usage_error(&info, "expected one report file, got %d arguments", a.nop);
    if (!a.out)
        return cmd_usage_error(&info, "expected -o PAGE.html (- for stdout)");
    const char *report = a.op[0];
    if (atomic_same_file(a.out, report))
        return cmd_usage_error(&info, "-o %s would overwrite the report", a.out);
    rc = EXIT_INPUT;
    sid_error err = { 0 };
    fitspec spec;
    fitspec_init(&spec);
    cmd_spec_args sa = { 0 };
    sid_model *m = NULL;
    double *theta0 = NULL, *theta = NULL;
    cJSON *doc = NULL;
    sid_traj **tr = NULL, **tv = NULL;
    const char **pf = NULL, **pv = NULL;
    int nfit = 0, nval = 0;
    sid_problem *pfit = NULL, *pval = NULL;
    const char *robot = NULL, *config = NULL;

    cJSON *rep = jsonfile_load(report, &err);
    if (!rep)
        goto fail;
    const cJSON *cmd = cJSON_GetObjectItemCaseSensitive(rep, "command");
    if (!cJSON_IsString(cmd) || strcmp(cmd->valuestring, "fit")) {
        jsonfile_expected(&err, report, "command", "\"fit\" (a report of sysid fit --report)", cmd);
        goto fail;
    }
    const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(rep, "config");
    if (check_input(report, cJSON_GetObjectItemCaseSensitive(rep, "robot"), "robot", &robot, &err) ||
        (cJSON_IsObject(cfg) && check_input(report, cfg, "config", &config, &err)) ||
        spec_args(report, rep, &sa, &err))
        goto fail;
    sa.path = config;
    if (cmd_spec_build(&spec, &sa, &err) || apply_settings(report, rep, &spec, &err) ||
        cmd_spec_model(&spec, robot, &m, &theta0, &doc, &err))
        goto fail;
    if (load_logs(report, rep, "logs", m, &spec, &nfit, &tr, &pf, &err) ||
        load_logs(report, rep, "validation_logs", m, &spec, &nval, &tv, &pv, &err))
        goto fail;
    if (nfit < 1) {
        jsonfile_expected(&err, report, "logs", "at least one log", cJSON_GetObjectItemCaseSensitive(rep, "logs"));
        goto fail;
    }

    /* the fitted point: the nominal robot with the report's fitted values, exactly */
    const int np = sid_model_nparam(m);
    if (!(theta = malloc((size_t)np * sizeof *theta))) {
        cli_error("out of memory");
        goto done;
    }
    memcpy(theta, theta0, (size_t)np * sizeof *theta);
    const cJSON *ps = cJSON_GetObjectItemCaseSensitive(rep, "parameters"), *p;
    if (!cJSON_IsArray(ps)) {
        jsonfile_expected(&err, report, "parameters", "an array", ps);
        goto fail;
    }
    int k = 0;
    cJSON_ArrayForEach(p, ps) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(p, "name"), *x = cJSON_GetObjectItemCaseSensitive(p, "fitted");
        char where[48];
        snprintf(where, sizeof where, "parameters[%d]", k++);
        const int i = cJSON_IsString(name) ? sid_model_param_find(m, name->valuestring) : -1;
        if (i < 0) {
            char what[200];
            snprintf(what, sizeof what, "the name of a parameter of %s", robot);
            jsonfile_expected(&err, report, where, what, name);
            goto fail;
        }
        if (!cJSON_IsNumber(x)) {
            strcat(where, ".fitted");
            jsonfile_expected(&err, report, where, "a number", x);
            goto fail;
        }
        theta[i] = x->valuedouble;
    }

    sid_loss_opts lp;
    fitspec_loss_opts(&spec, &lp);
    lp.estimate_start = 0;
    if (sid_problem_create(&pfit, m, (const sid_traj *const *)tr, nfit, &lp, &err) ||
        (nval && sid_problem_create(&pval, m, (const sid_traj *const *)tv, nval, &lp, &err)))
        goto fail;
    const html_input hin = { rep, m, theta0, theta, pfit, pval, (const sid_traj *const *)tr,
                             (const sid_traj *const *)tv, pf, pv, nfit, nval };
    atomic_file af;
    if (html_page_prepare(&af, a.out, &hin, &err) || atomic_publish(&af, &err))
        goto fail;
    rc = EXIT_OK;
    goto done;
fail:
    rc = cli_fail(&err);
done:
    sid_problem_free(pval);
    sid_problem_free(pfit);
    free_logs(nfit, tr, pf);
    free_logs(nval, tv, pv);
    free(theta);
    sid_free(theta0);
    sid_model_free(m);
    cJSON_Delete(doc);
    cJSON_Delete(rep);
    fitspec_free(&spec);
    return rc;
}
