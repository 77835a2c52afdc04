/* test_forward.c — forward mode (the step's tangent, sid_step_jvp) for free joints, compliant
 * contact and logged pushes: per model (a floating box with 8 corner spheres on compliant
 * ground; a pushed floating chain; a 2-link arm whose tip sphere touches the ground; the
 * pushed floating chain with dry joint friction, Euler only), the
 * step's tangent against central differences of the step, the dot-product test with the
 * step's adjoint, and the window Jacobian (now forward mode, jacobian.c) against central
 * differences of the window's residuals; and the Jacobian's time against the 2 ncol + 1
 * simulations central differences cost (printed, not asserted: the machine is shared). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "test_util.h"
#include "sid_internal.h"

Suite *forward_suite(void);

/* NMODEL: the models stepped by euler and rk4; DRY and DRY_ARM (dry friction) by euler only */
enum { BOX, PUSHED, ARM, TREE, NMODEL, DRY = NMODEL, DRY_ARM, NALL };
static const char *const model_name[NALL] = {"box with 8 corner spheres", "pushed floating chain", "arm touching ground",
                                             "fixed-base tree", "pushed floating chain, dry friction",
                                             "arm touching ground, dry friction"};

/* A box (0.2 x 0.15 x 0.1 m, 1 kg) on a free joint with a 5 mm sphere at each of its 8 corners;
 * ground at 0.01, stiffer and better damped than the defaults, friction 0.7. */
static sid_model *box8(double **theta)
{
    sid_robot_desc d = {0};
    sid_link_desc link[2] = {{.name = "world"},
                             {.name = "box", .has_mass = 1, .mass = 1, .com = {0.01, -0.005, 0.003},
                              .inertia = {0.0027, 0.0042, 0.0052, 1e-4, -5e-5, 2e-5}}};
    sid_joint_desc joint;
    sid_joint_desc_defaults(&joint);
    snprintf(joint.name, sizeof joint.name, "base");
    joint.type = SID_JOINT_FREE, joint.parent = 0, joint.child = 1;
    sid_sphere_desc sphere[8];
    for (int c = 0; c < 8; c++) {
        sphere[c] = (sid_sphere_desc){.link = 1,
                                      .xyz = {c & 1 ? 0.1 : -0.1, c & 2 ? 0.075 : -0.075, c & 4 ? 0.05 : -0.05},
                                      .radius = 0.005};
        snprintf(sphere[c].name, sizeof sphere[c].name, "c%d", c);
    }
    d.gravity[2] = -9.81;
    d.nlink = 2, d.link = link, d.njoint = 1, d.joint = &joint, d.nsphere = 8, d.sphere = sphere;
    sid_ground_desc_defaults(&d.ground);
    d.ground.friction = 0.7;
    d.ground.height = 0.01;
    d.ground.stiffness = 3e4;
    d.ground.damping = 2e3;
    sid_model *m;
    sid_error err = {0};
    ck_assert_msg(sid_model_create(&m, theta, &d, &err) == SID_OK, "%s", err.msg);
    return m;
}

/* Two hinges about y hanging from z = 0.5 (links 0.25 m, torque motors, friction), a 2 cm
 * sphere at the tip: at q = 0 its bottom is 3 mm below the ground at -0.017. With dry, the
 * hinges' friction is dry (Coulomb 0.05 N m, the elbow's bound loaded by its motor torque). */
