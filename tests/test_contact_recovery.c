/* test_contact_recovery.c — identification with contact on data of known truth: the box of
 * data/box (free joint, eight corner spheres) simulated by sysid itself with friction,
 * stiffness, damping and mass 23-60 % off the nominal robot.json, then fitted from nominal,
 * per gradient mode: compliant contact with the exact adjoint gradient, compliant contact with
 * randomized smoothing (no derivative of the simulation), and hard contact with the implicit
 * gradient (friction and mass: the hard model has no stiffness or damping), and compliant and
 * hard contact by Levenberg-Marquardt. Logs: a slide with spin, a tilted drop that tumbles, a
 * toss. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fit_driver.h"
#include "robot_json.h"
#include "robot_load.h"
#include "test_util.h"

Suite *contact_recovery_suite(void);

static const char *const free_names[] = {"contact.ground.friction", "contact.ground.stiffness",
                                         "contact.ground.damping", "links.box.mass"};
static const double truth_factor[] = {1.6, 0.7, 0.6, 0.77};
enum { NFREE = 4, NLOG = 3, NSAMPLE = 801 };
enum { ADJOINT, SMOOTHED, HARD, ADJOINT_LM, HARD_LM };
static const char *const mode_name[] = {"compliant, adjoint", "compliant, smoothed 8 pairs", "hard, implicit",
                                         "compliant, Levenberg-Marquardt", "hard, Levenberg-Marquardt"};

/* One log of the box from start state (q0, v0), simulated with theta (no commands). */
static sid_traj *box_log(const sid_model *m, const double *theta, const double *q0, const double *v0)
{
    sid_traj *tr = sid_traj_create(NSAMPLE, 7, 6, 1);
    for (int k = 0; k < NSAMPLE; k++) tr->t[k] = 1e-3 * k;
    memcpy(tr->q, q0, 7 * sizeof(double));
    memcpy(tr->qd, v0, 6 * sizeof(double));
    tu_replay(m, theta, tr, NULL);
    return tr;
}

/* The undamped (Gauss-Newton) model's predicted decrease at a fit's end, -g^T h / 2: h the LM
 * step at damping 1e-12 (sid_lm_step), g the loss's gradient in the fit's scaled variables
 * (the parameters' from sid_fit_objective, the start states' from the adjoint times their
 * scales), relative to the loss. */
static double gn_decrease(sid_problem *p, const double *theta, const double *x0, const sid_fit_opts *fo)
{
    const sid_model *m = sid_problem_model(p);
    const int nq = sid_model_nq(m), nx = nq + sid_model_nv(m), nf = fo->nfree;
    const int n = nf + sid_problem_nwindows(p) * nx;
    double *h = malloc(sizeof(double) * (size_t)n), *g = malloc(sizeof(double) * (size_t)n);
    double *grad = malloc(sizeof(double) * (size_t)sid_model_nparam(m)), f, f2;
    sid_error err = {0};
    ck_assert_msg(sid_lm_step(p, theta, x0, fo, 1e-12, h, &err) == SID_OK, "%s", err.msg);
    ck_assert_msg(sid_fit_objective(p, theta, x0, fo, &f, g, &err) == SID_OK, "%s", err.msg);
    ck_assert_msg(sid_problem_loss(p, theta, x0, &f2, grad, g + nf, &err) == SID_OK, "%s", err.msg);
    const double *sq = sid_problem_scale_q(p), *sqd = sid_problem_scale_qd(p);
    double gh = 0;
    for (int k = 0; k < n; k++) {
        const int i = (k - nf) % nx;
        gh += g[k] * h[k] * (k < nf ? 1 : i < nq ? sq[i] : sqd[i - nq]);
    }
    free(h), free(g), free(grad);
    return -0.5 * gh / f;
}

