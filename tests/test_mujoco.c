/* test_mujoco.c — MuJoCo 2.2.2 as the oracle of the simulator.
 *
 * Each example robot in ../data/<name>/ comes with model.xml, its MuJoCo twin (written by
 * tests/tools/json2mjcf.py: same frames, inertias, armature, damping, gear*kt; no contact,
 * limits or Coulomb friction). Here both simulators run the same initial state and the
 * same sinusoidal commands for 2 s at h = 1 ms, with our SID_EULER against mjINT_EULER
 * (semi-implicit, joint damping implicit in both) and SID_RK4 against mjINT_RK4, and the
 * positions must agree to 1e-6 rad (or m) over the whole run. The agreement figures go to
 * stderr. When a rollout disagrees, the kernel tests below localise it: mass matrix
 * (mj_fullM minus armature), inverse dynamics (mj_rne) and forward dynamics (qacc) at
 * random states, each to 1e-9.
 *
 * Our dofs are matched to MuJoCo's qpos/qvel addresses and actuators by joint name, so
 * the two models may order their joints differently.
 *
 * Last, each example log (made by MuJoCo with tests/tools/mjlog.c, Euler, 1 ms) is replayed
 * through traj_csv_load and sid_simulate (euler, one window over the whole log): this pins
 * the log's timing convention (row k's command held from t_k to t_{k+1}) end to end.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <check.h>
#include <mujoco/mujoco.h>

#include "robot_json.h"
#include "sid_internal.h"
#include "traj_csv.h"

Suite *mujoco_suite(void);

#define NMODEL 4
static const char *const model_names[NMODEL] = { "pendulum", "double_pendulum", "arm7", "tree" };

typedef struct {
    const char *name;
    sid_robot_desc desc;
    sid_model *m;
    double *theta;
    sid_workspace *ws;
    mjModel *mm;
    mjData *md;
    int nv;
    int qadr[SID_MAX_JOINTS];   /* MuJoCo qpos address of our dof k */
    int dadr[SID_MAX_JOINTS];   /* MuJoCo dof (qvel) address of our dof k */
    int act[SID_MAX_JOINTS];    /* MuJoCo actuator driving our dof k, -1 if none */
    double gain[SID_MAX_JOINTS];   /* joint torque per unit command: gear*kt, 0 if none */
    int prismatic[SID_MAX_JOINTS];
} twin;

static void twin_load(twin *p, const char *name)
{
    char path[256], errstr[1000] = "";
    sid_error err = { 0 };
    memset(p, 0, sizeof *p);
    p->name = name;

    snprintf(path, sizeof path, "../data/%s/robot.json", name);
    ck_assert_msg(robot_json_load(path, &p->desc, NULL, &err) == 0, "%s: %s", path, err.msg);
    ck_assert_msg(sid_model_create(&p->m, &p->theta, &p->desc, &err) == SID_OK, "%s: %s", path,
                  err.msg);
    p->ws = sid_workspace_create(p->m);
    ck_assert_ptr_nonnull(p->ws);

    snprintf(path, sizeof path, "../data/%s/model.xml", name);
    p->mm = mj_loadXML(path, NULL, errstr, sizeof errstr);
    ck_assert_msg(p->mm != NULL, "%s: %s", path, errstr);
    p->md = mj_makeData(p->mm);

    p->nv = sid_model_nv(p->m);
    int ndof = sid_model_ndof_joints(p->m);
    ck_assert_int_eq(sid_model_nq(p->m), p->nv);   /* hinge and slide joints only */
    ck_assert_int_eq(ndof, p->nv);
    ck_assert_int_eq(p->mm->nq, p->nv);
    ck_assert_int_eq(p->mm->nv, p->nv);
    for (int k = 0; k < ndof; k++) {
        const char *jname = sid_model_dof_joint_name(p->m, k);
        int jid = mj_name2id(p->mm, mjOBJ_JOINT, jname);
        ck_assert_msg(jid >= 0, "%s: joint %s not in model.xml", name, jname);
        p->qadr[k] = p->mm->jnt_qposadr[jid];
        p->dadr[k] = p->mm->jnt_dofadr[jid];
        p->prismatic[k] = sid_model_dof_joint_is_prismatic(p->m, k);
        ck_assert_int_eq(p->mm->jnt_type[jid], p->prismatic[k] ? mjJNT_SLIDE : mjJNT_HINGE);
        p->act[k] = -1;
        for (int a = 0; a < p->mm->nu; a++)
            if (p->mm->actuator_trntype[a] == mjTRN_JOINT && p->mm->actuator_trnid[2 * a] == jid)
                p->act[k] = a;
        ck_assert_int_eq(p->act[k] >= 0, sid_model_dof_joint_has_motor(p->m, k) != 0);
        const sid_joint_desc *jd = &p->desc.joint[sid_model_dof_joint_desc(p->m, k)];
        p->gain[k] = p->act[k] >= 0 ? jd->gear * jd->kt : 0.0;
    }
}

