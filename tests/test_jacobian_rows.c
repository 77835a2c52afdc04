/* test_jacobian_rows.c — forward mode by the acceleration's Jacobian rows (fd.c's
 * sid_fd_jacobian_rows: one reverse sweep per joint instead of one tangent per direction,
 * through dynamics.c's sid_rnea_vjp_rows where the model allows), Euler and RK4: the window Jacobian made
 * through the rows against the same made one tangent per direction (sid_fd_jvp_dir, itself
 * checked against central differences in test_forward.c and test_hard_forward.c), for every
 * parameter kind the step meets — inertias, friction, armature, motors, offsets, origins,
 * servos, delays, backlash, dry friction, prismatic, fixed and free joints, compliant contact — and the
 * start-state columns. Both are exact; they differ by rounding only, so the tolerance is 1e-9
 * of a column's largest entry, where a missing or wrong term is off by O(1). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sid_internal.h"
#include "test_util.h"

Suite *jacobian_rows_suite(void);

/* DRY last: dry friction has Euler only */
enum { TREE, TREE_ORIGINS, PRISMATIC, FLOATING, SERVOS, DELAYS, BACKLASH, CONTACT, DRY, NCASE };
static const char *const case_name[NCASE] = {"fixed-base tree",   "tree, origins free", "prismatic joints",
                                              "floating base",     "servos",             "delays",
                                              "backlash",          "box and leg on compliant ground",
                                              "dry friction with load rows"};

static void servos(sid_robot_desc *d) { tu_servos(d, 29, 1, 3); }

static void delays(sid_robot_desc *d)
{
    d->joint[0].has_delay = d->joint[1].has_delay = 1;
    d->joint[0].delay = 3.4e-3, d->joint[1].delay = 12.7e-3;
}

static sid_model *from_desc(sid_robot_desc *d, void (*edit)(sid_robot_desc *), double **theta)
{
    edit(d);
    sid_model *m;
    sid_error err = {0};
    ck_assert_msg(sid_model_create(&m, theta, d, &err) == SID_OK, "%s", err.msg);
    tu_desc_free(d);
    return m;
}

static sid_model *make_model(int which, double **theta)
{
    const int smooth = TU_BRANCHED | TU_FIXED | TU_FRICTION | TU_MOTORS | TU_OFFSETS;
    switch (which) {
    case TREE:
    case TREE_ORIGINS: return tu_random_model(7, 6, smooth, 0, theta);
    case PRISMATIC: return tu_random_model(8, 5, TU_ALL, 0, theta);
    case FLOATING: return tu_random_model(9, 4, smooth, 1, theta);
    case SERVOS: return from_desc(tu_random_robot(10, 4, TU_FRICTION), servos, theta);
    case DRY: return from_desc(tu_random_robot(13, 4, smooth), tu_dry_joints, theta);
    case DELAYS: return tu_file_model("../data/double_pendulum/robot.json", delays, theta);
    case BACKLASH: return tu_file_model("../data/backlash_arm/truth.json", NULL, theta);
    case CONTACT: return tu_box_robot(1, SID_CONTACT_COMPLIANT, 0.8, theta);
    default: return NULL;
    }
}

/* Every parameter of the kinds the case is about (origins only in TREE_ORIGINS and CONTACT). */
static int free_columns(const sid_model *m, int which, int *idx)
{
    int mask[1024] = {0}, n = 0;
    const char *pat[] = {"*.mass", "*.com", "*.inertia", "joints.*.friction.*", "joints.*.armature", "joints.*.offset",
                         "joints.*.motor.*", "joints.*.servo.*", "joints.*.delay", "joints.*.backlash*",
                         "contact.ground.*", "contact.spheres.*"};
    for (size_t k = 0; k < sizeof pat / sizeof *pat; k++) sid_model_param_match(m, pat[k], mask);
    if (which == TREE_ORIGINS || which == CONTACT) sid_model_param_match(m, "joints.*.origin.*", mask);
    for (int i = 0; i < m->nparam; i++)
        if (mask[i] && n < 60) idx[n++] = i;
    return n;
}

/* Whether the case takes the fast sweep (sid_rnea_vjp_rows): the rows test must cover both. */
static int fast_sweep(const sid_model *m, int nfree, const int *idx)
{
    const size_t n = sid_workspace_size(m);
    void *buf = malloc(n);
    sid_workspace *ws = sid_workspace_init(m, buf, n);
    const int ok = sid_rnea_vjp_rows_ok(m, ws, nfree, idx);
    free(buf);
    return ok;
}

