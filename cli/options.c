/* options.c — the option table of every command, the parser that walks it, the help that
 * prints it.
 *
 * A row lands in one of a few ways: a fit-spec flag (SPEC) is kept with its value, in the
 * order given, for fitspec_apply_flag after -c SPEC.json is read, so that flags override the
 * file and --free/--bounds apply in order; the others set a field of cmd_args at `at`. The
 * parser is getopt_long over the rows the command takes, so permutation, "--", bundled
 * short options and --name=value behave as in any GNU tool; abbreviations are refused.
 */
#include "options.h"

#include <getopt.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "diag.h"

typedef enum {
    SWITCH,    /* int at `at` becomes 1 */
    TEXT,      /* const char * at `at` is the value */
    LIST,      /* the value is appended to the cmd_list at `at` */
    LIMIT,     /* double at `at` is the value, a non-negative number */
    SPEC,      /* a fit-spec flag: kept in order in cmd_args.spec */
    HELP,      /* print the help and stop */
} opt_kind;

/* Help sections, in the order printed. */
typedef enum { OUTPUT, FITSPEC, CHECKS, DESIGN, OTHER, NSECTION } opt_section;
static const char *const section_title[NSECTION] = {
    "Outputs:",
    "Fit specification (these options override the file -c reads):",
    "Checks:",
    "The excitation (sysid excite):",
    "Other options:",
};

typedef struct {
    char letter;           /* short name, or 0 */
    const char *name;      /* "--window" */
    const char *arg;       /* the value's name in the help; NULL: takes no value */
    opt_kind kind;
    size_t at;             /* offsetof(cmd_args, ...) for SWITCH, TEXT, LIST, LIMIT */
    opt_section section;
    int cmds;              /* CMD_* that take it */
    const char *help;      /* lines of at most 54 characters, separated by '\n' */
} opt_row;

#define AT(field) offsetof(cmd_args, field)
#define SIMULATING (CMD_SIMULATE | CMD_EVAL | CMD_GRAD | CMD_FIT)
#define WINDOWED (CMD_EVAL | CMD_GRAD | CMD_FIT)
#define FITTING (CMD_GRAD | CMD_FIT)
#define ALL (CMD_PARAMS | CMD_VALIDATE | CMD_SIMULATE | CMD_FIT | CMD_GRAD | CMD_EVAL | CMD_DIFF)

