/* textbuf.c — the growing text of a page. */
#include "textbuf.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numfmt.h"

static int reserve(textbuf *b, size_t more)
{
    if (b->bad)
        return -1;
    if (b->len + more + 1 <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 1 << 16;
    while (cap < b->len + more + 1)
        cap *= 2;
    char *s = realloc(b->s, cap);
    if (!s) {
        b->bad = 1;
        return -1;
    }
    b->s = s;
    b->cap = cap;
    return 0;
}

void tb_printf(textbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char tmp[512];
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0 || reserve(b, (size_t)n))
        return;
    if ((size_t)n < sizeof tmp) {
        memcpy(b->s + b->len, tmp, (size_t)n + 1);
    } else {
        va_start(ap, fmt);
        vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    b->len += (size_t)n;
}

void tb_puts(textbuf *b, const char *s)
{
    size_t n = strlen(s);
    if (reserve(b, n))
        return;
    memcpy(b->s + b->len, s, n + 1);
    b->len += n;
}

void tb_esc(textbuf *b, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&': tb_puts(b, "&amp;"); break;
        case '<': tb_puts(b, "&lt;"); break;
        case '>': tb_puts(b, "&gt;"); break;
        case '"': tb_puts(b, "&quot;"); break;
        case '\'': tb_puts(b, "&#39;"); break;
        default:
            if (reserve(b, 1) == 0) {
                b->s[b->len++] = *s;
                b->s[b->len] = '\0';
            }
        }
    }
}

void tb_exact(textbuf *b, double x)
{
    char buf[NUMFMT_LEN];
    if (!isfinite(x)) {
        tb_puts(b, "null");
        return;
    }
    numfmt(buf, x);
    tb_puts(b, buf);
}

void tb_free(textbuf *b)
{
    free(b->s);
    memset(b, 0, sizeof *b);
}
