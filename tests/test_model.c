/* test_model.c — model validation, parameter layout and names. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "joint_force.h"
#include "sid_internal.h"
#include "workspace.h"

Suite *model_suite(void);

static sid_status create(sid_robot_desc *d, sid_error *err)
{
    sid_model *m;
    double *theta;
    const sid_status s = sid_model_create(&m, &theta, d, err);
    if (s == SID_OK) {
        sid_model_free(m);
        sid_free(theta);
    }
    return s;
}

static void expect_error(sid_robot_desc *d, const char *needle)
{
    sid_error err = {0};
    ck_assert_int_eq(create(d, &err), SID_ERR_INPUT);
    ck_assert_msg(strstr(err.msg, needle), "message '%s' lacks '%s'", err.msg, needle);
}

START_TEST(rejects_bad_trees)
{
    sid_robot_desc *d = tu_random_robot(1, 4, 0);
    sid_error err = {0};
    ck_assert_int_eq(create(d, &err), SID_OK);
    d->joint[2].parent = 3;            /* link3 <- joint2 <- link3: a cycle */
    expect_error(d, "cycle");
    d->joint[2].parent = 4;            /* link4 -> link3 -> link4 -> ...: unreachable cycle */
    d->joint[3].parent = 3;
    expect_error(d, "cycle");
    tu_desc_free(d);

    d = tu_random_robot(1, 4, 0);
    d->njoint = 3;                      /* link4 is then a second root */
    expect_error(d, "two roots");
    d->njoint = 4;
    strcpy(d->link[2].name, d->link[1].name);
    expect_error(d, "links[2].name: duplicate");
    strcpy(d->link[2].name, "x");
    strcpy(d->joint[3].name, d->joint[0].name);
    expect_error(d, "joints[3].name: duplicate");
    strcpy(d->joint[3].name, "y");
    d->joint[1].axis[0] = d->joint[1].axis[1] = d->joint[1].axis[2] = 0;
    expect_error(d, "joints[1].axis");
    tu_desc_free(d);
}
END_TEST

START_TEST(rejects_unphysical_inertia)
{
    sid_robot_desc *d = tu_random_robot(2, 3, 0);
    d->link[2].mass = -1;
    expect_error(d, "links[2].mass: expected a positive number");
    d->link[2].mass = 1;
    const double notpd[6] = {0.01, 0.01, -0.01, 0, 0, 0};
    memcpy(d->link[1].inertia, notpd, sizeof notpd);
    expect_error(d, "links[1].inertia: expected a positive definite");
    const double triangle[6] = {0.01, 0.01, 0.05, 0, 0, 0};
    memcpy(d->link[1].inertia, triangle, sizeof triangle);
    expect_error(d, "triangle inequality");
    tu_desc_free(d);
}
END_TEST

START_TEST(parameter_names_and_globs)
{
    sid_robot_desc *d = tu_random_robot(3, 6, TU_ALL);
    sid_model *m;
    double *theta;
    sid_error err = {0};
    ck_assert_int_eq(sid_model_create(&m, &theta, d, &err), SID_OK);
    const int i = sid_model_param_find(m, "links.link2.inertia.ixy");
    ck_assert_int_ge(i, 0);
    ck_assert_double_eq(theta[i], d->link[2].inertia[3]);
    ck_assert_int_ge(sid_model_param_find(m, "joints.joint0.friction.stribeck.velocity"), 0);
    ck_assert_int_ge(sid_model_param_find(m, "gravity[2]"), 0);
    ck_assert_int_ge(sid_model_param_find(m, "joints.joint2.motor.resistance"), 0);  /* joint2 has a voltage motor */
    ck_assert_int_eq(sid_model_param_find(m, "joints.joint0.motor.resistance"), -1); /* torque motor: no R */
    ck_assert_int_eq(sid_model_param_match(m, "links.*.mass", NULL), 7);   /* link1..link7: 6 moving joints and a fixed one */
    ck_assert_int_eq(sid_model_param_match(m, "*", NULL), sid_model_nparam(m));
    char path[128];
    sid_model_param_path(m, i, path, sizeof path);
    ck_assert_str_eq(path, "links[2].inertia.ixy");
    sid_model_free(m);
    sid_free(theta);
    tu_desc_free(d);
}
END_TEST

