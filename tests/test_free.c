/* test_free.c — floating bodies: the free joint's position update, RNEA, Euler and RK4 steps
 * and whole windows of a floating robot (a free base carrying a random chain), with and
 * without compliant ground contact, against central finite differences; energy conservation
 * of free flight; a box at rest and a box sliding to a stop. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "sid_internal.h"

Suite *free_suite(void);

/* A random state: a random (non-unit) quaternion exercises the normalisation too. */
static void random_state(const sid_model *m, unsigned *s, double *q, double *v)
{
    for (int i = 0; i < m->nq; i++) q[i] = tu_uniform(s, -1.2, 1.2);
    for (int i = 0; i < m->nv; i++) v[i] = tu_uniform(s, -2, 2);
    for (int b = 1; b < m->nbody; b++)
        if (m->body[b].type == SID_JOINT_FREE) q[m->body[b].qadr + 3] += 1.5;
}

/* The box with a leg (tu_box_robot), compliant: contact on the floating body and on a
 * descendant, with a stiffer, better damped ground than the defaults. */
static sid_model *contact_robot(double **theta)
{
    sid_model *m = tu_box_robot(1, SID_CONTACT_COMPLIANT, 0.7, theta);
    ck_assert_ptr_nonnull(m);
    (*theta)[sid_model_param_find(m, "contact.ground.damping")] = 2e3;
    (*theta)[sid_model_param_find(m, "contact.ground.stiffness")] = 3e4;
    return m;
}

/* A state near the ground: corners a few mm deep or above, tilted, moving. */
static void contact_state(unsigned *s, double *q, double *v)
{
    const double tilt = tu_uniform(s, -0.05, 0.05);
    const double qs[8] = {tu_uniform(s, -1, 1), tu_uniform(s, -1, 1), 0.062, cos(tilt), sin(tilt), 0.3 * sin(tilt), 0,
                          tu_uniform(s, -0.4, 0.4)};
    memcpy(q, qs, sizeof qs);
    for (int i = 0; i < 7; i++) v[i] = tu_uniform(s, -0.5, 0.5);
}

enum { K_INTEGRATE, K_RNEA, K_EULER, K_RK4 };

typedef struct {
    int kernel;
    const sid_model *m;
    sid_workspace *ws;
    double *theta;
    double q[128], v[128], a[128], u[128], wq[128], wv[128];
    double h;
} check;

static double eval(check *c)
{
    const sid_model *m = c->m;
    double o1[128], o2[128], L = 0;
    sid_error err = {0};
    switch (c->kernel) {
    case K_INTEGRATE:
        sid_integrate_q(m, c->q, c->v, c->h, o1);
        for (int i = 0; i < m->nq; i++) L += c->wq[i] * o1[i];
        break;
    case K_RNEA:
        sid_inverse_dynamics(&(sid_fd_point){m, c->theta, c->ws, sid_contact_source(m), c->q, c->v, NULL, 0, 0}, c->a, o1);
        for (int i = 0; i < m->nv; i++) L += c->wv[i] * o1[i];
        break;
    default:
        ck_assert_int_eq(sid_step(m, c->theta, c->ws, c->kernel == K_EULER ? SID_EULER : SID_RK4, c->h, c->q, c->v, c->u,
                                  o1, o2, &err), SID_OK);
        for (int i = 0; i < m->nq; i++) L += c->wq[i] * o1[i];
        for (int i = 0; i < m->nv; i++) L += c->wv[i] * o2[i];
    }
    return L;
}

static void analytic(check *c, double *qbar, double *vbar, double *thetabar)
{
    const sid_model *m = c->m;
    sid_error err = {0};
    switch (c->kernel) {
    case K_INTEGRATE: sid_integrate_q_vjp(m, c->q, c->v, c->h, c->wq, qbar, vbar); break;
    case K_RNEA:
        sid_inverse_dynamics_vjp(&(sid_fd_point){m, c->theta, c->ws, sid_contact_source(m), c->q, c->v, NULL, 0, 0}, c->a, c->wv,
                                 &(sid_state_bar){qbar, vbar, thetabar});
        break;
    default:
        ck_assert_int_eq(sid_step_vjp(m, c->theta, c->ws, c->kernel == K_EULER ? SID_EULER : SID_RK4, c->h, c->q, c->v,
                                      c->u, c->wq, c->wv, qbar, vbar, thetabar, &err), SID_OK);
    }
}

