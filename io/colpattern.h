/* colpattern.h — one column-map entry for every joint: "q.*": "pos_{joint}".
 *
 * A key with '*' or '?' is a pattern over logical column names (sid_glob_match); its value
 * is a header template in which {joint} is the joint's name, {coord} the coordinate's
 * ("base.qw" for a free joint, the joint's name otherwise), {index} the joint's 0-based
 * place among the moving joints of robot.json and {index1} the 1-based one. "{{" and "}}"
 * are literal braces.
 */
#ifndef CLI_COLPATTERN_H
#define CLI_COLPATTERN_H

#include <stddef.h>

/* Is key a pattern ('*' or '?' not escaped by '\\') rather than one logical name? */
int colpattern_is_pattern(const char *key);

/* 0 if every brace of tmpl belongs to a placeholder; else -1 with why (n bytes) saying
 * what is wrong. */
int colpattern_check(const char *tmpl, char *why, size_t n);

/* tmpl with its placeholders filled in, into out (n bytes). 0, or -1 if it does not fit. */
int colpattern_expand(const char *tmpl, const char *joint, const char *coord, int index,
                      char *out, size_t n);

#endif
