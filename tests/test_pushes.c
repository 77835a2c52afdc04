/* test_pushes.c — logged external wrenches on links (core/dynamics/push.h, docs/formats.md "Logs", f.<link>.*):
 * the adjoint gradient of whole windows against central differences for a free body and a
 * 2-link arm pushed in the world and in the link frame; a pushed free body whose COM is its
 * origin follows the parabola of F / m + g whatever it spins (an independent check of the
 * force's frame, point and sign); the recovery of a pushed free body's mass and inertia; and
 * MuJoCo's xfrc_applied on data/double_pendulum and on data/box with its COM moved off the
 * origin, pushed in both frames, agreeing to rounding over 1 s. */
#include <check.h>
#include <math.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "push.h"
#include "robot_json.h"
#include "sid_internal.h"

Suite *pushes_suite(void);

enum { WORLD = 0, LINK = 1 };

/* Smooth random pushes on every moving body in one frame: sines of amplitude amp [N, N·m]. */
static void add_pushes(const sid_model *m, sid_traj *tr, int frame, double amp, unsigned seed)
{
    const size_t per = (size_t)m->nbody * SID_PUSH_STRIDE;
    tr->push = sid_alloc((size_t)tr->n * per * sizeof(double));
    ck_assert_ptr_nonnull(tr->push);
    unsigned s = seed;
    for (int b = 1; b < m->nbody; b++)
        for (int c = 0; c < 6; c++) {
            const double f = tu_uniform(&s, 1, 8), ph = tu_uniform(&s, 0, 6.28), a = amp * tu_uniform(&s, 0.3, 1);
            for (int k = 0; k < tr->n; k++)
                tr->push[(size_t)k * per + (size_t)b * SID_PUSH_STRIDE + (frame == LINK ? SID_PUSH_LINK : 0) + c] =
                    a * sin(f * tr->t[k] + ph);
        }
}

/* Re-simulate tr's states under theta with its pushes (the log a pushed robot would write). */
static void resimulate(const sid_model *m, const double *theta, sid_traj *tr, sid_integrator integ)
{
    sid_sim_opts o;
    sid_sim_opts_defaults(&o);
    o.integrator = integ;
    tu_replay(m, theta, tr, &o);
}

/* The adjoint gradient of the windowed loss of a pushed log against central differences
 * (step 1e-6 relative: truncation ~1e-12, rounding ~1e-10 of the loss; tolerance 1e-5 as the
 * free suite's); also: the pushes move the loss (the plumbing cannot silently drop them). */
