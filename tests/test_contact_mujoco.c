/* test_contact_mujoco.c — floating bodies against MuJoCo on the box of data/box:
 *  - free flight (MuJoCo's contacts disabled): the free joint's dynamics and quaternion
 *    integration agree with mj_step to rounding, Euler and RK4;
 *  - a box sliding to a stop (data/box/slide.csv, made by MuJoCo with its own soft contact):
 *    sysid's compliant contact with the true mass and friction stops it at the same place
 *    within 1 %, and both agree with the Coulomb estimate v0^2 / (2 mu g). */
#include <check.h>
#include <math.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <string.h>

#include "robot_json.h"
#include "traj_csv.h"
#include "sid_internal.h"

Suite *contact_mujoco_suite(void);

typedef struct {
    sid_robot_desc desc;
    sid_model *m;
    double *theta;
    mjModel *mm;
    mjData *md;
} box;

/* data/box with its MuJoCo truth (mass, inertia, friction) copied into theta. */
static void box_load(box *b)
{
    char errstr[1000] = "";
    sid_error err = {0};
    memset(b, 0, sizeof *b);
    ck_assert_msg(robot_json_load("../data/box/robot.json", &b->desc, NULL, &err) == 0, "%s", err.msg);
    ck_assert_msg(sid_model_create(&b->m, &b->theta, &b->desc, &err) == SID_OK, "%s", err.msg);
    b->mm = mj_loadXML("../data/box/model.xml", NULL, errstr, sizeof errstr);
    ck_assert_msg(b->mm != NULL, "%s", errstr);
    b->md = mj_makeData(b->mm);
    const int body = mj_name2id(b->mm, mjOBJ_BODY, "box"), geom = mj_name2id(b->mm, mjOBJ_GEOM, "ground");
    ck_assert_int_ge(body, 0);
    ck_assert_int_ge(geom, 0);
    static const char *key[3] = {"ixx", "iyy", "izz"};
    char name[96];
    b->theta[sid_model_param_find(b->m, "links.box.mass")] = b->mm->body_mass[body];
    for (int k = 0; k < 3; k++) {
        snprintf(name, sizeof name, "links.box.inertia.%s", key[k]);
        b->theta[sid_model_param_find(b->m, name)] = b->mm->body_inertia[3 * body + k];
    }
    b->theta[sid_model_param_find(b->m, "contact.ground.friction")] = b->mm->geom_friction[3 * geom];
}

static void box_free(box *b)
{
    mj_deleteData(b->md);
    mj_deleteModel(b->mm);
    sid_model_free(b->m);
    sid_free(b->theta);
    robot_desc_free(&b->desc);
}

START_TEST(free_flight_matches_mujoco)
{
    box b;
    box_load(&b);
    const int rk4 = _i;
    b.mm->opt.disableflags |= mjDSBL_CONTACT;
    b.mm->opt.integrator = rk4 ? mjINT_RK4 : mjINT_EULER;
    /* our model without contact: no ground, no spheres */
    b.desc.ground.present = 0;
    b.desc.nsphere = 0;
    sid_model *m;
    double *theta;
    sid_error err = {0};
    ck_assert_msg(sid_model_create(&m, &theta, &b.desc, &err) == SID_OK, "%s", err.msg);
    memcpy(theta, b.theta, sizeof(double) * (size_t)m->nparam);   /* contact parameters come last */
    sid_workspace *ws = sid_workspace_create(m);
    double q[7] = {0.1, -0.2, 1.0, 0.8, 0.2, -0.3, 0.1}, v[6] = {1, -0.5, 3, 2, -3, 5}, q1[7], v1[6], u[6] = {0};
    const double n = sqrt(q[3] * q[3] + q[4] * q[4] + q[5] * q[5] + q[6] * q[6]);
    for (int k = 3; k < 7; k++) q[k] /= n;
    mj_resetData(b.mm, b.md);
    memcpy(b.md->qpos, q, sizeof q);
    memcpy(b.md->qvel, v, sizeof v);
    double dq = 0, dv = 0;
    for (int step = 0; step < 1000; step++) {
        ck_assert_int_eq(sid_step(m, theta, ws, rk4 ? SID_RK4 : SID_EULER, b.mm->opt.timestep, q, v, u, q1, v1, &err), SID_OK);
        memcpy(q, q1, sizeof q);
        memcpy(v, v1, sizeof v);
        mj_step(b.mm, b.md);
        for (int k = 0; k < 7; k++) dq = fmax(dq, fabs(q[k] - b.md->qpos[k]));
        for (int k = 0; k < 6; k++) dv = fmax(dv, fabs(v[k] - b.md->qvel[k]));
    }
    fprintf(stderr, "mujoco: box free flight (%s, 1 s, tumbling) max|dq| %.2e, max|dv| %.2e\n", rk4 ? "rk4" : "euler", dq, dv);
    ck_assert_msg(dq < 1e-10 && dv < 1e-9, "free flight: max|dq| %g, max|dv| %g", dq, dv);
    sid_workspace_free(ws);
    sid_model_free(m);
    sid_free(theta);
    box_free(&b);
}
END_TEST

