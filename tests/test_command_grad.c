/* test_command_grad.c — the loss's gradient with respect to the logged commands
 * (sid_problem_grad_commands, core/problem/command_grad.c) against five-point central differences of
 * the loss in each command sample, on every step variant that takes commands: Euler and RK4
 * with substeps over torque, current and voltage motors with smooth friction (and its load
 * term), position and velocity servos with and without torque limits, fractional delays read
 * across window boundaries, backlash, dry friction (with a load row), compliant and hard
 * contact, torque sensor residuals, fitted start states. Also: samples that no window reads
 * get exactly 0 (and the loss does not move with them), and the result is the same to the bit
 * for one thread and two, and for several logs.
 *
 * The entries checked: the 8 largest and 8 random (sample, joint) pairs of the first log, and
 * whatever the case adds. Error: tu_rel_err with atol 1e-8 of the largest |entry|. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

Suite *command_grad_suite(void);

#define DT 1e-3

typedef struct {
    sid_model *m;
    double *theta;
    sid_traj *tr[2];
    int nlog;
    sid_loss_opts lo;
} fixture;

static void fixture_free(fixture *f)
{
    for (int l = 0; l < f->nlog; l++) sid_traj_free(f->tr[l]);
    sid_model_free(f->m);
    sid_free(f->theta);
}

/* f's problem (its logs are borrowed: the differences below move their commands in place). */
static sid_problem *problem(fixture *f)
{
    sid_problem *p;
    sid_error err = {0};
    ck_assert_msg(sid_problem_create(&p, f->m, (const sid_traj *const *)f->tr, f->nlog, &f->lo, &err) == SID_OK, "%s",
                  err.msg);
    return p;
}

/* ubar of every log of f (n x nv each, one allocation per log) and the loss. */
static double **grad_commands(fixture *f, sid_problem *p, const double *x0, double *loss)
{
    double **ub = calloc(2, sizeof *ub);
    for (int l = 0; l < f->nlog; l++) ub[l] = calloc((size_t)f->tr[l]->n * (size_t)f->tr[l]->nv, sizeof(double));
    sid_error err = {0};
    ck_assert_msg(sid_problem_grad_commands(p, f->theta, x0, loss, ub, &err) == SID_OK, "%s", err.msg);
    return ub;
}

static void ubar_free(fixture *f, double **ub)
{
    for (int l = 0; l < f->nlog; l++) free(ub[l]);
    free(ub);
}

static double loss_at(sid_problem *p, const double *theta, const double *x0)
{
    double L;
    sid_error err = {0};
    ck_assert_msg(sid_problem_loss(p, theta, x0, &L, NULL, NULL, &err) == SID_OK, "%s", err.msg);
    return L;
}

/* d loss / d u[k][j] of log 0 by the five-point stencil (error O(h^4)). */
static double central(fixture *f, sid_problem *p, const double *x0, int k, int j)
{
    double *u = &f->tr[0]->u[(size_t)k * (size_t)f->tr[0]->nv + (size_t)j];
    const double u0 = *u, h = 1e-5 * fmax(1, fabs(u0)), d[4] = {h, -h, 2 * h, -2 * h};
    double L[4];
    for (int i = 0; i < 4; i++) {
        *u = u0 + d[i];
        L[i] = loss_at(p, f->theta, x0);
    }
    *u = u0;
    return (8 * (L[0] - L[1]) - (L[2] - L[3])) / (12 * h);
}

/* The worst error of the checked entries (header); extra (k, j) pairs too (nextra of them). */
static double check_fixture(fixture *f, const double *x0, int nextra, const int *extra)
{
    sid_problem *p = problem(f);
    double loss;
    double **ub = grad_commands(f, p, x0, &loss);
    ck_assert_msg(loss > 0, "loss %g: nothing to differentiate", loss);
    const sid_traj *tr = f->tr[0];
    const int nv = tr->nv, n = tr->n, N = n * nv;
    double gmax = 0;
    for (int i = 0; i < N; i++) gmax = fmax(gmax, fabs(ub[0][i]));
    ck_assert_msg(gmax > 0, "every command gradient is 0");
    int pick[40], np = 0;
    /* the 8 largest */
    for (int r = 0; r < 8; r++) {
        int best = -1;
        for (int i = 0; i < N; i++) {
            int taken = 0;
            for (int q = 0; q < np; q++) taken |= pick[q] == i;
            if (!taken && (best < 0 || fabs(ub[0][i]) > fabs(ub[0][best]))) best = i;
        }
        pick[np++] = best;
    }
    unsigned s = 17;
    for (int r = 0; r < 8; r++) pick[np++] = (int)tu_uniform(&s, 0, N - 0.5);
    for (int r = 0; r < nextra && np < 40; r++) pick[np++] = extra[2 * r] * nv + extra[2 * r + 1];
    double worst = 0;
    for (int q = 0; q < np; q++) {
        const int k = pick[q] / nv, j = pick[q] % nv;
        const double fd = central(f, p, x0, k, j), e = tu_rel_err(ub[0][pick[q]], fd, 1e-8 * gmax);
        if (e > worst) worst = e;
        if (e > 1e-5 || getenv("CG_DEBUG")) fprintf(stderr, "command_grad: u[%d][%d]: adjoint %.10g, fd %.10g, err %.3g\n", k, j, ub[0][pick[q]], fd, e);
    }
    ubar_free(f, ub);
    sid_problem_free(p);
    return worst;
}