static void window_gradient(int floating, int frame, sid_integrator integ)
{
    double *theta;
    sid_model *m = tu_random_model(floating ? 41 : 42, floating ? 1 : 2, floating ? 0 : TU_FRICTION | TU_MOTORS, floating, &theta);
    const int np = m->nparam;
    double *truth = malloc(sizeof(double) * (size_t)np), *g = malloc(sizeof(double) * (size_t)np);
    memcpy(truth, theta, sizeof(double) * (size_t)np);
    for (int i = 0; i < np; i++) truth[i] *= 1.1;
    sid_traj *log = tu_synth_log(m, truth, 201, 2e-3, 0.5, 3);
    add_pushes(m, log, frame, 2, 5);
    resimulate(m, truth, log, SID_EULER);
    sid_loss_opts o;
    sid_loss_opts_defaults(&o);
    o.window = 0.1;
    o.sim.integrator = integ;
    o.threads = 1;
    sid_problem *p;
    sid_error err = {0};
    ck_assert_msg(sid_problem_create(&p, m, (const sid_traj *const *)&log, 1, &o, &err) == SID_OK, "%s", err.msg);
    double L;
    ck_assert_int_eq(sid_problem_loss(p, theta, NULL, &L, g, NULL, &err), SID_OK);
    double worst = 0;
    char where[256] = "none";
    for (int j = 0; j < np; j++) {
        const double z0 = theta[j], e = 1e-6 * fmax(1, fabs(z0));
        double Lp, Lm;
        theta[j] = z0 + e;
        ck_assert_int_eq(sid_problem_loss(p, theta, NULL, &Lp, NULL, NULL, &err), SID_OK);
        theta[j] = z0 - e;
        ck_assert_int_eq(sid_problem_loss(p, theta, NULL, &Lm, NULL, NULL, &err), SID_OK);
        theta[j] = z0;
        const double num = (Lp - Lm) / (2 * e), r = tu_rel_err(g[j], num, 1e-10 * L);
        if (r > worst) worst = r, snprintf(where, sizeof where, "%s: %.10g vs fd %.10g", m->param[j].name, g[j], num);
    }
    fprintf(stderr, "pushes: %s pushed in the %s frame (%s): gradient worst relative error %.2e at %s\n",
            floating ? "free body" : "2-link arm", frame == WORLD ? "world" : "link", integ == SID_EULER ? "euler" : "rk4",
            worst, where);
    ck_assert_msg(worst < 1e-5, "relative error %g at %s", worst, where);
    /* without its pushes the same log replays differently */
    double *push = log->push, L0;
    log->push = NULL;
    sid_problem_free(p);
    ck_assert_msg(sid_problem_create(&p, m, (const sid_traj *const *)&log, 1, &o, &err) == SID_OK, "%s", err.msg);
    ck_assert_int_eq(sid_problem_loss(p, theta, NULL, &L0, NULL, NULL, &err), SID_OK);
    ck_assert_msg(fabs(L0 - L) > 1e-3 * L, "loss %g with pushes, %g without", L, L0);
    log->push = push;
    free(truth);
    free(g);
    sid_problem_free(p);
    sid_traj_free(log);
    sid_model_free(m);
    sid_free(theta);
}

START_TEST(free_world_euler) { window_gradient(1, WORLD, SID_EULER); }
END_TEST
START_TEST(free_link_rk4) { window_gradient(1, LINK, SID_RK4); }
END_TEST
START_TEST(arm_world_rk4) { window_gradient(0, WORLD, SID_RK4); }
END_TEST
START_TEST(arm_link_euler) { window_gradient(0, LINK, SID_EULER); }
END_TEST

/* A free body whose COM is its origin, spinning, pushed by a constant world force F at the
 * origin and a link-frame torque: its origin follows p0 + v0 t + (F / m + g) t^2 / 2 exactly
 * (Newton; the torque only turns it), which RK4 integrates to rounding (the linear motion is a
 * quadratic). Measured 1e-15 m; tolerance 1e-11 m over 0.5 s. */
