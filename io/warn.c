/* warn.c — the warning sink: format a message and hand it to the program's callback. */
#include "warn.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static sid_io_warn_fn sink;
static void *sink_ctx;
static int muted;

void sid_io_set_warn(sid_io_warn_fn fn, void *ctx)
{
    sink = fn;
    sink_ctx = ctx;
}

int sid_io_warn_enabled(void)
{
    return sink && !muted;
}

int sid_io_warn_mute(int mute)
{
    const int was = muted;
    muted = mute;
    return was;
}

static void emit(sid_io_msg_kind kind, const char *fmt, va_list ap)
{
    if (!sid_io_warn_enabled())
        return;
    char small[512], *msg = small;
    va_list again;
    va_copy(again, ap);
    const int n = vsnprintf(small, sizeof small, fmt, ap);
    /* Messages quote file names and JSON paths of any length: never cut one short. */
    if (n >= (int)sizeof small) {
        msg = malloc((size_t)n + 1);
        if (msg)
            vsnprintf(msg, (size_t)n + 1, fmt, again);
        else
            msg = small;   /* out of memory: the truncated text beats none */
    }
    va_end(again);
    if (n >= 0)
        sink(sink_ctx, kind, msg);
    if (msg != small)
        free(msg);
}

void sid_io_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit(SID_IO_WARNING, fmt, ap);
    va_end(ap);
}

void sid_io_note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit(SID_IO_NOTE, fmt, ap);
    va_end(ap);
}
