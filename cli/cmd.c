/* cmd.c — helpers every subcommand uses: usage errors, the fit spec and its model, JSON out. */
#include "cmd.h"

#include <stdarg.h>
#include <string.h>

#include "diag.h"
#include "jsonfile.h"
#include "robot_json.h"
#include "robot_load.h"

void cmd_put_names(FILE *f, const char *text)
{
    static const struct { const char *mark; const char *(*name)(int); } table[] = {
        { CMD_INTEGRATORS, sid_integrator_name },
        { CMD_CONTACTS, sid_contact_model_name },
    };
    while (*text) {
        const char *next = strchr(text, '{');
        if (!next) next = text + strlen(text);
        fwrite(text, 1, (size_t)(next - text), f);
        text = next;
        if (!*text) break;
        size_t t = 0;
        while (t < sizeof table / sizeof table[0] && strncmp(text, table[t].mark, strlen(table[t].mark))) t++;
        if (t == sizeof table / sizeof table[0]) {
            fputc(*text++, f);
            continue;
        }
        for (int i = 0; table[t].name(i); i++) fprintf(f, "%s%s", i ? "|" : "", table[t].name(i));
        text += strlen(table[t].mark);
    }
}

int cmd_usage_error(const cmd_info *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("sysid: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\nusage: ", stderr);
    cmd_put_names(stderr, c->usage);
    fprintf(stderr, "\nTry 'sysid %s --help'.\n", c->name);
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
