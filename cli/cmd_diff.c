/* cmd_diff.c — `sysid diff A.json B.json [--tol REL]`: which parameters changed, and by how much.
 *
 * Parameters are matched by name (docs/formats.md "Parameter names"), so two robots of different
 * structure still compare: a parameter of only one of them is listed as added or removed.
 * The relative change is (new - old) / |old|; it has no finite value when old is 0 and new
 * is not ("inf" in the table, null in JSON). With --tol the command is a gate: exit 1 when
 * any |relative change| exceeds it, an added or removed parameter counting as unbounded.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cmd.h"
#include "diag.h"
#include "numfmt.h"
#include "robot_json.h"
#include "robot_load.h"

static const cmd_info info = {
    "diff", CMD_DIFF, "sysid diff A.json B.json [--json] [--tol REL]",
    "Compare two robots parameter by parameter (by name, so robots of different\n"
    "structure compare too) and list every one that differs: old value (A), new value\n"
    "(B), absolute change B - A and relative change (B - A) / |A|. When A is 0 the\n"
    "relative change is \"inf\" (null in JSON). A parameter of only one robot is listed\n"
    "as added (only in B) or removed (only in A). Identical robots print the header\n"
    "only (an empty \"differences\" list in JSON).\n",
    "JSON: {\"a\", \"b\", \"count\", \"differences\": [{\"name\", \"unit\", \"status\": \"changed\" |\n"
    "\"added\" | \"removed\", \"old\", \"new\", \"abs_change\", \"rel_change\"}], \"tol\",\n"
    "\"exceeded\": [NAME...]}; values that do not exist are null, \"tol\" is null without\n"
    "--tol.\n\n"
    "Exit status: 0 success (or within --tol), 1 a change exceeds --tol, 2 invalid\n"
    "input.\n",
};

typedef enum { CHANGED, ADDED, REMOVED } diff_kind;
static const char *const kind_name[] = { "changed", "added", "removed" };

typedef struct {
    const char *name, *unit;
    diff_kind kind;
    double old_, new_;      /* old_ unset when ADDED, new_ unset when REMOVED */
    int exceeds;            /* over --tol */
} diff_row;

/* (new - old) / |old|: +-HUGE_VAL when old is 0 (only called when they differ). */
static double rel_change(const diff_row *r)
{
    double d = r->new_ - r->old_;
    return r->old_ != 0 ? d / fabs(r->old_) : copysign(HUGE_VAL, d);
}

/* Every difference between (ma, ta) and (mb, tb); rows must hold nparam(a) + nparam(b). */
static int compare(const sid_model *ma, const double *ta, const sid_model *mb, const double *tb,
                   diff_row *row)
{
    int n = 0;
    for (int i = 0; i < sid_model_nparam(ma); i++) {
        const sid_param_info *p = sid_model_param(ma, i);
        int j = sid_model_param_find(mb, p->name);
        if (j < 0)
            row[n++] = (diff_row){ p->name, p->unit, REMOVED, ta[i], 0, 0 };
        else if (ta[i] != tb[j])
            row[n++] = (diff_row){ p->name, p->unit, CHANGED, ta[i], tb[j], 0 };
    }
    for (int j = 0; j < sid_model_nparam(mb); j++) {
        const sid_param_info *p = sid_model_param(mb, j);
        if (sid_model_param_find(ma, p->name) < 0)
            row[n++] = (diff_row){ p->name, p->unit, ADDED, 0, tb[j], 0 };
    }
    return n;
}

static cJSON *num_or_null(int have, double x)
{
    return have && isfinite(x) ? numfmt_json(x) : cJSON_CreateNull();
}

static int print_json(const char *a, const char *b, const diff_row *row, int n, double tol)
{
    cJSON *out = cJSON_CreateObject();
    cJSON_AddStringToObject(out, "a", a);
    cJSON_AddStringToObject(out, "b", b);
    cJSON_AddNumberToObject(out, "count", n);
    cJSON *arr = cJSON_AddArrayToObject(out, "differences");
    for (int k = 0; k < n; k++) {
        const diff_row *r = &row[k];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", r->name);
        cJSON_AddStringToObject(o, "unit", r->unit ? r->unit : "");
        cJSON_AddStringToObject(o, "status", kind_name[r->kind]);
        cJSON_AddItemToObject(o, "old", num_or_null(r->kind != ADDED, r->old_));
        cJSON_AddItemToObject(o, "new", num_or_null(r->kind != REMOVED, r->new_));
        cJSON_AddItemToObject(o, "abs_change", num_or_null(r->kind == CHANGED, r->new_ - r->old_));
        cJSON_AddItemToObject(o, "rel_change", num_or_null(r->kind == CHANGED, rel_change(r)));
        cJSON_AddItemToArray(arr, o);
    }
    cJSON_AddItemToObject(out, "tol", num_or_null(tol >= 0, tol));
    cJSON *ex = cJSON_AddArrayToObject(out, "exceeded");
    for (int k = 0; k < n; k++)
        if (row[k].exceeds)
            cJSON_AddItemToArray(ex, cJSON_CreateString(row[k].name));
    return cmd_print_json(out);
}