/* f fits its one log tr in 0.05 s windows, one thread, the loss's other defaults. */
static void one_log(fixture *f, sid_traj *tr)
{
    f->tr[0] = tr;
    f->nlog = 1;
    sid_loss_opts_defaults(&f->lo);
    f->lo.window = 0.05;
    f->lo.threads = 1;
}

/* A random chain of njoint (features as tu_random_model), its log of n samples at 1 ms with
 * noise, so the loss is not 0; edit (if not NULL) changes the robot first. */
static void make_random(fixture *f, unsigned seed, int njoint, int features, void (*edit)(sid_robot_desc *), int n)
{
    memset(f, 0, sizeof *f);
    sid_robot_desc *d = tu_random_robot(seed, njoint, features);
    if (edit) edit(d);
    sid_error err = {0};
    ck_assert_msg(sid_model_create(&f->m, &f->theta, d, &err) == SID_OK, "%s", err.msg);
    tu_desc_free(d);
    sid_traj *tr = tu_synth_log(f->m, f->theta, n, DT, 0.8, seed + 1);
    tu_add_noise(tr, 1e-3, 1e-2, seed + 2);
    one_log(f, tr);
}

/* A robot file of data/, edited, with a log as make_random's. */
static void make_file(fixture *f, const char *path, void (*edit)(sid_robot_desc *), int n, double amp)
{
    memset(f, 0, sizeof *f);
    f->m = tu_file_model(path, edit, &f->theta);
    sid_traj *tr = tu_synth_log(f->m, f->theta, n, DT, amp, 5);
    tu_add_noise(tr, 1e-3, 1e-2, 6);
    one_log(f, tr);
}

/* ---- motors, integrators, substeps ---------------------------------------------------------- */

/* _i: 0 Euler, 1 Euler with 3 substeps, 2 RK4, 3 RK4 with 2 substeps; torque, current and
 * voltage motors, Coulomb and Stribeck friction, offsets, prismatic and fixed joints */
START_TEST(motors)
{
    fixture f;
    make_random(&f, 3 + (unsigned)_i, 4, TU_ALL, NULL, 160);
    f.lo.sim.integrator = _i < 2 ? SID_EULER : SID_RK4;
    f.lo.sim.substeps = _i % 2 ? 3 - _i / 2 : 1;
    const double e = check_fixture(&f, NULL, 0, NULL);
    ck_assert_msg(e < 1e-6, "case %d: worst error %.3g", _i, e);
    fixture_free(&f);
}
END_TEST

/* load-dependent and direction-dependent Coulomb friction: the load term moves with u */
static void loaded(sid_robot_desc *d)
{
    for (int j = 0; j < d->njoint; j++) {
        sid_joint_desc *jd = &d->joint[j];
        if (jd->motor == SID_MOTOR_NONE) continue;
        jd->has_friction_load = 1, jd->friction_load = 0.05 + 0.02 * j;
        jd->has_coulomb_negative = 1, jd->coulomb_negative = 0.7 * jd->coulomb + 0.01;
    }
}

START_TEST(friction_load)
{
    fixture f;
    make_random(&f, 11, 3, TU_ALL, loaded, 160);
    f.lo.sim.integrator = _i ? SID_RK4 : SID_EULER;
    const double e = check_fixture(&f, NULL, 0, NULL);
    ck_assert_msg(e < 1e-6, "worst error %.3g", e);
    fixture_free(&f);
}
END_TEST

/* ---- servos --------------------------------------------------------------------------------- */

/* tu_servos: position servos with and without a torque limit, velocity servos; the limit's
 * tanh makes du's effect depend on the state */
static void servos(sid_robot_desc *d) { tu_servos(d, 29, 1, 3); }

START_TEST(servo)
{
    fixture f;
    make_random(&f, 7, 4, TU_ALL, servos, 160);
    f.lo.sim.integrator = _i ? SID_RK4 : SID_EULER;
    f.lo.sim.substeps = _i ? 1 : 2;
    const double e = check_fixture(&f, NULL, 0, NULL);
    ck_assert_msg(e < 1e-6, "worst error %.3g", e);
    fixture_free(&f);
}
END_TEST

/* ---- delays --------------------------------------------------------------------------------- */

