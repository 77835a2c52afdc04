/* test_limit_constraint.c — MuJoCo's joint limit as a constraint row (limit.model "constraint",
 * dry_friction.h):
 *  - MuJoCo 2.2.2 as the oracle (solver tolerance 1e-12, so that its answer is the QP's exact
 *    solution): a pendulum swung into both bounds, a 3-joint chain with dry friction and limits,
 *    and data/servo_arm/truth.xml (position servos, dry friction, j4 driven past its bound), the
 *    same model as robot.json or imported MJCF, 2 s at h = 1 ms, by Euler and by RK4 (every
 *    stage solving the rows, as MuJoCo's does): positions agree to 1e-8 rad;
 *  - the adjoint of a window that enters and leaves the limits against central differences of
 *    the loss for every parameter (the bounds included) and the initial state, forward mode
 *    against the adjoint (dot-product test), the taped adjoint against the re-solving one, by
 *    both integrators;
 *  - misuse: a stiffness under the constraint model, an unknown model name. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mujoco/mujoco.h>

#include "constraint_rig.h"
#include "dry_friction.h"
#include "robot_json.h"
#include "robot_load.h"
#include "sid_internal.h"
#include "test_util.h"

Suite *limit_constraint_suite(void);

/* make_chain gives every joint friction or none: the friction model our side writes. */
static const char *dry_if(const rig_chain *c) { return c->floss[0] > 0 ? "dry" : NULL; }

/* A chain whose joints swing about y and x within bounds [-0.25, 0.3] (+- some), driven hard
 * enough to hit both: floss 0 for a frictionless pendulum. */
static void make_chain(rig_chain *c, int n, unsigned seed, int friction)
{
    memset(c, 0, sizeof *c);
    c->n = n;
    unsigned s = seed;
    for (int k = 0; k < n; k++) {
        rig_chain_link(c, k, &s);
        c->floss[k] = friction ? tu_uniform(&s, 0.1, 0.3) : 0;
        c->lo[k] = -tu_uniform(&s, 0.2, 0.3);
        c->hi[k] = tu_uniform(&s, 0.2, 0.3);
        c->amp[k] = tu_uniform(&s, 2.0, 3.0) * (n - k);
        c->w[k] = tu_uniform(&s, 4, 9);
        c->ph[k] = tu_uniform(&s, 0, 6.28);
    }
}

/* Counts of limit rows present (lower, upper) and free (pushing) over a run. */
typedef struct {
    int lower, upper, pushing, enters, leaves;
} limit_tally;

static void tally(const sid_workspace *ws, int nfric, limit_tally *t, int *prev)
{
    double f[2 * RIG_MAXJ + RIG_MAXJ];
    int state[2 * RIG_MAXJ + RIG_MAXJ];
    const int nf = sid_dry_last(ws, f, state, NULL);
    for (int j = nfric; j < nf; j++) {
        const int on = state[j] != SID_ROW_ABSENT;
        if (on) (j - nfric) % 2 ? t->upper++ : t->lower++;
        t->pushing += state[j] == 0 && f[j] > 0;
        t->enters += on && !prev[j];
        t->leaves += !on && prev[j];
        prev[j] = on;
    }
}

/* Both simulators from rest at q = 0, 2 s at 1 ms by integ; the worst |dq| (the rows tallied at
 * each step's start: RK4's first stage). */
