/* progress.c — in-place, rate-limited or every-step progress lines (progress.h). */
#include "progress.h"
#include "sid.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

progress_mode progress_mode_for(int quiet, int verbose)
{
    if (quiet)
        return PROGRESS_QUIET;
    if (verbose)
        return PROGRESS_EVERY;
    return isatty(2) ? PROGRESS_TTY : PROGRESS_LINES;
}

void progress_begin(progress *p, progress_mode mode)
{
    p->mode = mode;
    p->t0 = sid_clock_seconds();
    p->last = -1e300;
    p->drawn = p->pending = 0;
    p->line[0] = '\0';
}

static void show(progress *p)
{
    if (p->mode == PROGRESS_TTY) {
        fprintf(stderr, "\r%s\033[K", p->line);
        p->drawn = 1;
    } else {
        fprintf(stderr, "%s\n", p->line);
    }
    fflush(stderr);
    p->pending = 0;
}

void progress_update(progress *p, const char *fmt, ...)
{
    if (p->mode == PROGRESS_QUIET)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->line, sizeof p->line, fmt, ap);
    va_end(ap);
    p->pending = 1;
    /* a terminal redraws cheaply; a log file keeps every line, so it gets one a second */
    const double every = p->mode == PROGRESS_TTY ? 0.1 : p->mode == PROGRESS_LINES ? 1.0 : 0;
    const double t = sid_clock_seconds();
    if (t - p->last >= every) {
        p->last = t;
        show(p);
    }
}

void progress_end(progress *p)
{
    if (p->mode == PROGRESS_QUIET)
        return;
    if (p->pending)
        show(p);
    if (p->drawn)
        fputc('\n', stderr);
    p->drawn = 0;
}
