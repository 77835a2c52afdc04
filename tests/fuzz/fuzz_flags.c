/* fuzz_flags.c — libFuzzer harness for the command line: the option table and its parser
 * (options.c, cmd_parse) for any command, then every fit-spec flag it kept through
 * fitspec_apply_flag and the selection of a double pendulum's parameters, as a command
 * would. The first byte picks the command; the rest is argv, NUL-separated. Bad flags must
 * give a usage error, never a crash, a leak or undefined behaviour. */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "fuzz_util.h"
#include "robot_json.h"
#include "robot_load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const int bits[] = {CMD_PARAMS, CMD_VALIDATE, CMD_SIMULATE, CMD_FIT, CMD_GRAD, CMD_EVAL, CMD_DIFF};

#define MAX_ARGS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static sid_model *arm;
    static double *theta;
    sid_error err = {0};
    if (!arm) {
        if (robot_model("data/double_pendulum/robot.json", &arm, &theta, NULL, &err)) abort();
        if (!freopen("/dev/null", "w", stdout)) abort();   /* --help */
    }
    if (size < 1) return 0;
    const cmd_info info = {"fuzz", bits[data[0] % 7], "sysid fuzz [OPTIONS]", "", NULL};
    static char buf[MAX_ARGS][512];
    char *argv[MAX_ARGS + 1];
    int argc = 0;
    argv[argc++] = strcpy(buf[0], "fuzz");
    const uint8_t *p = data + 1, *end = data + size;
    while (argc < MAX_ARGS && fuzz_piece(&p, end, buf[argc], sizeof buf[argc])) argv[argc] = buf[argc], argc++;
    argv[argc] = NULL;
    optind = 0;   /* getopt's full reset: each input is a new process's command line */
    cmd_args a;
    if (cmd_parse(&info, argc, argv, &a) != CMD_RUN) return 0;
    a.spec.path = NULL;   /* -c would read any file */
    fitspec s;
    if (cmd_spec_build(&s, &a.spec, &err) == 0) {
        fitspec_selection sel = {0};
        if (fitspec_select(&s, arm, theta, &sel, &err) == 0) {
            sid_loss_opts lo;
            sid_fit_opts fo;
            fitspec_loss_opts(&s, &lo);
            fitspec_fit_opts(&s, &sel, &fo);
            fitspec_selection_free(&sel);
        }
    }
    fitspec_free(&s);
    return 0;
}
