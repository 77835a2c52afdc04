/* test_excite.c — the excitation design's parts (core/stats/excite.c): the hold command keeps the
 * start pose at rest, the information with start states eliminated window by window equals the
 * parameter block of the dense normal matrix's inverse, and the written design respects its
 * limits and rests at both ends. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "excite.h"
#include "linalg.h"
#include "problem.h"
#include "robot_load.h"
#include "test_util.h"

/* The double pendulum (torque and current motors, gravity, COMs off the axes) and the design
 * options of a small excitation for its masses, armatures and viscous frictions. */
typedef struct {
    sid_model *m;
    double *theta;
    int idx[8], nf;
    double q0[2], lo[2], hi[2], vmax[2], tmax[2];
    sid_excite_opts o;
} rig;

static void rig_init(rig *r)
{
    memset(r, 0, sizeof *r);
    sid_error err = {0};
    ck_assert_msg(robot_model("../data/double_pendulum/robot.json", &r->m, &r->theta, NULL, &err) == 0, "%s", err.msg);
    const char *names[] = {"links.upper.mass", "links.fore.mass", "joints.shoulder.armature", "joints.elbow.armature",
                           "joints.shoulder.friction.viscous", "joints.elbow.friction.viscous"};
    for (int k = 0; k < 6; k++) r->idx[r->nf++] = tu_param(r->m, names[k]);
    for (int i = 0; i < 2; i++) r->lo[i] = -2, r->hi[i] = 2, r->vmax[i] = 6, r->tmax[i] = 5;
    sid_excite_opts *o = &r->o;
    o->duration = 2, o->dt = 0.01, o->harmonics = 2, o->f0 = 0.5, o->ramp = 0.5;
    o->noise_q = 1e-3, o->noise_qd = 1e-2, o->criterion = SID_EXCITE_WORST, o->max_evals = 12, o->seed = 3;
    o->optimise = 1;
    sid_loss_opts_defaults(&o->loss);
    o->loss.sim.substeps = 4;
    o->loss.threads = 1;
    o->nfree = r->nf, o->idx = r->idx;
    o->q0 = r->q0, o->q_lo = r->lo, o->q_hi = r->hi, o->qd_max = r->vmax, o->tau_max = r->tmax;
}

static void rig_free(rig *r)
{
    sid_free(r->theta);
    sid_model_free(r->m);
}

START_TEST(hold_keeps_the_start_pose)
{
    /* off q = 0 the double pendulum's gravity torques are large (~4 N m at the shoulder) */
    rig r;
    rig_init(&r);
    r.q0[0] = 0.7, r.q0[1] = -0.4;
    double u[2];
    sid_error err = {0};
    ck_assert_msg(sid_excite_hold(r.m, r.theta, &r.o, u, &err) == SID_OK, "%s", err.msg);
    ck_assert(fabs(u[0]) > 1);
    sid_workspace *ws = sid_workspace_create(r.m);
    double q[2] = {r.q0[0], r.q0[1]}, v[2] = {0, 0}, q1[2], v1[2];
    for (int k = 0; k < 1000; k++) {   /* 1 s at 1 ms */
        ck_assert_msg(sid_step(r.m, r.theta, ws, SID_EULER, 1e-3, q, v, u, q1, v1, &err) == SID_OK, "%s", err.msg);
        memcpy(q, q1, sizeof q), memcpy(v, v1, sizeof v);
    }
    /* without the hold the shoulder would fall ~1 rad in that second; with it, rounding only */
    ck_assert_msg(fabs(q[0] - r.q0[0]) < 1e-9 && fabs(q[1] - r.q0[1]) < 1e-9, "drift %g %g", q[0] - r.q0[0],
                  q[1] - r.q0[1]);
    sid_workspace_free(ws);
    rig_free(&r);
}
END_TEST

