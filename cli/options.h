/* options.h — the command line's one option table, its parser and its help.
 *
 * Every flag of every command is one row of the table in options.c: its names, its value,
 * its help line, the commands that take it, and where it lands (a fit-spec flag, kept in
 * order for cmd_spec_build, or a field of cmd_args). cmd_parse walks the table for any
 * command and cmd_help prints the same rows, so a command's help lists exactly the options
 * it accepts. A command's own prose (what it does, its outputs, its exit statuses) stays in
 * its cmd_<name>.c, in cmd_info.
 */
#ifndef CLI_OPTIONS_H
#define CLI_OPTIONS_H

/* Which commands take a row: one bit per command. */
enum {
    CMD_PARAMS = 1 << 0,
    CMD_VALIDATE = 1 << 1,
    CMD_SIMULATE = 1 << 2,
    CMD_FIT = 1 << 3,
    CMD_GRAD = 1 << 4,
    CMD_EVAL = 1 << 5,
    CMD_DIFF = 1 << 6,
    CMD_REPORT = 1 << 7,
    CMD_IMPORT = 1 << 8,
    CMD_EXPORT = 1 << 9,
    CMD_EXCITE = 1 << 10,
};

/* A command as the parser and its help see it. */
typedef struct {
    const char *name;      /* "grad" */
    int bit;               /* CMD_GRAD */
    const char *usage;     /* synopsis, after "usage: " (also printed with usage errors) */
    const char *about;     /* what the command does: help text before the options */
    const char *details;   /* outputs, JSON, exit status: help text after the options */
} cmd_info;

/* Fit-spec flags of a command line, kept in order until the spec file is read. */
#define CMD_MAX_SPEC_FLAGS 64
typedef struct {
    const char *path;                          /* -c FILE, or NULL */
    const char *cmd;                           /* the command's name; NULL: none (report) */
    int n;
    const char *flag[CMD_MAX_SPEC_FLAGS];      /* "--window" */
    const char *value[CMD_MAX_SPEC_FLAGS];
} cmd_spec_args;

/* A repeatable option's values, in order. */
#define CMD_MAX_LIST 256
typedef struct {
    int n;
    const char *v[CMD_MAX_LIST];
} cmd_list;

/* sysid excite's own options: their places in cmd_args.excite. */
enum {
    EXCITE_DURATION, EXCITE_DT, EXCITE_HARMONICS, EXCITE_BASE_FREQ, EXCITE_RAMP, EXCITE_NOISE_Q, EXCITE_NOISE_QD,
    EXCITE_MAX_TORQUE, EXCITE_MAX_VELOCITY, EXCITE_MAX_ANGLE, EXCITE_SEED, EXCITE_MAX_EVALS, EXCITE_CRITERION,
    EXCITE_DESIGN, EXCITE_POSE, EXCITE_NOPT
};

/* Everything a command line says; a command reads the fields its rows fill. */
typedef struct {
    cmd_spec_args spec;        /* -c and the fit-spec flags */
    const char *out;           /* -o FILE */
    const char *report;        /* --report FILE */
    const char *html;          /* --html FILE */
    const char *into;          /* --into ROBOT.urdf|ROBOT.xml */
    const char *wrt;           /* grad --wrt params|commands, or NULL */
    const char *keyframe;      /* simulate, excite --keyframe NAME, or NULL */
    int json, check, in_place, quiet, verbose, balance_inertia;
    double max_rmse, max_loss, tol;    /* -1: not given */
    cmd_list validate;         /* --validate LOG.csv... */
    cmd_list set;              /* --set NAME=VALUE... */
    const char *excite[EXCITE_NOPT];   /* sysid excite's own options, as typed (cmd_excite.c reads them) */
    int nop;                   /* operands: argv without the options */
    char **op;
} cmd_args;

/* cmd_parse's "go on": the command runs (anything else is its exit code). */
#define CMD_RUN (-1)

/* Parse argv (argv[0] is the command's name) by the rows c takes. CMD_RUN with *a filled
 * (and -q applied to cli_quiet); EXIT_OK after --help; EXIT_INPUT after a usage error. */
int cmd_parse(const cmd_info *c, int argc, char **argv, cmd_args *a);
/* Print c's help on stdout: usage, about, the options it takes, details. */
void cmd_help(const cmd_info *c);

#endif
