

/* test_loss.c — the windowed loss and its adjoint gradient against central finite
 * differences for every parameter, on logs made with a perturbed "true" robot: both
 * integrators, substeps, jittery sample times, logs without velocities, windows of one step,
 * several windows, and one 10 000-step window through the checkpointed backward pass. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "robot_json.h"
#include "test_util.h"

Suite *loss_suite(void);

/* A log of n samples at about dt (jittered by +-jitter), commands as smooth sines, states
 * simulated with theta_true and opts. */
static sid_traj *make_log(const sid_model *m, const double *theta_true, int n, double dt, double jitter, int has_qd,
                          unsigned seed, const sid_sim_opts *opts)
{
    const int nq = sid_model_nq(m), nv = sid_model_nv(m);
    sid_traj *tr = sid_traj_create(n, nq, nv, 1);
    unsigned s = seed;
    double phase[64], freq[64];
    for (int i = 0; i < nv; i++) phase[i] = tu_uniform(&s, 0, 6), freq[i] = tu_uniform(&s, 1, 4);
    double t = 0;
    for (int k = 0; k < n; k++) {
        tr->t[k] = t;
        t += dt * (1 + tu_uniform(&s, -jitter, jitter));
        for (int i = 0; i < nv; i++) tr->u[(size_t)k * nv + i] = 0.5 * sin(freq[i] * tr->t[k] + phase[i]);
    }
    for (int i = 0; i < nq; i++) tr->q[i] = tu_uniform(&s, -0.5, 0.5);
    for (int i = 0; i < nv; i++) tr->qd[i] = tu_uniform(&s, -0.5, 0.5);
    double *q = malloc(sizeof(double) * (size_t)(n * nq)), *v = malloc(sizeof(double) * (size_t)(n * nv));
    sid_error err = {0};
    ck_assert_msg(sid_simulate(m, theta_true, tr, opts, q, v, &err) == SID_OK, "%s", err.msg);
    memcpy(tr->q, q, sizeof(double) * (size_t)(n * nq));
    memcpy(tr->qd, v, sizeof(double) * (size_t)(n * nv));
    free(q);
    free(v);
    if (!has_qd) {
        sid_free(tr->qd);
        tr->qd = NULL;
    }
    return tr;
}

typedef struct {
    sid_integrator integ;
    int substeps, nsample, has_qd, checkpoint, features, estimate_start;
    double dt, jitter, window;
    double tol;
} scenario;

/* The gradient of robot d's windowed loss against finite differences (d: NULL for a random
 * robot with sc->features). */
