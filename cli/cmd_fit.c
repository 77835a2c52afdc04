/* cmd_fit.c — `sysid fit ROBOT.json LOG.csv...`: identify parameters from logs.
 *
 * One parameter vector is fitted to every log at once (core's sid_fit: Levenberg-Marquardt or
 * NLopt L-BFGS, whichever pays, or the one --optimizer names, on scaled parameters, window
 * start states fitted too unless --start logged). Then the fitted
 * model is judged on predictions from the logged start states — the fitted logs and any
 * --validate logs, before and after, so that the two are comparable — and the exact
 * Jacobian says what the data determine (sid_problem_covariance). That sequence is io's
 * fit_run (pipeline/fit_run.h), the library's sid_io_fit_run too; this file loads, shows its
 * progress, handles signals, prints the table and writes the files.
 *
 * Outputs are complete or absent: nothing is written until everything has been computed
 * and checked finite; each file is written atomically. Ctrl-C stops the optimizer at its
 * next evaluation and the best point so far is written (exit 130); a second Ctrl-C ends the
 * program at once.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic.h"
#include "cmd.h"
#include "html_page.h"
#include "diag.h"
#include "fit_run.h"
#include "jsonfile.h"
#include "progress.h"
#include "readfile.h"
#include "report.h"
#include "robot_json.h"
#include "robot_load.h"
#include "sha256.h"
#include "traj_csv.h"

static const cmd_info info = {
    "fit", CMD_FIT,
    "sysid fit ROBOT.json LOG.csv... [-c SPEC.json] [-o FITTED.json | --in-place] "
    "[--report FILE] [--json] [--validate LOG.csv]... [--max-rmse X] [--max-loss X] [-q] "
    "[--free GLOB]... [--bounds B]... [--window S|auto] [--start fitted|logged] [--max-iter N] ...",
    "Fit the free parameters of ROBOT.json to one or more logs (one parameter vector for\n"
    "all of them) by gradient descent through the simulator (Levenberg-Marquardt on\n"
    "the exact Jacobian where it pays, else NLopt L-BFGS: --optimizer), then report\n"
    "what changed, how well the data determine it, and how well the fitted model\n"
    "predicts the logs. Progress and a summary table go to stderr.\n\n"
    "The output is the fitted robot: ROBOT.json with the fitted values in place, in\n"
    "the file -o names, over ROBOT.json with --in-place, or on stdout (without -o, or\n"
    "-o -; with --json stdout has the report and the robot needs -o). Without \"free\"\n"
    "in a spec or --free, the fit frees the masses of moving links, the armature,\n"
    "viscous and Coulomb friction of moving joints and the motor constants but the\n"
    "first motor's kt (the unit of torque: motion alone cannot tell a torque scale\n"
    "from the masses). Outputs are written atomically, and only if the fit produced\n"
    "a finite result.\n"
    "Window start states are fitted with the parameters unless --start logged.\n",
    "Report: inputs with their SHA-256; settings; \"stop\" (converged, max_iter,\n"
    "time_limit, interrupted, roundoff_limited, failure, no_progress: exit 1),\n"
    "iterations, evaluations,\n"
    "rejected (with lm also \"jacobians\"); \"gradient\" (\"adjoint\", \"jacobian\" with lm,\n"
    "or the smoothing settings); \"contact_model\"\n"
    "(robots with contact); \"loss\" {before, after, and with smoothing smoothed\n"
    "{before, after}}; \"prediction\" {fit, validation}: loss and\n"
    "per-joint RMSE of q and qd before and after; \"parameters\": name, unit, nominal,\n"
    "fitted, change, relative_change, bounds, stderr, relative_stderr, ci95 (fitted +-\n"
    "1.96 stderr), stderr_robust and ci95_robust (the sandwich over windows, right for\n"
    "correlated residuals), identifiable, at_bound, poorly_determined (stderr > 50% of\n"
    "the value); \"identifiability\": null directions (combinations the data do not\n"
    "determine); \"diagnostics\": per residual channel lag-1 autocorrelation, RMS and the\n"
    "log's own noise level, verdict \"ok\" or \"model_mismatch\" (then the table shows\n"
    "the robust intervals and a warning says why);\n"
    "\"gates\"; \"spec_flags\" (but --threads) and \"trace\" (loss and |grad| per\n"
    "iteration), what `sysid report` needs to rebuild the --html page; \"timing\"\n"
    "(the only part that differs between identical runs).\n"
    "A parameter the data do not determine has \"stderr\": null, never a number.\n"
    "--json prints the report on stdout.\n\n"
    "Exit status: 0 success (the fit converged); 1 finished, but the fit did not\n"
    "converge (\"stop\" other than \"converged\": max_iter, time_limit,\n"
    "roundoff_limited, failure, no_progress; the best point is written) or\n"
    "--max-rmse or --max-loss failed; 2 usage error or invalid input (nothing written); 3 numerical failure\n"
    "with no usable result, e.g. the simulation diverges at the nominal parameters\n"
    "(nothing written); 130, 143, 129 interrupted by SIGINT (Ctrl-C), SIGTERM or SIGHUP\n"
    "(the best parameters so far are written, the report says \"stop\": \"interrupted\"\n"
    "when the optimizer was stopped; a second signal ends the program at once).\n",
};

/* ---- signals ----------------------------------------------------------------------------- */

