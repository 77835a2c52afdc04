/* test_fit.c — parameter recovery: logs made with a known true robot, fitted from nominal. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

Suite *fit_suite(void);

START_TEST(recovers_friction_and_motor_constants)
{
    sid_robot_desc *d = tu_random_robot(41, 3, TU_FRICTION | TU_MOTORS);
    for (int j = 0; j < d->njoint; j++) d->joint[j].has_stribeck = 0;
    sid_model *m;
    double *theta;
    sid_error err = {0};
    ck_assert_msg(sid_model_create(&m, &theta, d, &err) == SID_OK, "%s", err.msg);
    tu_desc_free(d);
    const int np = sid_model_nparam(m);
    int mask[1024] = {0}, idx[64], n = 0;
    sid_model_param_match(m, "joints.*.friction.viscous", mask);
    sid_model_param_match(m, "joints.*.friction.coulomb", mask);
    sid_model_param_match(m, "joints.*.armature", mask);
    sid_model_param_match(m, "links.*.mass", mask);
    double *truth = malloc(sizeof(double) * (size_t)np), lo[64], hi[64];
    memcpy(truth, theta, sizeof(double) * (size_t)np);
    unsigned s = 9;
    for (int i = 0; i < np; i++)
        if (mask[i]) {
            idx[n] = i;
            truth[i] = theta[i] * (tu_uniform(&s, 0, 1) < 0.5 ? 1.2 + tu_uniform(&s, 0, 0.3) : 0.8 - tu_uniform(&s, 0, 0.3));
            lo[n] = 0;
            hi[n] = 10 * theta[i];
            n++;
        }
    sid_traj *log = tu_synth_log(m, truth, 2001, 1e-3, 0.4, 3);
    sid_loss_opts lo_opts;
    sid_loss_opts_defaults(&lo_opts);
    lo_opts.window = 0.25;
    sid_problem *p;
    ck_assert_int_eq(sid_problem_create(&p, m, (const sid_traj *const *)&log, 1, &lo_opts, &err), SID_OK);
    sid_fit_opts fo = {n, idx, lo, hi, 300, 1e-14, 0, NULL, NULL, NULL};
    sid_fit_result r;
    ck_assert_msg(sid_fit(p, theta, NULL, &fo, &r, &err) == SID_OK, "%s", err.msg);
    fprintf(stderr, "fit: loss %.3e -> %.3e in %d iterations, %d evaluations, %d rejected, %s\n", r.loss0, r.loss,
            r.iterations, r.evaluations, r.rejected, r.message);
    double worst = 0;
    for (int k = 0; k < n; k++) {
        const int i = idx[k];
        const double e = fabs(theta[i] - truth[i]) / fabs(truth[i]);
        fprintf(stderr, "  %-36s truth %.6g fitted %.6g error %.2e\n", sid_model_param(m, i)->name, truth[i], theta[i], e);
        if (e > worst) worst = e;
    }
    ck_assert_msg(worst < 5e-3, "worst relative error %g", worst);
    sid_problem_free(p);
    sid_traj_free(log);
    free(truth);
    sid_model_free(m);
    sid_free(theta);
}
END_TEST

/* A problem on one synthetic log of a robot with friction and motors, truth perturbed. */
typedef struct {
    sid_model *m;
    double *theta, *truth;
    sid_traj *log;
    sid_problem *p;
    double *x0;          /* start states, when estimated */
    int idx[64], n;
} setup;