static void delays(sid_robot_desc *d)
{
    d->joint[0].has_delay = d->joint[1].has_delay = 1;
    d->joint[0].delay = 3.4e-3, d->joint[1].delay = 12.7e-3;   /* 12.7 samples: back across a window start */
}

/* The samples a window reads before its start get the previous window's share and its own;
 * checked there too (the window at 0.05 s reads from 0.0373 s on). */
START_TEST(delay)
{
    fixture f;
    make_file(&f, "../data/double_pendulum/robot.json", delays, 160, 1.0);
    f.lo.sim.integrator = _i ? SID_RK4 : SID_EULER;
    f.lo.sim.substeps = 2;
    const int extra[] = {37, 1, 38, 1, 39, 1, 46, 0, 47, 0, 49, 1, 50, 1, 0, 0, 0, 1, 1, 1};
    const double e = check_fixture(&f, NULL, 10, extra);
    ck_assert_msg(e < 1e-6, "worst error %.3g", e);
    fixture_free(&f);
}
END_TEST

/* ---- backlash, dry friction, contact -------------------------------------------------------- */

START_TEST(backlash)
{
    fixture f;
    make_file(&f, "../data/backlash_arm/truth.json", NULL, 200, 0.3);
    f.lo.sim.integrator = _i ? SID_RK4 : SID_EULER;
    const double e = check_fixture(&f, NULL, 0, NULL);
    ck_assert_msg(e < 1e-6, "worst error %.3g", e);
    fixture_free(&f);
}
END_TEST

START_TEST(dry_friction)
{
    fixture f;
    make_random(&f, 13, 3, TU_ALL, tu_dry_joints, 160);
    const double e = check_fixture(&f, NULL, 0, NULL);
    ck_assert_msg(e < 1e-5, "worst error %.3g", e);
    fixture_free(&f);
}
END_TEST

/* The box with its leg (tu_box_robot) resting near its height, sliding and spinning; its hip's
 * torque is the command. */
static void make_box(fixture *f, sid_contact_model model)
{
    memset(f, 0, sizeof *f);
    f->m = tu_box_robot(1, model, 0.8, &f->theta);
    ck_assert_ptr_nonnull(f->m);
    const int n = 200;
    sid_traj *tr = tu_synth_log(f->m, f->theta, n, DT, 0.05, 9);
    const double q0[7] = {0, 0, 0.0674, cos(0.01), sin(0.01), 0.003, 0}, v0[6] = {0.4, -0.2, -0.02, 0.1, -0.1, 2};
    memcpy(tr->q, q0, sizeof q0);
    memcpy(tr->qd, v0, sizeof v0);
    tu_replay(f->m, f->theta, tr, NULL);
    tu_add_noise(tr, 1e-3, 1e-2, 10);
    one_log(f, tr);
}

START_TEST(contact)
{
    fixture f;
    make_box(&f, _i ? SID_CONTACT_HARD : SID_CONTACT_COMPLIANT);
    const int hip = f.tr[0]->nv - 1, extra[] = {10, hip, 60, hip, 120, hip, 170, hip};
    const double e = check_fixture(&f, NULL, 4, extra);
    ck_assert_msg(e < (_i ? 1e-5 : 1e-6), "%s contact: worst error %.3g", _i ? "hard" : "compliant", e);
    fixture_free(&f);
}
END_TEST

/* ---- torque sensors, fitted starts, unread samples, threads --------------------------------- */

/* torque sensor readings scored: reading k's model holds command k (delayed) */
START_TEST(torque_sensor)
{
    fixture f;
    make_file(&f, "../data/double_pendulum/robot.json", delays, 160, 1.0);
    sid_traj *tr = f.tr[0];
    tr->tau = sid_alloc(sizeof(double) * (size_t)tr->n * (size_t)tr->nv);
    tr->tau_has = sid_alloc(sizeof(int) * (size_t)tr->nv);
    for (int i = 0; i < tr->nv; i++) tr->tau_has[i] = 1;
    for (size_t i = 0; i < (size_t)tr->n * (size_t)tr->nv; i++) tr->tau[i] = 0.9 * tr->u[i] + 0.01 * sin((double)i);
    f.lo.weight_tau = 0.5;
    const int extra[] = {159, 0, 159, 1, 100, 0};   /* the last sample moves a reading only */
    const double e = check_fixture(&f, NULL, 3, extra);
    ck_assert_msg(e < 1e-6, "worst error %.3g", e);
    fixture_free(&f);
}
END_TEST

