/* test_fit.c — parameter recovery: logs made with a known true robot, fitted from nominal. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

Suite *fit_suite(void);

static sid_traj *synth_log(const sid_model *m, const double *truth, int n, double dt, unsigned seed)
{
    const int nq = sid_model_nq(m), nv = sid_model_nv(m);
    sid_traj *tr = sid_traj_create(n, nq, nv, 1);
    unsigned s = seed;
    double f[64][3], ph[64][3];
    for (int i = 0; i < nv; i++)
        for (int c = 0; c < 3; c++) f[i][c] = tu_uniform(&s, 0.5, 6), ph[i][c] = tu_uniform(&s, 0, 6.28);
    for (int k = 0; k < n; k++) {
        tr->t[k] = k * dt;
        for (int i = 0; i < nv; i++) {
            double u = 0;
            for (int c = 0; c < 3; c++) u += 0.4 * sin(f[i][c] * tr->t[k] + ph[i][c]);
            tr->u[(size_t)k * nv + i] = u;
        }
    }
    sid_sim_opts o;
    sid_sim_opts_defaults(&o);
    double *q = malloc(sizeof(double) * (size_t)(n * nq)), *v = malloc(sizeof(double) * (size_t)(n * nv));
    sid_error err = {0};
    ck_assert_msg(sid_simulate(m, truth, tr, &o, q, v, &err) == SID_OK, "%s", err.msg);
    memcpy(tr->q, q, sizeof(double) * (size_t)(n * nq));
    memcpy(tr->qd, v, sizeof(double) * (size_t)(n * nv));
    free(q);
    free(v);
    return tr;
}

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
    sid_traj *log = synth_log(m, truth, 2001, 1e-3, 3);
    sid_loss_opts lo_opts;
    sid_loss_opts_defaults(&lo_opts);
    lo_opts.window = 0.25;
    sid_problem *p;
    ck_assert_int_eq(sid_problem_create(&p, m, (const sid_traj *const *)&log, 1, &lo_opts, &err), SID_OK);
    sid_fit_opts fo = {n, idx, lo, hi, 300, 1e-14, 0, NULL, NULL, NULL};
    sid_fit_result r;
    ck_assert_msg(sid_fit(p, theta, &fo, &r, &err) == SID_OK, "%s", err.msg);
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

Suite *fit_suite(void)
{
    Suite *s = suite_create("fit");
    TCase *tc = tcase_create("recovery");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, recovers_friction_and_motor_constants);
    suite_add_tcase(s, tc);
    return s;
}