static void twin_free(twin *p)
{
    mj_deleteData(p->md);
    mj_deleteModel(p->mm);
    sid_workspace_free(p->ws);
    sid_free(p->theta);
    sid_model_free(p->m);
    robot_desc_free(&p->desc);
}

/* A non-trivial start: every joint displaced and moving. */
static void initial_state(const twin *p, double *q, double *v)
{
    for (int k = 0; k < p->nv; k++) {
        double s = p->prismatic[k] ? 0.25 : 1.0;
        q[k] = s * 0.6 * sin(1.3 * k + 0.7);
        v[k] = s * 1.2 * cos(0.9 * k + 0.2);
    }
}

/* Command at time t: a sinusoid per motor, amplitude 1 N·m (revolute) or 5 N (prismatic)
 * at the joint, converted to command units through gear*kt. */
static void command(const twin *p, double t, double *u)
{
    for (int k = 0; k < p->nv; k++) {
        if (p->act[k] < 0) {
            u[k] = 0.0;
            continue;
        }
        double amp = p->prismatic[k] ? 5.0 : 1.0;
        u[k] = amp / p->gain[k] * sin(2.0 * 3.14159265358979323846 * (0.7 + 0.37 * k) * t + 1.3 * k);
    }
}

static void mj_set_state(twin *p, const double *q, const double *v, const double *u)
{
    for (int k = 0; k < p->nv; k++) {
        p->md->qpos[p->qadr[k]] = q[k];
        p->md->qvel[p->dadr[k]] = v[k];
        if (p->act[k] >= 0) p->md->ctrl[p->act[k]] = u ? u[k] : 0.0;
    }
}

/* ---- rollouts ------------------------------------------------------------------------- */

START_TEST(test_rollout_matches_mujoco)
{
    const char *name = model_names[_i / 2];
    int rk4 = _i % 2;
    const double h = 1e-3, T = 2.0, tol = 1e-6;
    const int nstep = (int)lround(T / h);
    twin p;
    twin_load(&p, name);

    double q[SID_MAX_JOINTS], v[SID_MAX_JOINTS], u[SID_MAX_JOINTS];
    double q1[SID_MAX_JOINTS], v1[SID_MAX_JOINTS];
    initial_state(&p, q, v);
    double q_start[SID_MAX_JOINTS];
    memcpy(q_start, q, sizeof q_start);
    p.mm->opt.timestep = h;
    p.mm->opt.integrator = rk4 ? mjINT_RK4 : mjINT_EULER;
    mj_resetData(p.mm, p.md);
    mj_set_state(&p, q, v, NULL);

    double dq_max = 0, dv_max = 0, t_dq = 0, travel = 0;
    int k_dq = 0;
    sid_error err = { 0 };
    for (int i = 0; i < nstep; i++) {
        double t = i * h;
        command(&p, t, u);
        for (int k = 0; k < p.nv; k++)
            if (p.act[k] >= 0) p.md->ctrl[p.act[k]] = u[k];
        sid_status s = sid_step(p.m, p.theta, p.ws, rk4 ? SID_RK4 : SID_EULER, h, q, v, u, q1, v1,
                                &err);
        ck_assert_msg(s == SID_OK, "%s step %d: %s", name, i, err.msg);
        mj_step(p.mm, p.md);
        for (int k = 0; k < p.nv; k++) {
            double dq = fabs(q1[k] - p.md->qpos[p.qadr[k]]);
            double dv = fabs(v1[k] - p.md->qvel[p.dadr[k]]);
            if (!(dq <= dq_max)) {   /* also catches NaN */
                dq_max = dq;
                t_dq = t + h;
                k_dq = k;
            }
            if (!(dv <= dv_max)) dv_max = dv;
            travel = fmax(travel, fabs(q1[k] - q_start[k]));
        }
        memcpy(q, q1, sizeof(double) * (size_t)p.nv);
        memcpy(v, v1, sizeof(double) * (size_t)p.nv);
    }
    fprintf(stderr, "mujoco: %-16s %-5s max|dq| %.3e rad  max|dqd| %.3e rad/s  (%d steps)\n",
            name, rk4 ? "rk4" : "euler", dq_max, dv_max, nstep);
    ck_assert_msg(p.md->warning[mjWARN_BADQACC].number == 0, "%s: MuJoCo reset on bad qacc", name);
    ck_assert_msg(dq_max <= tol, "%s %s: max |dq| %.3e > %g, worst at t = %.3f s, joint %s", name,
                  rk4 ? "rk4" : "euler", dq_max, tol, t_dq, sid_model_dof_joint_name(p.m, k_dq));
    ck_assert_msg(travel > 0.1, "%s: the run hardly moved (max |q - q0| %g)", name, travel);
    twin_free(&p);
}
END_TEST