static const opt_row rows[] = {
    { 'o', "--output", "FILE", TEXT, AT(out), OUTPUT, CMD_EXCITE | CMD_FIT | CMD_SIMULATE | CMD_PARAMS | CMD_REPORT | CMD_IMPORT | CMD_EXPORT | CMD_GRAD,
      "write the output (see above) to FILE, atomically;\n"
      "- is stdout (where fit and simulate write without -o)" },
    { 0, "--wrt", "params|commands", TEXT, AT(wrt), OUTPUT, CMD_GRAD,
      "differentiate with respect to the parameters (the\n"
      "default: a table) or the logged commands (a CSV of\n"
      "dL/du for every sample; see below)" },
    { 0, "--in-place", NULL, SWITCH, AT(in_place), OUTPUT, CMD_FIT,
      "write the fitted robot over ROBOT.json itself" },
    { 0, "--report", "FILE", TEXT, AT(report), OUTPUT, CMD_FIT,
      "write the report (see below) to FILE, atomically;\n"
      "- is stdout" },
    { 0, "--html", "FILE", TEXT, AT(html), OUTPUT, CMD_FIT,
      "write the report as one self-contained HTML page\n"
      "with plots to FILE, atomically (sysid report\n"
      "rebuilds it from the --report file)" },
    { 0, "--set", "NAME=VALUE", LIST, AT(set), OUTPUT, CMD_PARAMS,
      "set every parameter NAME matches (a glob, as in fit\n"
      "specs) to VALUE; repeatable; needs -o" },
    { 0, "--into", "ROBOT", TEXT, AT(into), OUTPUT, CMD_EXPORT,
      "the URDF or MJCF file to write the values into (it\n"
      "is read, not changed, unless -o names it)" },
    { 0, "--balance-inertia", NULL, SWITCH, AT(balance_inertia), OUTPUT, CMD_IMPORT,
      "URDF: repair inertias that break the triangle\n"
      "inequality by a rounding margin (as MuJoCo's\n"
      "balanceinertia; MJCF files say it in <compiler>)" },
    { 0, "--json", NULL, SWITCH, AT(json), OUTPUT, CMD_EXCITE | (ALL & ~CMD_SIMULATE),
      "print the result as one JSON object on stdout" },

    { 'c', "--config", "SPEC.json", TEXT, AT(spec.path), FITSPEC, CMD_EXCITE | (ALL & ~(CMD_PARAMS | CMD_DIFF)),
      "read a fit spec (docs/formats.md; examples in\n"
      "configs/)" },
    { 0, "--free", "GLOB", SPEC, 0, FITSPEC, CMD_EXCITE | FITTING,
      "also free the parameters GLOB matches (repeatable;\n"
      "adds to the spec's list). Without any, fit frees\n"
      "masses, armature, friction and motor constants of\n"
      "everything that moves" },
    { 0, "--free-only", "GLOB", SPEC, 0, FITSPEC, CMD_EXCITE | FITTING,
      "free the parameters GLOB matches instead of the\n"
      "spec's list (repeatable)" },
    { 0, "--fix", "GLOB", SPEC, 0, FITSPEC, CMD_EXCITE | FITTING,
      "hold the parameters GLOB matches fixed, even where\n"
      "a free glob or the default set includes them" },
    { 0, "--bounds", "GLOB=LO:HI | GLOB=scale:A:B | JSON", SPEC, 0, FITSPEC, FITTING,
      "bounds of the parameters GLOB matches (repeatable;\n"
      "checked before the spec's, the first match wins)" },
    { 0, "--window", "S", SPEC, 0, FITSPEC, CMD_EXCITE | ((WINDOWED | CMD_VALIDATE) & ~CMD_FIT),
      "seconds per window (default 0.5); 0: one window per\n"
      "log, a free-running simulation" },
    { 0, "--weight-tau", "W", SPEC, 0, FITSPEC, WINDOWED,
      "weight of the logs' tau.* torque sensor readings\n"
      "(default 0: not scored; docs/formats.md,\n"
      "Torque sensors)" },
    { 0, "--window", "S|auto", SPEC, 0, FITSPEC, CMD_FIT,
      "seconds per window (default 0.5); 0: one window per\n"
      "log, a free-running simulation; auto: chosen by\n"
      "cross-validation on the fitted logs alone (a fit\n"
      "per fold and candidate; docs/formats.md, stderr says\n"
      "each candidate's held-out score)" },
    { 0, "--start", "fitted|logged", SPEC, 0, FITSPEC, FITTING,
      "window start states fitted with the parameters\n"
      "(multiple shooting) or taken from the log" },
    { 0, "--start-velocity", "auto|logged|positions", SPEC, 0, FITSPEC, WINDOWED,
      "logged start states take their velocities from the\n"
      "velocity columns or from positions (when the logged\n"
      "velocity is noise); auto (default): from positions\n"
      "when the columns differ from the positions'\n"
      "derivative by more than 25 % (rms), as stderr says" },
    { 0, "--integrator", CMD_INTEGRATORS, SPEC, 0, FITSPEC, CMD_EXCITE | (SIMULATING | CMD_VALIDATE),
      "semi-implicit Euler (as MuJoCo; default) or RK4" },
    { 0, "--substeps", "N", SPEC, 0, FITSPEC, CMD_EXCITE | (SIMULATING | CMD_VALIDATE),
      "simulation steps per log interval (default 1)" },
    { 0, "--max-dt", "S", SPEC, 0, FITSPEC, CMD_EXCITE | (SIMULATING | CMD_VALIDATE),
      "also split any log interval longer than S seconds" },
    { 0, "--contact", CMD_CONTACTS, SPEC, 0, FITSPEC, CMD_EXCITE | SIMULATING,
      "override the robot's contact model" },
    { 0, "--columns", "MAP", SPEC, 0, FITSPEC, SIMULATING | CMD_VALIDATE,
      "log column names: JSON {\"q.elbow\": \"pos2\"} or\n"
      "q.elbow=pos2,t=time" },
    { 0, "--scale", "MAP", SPEC, 0, FITSPEC, SIMULATING | CMD_VALIDATE,
      "multiply logical columns: {\"t\": 0.001} or t=0.001" },
    { 0, "--units", "MAP", SPEC, 0, FITSPEC, SIMULATING | CMD_VALIDATE,
      "units of logical columns: {\"q.*\": \"deg\"} or\n"
      "t=ns,q.*=deg (docs/formats.md lists them)" },
    { 0, "--threads", "N", SPEC, 0, FITSPEC, CMD_EXCITE | WINDOWED,
      "windows evaluated in parallel (default 0: all\n"
      "cores); the result is the same, to the bit, for any N" },
    { 0, "--optimizer", "auto|lbfgs|lm", SPEC, 0, FITSPEC, FITTING,
      "auto (default): LM where its iterations pay, else\n"
      "L-BFGS, and a hand-over when the one running\n"
      "stalls (stderr and the report say which and why);\n"
      "lbfgs: L-BFGS on the adjoint gradient; lm:\n"
      "Levenberg-Marquardt on the residuals' exact\n"
      "Jacobian, start states eliminated window by window\n"
      "(fewer, dearer iterations; not with --smoothing)" },
    { 0, "--max-iter", "N", SPEC, 0, FITSPEC, FITTING,
      "optimizer iterations at most (default 1000)" },
    { 0, "--ftol-rel", "X", SPEC, 0, FITSPEC, FITTING,
      "stop when an iteration improves the loss by less\n"
      "than X relatively (default 1e-10)" },
    { 0, "--time-limit", "S", SPEC, 0, FITSPEC, FITTING,
      "stop the optimizer after S seconds (default 0:\n"
      "none; a limit makes the result depend on the\n"
      "machine's speed, and the report says it was hit)" },
    { 0, "--smoothing", "SIGMA,N[,SEED] | off", SPEC, 0, FITSPEC, FITTING,
      "minimise the loss smoothed over N pairs of Gaussian\n"
      "perturbations x +- SIGMA e of the scaled parameters\n"
      "(drawn once from SEED, default 1), with a gradient\n"
      "from the loss values alone (no adjoint); start\n"
      "states are held at their first guess; each step\n"
      "costs 2N simulations" },

    { 0, "--check", NULL, SWITCH, AT(check), CHECKS, CMD_GRAD,
      "compare each gradient component with a finite\n"
      "difference of the loss (see below)" },
    { 0, "--validate", "LOG.csv", LIST, AT(validate), CHECKS, CMD_FIT,
      "also report the prediction error on a log that was\n"
      "not fitted (repeatable)" },
    { 0, "--max-rmse", "X", LIMIT, AT(max_rmse), CHECKS, CMD_FIT,
      "exit 1 if a joint's q RMSE after the fit (predicted\n"
      "from the logged start states, fitted and validation\n"
      "logs) exceeds X" },
    { 0, "--max-loss", "X", LIMIT, AT(max_loss), CHECKS, CMD_FIT,
      "exit 1 if the fitted loss exceeds X" },
    { 0, "--tol", "REL", LIMIT, AT(tol), CHECKS, CMD_DIFF,
      "exit 1 if any |relative change| exceeds REL, or a\n"
      "parameter was added or removed; default: no gate" },

    { 0, "--duration", "S", TEXT, AT(excite[EXCITE_DURATION]), DESIGN, CMD_EXCITE,
      "length of the excitation in seconds (required)" },
    { 0, "--dt", "S", TEXT, AT(excite[EXCITE_DT]), DESIGN, CMD_EXCITE,
      "command and sample interval (default 0.01)" },
    { 0, "--harmonics", "H", TEXT, AT(excite[EXCITE_HARMONICS]), DESIGN, CMD_EXCITE,
      "harmonics of the Fourier series per joint\n"
      "(default 8; 2 H coefficients per joint)" },
    { 0, "--base-freq", "HZ", TEXT, AT(excite[EXCITE_BASE_FREQ]), DESIGN, CMD_EXCITE,
      "fundamental frequency; harmonics HZ .. H HZ\n"
      "(default 0.25)" },
    { 0, "--ramp", "S", TEXT, AT(excite[EXCITE_RAMP]), DESIGN, CMD_EXCITE,
      "seconds of the sin^2 ramps from and back to rest\n"
      "(default 1, at most a quarter of the duration)" },
    { 0, "--noise-q", "X", TEXT, AT(excite[EXCITE_NOISE_Q]), DESIGN, CMD_EXCITE,
      "assumed position noise, rad or m (default 1e-3)" },
    { 0, "--noise-qd", "X", TEXT, AT(excite[EXCITE_NOISE_QD]), DESIGN, CMD_EXCITE,
      "assumed velocity noise, rad/s or m/s (default\n"
      "1e-2; 0: velocities are not measured)" },
    { 0, "--max-torque", "X", TEXT, AT(excite[EXCITE_MAX_TORQUE]), DESIGN, CMD_EXCITE,
      "torque limit of joints without limit.effort or a\n"
      "servo limit in the robot, N*m or N" },
    { 0, "--max-velocity", "X", TEXT, AT(excite[EXCITE_MAX_VELOCITY]), DESIGN, CMD_EXCITE,
      "speed limit of joints without limit.velocity" },
    { 0, "--max-angle", "X", TEXT, AT(excite[EXCITE_MAX_ANGLE]), DESIGN, CMD_EXCITE,
      "range q0 +- X of joints without a position limit\n"
      "(a missing side of a limit too)" },
    { 0, "--seed", "N", TEXT, AT(excite[EXCITE_SEED]), DESIGN, CMD_EXCITE,
      "seed of the random multi-sine the design starts\n"
      "from (default 1)" },
    { 0, "--max-evals", "N", TEXT, AT(excite[EXCITE_MAX_EVALS]), DESIGN, CMD_EXCITE,
      "designs the optimizer may simulate (default 200)" },
    { 0, "--criterion", "worst|logdet", TEXT, AT(excite[EXCITE_CRITERION]), DESIGN, CMD_EXCITE,
      "minimise the largest relative standard error\n"
      "(default), or maximise log det of the relative\n"
      "information (D-optimal)" },
    { 0, "--pose", "Q,Q,...", TEXT, AT(excite[EXCITE_POSE]), DESIGN, CMD_EXCITE,
      "the start (and hold) pose, one value per joint in\n"
      "q order (default: the robot file's first keyframe,\n"
      "else 0, or the middle of a limit that excludes 0);\n"
      "an open-loop design needs a stable one (hanging)\n"
      "for torque-driven joints" },
    { 0, "--keyframe", "NAME", TEXT, AT(keyframe), OTHER, CMD_EXCITE | CMD_SIMULATE,
      "start from the robot file's keyframe NAME (an\n"
      "MJCF <key>, robot.json \"keyframes\"): simulate\n"
      "replays the log's commands from its q and qd,\n"
      "excite designs about its pose" },
    { 0, "--design", "optimal|random", TEXT, AT(excite[EXCITE_DESIGN]), DESIGN, CMD_EXCITE,
      "random: the seeded random multi-sine scaled to the\n"
      "limits, not optimised (a baseline)" },

    { 'q', "--quiet", NULL, SWITCH, AT(quiet), OTHER, CMD_EXCITE | (ALL | CMD_REPORT | CMD_IMPORT | CMD_EXPORT),
      "no progress, warnings or timings on stderr" },
    { 'v', "--verbose", NULL, SWITCH, AT(verbose), OTHER, CMD_FIT,
      "progress: a line per iteration (default: one line\n"
      "redrawn on a terminal, one a second in a pipe)" },
    { 'h', "--help", NULL, HELP, 0, OTHER, CMD_EXCITE | (ALL | CMD_REPORT | CMD_IMPORT | CMD_EXPORT),
      "this text" },
};
#define NROW (int)(sizeof rows / sizeof rows[0])