static sid_model *arm(double **theta, int dry)
{
    sid_robot_desc d = {0};
    sid_link_desc link[3] = {{.name = "world"},
                             {.name = "upper", .has_mass = 1, .mass = 1.2, .com = {0.01, 0, -0.12},
                              .inertia = {0.01, 0.012, 0.004, 1e-4, 0, 2e-4}},
                             {.name = "lower", .has_mass = 1, .mass = 0.6, .com = {0, 0.01, -0.1},
                              .inertia = {0.004, 0.005, 0.001, 0, 1e-4, 0}}};
    sid_joint_desc joint[2];
    for (int j = 0; j < 2; j++) {
        sid_joint_desc_defaults(&joint[j]);
        snprintf(joint[j].name, sizeof joint[j].name, "j%d", j);
        joint[j].parent = j, joint[j].child = j + 1, joint[j].axis[1] = 1;
        joint[j].viscous = 0.05, joint[j].armature = 1e-3, joint[j].motor = SID_MOTOR_TORQUE;
    }
    joint[0].xyz[2] = 0.5, joint[1].xyz[2] = -0.25, joint[1].rpy[0] = 0.05;
    for (int j = 0; j < 2 && dry; j++) {
        joint[j].friction_model = SID_FRICTION_DRY;
        joint[j].coulomb = 0.05;
        joint[j].has_stribeck = 0;
    }
    if (dry) joint[1].has_friction_load = 1, joint[1].friction_load = 0.05;
    sid_sphere_desc sphere = {.name = "tip", .link = 2, .xyz = {0, 0, -0.25}, .radius = 0.02};
    d.gravity[2] = -9.81;
    d.nlink = 3, d.link = link, d.njoint = 2, d.joint = joint, d.nsphere = 1, d.sphere = &sphere;
    sid_ground_desc_defaults(&d.ground);
    d.ground.friction = 0.8;
    d.ground.height = -0.017;
    sid_model *m;
    sid_error err = {0};
    ck_assert_msg(sid_model_create(&m, theta, &d, &err) == SID_OK, "%s", err.msg);
    return m;
}

/* The pushed floating chain with dry joint friction (MuJoCo's frictionloss; no Stribeck term
 * then) on its hinges. */
static sid_model *dry_chain(double **theta)
{
    sid_robot_desc *d = tu_random_robot(23, 3, TU_FRICTION | TU_MOTORS | TU_OFFSETS);
    int floating = 0;
    for (int j = 0; j < d->njoint; j++) {
        if (d->joint[j].parent == 0 && !floating) {
            d->joint[j].type = SID_JOINT_FREE, floating = 1;
            continue;
        }
        d->joint[j].friction_model = SID_FRICTION_DRY;
        d->joint[j].has_stribeck = 0;
    }
    sid_model *m;
    sid_error err = {0};
    ck_assert_msg(sid_model_create(&m, theta, d, &err) == SID_OK, "%s", err.msg);
    tu_desc_free(d);
    return m;
}

static sid_model *make_model(int which, double **theta)
{
    if (which == BOX) return box8(theta);
    if (which == ARM || which == DRY_ARM) return arm(theta, which == DRY_ARM);
    if (which == DRY) return dry_chain(theta);
    if (which == TREE) {   /* no world poses: revolute and fixed joints take the shared form (dynamics.c) */
        sid_model *t = tu_random_model(31, 5, TU_BRANCHED | TU_PRISMATIC | TU_FIXED | TU_FRICTION | TU_MOTORS, 0, theta);
        ck_assert_ptr_nonnull(t);
        return t;
    }
    sid_model *m = tu_random_model(23, 3, TU_FRICTION | TU_MOTORS | TU_OFFSETS, 1, theta);
    ck_assert_ptr_nonnull(m);
    return m;
}

/* A state where the model's contact is active: the box tilted with corners a few mm deep,
 * moving; the arm near q = 0; the chain anywhere (its quaternion not unit: the normalisation
 * takes part). */
static void make_state(const sid_model *m, int which, unsigned *s, double *q, double *v, double *u)
{
    const int arm_like = which == ARM || which == DRY_ARM;
    for (int i = 0; i < m->nq; i++) q[i] = arm_like ? tu_uniform(s, -0.08, 0.08) : tu_uniform(s, -1, 1);
    for (int i = 0; i < m->nv; i++) v[i] = tu_uniform(s, -0.5, 0.5), u[i] = tu_uniform(s, -1, 1);
    if (which == BOX) {
        const double tilt = tu_uniform(s, -0.04, 0.04);
        q[2] = 0.062, q[3] = cos(tilt), q[4] = sin(tilt), q[5] = 0.3 * sin(tilt), q[6] = 0.1 * sin(tilt);
    }
    if (which == PUSHED || which == DRY) q[3] += 1.5;
}