/* Fourth-order central difference: contact forces are stiff (a softplus of millimetre
 * width), so the second-order one's truncation error would hide a wrong derivative. */
static double central(check *c, double *x)
{
    const double x0 = *x, e = 1e-5 * fmax(1e-2, fabs(x0));
    double L[4];
    const double off[4] = {-2, -1, 1, 2};
    for (int k = 0; k < 4; k++) {
        *x = x0 + off[k] * e;
        L[k] = eval(c);
    }
    *x = x0;
    return (L[0] - 8 * L[1] + 8 * L[2] - L[3]) / (12 * e);
}

static void run(int kernel, unsigned seed, double h, double tol, int contact)
{
    check c = {0};
    sid_model *m = contact ? contact_robot(&c.theta)
                           : tu_random_model(seed, 4, TU_BRANCHED | TU_PRISMATIC | TU_FRICTION | TU_MOTORS, 1, &c.theta);
    c.m = m;
    c.ws = sid_workspace_create(m);
    c.kernel = kernel;
    c.h = h;
    unsigned s = seed + 7;
    if (contact) contact_state(&s, c.q, c.v);
    else random_state(m, &s, c.q, c.v);
    for (int i = 0; i < m->nv; i++) {
        c.a[i] = tu_uniform(&s, -3, 3);
        c.u[i] = tu_uniform(&s, -1, 1);
        c.wv[i] = tu_uniform(&s, -1, 1);
    }
    for (int i = 0; i < m->nq; i++) c.wq[i] = tu_uniform(&s, -1, 1);
    const int np = m->nparam;
    double qbar[128] = {0}, vbar[128] = {0};
    double *thetabar = calloc((size_t)np, sizeof(double));
    analytic(&c, qbar, vbar, thetabar);
    /* errors count relative to the gradient's scale: a zero entry's difference is roundoff */
    double gmax = 0;
    for (int i = 0; i < m->nq; i++) gmax = fmax(gmax, fabs(qbar[i]));
    for (int i = 0; i < m->nv; i++) gmax = fmax(gmax, fabs(vbar[i]));
    for (int j = 0; j < np; j++) gmax = fmax(gmax, fabs(thetabar[j]));
    const double atol = 1e-9 * gmax;
    double worst = 0, norm = 0, worst_abs = 0;
    char where[256] = "none";
    for (int i = 0; i < m->nq; i++) {
        const double num = central(&c, &c.q[i]), e = tu_rel_err(qbar[i], num, atol);
        worst_abs = fmax(worst_abs, fabs(qbar[i] - num));
        if (e > worst) worst = e, snprintf(where, sizeof where, "q[%d]: %.10g vs fd %.10g", i, qbar[i], num);
        norm += qbar[i] * qbar[i];
    }
    for (int i = 0; i < m->nv; i++) {
        const double num = central(&c, &c.v[i]), e = tu_rel_err(vbar[i], num, atol);
        worst_abs = fmax(worst_abs, fabs(vbar[i] - num));
        if (e > worst) worst = e, snprintf(where, sizeof where, "v[%d]: %.10g vs fd %.10g", i, vbar[i], num);
    }
    if (kernel != K_INTEGRATE)
        for (int j = 0; j < np; j++) {
            const double num = central(&c, &c.theta[j]), e = tu_rel_err(thetabar[j], num, atol);
            worst_abs = fmax(worst_abs, fabs(thetabar[j] - num));
            if (e > worst) worst = e, snprintf(where, sizeof where, "%s: %.10g vs fd %.10g", m->param[j].name, thetabar[j], num);
        }
    ck_assert_msg(sqrt(norm) > 1e-3, "q gradient norm %g: too small to test", sqrt(norm));
    fprintf(stderr, "%s kernel %d: worst relative error %.2e at %s; max |analytic - fd| = %.1e of max |g| %.3g\n",
            contact ? "contact" : "free joint", kernel, worst, where, worst_abs, gmax);
    ck_assert_msg(worst <= tol, "kernel %d: relative error %g at %s", kernel, worst, where);
    free(thetabar);
    sid_workspace_free(c.ws);
    sid_model_free(m);
    sid_free(c.theta);
}

