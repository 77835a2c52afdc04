/* cmd.c — helpers every subcommand uses: usage errors and fit-spec flags. */
#include "cmd.h"

#include <stdarg.h>
#include <string.h>

#include "diag.h"
#include "jsonfile.h"
#include "robot_json.h"

int cmd_usage_error(const char *cmd, const char *usage, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("sysid: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nusage: %s\nTry 'sysid %s --help'.\n", usage, cmd);
    return EXIT_INPUT;
}

int cmd_bad_option(const char *cmd, const char *usage, int c, char **argv)
{
    const char *arg = argv[optind - 1];
    if (c == ':')
        return cmd_usage_error(cmd, usage, "option '%s' needs a value", arg);
    if (optopt && optopt != '?')
        return cmd_usage_error(cmd, usage, "unknown option '-%c'", optopt);
    return cmd_usage_error(cmd, usage, "unknown option '%s'", arg);
}

int cmd_spec_add(cmd_spec_args *a, const struct option *opt, const char *value)
{
    if (a->n >= CMD_MAX_SPEC_FLAGS)
        return -1;
    /* The long names are static strings; "--" is put back for messages. */
    static char names[CMD_MAX_SPEC_FLAGS][32];
    snprintf(names[a->n], sizeof names[a->n], "--%s", opt->name);
    a->flag[a->n] = names[a->n];
    a->value[a->n] = value;
    a->n++;
    return 0;
}

int cmd_spec_build(fitspec *s, const cmd_spec_args *a, sid_error *err)
{
    fitspec_init(s);
    if (a->path && fitspec_load(s, a->path, err))
        return -1;
    for (int i = 0; i < a->n; i++)
        if (fitspec_apply_flag(s, a->flag[i], a->value[i], err))
            return -1;
    return 0;
}

int cmd_spec_model(const fitspec *s, const char *robot, sid_model **m, double **theta, cJSON **doc, sid_error *err)
{
    if (robot_json_model(robot, m, theta, doc, err))
        return -1;
    fitspec_apply_model(s, *m, robot);
    return 0;
}

int cmd_print_json(cJSON *doc)
{
    const int rc = jsonfile_write(stdout, doc);
    cJSON_Delete(doc);
    if (rc) {
        cli_error("out of memory");
        return EXIT_INPUT;
    }
    return EXIT_OK;
}
