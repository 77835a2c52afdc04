/* cmd_grad.c — `sysid grad ROBOT.json LOG.csv... [--check]`: the loss and its gradient.
 *
 * Evaluates the fit spec's windowed loss at the robot's values, from the logged start states,
 * and its gradient with respect to every free parameter by core's adjoint. With --check each
 * component is compared with a finite difference of the loss, so that a wrong derivative in
 * the simulator shows up as a named parameter rather than as a fit that stalls.
 * With --wrt commands the gradient is with respect to the logged commands instead, a CSV
 * (grad_commands.c).
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "atomic.h"
#include "cmd.h"
#include "diag.h"
#include "grad_commands.h"
#include "numfmt.h"
#include "robot_json.h"
#include "stepchoice.h"
#include "traj_csv.h"

/* A mixed error above this fails --check (exit 1); NUMBER_TEXT prints it as written here. */
#define CHECK_TOL 1e-4
#define TEXT(x) #x
#define NUMBER_TEXT(x) TEXT(x)

static const cmd_info info = {
    "grad", CMD_GRAD, "sysid grad ROBOT.json LOG.csv... [-c SPEC.json] [--free GLOB...] "
                      "[--window S] [--integrator " CMD_INTEGRATORS "] [--check] [--json]\n"
                      "       sysid grad ROBOT.json LOG.csv... --wrt commands [-o FILE] [--check]",
    "Evaluate the loss of ROBOT.json on the logs (as `sysid fit` defines it: windows\n"
    "started from the logged states, residuals scaled per joint and weighted) and its\n"
    "gradient with respect to each free parameter, computed by the adjoint method.\n"
    "Prints a table of name, value and gradient on stdout. The free parameters are\n"
    "the spec's and --free's, or without either every parameter ('*'). grad takes\n"
    "fit's fit-spec options; those of the optimizer (--bounds, --max-iter,\n"
    "--ftol-rel, --time-limit, --smoothing) do not change the gradient (always the\n"
    "adjoint one).\n",
    "--check computes a fourth-order central finite difference of the loss for each\n"
    "free parameter (step 1e-6*max(1,|theta|)) and compares it with the gradient: the\n"
    "table gains fd, rel_err = |a-b|/max(|a|,|b|) and check, ok or FAIL. A component\n"
    "fails when |a-b| > atol + " NUMBER_TEXT(CHECK_TOL) " (|a|+|b|+atol), atol = 1e-9*max|gradient| (MuJoCo's\n"
    "test), so that components far below the gradient's scale compare absolutely;\n"
    "the header names tol and atol; max_rel_err is the largest rel_err of the\n"
    "components above atol.\n\n"
    "JSON: {\"loss\", \"nres\", \"windows\", \"gradient\": {NAME: VALUE}, and with --check\n"
    "\"check\": {NAME: {\"analytic\", \"fd\", \"rel_err\", \"pass\"}}, \"max_rel_err\", \"tol\",\n"
    "\"atol\", \"failed\" (how many components failed)}\n\n"
    "Windows always start from the logged states: grad has no fitted start states to\n"
    "differentiate at, so with \"start\": \"fitted\" (or --start fitted) it still uses\n"
    "the logged ones, and says so on stderr.\n"
    "The time of one loss-and-gradient and of one loss-only evaluation go to stderr.\n\n"
    "--wrt commands: the gradient of the same loss with respect to every logged\n"
    "command instead, for trajectory optimisation: one CSV for all logs, on stdout or\n"
    "-o FILE, with columns log (1 for the first log operand, 2 for the next...), t\n"
    "(seconds from the log's first sample) and u.COORD for each coordinate with a\n"
    "motor, as the logs name them; one row per sample, d loss / d u in SI units of the\n"
    "command (N*m, N, A, V; a servo's reference in rad, m, rad/s or m/s). A command\n"
    "is held over its sample interval; a delayed motor's command is interpolated, so\n"
    "its gradient is shared by the two samples read. Samples that no window reads\n"
    "(a dropped trailing window, a log's last sample) get 0. With --check, the 20\n"
    "largest entries and 20 others drawn with a fixed seed are compared with a\n"
    "five-point central difference of the loss in that command (step\n"
    "1e-6*max(1,|u|)), by the same mixed error and tolerance; a summary and every\n"
    "failure go to stderr, the CSV is still written. Not with --json, nor with\n"
    "--free, --free-only or --fix (no parameters are differentiated).\n\n"
    "Exit status: 0 success, 1 a component failed --check, 2 invalid input, 3 the\n"
    "simulation diverged.\n",
};