START_TEST(integrate_q_vjp) { run(K_INTEGRATE, 11, 0.3, 1e-5, 0); }
END_TEST
START_TEST(integrate_q_vjp_small_rotation) { run(K_INTEGRATE, 12, 1e-7, 1e-5, 0); }
END_TEST
START_TEST(rnea_vjp) { run(K_RNEA, 13, 0.01, 1e-5, 0); }   /* d tau / d v_lin is exactly 0 (Galilean invariance) */
END_TEST
START_TEST(euler_vjp) { run(K_EULER, 14, 0.01, 1e-5, 0); }
END_TEST
START_TEST(rk4_vjp) { run(K_RK4, 15, 0.01, 1e-5, 0); }
END_TEST
START_TEST(contact_rnea_vjp) { run(K_RNEA, 16 + (unsigned)_i, 0.001, 1e-5, 1); }
END_TEST
START_TEST(contact_euler_vjp) { run(K_EULER, 20 + (unsigned)_i, 0.001, 1e-5, 1); }
END_TEST
START_TEST(contact_rk4_vjp) { run(K_RK4, 24 + (unsigned)_i, 0.001, 1e-5, 1); }
END_TEST

/* Free flight of a frictionless floating tree: energy is conserved (RK4, 2 s), the quaternion
 * stays unit, and a lone body's linear momentum changes only by gravity. */
START_TEST(free_flight_conserves_energy)
{
    double *theta;
    sid_model *m = tu_random_model(21, 4, TU_BRANCHED, 1, &theta);
    sid_workspace *ws = sid_workspace_create(m);
    unsigned s = 5;
    double q[128], v[128], q1[128], v1[128], u[128] = {0};
    random_state(m, &s, q, v);
    const double E0 = sid_energy(m, theta, ws, q, v);
    sid_error err = {0};
    double worst = 0;
    for (int k = 0; k < 2000; k++) {
        ck_assert_int_eq(sid_step(m, theta, ws, SID_RK4, 1e-3, q, v, u, q1, v1, &err), SID_OK);
        memcpy(q, q1, sizeof(double) * (size_t)m->nq);
        memcpy(v, v1, sizeof(double) * (size_t)m->nv);
        const double E = sid_energy(m, theta, ws, q, v);
        if (fabs(E - E0) > worst) worst = fabs(E - E0);
    }
    const double *qa = q + m->body[m->dof_body[0]].qadr + 3;
    const double n = sqrt(qa[0] * qa[0] + qa[1] * qa[1] + qa[2] * qa[2] + qa[3] * qa[3]);
    fprintf(stderr, "free flight: energy drift %.2e of %.3g J, |quat| - 1 = %.1e\n", worst, E0, n - 1);
    ck_assert_msg(worst < 2e-5 * fmax(1, fabs(E0)), "energy drift %g", worst);
    ck_assert_msg(fabs(n - 1) < 1e-12, "quaternion norm %.17g", n);
    sid_workspace_free(ws);
    sid_model_free(m);
    sid_free(theta);
}
END_TEST

/* Whole windows of a floating robot: the adjoint gradient of the loss (parameters and start
 * states, quaternion residuals included) against central differences. */
