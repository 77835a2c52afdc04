/* cmd.c — helpers every subcommand uses: usage errors, the fit spec and its model, JSON out. */
#include "cmd.h"

#include <stdarg.h>
#include <string.h>

#include "diag.h"
#include "jsonfile.h"
#include "robot_json.h"
#include "robot_load.h"

const char *cmd_names(const char *text, char *buf, size_t n)
{
    static const struct { const char *mark; const char *(*name)(int); } table[] = {
        { CMD_INTEGRATORS, sid_integrator_name },
        { CMD_CONTACTS, sid_contact_model_name },
    };
    size_t len = 0;
    buf[0] = 0;
    while (*text && len + 1 < n) {
        size_t t = 0;
        while (t < sizeof table / sizeof table[0] && strncmp(text, table[t].mark, strlen(table[t].mark))) t++;
        if (t == sizeof table / sizeof table[0]) {   /* not a placeholder: the character as it is */
            buf[len++] = *text++, buf[len] = 0;
            continue;
        }
        for (int i = 0; table[t].name(i) && len + 1 < n; i++)
            len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? "|" : "", table[t].name(i));
        text += strlen(table[t].mark);
    }
    return buf;
}

int cmd_usage_error(const cmd_info *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("sysid: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    char usage[2048];
    fprintf(stderr, "\nusage: %s\nTry 'sysid %s --help'.\n", cmd_names(c->usage, usage, sizeof usage), c->name);
    return EXIT_INPUT;
}

int cmd_spec_build(fitspec *s, const cmd_spec_args *a, sid_error *err)
{
    fitspec_init(s);
    if (a->path && fitspec_load(s, a->path, err))
        return -1;
    for (int i = 0; i < a->n; i++)
        if (fitspec_apply_flag(s, a->flag[i], a->value[i], err))
            return -1;
    /* only a fit has training logs to choose a window on; eval, grad and validate refuse */
    if (s->window_auto && a->cmd && strcmp(a->cmd, "fit") != 0) {
        int flagged = 0;   /* the last --window decides; else the file said "auto" */
        for (int i = 0; i < a->n; i++)
            if (strcmp(a->flag[i], "--window") == 0)
                flagged = 1;
        sid_error_set(err, SID_ERR_INPUT, "%s%s: only sysid fit chooses the window (by cross-validation on its "
                      "logs); %s has no logs to train on: give --window S", flagged ? "--window auto" : a->path,
                      flagged ? "" : ": window: \"auto\"", a->cmd);
        return -1;
    }
    return 0;
}

int cmd_spec_model(fitspec *s, const char *robot, sid_model **m, double **theta, cJSON **doc, sid_error *err)
{
    if (robot_model(robot, m, theta, doc, err))
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
