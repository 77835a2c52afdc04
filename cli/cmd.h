/* cmd.h — the subcommands and what they share: usage errors, fit-spec flags, output.
 *
 * A command reads top to bottom: parse options, load, run, write, return an exit code
 * (diag.h). Each is called with argv[0] = its name; `--help` prints its help on stdout.
 */
#ifndef CLI_CMD_H
#define CLI_CMD_H

#include <getopt.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "fitspec.h"
#include "sid.h"

int cmd_params(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_simulate(int argc, char **argv);
int cmd_fit(int argc, char **argv);
int cmd_grad(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_diff(int argc, char **argv);

/* Print "sysid: error: MSG", the usage line and "Try 'sysid CMD --help'." on stderr;
 * returns EXIT_INPUT. */
int cmd_usage_error(const char *cmd, const char *usage, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Report getopt_long's '?' or ':' for argv[optind - 1]; returns EXIT_INPUT. */
int cmd_bad_option(const char *cmd, const char *usage, int c, char **argv);

/* Fit-spec options of a command line, kept in order until the spec file is read. */
#define CMD_MAX_SPEC_FLAGS 64
typedef struct {
    const char *path;                          /* -c FILE, or NULL */
    int n;
    const char *flag[CMD_MAX_SPEC_FLAGS];      /* "--window" */
    const char *value[CMD_MAX_SPEC_FLAGS];
} cmd_spec_args;

/* getopt_long `val` of a fit-spec flag: CMD_SPEC_OPT + its index in the option table. */
#define CMD_SPEC_OPT 1000
/* Every fit-spec flag, first in the option table of a command that takes them all. */
#define CMD_SPEC_OPTIONS                                                 \
    { "free", required_argument, NULL, CMD_SPEC_OPT + 0 },               \
    { "bounds", required_argument, NULL, CMD_SPEC_OPT + 1 },             \
    { "window", required_argument, NULL, CMD_SPEC_OPT + 2 },             \
    { "integrator", required_argument, NULL, CMD_SPEC_OPT + 3 },         \
    { "substeps", required_argument, NULL, CMD_SPEC_OPT + 4 },           \
    { "max-dt", required_argument, NULL, CMD_SPEC_OPT + 5 },             \
    { "columns", required_argument, NULL, CMD_SPEC_OPT + 6 },            \
    { "scale", required_argument, NULL, CMD_SPEC_OPT + 7 },              \
    { "max-iter", required_argument, NULL, CMD_SPEC_OPT + 8 },           \
    { "ftol-rel", required_argument, NULL, CMD_SPEC_OPT + 9 },           \
    { "time-limit", required_argument, NULL, CMD_SPEC_OPT + 10 },        \
    { "start", required_argument, NULL, CMD_SPEC_OPT + 11 },             \
    { "threads", required_argument, NULL, CMD_SPEC_OPT + 12 },           \
    { "start-velocity", required_argument, NULL, CMD_SPEC_OPT + 13 },    \
    { "smoothing", required_argument, NULL, CMD_SPEC_OPT + 14 },         \
    { "contact", required_argument, NULL, CMD_SPEC_OPT + 15 }
/* Record option `opt` (a fit-spec flag) with its value; 0, or -1 if there are too many. */
int cmd_spec_add(cmd_spec_args *a, const struct option *opt, const char *value);
/* fitspec_init, read a->path if given, then apply the flags over it. */
int cmd_spec_build(fitspec *s, const cmd_spec_args *a, sid_error *err);
/* robot_json_model, then the spec's settings that belong to the model (its contact model), so
 * every command simulates the robot the spec describes. */
int cmd_spec_model(const fitspec *s, const char *robot, sid_model **m, double **theta, cJSON **doc, sid_error *err);

/* Print doc on stdout (jsonfile_write) and free it; EXIT_OK, or EXIT_INPUT if memory ran out. */
int cmd_print_json(cJSON *doc);

#endif
