/* test_util.c — random robots for the test suites. */
#include "test_util.h"
#include "robot_json.h"
#include "robot_load.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double tu_uniform(unsigned *state, double lo, double hi)
{
    *state = *state * 1664525u + 1013904223u;
    return lo + (hi - lo) * ((*state >> 8) / 16777216.0);
}

static void random_rotation(unsigned *s, double R[3][3])
{
    /* R = Rz Ry Rx of random angles: any rotation will do for a test. */
    const double a = tu_uniform(s, -3, 3), b = tu_uniform(s, -1.5, 1.5), c = tu_uniform(s, -3, 3);
    const double ca = cos(a), sa = sin(a), cb = cos(b), sb = sin(b), cc = cos(c), sc = sin(c);
    const double M[3][3] = {{cc * cb, cc * sb * sa - sc * ca, cc * sb * ca + sc * sa},
                            {sc * cb, sc * sb * sa + cc * ca, sc * sb * ca - cc * sa},
                            {-sb, cb * sa, cb * ca}};
    memcpy(R, M, sizeof M);
}

static void random_link(unsigned *s, sid_link_desc *l, int i)
{
    snprintf(l->name, sizeof l->name, "link%d", i);
    l->has_mass = 1;
    l->mass = tu_uniform(s, 0.5, 2.0);
    for (int k = 0; k < 3; k++) l->com[k] = tu_uniform(s, -0.1, 0.1);
    /* second moments x, y, z > 0 give principal moments (y+z, x+z, x+y): always physical */
    const double x = tu_uniform(s, 0.002, 0.02), y = tu_uniform(s, 0.002, 0.02), z = tu_uniform(s, 0.002, 0.02);
    const double D[3] = {y + z, x + z, x + y};
    double R[3][3], I[3][3];
    random_rotation(s, R);
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) {
            I[r][c] = 0;
            for (int k = 0; k < 3; k++) I[r][c] += R[r][k] * D[k] * R[c][k];
        }
    const double v[6] = {I[0][0], I[1][1], I[2][2], I[0][1], I[0][2], I[1][2]};
    memcpy(l->inertia, v, sizeof v);
}

sid_model *tu_random_model(unsigned seed, int njoint, int features, int floating, double **theta)
{
    sid_robot_desc *d = tu_random_robot(seed, njoint, features);
    for (int j = 0; j < d->njoint && floating; j++)
        if (d->joint[j].parent == 0) {
            d->joint[j].type = SID_JOINT_FREE;
            break;
        }
    sid_model *m;
    sid_error err = {0};
    ck_assert_msg(sid_model_create(&m, theta, d, &err) == SID_OK, "%s", err.msg);
    tu_desc_free(d);
    return m;
}

sid_model *tu_file_model(const char *path, void (*edit)(sid_robot_desc *), double **theta)
{
    sid_robot_desc d;
    memset(&d, 0, sizeof d);
    sid_error err = {0};
    ck_assert_msg(robot_load(path, &d, NULL, NULL, &err) == 0, "%s", err.msg);
    if (edit) edit(&d);
    sid_model *m;
    ck_assert_msg(sid_model_create(&m, theta, &d, &err) == SID_OK, "%s", err.msg);
    robot_desc_free(&d);
    return m;
}

void tu_dry_joints(sid_robot_desc *d)
{
    for (int j = 0; j < d->njoint; j++) {
        sid_joint_desc *jd = &d->joint[j];
        if (jd->type != SID_JOINT_REVOLUTE && jd->type != SID_JOINT_PRISMATIC) continue;
        jd->friction_model = SID_FRICTION_DRY;
        jd->coulomb = 0.05;
        jd->has_stribeck = 0;
        if (jd->motor != SID_MOTOR_NONE) jd->has_friction_load = 1, jd->friction_load = 0.05;
    }
}

void tu_servos(sid_robot_desc *d, unsigned seed, double limit_lo, double limit_hi)
{
    unsigned s = seed;
    for (int j = 0; j < d->njoint; j++) {
        sid_joint_desc *jd = &d->joint[j];
        if (jd->type != SID_JOINT_REVOLUTE && jd->type != SID_JOINT_PRISMATIC) continue;
        jd->motor = j % 3 == 2 ? SID_MOTOR_VELOCITY : SID_MOTOR_POSITION;
        jd->gear = tu_uniform(&s, 1, 3);
        jd->kp = tu_uniform(&s, 2, 10);
        jd->kd = tu_uniform(&s, 0.1, 1);
        jd->has_servo_limit = j % 3 != 1;
        jd->servo_limit = tu_uniform(&s, limit_lo, limit_hi);
    }
}