static void setup_make(setup *su, const char *const *globs, int nglob, double noise_scale, double window, int estimate)
{
    sid_robot_desc *d = tu_random_robot(41, 3, TU_FRICTION | TU_MOTORS);
    for (int j = 0; j < d->njoint; j++) d->joint[j].has_stribeck = 0;
    sid_error err = {0};
    ck_assert_msg(sid_model_create(&su->m, &su->theta, d, &err) == SID_OK, "%s", err.msg);
    tu_desc_free(d);
    const int np = sid_model_nparam(su->m);
    int mask[1024] = {0};
    for (int g = 0; g < nglob; g++) sid_model_param_match(su->m, globs[g], mask);
    su->truth = malloc(sizeof(double) * (size_t)np);
    memcpy(su->truth, su->theta, sizeof(double) * (size_t)np);
    unsigned s = 9;
    su->n = 0;
    for (int i = 0; i < np; i++)
        if (mask[i]) {
            su->idx[su->n++] = i;
            su->truth[i] = su->theta[i] * (tu_uniform(&s, 0, 1) < 0.5 ? 1.2 + tu_uniform(&s, 0, 0.3) : 0.8 - tu_uniform(&s, 0, 0.3));
        }
    su->log = tu_synth_log(su->m, su->truth, 4001, 1e-3, 0.4, 3);
    if (noise_scale > 0) tu_add_noise(su->log, 1e-3 * noise_scale, 1e-2 * noise_scale, 77);
    sid_loss_opts o;
    sid_loss_opts_defaults(&o);
    o.window = window;
    o.estimate_start = estimate;
    ck_assert_int_eq(sid_problem_create(&su->p, su->m, (const sid_traj *const *)&su->log, 1, &o, &err), SID_OK);
    su->x0 = NULL;
    if (estimate) {
        su->x0 = malloc(sizeof(double) * (size_t)(sid_problem_nwindows(su->p) * (sid_model_nq(su->m) + sid_model_nv(su->m))));
        sid_problem_start_states(su->p, su->theta, su->x0);
    }
}

static void setup_free(setup *su)
{
    free(su->x0);
    sid_problem_free(su->p);
    sid_traj_free(su->log);
    free(su->truth);
    sid_model_free(su->m);
    sid_free(su->theta);
}

START_TEST(jacobian_agrees_with_gradient)
{
    /* grad L = J^T r / nres, exactly: forward mode and reverse mode meet, with logged and
     * with estimated start states */
    const char *globs[] = {"joints.*.friction.*", "links.*.mass", "links.link2.com*", "joints.joint1.origin.*",
                           "joints.*.motor.*", "joints.*.armature"};
    for (int estimate = 0; estimate < 2; estimate++) {
        setup su;
        setup_make(&su, globs, 6, 0, 0.1, estimate);
        const int nres = sid_problem_nresiduals(su.p), np = sid_model_nparam(su.m), nwin = sid_problem_nwindows(su.p);
        const int nx = sid_model_nq(su.m) + sid_model_nv(su.m), ncol = su.n + (estimate ? nx : 0);
        double *grad = malloc(sizeof(double) * (size_t)np), *gx0 = malloc(sizeof(double) * (size_t)(nwin * nx)), loss;
        double *jtr = calloc((size_t)su.n, sizeof(double));
        sid_error err = {0};
        ck_assert_int_eq(sid_problem_loss(su.p, su.theta, su.x0, &loss, grad, gx0, &err), SID_OK);
        double rr = 0;
        int rows_total = 0;
        for (int w = 0; w < nwin; w++) {
            const int rows = sid_problem_window_rows(su.p, w);
            double *r = malloc(sizeof(double) * (size_t)rows), *J = malloc(sizeof(double) * (size_t)rows * (size_t)ncol);
            ck_assert_int_eq(sid_problem_window_jacobian(su.p, su.theta, su.x0 ? su.x0 + (size_t)w * nx : NULL, w, su.n, su.idx,
                                                         r, J, &err), SID_OK);
            for (int i = 0; i < rows; i++) {
                rr += r[i] * r[i];
                for (int k = 0; k < su.n; k++) jtr[k] += J[(size_t)i * ncol + k] * r[i];
            }
            for (int j = 0; estimate && j < nx; j++) {
                double g = 0;
                for (int i = 0; i < rows; i++) g += J[(size_t)i * ncol + su.n + j] * r[i];
                g /= nres;
                ck_assert_msg(fabs(g - gx0[w * nx + j]) <= 1e-9 * (fabs(g) + 1e-12), "window %d start %d: %.15g vs %.15g",
                              w, j, g, gx0[w * nx + j]);
            }
            rows_total += rows;
            free(r);
            free(J);
        }
        ck_assert_int_eq(rows_total, nres);
        ck_assert_double_eq_tol(0.5 * rr / nres, loss, 1e-12 * loss);
        for (int k = 0; k < su.n; k++) {
            const double g = jtr[k] / nres;
            ck_assert_msg(fabs(g - grad[su.idx[k]]) <= 1e-9 * (fabs(g) + 1e-12), "%s: J^T r %.15g, adjoint %.15g",
                          sid_model_param(su.m, su.idx[k])->name, g, grad[su.idx[k]]);
        }
        free(grad);
        free(gx0);
        free(jtr);
        setup_free(&su);
    }
}
END_TEST

