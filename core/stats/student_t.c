/* student_t.c — Student's t distribution through the regularized incomplete beta function:
 * P(|T| > t) = I_{nu / (nu + t^2)}(nu / 2, 1 / 2); the quantile by bisection on the CDF, which
 * is monotone, so it cannot fail to converge (a few dozen evaluations, once per parameter). */
#include "student_t.h"

#include <math.h>

/* The continued fraction of I_x(a, b) (modified Lentz), convergent for x < (a + 1) / (a + b + 2). */
static double beta_fraction(double x, double a, double b)
{
    const double tiny = 1e-300;
    double c = 1, d = 1 - (a + b) * x / (a + 1);
    d = 1 / (fabs(d) < tiny ? tiny : d);
    double f = d;
    for (int m = 1; m <= 500; m++) {
        for (int half = 0; half < 2; half++) {
            const double num = half ? -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
                                    : m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
            d = 1 + num * d;
            d = 1 / (fabs(d) < tiny ? tiny : d);
            c = 1 + num / c;
            if (fabs(c) < tiny) c = tiny;
            f *= c * d;
            if (half && fabs(c * d - 1) < 1e-15) return f;
        }
    }
    return f;
}

double sid_incomplete_beta(double x, double a, double b)
{
    if (!(x > 0)) return 0;
    if (!(x < 1)) return 1;
    const double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
    if (x < (a + 1) / (a + b + 2)) return front * beta_fraction(x, a, b) / a;
    return 1 - front * beta_fraction(1 - x, b, a) / b;   /* the symmetry I_x(a, b) = 1 - I_{1-x}(b, a) */
}

double sid_student_t_cdf(double t, double nu)
{
    if (isinf(nu)) return 0.5 * erfc(-t / sqrt(2));
    const double tail = 0.5 * sid_incomplete_beta(nu / (nu + t * t), 0.5 * nu, 0.5);
    return t >= 0 ? 1 - tail : tail;
}

double sid_student_t_quantile(double prob, double nu)
{
    if (!(prob > 0.5)) return 0;
    double lo = 0, hi = 1;
    while (sid_student_t_cdf(hi, nu) < prob && hi < 1e12) hi *= 2;
    for (int k = 0; k < 200 && hi - lo > 1e-12 * hi; k++) {
        const double mid = 0.5 * (lo + hi);
        if (sid_student_t_cdf(mid, nu) < prob) lo = mid;
        else hi = mid;
    }
    return 0.5 * (lo + hi);
}