/* Loss (and gradient, if grad) at theta, and the fastest of a few evaluations in *sec: the
 * first one also pays for cold caches and page faults. */
static sid_status timed_loss(sid_problem *p, const double *theta, double *loss, double *grad,
                             double *sec, sid_error *err)
{
    double total = 0;
    *sec = HUGE_VAL;
    for (int rep = 0; rep < 3 && total < 0.5; rep++) {
        double t0 = sid_clock_seconds();
        sid_status s = sid_problem_loss(p, theta, NULL, loss, grad, NULL, err);
        if (s != SID_OK)
            return s;
        double dt = sid_clock_seconds() - t0;
        total += dt;
        *sec = fmin(*sec, dt);
    }
    return SID_OK;
}

/* Loss at theta with theta[i] moved by d (restored on return). */
static sid_status loss_at(sid_problem *p, double *theta, int i, double d, double *f, sid_error *err)
{
    double t0 = theta[i];
    theta[i] = t0 + d;
    sid_status s = sid_problem_loss(p, theta, NULL, f, NULL, NULL, err);
    theta[i] = t0;
    return s;
}

typedef struct {
    double fd;     /* the finite difference */
    double rel;    /* |g - fd| / max(|g|, |fd|): the relative error, as it is */
    int pass;      /* within CHECK_TOL by the mixed error (check_gradient) */
} check_row;

typedef struct {
    double atol;       /* absolute tolerance of the mixed error */
    double max_rel;    /* largest rel of the components above atol (those compared relatively) */
    int nfail, worst;  /* failed rows; the failed one with the largest rel */
} check_summary;

/* Fourth-order central difference of the loss for each free parameter, and its relative
 * error against the adjoint gradient g. The plain central difference has error h^2 f'''/6,
 * which swamps the derivative of a small parameter (an inertia of 1e-4 kg m^2 with h = 1e-6);
 * the five-point stencil's error is O(h^4):
 *     f' = (8 (f(+h) - f(-h)) - (f(+2h) - f(-2h))) / (12 h).
 * A component passes when the mixed error max(0, |g - fd| - atol) / (|g| + |fd| + atol) is
 * within CHECK_TOL: components far below the gradient's scale compare absolutely (atol =
 * 1e-9 max|g|), as in MuJoCo's derivative tests. The mixed error rounds whatever is within
 * atol to 0, so the relative error reported is the plain one. */
static sid_status check_gradient(sid_problem *p, double *theta, const fitspec_selection *sel,
                                 const double *g, check_row *row, check_summary *sum, sid_error *err)
{
    double gmax = 0;
    for (int k = 0; k < sel->n; k++)
        gmax = fmax(gmax, fabs(g[k]));
    *sum = (check_summary){ 1e-9 * gmax, 0, 0, -1 };
    for (int k = 0; k < sel->n; k++) {
        int i = sel->idx[k];
        double h = 1e-6 * fmax(1.0, fabs(theta[i])), f[4];
        const double d[4] = { h, -h, 2 * h, -2 * h };
        for (int j = 0; j < 4; j++)
            if (loss_at(p, theta, i, d[j], &f[j], err) != SID_OK) {
                sid_error_prefix(err, "--check: %s moved by %g", sid_model_param(sid_problem_model(p), i)->name, d[j]);
                return err->status;
            }
        double fd = (8 * (f[0] - f[1]) - (f[2] - f[3])) / (12 * h);
        double diff = fabs(g[k] - fd), den = fabs(g[k]) + fabs(fd) + sum->atol;
        double mixed = den > 0 ? fmax(0, diff - sum->atol) / den : 0;
        row[k] = (check_row){ fd, diff / fmax(fmax(fabs(g[k]), fabs(fd)), DBL_MIN), mixed <= CHECK_TOL };
        /* a component within atol of zero on both sides is compared absolutely: its relative
         * error (often 1: exactly 0 against round-off) says nothing about the derivative */
        if (fmax(fabs(g[k]), fabs(fd)) > sum->atol)
            sum->max_rel = fmax(sum->max_rel, row[k].rel);
        if (!row[k].pass && (sum->nfail++ == 0 || row[k].rel > row[sum->worst].rel))
            sum->worst = k;
    }
    return SID_OK;
}