/* Fit, then check every free parameter against the truth and its 95 % interval. */
static void fit_and_check(setup *su, double max_rel, int check_interval, const char *label)
{
    const int nres = sid_problem_nresiduals(su->p);
    double lo[64], hi[64];
    for (int k = 0; k < su->n; k++) lo[k] = 0, hi[k] = 10 * su->theta[su->idx[k]];
    sid_fit_opts fo = {su->n, su->idx, lo, hi, 500, 1e-14, 0, NULL, NULL, NULL};
    sid_fit_result res;
    sid_error err = {0};
    ck_assert_msg(sid_fit(su->p, su->theta, su->x0, &fo, &res, &err) == SID_OK, "%s", err.msg);
    sid_covariance_result *cov = sid_alloc(sizeof *cov);
    ck_assert_int_eq(sid_problem_covariance(su->p, su->theta, su->x0, su->n, su->idx, cov, &err), SID_OK);
    (void)nres;
    fprintf(stderr, "%s: loss %.3e -> %.3e, %d iterations, %s; sigma %.3g\n", label, res.loss0, res.loss, res.iterations,
            res.message, sqrt(cov->sigma2));
    double worst = 0;
    for (int k = 0; k < su->n; k++) {
        const int i = su->idx[k];
        const double e = fabs(su->theta[i] - su->truth[i]) / fabs(su->truth[i]), se = cov->stderr_[k];
        fprintf(stderr, "  %-32s truth %-10.6g fitted %-10.6g error %.2e  stderr %.2e (%.1f se)\n",
                sid_model_param(su->m, i)->name, su->truth[i], su->theta[i], e, se, fabs(su->theta[i] - su->truth[i]) / se);
        ck_assert_msg(cov->identifiable[k], "%s reported unidentifiable", sid_model_param(su->m, i)->name);
        if (check_interval)
            ck_assert_msg(fabs(su->theta[i] - su->truth[i]) <= 1.96 * se, "%s: truth outside the 95%% interval",
                          sid_model_param(su->m, i)->name);
        if (e > worst) worst = e;
    }
    ck_assert_msg(worst < max_rel, "worst relative error %g", worst);
    sid_free(cov);
}

START_TEST(recovers_with_noise_inside_intervals)
{
    const char *globs[] = {"joints.*.friction.viscous", "joints.*.friction.coulomb", "joints.*.armature", "links.*.mass"};
    setup su;
    setup_make(&su, globs, 4, 1.0, 0.25, 1);
    fit_and_check(&su, 0.10, 1, "noisy fit");
    setup_free(&su);
}
END_TEST

START_TEST(names_what_the_data_cannot_tell_apart)
{
    /* gear and kt of one motor only ever act as their product: one null direction */
    const char *globs[] = {"joints.joint1.motor.gear", "joints.joint1.motor.kt", "joints.*.friction.viscous"};
    setup su;
    setup_make(&su, globs, 3, 0, 0.25, 1);
    sid_error err = {0};
    sid_covariance_result *cov = sid_alloc(sizeof *cov);
    ck_assert_int_eq(sid_problem_covariance(su.p, su.truth, su.x0, su.n, su.idx, cov, &err), SID_OK);
    ck_assert_int_eq(cov->nnull, 1);
    for (int k = 0; k < su.n; k++) {
        const char *name = sid_model_param(su.m, su.idx[k])->name;
        const int motor = strstr(name, "motor") != NULL;
        ck_assert_msg(cov->identifiable[k] == !motor, "%s: identifiable %d", name, cov->identifiable[k]);
        if (motor) ck_assert(fabs(fabs(cov->null_dir[k]) - sqrt(0.5)) < 1e-3);   /* equal parts of both */
    }
    sid_free(cov);
    setup_free(&su);
}
END_TEST

Suite *fit_suite(void)
{
    Suite *s = suite_create("fit");
    TCase *tc = tcase_create("recovery");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, recovers_friction_and_motor_constants);
    tcase_add_test(tc, jacobian_agrees_with_gradient);
    tcase_add_test(tc, recovers_with_noise_inside_intervals);
    tcase_add_test(tc, names_what_the_data_cannot_tell_apart);
    suite_add_tcase(s, tc);
    return s;
}
