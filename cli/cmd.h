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

/* The logs of one fit, for cmd_fit_embedding.load_logs. */
typedef struct {
    const sid_model *m;
    const fitspec *spec;
    int nlog, nval;               /* logs to fit, then --validate logs */
    const char *const *path;      /* (nlog + nval) */
    const char *all_why;          /* NULL, or what needs every log on every rank */
    const char *first_why;        /* NULL, or what needs every log on the first rank (it writes) */
    sid_traj **tr;                /* (nlog + nval) out: the logs, or stubs */
    char (*sha256)[65];           /* (nlog + nval) out: each log's digest for the report (readfile.h) */
} cmd_fit_logs;

/* What a program that runs `sysid fit` as one of several processes (mpi/main.c: the ranks of
 * one fit) changes; all zero (the default) is plain `sysid fit`. With interrupt, the fit reads
 * that flag (the ranks' agreed one) instead of its own signal flag, which cmd_fit_signal()
 * returns, and refuses a time limit (each rank's clock would stop a different iteration). With
 * no_output, everything is computed and nothing printed or written (the ranks but 0); with
 * before_write, every rank meets the others before rank 0 writes (one that failed stops all). */
typedef struct {
    volatile const int *interrupt;
    int no_output;
    void (*before_write)(void);   /* called where the outputs would be written (may not return) */
    /* With load_logs, the logs are its to read (mpi/shard_read.c: each rank only those its
     * windows need, stubs of the others, sid_traj_stub): returns 0 with every tr[j] and
     * sha256[j] set, -1 with err set, or 1: read them all here as sysid fit does (all_why says why the
     * fit needs every log's data). */
    int (*load_logs)(const cmd_fit_logs *l, sid_error *err);
} cmd_fit_embedding;
extern cmd_fit_embedding cmd_fit_embed;
int cmd_fit_signal(void);

/* Usage lines and option values name the integrators and the contact models by these
 * placeholders; cmd_names writes text into buf (n bytes, truncated) with each spelled from
 * core's table ("euler|rk4|implicitfast"), and returns buf. */
#define CMD_INTEGRATORS "{integrators}"
#define CMD_CONTACTS "{contacts}"
const char *cmd_names(const char *text, char *buf, size_t n);

/* Print "sysid: error: MSG", c's usage line and "Try 'sysid CMD --help'." on stderr;
 * returns EXIT_INPUT. */
int cmd_usage_error(const cmd_info *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* fitspec_init, read a->path if given, then apply the flags over it. */
int cmd_spec_build(fitspec *s, const cmd_spec_args *a, sid_error *err);
/* robot_model (any robot format), then the spec's settings that belong to the model (its contact model), so
 * every command simulates the robot the spec describes. */
int cmd_spec_model(fitspec *s, const char *robot, sid_model **m, double **theta, cJSON **doc, sid_error *err);

/* Print doc on stdout (jsonfile_write) and free it; EXIT_OK, or EXIT_INPUT if memory ran out. */
int cmd_print_json(cJSON *doc);

#endif
