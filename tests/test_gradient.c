/* test_gradient.c — every kernel's vector-Jacobian product against central finite
 * differences: RNEA, joint forces, and one whole step of each integrator, with respect to
 * the state (q, v) and every parameter of a robot that has every parameter kind. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "workspace.h"

Suite *gradient_suite(void);

enum { KERNEL_RNEA, KERNEL_FORCE, KERNEL_EULER, KERNEL_RK4 };

typedef struct {
    int kernel;
    sid_model *m;
    sid_workspace *ws;
    double q[64], v[64], a[64], u[64];
    double wq[64], wv[64];   /* the random linear functional of the outputs */
    double *theta;
    double h;
} problem;

/* L = wq . out_q + wv . out_v for the kernel's outputs. */
static double eval(problem *p)
{
    const int nv = sid_model_nv(p->m);
    double o1[64], o2[64];
    sid_error err = {0};
    double L = 0;
    switch (p->kernel) {
    case KERNEL_RNEA:
        sid_inverse_dynamics(p->m, p->theta, p->ws, p->q, p->v, p->a, o1);
        for (int i = 0; i < nv; i++) L += p->wq[i] * o1[i];
        break;
    case KERNEL_FORCE:
        sid_joint_force(p->m, p->theta, p->v, p->u, o1);
        for (int i = 0; i < nv; i++) L += p->wq[i] * o1[i];
        break;
    default:
        ck_assert_int_eq(sid_step(p->m, p->theta, p->ws, p->kernel == KERNEL_EULER ? SID_EULER : SID_RK4, p->h, p->q,
                                  p->v, p->u, o1, o2, &err), SID_OK);
        for (int i = 0; i < nv; i++) L += p->wq[i] * o1[i] + p->wv[i] * o2[i];
    }
    return L;
}

static void analytic(problem *p, double *qbar, double *vbar, double *thetabar)
{
    const int nv = sid_model_nv(p->m);
    sid_error err = {0};
    switch (p->kernel) {
    case KERNEL_RNEA:
        sid_kinematics(p->m, p->theta, p->ws, p->q);
        sid_rnea(p->m, p->theta, p->ws, p->v, p->a, p->ws->c);
        sid_rnea_vjp(p->m, p->theta, p->ws, p->q, p->wq, qbar, vbar, thetabar);
        break;
    case KERNEL_FORCE:
        sid_joint_force_vjp(p->m, p->theta, p->v, p->u, p->wq, vbar, thetabar);
        break;
    default:
        ck_assert_int_eq(sid_step_vjp(p->m, p->theta, p->ws, p->kernel == KERNEL_EULER ? SID_EULER : SID_RK4, p->h,
                                      p->q, p->v, p->u, p->wq, p->wv, qbar, vbar, thetabar, &err), SID_OK);
    }
    (void)nv;
}

/* Central difference of eval() in x[i]; step 1e-6 max(1, |x|) as in STYLE.md. */
static double fd(problem *p, double *x)
{
    const double x0 = *x, e = 1e-6 * fmax(1, fabs(x0));
    *x = x0 + e;
    const double Lp = eval(p);
    *x = x0 - e;
    const double Lm = eval(p);
    *x = x0;
    return (Lp - Lm) / (2 * e);
}

static void run(int kernel, int features, unsigned seed, double tol)
{
    sid_robot_desc *d = tu_random_robot(seed, 6, features);
    problem p = {0};
    sid_error err = {0};
    ck_assert_msg(sid_model_create(&p.m, &p.theta, d, &err) == SID_OK, "%s", err.msg);
    tu_desc_free(d);
    p.ws = sid_workspace_create(p.m);
    p.kernel = kernel;
    p.h = 1e-2;
    const int nv = sid_model_nv(p.m), np = sid_model_nparam(p.m);
    unsigned s = seed + 100;
    for (int i = 0; i < nv; i++) {
        p.q[i] = tu_uniform(&s, -1.5, 1.5);
        p.v[i] = tu_uniform(&s, -2, 2);
        p.a[i] = tu_uniform(&s, -3, 3);
        p.u[i] = tu_uniform(&s, -1, 1);
        p.wq[i] = tu_uniform(&s, -1, 1);
        p.wv[i] = tu_uniform(&s, -1, 1);
    }
    double qbar[64] = {0}, vbar[64] = {0};
    double *thetabar = calloc((size_t)np, sizeof(double));
    analytic(&p, qbar, vbar, thetabar);
    double worst = 0;
    char where[512] = "none";
    for (int i = 0; i < nv; i++) {
        const double eq = tu_rel_err(qbar[i], fd(&p, &p.q[i]), 1e-9), ev = tu_rel_err(vbar[i], fd(&p, &p.v[i]), 1e-9);
        if (eq > worst) worst = eq, snprintf(where, sizeof where, "q[%d]: %.10g", i, qbar[i]);
        if (ev > worst) worst = ev, snprintf(where, sizeof where, "v[%d]: %.10g", i, vbar[i]);
    }
    for (int j = 0; j < np; j++) {
        const double num = fd(&p, &p.theta[j]), e = tu_rel_err(thetabar[j], num, 1e-9);
        if (e > worst)
            worst = e, snprintf(where, sizeof where, "%s: analytic %.10g, fd %.10g", sid_model_param(p.m, j)->name,
                                thetabar[j], num);
    }
    /* a gradient that vanished would pass any comparison: require it to be there */
    double norm = 0;
    for (int j = 0; j < np; j++) norm += thetabar[j] * thetabar[j];
    ck_assert_msg(sqrt(norm) > 1e-3, "parameter gradient norm %g: too small to test", sqrt(norm));
    fprintf(stderr, "gradient kernel %d features %d: worst relative error %.2e at %s\n", kernel, features, worst, where);
    ck_assert_msg(worst <= tol, "kernel %d: relative error %g at %s", kernel, worst, where);
    free(thetabar);
    sid_workspace_free(p.ws);
    sid_model_free(p.m);
    sid_free(p.theta);
}

START_TEST(rnea_vjp) { run(KERNEL_RNEA, TU_ALL, 1, 1e-6); }
END_TEST
START_TEST(joint_force_vjp) { run(KERNEL_FORCE, TU_ALL, 2, 1e-6); }
END_TEST
START_TEST(euler_step_vjp) { run(KERNEL_EULER, TU_ALL, 3, 1e-6); }
END_TEST
START_TEST(rk4_step_vjp) { run(KERNEL_RK4, TU_ALL, 4, 1e-6); }
END_TEST
START_TEST(chain_step_vjp)
{
    run(KERNEL_EULER, TU_FRICTION | TU_MOTORS, 5, 1e-6);
    run(KERNEL_RK4, TU_PRISMATIC | TU_MOTORS, 6, 1e-6);
}
END_TEST

Suite *gradient_suite(void)
{
    Suite *s = suite_create("gradient");
    TCase *tc = tcase_create("kernels");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, rnea_vjp);
    tcase_add_test(tc, joint_force_vjp);
    tcase_add_test(tc, euler_step_vjp);
    tcase_add_test(tc, rk4_step_vjp);
    tcase_add_test(tc, chain_step_vjp);
    suite_add_tcase(s, tc);
    return s;
}