START_TEST(free_body_parabola)
{
    double *theta;
    sid_model *m = tu_random_model(43, 1, 0, 1, &theta);
    const int b = 1, nq = m->nq;
    for (int c = 0; c < 3; c++) theta[m->body[b].p_inertial + 1 + c] = 0;   /* com at the origin */
    const double mass = theta[m->body[b].p_inertial], F[3] = {1.5, -2, 0.7}, T[3] = {0.3, 0.1, -0.2};
    const int n = 251;
    sid_traj *tr = sid_traj_create(n, m->nq, m->nv, 1);
    tr->push = sid_alloc((size_t)n * (size_t)m->nbody * SID_PUSH_STRIDE * sizeof(double));
    for (int k = 0; k < n; k++) {
        tr->t[k] = 2e-3 * k;
        double *p = tr->push + ((size_t)k * (size_t)m->nbody + (size_t)b) * SID_PUSH_STRIDE;
        for (int c = 0; c < 3; c++) p[SID_PUSH_WORLD + 3 + c] = F[c], p[SID_PUSH_LINK + c] = T[c];
    }
    const double q0[7] = {0.1, 0.2, 0.3, 0.8, 0.2, -0.5, 0.26}, v0[6] = {0.4, -0.3, 0.2, 3, -2, 5};
    const double qn = sqrt(0.8 * 0.8 + 0.2 * 0.2 + 0.5 * 0.5 + 0.26 * 0.26);
    memcpy(tr->q, q0, sizeof q0);
    for (int c = 3; c < 7; c++) tr->q[c] /= qn;
    memcpy(tr->qd, v0, sizeof v0);
    sid_sim_opts o;
    sid_sim_opts_defaults(&o);
    o.integrator = SID_RK4;
    double *q = malloc(sizeof(double) * (size_t)(n * nq)), *v = malloc(sizeof(double) * (size_t)(n * m->nv));
    sid_error err = {0};
    ck_assert_msg(sid_simulate(m, theta, tr, &o, q, v, &err) == SID_OK, "%s", err.msg);
    double worst = 0;
    const double *gr = theta + m->p_gravity;
    for (int k = 0; k < n; k++) {
        const double t = tr->t[k];
        for (int c = 0; c < 3; c++) {
            const double x = q0[c] + v0[c] * t + 0.5 * (F[c] / mass + gr[c]) * t * t;
            worst = fmax(worst, fabs(q[(size_t)k * (size_t)nq + (size_t)c] - x));
        }
    }
    fprintf(stderr, "pushes: spinning free body under a world force: origin off the parabola by %.2e m\n", worst);
    ck_assert_msg(worst < 1e-11, "off by %g m", worst);
    free(q);
    free(v);
    sid_traj_free(tr);
    sid_model_free(m);
    sid_free(theta);
}
END_TEST

/* A pushed free body (no contact: gravity alone cannot tell its mass) from our own simulated
 * log: its mass and inertia, nominal 20-40 % off, recovered to within bound (relative); with
 * noise, 1e-3 on q and 1e-2 on qd as the other recovery tests. */
static void recover_pushed(int noisy, double bound)
{
    double *theta;
    sid_model *m = tu_random_model(44, 1, 0, 1, &theta);
    const int np = m->nparam, nx = m->nq + m->nv, pi = m->body[1].p_inertial;
    double *truth = malloc(sizeof(double) * (size_t)np);
    memcpy(truth, theta, sizeof(double) * (size_t)np);
    int idx[7] = {pi, pi + 4, pi + 5, pi + 6, pi + 7, pi + 8, pi + 9};
    double lo[7], hi[7];
    unsigned s = 7;
    for (int k = 0; k < 7; k++) {
        const int i = idx[k];
        const double f = tu_uniform(&s, 0.2, 0.4);
        theta[i] = truth[i] * (k % 2 ? 1 + f : 1 - f);
        lo[k] = truth[i] > 0 ? 0.1 * fabs(truth[i]) : -10 * fabs(truth[i]);
        hi[k] = 10 * fabs(truth[i]);
    }
    sid_traj *log = tu_synth_log(m, truth, 401, 2e-3, 0, 3);
    add_pushes(m, log, WORLD, 3, 9);
    for (int k = 0; k < log->n; k++)   /* and a link-frame torque, so both frames take part */
        for (int c = 0; c < 3; c++)
            log->push[((size_t)k * (size_t)m->nbody + 1) * SID_PUSH_STRIDE + SID_PUSH_LINK + c] =
                0.2 * cos((2 + c) * log->t[k]);
    resimulate(m, truth, log, SID_EULER);
    if (noisy) tu_add_noise(log, 1e-3, 1e-2, 5);
    sid_loss_opts o;
    sid_loss_opts_defaults(&o);
    o.window = 0.2;
    o.estimate_start = 1;
    sid_problem *p;
    sid_error err = {0};
    ck_assert_msg(sid_problem_create(&p, m, (const sid_traj *const *)&log, 1, &o, &err) == SID_OK, "%s", err.msg);
    double *x0 = malloc(sizeof(double) * (size_t)(sid_problem_nwindows(p) * nx));
    sid_problem_start_states(p, theta, x0);
    sid_fit_opts fo;
    sid_fit_opts_defaults(&fo);
    /* L-BFGS (measured 1.6e-7 worst, 250 iterations); LM from the same start ran the mass to its
     * upper bound (a local minimum where the pushes barely move the body; its Jacobian agrees with
     * central differences of the residuals to 3e-5), so LM is not what this holds */
    fo.optimizer = SID_OPT_LBFGS;
    fo.nfree = 7, fo.idx = idx, fo.lo = lo, fo.hi = hi;
    fo.ftol_rel = 1e-15;
    sid_fit_result res;
    ck_assert_msg(sid_fit(p, theta, x0, &fo, &res, &err) == SID_OK, "%s", err.msg);
    double worst = 0;
    for (int k = 0; k < 7; k++) {
        const double e = fabs(theta[idx[k]] - truth[idx[k]]) / fabs(truth[idx[k]]);
        fprintf(stderr, "pushes: recovery %-28s truth %12.6g fitted %12.6g error %.2e\n", m->param[idx[k]].name,
                truth[idx[k]], theta[idx[k]], e);
        worst = fmax(worst, e);
    }
    fprintf(stderr, "pushes: recovery of a pushed free body, %s: loss %.3e -> %.3e, %d iterations; worst error %.2e\n",
            noisy ? "noisy" : "noise-free", res.loss0, res.loss, res.iterations, worst);
    ck_assert_msg(worst <= bound, "worst relative error %g", worst);
    free(x0);
    free(truth);
    sid_problem_free(p);
    sid_traj_free(log);
    sid_model_free(m);
    sid_free(theta);
}