sid_robot_desc *tu_random_robot(unsigned seed, int njoint, int features)
{
    unsigned s = seed * 2654435761u + 12345u;
    const int nfixed = (features & TU_FIXED) ? 1 : 0, nj = njoint + nfixed;
    sid_robot_desc *d = calloc(1, sizeof *d);
    d->nlink = nj + 1;
    d->njoint = nj;
    d->link = calloc((size_t)d->nlink, sizeof *d->link);
    d->joint = calloc((size_t)nj, sizeof *d->joint);
    snprintf(d->name, sizeof d->name, "random%u", seed);
    d->gravity[0] = 0.3;
    d->gravity[1] = -0.2;
    d->gravity[2] = -9.81;
    snprintf(d->link[0].name, sizeof d->link[0].name, "base");
    for (int i = 1; i <= nj; i++) random_link(&s, &d->link[i], i);
    const int fixed_at = nj / 2;
    for (int j = 0; j < nj; j++) {
        sid_joint_desc *jd = &d->joint[j];
        sid_joint_desc_defaults(jd);
        snprintf(jd->name, sizeof jd->name, "joint%d", j);
        jd->child = j + 1;
        /* branched: attach to a random earlier link, else to the previous one */
        jd->parent = (features & TU_BRANCHED) && j > 1 ? (int)tu_uniform(&s, 0, (double)j + 0.999) : j;
        jd->type = SID_JOINT_REVOLUTE;
        if ((features & TU_PRISMATIC) && j % 3 == 2) jd->type = SID_JOINT_PRISMATIC;
        if (nfixed && j == fixed_at) jd->type = SID_JOINT_FIXED;
        for (int k = 0; k < 3; k++) {
            jd->xyz[k] = tu_uniform(&s, -0.3, 0.3);
            jd->rpy[k] = tu_uniform(&s, -1.0, 1.0);
            jd->axis[k] = tu_uniform(&s, -1, 1);
        }
        jd->axis[j % 3] += 2;   /* keep it well away from zero */
        if (features & TU_FRICTION) {
            jd->armature = tu_uniform(&s, 0.001, 0.05);
            jd->viscous = tu_uniform(&s, 0.01, 0.3);
            jd->coulomb = tu_uniform(&s, 0.01, 0.2);
            jd->smoothing = tu_uniform(&s, 0.05, 0.5);
            if (j % 2 == 0) {
                jd->has_stribeck = 1;
                jd->stribeck_torque = tu_uniform(&s, 0.01, 0.1);
                jd->stribeck_velocity = tu_uniform(&s, 0.1, 1.0);
            }
        }
        if (features & TU_MOTORS) {
            jd->motor = (sid_motor_input)(1 + j % 3);
            jd->gear = tu_uniform(&s, 1, 10);
            jd->kt = tu_uniform(&s, 0.05, 0.3);
            jd->ke = tu_uniform(&s, 0.01, 0.1);
            jd->resistance = tu_uniform(&s, 0.5, 3);
            jd->torque_bias = 0.01 * (1 + j % 3);   /* not drawn: the other joints keep their numbers */
        }
        if (features & TU_OFFSETS) jd->offset = tu_uniform(&s, -0.1, 0.1);
    }
    return d;
}

sid_model *tu_box_robot(int leg, sid_contact_model model, double friction, double **theta)
{
    sid_robot_desc d = {0};
    sid_link_desc link[3] = {{.name = "world"},
                             {.name = "box", .has_mass = 1, .mass = 1, .inertia = {0.0027, 0.0042, 0.0052, 0, 0, 0}},
                             {.name = "leg", .has_mass = 1, .mass = 0.2, .com = {0, 0, -0.05},
                              .inertia = {2e-4, 2e-4, 1e-5, 0, 0, 0}}};
    sid_joint_desc joint[2];
    sid_joint_desc_defaults(&joint[0]);
    sid_joint_desc_defaults(&joint[1]);
    snprintf(joint[0].name, sizeof joint[0].name, "base");
    joint[0].type = SID_JOINT_FREE, joint[0].parent = 0, joint[0].child = 1;
    snprintf(joint[1].name, sizeof joint[1].name, "hip");
    joint[1].parent = 1, joint[1].child = 2, joint[1].axis[1] = 1, joint[1].xyz[0] = 0.1, joint[1].xyz[2] = -0.02;
    joint[1].viscous = 0.01, joint[1].armature = 1e-4, joint[1].motor = SID_MOTOR_TORQUE;
    sid_sphere_desc sphere[5];
    for (int c = 0; c < 4; c++) {
        sphere[c] = (sid_sphere_desc){.link = 1, .xyz = {c & 1 ? 0.1 : -0.1, c & 2 ? 0.075 : -0.075, -0.05}, .radius = 0.005};
        snprintf(sphere[c].name, sizeof sphere[c].name, "c%d", c);
    }
    sphere[4] = (sid_sphere_desc){.name = "foot", .link = 2, .xyz = {0, 0, -0.08}, .radius = 0.01};
    d.gravity[2] = -9.81;
    d.nlink = leg ? 3 : 2, d.link = link, d.njoint = leg ? 2 : 1, d.joint = joint, d.nsphere = leg ? 5 : 4;
    d.sphere = sphere;
    sid_ground_desc_defaults(&d.ground);
    d.ground.model = model;
    d.ground.friction = friction;
    d.ground.height = 0.01;
    sid_model *m;
    sid_error err = {0};
    if (sid_model_create(&m, theta, &d, &err) != SID_OK) {
        fprintf(stderr, "tu_box_robot: %s\n", err.msg);
        return NULL;
    }
    return m;
}