START_TEST(information_is_the_schur_complement)
{
    rig r;
    rig_init(&r);
    r.o.optimise = 0;
    sid_excite_result d, s;
    sid_error err = {0};
    ck_assert_msg(sid_excite_run(r.m, r.theta, &r.o, &d, &err) == SID_OK, "%s", err.msg);
    ck_assert_msg(sid_excite_score(r.m, r.theta, d.traj, &r.o, &s, &err) == SID_OK, "%s", err.msg);
    const int nf = r.nf, nx = 4;
    for (int a = 0; a < nf * nf; a++) ck_assert(s.info[a] == d.info[a]);   /* the same scoring, to the bit */

    /* dense: every window's rows, parameter columns then that window's start columns, each
     * residual delta / noise (the problem's scales set to the noise as excite.c does) */
    sid_loss_opts lo = r.o.loss;
    lo.estimate_start = 1, lo.weight_q = 1, lo.weight_qd = 1;
    sid_problem *p;
    const sid_traj *logs[1] = {d.traj};
    ck_assert_msg(sid_problem_create(&p, r.m, logs, 1, &lo, &err) == SID_OK, "%s", err.msg);
    for (int i = 0; i < 2; i++) p->sq[i] = r.o.noise_q, p->sqd[i] = r.o.noise_qd;
    const int nwin = sid_problem_nwindows(p), n = nf + nwin * nx;
    ck_assert_int_ge(nwin, 3);
    double *N = calloc((size_t)n * n, sizeof(double));
    for (int w = 0; w < nwin; w++) {
        const int rows = sid_problem_window_rows(p, w), nc = nf + nx;
        double *J = malloc(sizeof(double) * (size_t)rows * nc), *res = malloc(sizeof(double) * (size_t)rows);
        ck_assert_msg(sid_problem_window_jacobian(p, r.theta, NULL, w, nf, r.idx, res, J, &err) == SID_OK, "%s", err.msg);
        int col[64];
        for (int k = 0; k < nf; k++) col[k] = k;
        for (int j = 0; j < nx; j++) col[nf + j] = nf + w * nx + j;
        for (int i = 0; i < rows; i++)
            for (int a = 0; a < nc; a++)
                for (int b = 0; b < nc; b++) N[col[a] * n + col[b]] += J[i * nc + a] * J[i * nc + b];
        free(J), free(res);
    }
    sid_problem_free(p);
    /* (N^-1)_pp against (information)^-1: column by column with one LU of each */
    int *piv = malloc(sizeof(int) * (size_t)n), pv[8];
    double *e = malloc(sizeof(double) * (size_t)n), F[64], x[8];
    ck_assert_int_eq(sid_lu_factor(n, N, piv), 0);
    memcpy(F, s.info, sizeof(double) * (size_t)(nf * nf));
    ck_assert_int_eq(sid_lu_factor(nf, F, pv), 0);
    double worst = 0;
    for (int b = 0; b < nf; b++) {
        memset(e, 0, sizeof(double) * (size_t)n), memset(x, 0, sizeof x);
        e[b] = 1, x[b] = 1;
        sid_lu_solve(n, N, piv, 0, e);
        sid_lu_solve(nf, F, pv, 0, x);
        for (int a = 0; a < nf; a++)   /* relative, an off-diagonal near 0 against its column's diagonal */
            worst = fmax(worst, fabs(e[a] - x[a]) / fmax(fabs(x[a]), 1e-3 * fabs(x[b])));
        /* the predicted standard error is the square root of that diagonal */
        ck_assert_msg(fabs(sqrt(e[b]) - s.se[b]) <= 1e-6 * s.se[b], "se[%d] %g, dense %g", b, s.se[b], sqrt(e[b]));
    }
    ck_assert_msg(worst < 1e-6, "covariance differs from the dense one by %g (relative)", worst);
    free(piv), free(e), free(N);
    sid_excite_result_free(&s);
    sid_excite_result_free(&d);
    rig_free(&r);
}
END_TEST

START_TEST(design_within_limits_and_at_rest)
{
    rig r;
    rig_init(&r);
    sid_excite_result d;
    sid_error err = {0};
    ck_assert_msg(sid_excite_run(r.m, r.theta, &r.o, &d, &err) == SID_OK, "%s", err.msg);
    ck_assert_int_eq(d.evaluations, 13);
    ck_assert(d.scale > 0);
    ck_assert(fmax(d.use_q, fmax(d.use_qd, d.use_tau)) <= SID_EXCITE_MARGIN);
    ck_assert(fmax(d.use_q, fmax(d.use_qd, d.use_tau)) > 0.9 * SID_EXCITE_MARGIN);   /* as large as allowed */
    const sid_traj *tr = d.traj;
    ck_assert_int_eq(tr->n, 201);
    /* replay the commands independently: the states are the simulation's, within the limits */
    double *q = malloc(sizeof(double) * 2 * (size_t)tr->n), *v = malloc(sizeof(double) * 2 * (size_t)tr->n);
    ck_assert_msg(sid_simulate(r.m, r.theta, tr, &r.o.loss.sim, q, v, &err) == SID_OK, "%s", err.msg);
    const double gain[2] = {1 * 1.0, 10 * 0.05};   /* gear kt of the shoulder and the elbow */
    for (int k = 0; k < tr->n; k++)
        for (int i = 0; i < 2; i++) {
            ck_assert(q[2 * k + i] == tr->q[2 * k + i] && v[2 * k + i] == tr->qd[2 * k + i]);
            ck_assert(fabs(q[2 * k + i]) <= 2 && fabs(v[2 * k + i]) <= 6 && fabs(gain[i] * tr->u[2 * k + i]) <= 5);
        }
    /* rest: still at q0 at the start, the commands back at the hold at the end */
    for (int i = 0; i < 2; i++) {
        ck_assert(tr->q[i] == 0 && tr->qd[i] == 0);
        ck_assert(tr->u[2 * (tr->n - 1) + i] == tr->u[i]);
    }
    free(q), free(v);
    sid_excite_result_free(&d);
    rig_free(&r);
}
END_TEST

Suite *excite_suite(void);
Suite *excite_suite(void)
{
    Suite *s = suite_create("excite");
    TCase *tc = tcase_create("excite");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, hold_keeps_the_start_pose);
    tcase_add_test(tc, information_is_the_schur_complement);
    tcase_add_test(tc, design_within_limits_and_at_rest);
    suite_add_tcase(s, tc);
    return s;
}