/* getopt_long's value of a row: its letter, or past every character. */
enum { LONG_ONLY = 256 };

static int value_of(int r)
{
    return rows[r].letter ? rows[r].letter : LONG_ONLY + r;
}

static const opt_row *row_of(int value)
{
    if (value >= LONG_ONLY)
        return value - LONG_ONLY < NROW ? &rows[value - LONG_ONLY] : NULL;
    for (int r = 0; r < NROW; r++)
        if (rows[r].letter && rows[r].letter == value)
            return &rows[r];
    return NULL;
}

/* getopt_long also takes unique abbreviations; refuse them, so that what a command
 * accepts is what its help lists (eval's "--start" would otherwise be --start-velocity).
 * arg is the option as typed: "--window" or "--window=0.1". */
static int exact_name(const cmd_info *c, const opt_row *o, const char *arg)
{
    size_t n = strcspn(arg, "=");
    if (n == strlen(o->name) && strncmp(arg, o->name, n) == 0)
        return CMD_RUN;
    return cmd_usage_error(c, "unknown option '%.*s'; did you mean '%s'?", (int)n, arg, o->name);
}

/* getopt_long's '?' or ':' for argv[optind - 1]. */
static int bad_option(const cmd_info *c, int ch, char **argv)
{
    const char *arg = argv[optind - 1];
    /* a known long option without its value, or with one it does not take: getopt_long
     * sets optopt to the option's value */
    const opt_row *o = optopt && strncmp(arg, "--", 2) == 0 ? row_of(optopt) : NULL;
    if (o && exact_name(c, o, arg) != CMD_RUN)
        return EXIT_INPUT;
    if (ch == ':')
        return cmd_usage_error(c, "option '%s' needs a value", arg);
    if (o)
        return cmd_usage_error(c, "option '%s' takes no value", o->name);
    if (optopt)
        return cmd_usage_error(c, "unknown option '-%c'", optopt);
    return cmd_usage_error(c, "unknown option '%s'", arg);
}

