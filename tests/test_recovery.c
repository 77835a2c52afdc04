/* test_recovery.c — parameter recovery on the example robots (issue: "sysid fit"): data made
 * with known truth, parameters perturbed 20-50 % from nominal, fitted from nominal.
 * Without noise every identifiable parameter comes back to rounding (within 1e-6); with noise
 * (sigma 1e-3 rad on q, 1e-2 rad/s on qd) within the case's bound and inside the 95 % interval
 * the covariance states for it, and the loss falls to the noise floor. Parameters the
 * covariance calls unidentifiable are not held to a value: the test holds that exactly the
 * expected ones are flagged, and that the combination of them the data determine is recovered.
 * Iteration counts and NLopt's message are printed for diagnosis only. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "robot_json.h"
#include "robot_load.h"
#include "sid_internal.h"
#include "test_util.h"

Suite *recovery_suite(void);

typedef struct {
    const char *robot;
    const char *free[4];
    int nfree_globs;
    double amp;          /* command amplitude */
    int nsample;
    double dt, window;
    double noisy_err;    /* largest relative error of an identifiable parameter on noisy data */
    /* The parameters the covariance must call unidentifiable (NULL: none): a link's mass and
     * the armature of the vertical joint that alone moves it (gravity along the axis: only
     * the inertia about it, M[0][0] + armature, reaches the data). */
    const char *null_mass, *null_armature;
} case_t;

/* noisy_err, measured: double pendulum 7.8 % (shoulder viscous friction), arm7 0.21 % (j1
 * viscous friction) */
static const case_t cases[] = {
    {"../data/double_pendulum/robot.json",
     {"joints.*.friction.viscous", "joints.*.armature", "joints.*.motor.kt", "links.*.mass"}, 4, 0.6, 1501, 2e-3, 0.25,
     0.10, NULL, NULL},
    {"../data/arm7/robot.json",
     {"joints.*.friction.viscous", "joints.*.armature", "joints.*.motor.kt", "links.*.mass"}, 4, 0.3, 1001, 2e-3, 0.2,
     0.005, "links.link1.mass", "joints.j1.armature"},
};

/* M[0][0] + armature of the first joint at the log's first positions: the inertia about it. */
static double inertia_about_first_joint(const sid_model *m, const double *theta, const sid_traj *log, int armature)
{
    const int nv = sid_model_nv(m);
    double *M = malloc(sizeof(double) * (size_t)(nv * nv));
    sid_workspace *ws = sid_workspace_create(m);
    sid_mass_matrix(m, theta, ws, log->q, M);
    const double I = M[0] + theta[armature];
    sid_workspace_free(ws);
    free(M);
    return I;
}

