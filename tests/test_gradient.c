/* test_gradient.c — every kernel's vector-Jacobian product against central finite
 * differences: RNEA, joint forces, and one whole step of each integrator, with respect to
 * the state (q, v) and every parameter of a robot that has every parameter kind. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "sid_internal.h"

Suite *gradient_suite(void);

enum { KERNEL_RNEA, KERNEL_FORCE, KERNEL_EULER, KERNEL_RK4, KERNEL_IMPLICITFAST };
/* the integrator of a step kernel */
static const sid_integrator kernel_integ[] = {[KERNEL_EULER] = SID_EULER, [KERNEL_RK4] = SID_RK4,
                                              [KERNEL_IMPLICITFAST] = SID_IMPLICITFAST};

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
        sid_inverse_dynamics(&(sid_fd_point){p->m, p->theta, p->ws, sid_contact_source(p->m), p->q, p->v, NULL, 0, 0}, p->a, o1);
        for (int i = 0; i < nv; i++) L += p->wq[i] * o1[i];
        break;
    case KERNEL_FORCE:
        sid_joint_force(p->m, p->theta, p->v, p->u, o1);
        for (int i = 0; i < nv; i++) L += p->wq[i] * o1[i];
        break;
    default:
        ck_assert_int_eq(sid_step(p->m, p->theta, p->ws, kernel_integ[p->kernel], p->h, p->q,
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
        sid_inverse_dynamics_vjp(&(sid_fd_point){p->m, p->theta, p->ws, sid_contact_source(p->m), p->q, p->v, NULL, 0, 0}, p->a,
                                 p->wq, &(sid_state_bar){qbar, vbar, thetabar});
        break;
    case KERNEL_FORCE:
        sid_joint_force_vjp(&(sid_fd_point){p->m, p->theta, NULL, NULL, NULL, p->v, p->u, 0, 0}, p->wq,
                            &(sid_state_bar){NULL, vbar, thetabar});
        break;
    default:
        ck_assert_int_eq(sid_step_vjp(p->m, p->theta, p->ws, kernel_integ[p->kernel], p->h,
                                      p->q, p->v, p->u, p->wq, p->wv, qbar, vbar, thetabar, &err), SID_OK);
    }
    (void)nv;
}

/* Central difference of eval() in x[i]; step 1e-6 max(1, |x|) as in tests/README.md ("Derivative checks"). */
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

/* with voltage motors, whose back-EMF implicitfast takes implicitly */
START_TEST(implicitfast_step_vjp) { run(KERNEL_IMPLICITFAST, TU_ALL, 5, 1e-6); }
END_TEST
START_TEST(chain_step_vjp)
{
    run(KERNEL_EULER, TU_FRICTION | TU_MOTORS, 5, 1e-6);
    run(KERNEL_RK4, TU_PRISMATIC | TU_MOTORS, 6, 1e-6);
}
END_TEST

/* Forward mode against reverse mode: for random directions xdot and seeds w,
 * w . (J xdot) from sid_step_jvp must equal (J^T w) . xdot from sid_step_vjp, and the JVP
 * must match a central difference along xdot. */