/* Put one option's value where its row says; CMD_RUN, or the exit code to stop with. */
static int land(const cmd_info *c, const opt_row *o, const char *value, cmd_args *a)
{
    char *field = (char *)a + o->at;
    switch (o->kind) {
    case SWITCH:
        *(int *)(void *)field = 1;
        return CMD_RUN;
    case TEXT:
        *(const char **)(void *)field = value;
        return CMD_RUN;
    case LIST: {
        cmd_list *l = (cmd_list *)(void *)field;
        if (l->n == CMD_MAX_LIST)
            return cmd_usage_error(c, "too many %s options", o->name);
        l->v[l->n++] = value;
        return CMD_RUN;
    }
    case LIMIT: {
        char *end;
        double x = strtod(value, &end);
        if (end == value || *end || !isfinite(x) || x < 0)
            return cmd_usage_error(c, "%s: expected a non-negative number, got '%s'", o->name, value);
        *(double *)(void *)field = x;
        return CMD_RUN;
    }
    case SPEC:
        if (a->spec.n == CMD_MAX_SPEC_FLAGS)
            return cmd_usage_error(c, "too many options");
        a->spec.flag[a->spec.n] = o->name;
        a->spec.value[a->spec.n++] = value;
        return CMD_RUN;
    case HELP:
        cmd_help(c);
        return EXIT_OK;
    }
    return CMD_RUN;
}