/* Time and x where the box's speed first falls below 1 mm/s (after it started moving). */
static void stop_point(const sid_traj *tr, const double *q, const double *v, double *t, double *x)
{
    for (int k = 10; k < tr->n; k++)
        if (fabs(v[(size_t)k * 6]) < 1e-3) {
            *t = tr->t[k];
            *x = q[(size_t)k * 7];
            return;
        }
    *t = *x = NAN;
}

START_TEST(slide_stopping_distance_matches_mujoco)
{
    box b;
    box_load(&b);
    sid_traj *tr = NULL;
    sid_error err = {0};
    ck_assert_msg(traj_csv_load("../data/box/slide.csv", b.m, NULL, &tr, &err) == 0, "%s", err.msg);
    double *q = sid_alloc(sizeof(double) * (size_t)(tr->n * 7)), *v = sid_alloc(sizeof(double) * (size_t)(tr->n * 6));
    sid_sim_opts o;
    sid_sim_opts_defaults(&o);
    ck_assert_msg(sid_simulate(b.m, b.theta, tr, &o, q, v, &err) == SID_OK, "%s", err.msg);
    double t_mj, x_mj, t_us, x_us;
    stop_point(tr, tr->q, tr->qd, &t_mj, &x_mj);
    stop_point(tr, q, v, &t_us, &x_us);
    const double mu = b.theta[sid_model_param_find(b.m, "contact.ground.friction")], v0 = tr->qd[0];
    const double coulomb = v0 * v0 / (2 * mu * 9.81), x0 = tr->q[0];
    const double end_mj = tr->q[(size_t)(tr->n - 1) * 7], end_us = q[(size_t)(tr->n - 1) * 7];
    fprintf(stderr,
            "mujoco: box slide v0 %.2f m/s, mu %.2f: stops at %.4f m (%.3f s) in MuJoCo, %.4f m (%.3f s) in sysid "
            "(%+.2f %%); rests at %.5f vs %.5f m; Coulomb %.4f m\n",
            v0, mu, x_mj - x0, t_mj, x_us - x0, t_us, 100 * (x_us - x_mj) / (x_mj - x0), end_mj, end_us, coulomb);
    ck_assert_msg(fabs(end_us - end_mj) < 0.01 * (end_mj - x0), "resting x %g vs MuJoCo %g", end_us, end_mj);
    ck_assert_msg(fabs(x_us - x_mj) < 0.01 * (x_mj - x0), "stopping x %g vs MuJoCo %g", x_us, x_mj);
    ck_assert_msg(fabs(end_us - x0 - coulomb) < 0.01 * coulomb, "resting distance %g vs Coulomb %g", end_us - x0, coulomb);
    sid_free(q);
    sid_free(v);
    sid_traj_free(tr);
    box_free(&b);
}
END_TEST

Suite *contact_mujoco_suite(void)
{
    Suite *s = suite_create("contact_mujoco");
    TCase *tc = tcase_create("box");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, free_flight_matches_mujoco, 0, 2);
    tcase_add_test(tc, slide_stopping_distance_matches_mujoco);
    suite_add_tcase(s, tc);
    return s;
}
