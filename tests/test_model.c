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

/* The parameter table lays theta out so that model.h's block offsets (generated from
 * sid_params.h) name the right kinds: every parameter of a random robot with every feature sits
 * at its kind's offset (plus its component) from the start of its block; and every parameter's
 * row, unit, name and path agree with the table. */
#define KIND_OFFSET(kind, ...) [SID_P_##kind] = P_##kind,
static const int kind_offset[SID_NPARAM_KIND] = {SID_PARAM_TABLE(SID_IGNORE_, KIND_OFFSET, SID_IGNORE_)};

/* Every parameter of m sits at its kind's offset (plus its component) from its block's first. */
static void check_block_offsets(const sid_model *m, int *seen)
{
    for (int i = 0; i < sid_model_nparam(m); i++) {
        const sid_param_info *p = sid_model_param(m, i);
        int start = i;   /* the block's first parameter: the same owner and block since */
        while (start > 0 && sid_model_param(m, start - 1)->row->block == p->row->block &&
               sid_model_param(m, start - 1)->row->owner == p->row->owner && sid_model_param(m, start - 1)->owner == p->owner)
            start--;
        ck_assert_msg(i - start == kind_offset[p->kind] + p->comp, "%s: at %d of its block, P_ offset %d + %d", p->name,
                      i - start, kind_offset[p->kind], p->comp);
        seen[p->kind] = 1;
        ck_assert_ptr_eq(p->row, sid_param_row_of(p->kind, p->comp));
        char path[160];
        sid_model_param_path(m, i, path, sizeof path);
        ck_assert_msg(strstr(path, p->row->key) || p->row->comp_key, "%s: path %s", p->name, path);
        ck_assert(p->unit && p->unit[0]);
    }
}

START_TEST(parameter_table_layout)
{
    /* a random robot given every joint feature: servos (position, velocity, a torque limit),
     * then on the others backlash, a torque sensor, a delay, direction- and load-dependent
     * friction and a limit with its gains; and a box with a leg on the ground */
    sid_robot_desc *d = tu_random_robot(5, 8, TU_ALL);
    tu_servos(d, 5, 1, 2);
    int moving = 0;
    for (int j = 0; j < d->njoint; j++) {
        sid_joint_desc *jd = &d->joint[j];
        if (jd->type != SID_JOINT_REVOLUTE && jd->type != SID_JOINT_PRISMATIC) continue;
        if (moving++ < 3) continue;   /* the first three keep their servos */
        jd->motor = SID_MOTOR_VOLTAGE, jd->resistance = 2;
        jd->has_backlash = 1, jd->backlash_width = 0.01, jd->backlash_stiffness = 100, jd->backlash_inertia = 1e-3;
        jd->has_torque_sensor = 1, jd->sensor_gain = 1;
        jd->has_delay = 1, jd->delay = 0.01;
        jd->has_coulomb_negative = jd->has_friction_load = 1, jd->coulomb_negative = 0.1, jd->friction_load = 0.01;
        jd->has_limit_lower = jd->has_limit_upper = jd->has_limit_stiffness = jd->has_limit_damping = 1;
        jd->limit_lower = -1, jd->limit_upper = 1, jd->limit_stiffness = 100, jd->limit_damping = 1;
    }
    sid_model *m;
    double *theta;
    sid_error err = {0};
    ck_assert_msg(sid_model_create(&m, &theta, d, &err) == SID_OK, "%s", err.msg);
    int seen[SID_NPARAM_KIND] = {0};
    check_block_offsets(m, seen);
    sid_model_free(m);
    sid_free(theta);
    tu_desc_free(d);
    m = tu_box_robot(1, SID_CONTACT_COMPLIANT, 1, &theta);
    check_block_offsets(m, seen);
    sid_model_free(m);
    sid_free(theta);
    for (int k = 0; k < SID_NPARAM_KIND; k++) ck_assert_msg(seen[k], "kind %d: in neither robot", k);
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
    sid_joint_force_vjp(&(sid_fd_point){m, tb, NULL, NULL, NULL, v[1], u_none, 0, 0}, Fbar, &(sid_state_bar){NULL, NULL, thetabar});
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