/* What a fit is held to. Bounds come from the figures the fit prints (measured on x86-64, gcc
 * -O3; the fits are deterministic), with a margin of about 1.5 to 3 on noisy data and of
 * several hundred where the error is rounding. Iteration counts, timings and NLopt's message
 * are printed for diagnosis only. */
#define NOT_HELD (-1.0)
typedef struct {
    double err[NFREE];    /* largest |fitted - truth| / truth, by free_names; NOT_HELD: see the case */
    double rest[NFREE];   /* where err is NOT_HELD: largest |fitted - truth| / |nominal - truth|,
                           * the part of the way from nominal to truth still to go; NOT_HELD: none */
    double loss_ratio;    /* largest loss / loss0 */
    double floor;         /* > 0: loss <= floor * the loss of the truth from the logged start states */
    double over_noise;    /* > 0: loss <= over_noise * the noise floor (tu_noise_loss) */
    double stderr_rel;    /* largest stderr / truth the covariance may state (all identifiable) */
    int flat;             /* stopped by the flat test (optimizer_auto.c), within a chi-square change of 1
                           * of the fit run on without it */
    double gn_ftol;       /* > 0 (LM): the undamped model's predicted decrease at the end <= gn_ftol
                           * ftol_rel of the loss (gn_decrease), or within one residual's share of it
                           * (1/nres: the flat test's statistical convergence, optimizer_auto.c) */
} expectation;

