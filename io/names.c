/* names.c — the choices a message expects, from a name table (names.h). */
#include "names.h"

#include <stdio.h>
#include <string.h>

const char *names_choice(char *buf, size_t n, const char *(*name)(int), int quoted)
{
    const char *q = quoted ? "\"" : "";
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; name(i) && len < n; i++) {
        const char *sep = i == 0 ? "" : name(i + 1) ? ", " : " or ";
        const int w = snprintf(buf + len, n - len, "%s%s%s%s", sep, q, name(i), q);
        if (w < 0) break;
        len += (size_t)w;
    }
    return buf;
}

const char *param_key(sid_param_kind kind)
{
    const char *key = sid_param_row_of(kind, 0)->key, *dot = strrchr(key, '.');
    return dot ? dot + 1 : key;
}