static void check_jvp(sid_integrator integ, unsigned seed)
{
    sid_robot_desc *d = tu_random_robot(seed, 6, TU_ALL);
    problem p = {0};
    sid_error err = {0};
    ck_assert_msg(sid_model_create(&p.m, &p.theta, d, &err) == SID_OK, "%s", err.msg);
    tu_desc_free(d);
    p.ws = sid_workspace_create(p.m);
    p.kernel = integ == SID_EULER ? KERNEL_EULER : integ == SID_RK4 ? KERNEL_RK4 : KERNEL_IMPLICITFAST;
    p.h = 1e-2;
    const int nv = sid_model_nv(p.m), np = sid_model_nparam(p.m);
    unsigned s = seed + 7;
    double qd[2][64], vd[2][64], scratch[2 * 9 * 64];
    double *thd = calloc(2 * (size_t)np, sizeof(double));
    for (int i = 0; i < nv; i++) {
        p.q[i] = tu_uniform(&s, -1.5, 1.5), p.v[i] = tu_uniform(&s, -2, 2), p.u[i] = tu_uniform(&s, -1, 1);
        p.wq[i] = tu_uniform(&s, -1, 1), p.wv[i] = tu_uniform(&s, -1, 1);
        for (int k = 0; k < 2; k++) qd[k][i] = tu_uniform(&s, -1, 1), vd[k][i] = tu_uniform(&s, -1, 1);
    }
    for (int j = 0; j < np; j++)
        for (int k = 0; k < 2; k++) thd[(size_t)k * np + j] = tu_uniform(&s, -1, 1) * fmax(0.01, fabs(p.theta[j]));
    double dir_q[2][64], dir_v[2][64];
    memcpy(dir_q, qd, sizeof qd);
    memcpy(dir_v, vd, sizeof vd);
    /* the JVP takes directions packed with stride nv */
    double qpk[2 * 64], vpk[2 * 64];
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < nv; i++) qpk[k * nv + i] = qd[k][i], vpk[k * nv + i] = vd[k][i];
    ck_assert_int_eq(sid_step_jvp(p.m, p.theta, p.ws, integ, p.h, p.q, p.v, p.u, 2, thd, qpk, vpk, scratch, &err), SID_OK);
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < nv; i++) qd[k][i] = qpk[k * nv + i], vd[k][i] = vpk[k * nv + i];
    double qbar[64] = {0}, vbar[64] = {0};
    double *thetabar = calloc((size_t)np, sizeof(double));
    analytic(&p, qbar, vbar, thetabar);
    for (int k = 0; k < 2; k++) {
        double fwd = 0, rev = 0;
        for (int i = 0; i < nv; i++) fwd += p.wq[i] * qd[k][i] + p.wv[i] * vd[k][i];
        for (int i = 0; i < nv; i++) rev += qbar[i] * dir_q[k][i] + vbar[i] * dir_v[k][i];
        for (int j = 0; j < np; j++) rev += thetabar[j] * thd[(size_t)k * np + j];
        /* central difference of L along the direction */
        const double e = 1e-6;
        double *th0 = malloc(sizeof(double) * (size_t)np), q0[64], v0[64], L[2];
        memcpy(th0, p.theta, sizeof(double) * (size_t)np);
        memcpy(q0, p.q, sizeof q0);
        memcpy(v0, p.v, sizeof v0);
        for (int sgn = 0; sgn < 2; sgn++) {
            const double t = sgn ? -e : e;
            for (int i = 0; i < nv; i++) p.q[i] = q0[i] + t * dir_q[k][i], p.v[i] = v0[i] + t * dir_v[k][i];
            for (int j = 0; j < np; j++) p.theta[j] = th0[j] + t * thd[(size_t)k * np + j];
            L[sgn] = eval(&p);
        }
        memcpy(p.theta, th0, sizeof(double) * (size_t)np);
        memcpy(p.q, q0, sizeof q0);
        memcpy(p.v, v0, sizeof v0);
        free(th0);
        const double num = (L[0] - L[1]) / (2 * e);
        fprintf(stderr, "jvp %s direction %d: forward %.12g reverse %.12g fd %.12g\n", sid_integrator_name(integ), k,
                fwd, rev, num);
        ck_assert_msg(fabs(fwd - rev) <= 1e-10 * (fabs(fwd) + fabs(rev)), "JVP %.15g vs VJP %.15g", fwd, rev);
        ck_assert_msg(tu_rel_err(fwd, num, 1e-9) <= 1e-6, "JVP %.15g vs fd %.15g", fwd, num);
    }
    free(thetabar);
    free(thd);
    sid_workspace_free(p.ws);
    sid_model_free(p.m);
    sid_free(p.theta);
}

START_TEST(step_jvp_matches_vjp_and_fd)
{
    check_jvp(SID_EULER, 12);
    check_jvp(SID_RK4, 13);
    check_jvp(SID_IMPLICITFAST, 14);
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
    tcase_add_test(tc, implicitfast_step_vjp);
    tcase_add_test(tc, chain_step_vjp);
    tcase_add_test(tc, step_jvp_matches_vjp_and_fd);
    suite_add_tcase(s, tc);
    return s;
}
