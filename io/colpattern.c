/* colpattern.c — column-map patterns and header templates (colpattern.h). */
#include "colpattern.h"

#include <stdio.h>
#include <string.h>

int colpattern_is_pattern(const char *key)
{
    for (const char *s = key; *s; s++) {
        if (*s == '\\' && s[1]) {
            s++;
            continue;
        }
        if (*s == '*' || *s == '?')
            return 1;
    }
    return 0;
}

static const char *const placeholder[] = { "{joint}", "{coord}", "{index}", "{index1}" };

/* Which placeholder starts at s, or -1. */
static int which(const char *s)
{
    for (int i = 0; i < 4; i++)
        if (strncmp(s, placeholder[i], strlen(placeholder[i])) == 0)
            return i;
    return -1;
}

int colpattern_check(const char *tmpl, char *why, size_t n)
{
    for (const char *s = tmpl; *s; s++) {
        if ((s[0] == '{' && s[1] == '{') || (s[0] == '}' && s[1] == '}')) {
            s++;
            continue;
        }
        if (*s == '}') {
            snprintf(why, n, "a '}' that closes no placeholder (write '}}' for a brace)");
            return -1;
        }
        if (*s != '{')
            continue;
        int p = which(s);
        if (p < 0) {
            const char *close = strchr(s, '}');
            int len = close ? (int)(close - s) + 1 : (int)strlen(s);
            snprintf(why, n, "unknown placeholder '%.*s' (expected {joint}, {coord}, {index} or "
                     "{index1}; '{{' for a brace)", len > 40 ? 40 : len, s);
            return -1;
        }
        s += strlen(placeholder[p]) - 1;
    }
    return 0;
}

int colpattern_expand(const char *tmpl, const char *joint, const char *coord, int index,
                      char *out, size_t n)
{
    size_t k = 0;
    for (const char *s = tmpl; *s; s++) {
        char num[16];
        const char *put = NULL;
        int p = *s == '{' ? which(s) : -1;
        if ((s[0] == '{' && s[1] == '{') || (s[0] == '}' && s[1] == '}')) {
            num[0] = *s++;
            num[1] = '\0';
            put = num;
        } else if (p == 0) {
            put = joint;
        } else if (p == 1) {
            put = coord;
        } else if (p >= 2) {
            snprintf(num, sizeof num, "%d", index + (p == 3));
            put = num;
        }
        if (p >= 0)
            s += strlen(placeholder[p]) - 1;
        size_t len = put ? strlen(put) : 1;
        if (k + len >= n)
            return -1;
        memcpy(out + k, put ? put : s, len);
        k += len;
    }
    out[k] = '\0';
    return 0;
}