static void check_window_gradient_of(const sid_robot_desc *given, const scenario *sc, unsigned seed)
{
    sid_robot_desc *d = given ? NULL : tu_random_robot(seed, 4, sc->features);
    sid_model *m;
    double *theta;
    sid_error err = {0};
    ck_assert_msg(sid_model_create(&m, &theta, given ? given : d, &err) == SID_OK, "%s", err.msg);
    tu_desc_free(d);
    const int np = sid_model_nparam(m), nx = sid_model_nq(m) + sid_model_nv(m);
    /* truth: every parameter moved by a few per cent */
    double *truth = malloc(sizeof(double) * (size_t)np);
    unsigned s = seed;
    for (int i = 0; i < np; i++) truth[i] = theta[i] * (1 + tu_uniform(&s, -0.05, 0.05));
    sid_loss_opts o;
    sid_loss_opts_defaults(&o);
    o.window = sc->window;
    o.sim.integrator = sc->integ;
    o.sim.substeps = sc->substeps;
    o.checkpoint = sc->checkpoint;
    o.estimate_start = sc->estimate_start;
    sid_traj *logs[2];
    logs[0] = make_log(m, truth, sc->nsample, sc->dt, sc->jitter, sc->has_qd, seed + 1, &o.sim);
    logs[1] = make_log(m, truth, sc->nsample / 2 + 2, sc->dt, sc->jitter, sc->has_qd, seed + 2, &o.sim);
    sid_problem *p;
    ck_assert_msg(sid_problem_create(&p, m, (const sid_traj *const *)logs, 2, &o, &err) == SID_OK, "%s", err.msg);
    const int nwin = sid_problem_nwindows(p);
    double loss, *grad = calloc((size_t)np, sizeof(double)), *gx0 = calloc((size_t)(nwin * nx), sizeof(double));
    /* estimated start states: the logged ones, moved a little, as the optimizer would */
    double *xs = NULL;
    if (sc->estimate_start) {
        xs = malloc(sizeof(double) * (size_t)(nwin * nx));
        sid_problem_start_states(p, theta, xs);
        for (int i = 0; i < nwin * nx; i++) xs[i] += tu_uniform(&s, -0.01, 0.01);
    }
    ck_assert_msg(sid_problem_loss(p, theta, xs, &loss, grad, gx0, &err) == SID_OK, "%s", err.msg);
    ck_assert(loss > 0);
    double worst = 0, gnorm = 0, gmax = 0, absdiff = 0;
    char where[512] = "none";
    /* Components 1e-9 below the largest are compared in absolute terms: the loss's own
     * rounding (summed over thousands of steps) dominates their finite differences. */
    for (int i = 0; i < np; i++) gmax = fmax(gmax, fabs(grad[i]));
    for (int i = 0; i < np; i++) {
        /* fourth-order central difference: the loss's third derivatives in small parameters
         * (inertias of 1e-2) make the plain one inaccurate at this step */
        const double x0 = theta[i], e = 1e-6 * fmax(1, fabs(x0));
        double l[4];
        const double off[4] = {e, -e, 2 * e, -2 * e};
        for (int k = 0; k < 4; k++) {
            theta[i] = x0 + off[k];
            ck_assert_int_eq(sid_problem_loss(p, theta, xs, &l[k], NULL, NULL, &err), SID_OK);
        }
        theta[i] = x0;
        const double num = (8 * (l[0] - l[1]) - (l[2] - l[3])) / (12 * e), rel = tu_rel_err(grad[i], num, 1e-9 * gmax);
        absdiff = fmax(absdiff, fabs(grad[i] - num));
        gnorm += grad[i] * grad[i];
        if (rel > worst)
            worst = rel, snprintf(where, sizeof where, "%s: analytic %.10g, fd %.10g", sid_model_param(m, i)->name,
                                  grad[i], num);
    }
    /* estimated starts: the gradient with respect to every window's start state */
    for (int i = 0; xs && i < nwin * nx; i++) {
        const double xi = xs[i], e = 1e-6;
        double lp, lm;
        xs[i] = xi + e;
        ck_assert_int_eq(sid_problem_loss(p, theta, xs, &lp, NULL, NULL, &err), SID_OK);
        xs[i] = xi - e;
        ck_assert_int_eq(sid_problem_loss(p, theta, xs, &lm, NULL, NULL, &err), SID_OK);
        xs[i] = xi;
        const double num = (lp - lm) / (2 * e), rel = tu_rel_err(gx0[i], num, 1e-9 * gmax);
        if (rel > worst) worst = rel, snprintf(where, sizeof where, "start state x0[%d]: %.10g vs %.10g", i, gx0[i], num);
    }
    /* logged starts: the first window starts at sample 0 of log 0, which no residual uses, so
     * perturbing the logged state there checks the gradient with respect to its start state */
    for (int i = 0; i < nx && sc->has_qd && !xs; i++) {
        double *x = i < sid_model_nq(m) ? &logs[0]->q[i] : &logs[0]->qd[i - sid_model_nq(m)];
        const double x0 = *x, e = 1e-6;
        double lp, lm;
        *x = x0 + e;
        ck_assert_int_eq(sid_problem_loss(p, theta, xs, &lp, NULL, NULL, &err), SID_OK);
        *x = x0 - e;
        ck_assert_int_eq(sid_problem_loss(p, theta, xs, &lm, NULL, NULL, &err), SID_OK);
        *x = x0;
        const double num = (lp - lm) / (2 * e), rel = tu_rel_err(gx0[i], num, 1e-9 * gmax);
        if (rel > worst) worst = rel, snprintf(where, sizeof where, "start state x0[%d]: %.10g vs %.10g", i, gx0[i], num);
    }
    fprintf(stderr, "window gradient %s substeps %d samples %d window %g qd %d: %d windows, loss %.3e, |g| %.3e, "
                    "worst rel err %.2e at %s; max |a - fd| / max |g| %.1e; tape %zu bytes\n",
            sc->integ == SID_EULER ? "euler" : "rk4", sc->substeps, sc->nsample, sc->window, sc->has_qd, nwin, loss,
            sqrt(gnorm), worst, where, absdiff / gmax, sid_problem_tape_bytes(p));
    ck_assert_msg(sqrt(gnorm) > 1e-8, "gradient vanished");
    ck_assert_msg(worst <= sc->tol, "relative error %g at %s", worst, where);
    free(grad);
    free(gx0);
    free(xs);
    free(truth);
    sid_problem_free(p);
    sid_traj_free(logs[0]);
    sid_traj_free(logs[1]);
    sid_model_free(m);
    sid_free(theta);
}

