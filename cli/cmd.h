/* cmd.h — the subcommands and what they share: usage errors, the fit spec, output.
 *
 * A command reads top to bottom: parse options (cmd_parse, options.h), load, run, write,
 * return an exit code (diag.h). Each is called with argv[0] = its name; `--help` prints its
 * help on stdout.
 */
#ifndef CLI_CMD_H
#define CLI_CMD_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "fitspec.h"
#include "options.h"
#include "sid.h"

int cmd_params(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_simulate(int argc, char **argv);
int cmd_fit(int argc, char **argv);
int cmd_grad(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_excite(int argc, char **argv);

/* Print "sysid: error: MSG", c's usage line and "Try 'sysid CMD --help'." on stderr;
 * returns EXIT_INPUT. */
int cmd_usage_error(const cmd_info *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* fitspec_init, read a->path if given, then apply the flags over it. */
int cmd_spec_build(fitspec *s, const cmd_spec_args *a, sid_error *err);
/* robot_model (any robot format), then the spec's settings that belong to the model (its contact model), so
 * every command simulates the robot the spec describes. */
int cmd_spec_model(const fitspec *s, const char *robot, sid_model **m, double **theta, cJSON **doc, sid_error *err);

/* Print doc on stdout (jsonfile_write) and free it; EXIT_OK, or EXIT_INPUT if memory ran out. */
int cmd_print_json(cJSON *doc);

#endif