static void print_table(const diff_row *row, int n)
{
    /* Cells first, so that every column is as wide as its widest entry (columns 0 and 1,
     * name and status, are printed from the rows). Values are exact; changes are for people
     * (JSON has them exact). */
    enum { NCOL = 6 };
    static const char *const head[NCOL] = { "name", "status", "old", "new", "abs_change", "rel_change" };
    int w[NCOL];
    for (int c = 0; c < NCOL; c++)
        w[c] = (int)strlen(head[c]);
    char (*cell)[NCOL][NUMFMT_LEN] = malloc((size_t)(n ? n : 1) * sizeof *cell);
    if (!cell) {
        cli_error("out of memory");
        return;
    }
    for (int k = 0; k < n; k++) {
        const diff_row *r = &row[k];
        for (int c = 2; c < NCOL; c++)
            snprintf(cell[k][c], NUMFMT_LEN, "-");
        if (r->kind != ADDED)
            numfmt(cell[k][2], r->old_);
        if (r->kind != REMOVED)
            numfmt(cell[k][3], r->new_);
        if (r->kind == CHANGED) {
            double rc = rel_change(r);
            snprintf(cell[k][4], NUMFMT_LEN, "%.6g", r->new_ - r->old_);
            if (isfinite(rc))
                snprintf(cell[k][5], NUMFMT_LEN, "%.6g", rc);
            else
                snprintf(cell[k][5], NUMFMT_LEN, "%sinf", rc < 0 ? "-" : "");
        }
        int nl = (int)strlen(r->name);
        w[0] = nl > w[0] ? nl : w[0];
        w[1] = (int)strlen(kind_name[r->kind]) > w[1] ? (int)strlen(kind_name[r->kind]) : w[1];
        for (int c = 2; c < NCOL; c++) {
            int cl = (int)strlen(cell[k][c]);
            w[c] = cl > w[c] ? cl : w[c];
        }
    }
    printf("%-*s  %-*s  %-*s  %-*s  %-*s  %s\n", w[0], head[0], w[1], head[1], w[2], head[2],
           w[3], head[3], w[4], head[4], head[5]);
    for (int k = 0; k < n; k++)
        printf("%-*s  %-*s  %-*s  %-*s  %-*s  %s%s\n", w[0], row[k].name, w[1],
               kind_name[row[k].kind], w[2], cell[k][2], w[3], cell[k][3], w[4], cell[k][4],
               cell[k][5], row[k].exceeds ? "  !" : "");
    free(cell);
}

int cmd_diff(int argc, char **argv)
{
    cmd_args args;
    int rc = cmd_parse(&info, argc, argv, &args);
    if (rc != CMD_RUN)
        return rc;
    if (args.nop != 2)
        return cmd_usage_error(&info, "expected two robot files, got %d arguments", args.nop);
    const char *a = args.op[0], *b = args.op[1];
    const double tol = args.tol;

    sid_error err = { 0 };
    sid_model *ma = NULL, *mb = NULL;
    double *ta = NULL, *tb = NULL;
    diff_row *row = NULL;
    rc = EXIT_OK;
    if (robot_model(a, &ma, &ta, NULL, &err) || robot_model(b, &mb, &tb, NULL, &err)) {
        rc = cli_fail(&err);
        goto done;
    }
    row = malloc((size_t)(sid_model_nparam(ma) + sid_model_nparam(mb) + 1) * sizeof *row);
    if (!row) {
        cli_error("out of memory");
        rc = EXIT_INPUT;
        goto done;
    }
    int n = compare(ma, ta, mb, tb, row), nexceed = 0;
    for (int k = 0; k < n && tol >= 0; k++) {
        row[k].exceeds = row[k].kind != CHANGED || fabs(rel_change(&row[k])) > tol;
        nexceed += row[k].exceeds;
    }
    if (args.json)
        rc = print_json(a, b, row, n, tol);
    else
        print_table(row, n);
    if (rc == EXIT_OK && nexceed) {
        cli_error("diff: %d parameter%s changed by more than --tol %g", nexceed,
                  nexceed == 1 ? "" : "s", tol);
        rc = EXIT_GATE;
    }
done:
    free(row);
    sid_free(ta);
    sid_free(tb);
    sid_model_free(ma);
    sid_model_free(mb);
    return rc;
}