/* ---- kernels at random states ----------------------------------------------------------- */

static unsigned long long rng = 88172645463325252ull;

static double uniform(double lo, double hi)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return lo + (hi - lo) * (double)(rng >> 11) * (1.0 / 9007199254740992.0);
}

static void random_state(const twin *p, double *q, double *v, double *a, double *u)
{
    for (int k = 0; k < p->nv; k++) {
        q[k] = p->prismatic[k] ? uniform(-0.5, 0.5) : uniform(-3.14, 3.14);
        v[k] = uniform(-3, 3);
        a[k] = uniform(-10, 10);
        u[k] = p->act[k] >= 0 ? uniform(-2, 2) / p->gain[k] : 0.0;
    }
}

#define NSTATE 5

START_TEST(test_mass_matrix_matches_mujoco)
{
    twin p;
    twin_load(&p, model_names[_i]);
    int nv = p.nv;
    double q[SID_MAX_JOINTS], v[SID_MAX_JOINTS], a[SID_MAX_JOINTS], u[SID_MAX_JOINTS];
    double M[SID_MAX_JOINTS * SID_MAX_JOINTS], Mmj[SID_MAX_JOINTS * SID_MAX_JOINTS];
    double worst = 0;
    for (int s = 0; s < NSTATE; s++) {
        random_state(&p, q, v, a, u);
        mj_set_state(&p, q, v, u);
        mj_forward(p.mm, p.md);
        mj_fullM(p.mm, Mmj, p.md->qM);
        sid_mass_matrix(p.m, p.theta, p.ws, q, M);
        for (int i = 0; i < nv; i++) {
            for (int j = 0; j < nv; j++) {
                double ref = Mmj[p.dadr[i] * nv + p.dadr[j]];
                if (i == j) ref -= p.mm->dof_armature[p.dadr[i]];   /* ours: without armature */
                double d = fabs(M[i * nv + j] - ref);
                worst = fmax(worst, d);
                ck_assert_msg(d <= 1e-9, "%s state %d: M[%s][%s] = %.17g, MuJoCo %.17g", p.name, s,
                              sid_model_dof_joint_name(p.m, i), sid_model_dof_joint_name(p.m, j),
                              M[i * nv + j], ref);
            }
        }
    }
    fprintf(stderr, "mujoco: %-16s mass matrix      max |dM|   %.3e\n", p.name, worst);
    twin_free(&p);
}
END_TEST

START_TEST(test_inverse_dynamics_matches_mujoco)
{
    twin p;
    twin_load(&p, model_names[_i]);
    int nv = p.nv;
    double q[SID_MAX_JOINTS], v[SID_MAX_JOINTS], a[SID_MAX_JOINTS], u[SID_MAX_JOINTS];
    double tau[SID_MAX_JOINTS], ref[SID_MAX_JOINTS], zero[SID_MAX_JOINTS] = { 0 };
    double worst = 0;
    for (int s = 0; s < NSTATE; s++) {
        random_state(&p, q, v, a, u);
        mj_set_state(&p, q, v, u);
        mj_forward(p.mm, p.md);
        /* bias only (a = 0): gravity, Coriolis, centrifugal = MuJoCo's qfrc_bias */
        sid_inverse_dynamics(&(sid_fd_point){p.m, p.theta, p.ws, sid_contact_source(p.m), q, v, NULL, 0, 0}, zero, tau);
        for (int k = 0; k < nv; k++) {
            double r = p.md->qfrc_bias[p.dadr[k]];
            double d = fabs(tau[k] - r);
            worst = fmax(worst, d / fmax(1.0, fabs(r)));
            ck_assert_msg(d <= 1e-9 * fmax(1.0, fabs(r)),
                          "%s state %d: bias force %s: ours %.17g, MuJoCo %.17g", p.name, s,
                          sid_model_dof_joint_name(p.m, k), tau[k], r);
        }
        /* full RNEA: M(q) a + c(q, v), no armature (mj_rne leaves armature to mj_inverse) */
        for (int k = 0; k < nv; k++) p.md->qacc[p.dadr[k]] = a[k];
        mj_rne(p.mm, p.md, 1, ref);
        sid_inverse_dynamics(&(sid_fd_point){p.m, p.theta, p.ws, sid_contact_source(p.m), q, v, NULL, 0, 0}, a, tau);
        for (int k = 0; k < nv; k++) {
            double r = ref[p.dadr[k]];
            double d = fabs(tau[k] - r);
            worst = fmax(worst, d / fmax(1.0, fabs(r)));
            ck_assert_msg(d <= 1e-9 * fmax(1.0, fabs(r)),
                          "%s state %d: inverse dynamics %s: ours %.17g, MuJoCo %.17g", p.name, s,
                          sid_model_dof_joint_name(p.m, k), tau[k], r);
        }
    }
    fprintf(stderr, "mujoco: %-16s inverse dynamics max rel err %.3e\n", p.name, worst);
    twin_free(&p);
}
END_TEST