static int print_json(const sid_model *m, const fitspec_selection *sel, double loss, int nres,
                      int nwin, const double *g, const check_row *row, const check_summary *sum)
{
    cJSON *out = cJSON_CreateObject();
    cJSON_AddItemToObject(out, "loss", numfmt_json(loss));
    cJSON_AddNumberToObject(out, "nres", nres);
    cJSON_AddNumberToObject(out, "windows", nwin);
    cJSON *go = cJSON_AddObjectToObject(out, "gradient");
    for (int k = 0; k < sel->n; k++)
        cJSON_AddItemToObject(go, sid_model_param(m, sel->idx[k])->name, numfmt_json(g[k]));
    if (row) {
        cJSON *co = cJSON_AddObjectToObject(out, "check");
        for (int k = 0; k < sel->n; k++) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddItemToObject(o, "analytic", numfmt_json(g[k]));
            cJSON_AddItemToObject(o, "fd", numfmt_json(row[k].fd));
            cJSON_AddItemToObject(o, "rel_err", numfmt_json(row[k].rel));
            cJSON_AddBoolToObject(o, "pass", row[k].pass);
            cJSON_AddItemToObject(co, sid_model_param(m, sel->idx[k])->name, o);
        }
        cJSON_AddItemToObject(out, "max_rel_err", numfmt_json(sum->max_rel));
        cJSON_AddItemToObject(out, "tol", numfmt_json(CHECK_TOL));
        cJSON_AddItemToObject(out, "atol", numfmt_json(sum->atol));
        cJSON_AddNumberToObject(out, "failed", sum->nfail);
    }
    return cmd_print_json(out);
}

static void print_table(const sid_model *m, const double *theta, const fitspec_selection *sel,
                        double loss, int nres, int nwin, const double *g, const check_row *row,
                        const check_summary *sum)
{
    int w = 4;
    for (int k = 0; k < sel->n; k++) {
        int n = (int)strlen(sid_model_param(m, sel->idx[k])->name);
        w = n > w ? n : w;
    }
    printf("loss     %.17g\nnres     %d\nwindows  %d\n", loss, nres, nwin);
    if (row)
        printf("max_rel_err  %.3g\nfailed       %d of %d\n", sum->max_rel, sum->nfail, sel->n);
    printf("\n%-*s  %-24s  %-24s", w, "name", "value", "gradient");
    if (row)
        printf("  %-24s  %-9s  check (tol " NUMBER_TEXT(CHECK_TOL) ", atol %.3g)", "fd", "rel_err", sum->atol);
    putchar('\n');
    for (int k = 0; k < sel->n; k++) {
        int i = sel->idx[k];
        char v[NUMFMT_LEN];
        numfmt(v, theta[i]);
        printf("%-*s  %-24s  %-24.17g", w, sid_model_param(m, i)->name, v, g[k]);
        if (row)
            printf("  %-24.17g  %-9.3g  %s", row[k].fd, row[k].rel, row[k].pass ? "ok" : "FAIL");
        putchar('\n');
    }
}

