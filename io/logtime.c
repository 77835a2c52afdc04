/* logtime.c — exact decimal differences of timestamps (logtime.h). */
#include "logtime.h"

#include <stdlib.h>
#include <string.h>

#define MAX_EXP 400        /* |exponent| accepted; beyond, doubles do as well */
#define MAX_ALIGNED 420    /* digits of an aligned operand */

int logtime_parse(const char *s, size_t len, char point, logtime *t)
{
    size_t i = 0;
    int any = 0;
    memset(t, 0, sizeof *t);
    if (i < len && (s[i] == '+' || s[i] == '-'))
        t->neg = s[i++] == '-';
    for (int frac = 0; i < len; i++) {
        char c = s[i];
        if (c == point && !frac) {
            frac = 1;
            continue;
        }
        if (c < '0' || c > '9')
            break;
        any = 1;
        if (frac)
            t->exp--;
        if (c == '0' && t->ndig == 0)
            continue;   /* a leading zero */
        if (t->ndig == LOGTIME_DIGITS)
            return -1;
        t->dig[t->ndig++] = c;
    }
    if (!any)
        return -1;
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        int sign = 1, e = 0, edig = 0;
        i++;
        if (i < len && (s[i] == '+' || s[i] == '-'))
            sign = s[i++] == '-' ? -1 : 1;
        for (; i < len && s[i] >= '0' && s[i] <= '9'; i++, edig++)
            if ((e = 10 * e + (s[i] - '0')) > MAX_EXP)
                return -1;
        if (!edig)
            return -1;
        t->exp += sign * e;
    }
    if (i != len || t->exp > MAX_EXP || t->exp < -MAX_EXP)
        return -1;
    if (t->ndig == 0)
        t->neg = 0;   /* -0 is 0 */
    return 0;
}

/* x's digits followed by x->exp - e zeros, right-aligned in out[0..n) as numbers 0..9. */
static void align(const logtime *x, int e, unsigned char *out, int n)
{
    int len = x->ndig ? x->ndig + x->exp - e : 0;
    memset(out, 0, (size_t)n);
    for (int k = 0; k < x->ndig; k++)
        out[n - len + k] = (unsigned char)(x->dig[k] - '0');
}

int logtime_diff(const logtime *a, const logtime *b, int shift, double *out)
{
    int e = a->exp < b->exp ? a->exp : b->exp;
    if (!a->ndig)
        e = b->exp;
    if (!b->ndig)
        e = a->exp;
    int la = a->ndig ? a->ndig + a->exp - e : 0, lb = b->ndig ? b->ndig + b->exp - e : 0;
    int n = (la > lb ? la : lb) + 1;   /* one more for the carry of a sum */
    if (n > MAX_ALIGNED)
        return -1;
    unsigned char x[MAX_ALIGNED], y[MAX_ALIGNED], r[MAX_ALIGNED];
    align(a, e, x, n);
    align(b, e, y, n);
    int neg = a->neg;
    if (a->neg != b->neg) {
        /* a - b = sign(a) (|a| + |b|) */
        int carry = 0;
        for (int k = n - 1; k >= 0; k--) {
            int d = x[k] + y[k] + carry;
            r[k] = (unsigned char)(d % 10);
            carry = d / 10;
        }
    } else {
        /* a - b = sign(a) (|a| - |b|), or the other way round when |b| > |a| */
        if (memcmp(x, y, (size_t)n) < 0) {
            unsigned char tmp[MAX_ALIGNED];
            memcpy(tmp, x, (size_t)n);
            memcpy(x, y, (size_t)n);
            memcpy(y, tmp, (size_t)n);
            neg = !neg;
        }
        int borrow = 0;
        for (int k = n - 1; k >= 0; k--) {
            int d = x[k] - y[k] - borrow;
            borrow = d < 0;
            r[k] = (unsigned char)(d + 10 * borrow);
        }
    }
    char text[MAX_ALIGNED + 16];
    int k = 0, j = 0;
    while (k < n - 1 && r[k] == 0)
        k++;
    if (neg)
        text[j++] = '-';
    for (; k < n; k++)
        text[j++] = (char)('0' + r[k]);
    /* the exponent by hand: this runs for every sample, snprintf would cost more than all */
    int ex = e + shift, nd = 0;
    char rev[12];
    text[j++] = 'e';
    if (ex < 0) {
        text[j++] = '-';
        ex = -ex;
    }
    do
        rev[nd++] = (char)('0' + ex % 10);
    while ((ex /= 10) > 0);
    while (nd > 0)
        text[j++] = rev[--nd];
    text[j] = '\0';
    /* strtod rounds correctly: the one rounding of the whole computation */
    *out = strtod(text, NULL);
    return 0;
}