/* SIGINT, SIGTERM and SIGHUP stop the fit at its next evaluation; the best point so far is
 * written and the exit status is 128 + the signal's number (130, 143, 129). A second one ends
 * the program at once, as the user asks. The fit's hooks (sid_io_fit_hooks.interrupt) point
 * at `interrupted` (nonzero: the signal's number; an int is what glibc's sig_atomic_t is). */
static volatile int interrupted = 0;

cmd_fit_embedding cmd_fit_embed;

int cmd_fit_signal(void) { return interrupted; }
static const int stop_signal[3] = { SIGINT, SIGTERM, SIGHUP };
static struct sigaction old_action[3];
static int caught;

static void release_signals(void)
{
    for (int k = 0; caught && k < 3; k++)
        sigaction(stop_signal[k], &old_action[k], NULL);
    caught = 0;
}

static void on_signal(int sig)
{
    if (interrupted) {
        release_signals();
        raise(sig);
        return;
    }
    interrupted = sig;
}

static void catch_signals(void)
{
    if (caught)
        return;   /* once: "window": "auto" runs a fit per fold and candidate before the fit */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (int k = 0; k < 3; k++)
        sigaction(stop_signal[k], &sa, &old_action[k]);
    caught = 1;
}

/* ---- progress ---------------------------------------------------------------------------- */

/* The pipeline's phases (fit_run.h) as progress lines; shown unless -q. Signals are caught
 * when the fit (with "window": "auto", the selection) begins and until everything is written: a signal then stops nothing half-way,
 * and one while loading ends the program at once. */
typedef struct {
    progress pg;
    progress_mode mode;
} fit_progress;

static void on_progress(void *ctx, const sid_io_progress *p)
{
    fit_progress *fp = ctx;
    progress *pg = &fp->pg;
    if (p->event == SID_IO_PROGRESS_BEGIN) {
        progress_begin(pg, fp->mode);
        if (p->phase == SID_IO_PHASE_FIT)
            catch_signals();
    } else if (p->event == SID_IO_PROGRESS_END) {
        progress_end(pg);
    } else if (p->phase == SID_IO_PHASE_FIT) {
        progress_update(pg, "iter %5d  loss %-13.6e  |grad| %-10.3e  %7.2f s  %6.1f it/s", p->step, p->loss,
                        p->gnorm, p->seconds, p->seconds > 0 ? p->step / p->seconds : 0.0);
    } else {
        progress_update(pg, "covariance  window %d of %d  %7.2f s", p->step, p->total, p->seconds);
    }
}

/* ---- helpers ----------------------------------------------------------------------------- */

/* Can an atomic write create path (a temporary file next to it, then a rename)? Checked
 * before the fit, so that a mistyped directory costs no fitting time. */