START_TEST(test_forward_dynamics_matches_mujoco)
{
    twin p;
    twin_load(&p, model_names[_i]);
    int nv = p.nv;
    double q[SID_MAX_JOINTS], v[SID_MAX_JOINTS], a[SID_MAX_JOINTS], u[SID_MAX_JOINTS];
    double worst = 0;
    sid_error err = { 0 };
    for (int s = 0; s < NSTATE; s++) {
        random_state(&p, q, v, a, u);
        mj_set_state(&p, q, v, u);
        mj_forward(p.mm, p.md);   /* qacc = (M + B)^-1 (tau_motor - c - D v), explicit */
        ck_assert_msg(sid_fd(&(sid_fd_point){p.m, p.theta, p.ws, sid_contact_source(p.m), q, v, u, 0.0, 0}, a, &err) == SID_OK,
                      "%s: %s", p.name, err.msg);
        for (int k = 0; k < nv; k++) {
            double r = p.md->qacc[p.dadr[k]];
            double d = fabs(a[k] - r);
            worst = fmax(worst, d / fmax(1.0, fabs(r)));
            ck_assert_msg(d <= 1e-9 * fmax(1.0, fabs(r)),
                          "%s state %d: qacc %s: ours %.17g, MuJoCo %.17g", p.name, s,
                          sid_model_dof_joint_name(p.m, k), a[k], r);
        }
    }
    fprintf(stderr, "mujoco: %-16s forward dynamics max rel err %.3e\n", p.name, worst);
    twin_free(&p);
}
END_TEST

/* ---- the example logs ------------------------------------------------------------------- */

START_TEST(test_log_replays_exactly)
{
    const char *name = model_names[_i];
    char path[256];
    twin p;
    twin_load(&p, name);
    sid_traj *tr = NULL;
    sid_error err = { 0 };
    snprintf(path, sizeof path, "../data/%s/log.csv", name);
    ck_assert_msg(traj_csv_load(path, p.m, NULL, &tr, &err) == 0, "%s", err.msg);
    ck_assert_int_ge(tr->n, 1000);
    double *q = sid_alloc(sizeof(double) * (size_t)(tr->n * tr->nq));
    double *v = sid_alloc(sizeof(double) * (size_t)(tr->n * tr->nv));
    ck_assert(q && v);
    sid_sim_opts o;
    sid_sim_opts_defaults(&o);
    o.integrator = SID_EULER;
    ck_assert_msg(sid_simulate(p.m, p.theta, tr, &o, q, v, &err) == SID_OK, "%s", err.msg);
    double dq_max = 0;
    int k_max = 0;
    for (int k = 0; k < tr->n; k++) {
        for (int i = 0; i < tr->nq; i++) {
            double d = fabs(q[k * tr->nq + i] - tr->q[k * tr->nq + i]);
            if (!(d <= dq_max)) {
                dq_max = d;
                k_max = k;
            }
        }
    }
    fprintf(stderr, "mujoco: %-16s log replay (euler, %.1f s) max|dq| %.3e rad\n", name,
            tr->t[tr->n - 1] - tr->t[0], dq_max);
    ck_assert_msg(dq_max <= 1e-8, "%s: replay of log.csv: max |dq| %.3e at row %d (t = %g)", name,
                  dq_max, k_max + 2, tr->t[k_max]);
    sid_free(q);
    sid_free(v);
    sid_traj_free(tr);
    twin_free(&p);
}
END_TEST

Suite *mujoco_suite(void)
{
    Suite *s = suite_create("mujoco");
    TCase *tc = tcase_create("kernels");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_mass_matrix_matches_mujoco, 0, NMODEL);
    tcase_add_loop_test(tc, test_inverse_dynamics_matches_mujoco, 0, NMODEL);
    tcase_add_loop_test(tc, test_forward_dynamics_matches_mujoco, 0, NMODEL);
    suite_add_tcase(s, tc);
    tc = tcase_create("rollout");
    tcase_set_timeout(tc, 120);
    /* _i / 2 selects the model, _i % 2 the integrator (0 euler, 1 rk4) */
    tcase_add_loop_test(tc, test_rollout_matches_mujoco, 0, 2 * NMODEL);
    suite_add_tcase(s, tc);
    tc = tcase_create("logs");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_log_replays_exactly, 0, NMODEL);
    suite_add_tcase(s, tc);
    return s;
}