int cmd_parse(const cmd_info *c, int argc, char **argv, cmd_args *a)
{
    struct option longs[NROW + 1];
    char shorts[2 * NROW + 2] = ":";   /* ':' first: missing values come back as ':' */
    int nl = 0, ns = 1;
    for (int r = 0; r < NROW; r++) {
        if (!(rows[r].cmds & c->bit))
            continue;
        longs[nl++] = (struct option){ rows[r].name + 2, rows[r].arg ? required_argument : no_argument,
                                       NULL, value_of(r) };
        if (rows[r].letter) {
            shorts[ns++] = rows[r].letter;
            if (rows[r].arg)
                shorts[ns++] = ':';
        }
    }
    longs[nl] = (struct option){ NULL, 0, NULL, 0 };
    shorts[ns] = '\0';

    memset(a, 0, sizeof *a);
    a->spec.cmd = c->name;
    a->max_rmse = a->max_loss = a->tol = -1;
    int ch, li = -1;
    while ((ch = getopt_long(argc, argv, shorts, longs, &li)) != -1) {
        const opt_row *o = ch == '?' || ch == ':' ? NULL : row_of(ch);
        int rc = o ? CMD_RUN : bad_option(c, ch, argv);
        /* a long option is the last argument read, or the one before its separate value */
        if (rc == CMD_RUN && li >= 0)
            rc = exact_name(c, o, argv[optind - (optarg && optarg == argv[optind - 1] ? 2 : 1)]);
        if (rc == CMD_RUN)
            rc = land(c, o, optarg, a);
        if (rc != CMD_RUN)
            return rc;
        li = -1;
    }
    a->nop = argc - optind;
    a->op = argv + optind;
    if (a->quiet)
        cli_quiet = 1;
    return CMD_RUN;
}

/* Names and value at column 2, help at column NAMES + 4 (on a line of its own when the
 * names are wider). */
enum { NAMES = 22 };

static void print_row(const opt_row *o)
{
    char names[80], arg[64] = "";
    if (o->arg) cmd_names(o->arg, arg, sizeof arg);
    int n = o->letter ? snprintf(names, sizeof names, "-%c, %s", o->letter, o->name)
                      : snprintf(names, sizeof names, "%s", o->name);
    if (o->arg)
        snprintf(names + n, sizeof names - (size_t)n, " %s", arg);
    if ((int)strlen(names) > NAMES)
        printf("  %s\n%*s", names, NAMES + 4, "");
    else
        printf("  %-*s  ", NAMES, names);
    for (const char *p = o->help;;) {
        int len = (int)strcspn(p, "\n");
        printf("%.*s\n", len, p);
        if (!p[len])
            break;
        p += len + 1;
        printf("%*s", NAMES + 4, "");
    }
}

void cmd_help(const cmd_info *c)
{
    char usage[2048];
    printf("usage: %s\n\n%s", cmd_names(c->usage, usage, sizeof usage), c->about);
    for (int s = 0; s < NSECTION; s++) {
        int shown = 0;
        for (int r = 0; r < NROW; r++) {
            if (rows[r].section != (opt_section)s || !(rows[r].cmds & c->bit))
                continue;
            if (!shown++)
                printf("\n%s\n", section_title[s]);
            print_row(&rows[r]);
        }
    }
    if (c->details)
        printf("\n%s", c->details);
}