/* start states as unknowns (multiple shooting), given away from the logged ones */
START_TEST(fitted_start)
{
    fixture f;
    make_random(&f, 19, 3, TU_ALL, NULL, 160);
    f.lo.estimate_start = 1;
    sid_problem *p = problem(&f);
    const int nw = sid_problem_nwindows(p), nx = sid_model_nq(f.m) + sid_model_nv(f.m);
    double *x0 = malloc(sizeof(double) * (size_t)(nw * nx));
    sid_problem_start_states(p, f.theta, x0);
    for (int i = 0; i < nw * nx; i++) x0[i] += 1e-3 * sin(3.0 * i);
    sid_problem_free(p);
    const double e = check_fixture(&f, x0, 0, NULL);
    ck_assert_msg(e < 1e-6, "worst error %.3g", e);
    free(x0);
    fixture_free(&f);
}
END_TEST

/* A log whose trailing 15 samples lie in a dropped window (less than half of 50 ms): their
 * commands get exactly 0, as does the loss's change with them; so does every sample of
 * the last window's end (its command starts no interval of a window). */
START_TEST(unread_samples_are_zero)
{
    fixture f;
    make_random(&f, 23, 3, TU_ALL, NULL, 215);
    sid_problem *p = problem(&f);
    double loss;
    double **ub = grad_commands(&f, p, NULL, &loss);
    const int nv = f.tr[0]->nv;
    int nonzero = 0;
    for (int k = 200; k < 215; k++)
        for (int j = 0; j < nv; j++) ck_assert_msg(ub[0][k * nv + j] == 0, "u[%d][%d]: %g", k, j, ub[0][k * nv + j]);
    for (int k = 0; k < 200; k++)
        for (int j = 0; j < nv; j++) nonzero += ub[0][k * nv + j] != 0;
    ck_assert_int_gt(nonzero, 150 * nv);
    for (int k = 200; k < 215; k += 7) ck_assert(central(&f, p, NULL, k, 0) == 0);
    ubar_free(&f, ub);
    sid_problem_free(p);
    fixture_free(&f);
}
END_TEST

/* One thread and two, two logs, delays (samples several windows read): the same bits; the
 * second log's entries against differences too (through a fixture whose first log it is). */
START_TEST(threads_and_logs)
{
    fixture f;
    make_file(&f, "../data/double_pendulum/robot.json", delays, 300, 1.0);
    f.tr[1] = tu_synth_log(f.m, f.theta, 250, DT, 0.7, 31);
    tu_add_noise(f.tr[1], 1e-3, 1e-2, 32);
    f.nlog = 2;
    f.lo.window = 0.02;
    sid_problem *p1 = problem(&f);
    f.lo.threads = 2;
    sid_problem *p2 = problem(&f);
    double L1, L2;
    double **u1 = grad_commands(&f, p1, NULL, &L1), **u2 = grad_commands(&f, p2, NULL, &L2);
    ck_assert(L1 == L2);
    for (int l = 0; l < 2; l++)
        ck_assert_int_eq(memcmp(u1[l], u2[l], sizeof(double) * (size_t)f.tr[l]->n * (size_t)f.tr[l]->nv), 0);
    double gmax = 0;
    for (int i = 0; i < 250 * 2; i++) gmax = fmax(gmax, fabs(u1[1][i]));
    ck_assert(gmax > 0);
    /* log 1's entries: swap it to the front of the fixture (the loss sums logs, so the same) */
    sid_traj *t = f.tr[0];
    f.tr[0] = f.tr[1], f.tr[1] = t;
    f.lo.threads = 1;
    sid_problem *p3 = problem(&f);
    for (int k = 40; k < 250; k += 53)
        for (int j = 0; j < 2; j++) {
            const double fd = central(&f, p3, NULL, k, j), e = tu_rel_err(u1[1][k * 2 + j], fd, 1e-8 * gmax);
            ck_assert_msg(e < 1e-6, "log 2 u[%d][%d]: %.10g vs fd %.10g", k, j, u1[1][k * 2 + j], fd);
        }
    t = f.tr[0];
    f.tr[0] = f.tr[1], f.tr[1] = t;
    sid_problem_free(p3);
    ubar_free(&f, u1);
    ubar_free(&f, u2);
    sid_problem_free(p1);
    sid_problem_free(p2);
    fixture_free(&f);
}
END_TEST

Suite *command_grad_suite(void)
{
    Suite *s = suite_create("command_grad");
    TCase *tc = tcase_create("command_grad");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, motors, 0, 4);
    tcase_add_loop_test(tc, friction_load, 0, 2);
    tcase_add_loop_test(tc, servo, 0, 2);
    tcase_add_loop_test(tc, delay, 0, 2);
    tcase_add_loop_test(tc, backlash, 0, 2);
    tcase_add_test(tc, dry_friction);
    tcase_add_loop_test(tc, contact, 0, 2);
    tcase_add_test(tc, torque_sensor);
    tcase_add_test(tc, fitted_start);
    tcase_add_test(tc, unread_samples_are_zero);
    tcase_add_test(tc, threads_and_logs);
    suite_add_tcase(s, tc);
    return s;
}