/* Random pushes held this interval, world and link frame, on every link. */
static void make_push(const sid_model *m, unsigned *s, double *push)
{
    for (int i = 0; i < m->nbody * SID_PUSH_STRIDE; i++) push[i] = tu_uniform(s, -2, 2);
}

/* Per-parameter scale of a tangent direction: the parameter's size, at least 0.1 of its unit
 * (so angles, offsets and a zero COM move too). */
static double pscale(double th) { return fmax(fabs(th), 0.1); }

typedef struct {
    sid_model *m;
    double *theta;
    sid_workspace *ws;
    double push[64 * SID_PUSH_STRIDE];
    double q[64], v[64], u[64];
} step_fixture;

static void fixture_make(step_fixture *f, int which, unsigned seed)
{
    f->m = make_model(which, &f->theta);
    f->ws = sid_workspace_create(f->m);
    ck_assert_ptr_nonnull(f->ws);
    unsigned s = seed;
    make_state(f->m, which, &s, f->q, f->v, f->u);
    make_push(f->m, &s, f->push);
    f->ws->push = which == PUSHED || which == DRY ? f->push : NULL;
}

static void fixture_free(step_fixture *f)
{
    sid_workspace_free(f->ws);
    sid_model_free(f->m);
    sid_free(f->theta);
}

/* The step at (q + e qd, v + e vd, theta + e thd). */
static void step_at(step_fixture *f, sid_integrator integ, double h, double e, const double *qd, const double *vd,
                    const double *thd, double *q1, double *v1)
{
    const sid_model *m = f->m;
    double q[64], v[64], *th = malloc(sizeof(double) * (size_t)m->nparam);
    for (int i = 0; i < m->nq; i++) q[i] = f->q[i] + e * qd[i];
    for (int i = 0; i < m->nv; i++) v[i] = f->v[i] + e * vd[i];
    for (int i = 0; i < m->nparam; i++) th[i] = f->theta[i] + e * thd[i];
    sid_error err = {0};
    ck_assert_msg(sid_step(m, th, f->ws, integ, h, q, v, f->u, q1, v1, &err) == SID_OK, "%s", err.msg);
    free(th);
}

/* Whether direction d (of step_check's five) moves parameter i: d 0 none, 1 and 2 all, 3 all but
 * the joint origins, 4 the origins of every other joint only (the tangent's shared form for
 * joints whose origin does not move, its general form for the others, in one pass). */
static int moves_param(const sid_model *m, int d, int i)
{
    const sid_param_info *pi = sid_model_param(m, i);
    const int origin = pi->kind == SID_P_XYZ || pi->kind == SID_P_RPY;
    return d == 1 || d == 2 || (d == 3 && !origin) || (d == 4 && origin && pi->owner % 2 == 0);
}

/* Five directions at once (state only, parameters only, both; both without origins, both with
 * half the origins), random and scaled; the tangent
 * against central differences of the step along each (step e = 1e-7 on directions of unit
 * size: truncation ~ (e / width)^2 ~ 1e-8 relative with the contact's 1 mm activation width,
 * rounding ~ 1e-16 / e ~ 1e-9; tolerance 1e-7 of the tangent's largest entry), and the
 * dot-product test <J d, w> = <d, J^T w> with the adjoint (sid_step_vjp) to 1e-10 relative. */
