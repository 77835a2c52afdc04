/* cmd_params.c — `sysid params ROBOT.json [--json]`: the parameter vector, by name.
 *
 * These names are what fit specs, --free and reports use, so this is how a user finds
 * them. Values are printed exactly (they read back to the same double).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "atomic.h"
#include "cmd.h"
#include "diag.h"
#include "fitspec.h"
#include "numfmt.h"
#include "robot_json.h"
#include "robot_load.h"

static const cmd_info info = {
    "params", CMD_PARAMS, "sysid params ROBOT.json [--json] [--set NAME=VALUE... -o OUT.json]",
    "List every parameter of the robot: its name (as used by \"free\" and \"bounds\"\n"
    "in fit specs and by --free), its nominal value and its unit. With --set, change\n"
    "parameters instead and write the robot to -o OUT.json (which may be ROBOT.json\n"
    "itself): only the numbers that changed are rewritten, every other byte of the\n"
    "file stays as given.\n",
    "JSON: {\"robot\": NAME, \"parameters\": [{\"name\", \"path\", \"value\", \"unit\"}, ...]}\n",
};

static int print_json(const sid_model *m, const double *theta, const cJSON *doc)
{
    cJSON *out = cJSON_CreateObject(), *list;
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(doc, "name");
    cJSON_AddStringToObject(out, "robot", cJSON_IsString(name) ? name->valuestring : "");
    list = cJSON_AddArrayToObject(out, "parameters");
    for (int i = 0; i < sid_model_nparam(m); i++) {
        const sid_param_info *p = sid_model_param(m, i);
        char path[256];
        sid_model_param_path(m, i, path, sizeof path);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", p->name);
        cJSON_AddStringToObject(o, "path", path);
        cJSON_AddItemToObject(o, "value", numfmt_json(theta[i]));
        cJSON_AddStringToObject(o, "unit", p->unit ? p->unit : "");
        cJSON_AddItemToArray(list, o);
    }
    return cmd_print_json(out);
}

static void print_table(const sid_model *m, const double *theta)
{
    int w = 4;
    for (int i = 0; i < sid_model_nparam(m); i++) {
        int n = (int)strlen(sid_model_param(m, i)->name);
        w = n > w ? n : w;
    }
    printf("%-*s  %-22s  %s\n", w, "name", "value", "unit");
    for (int i = 0; i < sid_model_nparam(m); i++) {
        const sid_param_info *p = sid_model_param(m, i);
        char v[NUMFMT_LEN];
        numfmt(v, theta[i]);
        printf("%-*s  %-22s  %s\n", w, p->name, v, p->unit ? p->unit : "");
    }
}

/* Apply "NAME=VALUE" to theta: every parameter NAME matches gets VALUE. */
static int set_param(const sid_model *m, double *theta, const char *arg, sid_error *err)
{
    const char *eq = strrchr(arg, '=');
    char *end;
    double x = eq ? strtod(eq + 1, &end) : 0;
    if (!eq || eq == arg || end == eq + 1 || *end || !isfinite(x))
        return sid_error_set(err, SID_ERR_INPUT, "--set: expected NAME=VALUE with a finite "
                             "number, got '%s'", arg);
    char glob[256];
    snprintf(glob, sizeof glob, "%.*s", (int)(eq - arg), arg);
    int hits = 0;
    for (int i = 0; i < sid_model_nparam(m); i++)
        if (sid_glob_match(glob, sid_model_param(m, i)->name)) {
            theta[i] = x;
            hits++;
        }
    if (!hits)
        return sid_error_set(err, SID_ERR_INPUT, "--set: '%s' matches no parameter of the "
                             "robot", glob);
    return SID_OK;
}

int cmd_params(int argc, char **argv)
{
    cmd_args a;
    int rc = cmd_parse(&info, argc, argv, &a);
    if (rc != CMD_RUN)
        return rc;
    if (a.nop != 1)
        return cmd_usage_error(&info, "expected one robot file, got %d arguments", a.nop);
    const int nset = a.set.n;
    if ((nset > 0) != (a.out != NULL))
        return cmd_usage_error(&info, nset ? "--set needs -o OUT.json" : "-o is for --set");

    sid_error err = { 0 };
    robot_format fmt = ROBOT_JSON;
    if (nset && atomic_same_file(a.out, a.op[0]) && robot_file_format(a.op[0], &fmt, &err) == 0 && fmt != ROBOT_JSON)
        return cmd_usage_error(&info, "-o %s would replace the %s file with a robot.json: write to another file, "
                               "then `sysid export OUT.json --into %s`", a.out, robot_format_name(fmt), a.op[0]);
    sid_model *m;
    double *theta;
    cJSON *doc;
    if (robot_model(a.op[0], &m, &theta, &doc, &err))
        return cli_fail(&err);
    rc = EXIT_OK;
    for (int i = 0; i < nset && rc == EXIT_OK; i++)
        if (set_param(m, theta, a.set.v[i], &err) != SID_OK)
            rc = cli_fail(&err);
    if (rc == EXIT_OK && nset) {
        /* Refuse to write a robot that the next command would reject. */
        if (sid_model_check_theta(m, theta, &err) != SID_OK) {
            sid_error_prefix(&err, "--set");
            rc = cli_fail(&err);
        } else if (robot_json_write(a.out, doc, m, theta, &err)) {
            rc = cli_fail(&err);
        }
    }
    if (rc == EXIT_OK && !nset && a.json)
        rc = print_json(m, theta, doc);
    else if (rc == EXIT_OK && !nset)
        print_table(m, theta);
    cJSON_Delete(doc);
    sid_free(theta);
    sid_model_free(m);
    return rc;
}