static int writable(const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return 0;
    const char *slash = strrchr(path, '/');
    char dir[4096];
    if (!slash)
        strcpy(dir, ".");
    else if ((size_t)(slash - path) + 2 > sizeof dir)
        return 0;
    else {
        memcpy(dir, path, (size_t)(slash - path) + 1);
        dir[slash - path + 1] = '\0';
    }
    return stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && access(dir, W_OK | X_OK) == 0;
}

static int hash_input(report_input *in, const char *path, sid_error *err)
{
    in->path = path;
    /* the digest of what the loader read: a pipe cannot be read twice */
    if (readfile_sha256(path, in->sha256))
        return 0;
    return sha256_file(path, in->sha256, err);
}

static int is_stdout(const char *path) { return path && strcmp(path, "-") == 0; }

/* Every output or none: each file is written to its temporary file and finished (where a
 * full disk shows), then stdout gets its one output (the fitted robot or the report), and
 * only then are the files renamed into place. Path "-" is stdout. */
static int write_outputs(const char *robot_out, const cJSON *fitted, const char *report_out, const cJSON *rep,
                         int json)
{
    sid_error err = { 0 };
    atomic_file af[2];
    const char *path[2] = { robot_out, report_out };
    const cJSON *content[2] = { fitted, rep }, *to_stdout = json ? rep : NULL;
    int n = 0, rc = EXIT_OK;
    for (int k = 0; k < 2 && rc == EXIT_OK; k++) {
        if (is_stdout(path[k]))
            to_stdout = content[k];
        if (!path[k] || is_stdout(path[k]))
            continue;
        if (atomic_open(&af[n], path[k], &err) != SID_OK) {
            rc = cli_fail(&err);
            break;
        }
        if (jsonfile_write(af[n].f, content[k]) != 0) {
            atomic_abort(&af[n]);
            cli_error("%s: cannot write (out of memory or disk)", path[k]);
            rc = EXIT_INPUT;
            break;
        }
        if (atomic_finish(&af[n], &err) != SID_OK) {
            rc = cli_fail(&err);
            break;
        }
        n++;
    }
    if (rc == EXIT_OK && to_stdout && (jsonfile_write(stdout, to_stdout) != 0 || fflush(stdout) != 0)) {
        cli_error("cannot write to standard output: nothing written");
        rc = EXIT_INPUT;
    }
    for (int k = 0; k < n; k++)
        if (rc != EXIT_OK)
            atomic_abort(&af[k]);
        else if (atomic_publish(&af[k], &err) != SID_OK)
            rc = cli_fail(&err);
    return rc;
}

/* What to try when a fit stopped without converging (docs/formats.md, "Stop reasons"). */
static const char *not_converged_hint(sid_stop stop)
{
    switch (stop) {
    case SID_STOP_MAX_ITER: return "give --max-iter a larger N to go on";
    case SID_STOP_TIME: return "give --time-limit more seconds, or none";
    case SID_STOP_ROUNDOFF: return "no step lowered the loss further although the model promised more: free fewer "
                                   "parameters, widen the bounds or try the other --optimizer";
    default: return "see the message; free fewer parameters or try the other --optimizer";
    }
}

/* ---- the command ------------------------------------------------------------------------- */

/* Log j of the fit: the logs to fit, then the --validate ones. */
static const char *log_path(const cmd_args *a, int j)
{
    return j < a->nop - 1 ? a->op[1 + j] : a->validate.v[j - (a->nop - 1)];
}

/* Where the fitted robot goes: -o FILE, ROBOT.json itself (--in-place), or stdout ("-"), which
 * is also where it goes without -o unless the report has stdout (--json or --report -). */
static const char *robot_output(const cmd_args *a)
{
    if (a->in_place)
        return a->op[0];
    if (a->out)
        return a->out;
    return a->json || is_stdout(a->report) ? NULL : "-";
}

