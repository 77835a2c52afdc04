/* test_step_choice.c — the automatic simulation step (step_choice.c) against known truth: a
 * 500 Hz log of the double pendulum (data/double_pendulum) with its viscous frictions 1.5x
 * nominal, made by RK4 at 0.1 ms (the motion itself, to 1e-10 rad). Fitting the frictions with
 * Euler at one step per sample is biased by a few per cent; at the step sid_step_choose picks
 * they come back within 0.5 %. Also: a given step is kept, and the choice is deterministic. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "robot_json.h"
#include "robot_load.h"
#include "test_util.h"

Suite *step_choice_suite(void);

typedef struct {
    sid_model *m;
    double *theta, *truth;
    sid_traj *log;
    int idx[2];
} setup;

static void setup_make(setup *su)
{
    sid_error err = {0};
    ck_assert_msg(robot_model("../data/double_pendulum/robot.json", &su->m, &su->theta, NULL, &err) == 0, "%s",
                  err.msg);
    const int np = sid_model_nparam(su->m), nq = sid_model_nq(su->m), nv = sid_model_nv(su->m);
    su->idx[0] = sid_model_param_find(su->m, "joints.shoulder.friction.viscous");
    su->idx[1] = sid_model_param_find(su->m, "joints.elbow.friction.viscous");
    ck_assert(su->idx[0] >= 0 && su->idx[1] >= 0);
    su->truth = malloc(sizeof(double) * (size_t)np);
    memcpy(su->truth, su->theta, sizeof(double) * (size_t)np);
    for (int k = 0; k < 2; k++) su->truth[su->idx[k]] *= 1.5;
    /* 2 s at 500 Hz, two sines per motor */
    const int n = 1001;
    sid_traj *tr = sid_traj_create(n, nq, nv, 1);
    for (int k = 0; k < n; k++) {
        tr->t[k] = 0.002 * k;
        for (int i = 0; i < nv; i++)
            tr->u[(size_t)k * (size_t)nv + (size_t)i] =
                2.5 * sin((2.1 + i) * tr->t[k] + i) + 1.5 * sin((5.3 - i) * tr->t[k]);
    }
    tr->q[0] = 0.4, tr->q[1] = -0.3;
    sid_sim_opts fine = {SID_RK4, 1, 1e-4};
    double *q = malloc(sizeof(double) * (size_t)(n * nq)), *v = malloc(sizeof(double) * (size_t)(n * nv));
    ck_assert_msg(sid_simulate(su->m, su->truth, tr, &fine, q, v, &err) == SID_OK, "%s", err.msg);
    memcpy(tr->q, q, sizeof(double) * (size_t)(n * nq));
    memcpy(tr->qd, v, sizeof(double) * (size_t)(n * nv));
    free(q);
    free(v);
    su->log = tr;
}

static void setup_free(setup *su)
{
    sid_traj_free(su->log);
    free(su->truth);
    sid_free(su->theta);
    sid_model_free(su->m);
}

/* Fit the two frictions from nominal under sim; the worst relative error. */
static double fit_error(const setup *su, const sid_sim_opts *sim)
{
    sid_error err = {0};
    sid_loss_opts o;
    sid_loss_opts_defaults(&o);
    o.sim = *sim;
    sid_problem *p;
    ck_assert_msg(sid_problem_create(&p, su->m, (const sid_traj *const *)&su->log, 1, &o, &err) == SID_OK, "%s",
                  err.msg);
    const int np = sid_model_nparam(su->m);
    double *theta = malloc(sizeof(double) * (size_t)np), lo[2] = {0, 0}, hi[2] = {10, 10};
    memcpy(theta, su->theta, sizeof(double) * (size_t)np);
    sid_fit_opts fo;
    sid_fit_opts_defaults(&fo);
    fo.nfree = 2, fo.idx = su->idx, fo.lo = lo, fo.hi = hi;
    sid_fit_result r;
    ck_assert_msg(sid_fit(p, theta, NULL, &fo, &r, &err) == SID_OK, "%s", err.msg);
    double worst = 0;
    for (int k = 0; k < 2; k++) {
        const double e = theta[su->idx[k]] / su->truth[su->idx[k]] - 1;
        fprintf(stderr, "  %s: truth %.6g fitted %.6g (%+.3f %%)\n", sid_model_param(su->m, su->idx[k])->name,
                su->truth[su->idx[k]], theta[su->idx[k]], 100 * e);
        if (fabs(e) > fabs(worst)) worst = e;
    }
    sid_problem_free(p);
    free(theta);
    return worst;
}

