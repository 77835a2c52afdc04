/* status.c — status codes, error messages and the counted allocator.
 * Allocation is counted so that a test can prove the simulation step loop allocates nothing. */
#include "sid.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

sid_status sid_error_set(sid_error *err, sid_status s, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->status = s;
    }
    return s;
}

void sid_error_prefix(sid_error *err, const char *fmt, ...)
{
    if (!err) return;
    char prefix[256], old[sizeof err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    /* Truncation is acceptable for a message; build it piecewise so the compiler can see it. */
    size_t n = strlen(prefix);
    if (n > sizeof err->msg - 3) n = sizeof err->msg - 3;
    memcpy(err->msg, prefix, n);
    memcpy(err->msg + n, ": ", 2);
    const size_t room = sizeof err->msg - n - 3;
    const size_t k = strnlen(old, room);
    memcpy(err->msg + n + 2, old, k);
    err->msg[n + 2 + k] = 0;
}

const char *sid_status_str(sid_status s)
{
    switch (s) {
    case SID_OK: return "ok";
    case SID_ERR_INPUT: return "invalid input";
    case SID_ERR_NONFINITE: return "non-finite value";
    case SID_ERR_SINGULAR: return "singular mass matrix";
    case SID_ERR_NOMEM: return "out of memory";
    case SID_ERR_NUMERIC: return "numerical failure";
    case SID_ERR_INTERRUPTED: return "interrupted";
    }
    return "unknown status";
}

static long alloc_count;

void *sid_alloc(size_t n)
{
    alloc_count++;
    return calloc(1, n ? n : 1);
}

void sid_free(void *p) { free(p); }

long sid_alloc_count(void) { return alloc_count; }