static void recover(const case_t *c, double noise, unsigned seed, sid_optimizer optimizer)
{
    sid_model *m;
    double *theta;
    cJSON *doc;
    sid_error err = {0};
    ck_assert_msg(robot_model(c->robot, &m, &theta, &doc, &err) == 0, "%s", err.msg);
    const int np = sid_model_nparam(m), nx = sid_model_nq(m) + sid_model_nv(m);
    int *mask = calloc((size_t)np, sizeof(int)), idx[SID_MAX_FREE], n = 0;
    for (int g = 0; g < c->nfree_globs; g++) sid_model_param_match(m, c->free[g], mask);
    double *truth = malloc(sizeof(double) * (size_t)np), lo[SID_MAX_FREE], hi[SID_MAX_FREE];
    memcpy(truth, theta, sizeof(double) * (size_t)np);
    unsigned s = seed;
    for (int i = 0; i < np; i++) {
        if (!mask[i] || theta[i] == 0) continue;
        const double f = tu_uniform(&s, 0.2, 0.5);
        truth[i] = theta[i] * (tu_uniform(&s, 0, 1) < 0.5 ? 1 + f : 1 - f);
        idx[n] = i;
        lo[n] = theta[i] > 0 ? 0.1 * theta[i] : 10 * theta[i];
        hi[n] = theta[i] > 0 ? 10 * theta[i] : 0.1 * theta[i];
        n++;
    }
    sid_traj *logs[2];
    logs[0] = tu_synth_log(m, truth, c->nsample, c->dt, c->amp, seed + 1);
    logs[1] = tu_synth_log(m, truth, c->nsample, c->dt, c->amp, seed + 2);
    if (noise > 0) {
        tu_add_noise(logs[0], 1e-3 * noise, 1e-2 * noise, seed + 3);
        tu_add_noise(logs[1], 1e-3 * noise, 1e-2 * noise, seed + 4);
    }
    sid_loss_opts o;
    sid_loss_opts_defaults(&o);
    o.window = c->window;
    o.estimate_start = 1;
    sid_problem *p;
    ck_assert_msg(sid_problem_create(&p, m, (const sid_traj *const *)logs, 2, &o, &err) == SID_OK, "%s", err.msg);
    double *x0 = malloc(sizeof(double) * (size_t)(sid_problem_nwindows(p) * nx));
    sid_problem_start_states(p, theta, x0);
    sid_fit_opts fo;
    sid_fit_opts_defaults(&fo);
    fo.nfree = n, fo.idx = idx, fo.lo = lo, fo.hi = hi;
    fo.optimizer = optimizer;
    fo.ftol_rel = 1e-15;   /* max_iter: the default 1000 */
    sid_fit_result res;
    ck_assert_msg(sid_fit(p, theta, x0, &fo, &res, &err) == SID_OK, "%s", err.msg);
    sid_covariance_result *cov = sid_alloc(sizeof *cov);
    ck_assert_int_eq(sid_problem_covariance(p, theta, x0, n, idx, NULL, cov, &err), SID_OK);
    fprintf(stderr, "recovery %s noise %g, %s: loss %.3e -> %.3e, %d iterations, %d evaluations, %.2f s, %s; %d of %d "
            "identifiable\n", c->robot, noise, optimizer == SID_OPT_LM ? "LM" : "L-BFGS", res.loss0, res.loss,
            res.iterations, res.evaluations, res.seconds, res.message, n - cov->nnull, n);
    fprintf(stderr, "  %-34s %12s %12s %9s %10s %6s\n", "parameter", "truth", "fitted", "error", "stderr", "|e|/se");
    /* Noise-free: the data are reproduced to rounding (measured loss / loss0 <= 5.0e-16).
     * Noisy: the loss falls to the noise floor, the expected loss of the truth from the true
     * start states, less the share of the fitted unknowns (measured 0.975 and 0.974 of it, for
     * 0.991 and 0.989 expected: the noise's own spread is about 1 %). */
    if (noise > 0) {
        const double floor = tu_noise_loss(p, o.weight_q, o.weight_qd, 1e-3 * noise, 1e-2 * noise);
        ck_assert_msg(res.loss >= 0.95 * floor && res.loss <= 1.02 * floor, "loss %g is %g of the noise floor %g",
                      res.loss, res.loss / floor, floor);
    } else {
        ck_assert_msg(res.loss <= 1e-13 * res.loss0, "loss fell only to %g of %g", res.loss / res.loss0, res.loss0);
    }
    /* Noise-free, |e|/se is not held: stderr is the spread of rounding error, as is e. */
    int checked = 0, null_mass = -1, null_armature = -1;
    for (int k = 0; k < n; k++) {
        const int i = idx[k];
        const char *name = sid_model_param(m, i)->name;
        const double e = fabs(theta[i] - truth[i]) / fabs(truth[i]), se = cov->stderr_[k];
        fprintf(stderr, "  %-34s %12.6g %12.6g %8.2e%% %10.3g %6.2f%s\n", name, truth[i], theta[i], 100 * e, se,
                fabs(theta[i] - truth[i]) / se, cov->identifiable[k] ? "" : "  not identifiable");
        const int expect_null = (c->null_mass && strcmp(name, c->null_mass) == 0) ||
                                (c->null_armature && strcmp(name, c->null_armature) == 0);
        ck_assert_msg(cov->identifiable[k] == !expect_null, "%s: identifiable %d", name, cov->identifiable[k]);
        if (expect_null) {
            if (c->null_mass && strcmp(name, c->null_mass) == 0) null_mass = i;
            else null_armature = i;
            continue;
        }
        checked++;
        ck_assert_msg(e <= (noise > 0 ? c->noisy_err : 1e-6), "%s: relative error %g", name, e);
        if (noise > 0)
            ck_assert_msg(fabs(theta[i] - truth[i]) <= 1.96 * se, "%s: truth %g outside %g +- 1.96 * %g", name, truth[i],
                          theta[i], se);
    }
    ck_assert_int_eq(cov->nnull, c->null_mass ? 1 : 0);
    if (c->null_mass) {
        /* What the data fix of the unidentifiable pair: the inertia about the joint. Measured
         * 1.1e-10 noise-free, 3.7e-4 noisy. */
        ck_assert_int_ge(null_mass, 0);
        ck_assert_int_ge(null_armature, 0);
        const double I_fit = inertia_about_first_joint(m, theta, logs[0], null_armature);
        const double I_true = inertia_about_first_joint(m, truth, logs[0], null_armature);
        const double e = fabs(I_fit - I_true) / I_true;
        fprintf(stderr, "  inertia about the first joint: truth %.6g fitted %.6g error %.2e%%\n", I_true, I_fit, 100 * e);
        ck_assert_msg(e <= (noise > 0 ? 1e-3 : 1e-6), "inertia about the first joint: relative error %g", e);
    }
    ck_assert_int_ge(checked, n / 2);
    sid_free(cov);
    free(x0);
    sid_problem_free(p);
    sid_traj_free(logs[0]);
    sid_traj_free(logs[1]);
    free(truth);
    free(mask);
    cJSON_Delete(doc);
    sid_model_free(m);
    sid_free(theta);
}

START_TEST(noise_free) { recover(&cases[_i], 0, 100 + (unsigned)_i, SID_OPT_LBFGS); }
END_TEST
START_TEST(noisy) { recover(&cases[_i], 1, 200 + (unsigned)_i, SID_OPT_LBFGS); }
END_TEST

/* The same fits by Levenberg-Marquardt: the same end points, held to the same bounds */
START_TEST(noise_free_lm) { recover(&cases[_i], 0, 100 + (unsigned)_i, SID_OPT_LM); }
END_TEST

START_TEST(noisy_lm) { recover(&cases[_i], 1, 200 + (unsigned)_i, SID_OPT_LM); }
END_TEST

Suite *recovery_suite(void)
{
    Suite *s = suite_create("recovery");
    TCase *tc = tcase_create("examples");
    tcase_set_tags(tc, "slow");   /* numerics, not memory: `make debug` leaves them out */
    tcase_set_timeout(tc, 600);
    const int n = (int)(sizeof cases / sizeof cases[0]);
    tcase_add_loop_test(tc, noise_free, 0, n);
    tcase_add_loop_test(tc, noisy, 0, n);
    tcase_add_loop_test(tc, noise_free_lm, 0, n);
    tcase_add_loop_test(tc, noisy_lm, 0, n);
    suite_add_tcase(s, tc);
    return s;
}