void tu_desc_free(sid_robot_desc *d)
{
    if (!d) return;
    free(d->link);
    free(d->joint);
    free(d);
}

double tu_rel_err(double a, double b, double atol)
{
    const double e = fabs(a - b) - atol;
    return e > 0 ? e / (fabs(a) + fabs(b) + atol) : 0;
}

sid_traj *tu_synth_log(const sid_model *m, const double *theta_true, int n, double dt, double amp, unsigned seed)
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
            for (int c = 0; c < 3; c++) u += amp * sin(f[i][c] * tr->t[k] + ph[i][c]);
            tr->u[(size_t)k * nv + i] = u;
        }
    }
    /* start at rest with free joints at the identity orientation */
    for (int j = 0; j < sid_model_ndof_joints(m); j++)
        if (sid_model_dof_joint_type(m, j) == SID_JOINT_FREE) tr->q[sid_model_dof_joint_qadr(m, j) + 3] = 1;
    sid_sim_opts o;
    sid_sim_opts_defaults(&o);
    double *q = malloc(sizeof(double) * (size_t)(n * nq)), *v = malloc(sizeof(double) * (size_t)(n * nv));
    sid_error err = {0};
    if (sid_simulate(m, theta_true, tr, &o, q, v, &err) != SID_OK) {
        fprintf(stderr, "tu_synth_log: %s\n", err.msg);
        abort();
    }
    memcpy(tr->q, q, sizeof(double) * (size_t)(n * nq));
    memcpy(tr->qd, v, sizeof(double) * (size_t)(n * nv));
    free(q);
    free(v);
    return tr;
}

void tu_replay(const sid_model *m, const double *theta, sid_traj *tr, const sid_sim_opts *o)
{
    sid_sim_opts dflt;
    sid_sim_opts_defaults(&dflt);
    const size_t nq = (size_t)tr->n * (size_t)tr->nq, nv = (size_t)tr->n * (size_t)tr->nv;
    double *q = malloc(sizeof(double) * nq), *v = malloc(sizeof(double) * nv);
    ck_assert_ptr_nonnull(q);
    ck_assert_ptr_nonnull(v);
    sid_error err = {0};
    ck_assert_msg(sid_simulate(m, theta, tr, o ? o : &dflt, q, v, &err) == SID_OK, "%s", err.msg);
    memcpy(tr->q, q, sizeof(double) * nq);
    memcpy(tr->qd, v, sizeof(double) * nv);
    free(q);
    free(v);
}

void tu_add_noise(sid_traj *tr, double sq, double sqd, unsigned seed)
{
    /* Box-Muller on the test generator */
    unsigned s = seed;
    for (int k = 0; k < tr->n; k++) {
        for (int i = 0; i < tr->nq; i++) {
            const double u1 = tu_uniform(&s, 1e-12, 1), u2 = tu_uniform(&s, 0, 1);
            tr->q[(size_t)k * tr->nq + i] += sq * sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
        }
        for (int i = 0; i < tr->nv; i++) {
            const double u1 = tu_uniform(&s, 1e-12, 1), u2 = tu_uniform(&s, 0, 1);
            tr->qd[(size_t)k * tr->nv + i] += sqd * sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
        }
    }
}

double tu_noise_loss(const sid_problem *p, double weight_q, double weight_qd, double sq, double sqd)
{
    const sid_model *m = sid_problem_model(p);
    const int nq = sid_model_nq(m), nv = sid_model_nv(m);
    const double *scale_q = sid_problem_scale_q(p), *scale_qd = sid_problem_scale_qd(p);
    double sum = 0;
    int rows = 0;
    for (int i = 0; weight_q > 0 && i < nq; i++, rows++) sum += weight_q * sq * sq / (scale_q[i] * scale_q[i]);
    for (int i = 0; weight_qd > 0 && i < nv; i++, rows++) sum += weight_qd * sqd * sqd / (scale_qd[i] * scale_qd[i]);
    return rows ? 0.5 * sum / rows : 0;
}

int tu_param(const sid_model *m, const char *name)
{
    const int i = sid_model_param_find(m, name);
    ck_assert_msg(i >= 0, "no parameter %s", name);
    return i;
}