/* One matcher for every glob: '*' crosses dots, '?' is one character, brackets are literal. */
START_TEST(glob_matcher)
{
    ck_assert(sid_glob_match("links.*.com[2]", "links.upper.com[2]"));
    ck_assert(!sid_glob_match("links.*.com[2]", "links.upper.com2"));
    ck_assert(!sid_glob_match("links.*.com[2]", "links.upper.com[1]"));
    ck_assert(sid_glob_match("links.*.com[*]", "links.upper.com[0]"));
    ck_assert(sid_glob_match("*", "gravity[2]"));
    ck_assert(sid_glob_match("joints.*", "joints.a.friction.stribeck.torque"));   /* '*' crosses dots */
    ck_assert(sid_glob_match("joints.joint?.offset", "joints.joint3.offset"));
    ck_assert(!sid_glob_match("joints.joint?.offset", "joints.joint13.offset"));
    ck_assert(sid_glob_match("*.mass", "links.a.mass"));
    ck_assert(sid_glob_match("a*b*c", "axxbyyc"));
    ck_assert(!sid_glob_match("a*b*c", "axxbyy"));
    ck_assert(sid_glob_match("gravity\\[2]", "gravity[2]"));
    ck_assert(!sid_glob_match("links.*.mass", "joints.a.armature"));   /* matches nothing */
    ck_assert(!sid_glob_match("", "x"));
    ck_assert(sid_glob_match("", ""));

    sid_robot_desc *d = tu_random_robot(3, 6, TU_ALL);
    sid_model *m;
    double *theta;
    sid_error err = {0};
    ck_assert_int_eq(sid_model_create(&m, &theta, d, &err), SID_OK);
    ck_assert_int_eq(sid_model_param_match(m, "links.*.com[2]", NULL), 7);   /* one per massive link */
    ck_assert_int_eq(sid_model_param_match(m, "links.*.com[*]", NULL), 21);
    ck_assert_int_eq(sid_model_param_match(m, "links.*.nothing", NULL), 0);
    sid_model_free(m);
    sid_free(theta);
    tu_desc_free(d);
}
END_TEST

/* The parameter table lays theta out so that model.h's block offsets name the right kinds, and
 * every parameter's row, unit, name and path agree with the table. */
START_TEST(parameter_table_layout)
{
    sid_robot_desc *d = tu_random_robot(5, 6, TU_ALL);
    sid_model *m;
    double *theta;
    sid_error err = {0};
    ck_assert_int_eq(sid_model_create(&m, &theta, d, &err), SID_OK);
    static const struct { sid_param_block block; int off; sid_param_kind kind; } at[] = {
        {SID_BLOCK_INERTIAL, P_MASS, SID_P_MASS}, {SID_BLOCK_INERTIAL, P_COM + 2, SID_P_COM},
        {SID_BLOCK_INERTIAL, P_INERTIA + 5, SID_P_INERTIA}, {SID_BLOCK_ORIGIN, P_RPY, SID_P_RPY},
        {SID_BLOCK_DOF, P_ARMATURE, SID_P_ARMATURE}, {SID_BLOCK_DOF, P_VISCOUS, SID_P_VISCOUS},
        {SID_BLOCK_DOF, P_COULOMB, SID_P_COULOMB}, {SID_BLOCK_DOF, P_SMOOTHING, SID_P_SMOOTHING},
        {SID_BLOCK_DOF, P_OFFSET, SID_P_OFFSET},
        {SID_BLOCK_STRIBECK, P_STRIBECK_VELOCITY, SID_P_STRIBECK_VELOCITY},
        {SID_BLOCK_MOTOR, P_KT, SID_P_KT}, {SID_BLOCK_MOTOR, P_RESISTANCE, SID_P_RESISTANCE},
    };
    int checked = 0;
    for (int b = 1; b < m->nbody; b++) {
        const sid_body *bd = &m->body[b];
        const int start[] = {[SID_BLOCK_INERTIAL] = bd->p_inertial, [SID_BLOCK_ORIGIN] = bd->p_origin,
                             [SID_BLOCK_DOF] = bd->p_dof, [SID_BLOCK_STRIBECK] = bd->p_stribeck,
                             [SID_BLOCK_MOTOR] = bd->motor == SID_MOTOR_VOLTAGE ? bd->p_motor : -1};
        for (size_t k = 0; k < sizeof at / sizeof at[0]; k++)
            if (start[at[k].block] >= 0) {
                ck_assert_int_eq(m->param[start[at[k].block] + at[k].off].kind, at[k].kind);
                checked++;
            }
    }
    ck_assert_int_gt(checked, 30);
    for (int i = 0; i < sid_model_nparam(m); i++) {
        const sid_param_info *p = sid_model_param(m, i);
        ck_assert_ptr_eq(p->row, sid_param_row_of(p->kind, p->comp));
        char path[160];
        sid_model_param_path(m, i, path, sizeof path);
        ck_assert_msg(strstr(path, p->row->key) || p->row->comp_key, "%s: path %s", p->name, path);
        ck_assert(p->unit && p->unit[0]);
    }
    sid_model_free(m);
    sid_free(theta);
    tu_desc_free(d);
}
END_TEST