static void step_check(int which, sid_integrator integ, unsigned seed)
{
    step_fixture f;
    fixture_make(&f, which, seed);
    const sid_model *m = f.m;
    const int nq = m->nq, nv = m->nv, np = m->nparam, nd = 5;
    const double h = 1e-3;
    double *thd = calloc((size_t)(nd * np), sizeof(double)), qd[5 * 64] = {0}, vd[5 * 64] = {0};
    double qd0[5 * 64], vd0[5 * 64], *scratch = calloc((size_t)(nd * 9 * nv), sizeof(double));
    unsigned s = seed * 7 + 1;
    for (int d = 0; d < nd; d++) {
        if (d != 1) {
            for (int i = 0; i < nq; i++) qd[d * nq + i] = tu_uniform(&s, -1, 1);
            for (int i = 0; i < nv; i++) vd[d * nv + i] = tu_uniform(&s, -1, 1);
        }
        for (int i = 0; i < np; i++)
            if (moves_param(m, d, i)) thd[(size_t)d * (size_t)np + (size_t)i] = tu_uniform(&s, -1, 1) * pscale(f.theta[i]);
    }
    memcpy(qd0, qd, sizeof qd);
    memcpy(vd0, vd, sizeof vd);
    sid_error err = {0};
    ck_assert_msg(sid_step_jvp(m, f.theta, f.ws, integ, h, f.q, f.v, f.u, nd, thd, qd, vd, scratch, &err) == SID_OK,
                  "%s", err.msg);
    double worst_fd = 0, worst_dot = 0;
    for (int d = 0; d < nd; d++) {
        const double e = 1e-7;
        double qp[64], vp[64], qm[64], vm[64], big = 0, diff = 0;
        step_at(&f, integ, h, e, qd0 + d * nq, vd0 + d * nv, thd + (size_t)d * (size_t)np, qp, vp);
        step_at(&f, integ, h, -e, qd0 + d * nq, vd0 + d * nv, thd + (size_t)d * (size_t)np, qm, vm);
        for (int i = 0; i < nq + nv; i++) {
            const double an = i < nq ? qd[d * nq + i] : vd[d * nv + i - nq];
            const double num = i < nq ? (qp[i] - qm[i]) / (2 * e) : (vp[i - nq] - vm[i - nq]) / (2 * e);
            big = fmax(big, fabs(an));
            diff = fmax(diff, fabs(an - num));
        }
        worst_fd = fmax(worst_fd, diff / big);
        /* dot-product test with random output weights */
        double wq[64], wv[64], qbar[64] = {0}, vbar[64] = {0}, *thbar = calloc((size_t)np, sizeof(double));
        for (int i = 0; i < nq; i++) wq[i] = tu_uniform(&s, -1, 1);
        for (int i = 0; i < nv; i++) wv[i] = tu_uniform(&s, -1, 1);
        ck_assert_msg(sid_step_vjp(m, f.theta, f.ws, integ, h, f.q, f.v, f.u, wq, wv, qbar, vbar, thbar, &err) == SID_OK,
                      "%s", err.msg);
        double lhs = 0, rhs = 0, mag = 0;
        for (int i = 0; i < nq; i++) lhs += qd[d * nq + i] * wq[i], mag += fabs(qd[d * nq + i] * wq[i]);
        for (int i = 0; i < nv; i++) lhs += vd[d * nv + i] * wv[i], mag += fabs(vd[d * nv + i] * wv[i]);
        for (int i = 0; i < nq; i++) rhs += qd0[d * nq + i] * qbar[i], mag += fabs(qd0[d * nq + i] * qbar[i]);
        for (int i = 0; i < nv; i++) rhs += vd0[d * nv + i] * vbar[i], mag += fabs(vd0[d * nv + i] * vbar[i]);
        for (int i = 0; i < np; i++) rhs += thd[(size_t)d * (size_t)np + (size_t)i] * thbar[i],
                                     mag += fabs(thd[(size_t)d * (size_t)np + (size_t)i] * thbar[i]);
        worst_dot = fmax(worst_dot, fabs(lhs - rhs) / mag);
        free(thbar);
    }
    fprintf(stderr, "forward: %s (%s) step tangent vs central differences %.2e, dot-product test %.2e\n",
            model_name[which], integ == SID_EULER ? "euler" : "rk4", worst_fd, worst_dot);
    ck_assert_msg(worst_fd < 1e-7, "tangent vs central differences: %g", worst_fd);
    ck_assert_msg(worst_dot < 1e-10, "dot-product test: %g", worst_dot);
    free(thd);
    free(scratch);
    fixture_free(&f);
}

