/* student_t.h — quantiles of Student's t distribution, for intervals whose variance is
 * estimated from few independent pieces (the sandwich over windows, covariance.c). */
#ifndef SID_STUDENT_T_H
#define SID_STUDENT_T_H

/* The regularized incomplete beta function I_x(a, b), a, b > 0, 0 <= x <= 1. */
double sid_incomplete_beta(double x, double a, double b);
/* P(T <= t) for T ~ Student t with nu > 0 degrees of freedom (not necessarily an integer). */
double sid_student_t_cdf(double t, double nu);
/* The t with P(T <= t) = prob, 0.5 <= prob < 1, nu > 0; nu = HUGE_VAL: the normal quantile. */
double sid_student_t_quantile(double prob, double nu);

#endif