static void recover(int mode, double noise, const expectation *x)
{
    const int smoothing = mode == SMOOTHED, hard = mode == HARD || mode == HARD_LM, nfree = hard ? 2 : NFREE;
    sid_model *m;
    double *theta;
    cJSON *doc;
    sid_error err = {0};
    ck_assert_msg(robot_model("../data/box/robot.json", &m, &theta, &doc, &err) == 0, "%s", err.msg);
    if (hard) sid_model_set_contact_model(m, SID_CONTACT_HARD);
    const int np = sid_model_nparam(m);
    /* a softer activation than data/box's (which mimics MuJoCo's stiff contact): the loss is
     * then smooth enough for L-BFGS from 60 % away */
    theta[sid_model_param_find(m, "contact.ground.width")] = 2e-3;
    double *truth = malloc(sizeof(double) * (size_t)np), lo[NFREE], hi[NFREE];
    int idx[NFREE];
    memcpy(truth, theta, sizeof(double) * (size_t)np);
    for (int j = 0; j < nfree; j++) {
        const int k = hard && j == 1 ? 3 : j;   /* hard: friction and mass */
        idx[j] = sid_model_param_find(m, free_names[k]);
        ck_assert_int_ge(idx[j], 0);
        truth[idx[j]] = theta[idx[j]] * truth_factor[k];
        lo[j] = 0.2 * theta[idx[j]];
        hi[j] = 5 * theta[idx[j]];
    }
    const double s = sin(0.3), c = cos(0.3);
    const double q0[NLOG][7] = {{0, 0, 0.0499, 1, 0, 0, 0}, {0, 0, 0.2, c, s, 0.5 * s, 0}, {0, 0, 0.12, 1, 0, 0, 0}};
    const double v0[NLOG][6] = {{1.5, 0.5, 0, 0, 0, 3}, {0.3, 0, 0, 4, -2, 1}, {1.2, -0.4, 1.0, 0, 6, 2}};
    sid_traj *logs[NLOG];
    for (int l = 0; l < NLOG; l++) {
        double qn[7];
        memcpy(qn, q0[l], sizeof qn);
        const double n = sqrt(qn[3] * qn[3] + qn[4] * qn[4] + qn[5] * qn[5] + qn[6] * qn[6]);
        for (int j = 3; j < 7; j++) qn[j] /= n;
        logs[l] = box_log(m, truth, qn, v0[l]);
        if (noise > 0) tu_add_noise(logs[l], 1e-3 * noise, 1e-2 * noise, 7 + (unsigned)l);
    }
    sid_loss_opts o;
    sid_loss_opts_defaults(&o);
    o.window = 0.2;
    /* noisy logged start states would bias every parameter: estimate them (multiple shooting);
     * hard contact re-solves every step in the backward pass, so its noisy L-BFGS fit keeps
     * the logged ones and says how close that gets (its LM fit estimates them) */
    o.estimate_start = noise > 0 && mode != HARD;
    sid_problem *p;
    ck_assert_msg(sid_problem_create(&p, m, (const sid_traj *const *)logs, NLOG, &o, &err) == SID_OK, "%s", err.msg);
    const size_t nx0 = (size_t)(sid_problem_nwindows(p) * 13);
    double *x0 = malloc(sizeof(double) * nx0), *x0_truth = malloc(sizeof(double) * nx0), loss_truth;
    sid_problem_start_states(p, theta, x0);
    sid_problem_start_states(p, truth, x0_truth);
    ck_assert_int_eq(sid_problem_loss(p, truth, x0_truth, &loss_truth, NULL, NULL, &err), SID_OK);
    /* on noisy data the loss stops improving at the noise floor: a looser tolerance ends there */
    sid_fit_opts fo;
    sid_fit_opts_defaults(&fo);
    fo.nfree = nfree, fo.idx = idx, fo.lo = lo, fo.hi = hi;
    fo.max_iter = 300;
    fo.ftol_rel = noise > 0 ? 1e-7 : 1e-14;
    if (smoothing) fo.smoothing_sigma = 0.02, fo.smoothing_pairs = 8, fo.smoothing_seed = 1;
    if (mode == ADJOINT_LM || mode == HARD_LM) fo.optimizer = SID_OPT_LM;
    sid_fit_result res;
    double *theta_on = NULL, loss_on = 0;
    if (x->flat) {   /* the same fit run on past the flat test, from the same start */
        sid_fit_opts on = fo;
        on.flat_factor = 1e-300;
        theta_on = malloc(sizeof(double) * (size_t)sid_model_nparam(m));
        double *x0_on = malloc(sizeof(double) * nx0);
        memcpy(theta_on, theta, sizeof(double) * (size_t)sid_model_nparam(m));
        memcpy(x0_on, x0, sizeof(double) * nx0);
        ck_assert_msg(sid_fit(p, theta_on, x0_on, &on, &res, &err) == SID_OK, "%s", err.msg);
        loss_on = res.loss;
        fprintf(stderr, "  without the flat test: %d iterations, loss %.6e, %s\n", res.iterations, res.loss, res.message);
        free(x0_on);
    }
    ck_assert_msg(sid_fit(p, theta, x0, &fo, &res, &err) == SID_OK, "%s", err.msg);
    if (x->flat) {
        /* stopped by the flat test within a chi-square change of 1 of where it would have gone */
        const double dchi2 = sid_problem_nresiduals(p) * (res.loss - loss_on) / loss_on;
        fprintf(stderr, "  the flat test stopped it %.3g chi-square above that\n", dchi2);
        ck_assert_msg(strstr(res.message, "residual's share"), "not stopped by the flat test: %s", res.message);
        ck_assert_msg(fabs(dchi2) <= 1, "%g chi-square from the fit run on", dchi2);
        free(theta_on);
    }
    sid_covariance_result *cov = sid_alloc(sizeof *cov);
    ck_assert_int_eq(sid_problem_covariance(p, theta, x0, nfree, idx, NULL, cov, &err), SID_OK);
    const double gn = mode == ADJOINT_LM ? gn_decrease(p, theta, x0, &fo) : 0;
    const double noise_loss = tu_noise_loss(p, o.weight_q, o.weight_qd, 1e-3 * noise, 1e-2 * noise);
    fprintf(stderr, "contact recovery (%s, noise %g): loss %.3e -> %.3e (truth %.3e, noise floor %.3e), %d iterations, "
            "%d evaluations, %.2f s, %s\n", mode_name[mode], noise, res.loss0, res.loss, loss_truth, noise_loss,
            res.iterations, res.evaluations, res.seconds, res.message);
    if (mode == ADJOINT_LM) fprintf(stderr, "  the undamped model's predicted decrease at the end: %.3e of the loss\n", gn);
    for (int j = 0; j < nfree; j++) {
        const int i = idx[j], k = hard && j == 1 ? 3 : j;
        const double nominal = truth[i] / truth_factor[k], e = fabs(theta[i] - truth[i]) / truth[i];
        const double rest = fabs(theta[i] - truth[i]) / fabs(nominal - truth[i]), se = cov->stderr_[j] / truth[i];
        fprintf(stderr, "  %-26s nominal %-10.6g truth %-10.6g fitted %-12.7g error %8.2e%%  stderr %.3g\n", free_names[k],
                nominal, truth[i], theta[i], 100 * e, cov->stderr_[j]);
        ck_assert_msg(theta[i] >= lo[j] && theta[i] <= hi[j], "%s: %g outside its bounds", free_names[k], theta[i]);
        if (x->err[k] != NOT_HELD)
            ck_assert_msg(e <= x->err[k], "%s: relative error %g > %g", free_names[k], e, x->err[k]);
        else if (x->rest[k] != NOT_HELD)
            ck_assert_msg(rest <= x->rest[k], "%s: %g of the way from nominal to truth left > %g", free_names[k], rest,
                          x->rest[k]);
        ck_assert_msg(cov->identifiable[j], "%s reported unidentifiable", free_names[k]);
        ck_assert_msg(se <= x->stderr_rel, "%s: stderr %g of the truth > %g", free_names[k], se, x->stderr_rel);
    }
    ck_assert_msg(res.loss <= x->loss_ratio * res.loss0, "loss fell only to %g of %g (> %g)", res.loss / res.loss0,
                  res.loss0, x->loss_ratio);
    if (x->floor > 0)
        ck_assert_msg(res.loss <= x->floor * loss_truth, "loss %g > %g x the truth's %g", res.loss, x->floor, loss_truth);
    if (x->gn_ftol > 0)
        ck_assert_msg(gn <= fmax(x->gn_ftol * fo.ftol_rel, 1.0 / sid_problem_nresiduals(p)),
                      "converged where the Gauss-Newton model still promises %g of the loss", gn);
    if (x->over_noise > 0)
        ck_assert_msg(res.loss <= x->over_noise * noise_loss, "loss %g > %g x the noise floor %g", res.loss, x->over_noise,
                      noise_loss);
    sid_free(cov);
    free(x0_truth);
    free(x0);
    sid_problem_free(p);
    for (int l = 0; l < NLOG; l++) sid_traj_free(logs[l]);
    free(truth);
    cJSON_Delete(doc);
    sid_model_free(m);
    sid_free(theta);
}

