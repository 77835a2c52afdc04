/* logtime.h — a log's time column read exactly: timestamps as decimals, differences exact.
 *
 * Epoch timestamps do not fit a double to the precision of their steps: 1700000000123456789
 * ns has 19 digits, a double 15 to 17, so reading it as a double and then subtracting the
 * start turns a 1 ms step into anything from 0.99993 to 1.0004 ms. Here a cell is kept as its
 * decimal digits and exponent, the first sample's time is subtracted digit by digit, and only
 * the difference, with the unit's power of ten applied, is rounded to a double (once).
 */
#ifndef CLI_LOGTIME_H
#define CLI_LOGTIME_H

#include <stddef.h>

#define LOGTIME_DIGITS 40

typedef struct {
    int neg;
    int ndig;                    /* significant digits, no leading zeros; 0: the value is 0 */
    char dig[LOGTIME_DIGITS];    /* '0'..'9' */
    int exp;                     /* value = (neg ? -1 : 1) * dig * 10^exp */
} logtime;

/* Read the len bytes at s as a plain decimal: [+-]DIGITS[pDIGITS][(e|E)[+-]DIGITS], with
 * point p ('.', or ',' for a decimal comma). 0, or -1 when s is not one or has more than
 * LOGTIME_DIGITS significant digits (read it as a double instead). */
int logtime_parse(const char *s, size_t len, char point, logtime *t);

/* (a - b) * 10^shift rounded to the nearest double, in *out. 0, or -1 when the two are too
 * far apart in scale to align (over a few hundred digits; use doubles). */
int logtime_diff(const logtime *a, const logtime *b, int shift, double *out);

#endif