/* The step a tangent leaves (sid_step_tangent_take: from the jvp's own dynamics where the
 * variant can, step.h after_jvp) is the step itself, bit for bit: the Jacobian pass simulates
 * the same trajectory as the loss. */
static void step_after_tangent_check(int which, sid_integrator integ, unsigned seed)
{
    step_fixture f;
    fixture_make(&f, which, seed);
    const sid_model *m = f.m;
    const int nq = m->nq, nv = m->nv, np = m->nparam, nd = 3;
    double *thd = calloc((size_t)(nd * np), sizeof(double)), qd[3 * 64] = {0}, vd[3 * 64] = {0};
    double *scratch = calloc((size_t)(nd * 9 * nv), sizeof(double)), q1[64], v1[64], q2[64], v2[64];
    unsigned s = seed * 5 + 3;
    for (int i = 0; i < nd * nq; i++) qd[i] = tu_uniform(&s, -1, 1);
    for (int i = 0; i < nd * nv; i++) vd[i] = tu_uniform(&s, -1, 1);
    for (int i = 0; i < nd * np; i++) thd[i] = tu_uniform(&s, -1, 1) * pscale(f.theta[i % np]);
    sid_error err = {0};
    const sid_step_variant *sv = sid_step_variant_find(m, integ, &err);
    ck_assert_msg(sv != NULL, "%s", err.msg);
    const sid_step_ctx c = sid_step_context(sv, m, f.theta, f.ws, 1e-3);
    const sid_step_io io1 = {f.q, f.v, f.u, q1, v1, NULL}, io2 = {f.q, f.v, f.u, q2, v2, NULL};
    const sid_step_dirs dirs = {nd, thd, qd, vd, scratch};
    ck_assert_msg(sid_step_tangent_take(sv, &c, &io1, &dirs, &err) == SID_OK, "%s", err.msg);
    ck_assert_msg(sid_step_take(sv, &c, &io2, &err) == SID_OK, "%s", err.msg);
    ck_assert_msg(!memcmp(q1, q2, sizeof(double) * (size_t)nq) && !memcmp(v1, v2, sizeof(double) * (size_t)nv),
                  "%s (%s): the step after its tangent differs from the step", model_name[which],
                  integ == SID_EULER ? "euler" : "rk4");
    free(thd);
    free(scratch);
    fixture_free(&f);
}

START_TEST(step_after_tangent_euler) { step_after_tangent_check(_i, SID_EULER, 41 + (unsigned)_i); }
END_TEST
START_TEST(step_after_tangent_rk4) { step_after_tangent_check(_i, SID_RK4, 51 + (unsigned)_i); }
END_TEST

START_TEST(step_tangent_euler) { step_check(_i, SID_EULER, 11 + (unsigned)_i); }
END_TEST
START_TEST(step_tangent_rk4) { step_check(_i, SID_RK4, 21 + (unsigned)_i); }
END_TEST

/* A log of n samples at 2 ms of model `which`, simulated with theta: the box dropped onto the
 * ground spinning and sliding; the arm swinging against the ground under sine torques; the
 * chain pushed in both frames. */
static sid_traj *make_log(const sid_model *m, int which, const double *theta, int n)
{
    sid_traj *tr = tu_synth_log(m, theta, n, 2e-3, which == ARM || which == DRY_ARM ? 1.5 : 0.5, 5);
    if (which == PUSHED || which == DRY) {
        const size_t per = (size_t)m->nbody * SID_PUSH_STRIDE;
        tr->push = sid_alloc((size_t)tr->n * per * sizeof(double));
        ck_assert_ptr_nonnull(tr->push);
        unsigned s = 3;
        for (int b = 0; b < m->nbody; b++)
            for (int c = 0; c < SID_PUSH_STRIDE; c++) {
                const double fr = tu_uniform(&s, 1, 8), ph = tu_uniform(&s, 0, 6.28), a = b ? tu_uniform(&s, 0.5, 2) : 0;
                for (int k = 0; k < tr->n; k++) tr->push[(size_t)k * per + (size_t)b * SID_PUSH_STRIDE + (size_t)c] =
                    a * sin(fr * tr->t[k] + ph);
            }
    }
    if (which == BOX) {
        /* near its resting height (the bottom corners ~2.4 mm above the ground, where the
         * softplus force carries the weight), tilted, sliding and spinning */
        const double q0[7] = {0, 0, 0.0674, cos(0.01), sin(0.01), 0.003, 0}, v0[6] = {0.4, -0.2, -0.02, 0.1, -0.1, 2};
        memcpy(tr->q, q0, sizeof q0);
        memcpy(tr->qd, v0, sizeof v0);
    }
    if (which != ARM && which != DRY_ARM) tu_replay(m, theta, tr, NULL);   /* re-simulate from the start state above, with the pushes */
    return tr;
}

