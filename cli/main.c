/* main.c — `sysid COMMAND ...`: dispatch through the command table, then make sure what
 * went to stdout really got there (a full disk must be an error, not a silent success).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "diag.h"
#include "sid.h"

static const struct cmd_struct {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
} commands[] = {
    { "params", cmd_params, "list every parameter of a robot with its value and unit" },
    { "validate", cmd_validate, "check a robot and its logs, and summarise them" },
    { "simulate", cmd_simulate, "replay a log's commands; the simulated trajectory as CSV" },
    { "fit", cmd_fit, "identify parameters from logs: fitted robot, report, what the data determine" },
    { "grad", cmd_grad, "the loss and its gradient per parameter; --check against finite differences" },
    { "eval", cmd_eval, "loss and per-joint RMSE of a robot replaying logs" },
    { "diff", cmd_diff, "parameters that differ between two robots" },
    { "import", cmd_import, "convert a URDF or MJCF robot into robot.json" },
    { "export", cmd_export, "write fitted values back into a copy of the URDF or MJCF file" },
    { "report", cmd_report, "rebuild a fit's HTML page from its report, robot and logs" },
    { "excite", cmd_excite, "design an excitation: the command a fit learns most from, within limits" },
};
#define NCOMMANDS (int)(sizeof commands / sizeof commands[0])

static const char usage[] = "sysid [--help] [--version] COMMAND [ARGS]";

static void help(void)
{
    printf("usage: %s\n\n"
           "Calibrate robot simulation models against logged trajectories.\n\n"
           "Commands:\n", usage);
    for (int i = 0; i < NCOMMANDS; i++)
        printf("  %-10s %s\n", commands[i].name, commands[i].summary);
    printf("\n'sysid help COMMAND' or 'sysid COMMAND --help' describes a command.\n\n"
           "Exit status:\n"
           "  0    success\n"
           "  1    finished, but a quality gate failed\n"
           "  2    usage error or invalid input (nothing written)\n"
           "  3    numerical failure (diverged, non-finite, singular)\n"
           "  130  interrupted\n");
}

static const struct cmd_struct *find(const char *name)
{
    for (int i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

static int run(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s\nTry 'sysid --help'.\n", usage);
        return EXIT_INPUT;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 ||
        (strcmp(name, "help") == 0 && argc == 2)) {
        help();
        return EXIT_OK;
    }
    if (strcmp(name, "--version") == 0) {
        printf("sysid %s\n", SID_VERSION);
        return EXIT_OK;
    }
    if (strcmp(name, "help") == 0) {
        /* `sysid help CMD` is `sysid CMD --help`: one text, one place. */
        const struct cmd_struct *c = find(argv[2]);
        if (!c || argc > 3) {
            if (c)
                cli_error("'sysid help' takes one command, got %d arguments", argc - 2);
            else
                cli_error("'%s' is not a sysid command; see 'sysid --help'", argv[2]);
            return EXIT_INPUT;
        }
        char *hargv[] = { argv[2], "--help", NULL };
        return c->fn(2, hargv);
    }
    const struct cmd_struct *c = find(name);
    if (!c) {
        cli_error("'%s' is not a sysid command; see 'sysid --help'", name);
        return EXIT_INPUT;
    }
    return c->fn(argc - 1, argv + 1);
}

int main(int argc, char **argv)
{
    cli_diag_install();
    int rc = run(argc, argv);
    /* fclose reports what buffered writes could not: ENOSPC, EPIPE, EIO. */
    if (fflush(stdout) != 0 || ferror(stdout) || fclose(stdout) != 0) {
        cli_error("cannot write to standard output: %s", strerror(errno));
        if (rc == EXIT_OK)
            rc = EXIT_INPUT;
    }
    return rc;
}