START_TEST(recover_free_body) { recover_pushed(0, 1e-6); }
END_TEST

/* measured 2.6 % worst (the mass; the inertia within 0.11 %); held with a margin of about 2 */
START_TEST(recover_free_body_noisy) { recover_pushed(1, 0.05); }
END_TEST

/* ---- against MuJoCo: xfrc_applied is a world-frame wrench (force, torque) at the body's COM,
 * so a push (T, F) at the link's origin p, in the world frame (the link frame: R T, R F), is
 * (F, T + (p - com) x F), recomputed every step at the pose the step starts from. MuJoCo holds
 * xfrc_applied over its whole step, our Euler step the push: the same held wrench. ---- */

/* Pushes of body b at time t: a smooth world force and torque, and a link-frame force and torque. */
static void push_at(double t, int b, double *p)
{
    for (int c = 0; c < 6; c++) {
        p[SID_PUSH_WORLD + c] = (c < 3 ? 0.4 : 3) * sin((1.3 + 0.7 * c + b) * t + c);
        p[SID_PUSH_LINK + c] = (c < 3 ? 0.3 : 2) * cos((2.1 + 0.5 * c + b) * t + 2 * c);
    }
}

/* One MuJoCo run beside ours: body mb[b] of MuJoCo is our body b (1 .. nb - 1). */
static void mujoco_compare(const char *what, const sid_model *m, const double *theta, mjModel *mm, const int *mb,
                           double *q, double *v)
{
    sid_workspace *ws = sid_workspace_create(m);
    const int nb = m->nbody, nq = m->nq, nv = m->nv;
    double *push = calloc((size_t)nb * SID_PUSH_STRIDE, sizeof(double));
    double q1[16], v1[16], u[16] = {0};
    mjData *md = mj_makeData(mm);
    memcpy(md->qpos, q, sizeof(double) * (size_t)nq);
    memcpy(md->qvel, v, sizeof(double) * (size_t)nv);
    sid_error err = {0};
    double dq = 0, dv = 0;
    const double h = mm->opt.timestep;
    for (int step = 0; step < 1000; step++) {
        const double t = step * h;
        mj_kinematics(mm, md);
        mju_zero(md->xfrc_applied, 6 * mm->nbody);
        for (int b = 1; b < nb; b++) {
            double *p = push + (size_t)b * SID_PUSH_STRIDE;
            push_at(t, b, p);
            const int j = mb[b];
            const double *R = md->xmat + 9 * j;   /* body -> world, row-major */
            double T[3], F[3];
            for (int r = 0; r < 3; r++) {
                T[r] = p[SID_PUSH_WORLD + r] + R[3 * r] * p[SID_PUSH_LINK] + R[3 * r + 1] * p[SID_PUSH_LINK + 1] +
                       R[3 * r + 2] * p[SID_PUSH_LINK + 2];
                F[r] = p[SID_PUSH_WORLD + 3 + r] + R[3 * r] * p[SID_PUSH_LINK + 3] +
                       R[3 * r + 1] * p[SID_PUSH_LINK + 4] + R[3 * r + 2] * p[SID_PUSH_LINK + 5];
            }
            double d[3], dxF[3];
            for (int r = 0; r < 3; r++) d[r] = md->xpos[3 * j + r] - md->xipos[3 * j + r];
            mju_cross(dxF, d, F);
            for (int r = 0; r < 3; r++) md->xfrc_applied[6 * j + r] = F[r], md->xfrc_applied[6 * j + 3 + r] = T[r] + dxF[r];
        }
        ws->push = push;
        ck_assert_int_eq(sid_step(m, theta, ws, SID_EULER, h, q, v, u, q1, v1, &err), SID_OK);
        ws->push = NULL;
        memcpy(q, q1, sizeof(double) * (size_t)nq);
        memcpy(v, v1, sizeof(double) * (size_t)nv);
        mj_step(mm, md);
        for (int k = 0; k < nq; k++) dq = fmax(dq, fabs(q[k] - md->qpos[k]));
        for (int k = 0; k < nv; k++) dv = fmax(dv, fabs(v[k] - md->qvel[k]));
    }
    fprintf(stderr, "pushes: %s pushed in both frames vs MuJoCo xfrc_applied (euler, 1 s): max|dq| %.2e, max|dv| %.2e\n",
            what, dq, dv);
    /* the brief's 1e-9 rad over 1 s; velocities a decade looser (they carry 1/h of the rounding) */
    ck_assert_msg(dq < 1e-9 && dv < 1e-8, "%s: max|dq| %g, max|dv| %g", what, dq, dv);
    mj_deleteData(md);
    free(push);
    sid_workspace_free(ws);
}