static void rows_check(int which, sid_integrator integ)
{
    double *theta;
    sid_model *m = make_model(which, &theta);
    ck_assert_ptr_nonnull(m);
    const int nx = m->nq + m->nv;
    int mmask[1024] = {0};
    sid_model_param_match(m, "*.mass", mmask);
    double *truth = malloc(sizeof(double) * (size_t)m->nparam);
    for (int i = 0; i < m->nparam; i++) truth[i] = theta[i] * (mmask[i] ? 1.05 : 1);
    sid_traj *log = tu_synth_log(m, truth, 81, 2e-3, which == CONTACT ? 0.5 : 0.8, 5);
    free(truth);
    sid_loss_opts o;
    sid_loss_opts_defaults(&o);
    o.window = 0.08;
    o.estimate_start = 1;
    o.threads = 1;
    o.sim.integrator = integ;
    sid_problem *p;
    sid_error err = {0};
    ck_assert_msg(sid_problem_create(&p, m, (const sid_traj *const *)&log, 1, &o, &err) == SID_OK, "%s", err.msg);
    const int nw = sid_problem_nwindows(p);
    double *x0 = malloc(sizeof(double) * (size_t)(nw * nx));
    sid_problem_start_states(p, theta, x0);
    int idx[64];
    const int nfree = free_columns(m, which, idx), ncol = nfree + m->nqo + m->nvo;
    ck_assert_int_gt(nfree, 3);
    ck_assert_msg(2 * ncol > 3 * m->nv, "too few directions for the rows (%d, nv %d)", ncol, m->nv);
    const int fast = fast_sweep(m, nfree, idx);
    ck_assert_int_eq(fast, which == TREE || which == SERVOS || which == DELAYS || which == BACKLASH || which == DRY);
    double worst = 0;
    char where[240] = "none";
    for (int w = 0; w < nw; w++) {
        const int rows = sid_problem_window_rows(p, w);
        double *r0 = malloc(sizeof(double) * (size_t)rows), *r1 = malloc(sizeof(double) * (size_t)rows);
        double *J0 = malloc(sizeof(double) * (size_t)rows * (size_t)ncol), *J1 = malloc(sizeof(double) * (size_t)rows * (size_t)ncol);
        const double *x0w = x0 + (size_t)w * (size_t)nx;
        sid_fd_rows_force = 0;
        const sid_status s0 = sid_problem_window_jacobian(p, theta, x0w, w, nfree, idx, r0, J0, &err);
        sid_fd_rows_force = 1;
        const sid_status s1 = sid_problem_window_jacobian(p, theta, x0w, w, nfree, idx, r1, J1, &err);
        sid_fd_rows_force = -1;
        ck_assert_msg(s0 == SID_OK && s1 == SID_OK, "%s", err.msg);
        for (int i = 0; i < rows; i++) ck_assert_msg(r0[i] == r1[i], "window %d residual %d differs", w, i);
        for (int c = 0; c < ncol; c++) {
            double big = 0, diff = 0;
            for (int i = 0; i < rows; i++) {
                const double a = J0[(size_t)i * (size_t)ncol + (size_t)c], b = J1[(size_t)i * (size_t)ncol + (size_t)c];
                ck_assert_msg(isfinite(b), "window %d column %d: %g", w, c, b);
                big = fmax(big, fabs(a));
                diff = fmax(diff, fabs(a - b));
            }
            const double e = big > 0 ? diff / big : diff;
            if (e > worst)
                worst = e, snprintf(where, sizeof where, "window %d, %s", w, c < nfree ? m->param[idx[c]].name : "start state");
        }
        free(r0), free(r1), free(J0), free(J1);
    }
    fprintf(stderr, "jacobian_rows: %s, %s (%d columns, %s sweep): rows vs directions %.2e at %s\n", case_name[which],
            integ == SID_EULER ? "euler" : "rk4", ncol, fast ? "fast" : "general", worst, where);
    ck_assert_msg(worst < 1e-9, "%s: rows vs directions %.3g at %s", case_name[which], worst, where);
    free(x0);
    sid_problem_free(p);
    sid_traj_free(log);
    sid_model_free(m);
    sid_free(theta);
}

START_TEST(rows_euler) { rows_check(_i, SID_EULER); }
END_TEST
START_TEST(rows_rk4) { rows_check(_i, SID_RK4); }
END_TEST

Suite *jacobian_rows_suite(void)
{
    Suite *s = suite_create("jacobian_rows");
    TCase *tc = tcase_create("rows");
    tcase_add_loop_test(tc, rows_euler, 0, NCASE);
    tcase_add_loop_test(tc, rows_rk4, 0, DRY);
    suite_add_tcase(s, tc);
    return s;
}