/* Refuse outputs that would overwrite an input (or each other). */
static int check_outputs(const cmd_args *a)
{
    const char *robot = a->op[0];
    if (a->in_place && a->out)
        return cmd_usage_error(&info, "--in-place writes ROBOT.json; give it or -o, not both");
    robot_format fmt = ROBOT_JSON;
    sid_error err = { 0 };
    if (a->in_place && robot_file_format(robot, &fmt, &err) == 0 && fmt != ROBOT_JSON)
        return cmd_usage_error(&info, "--in-place would replace the %s file %s with a robot.json: write the fit "
                               "with -o FITTED.json, then `sysid export FITTED.json --into %s`", robot_format_name(fmt),
                               robot, robot);
    if (is_stdout(a->out) && (a->json || is_stdout(a->report)))
        return cmd_usage_error(&info, "-o - and %s would both write to stdout: give one of them a file",
                               a->json ? "--json" : "--report -");
    const char *outs[2] = { robot_output(a), a->report };
    const char *names[2] = { a->in_place ? "--in-place" : "-o", "--report" };
    for (int o = 0; o < 2; o++) {
        if (!outs[o] || is_stdout(outs[o]))
            continue;
        if (!writable(outs[o]))
            return cmd_usage_error(&info, "%s %s: cannot write there (no such directory, "
                                   "a directory, or no permission)", names[o], outs[o]);
        if (o == 0 && !a->in_place && atomic_same_file(outs[o], robot))
            return cmd_usage_error(&info, "-o %s would overwrite the input robot; "
                                   "use --in-place to do that", outs[o]);
        if (o == 1 && atomic_same_file(outs[o], robot))
            return cmd_usage_error(&info, "--report %s would overwrite the input robot", outs[o]);
        for (int j = 1; j < a->nop + a->validate.n; j++) {
            const char *in = j < a->nop ? a->op[j] : a->validate.v[j - a->nop];
            if (atomic_same_file(outs[o], in))
                return cmd_usage_error(&info, "%s %s would overwrite the log %s", names[o], outs[o], in);
        }
        if (a->spec.path && atomic_same_file(outs[o], a->spec.path))
            return cmd_usage_error(&info, "%s %s would overwrite the fit spec", names[o], outs[o]);
    }
    if (outs[0] && outs[1] && !is_stdout(outs[0]) && atomic_same_file(outs[0], outs[1]))
        return cmd_usage_error(&info, "the fitted robot and the report would be the same file %s", outs[1]);
    if (a->html) {
        const char *in[3] = { robot, a->spec.path, a->report };
        if (is_stdout(a->html) || !writable(a->html))
            return cmd_usage_error(&info, "--html %s: cannot write there (no such directory, a directory, no "
                                   "permission, or stdout)", a->html);
        for (int j = 0; j < 3 + a->nop - 1 + a->validate.n; j++) {
            const char *p = j < 3 ? in[j] : log_path(a, j - 3);
            if (p && atomic_same_file(a->html, p))
                return cmd_usage_error(&info, "--html %s would overwrite %s", a->html, p);
        }
        if (outs[0] && !is_stdout(outs[0]) && atomic_same_file(a->html, outs[0]))
            return cmd_usage_error(&info, "--html %s would overwrite the fitted robot", a->html);
    }
    return 0;
}