int cmd_grad(int argc, char **argv)
{
    cmd_args a;
    int rc = cmd_parse(&info, argc, argv, &a);
    if (rc != CMD_RUN)
        return rc;
    if (a.nop < 2)
        return cmd_usage_error(&info, "expected a robot file and at least one log file, got %d "
                               "arguments", a.nop);
    const char *robot = a.op[0];
    const int nlog = a.nop - 1, check = a.check;
    int wrt_commands = 0;
    if (a.wrt && !(wrt_commands = strcmp(a.wrt, "commands") == 0) && strcmp(a.wrt, "params") != 0)
        return cmd_usage_error(&info, "--wrt: expected params or commands, got '%s'", a.wrt);
    if (a.out && !wrt_commands)
        return cmd_usage_error(&info, "-o writes the command gradient (--wrt commands); the parameter "
                               "gradient is printed on stdout");
    if (wrt_commands && a.json)
        return cmd_usage_error(&info, "--json prints the parameter gradient; --wrt commands writes a CSV");
    for (int i = 0; wrt_commands && i < a.spec.n; i++)
        if (!strcmp(a.spec.flag[i], "--free") || !strcmp(a.spec.flag[i], "--free-only") ||
            !strcmp(a.spec.flag[i], "--fix"))
            return cmd_usage_error(&info, "%s chooses parameters; --wrt commands differentiates with respect to "
                                   "the logged commands", a.spec.flag[i]);
    for (int i = 0; a.out && strcmp(a.out, "-") != 0 && i < a.nop; i++)
        if (atomic_same_file(a.out, a.op[i]))
            return cmd_usage_error(&info, "-o %s would overwrite the input %s", a.out, a.op[i]);

    sid_error err = { 0 };
    fitspec spec;
    fitspec_selection sel = { 0 };
    sid_model *m = NULL;
    double *theta = NULL, *grad = NULL, *g = NULL;
    sid_traj **logs = calloc((size_t)nlog, sizeof *logs);
    sid_problem *p = NULL;
    check_row *row = NULL;
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
    /* Without a spec's "free" or a --free, every parameter: grad is for inspecting. */
    if (!spec.free_given && fitspec_apply_flag(&spec, "--free", "*", &err)) {
        rc = cli_fail(&err);
        goto done;
    }
    if (fitspec_select(&spec, m, theta, &sel, &err)) {
        rc = cli_fail(&err);
        goto done;
    }
    if (!logs) {
        cli_error("out of memory");
        rc = EXIT_INPUT;
        goto done;
    }
    for (int l = 0; l < nlog; l++)
        if (traj_csv_load(a.op[1 + l], m, &spec.columns, &logs[l], &err)) {
            rc = cli_fail(&err);
            goto done;
        }
    fitspec_choose_start_velocity(&spec, m, logs, (const char *const *)a.op + 1, nlog);
    sid_step_choice step;
    if (stepchoice_apply(&spec, m, theta, logs, (const char *const *)a.op + 1, nlog, 1, &step, &err)) {
        sid_error_prefix(&err, "%s: choosing the simulation step", robot);
        rc = cli_fail(&err);
        goto done;
    }
    sid_loss_opts lo;
    fitspec_loss_opts(&spec, &lo);
    if (lo.estimate_start)
        cli_warn("grad: windows start from the logged states (there are no fitted start "
                 "states to differentiate at)");
    lo.estimate_start = 0;
    if (sid_problem_create(&p, m, (const sid_traj *const *)logs, nlog, &lo, &err) != SID_OK) {
        rc = cli_fail(&err);
        goto done;
    }
    if (wrt_commands) {
        rc = grad_commands_run(p, theta, logs, nlog, a.out, check);
        goto done;
    }
    int np = sid_model_nparam(m);
    grad = malloc((size_t)np * sizeof *grad);
    g = malloc((size_t)sel.n * sizeof *g);
    row = check ? malloc((size_t)sel.n * sizeof *row) : NULL;
    if (!grad || !g || (check && !row)) {
        cli_error("out of memory");
        rc = EXIT_INPUT;
        goto done;
    }
    double loss, loss_only, t_grad, t_loss;
    if (timed_loss(p, theta, &loss, grad, &t_grad, &err) != SID_OK ||
        timed_loss(p, theta, &loss_only, NULL, &t_loss, &err) != SID_OK) {
        sid_error_prefix(&err, "%s", robot);
        rc = cli_fail(&err);
        goto done;
    }
    if (!cli_quiet)
        fprintf(stderr, "sysid: grad: loss and gradient in %.3g ms, loss alone in %.3g ms "
                "(%d windows, %d residuals)\n", 1e3 * t_grad, 1e3 * t_loss,
                sid_problem_nwindows(p), sid_problem_nresiduals(p));
    if (check && loss < 1e-20)
        cli_warn("grad: the loss (%g) is at round-off level: the model replays the logs "
                 "exactly, its gradient is round-off noise, and --check compares noise",
                 loss);
    for (int k = 0; k < sel.n; k++)
        g[k] = grad[sel.idx[k]];
    check_summary sum = { 0 };
    if (check && check_gradient(p, theta, &sel, g, row, &sum, &err) != SID_OK) {
        sid_error_prefix(&err, "%s", robot);
        rc = cli_fail(&err);
        goto done;
    }
    if (a.json)
        rc = print_json(m, &sel, loss, sid_problem_nresiduals(p), sid_problem_nwindows(p), g, row, &sum);
    else
        print_table(m, theta, &sel, loss, sid_problem_nresiduals(p), sid_problem_nwindows(p), g, row, &sum);
    if (rc == EXIT_OK && sum.nfail) {
        cli_error("grad --check: %s: relative error %.3g of the gradient exceeds " NUMBER_TEXT(CHECK_TOL)
                  " (atol %.3g); %d of %d components fail", sid_model_param(m, sel.idx[sum.worst])->name,
                  row[sum.worst].rel, sum.atol, sum.nfail, sel.n);
        rc = EXIT_GATE;
    }
done:
    free(row);
    free(g);
    free(grad);
    sid_problem_free(p);
    if (logs)
        for (int l = 0; l < nlog; l++)
            sid_traj_free(logs[l]);
    free(logs);
    fitspec_selection_free(&sel);
    sid_free(theta);
    sid_model_free(m);
    fitspec_free(&spec);
    return rc;
}