static void check_window_gradient(const scenario *sc, unsigned seed) { check_window_gradient_of(NULL, sc, seed); }

static const scenario scenarios[] = {
    /* integ, substeps, samples, qd, checkpoint, features, estimate_start, dt, jitter, window, tol */
    {SID_EULER, 1, 200, 1, 0, TU_ALL, 0, 1e-3, 0, 0.05, 1e-6},
    {SID_RK4, 1, 200, 1, 0, TU_ALL, 0, 1e-3, 0, 0.05, 1e-6},
    {SID_EULER, 3, 150, 1, 0, TU_ALL, 0, 2e-3, 0.4, 0.1, 1e-6},       /* substeps, jitter */
    {SID_RK4, 2, 150, 0, 0, TU_ALL, 0, 2e-3, 0.4, 0.1, 1e-6},         /* positions only */
    {SID_EULER, 1, 60, 1, 0, TU_ALL, 0, 1e-3, 0, 1e-4, 1e-6},         /* windows of one step */
    {SID_EULER, 1, 400, 1, 7, TU_ALL, 0, 1e-3, 0.2, 0, 1e-6},         /* one window, checkpoints */
    {SID_EULER, 1, 200, 1, 5, TU_ALL, 1, 1e-3, 0.2, 0.05, 1e-6},      /* estimated start states */
    {SID_RK4, 2, 150, 0, 0, TU_ALL, 1, 2e-3, 0.2, 0.1, 1e-6},         /* estimated, positions only */
};

START_TEST(window_gradient_matches_finite_differences)
{
    check_window_gradient(&scenarios[_i], 20 + (unsigned)_i);
}
END_TEST

/* The example robots of data/, with Coulomb and Stribeck friction switched on at every joint,
 * both integrators: every parameter's gradient within 1e-6 of finite differences. */
static const char *const examples[] = {"../data/pendulum/robot.json", "../data/double_pendulum/robot.json",
                                       "../data/arm7/robot.json", "../data/tree/robot.json"};

START_TEST(example_robots_gradient)
{
    sid_robot_desc d;
    sid_error err = {0};
    ck_assert_msg(robot_json_load(examples[_i / 2], &d, NULL, &err) == 0, "%s", err.msg);
    for (int j = 0; j < d.njoint; j++) {
        sid_joint_desc *jd = &d.joint[j];
        if (jd->type == SID_JOINT_FIXED) continue;
        jd->coulomb = 0.05;
        jd->smoothing = 0.1;
        jd->has_stribeck = 1;
        jd->stribeck_torque = 0.03;
        jd->stribeck_velocity = 0.5;
    }
    const scenario sc = {_i % 2 ? SID_RK4 : SID_EULER, 1, 120, 1, 0, 0, 0, 2e-3, 0.2, 0.06, 1e-6};
    fprintf(stderr, "%s: ", examples[_i / 2]);
    check_window_gradient_of(&d, &sc, 60 + (unsigned)_i);
    robot_desc_free(&d);
}
END_TEST

START_TEST(long_window_with_checkpoints)
{
    /* 10 000 steps in one window: the checkpointed backward pass still gives the exact gradient */
    const scenario sc = {SID_EULER, 1, 10000, 1, 100, TU_FRICTION | TU_MOTORS | TU_OFFSETS, 0, 1e-3, 0, 0, 1e-6};
    check_window_gradient(&sc, 31);
}
END_TEST

