/* diag.c — error and warning messages on stderr, and the status -> exit code mapping. */
#include "diag.h"
#include "warn.h"

#include <stdarg.h>
#include <stdio.h>

int cli_quiet = 0;

static void vreport(const char *kind, const char *fmt, va_list ap)
{
    fprintf(stderr, "sysid: %s: ", kind);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("error", fmt, ap);
    va_end(ap);
}

void cli_warn(const char *fmt, ...)
{
    if (cli_quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    vreport("warning", fmt, ap);
    va_end(ap);
}

static void io_sink(void *ctx, sid_io_msg_kind kind, const char *msg)
{
    (void)ctx;
    if (kind == SID_IO_NOTE) {
        if (!cli_quiet)
            fprintf(stderr, "%s\n", msg);
    } else {
        cli_warn("%s", msg);
    }
}

void cli_diag_install(void)
{
    sid_io_set_warn(io_sink, NULL);
}

int cli_exit_code(sid_status s)
{
    switch (s) {
    case SID_OK:
        return EXIT_OK;
    case SID_ERR_NONFINITE:
    case SID_ERR_SINGULAR:
    case SID_ERR_NUMERIC:
        return EXIT_NUMERIC;
    case SID_ERR_INPUT:
    case SID_ERR_NOMEM:
    default:
        /* Out of memory also means nothing was written; 2 keeps "3" for numerics. */
        return EXIT_INPUT;
    }
}

int cli_fail(const sid_error *err)
{
    cli_error("%s", err->msg[0] ? err->msg : sid_status_str(err->status));
    return cli_exit_code(err->status);
}