static void window_gradient(sid_integrator integ, int estimate_start)
{
    double *theta;
    sid_model *m = tu_random_model(31, 3, TU_FRICTION | TU_MOTORS | TU_OFFSETS, 1, &theta);
    const int np = m->nparam, nx = m->nq + m->nv;
    double *truth = malloc(sizeof(double) * (size_t)np);
    memcpy(truth, theta, sizeof(double) * (size_t)np);
    for (int i = 0; i < np; i++) truth[i] *= 1.1;
    sid_traj *log = tu_synth_log(m, truth, 201, 2e-3, 0.5, 3);
    sid_loss_opts o;
    sid_loss_opts_defaults(&o);
    o.window = 0.1;
    o.sim.integrator = integ;
    o.estimate_start = estimate_start;
    o.threads = 1;
    sid_problem *p;
    sid_error err = {0};
    ck_assert_msg(sid_problem_create(&p, m, (const sid_traj *const *)&log, 1, &o, &err) == SID_OK, "%s", err.msg);
    const int nw = sid_problem_nwindows(p);
    double *x0 = malloc(sizeof(double) * (size_t)(nw * nx)), *gx0 = malloc(sizeof(double) * (size_t)(nw * nx));
    double *g = malloc(sizeof(double) * (size_t)np);
    sid_problem_start_states(p, theta, x0);
    double L;
    ck_assert_int_eq(sid_problem_loss(p, theta, estimate_start ? x0 : NULL, &L, g, gx0, &err), SID_OK);
    double worst = 0;
    char where[256] = "none";
    for (int j = 0; j < np + (estimate_start ? nx : 0); j++) {
        double *z = j < np ? &theta[j] : &x0[nx + (j - np)];   /* the second window's start */
        const double an = j < np ? g[j] : gx0[nx + (j - np)];
        const double z0 = *z, e = 1e-6 * fmax(1, fabs(z0));
        double Lp, Lm;
        *z = z0 + e;
        ck_assert_int_eq(sid_problem_loss(p, theta, estimate_start ? x0 : NULL, &Lp, NULL, NULL, &err), SID_OK);
        *z = z0 - e;
        ck_assert_int_eq(sid_problem_loss(p, theta, estimate_start ? x0 : NULL, &Lm, NULL, NULL, &err), SID_OK);
        *z = z0;
        const double num = (Lp - Lm) / (2 * e), r = tu_rel_err(an, num, 1e-10 * L);
        if (r > worst)
            worst = r, snprintf(where, sizeof where, "%s: %.10g vs fd %.10g", j < np ? m->param[j].name : "start state", an, num);
    }
    fprintf(stderr, "floating window gradient (%s, start %s): worst relative error %.2e at %s\n",
            integ == SID_EULER ? "euler" : "rk4", estimate_start ? "estimated" : "logged", worst, where);
    ck_assert_msg(worst < 1e-5, "relative error %g at %s", worst, where);
    free(x0);
    free(gx0);
    free(g);
    free(truth);
    sid_problem_free(p);
    sid_traj_free(log);
    sid_model_free(m);
    sid_free(theta);
}

START_TEST(window_gradient_euler) { window_gradient(SID_EULER, 0); }
END_TEST
START_TEST(window_gradient_rk4_estimated_start) { window_gradient(SID_RK4, 1); }
END_TEST

Suite *free_suite(void)
{
    Suite *s = suite_create("free");
    TCase *tc = tcase_create("free");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, integrate_q_vjp);
    tcase_add_test(tc, integrate_q_vjp_small_rotation);
    tcase_add_test(tc, rnea_vjp);
    tcase_add_test(tc, euler_vjp);
    tcase_add_test(tc, rk4_vjp);
    tcase_add_loop_test(tc, contact_rnea_vjp, 0, 3);
    tcase_add_loop_test(tc, contact_euler_vjp, 0, 3);
    tcase_add_loop_test(tc, contact_rk4_vjp, 0, 3);
    tcase_add_test(tc, free_flight_conserves_energy);
    tcase_add_test(tc, window_gradient_euler);
    tcase_add_test(tc, window_gradient_rk4_estimated_start);
    suite_add_tcase(s, tc);
    return s;
}