START_TEST(automatic_step_recovers_viscous_friction)
{
    setup su;
    setup_make(&su);
    sid_error err = {0};
    sid_loss_opts o;
    sid_loss_opts_defaults(&o);
    ck_assert_int_eq(o.sim.substeps, 0);   /* the default: not given, chosen */
    sid_step_choice c;
    ck_assert_msg(sid_step_choose(su.m, su.theta, (const sid_traj *const *)&su.log, 1, &o, SID_STEP_TOL, &c, &err) ==
                      SID_OK,
                  "%s", err.msg);
    fprintf(stderr, "step choice, double pendulum at 500 Hz: %d substeps (h %.3g s), error %.3g of the allowance "
                    "(%.3g of the spread), %d windows\n", c.substeps, c.h, c.error, c.tol, c.windows);
    ck_assert(c.automatic && !c.capped && c.substeps > 1 && c.error <= 1);
    ck_assert(c.sim.substeps == c.substeps && fabs(c.sim.max_dt - 0.002 / c.substeps) < 1e-15);
    /* deterministic: the same choice again */
    sid_step_choice c2;
    ck_assert_int_eq(sid_step_choose(su.m, su.theta, (const sid_traj *const *)&su.log, 1, &o, SID_STEP_TOL, &c2, &err),
                     SID_OK);
    ck_assert(c2.substeps == c.substeps && c2.error == c.error);
    fprintf(stderr, "one step per sample (2 ms):\n");
    const sid_sim_opts one = {SID_EULER, 1, 0};
    const double e1 = fit_error(&su, &one);
    fprintf(stderr, "the chosen step (%.3g ms):\n", 1e3 * c.h);
    const double ec = fit_error(&su, &c.sim);
    ck_assert_msg(fabs(e1) > 0.01, "one step per sample is not measurably biased (%.3g %%)", 100 * e1);
    ck_assert_msg(fabs(ec) < 0.005, "the chosen step leaves a bias of %.3g %%", 100 * ec);
    setup_free(&su);
}
END_TEST

/* A given step is kept as given and nothing is simulated to judge it; rk4 needs no substeps
 * here. */
START_TEST(given_step_is_kept)
{
    setup su;
    setup_make(&su);
    sid_error err = {0};
    sid_loss_opts o;
    sid_loss_opts_defaults(&o);
    o.sim = (sid_sim_opts){SID_EULER, 1, 0};
    sid_step_choice c;
    ck_assert_int_eq(sid_step_choose(su.m, su.theta, (const sid_traj *const *)&su.log, 1, &o, SID_STEP_TOL, &c, &err),
                     SID_OK);
    ck_assert(!c.automatic && c.sim.substeps == 1 && c.sim.max_dt == 0 && c.substeps == 1);
    ck_assert_msg(c.error == -1 && c.windows == 0, "a given step was tested: error %g on %d windows", c.error,
                  c.windows);
    o.sim = (sid_sim_opts){SID_RK4, 0, 0};
    ck_assert_int_eq(sid_step_choose(su.m, su.theta, (const sid_traj *const *)&su.log, 1, &o, SID_STEP_TOL, &c, &err),
                     SID_OK);
    ck_assert(c.automatic && c.substeps == 1 && c.error < 1e-3);
    setup_free(&su);
}
END_TEST

/* The noise a log shows sets what a step may leave: the same motion with 2 mrad of white noise
 * on the positions gets its noise estimated to 5 % and a coarser step than the clean log, whose
 * step error is then within that noise. */
START_TEST(noisy_log_coarser_step)
{
    setup su;
    setup_make(&su);
    sid_error err = {0};
    sid_loss_opts o;
    sid_loss_opts_defaults(&o);
    sid_step_choice clean, noisy;
    ck_assert_int_eq(sid_step_choose(su.m, su.theta, (const sid_traj *const *)&su.log, 1, &o, SID_STEP_TOL, &clean,
                                     &err), SID_OK);
    tu_add_noise(su.log, 2e-3, 0, 7);
    double noise[2];
    sid_traj_position_noise(su.m, su.log, noise);
    ck_assert_int_eq(sid_step_choose(su.m, su.theta, (const sid_traj *const *)&su.log, 1, &o, SID_STEP_TOL, &noisy,
                                     &err), SID_OK);
    fprintf(stderr, "noise 2 mrad: estimated %.3g and %.3g mrad; substeps %d (clean log: %d), error %.2g of the "
                    "allowance %.3g rad (%s's)\n", 1e3 * noise[0], 1e3 * noise[1], noisy.substeps, clean.substeps,
            noisy.error, noisy.allowance, sid_model_q_name(su.m, noisy.coord));
    for (int i = 0; i < 2; i++) ck_assert_msg(fabs(noise[i] / 2e-3 - 1) < 0.05, "noise of q[%d]: %g", i, noise[i]);
    ck_assert_int_lt(noisy.substeps, clean.substeps);
    ck_assert(noisy.error <= 1 && noisy.allowance >= 0.95 * 2e-3 * SID_STEP_NOISE);
    setup_free(&su);
}
END_TEST

Suite *step_choice_suite(void)
{
    Suite *s = suite_create("step_choice");
    TCase *tc = tcase_create("bias");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, automatic_step_recovers_viscous_friction);
    tcase_add_test(tc, given_step_is_kept);
    tcase_add_test(tc, noisy_log_coarser_step);
    suite_add_tcase(s, tc);
    return s;
}