/* The free columns of a model's window test: inertial and contact parameters, and some of the
 * rest. */
static int free_columns(const sid_model *m, int which, int *idx)
{
    int mask[1024] = {0}, n = 0;
    const char *pat[] = {"*.mass", "*.com", "*.inertia", "contact.ground.*", "contact.spheres.*", "joints.*.friction.*",
                         "joints.*.offset", "joints.*.origin.*", "joints.*.motor.*"};
    for (size_t k = 0; k < sizeof pat / sizeof *pat; k++) sid_model_param_match(m, pat[k], mask);
    for (int i = 0; i < m->nparam; i++)
        if (mask[i] && n < 40) idx[n++] = i;
    (void)which;
    return n;
}

/* The window Jacobian (forward mode) against central differences of the same function's
 * residuals, column by column, the better of steps 1e-6 and 1e-7 of the variable's size (at
 * least 0.1 of its unit): over a window of stiff contact truncation (~(e / width)^2 per
 * contact step, grown by the bounces) wins at the larger, rounding (~1e-16 / e relative) at
 * the smaller; tolerance 1e-4 of the column's largest entry, where a wrong or missing tangent
 * term is off by O(1). Start states estimated, so the start columns are checked too. */
static void window_check(int which, sid_integrator integ)
{
    double *theta;
    sid_model *m = make_model(which, &theta);
    const int nx = m->nq + m->nv;
    /* the log from masses 5 % heavier, so that the residuals are not zero */
    int mmask[1024] = {0};
    sid_model_param_match(m, "*.mass", mmask);
    double *truth = malloc(sizeof(double) * (size_t)m->nparam);
    for (int i = 0; i < m->nparam; i++) truth[i] = theta[i] * (mmask[i] ? 1.05 : 1);
    sid_traj *log = make_log(m, which, truth, 101);
    free(truth);
    sid_loss_opts o;
    sid_loss_opts_defaults(&o);
    o.window = 0.1;
    o.estimate_start = 1;
    o.threads = 1;
    o.sim.integrator = integ;
    sid_problem *p;
    sid_error err = {0};
    ck_assert_msg(sid_problem_create(&p, m, (const sid_traj *const *)&log, 1, &o, &err) == SID_OK, "%s", err.msg);
    const int nw = sid_problem_nwindows(p), w = 0;
    double *x0 = malloc(sizeof(double) * (size_t)(nw * nx)), *x0w = x0 + (size_t)w * (size_t)nx;
    sid_problem_start_states(p, theta, x0);
    int idx[64];
    const int nfree = free_columns(m, which, idx), ncol = nfree + nx, rows = sid_problem_window_rows(p, w);
    double *r = malloc(sizeof(double) * (size_t)rows), *J = malloc(sizeof(double) * (size_t)rows * (size_t)ncol);
    double *rp = malloc(sizeof(double) * (size_t)rows), *rm = malloc(sizeof(double) * (size_t)rows);
    double *Jd = malloc(sizeof(double) * (size_t)rows * (size_t)ncol);
    /* the Jacobian's residuals are the loss's (pushes and all): loss = 1/2 sum |r|^2 / nres */
    double rr = 0, L;
    for (int k = 0; k < nw; k++) {
        const int rows_k = sid_problem_window_rows(p, k);
        double *rk = malloc(sizeof(double) * (size_t)rows_k), *Jk = malloc(sizeof(double) * (size_t)rows_k * (size_t)ncol);
        ck_assert_msg(sid_problem_window_jacobian(p, theta, x0 + (size_t)k * (size_t)nx, k, nfree, idx, rk, Jk, &err) ==
                      SID_OK, "%s", err.msg);
        for (int i = 0; i < rows_k; i++) rr += rk[i] * rk[i];
        free(rk), free(Jk);
    }
    ck_assert_msg(sid_problem_loss(p, theta, x0, &L, NULL, NULL, &err) == SID_OK, "%s", err.msg);
    ck_assert_msg(L > 0 && fabs(0.5 * rr / sid_problem_nresiduals(p) - L) < 1e-12 * L, "residuals %.17g, loss %.17g",
                  0.5 * rr / sid_problem_nresiduals(p), L);
    ck_assert_msg(sid_problem_window_jacobian(p, theta, x0w, w, nfree, idx, r, J, &err) == SID_OK, "%s", err.msg);
    double worst = 0, jmax = 0, kbig = 0;
    char where[200] = "none";
    for (int c = 0; c < ncol; c++)
        for (int i = 0; i < rows; i++)
            jmax = fmax(jmax, fabs(J[(size_t)i * (size_t)ncol + (size_t)c]) * pscale(c < nfree ? theta[idx[c]] : x0w[c - nfree]));
    /* the ground stiffness's column: the contact must matter in this window */
    int kcol = -1;
    for (int c = 0; c < nfree; c++)
        if (idx[c] == sid_model_param_find(m, "contact.ground.stiffness")) kcol = c;
    for (int c = 0; c < ncol; c++) {
        double *z = c < nfree ? &theta[idx[c]] : &x0w[c - nfree];
        const double z0 = *z;
        double err_c = INFINITY;
        for (int t = 0; t < 2; t++) {   /* the better of two steps: a wrong tangent fails both */
            const double e = (t ? 1e-7 : 1e-6) * pscale(z0);
            *z = z0 + e;
            ck_assert_msg(sid_problem_window_jacobian(p, theta, x0w, w, nfree, idx, rp, Jd, &err) == SID_OK, "%s", err.msg);
            *z = z0 - e;
            ck_assert_msg(sid_problem_window_jacobian(p, theta, x0w, w, nfree, idx, rm, Jd, &err) == SID_OK, "%s", err.msg);
            *z = z0;
            /* a column whose effect (entry x the variable's size) is below 1e-7 of the largest
             * column's counts as zero: there the differences are rounding (~1e-9 of the largest) */
            double big = 1e-7 * jmax / pscale(z0), diff = 0;
            for (int i = 0; i < rows; i++) {
                const double an = J[(size_t)i * (size_t)ncol + (size_t)c], num = (rp[i] - rm[i]) / (2 * e);
                big = fmax(big, fmax(fabs(an), fabs(num)));
                diff = fmax(diff, fabs(an - num));
                if (c == kcol) kbig = fmax(kbig, fabs(an) * pscale(z0));
            }
            err_c = fmin(err_c, diff / big);
        }
        if (err_c > worst)
            worst = err_c,
            snprintf(where, sizeof where, "%s", c < nfree ? m->param[idx[c]].name : "start state");
    }
    fprintf(stderr, "forward: %s (%s) window Jacobian (%d x %d) vs central differences %.2e at %s; "
            "stiffness column x its size %.2e\n", model_name[which], integ == SID_EULER ? "euler" : "rk4", rows, ncol, worst,
            where, kbig);
    if (kcol >= 0) ck_assert_msg(kbig > 1e-3 * jmax, "the contact does not act in the window (%g)", kbig);
    ck_assert_msg(worst < 1e-4, "window Jacobian vs central differences: %g at %s", worst, where);
    free(r), free(J), free(rp), free(rm), free(Jd), free(x0);
    sid_problem_free(p);
    sid_traj_free(log);
    sid_model_free(m);
    sid_free(theta);
}

