/* cmd_simulate.c — `sysid simulate ROBOT.json LOG.csv [-o OUT.csv]`: replay a log.
 *
 * Starts from the log's first state, holds each logged command over its interval, and
 * writes the simulated t, q, qd and u with the log's logical column names. The output is
 * complete or absent: -o writes atomically, and nothing is written to stdout until the
 * simulation has succeeded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic.h"
#include "cmd.h"
#include "diag.h"
#include "keyframe.h"
#include "robot_json.h"
#include "stepchoice.h"
#include "traj_csv.h"

static const cmd_info info = {
    "simulate", CMD_SIMULATE, "sysid simulate ROBOT.json LOG.csv [-o OUT.csv] [-c SPEC.json] "
                              "[--integrator " CMD_INTEGRATORS "] [--substeps N] [--max-dt S] "
                              "[--columns MAP] [--scale MAP] [--contact " CMD_CONTACTS "] [--keyframe NAME]",
    "Replay the commands of LOG.csv on ROBOT.json from the log's first state and\n"
    "print the simulated trajectory as CSV (on stdout, or with -o in a file): t,\n"
    "q.JOINT, qd.JOINT, u.JOINT (joints with a motor), in SI units, with exact\n"
    "(round-trip) numbers. A free joint has a column per coordinate: q.JOINT.x ..\n"
    "q.JOINT.qz, qd.JOINT.vx .. qd.JOINT.wz. Of a fit spec (-c), the simulation\n"
    "settings and the log column mapping are used.\n",
    "Exit status: 0 success, 2 invalid input, 3 the simulation diverged.\n",
};

static int write_output(const char *out, const sid_model *m, const sid_traj *tr,
                        const double *q, const double *v)
{
    sid_error err = { 0 };
    if (!out) {
        if (traj_csv_write(stdout, m, tr, q, v) == 0)
            return EXIT_OK;
        cli_error("cannot write to standard output");
        return EXIT_INPUT;
    }
    atomic_file af;
    if (atomic_open(&af, out, &err) != SID_OK)
        return cli_fail(&err);
    if (traj_csv_write(af.f, m, tr, q, v) != 0) {
        atomic_abort(&af);
        cli_error("%s: cannot write", out);
        return EXIT_INPUT;
    }
    if (atomic_commit(&af, &err) != SID_OK)
        return cli_fail(&err);
    return EXIT_OK;
}

int cmd_simulate(int argc, char **argv)
{
    cmd_args a;
    int rc = cmd_parse(&info, argc, argv, &a);
    if (rc != CMD_RUN)
        return rc;
    if (a.nop != 2)
        return cmd_usage_error(&info, "expected a robot file and a log file, got %d arguments", a.nop);
    const char *robot = a.op[0], *log = a.op[1];
    if (a.out && (atomic_same_file(a.out, robot) || atomic_same_file(a.out, log)))
        return cmd_usage_error(&info, "-o %s would overwrite the input %s", a.out,
                               atomic_same_file(a.out, robot) ? robot : log);

    sid_error err = { 0 };
    fitspec spec;
    sid_model *m = NULL;
    double *theta = NULL, *q = NULL, *v = NULL, *kf = NULL;
    sid_traj *tr = NULL;
    cJSON *doc = NULL;
    if (cmd_spec_build(&spec, &a.spec, &err) || cmd_spec_model(&spec, robot, &m, &theta, &doc, &err) ||
        traj_csv_load(log, m, &spec.columns, &tr, &err)) {
        rc = cli_fail(&err);
        goto done;
    }
    if (a.keyframe) {   /* the start state: the keyframe's (q, qd, u) instead of the log's first */
        const int nq = sid_model_nq(m), nv = sid_model_nv(m);
        kf = malloc(sizeof *kf * (size_t)(nq + 2 * nv + 1));
        if (!kf) {
            cli_error("out of memory");
            rc = EXIT_INPUT;
            goto done;
        }
        if (keyframe_state(robot, doc, m, a.keyframe, kf, kf + nq, kf + nq + nv, &err)) {
            rc = cli_fail(&err);
            goto done;
        }
    }
    sid_step_choice step;
    if (stepchoice_apply(&spec, m, theta, &tr, &log, 1, 1, &step, &err)) {
        sid_error_prefix(&err, "%s: choosing the simulation step", robot);
        rc = cli_fail(&err);
        goto done;
    }
    q = malloc((size_t)tr->n * (size_t)(tr->nq ? tr->nq : 1) * sizeof *q);
    v = malloc((size_t)tr->n * (size_t)(tr->nv ? tr->nv : 1) * sizeof *v);
    if (!q || !v) {
        cli_error("out of memory");
        rc = EXIT_INPUT;
        goto done;
    }
    if (sid_simulate_from(m, theta, tr, &spec.sim, kf, kf ? kf + sid_model_nq(m) : NULL, q, v, &err) != SID_OK) {
        sid_error_prefix(&err, "%s: simulating %s", robot, log);
        rc = cli_fail(&err);
        goto done;
    }
    rc = write_output(a.out, m, tr, q, v);
done:
    free(kf);
    cJSON_Delete(doc);
    free(q);
    free(v);
    sid_traj_free(tr);
    sid_free(theta);
    sid_model_free(m);
    fitspec_free(&spec);
    return rc;
}