static double agreement(const rig_chain *c, sid_integrator integ, limit_tally *t)
{
    static char xml[16384];
    ck_assert_int_lt(rig_mjcf_integrator(c, xml, sizeof xml, 1, integ == SID_RK4 ? "RK4" : "Euler"), (int)sizeof xml);
    mjModel *mm = rig_mujoco(xml);
    mjData *md = mj_makeData(mm);
    rig_model p;
    rig_model_make(&p, c, dry_if(c), "constraint");
    const int n = c->n;
    int nfric = 0, prev[3 * RIG_MAXJ] = {0};
    for (int k = 0; k < n; k++) nfric += c->floss[k] > 0;
    ck_assert_int_eq(mm->nv, n);
    double q[RIG_MAXJ], v[RIG_MAXJ], u[RIG_MAXJ], q1[RIG_MAXJ], v1[RIG_MAXJ], worst = 0;
    sid_error err = {0};
    memset(t, 0, sizeof *t);
    for (int k = 0; k < n; k++) q[k] = md->qpos[k] = 0, v[k] = md->qvel[k] = 0;
    for (int step = 0; step < 2000; step++) {
        const double tt = step * 1e-3;
        for (int k = 0; k < n; k++) u[k] = md->qfrc_applied[k] = rig_torque(c, k, tt);
        mj_step(mm, md);
        if (integ == SID_RK4)
            ck_assert_int_eq(sid_dry_accel(&(sid_fd_point){p.m, p.theta, p.ws, NULL, q, v, u, 1e-3, 0}, 1, 0, &err), SID_OK);
        else
            ck_assert_msg(sid_step(p.m, p.theta, p.ws, integ, 1e-3, q, v, u, q1, v1, &err) == SID_OK, "%s", err.msg);
        double res;
        ck_assert_int_eq(sid_dry_last(p.ws, NULL, NULL, &res), nfric + 2 * n);
        ck_assert_msg(res < 1e-9, "step %d: KKT residual %g", step, res);
        tally(p.ws, nfric, t, prev);
        if (integ == SID_RK4)
            ck_assert_msg(sid_step(p.m, p.theta, p.ws, integ, 1e-3, q, v, u, q1, v1, &err) == SID_OK, "%s", err.msg);
        for (int k = 0; k < n; k++) {
            q[k] = q1[k], v[k] = v1[k];
            worst = fmax(worst, fabs(q[k] - md->qpos[k]));
        }
    }
    rig_model_free(&p);
    mj_deleteData(md);
    mj_deleteModel(mm);
    return worst;
}

START_TEST(mujoco_agreement)
{
    for (int i = 0; i < 4; i++) {
        rig_chain c;
        limit_tally t;
        const sid_integrator integ = i < 2 ? SID_EULER : SID_RK4;
        make_chain(&c, i % 2 ? 3 : 1, 31 + (unsigned)(i % 2), i % 2);
        const double worst = agreement(&c, integ, &t);
        fprintf(stderr, "constraint limit vs MuJoCo, %s, %d joint(s)%s, 2 s at 1 ms: max |dq| %.2e rad; rows "
                        "present %d lower / %d upper steps, %d entries, %d pushing\n", integ == SID_RK4 ? "rk4" : "euler",
                c.n, i % 2 ? " with dry friction" : "", worst, t.lower, t.upper, t.enters, t.pushing);
        /* both sides solve the same QP exactly; what is left is rounding, grown by 2000 steps */
        ck_assert_msg(worst <= 1e-8, "%d joints: max |dq| %g", c.n, worst);
        /* both bounds must be hit, repeatedly, with force */
        ck_assert_int_ge(t.lower, 20);
        ck_assert_int_ge(t.upper, 20);
        ck_assert_int_ge(t.enters, 4 * c.n);
        ck_assert_int_ge(t.pushing, 40);
    }
}
END_TEST

/* data/servo_arm/truth.xml as MuJoCo loads it and as sysid imports it, position servos tracking
 * references that drive j4 past its upper bound -1.35. */
START_TEST(servo_arm_agreement)
{
    const char *path = "../data/servo_arm/truth.xml";
    char msg[1000] = "";
    mjModel *mm = mj_loadXML(path, NULL, msg, sizeof msg);
    ck_assert_msg(mm != NULL, "%s", msg);
    mjData *md = mj_makeData(mm);
    sid_model *m;
    double *theta;
    sid_error err = {0};
    ck_assert_msg(robot_model(path, &m, &theta, NULL, &err) == 0, "%s", err.msg);
    sid_workspace *ws = sid_workspace_create(m);
    ck_assert_ptr_nonnull(ws);
    const int n = mm->nv;
    ck_assert_int_eq(n, 7);
    ck_assert_int_eq(sid_model_nv(m), n);
    const double q0[7] = {0.3, -2.9, 2.3, -1.6, 2.1, 2.4, -0.7}, amp[7] = {0.3, 0.2, 0.4, 0.4, 0.4, 0.4, 0.5};
    double q[7], v[7], u[7], q1[7], v1[7], worst = 0;
    int crossed = 0;
    for (int k = 0; k < n; k++) q[k] = md->qpos[k] = q0[k], v[k] = md->qvel[k] = 0;
    for (int step = 0; step < 2000; step++) {
        const double t = step * 1e-3;
        for (int k = 0; k < n; k++) u[k] = md->ctrl[k] = q0[k] + amp[k] * sin((3 + k) * t + k);
        mj_step(mm, md);
        ck_assert_msg(sid_step(m, theta, ws, SID_EULER, 1e-3, q, v, u, q1, v1, &err) == SID_OK, "%s", err.msg);
        for (int k = 0; k < n; k++) {
            q[k] = q1[k], v[k] = v1[k];
            worst = fmax(worst, fabs(q[k] - md->qpos[k]));
        }
        crossed += md->qpos[3] > -1.35;
    }
    fprintf(stderr, "servo_arm (truth.xml) vs MuJoCo, 2 s at 1 ms: max |dq| %.2e rad, j4 past its bound %d steps\n",
            worst, crossed);
    ck_assert_int_ge(crossed, 50);
    ck_assert_msg(worst <= 1e-8, "max |dq| %g", worst);
    sid_workspace_free(ws);
    sid_model_free(m);
    sid_free(theta);
    mj_deleteData(md);
    mj_deleteModel(mm);
}
END_TEST