/* Noise-free, exact gradient: the truth to rounding (measured: errors <= 1.6e-11, loss / loss0
 * 1.0e-19, stderr / truth <= 2.7e-12). */
START_TEST(adjoint_noise_free)
{
    const expectation x = {.err = {1e-8, 1e-8, 1e-8, 1e-8}, .rest = {NOT_HELD, NOT_HELD, NOT_HELD, NOT_HELD},
                           .loss_ratio = 1e-16, .stderr_rel = 1e-9};
    recover(ADJOINT, 0, &x);
}
END_TEST

/* 1 mm of noise on positions, 0.01 m/s on velocities, start states estimated. Measured:
 * friction 2.8 % off, mass 4.5 %; loss 1.787e-2 -> 2.962e-4, below the truth's 5.081e-4 (from
 * the logged starts) but 5.7 times the noise floor 5.15e-5; stderr / truth <= 2.1e-2 (8.4e-3
 * while the classic interval pooled one sigma^2 over q and qd rows; each channel's own noise
 * gives the velocity rows, noisier relative to their scale, their due, core/stats/covariance.c).
 * Stiffness (33.5 % off, 18690 for 14000 from a nominal 20000) and damping (70 % off, 20421
 * for 12000: it moved away from the truth) are not held to the truth, and the truth is not held
 * inside the covariance's 95 % interval (stiffness is 56 standard errors away, damping 84,
 * friction 14, mass 19): the fit is not at the loss's minimum. L-BFGS ends with NLopt: FAILURE
 * after 90 iterations and, restarted there, makes no iteration; started at the truth instead,
 * the same problem reaches loss 7.1e-5 (1.4 times the noise floor) with all four parameters
 * within 1.3 % of the truth. So the data do determine stiffness and damping near the truth;
 * it is the optimizer that stops short from nominal, where 1 mm of noise swamps the
 * sub-millimetre penetrations that carry them. What holds: stiffness moved at least part of
 * the way (22 % of it measured; held: 10 %), the loss fell below the truth's and to within 8
 * times the noise floor.
 * Levenberg-Marquardt, from nominal, ends at another minimum (lm_noisy).
 */