int cmd_fit(int argc, char **argv)
{
    const double t_start = sid_clock_seconds();
    cmd_args a;
    int rc = cmd_parse(&info, argc, argv, &a);
    if (rc != CMD_RUN)
        return rc;
    if (a.nop < 2)
        return cmd_usage_error(&info, "expected a robot file and at least one log file, got "
                               "%d arguments", a.nop);
    if (check_outputs(&a))
        return EXIT_INPUT;
    const char *robot = a.op[0];
    const int nlog = a.nop - 1, nval = a.validate.n;
    rc = EXIT_INPUT;

    sid_error err = { 0 };
    fitspec spec;
    fitspec_init(&spec);
    sid_model *m = NULL;
    double *theta0 = NULL;
    cJSON *doc = NULL, *rep = NULL, *fitted = NULL;
    sid_traj **tr = calloc((size_t)(nlog + nval), sizeof *tr);
    report_input *in = calloc((size_t)(nlog + nval), sizeof *in), robot_in = { 0 }, config_in = { 0 };
    const char **paths = calloc((size_t)(nlog + nval), sizeof *paths);
    sid_io_fit *f = NULL;
    if (!tr || !in || !paths) {
        cli_error("out of memory");
        goto done;
    }
    for (int j = 0; j < nlog + nval; j++)
        paths[j] = log_path(&a, j);

    /* ---- load ---- */
    readfile_keep_hashes();   /* the report names each input by the digest of what was read */
    if (cmd_spec_build(&spec, &a.spec, &err) || cmd_spec_model(&spec, robot, &m, &theta0, &doc, &err) ||
        hash_input(&robot_in, robot, &err) || (a.spec.path && hash_input(&config_in, a.spec.path, &err))) {
        rc = cli_fail(&err);
        goto done;
    }
    if (spec.optimizer == SID_OPT_LM && spec.smoothing_pairs > 0) {
        /* smoothing estimates a gradient from loss values; LM needs the residuals' Jacobian */
        cli_error("optimizer lm: smoothing (\"smoothing\" in the spec or --smoothing) works with the lbfgs "
                  "optimizer only");
        goto done;
    }
    if (cmd_fit_embed.interrupt && spec.time_limit > 0) {
        cli_error("time limit (--time-limit or the spec's \"optimizer\": {\"time_limit\"}): not with several "
                  "ranks, whose clocks would stop the fit at different iterations; use --max-iter");
        goto done;
    }
    /* several ranks read only the logs their windows need, unless the fit needs them all */
    const char *all_why = spec.window_auto ? "\"window\": \"auto\" cross-validates on every log" : NULL;
    char (*digest)[65] = calloc((size_t)(nlog + nval), sizeof *digest);
    const cmd_fit_logs logs = { m, &spec, nlog, nval, paths, all_why, a.html ? "--html plots every log" : NULL, tr,
                                digest };
    const int loaded = !digest ? -1 : cmd_fit_embed.load_logs ? cmd_fit_embed.load_logs(&logs, &err) : 1;
    if (!digest)
        sid_error_set(&err, SID_ERR_NOMEM, "out of memory");
    for (int j = 0; !loaded && j < nlog + nval; j++) {
        in[j].path = paths[j];
        memcpy(in[j].sha256, digest[j], sizeof in[j].sha256);
        in[j].samples = tr[j]->n;
    }
    free(digest);
    if (loaded < 0) {
        rc = cli_fail(&err);
        goto done;
    }
    for (int j = 0; loaded && j < nlog + nval; j++) {
        const char *path = log_path(&a, j);
        if (traj_csv_load(path, m, &spec.columns, &tr[j], &err) || hash_input(&in[j], path, &err)) {
            rc = cli_fail(&err);
            goto done;
        }
        in[j].samples = tr[j]->n;
    }

    /* ---- the fit, what the data determine, predictions (fit_run.h) ---- */
    fit_progress fp = { .mode = progress_mode_for(cli_quiet, a.verbose) };
    const sid_io_fit_hooks hooks = { on_progress, &fp, cmd_fit_embed.interrupt ? cmd_fit_embed.interrupt : &interrupted };
    const fit_run_input fin = { robot, m, theta0, doc, &spec, nlog, nval, tr, paths, &hooks };
    if (spec.window_auto)
        catch_signals();   /* the selection's own work (the nominal scores) precedes its first fit */
    if (fit_run(&fin, &f, &err) != SID_OK) {
        rc = cli_fail(&err);
        if (err.status == SID_ERR_INTERRUPTED && *hooks.interrupt)
            rc = 128 + *hooks.interrupt;   /* stopped while choosing the window: nothing to write */
        goto done;
    }
    report *r = &f->rep;
    r->robot = robot_in;
    r->config = config_in;
    r->log = in;
    r->val = in + nlog;
    r->has_max_rmse = a.max_rmse >= 0;
    r->max_rmse = a.max_rmse;
    r->has_max_loss = a.max_loss >= 0;
    r->max_loss = a.max_loss;
    r->nflag = a.spec.n;
    r->flag = a.spec.flag;
    r->flag_value = a.spec.value;
    r->seconds_total = sid_clock_seconds() - t_start;
    if (!(rep = report_json(r, &err))) {
        sid_error_prefix(&err, "%s", robot);
        rc = cli_fail(&err);
        goto done;
    }
    if (!cli_quiet) {
        report_table(stderr, r);
        report_warnings(r);
    }

    if (cmd_fit_embed.before_write)
        cmd_fit_embed.before_write();
    if (cmd_fit_embed.no_output) {
        rc = EXIT_OK;
        goto done;
    }

    /* ---- write ---- */
    const char *out = robot_output(&a);
    if (out && !(fitted = robot_json_fitted(is_stdout(out) ? robot : out, doc, m, f->theta, &err))) {
        rc = cli_fail(&err);
        goto done;
    }
    atomic_file haf = { 0 };
    if (a.html) {
        const html_input hin = { rep, m, theta0, f->theta, f->ppred, f->pval, (const sid_traj *const *)tr,
                                 (const sid_traj *const *)tr + nlog, paths, paths + nlog, nlog, nval };
        if (html_page_prepare(&haf, a.html, &hin, &err) != SID_OK) {
            rc = cli_fail(&err);
            goto done;
        }
    }
    if ((rc = write_outputs(out, fitted, a.report, rep, a.json)) != EXIT_OK) {
        atomic_abort(&haf);
        goto done;
    }
    if (a.html && atomic_publish(&haf, &err) != SID_OK) {
        rc = cli_fail(&err);
        goto done;
    }
    if (!out && !cli_quiet)
        /* stdout has the report: say so rather than drop the result silently */
        cli_warn("the fitted robot was not written: stdout has the report; give -o FITTED.json");
    if (interrupted) {
        if (!cli_quiet)
            fprintf(stderr, "interrupted (%s): the best parameters so far were written\n",
                    interrupted == SIGTERM ? "SIGTERM" : interrupted == SIGHUP ? "SIGHUP" : "SIGINT");
        rc = 128 + interrupted;
    } else if (!report_gates_pass(r)) {
        if (a.max_rmse >= 0 && !(report_worst_rmse(r) <= a.max_rmse))
            cli_error("--max-rmse %g failed: the largest q RMSE after the fit is %g", a.max_rmse,
                      report_worst_rmse(r));
        if (a.max_loss >= 0 && !(f->fr.loss <= a.max_loss))
            cli_error("--max-loss %g failed: the fitted loss is %g", a.max_loss, f->fr.loss);
        rc = EXIT_GATE;
    } else if (f->fr.stop == SID_STOP_NO_PROGRESS) {
        /* a fit that returns where it began has shown nothing: never exit 0 silently */
        cli_error("the fit made no progress (report: \"stop\": \"no_progress\"): %s; the result, at its start, was "
                  "written; rejected trial points are unphysical or diverge: try other start values, wider bounds, "
                  "fewer free parameters or --optimizer %s",
                  f->fr.message, spec.optimizer == SID_OPT_LM ? "lbfgs" : "lm");
        rc = EXIT_GATE;
    } else if (!sid_stop_converged(f->fr.stop)) {
        /* the best point of a fit that did not finish is written, but it is no answer: exit 1 */
        cli_error("the fit did not converge (report: \"stop\": \"%s\"): %s; the best point so far was written; %s",
                  sid_stop_str(f->fr.stop), f->fr.message, not_converged_hint(f->fr.stop));
        rc = EXIT_GATE;
    } else {
        rc = EXIT_OK;
    }
done:
    release_signals();
    cJSON_Delete(fitted);
    cJSON_Delete(rep);
    sid_io_fit_free(f);
    for (int j = 0; tr && j < nlog + nval; j++)
        sid_traj_free(tr[j]);
    free(tr);
    free(in);
    free(paths);
    cJSON_Delete(doc);
    sid_free(theta0);
    sid_model_free(m);
    fitspec_free(&spec);
    return rc;
}