/* data/double_pendulum (COM off the joint axes, full inertia tensors) and its MuJoCo twin. */
START_TEST(double_pendulum_matches_mujoco)
{
    sid_robot_desc d;
    sid_model *m;
    double *theta;
    sid_error err = {0};
    char errstr[1000] = "";
    ck_assert_msg(robot_json_load("../data/double_pendulum/robot.json", &d, NULL, &err) == 0, "%s", err.msg);
    ck_assert_msg(sid_model_create(&m, &theta, &d, &err) == SID_OK, "%s", err.msg);
    mjModel *mm = mj_loadXML("../data/double_pendulum/model.xml", NULL, errstr, sizeof errstr);
    ck_assert_msg(mm != NULL, "%s", errstr);
    int mb[3] = {0};
    for (int b = 1; b < 3; b++) mb[b] = mj_name2id(mm, mjOBJ_BODY, m->link_name[b]);
    ck_assert_int_ge(mb[1], 0);
    ck_assert_int_ge(mb[2], 0);
    double q[2] = {0.4, -0.7}, v[2] = {1.0, -2.0};
    mujoco_compare("double pendulum", m, theta, mm, mb, q, v);
    mj_deleteModel(mm);
    sid_model_free(m);
    sid_free(theta);
    robot_desc_free(&d);
}
END_TEST

/* data/box in free flight (MuJoCo's contacts off, ours none) with its COM moved off the
 * origin in both, so the push's point matters; tumbling. */