START_TEST(adjoint_noisy)
{
    const expectation x = {.err = {0.04, NOT_HELD, NOT_HELD, 0.05}, .rest = {NOT_HELD, 0.9, NOT_HELD, NOT_HELD},
                           .loss_ratio = 0.03, .floor = 1, .over_noise = 8, .stderr_rel = 0.03};
    recover(ADJOINT, 1, &x);
}
END_TEST

/* The same noisy logs fitted by Levenberg-Marquardt (the residuals' exact Jacobian by forward
 * mode, start states eliminated window by window). Measured: friction 6.9 % off, stiffness
 * 1.3 %, damping 4.5 %, mass 5.0 %; loss 1.787e-2 -> 1.443e-4, below the truth's 5.081e-4 and
 * 2.8 times the noise floor 5.15e-5; 37 iterations, 81 evaluations, stopped by the flat test
 * (10 iterations gained 1.4e-5 of the loss, under 1/nres = 3.2e-5); stderr / truth <= 5.3e-3;
 * at the end the undamped model promises 4.4e-7 of the loss, a chi-square change of 0.014;
 * run on without the flat test it takes 45 iterations to a loss 0.006 chi-square lower (held:
 * 1). Held, with a
 * margin of about 1.5: stiffness within 2 %, damping within 7 % (the target for both is
 * 10 %), friction within 10 %, mass 7.5 %, the loss within 4 times the noise floor; the
 * Gauss-Newton prediction within twice ftol_rel or one residual's share. This is a local minimum, not a stop short
 * of one: with the finite-difference Jacobian of before, whose rounding sent the first steps
 * elsewhere, LM ended at a loss of 5.96e-5 with every parameter within 1.5 %; on the segment
 * between the two end points the loss first rises (1.50e-4 at a twentieth of the way), and
 * giving one window of the toss (window 9, its start spin 0.85 rad/s apart) the other end's
 * start state alone takes the loss from 1.439e-4 to 9.0e-5: that window's start state sits in
 * another basin. The truth is not inside the 95 % intervals (friction is 49 standard errors
 * away): see the intervals' diagnostics. */
START_TEST(lm_noisy)
{
    const expectation x = {.err = {0.10, 0.02, 0.07, 0.075}, .rest = {NOT_HELD, NOT_HELD, NOT_HELD, NOT_HELD},
                           .loss_ratio = 0.012, .floor = 1, .over_noise = 4, .gn_ftol = 2, .stderr_rel = 0.01,
                           .flat = 1};
    recover(ADJOINT_LM, 1, &x);
}
END_TEST

/* Smoothing minimises the smoothed loss, whose minimum is not the loss's: close to the truth,
 * not at it (measured: friction 0.39 %, stiffness 0.059 %, damping 0.70 %, mass 0.052 %;
 * loss / loss0 2.0e-4; stderr / truth <= 2.7e-4). */
