/* test_twin.c — the MuJoCo twin comparison (tests/twin.h) itself: on the example robots and
 * their hand-made MuJoCo twins (data/NAME/model.xml, see test_mujoco.c) it must find agreement
 * to rounding, and it must find a 1 % mass change, a moved joint and a tilted axis. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "robot_json.h"
#include "robot_load.h"
#include "twin.h"

Suite *twin_suite(void);

static const char *const names[] = { "pendulum", "double_pendulum", "arm7", "tree" };

static void load(const char *name, sid_model **m, double **theta, mjModel **mm)
{
    char path[256], errstr[1000] = "";
    sid_error err = { 0 };
    snprintf(path, sizeof path, "../data/%s/robot.json", name);
    ck_assert_msg(robot_model(path, m, theta, NULL, &err) == 0, "%s", err.msg);
    snprintf(path, sizeof path, "../data/%s/model.xml", name);
    *mm = mj_loadXML(path, NULL, errstr, sizeof errstr);
    ck_assert_msg(*mm != NULL, "%s: %s", path, errstr);
}

START_TEST(test_twins_agree)
{
    sid_model *m;
    double *theta;
    mjModel *mm;
    load(names[_i], &m, &theta, &mm);
    twin_figures f;
    char msg[300] = "";
    ck_assert_msg(twin_compare(m, theta, mm, 2.0, 20, &f, msg, sizeof msg) == 0, "%s: %s", names[_i], msg);
    twin_print(names[_i], &f);
    ck_assert_int_eq(f.ndof, sid_model_ndof_joints(m));
    ck_assert_int_gt(f.nbody, 0);
    /* the twins are written with 17 significant digits: rounding only */
    ck_assert_msg(f.mass <= 1e-14 && f.com <= 1e-14 && f.inertia <= 1e-14 && f.frame <= 1e-14, "%s", names[_i]);
    ck_assert_msg(f.M <= 1e-12 && f.bias <= 1e-11, "%s: M %g bias %g", names[_i], f.M, f.bias);
    ck_assert_msg(f.replay <= 1e-8, "%s: replay %g", names[_i], f.replay);
    mj_deleteModel(mm);
    sid_free(theta);
    sid_model_free(m);
}
END_TEST

/* Each perturbation of MuJoCo's side must show in the figure that owns it. */
START_TEST(test_twin_finds_differences)
{
    sid_model *m;
    double *theta;
    mjModel *mm;
    twin_figures f;
    char msg[300] = "";
    load("double_pendulum", &m, &theta, &mm);
    const int b = mm->nbody - 1, j = mm->njnt - 1;

    mm->body_mass[b] *= 1.01;
    ck_assert_int_eq(twin_compare(m, theta, mm, 0.5, 5, &f, msg, sizeof msg), 0);
    ck_assert_msg(f.mass > 1e-3 && f.inertia > 1e-3 && f.M > 1e-4 && f.replay > 1e-6, "mass %g", f.mass);
    mm->body_mass[b] /= 1.01;

    mm->body_pos[3 * b + 0] += 1e-3;
    ck_assert_int_eq(twin_compare(m, theta, mm, 0.5, 5, &f, msg, sizeof msg), 0);
    ck_assert_msg(f.frame > 5e-4 && f.com > 5e-4, "frame %g com %g", f.frame, f.com);
    mm->body_pos[3 * b + 0] -= 1e-3;

    double *ax = mm->jnt_axis + 3 * j, a0[3] = { ax[0], ax[1], ax[2] };
    ax[0] += 0.01;
    double n = sqrt(ax[0] * ax[0] + ax[1] * ax[1] + ax[2] * ax[2]);
    for (int i = 0; i < 3; i++) ax[i] /= n;
    ck_assert_int_eq(twin_compare(m, theta, mm, 0.5, 5, &f, msg, sizeof msg), 0);
    ck_assert_msg(f.frame > 1e-3, "frame %g", f.frame);
    memcpy(ax, a0, sizeof a0);

    ck_assert_int_eq(twin_compare(m, theta, mm, 0.5, 5, &f, msg, sizeof msg), 0);
    ck_assert_msg(f.frame <= 1e-14 && f.mass <= 1e-14, "restored: frame %g mass %g", f.frame, f.mass);
    mj_deleteModel(mm);
    sid_free(theta);
    sid_model_free(m);
}
END_TEST

Suite *twin_suite(void)
{
    Suite *s = suite_create("twin");
    TCase *tc = tcase_create("twin");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_twins_agree, 0, 4);
    tcase_add_test(tc, test_twin_finds_differences);
    suite_add_tcase(s, tc);
    return s;
}