START_TEST(threads_give_identical_bits_and_no_allocation)
{
    /* windows run in parallel; the result must not depend on the thread count, to the bit,
     * and an evaluation must not allocate */
    sid_robot_desc *d = tu_random_robot(51, 5, TU_ALL);
    sid_model *m;
    double *theta;
    sid_error err = {0};
    ck_assert_int_eq(sid_model_create(&m, &theta, d, &err), SID_OK);
    tu_desc_free(d);
    const int np = sid_model_nparam(m);
    sid_traj *log = tu_synth_log(m, theta, 1201, 1e-3, 0.3, 5);
    for (int i = 0; i < np; i++) theta[i] *= 1.01;   /* residuals and gradient non-zero */
    double loss[3], *grad[3];
    const int threads[3] = {1, 2, 3};
    for (int t = 0; t < 3; t++) {
        sid_loss_opts o;
        sid_loss_opts_defaults(&o);
        o.window = 0.05;   /* 24 windows */
        o.threads = threads[t];
        sid_problem *p;
        ck_assert_int_eq(sid_problem_create(&p, m, (const sid_traj *const *)&log, 1, &o, &err), SID_OK);
        grad[t] = malloc(sizeof(double) * (size_t)np);
        ck_assert_int_eq(sid_problem_loss(p, theta, NULL, &loss[t], grad[t], NULL, &err), SID_OK);
        const long before = sid_alloc_count();
        ck_assert_int_eq(sid_problem_loss(p, theta, NULL, &loss[t], grad[t], NULL, &err), SID_OK);
        ck_assert_int_eq(sid_alloc_count(), before);
        sid_problem_free(p);
    }
    for (int t = 1; t < 3; t++) {
        ck_assert(memcmp(&loss[0], &loss[t], sizeof(double)) == 0);
        ck_assert(memcmp(grad[0], grad[t], sizeof(double) * (size_t)np) == 0);
    }
    for (int t = 0; t < 3; t++) free(grad[t]);
    sid_traj_free(log);
    sid_model_free(m);
    sid_free(theta);
}
END_TEST

START_TEST(start_velocity_from_positions)
{
    /* logged start states take their velocity from the qd column, or from positions */
    sid_robot_desc *d = tu_random_robot(71, 3, 0);
    sid_model *m;
    double *theta;
    sid_error err = {0};
    ck_assert_int_eq(sid_model_create(&m, &theta, d, &err), SID_OK);
    tu_desc_free(d);
    sid_traj *log = tu_synth_log(m, theta, 301, 1e-3, 0.3, 9);
    tu_add_noise(log, 0, 0.5, 3);   /* velocities noisy, positions exact */
    const int nq = sid_model_nq(m), nx = 2 * nq;
    double x_logged[64 * 8], x_pos[64 * 8], v[64];
    for (int from_q = 0; from_q < 2; from_q++) {
        sid_loss_opts o;
        sid_loss_opts_defaults(&o);
        o.window = 0.1;
        o.start_velocity_from_q = from_q;
        sid_problem *p;
        ck_assert_int_eq(sid_problem_create(&p, m, (const sid_traj *const *)&log, 1, &o, &err), SID_OK);
        ck_assert_int_le(sid_problem_nwindows(p), 8);
        sid_problem_start_states(p, theta, from_q ? x_pos : x_logged);
        sid_problem_free(p);
    }
    /* window 1 starts at sample 100 */
    sid_traj_velocity_from_q(m, log, 100, v);
    for (int i = 0; i < nq; i++) {
        ck_assert_double_eq(x_logged[nx + nq + i], log->qd[100 * nq + i]);
        ck_assert_double_eq(x_pos[nx + nq + i], v[i]);
        ck_assert_double_eq(x_pos[nx + i], x_logged[nx + i]);
    }
    sid_traj_free(log);
    sid_model_free(m);
    sid_free(theta);
}
END_TEST

Suite *loss_suite(void)
{
    Suite *s = suite_create("loss");
    TCase *tc = tcase_create("adjoint");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, window_gradient_matches_finite_differences, 0, (int)(sizeof scenarios / sizeof scenarios[0]));
    tcase_add_test(tc, threads_give_identical_bits_and_no_allocation);
    tcase_add_test(tc, start_velocity_from_positions);
    suite_add_tcase(s, tc);
    /* the same checks on bigger models and a 10 000-step window: numerics, where the scenarios
     * above already take every feature through the adjoint under the sanitizers; a difference
     * per parameter of arm7's and the tree's was a third of `make debug`'s Check time */
    TCase *big = tcase_create("examples");
    tcase_set_tags(big, "slow");
    tcase_set_timeout(big, 300);
    tcase_add_test(big, long_window_with_checkpoints);
    tcase_add_loop_test(big, example_robots_gradient, 0, 8);
    suite_add_tcase(s, big);
    return s;
}