START_TEST(window_jacobian_euler) { window_check(_i, SID_EULER); }
END_TEST
START_TEST(window_jacobian_rk4) { window_check(_i, SID_RK4); }
END_TEST

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The speed-up on the floating box (0.5 s window, 250 steps, start state estimated: 13 + 13
 * columns): the forward Jacobian against the 2 ncol + 1 window simulations that central
 * differences need (what jacobian.c's fallback ran for contact and free joints). */
START_TEST(box_jacobian_speed)
{
    double *theta;
    sid_model *m = box8(&theta);
    const int nx = m->nq + m->nv;
    sid_traj *log = make_log(m, BOX, theta, 251);
    sid_loss_opts o;
    sid_loss_opts_defaults(&o);
    o.window = 0.5;
    o.estimate_start = 1;
    o.threads = 1;
    sid_problem *p;
    sid_error err = {0};
    ck_assert_msg(sid_problem_create(&p, m, (const sid_traj *const *)&log, 1, &o, &err) == SID_OK, "%s", err.msg);
    double *x0 = malloc(sizeof(double) * (size_t)(sid_problem_nwindows(p) * nx));
    sid_problem_start_states(p, theta, x0);
    int idx[64];
    const int nfree = free_columns(m, BOX, idx), ncol = nfree + nx, rows = sid_problem_window_rows(p, 0);
    double *r = malloc(sizeof(double) * (size_t)rows), *J = malloc(sizeof(double) * (size_t)rows * (size_t)ncol);
    double *qp = malloc(sizeof(double) * (size_t)(log->n * m->nq)), *vp = malloc(sizeof(double) * (size_t)(log->n * m->nv));
    /* the fastest of several runs of each: the machine is shared */
    const int reps = getenv("FW_REPS") ? atoi(getenv("FW_REPS")) : 5;
    double tj = INFINITY, ts = INFINITY;
    for (int k = 0; k < reps; k++) {
        double t0 = now();
        ck_assert_msg(sid_problem_window_jacobian(p, theta, x0, 0, nfree, idx, r, J, &err) == SID_OK, "%s", err.msg);
        tj = fmin(tj, now() - t0);
        t0 = now();
        ck_assert_msg(sid_problem_window_predict(p, theta, x0, 0, qp, vp, &err) == SID_OK, "%s", err.msg);
        ts = fmin(ts, now() - t0);
    }
    fprintf(stderr, "forward: box window Jacobian %d x %d: forward mode %.2f ms, one simulation %.3f ms, "
            "central differences (2 ncol + 1 = %d simulations) ~%.2f ms: speed-up %.1fx\n",
            rows, ncol, 1e3 * tj, 1e3 * ts, 2 * ncol + 1, 1e3 * ts * (2 * ncol + 1), ts * (2 * ncol + 1) / tj);
    free(r), free(J), free(qp), free(vp), free(x0);
    sid_problem_free(p);
    sid_traj_free(log);
    sid_model_free(m);
    sid_free(theta);
}
END_TEST


Suite *forward_suite(void)
{
    Suite *s = suite_create("forward");
    TCase *tc = tcase_create("forward");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, step_tangent_euler, 0, NALL);
    tcase_add_loop_test(tc, step_tangent_rk4, 0, NMODEL);
    tcase_add_loop_test(tc, step_after_tangent_euler, 0, NALL);
    tcase_add_loop_test(tc, step_after_tangent_rk4, 0, NMODEL);
    suite_add_tcase(s, tc);
    /* ~200 window simulations each: `make test` runs them, the sanitizer pass leaves them out */
    TCase *win = tcase_create("forward_window");
    tcase_set_timeout(win, 120);
    tcase_set_tags(win, "slow");
    tcase_add_loop_test(win, window_jacobian_euler, 0, NALL);
    tcase_add_loop_test(win, window_jacobian_rk4, 0, NMODEL);
    suite_add_tcase(s, win);
    TCase *speed = tcase_create("forward_speed");
    tcase_set_timeout(speed, 60);
    tcase_set_tags(speed, "slow");
    tcase_add_test(speed, box_jacobian_speed);
    suite_add_tcase(s, speed);
    return s;
}