START_TEST(free_box_matches_mujoco)
{
    sid_robot_desc d;
    sid_model *m;
    double *theta;
    sid_error err = {0};
    char errstr[1000] = "";
    ck_assert_msg(robot_json_load("../data/box/robot.json", &d, NULL, &err) == 0, "%s", err.msg);
    d.ground.present = 0;
    d.nsphere = 0;
    const double com[3] = {0.03, -0.02, 0.01};
    ck_assert_msg(sid_model_create(&m, &theta, &d, &err) == SID_OK, "%s", err.msg);
    /* the MJCF with the COM moved, compiled afresh (the compiler's "simple body" marks depend on it) */
    FILE *in = fopen("../data/box/model.xml", "r");
    ck_assert_ptr_nonnull(in);
    char xml[8192], path[] = "/tmp/sysid_pushes_XXXXXX";
    const size_t len = fread(xml, 1, sizeof xml - 1, in);
    fclose(in);
    xml[len] = '\0';
    char *at = strstr(xml, "<inertial pos=\"0 0 0\"");
    ck_assert_ptr_nonnull(at);
    const int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *out = fdopen(fd, "w");
    fprintf(out, "%.*s<inertial pos=\"%.17g %.17g %.17g\"%s", (int)(at - xml), xml, com[0], com[1], com[2],
            at + strlen("<inertial pos=\"0 0 0\""));
    fclose(out);
    mjModel *mm = mj_loadXML(path, NULL, errstr, sizeof errstr);
    remove(path);
    ck_assert_msg(mm != NULL, "%s", errstr);
    mm->opt.disableflags |= mjDSBL_CONTACT;
    int mb[2] = {0, mj_name2id(mm, mjOBJ_BODY, "box")};
    ck_assert_int_ge(mb[1], 0);
    static const char *key[3] = {"ixx", "iyy", "izz"};
    char name[96];
    theta[sid_model_param_find(m, "links.box.mass")] = mm->body_mass[mb[1]];
    for (int k = 0; k < 3; k++) {
        snprintf(name, sizeof name, "links.box.inertia.%s", key[k]);
        theta[sid_model_param_find(m, name)] = mm->body_inertia[3 * mb[1] + k];
        snprintf(name, sizeof name, "links.box.com[%d]", k);
        theta[sid_model_param_find(m, name)] = com[k];
    }
    double q[7] = {0.1, -0.2, 1.0, 0.8, 0.2, -0.3, 0.1}, v[6] = {1, -0.5, 3, 2, -3, 5};
    const double n = sqrt(q[3] * q[3] + q[4] * q[4] + q[5] * q[5] + q[6] * q[6]);
    for (int k = 3; k < 7; k++) q[k] /= n;
    mujoco_compare("free box (COM off the origin)", m, theta, mm, mb, q, v);
    mj_deleteModel(mm);
    sid_model_free(m);
    sid_free(theta);
    robot_desc_free(&d);
}
END_TEST

Suite *pushes_suite(void)
{
    Suite *s = suite_create("pushes");
    TCase *tc = tcase_create("pushes");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, free_world_euler);
    tcase_add_test(tc, free_link_rk4);
    tcase_add_test(tc, arm_world_rk4);
    tcase_add_test(tc, arm_link_euler);
    tcase_add_test(tc, free_body_parabola);
    tcase_add_test(tc, recover_free_body);
    tcase_add_test(tc, double_pendulum_matches_mujoco);
    tcase_add_test(tc, free_box_matches_mujoco);
    suite_add_tcase(s, tc);
    TCase *slow = tcase_create("noisy");
    tcase_set_tags(slow, "slow");   /* numerics, not memory: `make debug` leaves it out */
    tcase_set_timeout(slow, 120);
    tcase_add_test(slow, recover_free_body_noisy);
    suite_add_tcase(s, slow);
    return s;
}
