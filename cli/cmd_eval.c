/* cmd_eval.c — `sysid eval ROBOT.json LOG.csv... [--json]`: how well a robot replays logs.
 *
 * The loss `sysid fit` minimises and the per-coordinate root-mean-square error of positions
 * and velocities, over the windows of the fit spec, every window started from the logged state.
 * RMSE is unscaled and unweighted, in the coordinates' own units (rad or m, rad/s or m/s), over
 * all logs together and for each log on its own. `--window 0` replays each log in one piece,
 * which is the honest test of a model meant to run open loop.
 * Windows lie on the fixed grid of core/problem/problem.c, the same as the fit's (docs/formats.md,
 * "Windows and the scored samples"): a trailing window shorter than half a window is not scored.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cmd.h"
#include "coords.h"
#include "diag.h"
#include "numfmt.h"
#include "robot_json.h"
#include "stepchoice.h"
#include "traj_csv.h"

static const cmd_info info = {
    "eval", CMD_EVAL, "sysid eval ROBOT.json LOG.csv... [-c SPEC.json] [--window S] "
                      "[--integrator " CMD_INTEGRATORS "] [--substeps N] [--max-dt S] "
                      "[--columns MAP] [--scale MAP] [--contact " CMD_CONTACTS "] [--json]",
    "Replay the logs on ROBOT.json window by window (each window starts from the\n"
    "logged state and replays the logged commands) and report the loss `sysid fit`\n"
    "minimises and the root-mean-square error of each joint's position and velocity\n"
    "(of each coordinate of a free joint: base.x .. base.qz, base.vx .. base.wz),\n"
    "over all logs and per log. RMSE is in the coordinate's units (rad or m; rad/s or\n"
    "m/s; 1 for quaternion components), unscaled and unweighted; a log without\n"
    "velocities has no velocity RMSE. Window i covers (t0 + iW, t0 + (i+1)W] of each\n"
    "log, as in `sysid fit`; a trailing window covering less than W/2 is dropped and\n"
    "its samples not scored. --window 0 replays each log in one piece. Of a\n"
    "fit spec (-c), the window, simulation, weights and log column settings are used.\n",
    "JSON: {\"loss\", \"nres\", \"windows\",\n"
    "       \"rmse\": {\"q\": {COORD: X}, \"qd\": {COORD: X or null}},\n"
    "       \"logs\": [{\"file\", \"samples\", \"duration\", \"windows\",\n"
    "                 \"rmse\": {\"q\": {...}, \"qd\": {...}}}]}\n\n"
    "Windows start from the logged states even when the spec says \"start\": \"fitted\".\n\n"
    "Exit status: 0 success, 2 invalid input, 3 the simulation diverged.\n",
};

typedef struct {
    int nwin, nres;
    double loss;
    double *rmse_q, *rmse_qd;    /* (nq), (nv) */
    int has_qd;
} eval_result;

/* Loss and RMSE of logs[0..nlog-1] together (loss only when want_loss). */
static sid_status evaluate(const sid_model *m, const double *theta, sid_traj *const *logs, int nlog,
                           const sid_loss_opts *lo, int want_loss, eval_result *r, sid_error *err)
{
    sid_problem *p = NULL;
    sid_status s = sid_problem_create(&p, m, (const sid_traj *const *)logs, nlog, lo, err);
    if (s == SID_OK && want_loss)
        s = sid_problem_loss(p, theta, NULL, &r->loss, NULL, NULL, err);
    if (s == SID_OK)
        s = sid_problem_rmse(p, theta, NULL, r->rmse_q, r->rmse_qd, err);
    if (s == SID_OK) {
        r->nwin = sid_problem_nwindows(p);
        r->nres = sid_problem_nresiduals(p);
    }
    r->has_qd = 0;
    for (int l = 0; l < nlog; l++)
        r->has_qd |= logs[l]->qd != NULL;
    sid_problem_free(p);
    return s;
}

static cJSON *rmse_json(const sid_model *m, const eval_result *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *q = cJSON_AddObjectToObject(o, "q"), *qd = cJSON_AddObjectToObject(o, "qd");
    for (int i = 0; i < sid_model_nq(m); i++)
        cJSON_AddItemToObject(q, sid_model_q_name(m, i), numfmt_json(r->rmse_q[i]));
    for (int i = 0; i < sid_model_nv(m); i++)
        cJSON_AddItemToObject(qd, sid_model_v_name(m, i),
                              r->has_qd ? numfmt_json(r->rmse_qd[i]) : cJSON_CreateNull());
    return o;
}

static int print_json(const sid_model *m, const eval_result *all, const eval_result *per,
                      char *const *files, sid_traj *const *logs, int nlog)
{
    cJSON *out = cJSON_CreateObject();
    cJSON_AddItemToObject(out, "loss", numfmt_json(all->loss));
    cJSON_AddNumberToObject(out, "nres", all->nres);
    cJSON_AddNumberToObject(out, "windows", all->nwin);
    cJSON_AddItemToObject(out, "rmse", rmse_json(m, all));
    cJSON *arr = cJSON_AddArrayToObject(out, "logs");
    for (int l = 0; l < nlog; l++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "file", files[l]);
        cJSON_AddNumberToObject(o, "samples", logs[l]->n);
        cJSON_AddItemToObject(o, "duration", numfmt_json(logs[l]->t[logs[l]->n - 1] - logs[l]->t[0]));
        cJSON_AddNumberToObject(o, "windows", per[l].nwin);
        cJSON_AddItemToObject(o, "rmse", rmse_json(m, &per[l]));
        cJSON_AddItemToArray(arr, o);
    }
    return cmd_print_json(out);
}

