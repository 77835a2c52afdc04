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
#include "robot_json.h"
#include "traj_csv.h"

static const char usage[] = "sysid simulate ROBOT.json LOG.csv [-o OUT.csv] [-c SPEC.json] "
                            "[--integrator euler|rk4] [--substeps N] [--max-dt S] "
                            "[--columns MAP] [--scale MAP] [--contact compliant|hard]";

static void help(void)
{
    printf("usage: %s\n\n"
           "Replay the commands of LOG.csv on ROBOT.json from the log's first state and print\n"
           "the simulated trajectory as CSV: t, q.JOINT, qd.JOINT, u.JOINT (joints with a\n"
           "motor), in SI units, with exact (round-trip) numbers. A free joint has a column\n"
           "per coordinate: q.JOINT.x .. q.JOINT.qz, qd.JOINT.vx .. qd.JOINT.wz.\n\n"
           "Options:\n"
           "  -o FILE             write the CSV to FILE (atomically) instead of stdout\n"
           "  -c SPEC.json        read integrator, substeps, max_dt, columns and scale from\n"
           "                      a fit spec; the options below override it\n"
           "  --integrator NAME   euler (semi-implicit, as MuJoCo; default) or rk4\n"
           "  --substeps N        simulation steps per log interval (default 1)\n"
           "  --max-dt S          also split any interval longer than S seconds\n"
           "  --columns MAP       log column names: JSON {\"q.elbow\": \"pos2\"} or\n"
           "                      q.elbow=pos2,t=time\n"
           "  --scale MAP         multiply logical columns: {\"t\": 0.001} or t=0.001\n"
           "  --contact compliant|hard   override the robot's contact model\n"
           "  -q                  no warnings\n"
           "  -h, --help          this text\n\n"
           "Exit status: 0 success, 2 invalid input, 3 the simulation diverged.\n", usage);
}

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
    static const struct option opts[] = {
        { "integrator", required_argument, NULL, CMD_SPEC_OPT + 0 },
        { "substeps", required_argument, NULL, CMD_SPEC_OPT + 1 },
        { "max-dt", required_argument, NULL, CMD_SPEC_OPT + 2 },
        { "columns", required_argument, NULL, CMD_SPEC_OPT + 3 },
        { "scale", required_argument, NULL, CMD_SPEC_OPT + 4 },
        { "contact", required_argument, NULL, CMD_SPEC_OPT + 5 },
        { "output", required_argument, NULL, 'o' },
        { "config", required_argument, NULL, 'c' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    cmd_spec_args sa = { 0 };
    const char *out = NULL;
    int c;
    while ((c = getopt_long(argc, argv, ":o:c:qh", opts, NULL)) != -1) {
        if (c >= CMD_SPEC_OPT) {
            if (cmd_spec_add(&sa, &opts[c - CMD_SPEC_OPT], optarg))
                return cmd_usage_error("simulate", usage, "too many options");
            continue;
        }
        switch (c) {
        case 'o':
            out = optarg;
            break;
        case 'c':
            sa.path = optarg;
            break;
        case 'q':
            cli_quiet = 1;
            break;
        case 'h':
            help();
            return EXIT_OK;
        default:
            return cmd_bad_option("simulate", usage, c, argv);
        }
    }
    if (argc - optind != 2)
        return cmd_usage_error("simulate", usage, "expected a robot file and a log file, got "
                               "%d arguments", argc - optind);
    const char *robot = argv[optind], *log = argv[optind + 1];

    sid_error err = { 0 };
    fitspec spec;
    sid_model *m = NULL;
    double *theta = NULL, *q = NULL, *v = NULL;
    sid_traj *tr = NULL;
    int rc;
    if (cmd_spec_build(&spec, &sa, &err) || cmd_spec_model(&spec, robot, &m, &theta, NULL, &err) ||
        traj_csv_load(log, m, &spec.columns, &tr, &err)) {
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
    if (sid_simulate(m, theta, tr, &spec.sim, q, v, &err) != SID_OK) {
        sid_error_prefix(&err, "%s: simulating %s", robot, log);
        rc = cli_fail(&err);
        goto done;
    }
    rc = write_output(out, m, tr, q, v);
done:
    free(q);
    free(v);
    sid_traj_free(tr);
    sid_free(theta);
    sid_model_free(m);
    fitspec_free(&spec);
    return rc;
}
