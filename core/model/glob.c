/* glob.c — the one pattern matcher for parameter names (--free, bounds, --set, tests).
 *
 * Parameter names hold literal brackets as indices ("links.arm.com[2]", "gravity[0]"), so
 * brackets are not character classes here, unlike fnmatch: '*' matches any run of characters,
 * dots included (a name's parts are not path components), '?' any one character, '\' makes the
 * next character literal, and everything else matches itself. Linear-time greedy matching with
 * one backtrack point (the last '*'), no allocation. */
#include "sid.h"

int sid_glob_match(const char *pattern, const char *name)
{
    const char *p = pattern, *n = name, *star = NULL, *resume = NULL;
    while (*n) {
        if (*p == '*') {
            /* remember where the run would continue if what follows fails to match */
            star = ++p;
            resume = n;
        } else if (*p == '?' || (*p == '\\' && p[1] == *n) || (*p != '\\' && *p == *n && *p)) {
            p += *p == '\\' ? 2 : 1;
            n++;
        } else if (star) {
            p = star;
            n = ++resume;
        } else {
            return 0;
        }
    }
    while (*p == '*') p++;
    return *p == '\0';
}