/* One row per coordinate (coords.h); a cell the row has no coordinate for stays blank. */
static void print_rmse_table(const eval_result *r, const coords_row *rows, int nrow, int w)
{
    printf("%-*s  %-12s  %-12s  %s\n", w, "joint", "rmse_q", "rmse_qd", "unit");
    for (int k = 0; k < nrow; k++) {
        char q[32] = "", qd[32] = "";
        if (rows[k].q >= 0)
            snprintf(q, sizeof q, "%.6g", r->rmse_q[rows[k].q]);
        if (rows[k].v >= 0 && r->has_qd)
            snprintf(qd, sizeof qd, "%.6g", r->rmse_qd[rows[k].v]);
        else if (rows[k].v >= 0)
            snprintf(qd, sizeof qd, "-");
        printf("%-*s  %-12s  %-12s  %s\n", w, rows[k].name, q, qd, rows[k].unit);
    }
}

static int print_table(const sid_model *m, const eval_result *all, const eval_result *per,
                       char *const *files, int nlog)
{
    int nrow, w;
    coords_row *rows = coords_table(m, &nrow, &w);
    if (!rows) {
        cli_error("out of memory");
        return EXIT_INPUT;
    }
    printf("loss     %.17g\nnres     %d\nwindows  %d\n\n", all->loss, all->nres, all->nwin);
    print_rmse_table(all, rows, nrow, w);
    for (int l = 0; l < nlog && nlog > 1; l++) {
        printf("\n%s (%d windows)\n", files[l], per[l].nwin);
        print_rmse_table(&per[l], rows, nrow, w);
    }
    free(rows);
    return EXIT_OK;
}

int cmd_eval(int argc, char **argv)
{
    cmd_args a;
    int rc = cmd_parse(&info, argc, argv, &a);
    if (rc != CMD_RUN)
        return rc;
    if (a.nop < 2)
        return cmd_usage_error(&info, "expected a robot file and at least one log file, got %d "
                               "arguments", a.nop);
    const char *robot = a.op[0];
    char *const *files = a.op + 1;
    int nlog = a.nop - 1;

    sid_error err = { 0 };
    fitspec spec;
    sid_model *m = NULL;
    double *theta = NULL, *buf = NULL;
    sid_traj **logs = calloc((size_t)nlog, sizeof *logs);
    eval_result *res = calloc((size_t)nlog + 1, sizeof *res);
    rc = EXIT_OK;
    if (cmd_spec_build(&spec, &a.spec, &err) || cmd_spec_model(&spec, robot, &m, &theta, NULL, &err)) {
        rc = cli_fail(&err);
        goto done;
    }
    if (sid_model_check_theta(m, theta, &err) != SID_OK) {
        sid_error_prefix(&err, "%s", robot);
        rc = cli_fail(&err);
        goto done;
    }
    int nq = sid_model_nq(m), nv = sid_model_nv(m);
    buf = malloc((size_t)(nlog + 1) * (size_t)(nq + nv + 1) * sizeof *buf);
    if (!logs || !res || !buf) {
        cli_error("out of memory");
        rc = EXIT_INPUT;
        goto done;
    }
    for (int l = 0; l < nlog; l++)
        if (traj_csv_load(files[l], m, &spec.columns, &logs[l], &err)) {
            rc = cli_fail(&err);
            goto done;
        }
    fitspec_choose_start_velocity(&spec, m, logs, (const char *const *)files, nlog);
    sid_step_choice step;
    if (stepchoice_apply(&spec, m, theta, logs, (const char *const *)files, nlog, 1, &step, &err)) {
        sid_error_prefix(&err, "%s: choosing the simulation step", robot);
        rc = cli_fail(&err);
        goto done;
    }
    sid_loss_opts lo;
    fitspec_loss_opts(&spec, &lo);
    if (lo.estimate_start)
        cli_warn("eval: windows start from the logged states (the spec's fitted start states "
                 "are not known here)");
    lo.estimate_start = 0;
    /* res[0]: all logs together; res[1 + l]: log l alone (its loss is not reported: its
     * residual scales would come from that log only, so it would not add up to the total). */
    for (int l = 0; l <= nlog; l++) {
        res[l].rmse_q = buf + (size_t)l * (size_t)(nq + nv + 1);
        res[l].rmse_qd = res[l].rmse_q + nq;
    }
    if (evaluate(m, theta, logs, nlog, &lo, 1, &res[0], &err) != SID_OK) {
        sid_error_prefix(&err, "%s", robot);
        rc = cli_fail(&err);
        goto done;
    }
    for (int l = 0; l < nlog && nlog > 1; l++)
        if (evaluate(m, theta, &logs[l], 1, &lo, 0, &res[1 + l], &err) != SID_OK) {
            sid_error_prefix(&err, "%s: %s", robot, files[l]);
            rc = cli_fail(&err);
            goto done;
        }
    if (nlog == 1) {
        res[1] = res[0];
    }
    if (a.json)
        rc = print_json(m, &res[0], &res[1], files, logs, nlog);
    else
        rc = print_table(m, &res[0], &res[1], files, nlog);
done:
    free(buf);
    free(res);
    if (logs)
        for (int l = 0; l < nlog; l++)
            sid_traj_free(logs[l]);
    free(logs);
    sid_free(theta);
    sid_model_free(m);
    fitspec_free(&spec);
    return rc;
}