START_TEST(smoothed_noise_free)
{
    const expectation x = {.err = {0.01, 0.002, 0.015, 0.002}, .rest = {NOT_HELD, NOT_HELD, NOT_HELD, NOT_HELD},
                           .loss_ratio = 1e-3, .stderr_rel = 1e-3};
    recover(SMOOTHED, 0, &x);
}
END_TEST

/* Hard contact, implicit gradient, noise-free: the truth to rounding (measured: errors
 * <= 7.1e-11, loss / loss0 6.8e-20, stderr / truth <= 4.0e-13). */
START_TEST(hard_implicit_noise_free)
{
    const expectation x = {.err = {1e-8, NOT_HELD, NOT_HELD, 1e-8}, .rest = {NOT_HELD, NOT_HELD, NOT_HELD, NOT_HELD},
                           .loss_ratio = 1e-16, .stderr_rel = 1e-9};
    recover(HARD, 0, &x);
}
END_TEST

/* Hard contact on noisy data from the logged (noisy) start states. Measured: friction 0.27 %
 * off, mass 1.5 %; loss 1.362e-3 -> 2.709e-4, 1.7 % above the truth's 2.664e-4 and 3.4 times
 * the noise floor 7.92e-5 (the logged start states carry their noise); stderr / truth <= 8.6e-4. The truth is not held inside the 95 % interval (mass is 23 standard errors
 * away): the noisy start states bias the minimum (a fit started at the truth ends at mass
 * 0.77 % low, loss 2.643e-4), and the fit from nominal stops short of it (FTOL_REACHED; a
 * restart there moves the loss by less than 1e-4 of itself in 130 iterations on the piecewise
 * smooth loss of hard contact). Assertable once start states can be estimated with hard contact. */
START_TEST(hard_implicit_noisy)
{
    const expectation x = {.err = {0.01, NOT_HELD, NOT_HELD, 0.025}, .rest = {NOT_HELD, NOT_HELD, NOT_HELD, NOT_HELD},
                           .loss_ratio = 0.25, .floor = 1.05, .over_noise = 4.5, .stderr_rel = 2e-3};
    recover(HARD, 1, &x);
}
END_TEST

/* Hard contact on the same noisy logs by Levenberg-Marquardt, start states estimated: its
 * Jacobian is forward mode through the contact solve (contact_hard_jvp.c). Measured: friction
 * 0.074 % off, mass 0.022 %; loss 1.333e-3 -> 8.137e-5, 1.03 times the noise floor 7.92e-5
 * and below the truth's 2.594e-4 from the logged starts; 17 iterations, 53 evaluations;
 * stderr / truth <= 1.3e-3, and the truth inside both 95 % intervals (0.6 and 0.17 standard
 * errors away). What hard_implicit_noisy's L-BFGS from the logged starts could not: held
 * within 0.5 %, the loss within 1.5 times the noise floor. */
START_TEST(hard_lm_noisy)
{
    const expectation x = {.err = {0.005, NOT_HELD, NOT_HELD, 0.005}, .rest = {NOT_HELD, NOT_HELD, NOT_HELD, NOT_HELD},
                           .loss_ratio = 0.1, .floor = 1, .over_noise = 1.5, .stderr_rel = 5e-3};
    recover(HARD_LM, 1, &x);
}
END_TEST

Suite *contact_recovery_suite(void)
{
    Suite *s = suite_create("contact_recovery");
    TCase *tc = tcase_create("box");
    tcase_set_tags(tc, "slow");   /* numerics, not memory: `make debug` leaves them out */
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, adjoint_noise_free);
    tcase_add_test(tc, adjoint_noisy);
    tcase_add_test(tc, lm_noisy);
    tcase_add_test(tc, smoothed_noise_free);
    tcase_add_test(tc, hard_implicit_noise_free);
    tcase_add_test(tc, hard_implicit_noisy);
    tcase_add_test(tc, hard_lm_noisy);
    suite_add_tcase(s, tc);
    return s;
}