/* ---- gradients of a window --------------------------------------------------------------- */

/* A zeroed window on the heap (it is large) stepped by integ; rig_win_free frees it. */
static rig_window *win_make(int n, unsigned seed, sid_integrator integ)
{
    rig_window *w = calloc(1, sizeof *w);
    w->integ = integ;
    make_chain(&w->c, n, seed, 1);
    for (int i = 0; i < n; i++)   /* narrow bounds, fast torques: in and out of them within 0.3 s */
        w->c.w[i] *= 3, w->c.lo[i] *= 0.3, w->c.hi[i] *= 0.3;
    rig_model_make(&w->p, &w->c, dry_if(&w->c), "constraint");
    rig_win_start(w, seed, 0.05);
    return w;
}

/* The window's limit rows: steps present and entries (a window must enter and leave). */
static void win_tally(rig_window *w, limit_tally *t)
{
    const int n = w->c.n;
    int prev[3 * RIG_MAXJ] = {0};
    double u[RIG_MAXJ], q1[RIG_MAXJ], v1[RIG_MAXJ];
    sid_error err = {0};
    memset(t, 0, sizeof *t);
    rig_win_loss(w);
    for (int k = 0; k < RIG_NSTEP; k++) {
        for (int i = 0; i < n; i++) u[i] = rig_torque(&w->c, i, k * 1e-3);
        sid_step(w->p.m, w->p.theta, w->p.ws, SID_EULER, 1e-3, w->Q[k], w->V[k], u, q1, v1, &err);   /* the rows */
        tally(w->p.ws, n, t, prev);
    }
}

static void window_gradient_by(sid_integrator integ)
{
    rig_window *w = win_make(3, 41, integ);
    const int n = w->c.n, np = sid_model_nparam(w->p.m);
    double q0bar[RIG_MAXJ], v0bar[RIG_MAXJ], *thetabar = calloc((size_t)np, sizeof(double));
    limit_tally t;
    win_tally(w, &t);
    rig_win_adjoint(w, q0bar, v0bar, thetabar);
    ck_assert_int_ge(t.lower + t.upper, 40);
    ck_assert_int_ge(t.enters, 2);
    ck_assert_int_ge(t.leaves, 2);
    ck_assert_int_ge(t.pushing, 20);
    char where[256];
    int checked, bounds;
    const double worst = rig_win_gradient_err(w, q0bar, v0bar, thetabar, where, sizeof where, &checked, &bounds);
    fprintf(stderr, "constraint limit window gradient, %s (%d steps; rows present %d lower / %d upper, %d entries, "
                    "%d exits): worst relative error %.2e at %s; %d parameters with a gradient, %d of them bounds\n",
            integ == SID_RK4 ? "rk4" : "euler", RIG_NSTEP, t.lower, t.upper, t.enters, t.leaves, worst, where, checked,
            bounds);
    ck_assert_int_ge(checked, 6 * n);
    ck_assert_int_ge(bounds, 2);
    /* central differences at step 1e-6 are good to ~1e-7; the row set and the active set change
     * only at points the steps do not straddle */
    ck_assert_msg(worst <= 1e-6, "relative error %g at %s", worst, where);
    free(thetabar);
    rig_win_free(w);
}

START_TEST(window_gradient)
{
    window_gradient_by(SID_EULER);
    window_gradient_by(SID_RK4);
}
END_TEST

START_TEST(window_forward_mode)
{
    for (int i = 0; i < 2; i++) {
        rig_window *w = win_make(3, 42, i ? SID_RK4 : SID_EULER);
        limit_tally t;
        win_tally(w, &t);
        ck_assert_int_ge(t.enters, 2);
        ck_assert_int_ge(t.leaves, 2);
        rig_win_forward_mode(w, i ? "constraint limit, rk4," : "constraint limit, euler,");
        rig_win_free(w);
    }
}
END_TEST

