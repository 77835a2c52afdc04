/* test_delay.c — the motor command delay (core/dynamics/delay.h): a delay of 0 is today's hold bit for
 * bit; a whole or fractional delay replays exactly as the undelayed model on a log whose
 * commands were shifted by hand; the delay's adjoint and forward-mode derivatives against
 * central differences of the window loss (fractional delays, with and without substeps, Euler
 * and RK4); recovery of two joints' delays (3.4 and 12.7 samples) on data/double_pendulum from
 * a log this model simulated. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "robot_json.h"
#include "robot_load.h"
#include "sid_internal.h"
#include "test_util.h"

Suite *delay_suite(void);

#define ROBOT "../data/double_pendulum/robot.json"
#define DT 1e-3

/* data/double_pendulum with a delay row on both joints (values d0, d1 [s]). */
static sid_model *dp_model(int with_delay, double d0, double d1, double **theta)
{
    sid_robot_desc d;
    sid_error err = {0};
    memset(&d, 0, sizeof d);
    ck_assert_msg(robot_load(ROBOT, &d, NULL, NULL, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(d.njoint, 2);
    d.joint[0].has_delay = d.joint[1].has_delay = with_delay;
    d.joint[0].delay = d0, d.joint[1].delay = d1;
    sid_model *m;
    ck_assert_msg(sid_model_create(&m, theta, &d, &err) == SID_OK, "%s", err.msg);
    robot_desc_free(&d);
    return m;
}

/* Replay of tr under sim options o: q (n x nq). */
static double *replay(const sid_model *m, const double *theta, const sid_traj *tr, const sid_sim_opts *o)
{
    double *q = malloc(sizeof(double) * (size_t)(tr->n * tr->nq)), *v = malloc(sizeof(double) * (size_t)(tr->n * tr->nv));
    sid_error err = {0};
    ck_assert_msg(sid_simulate(m, theta, tr, o, q, v, &err) == SID_OK, "%s", err.msg);
    free(v);
    return q;
}

/* A delay of 0 is the hold: the same replay, loss and gradient, to the last bit; torque_bias's
 * gradient to 1e-14 relative, since its adjoint is summed per log interval first (delay.h)
 * and then added, another order of the same sum. */
START_TEST(zero_delay_is_hold)
{
    double *th0, *th1;
    sid_model *m0 = dp_model(0, 0, 0, &th0), *m1 = dp_model(1, 0, 0, &th1);
    ck_assert_int_eq(sid_model_nparam(m1), sid_model_nparam(m0) + 2);
    sid_traj *tr = tu_synth_log(m0, th0, 400, DT, 1.0, 5);
    sid_sim_opts so;
    sid_sim_opts_defaults(&so);
    so.substeps = 2;
    double *q0 = replay(m0, th0, tr, &so), *q1 = replay(m1, th1, tr, &so);
    ck_assert_int_eq(memcmp(q0, q1, sizeof(double) * (size_t)(tr->n * tr->nq)), 0);
    sid_loss_opts lo;
    sid_loss_opts_defaults(&lo);
    lo.window = 0.1, lo.threads = 1, lo.sim = so;
    const sid_traj *logs[1] = {tr};
    sid_problem *p0, *p1;
    sid_error err = {0};
    ck_assert(sid_problem_create(&p0, m0, logs, 1, &lo, &err) == SID_OK);
    ck_assert(sid_problem_create(&p1, m1, logs, 1, &lo, &err) == SID_OK);
    double L0, L1, *g0 = calloc((size_t)sid_model_nparam(m0), sizeof(double)), *g1 = calloc((size_t)sid_model_nparam(m1), sizeof(double));
    ck_assert(sid_problem_loss(p0, th0, NULL, &L0, g0, NULL, &err) == SID_OK);
    ck_assert(sid_problem_loss(p1, th1, NULL, &L1, g1, NULL, &err) == SID_OK);
    ck_assert(L0 == L1);
    for (int j = 0; j < sid_model_nparam(m0); j++) {
        const int j1 = tu_param(m1, sid_model_param(m0, j)->name);
        const int bias = sid_model_param(m0, j)->kind == SID_P_TORQUE_BIAS;
        ck_assert_msg(bias ? fabs(g0[j] - g1[j1]) <= 1e-14 * fabs(g0[j]) : g0[j] == g1[j1], "%s: %.17g vs %.17g",
                      sid_model_param(m0, j)->name, g0[j], g1[j1]);
    }
    free(g0), free(g1), free(q0), free(q1);
    sid_problem_free(p0), sid_problem_free(p1), sid_traj_free(tr);
    sid_model_free(m0), sid_model_free(m1), sid_free(th0), sid_free(th1);
}
END_TEST

/* The delayed command by hand (delay.h's formula on a uniform grid): u at fractional sample
 * k - D, the first command before the log's start. */
static double by_hand(const sid_traj *tr, int k, int i, double D)
{
    const double s = k - D;
    if (s <= 0) return tr->u[i];
    const int a = (int)ceil(s) - 1;
    const double f = s - a;
    return tr->u[(size_t)a * 2 + (size_t)i] + f * (tr->u[(size_t)(a + 1) * 2 + (size_t)i] - tr->u[(size_t)a * 2 + (size_t)i]);
}

/* Delays of whole and fractional samples replay as the undelayed model on the hand-shifted
 * log: to 1e-12 rad (the same steps on commands equal to rounding, one multiply-add apart). */
START_TEST(delay_is_shifted_command)
{
    static const double D[][2] = {{3, 12}, {3.4, 12.7}, {0.5, 19.99}};
    double *th0, *th1;
    sid_model *m0 = dp_model(0, 0, 0, &th0);
    sid_traj *tr = tu_synth_log(m0, th0, 600, DT, 1.0, 7);
    sid_traj *sh = sid_traj_create(tr->n, 2, 2, 1);
    memcpy(sh->t, tr->t, sizeof(double) * (size_t)tr->n);
    memcpy(sh->q, tr->q, sizeof(double) * (size_t)(2 * tr->n));
    memcpy(sh->qd, tr->qd, sizeof(double) * (size_t)(2 * tr->n));
    sid_sim_opts so;
    sid_sim_opts_defaults(&so);
    so.substeps = 3;
    for (size_t c = 0; c < sizeof D / sizeof D[0]; c++) {
        sid_model *m1 = dp_model(1, D[c][0] * DT, D[c][1] * DT, &th1);
        for (int k = 0; k < tr->n; k++)
            for (int i = 0; i < 2; i++) sh->u[(size_t)k * 2 + (size_t)i] = by_hand(tr, k, i, D[c][i]);
        double *q0 = replay(m0, th0, sh, &so), *q1 = replay(m1, th1, tr, &so), worst = 0, moved = 0;
        double *qn = replay(m0, th0, tr, &so);
        for (int k = 0; k < 2 * tr->n; k++) worst = fmax(worst, fabs(q0[k] - q1[k])), moved = fmax(moved, fabs(qn[k] - q1[k]));
        fprintf(stderr, "delay %.2f, %.2f samples: replay vs hand-shifted log %.2e rad (the delay moves q by %.2e)\n",
                D[c][0], D[c][1], worst, moved);
        ck_assert_msg(worst < 1e-12, "%g", worst);
        ck_assert_msg(moved > 1e-4, "the delay changes nothing (%g)", moved);
        free(q0), free(q1), free(qn);
        sid_model_free(m1), sid_free(th1);
    }
    sid_traj_free(sh), sid_traj_free(tr), sid_model_free(m0), sid_free(th0);
}
END_TEST

/* dL/dd by the adjoint and by forward mode (sum over windows of r . J / nres) against central
 * differences of the loss, step 1e-7 s (1e-4 of a 1 ms sample: no sample boundary between
 * the two points at these fractional delays), relative 1e-6: the loss is smooth between
 * boundaries, so the difference's error is O(step^2) plus rounding, ~1e-9 here. */
static double check_grad(sid_integrator integ, int substeps, double D0, double D1, double start_d)
{
    double *tht, *th;
    sid_model *m = dp_model(1, D0 * DT, D1 * DT, &tht);
    sid_traj *tr = tu_synth_log(m, tht, 500, DT, 1.0, 11);
    sid_model_free(m), sid_free(tht);
    m = dp_model(1, (D0 + start_d) * DT, (D1 - start_d) * DT, &th);
    sid_loss_opts lo;
    sid_loss_opts_defaults(&lo);
    lo.window = 0.1, lo.threads = 1, lo.sim.substeps = substeps, lo.sim.integrator = integ;
    const sid_traj *logs[1] = {tr};
    sid_problem *p;
    sid_error err = {0};
    ck_assert_msg(sid_problem_create(&p, m, logs, 1, &lo, &err) == SID_OK, "%s", err.msg);
    const int np = sid_model_nparam(m);
    double L, *g = calloc((size_t)np, sizeof(double));
    ck_assert(sid_problem_loss(p, th, NULL, &L, g, NULL, &err) == SID_OK);
    const int idx[2] = {tu_param(m, "joints.shoulder.motor.delay"), tu_param(m, "joints.elbow.motor.delay")};
    /* forward mode */
    double fwd[2] = {0, 0};
    const int nw = sid_problem_nwindows(p), nres = sid_problem_nresiduals(p);
    for (int w = 0; w < nw; w++) {
        const int rows = sid_problem_window_rows(p, w);
        double *r = malloc(sizeof(double) * (size_t)rows), *J = malloc(sizeof(double) * (size_t)rows * 2);
        ck_assert(sid_problem_window_jacobian(p, th, NULL, w, 2, idx, r, J, &err) == SID_OK);
        for (int i = 0; i < rows; i++) fwd[0] += r[i] * J[2 * i] / nres, fwd[1] += r[i] * J[2 * i + 1] / nres;
        free(r), free(J);
    }
    double worst = 0;
    for (int c = 0; c < 2; c++) {
        const double x0 = th[idx[c]], e = 1e-7;
        double Lp, Lm;
        th[idx[c]] = x0 + e;
        ck_assert(sid_problem_loss(p, th, NULL, &Lp, NULL, NULL, &err) == SID_OK);
        th[idx[c]] = x0 - e;
        ck_assert(sid_problem_loss(p, th, NULL, &Lm, NULL, NULL, &err) == SID_OK);
        th[idx[c]] = x0;
        /* atol: a gradient that moves the loss by 1e-9 of itself over one sample of delay */
        const double at = 1e-9 * L / DT;
        const double fd = (Lp - Lm) / (2 * e), ea = tu_rel_err(g[idx[c]], fd, at), ef = tu_rel_err(fwd[c], fd, at);
        fprintf(stderr, "delay %s substeps %d, loss %.3e, joint %d at %.2f samples: adjoint %.10g forward %.10g fd %.10g (rel %.1e, %.1e)\n",
                integ == SID_EULER ? "euler" : "rk4", substeps, L, c, th[idx[c]] / DT, g[idx[c]], fwd[c], fd, ea, ef);
        /* a sample more of delay changes the loss by a few percent at least: there is a gradient */
        ck_assert_msg(fabs(fd) * DT > 0.01 * L, "no gradient to check (%g at loss %g)", fd, L);
        worst = fmax(worst, fmax(ea, ef));
    }
    ck_assert_msg(worst < 1e-6, "relative error %g", worst);
    /* across a sample boundary (joint 0 at exactly 5 samples) the loss is continuous: its jump
     * over +-e, e = 1e-10 s, stays within e times the two sides' slopes (adjoint), plus rounding */
    const double e = 1e-10, x0 = th[idx[0]];
    double Lp, Lm, gp, gm;
    th[idx[0]] = 5 * DT + e;
    ck_assert(sid_problem_loss(p, th, NULL, &Lp, g, NULL, &err) == SID_OK);
    gp = g[idx[0]];
    th[idx[0]] = 5 * DT - e;
    ck_assert(sid_problem_loss(p, th, NULL, &Lm, g, NULL, &err) == SID_OK);
    gm = g[idx[0]];
    th[idx[0]] = x0;
    fprintf(stderr, "delay across a sample boundary: L(5 samples +- 1e-10 s) jumps %.2e (slopes %.4g, %.4g)\n",
            Lp - Lm, gp, gm);
    ck_assert_msg(fabs(Lp - Lm) <= e * (fabs(gp) + fabs(gm)) * 1.01 + 1e-15 * L, "jump %g", Lp - Lm);
    free(g), sid_problem_free(p), sid_traj_free(tr), sid_model_free(m), sid_free(th);
    return worst;
}

START_TEST(delay_gradient_matches_fd)
{
    double worst = 0;
    worst = fmax(worst, check_grad(SID_EULER, 1, 3.4, 12.7, 1.3));
    worst = fmax(worst, check_grad(SID_EULER, 3, 3.4, 12.7, -2.45));
    worst = fmax(worst, check_grad(SID_RK4, 2, 0.6, 7.2, 0.55));
    fprintf(stderr, "delay gradient: worst relative error %.2e\n", worst);
}
END_TEST

/* Recovery: truth 3.4 and 12.7 samples, start from 0 on both, LM on the two delays (and the
 * rest at truth): recovered to 1e-6 samples, as a noise-free log from the same model permits. */
START_TEST(delay_recovery)
{
    double *tht, *th;
    sid_model *m = dp_model(1, 3.4 * DT, 12.7 * DT, &tht);
    sid_traj *tr = tu_synth_log(m, tht, 2000, DT, 1.0, 13);
    sid_model_free(m);
    m = dp_model(1, 0, 0, &th);
    sid_loss_opts lo;
    sid_loss_opts_defaults(&lo);
    lo.sim.substeps = 1;
    const sid_traj *logs[1] = {tr};
    sid_problem *p;
    sid_error err = {0};
    ck_assert(sid_problem_create(&p, m, logs, 1, &lo, &err) == SID_OK);
    const int idx[2] = {tu_param(m, "joints.shoulder.motor.delay"), tu_param(m, "joints.elbow.motor.delay")};
    const double lob[2] = {0, 0}, hib[2] = {0.05, 0.05};
    sid_fit_opts fo;
    sid_fit_opts_defaults(&fo);
    fo.optimizer = SID_OPT_LM, fo.nfree = 2, fo.idx = idx, fo.lo = lob, fo.hi = hib, fo.max_iter = 200;
    sid_fit_result *r = calloc(1, sizeof *r);
    ck_assert_msg(sid_fit(p, th, NULL, &fo, r, &err) == SID_OK, "%s", err.msg);
    double worst = 0;
    for (int c = 0; c < 2; c++) worst = fmax(worst, fabs(th[idx[c]] - tht[idx[c]]) / DT);
    fprintf(stderr, "delay recovery (LM from 0): %.9f, %.9f samples (truth 3.4, 12.7), error %.2e samples, loss %.2e, %d iterations (%s)\n",
            th[idx[0]] / DT, th[idx[1]] / DT, worst, r->loss, r->iterations, r->message);
    ck_assert_msg(worst < 1e-6, "delay error %g samples", worst);
    free(r), sid_problem_free(p), sid_traj_free(tr), sid_model_free(m), sid_free(th), sid_free(tht);
}
END_TEST

/* At d = 0 (the bound) the derivative is the one-sided one toward larger delays: adjoint and
 * forward mode against (L(e) - L(0)) / e, e = 1e-9 s, relative 1e-4 (the forward difference's
 * O(e) error over a 1e-3 s sample, with the loss's curvature there, is ~1e-6 of the slope). */
START_TEST(delay_gradient_at_zero)
{
    double *tht, *th;
    sid_model *m = dp_model(1, 3.4 * DT, 12.7 * DT, &tht);
    sid_traj *tr = tu_synth_log(m, tht, 500, DT, 1.0, 11);
    sid_model_free(m), sid_free(tht);
    m = dp_model(1, 0, 0, &th);
    sid_loss_opts lo;
    sid_loss_opts_defaults(&lo);
    lo.sim.substeps = 2, lo.threads = 1;
    const sid_traj *logs[1] = {tr};
    sid_problem *p;
    sid_error err = {0};
    ck_assert(sid_problem_create(&p, m, logs, 1, &lo, &err) == SID_OK);
    const int np = sid_model_nparam(m);
    double L, *g = calloc((size_t)np, sizeof(double));
    ck_assert(sid_problem_loss(p, th, NULL, &L, g, NULL, &err) == SID_OK);
    const int idx[2] = {tu_param(m, "joints.shoulder.motor.delay"), tu_param(m, "joints.elbow.motor.delay")};
    for (int c = 0; c < 2; c++) {
        const double e = 1e-9;
        double Lp;
        th[idx[c]] = e;
        ck_assert(sid_problem_loss(p, th, NULL, &Lp, NULL, NULL, &err) == SID_OK);
        th[idx[c]] = 0;
        const double fd = (Lp - L) / e, er = fabs(g[idx[c]] - fd) / fabs(fd);
        fprintf(stderr, "delay at 0, joint %d: adjoint %.10g, one-sided fd %.10g (rel %.1e)\n", c, g[idx[c]], fd, er);
        ck_assert_msg(fabs(fd) * DT > 0.01 * L, "no gradient to check (%g at loss %g)", fd, L);
        ck_assert_msg(er < 1e-4, "relative error %g", er);
    }
    free(g), sid_problem_free(p), sid_traj_free(tr), sid_model_free(m), sid_free(th);
}
END_TEST

Suite *delay_suite(void)
{
    Suite *s = suite_create("delay");
    TCase *tc = tcase_create("delay");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, zero_delay_is_hold);
    tcase_add_test(tc, delay_is_shifted_command);
    tcase_add_test(tc, delay_gradient_matches_fd);
    tcase_add_test(tc, delay_gradient_at_zero);
    tcase_add_test(tc, delay_recovery);
    suite_add_tcase(s, tc);
    return s;
}