/* A torque bias b acts on its joint as a torque-input command u = b (gear = kt = 1): the same
 * generalised force to the bit, the same trajectory, and in the adjoint dF/db = 1. */
START_TEST(torque_bias_acts_as_a_command)
{
    sid_robot_desc *d = tu_random_robot(7, 4, TU_ALL);
    d->joint[0].motor = SID_MOTOR_TORQUE;   /* joint0: the first moving joint */
    d->joint[0].gear = d->joint[0].kt = 1;
    sid_model *m;
    double *theta;
    sid_error err = {0};
    ck_assert_int_eq(sid_model_create(&m, &theta, d, &err), SID_OK);
    tu_desc_free(d);
    const int ib = sid_model_param_find(m, "joints.joint0.torque_bias"), nv = sid_model_nv(m);
    ck_assert_int_ge(ib, 0);
    ck_assert_str_eq(sid_model_param(m, ib)->unit, "N*m");
    const double b = 0.37;
    double *tb = malloc(sizeof(double) * (size_t)sid_model_nparam(m));
    memcpy(tb, theta, sizeof(double) * (size_t)sid_model_nparam(m));
    theta[ib] = 0;
    tb[ib] = b;
    double q[2][8] = {{0.1, -0.2, 0.3, 0.05}, {0.1, -0.2, 0.3, 0.05}}, v[2][8] = {{0.5, 0, -0.3, 0.2}, {0.5, 0, -0.3, 0.2}};
    double u_cmd[8] = {b}, u_none[8] = {0}, F[2][8];
    sid_joint_force(m, theta, v[0], u_cmd, F[0]);
    sid_joint_force(m, tb, v[1], u_none, F[1]);
    for (int i = 0; i < nv; i++) ck_assert_double_eq(F[0][i], F[1][i]);
    sid_workspace *ws = sid_workspace_create(m);
    for (int k = 0; k < 200; k++) {
        ck_assert_int_eq(sid_step(m, theta, ws, SID_EULER, 1e-3, q[0], v[0], u_cmd, q[0], v[0], &err), SID_OK);
        ck_assert_int_eq(sid_step(m, tb, ws, SID_EULER, 1e-3, q[1], v[1], u_none, q[1], v[1], &err), SID_OK);
    }
    for (int i = 0; i < nv; i++) {
        ck_assert_double_eq(q[0][i], q[1][i]);
        ck_assert_double_eq(v[0][i], v[1][i]);
    }
    double Fbar[8] = {0}, *thetabar = calloc((size_t)sid_model_nparam(m), sizeof(double));
    Fbar[0] = 2.5;
    sid_joint_force_vjp(&(sid_fd_point){m, tb, NULL, NULL, NULL, v[1], u_none, 0}, Fbar, &(sid_state_bar){NULL, NULL, thetabar});
    ck_assert_double_eq(thetabar[ib], 2.5);
    free(thetabar);
    free(tb);
    sid_workspace_free(ws);
    sid_model_free(m);
    sid_free(theta);
}
END_TEST

Suite *model_suite(void)
{
    Suite *s = suite_create("model");
    TCase *tc = tcase_create("validation");
    tcase_add_test(tc, rejects_bad_trees);
    tcase_add_test(tc, rejects_unphysical_inertia);
    tcase_add_test(tc, parameter_names_and_globs);
    tcase_add_test(tc, glob_matcher);
    tcase_add_test(tc, parameter_table_layout);
    tcase_add_test(tc, torque_bias_acts_as_a_command);
    suite_add_tcase(s, tc);
    return s;
}