START_TEST(taped_adjoint)
{
    for (int i = 0; i < 2; i++) {
        rig_window *w = win_make(3, 43, i ? SID_RK4 : SID_EULER);
        rig_win_taped(w, 0, i ? "constraint limit, rk4," : "constraint limit, euler,", "largest");
        rig_win_free(w);
    }
}
END_TEST

/* ---- recovery from MuJoCo's data --------------------------------------------------------- */

/* data/servo_arm: MuJoCo's 6 s log of truth.xml (position servos tracking multi-sines about a
 * pose where j4 presses past its upper bound -1.35, dry friction on every joint, noise-free),
 * fitted from nominal.xml (kp, kd, coulomb and armature of all 7 joints 10-30 % off; windows of
 * 0.5 s, start states fitted): every parameter back to 1e-5 (measured 3e-6; with the spring
 * limit model it missed by up to 97 %, issue 19). */
START_TEST(servo_arm_recovers)
{
    char msg[1000] = "";
    mjModel *mm = mj_loadXML("../data/servo_arm/truth.xml", NULL, msg, sizeof msg);
    ck_assert_msg(mm != NULL, "%s", msg);
    mjData *md = mj_makeData(mm);
    sid_model *m, *mt;
    double *theta, *truth;
    sid_error err = {0};
    ck_assert_msg(robot_model("../data/servo_arm/nominal.xml", &m, &theta, NULL, &err) == 0, "%s", err.msg);
    ck_assert_msg(robot_model("../data/servo_arm/truth.xml", &mt, &truth, NULL, &err) == 0, "%s", err.msg);
    const int n = 7, ns = 6001, np = sid_model_nparam(m);
    ck_assert_int_eq(sid_model_nparam(mt), np);
    const double q0[7] = {0.3, -2.9, 2.3, -1.6, 2.1, 2.4, -0.7}, amp[7] = {0.3, 0.2, 0.4, 0.25, 0.4, 0.4, 0.5};
    sid_traj *log = sid_traj_create(ns, n, n, 1);
    ck_assert_ptr_nonnull(log);
    int crossed = 0;
    for (int k = 0; k < n; k++) md->qpos[k] = q0[k];
    for (int s = 0; s < ns; s++) {
        const double t = s * 1e-3;
        log->t[s] = t;
        for (int k = 0; k < n; k++) {
            double sum = 0;
            for (int h = 0; h < 3; h++) sum += sin(2 * 3.14159265358979 * 0.4 * (h + 1) * t + 1.7 * k + h);
            md->ctrl[k] = q0[k] + amp[k] * sum / sqrt(3.0);
            log->q[s * n + k] = md->qpos[k], log->qd[s * n + k] = md->qvel[k], log->u[s * n + k] = md->ctrl[k];
        }
        crossed += md->qpos[3] > -1.35;
        mj_step(mm, md);
    }
    ck_assert_int_ge(crossed, 100);
    int mask[512] = {0}, idx[SID_MAX_FREE], nfree = 0;
    ck_assert_int_le(np, 512);
    const char *globs[] = {"joints.*.motor.kp", "joints.*.motor.kd", "joints.*.friction.coulomb", "joints.*.armature"};
    for (int g = 0; g < 4; g++) sid_model_param_match(m, globs[g], mask);
    double lo[SID_MAX_FREE], hi[SID_MAX_FREE];
    for (int i = 0; i < np; i++)
        if (mask[i]) idx[nfree] = i, lo[nfree] = 0.1 * theta[i], hi[nfree] = 10 * theta[i], nfree++;
    ck_assert_int_eq(nfree, 28);
    sid_loss_opts o;
    sid_loss_opts_defaults(&o);
    o.window = 0.5;
    o.sim.substeps = 1;
    o.estimate_start = 1;
    sid_problem *pr;
    const sid_traj *logs[1] = {log};
    ck_assert_msg(sid_problem_create(&pr, m, logs, 1, &o, &err) == SID_OK, "%s", err.msg);
    double *x0 = malloc(sizeof(double) * (size_t)(sid_problem_nwindows(pr) * 2 * n));
    sid_problem_start_states(pr, theta, x0);
    sid_fit_opts fo;
    sid_fit_opts_defaults(&fo);
    fo.nfree = nfree, fo.idx = idx, fo.lo = lo, fo.hi = hi;
    sid_fit_result res;
    ck_assert_msg(sid_fit(pr, theta, x0, &fo, &res, &err) == SID_OK, "%s", err.msg);
    double worst = 0;
    int at = 0;
    for (int k = 0; k < nfree; k++) {
        const double e = fabs(theta[idx[k]] - truth[idx[k]]) / fabs(truth[idx[k]]);
        if (e > worst) worst = e, at = idx[k];
    }
    fprintf(stderr, "servo_arm fit from MuJoCo's noise-free log (j4 past its bound %d of %d samples), %d parameters: "
                    "loss %.3e -> %.3e in %d iterations; worst relative error %.2e at %s\n",
            crossed, ns, nfree, res.loss0, res.loss, res.iterations, worst, sid_model_param(m, at)->name);
    ck_assert_msg(worst <= 1e-5, "%s: relative error %g", sid_model_param(m, at)->name, worst);
    free(x0);
    sid_problem_free(pr);
    sid_traj_free(log);
    sid_model_free(m);
    sid_model_free(mt);
    sid_free(theta);
    sid_free(truth);
    mj_deleteData(md);
    mj_deleteModel(mm);
}
END_TEST

/* ---- misuse ------------------------------------------------------------------------------ */

START_TEST(misuse)
{
    rig_chain c;
    make_chain(&c, 1, 3, 0);
    rig_model p;
    rig_model_make(&p, &c, dry_if(&c), "constraint");
    sid_error err = {0};
    double q[1] = {0}, v[1] = {0}, u[1] = {0}, q1[1], v1[1];
    /* no stiffness or damping rows under the constraint model */
    for (int j = 0; j < sid_model_nparam(p.m); j++)
        ck_assert_msg(!strstr(sid_model_param(p.m, j)->name, "limit.stiffness") &&
                          !strstr(sid_model_param(p.m, j)->name, "limit.damping"),
                      "%s", sid_model_param(p.m, j)->name);
    rig_model_free(&p);
    /* the spring model stays the default (RK4 fine, no rows) */
    rig_model_make(&p, &c, dry_if(&c), "spring");
    ck_assert_ptr_null(p.ws->dry);
    ck_assert_int_eq(sid_step(p.m, p.theta, p.ws, SID_RK4, 1e-3, q, v, u, q1, v1, &err), SID_OK);
    rig_model_free(&p);
    static char buf[8192];
    sid_robot_desc d;
    int n = rig_json(&c, buf, sizeof buf, dry_if(&c), "bouncy");
    ck_assert_int_ne(robot_json_parse("chain.json", buf, (size_t)n, &d, NULL, &err), 0);
    ck_assert_msg(strstr(err.msg, "joints[0].limit.model") && strstr(err.msg, "\"constraint\""), "%s", err.msg);
    const char *stiff = "{\"name\": \"s\", \"links\": [{\"name\": \"a\"}, {\"name\": \"b\", \"mass\": 1, "
                        "\"inertia\": {\"ixx\": 0.01, \"iyy\": 0.01, \"izz\": 0.01}}], \"joints\": [{\"name\": \"j\", "
                        "\"type\": \"revolute\", \"parent\": \"a\", \"child\": \"b\", \"axis\": [0, 1, 0], "
                        "\"limit\": {\"lower\": -1, \"upper\": 1, \"stiffness\": 100, \"model\": \"constraint\"}}]}";
    ck_assert_int_ne(robot_json_parse("s.json", stiff, strlen(stiff), &d, NULL, &err), 0);
    ck_assert_msg(strstr(err.msg, "joints[0].limit.stiffness") && strstr(err.msg, "constraint"), "%s", err.msg);
}
END_TEST

Suite *limit_constraint_suite(void)
{
    Suite *s = suite_create("limit_constraint");
    TCase *tc = tcase_create("limit_constraint");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, mujoco_agreement);
    tcase_add_test(tc, servo_arm_agreement);
    tcase_add_test(tc, window_gradient);
    tcase_add_test(tc, window_forward_mode);
    tcase_add_test(tc, taped_adjoint);
    tcase_add_test(tc, misuse);
    suite_add_tcase(s, tc);
    TCase *slow = tcase_create("limit_constraint_recovery");
    tcase_set_tags(slow, "slow");   /* numerics, not memory: `make debug` leaves it out */
    tcase_set_timeout(slow, 120);
    tcase_add_test(slow, servo_arm_recovers);
    suite_add_tcase(s, slow);
    return s;
}
