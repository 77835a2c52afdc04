/* test_dry_friction.c — joint dry friction (core/dynamics/dry_friction.h, friction.model "dry"):
 *  - MuJoCo 2.2.2's frictionloss as the oracle: a pendulum and a 4-joint chain, the same
 *    robot written as robot.json and as MJCF (solver tolerance 1e-12 so that MuJoCo's answer is
 *    the QP's exact solution), torques around the friction level so that every joint sticks
 *    and slips repeatedly, 2 s at h = 1 ms, by Euler and by RK4 (whose every stage solves the
 *    rows, as MuJoCo's does): positions agree to 1e-8 rad;
 *  - the adjoint of whole windows that contain sticking and slipping against central finite
 *    differences of the loss for every parameter and the initial state, forward mode against
 *    the adjoint (dot-product test), the taped adjoint against the re-solving one, by both
 *    integrators; one step with compliant contact (Euler, RK4) and with hard contact (whose
 *    step solves the rows first) against central differences and forward mode;
 *  - a fit of a 3-joint chain's coulomb, viscous, armature and masses from noise-free logs;
 *  - a joint pushed below its friction level stays, creeping no faster than the soft model's
 *    steady creep R u / b; one pushed above it slips; friction never adds energy;
 *  - misuse: RK4 with hard contact, Stribeck with dry friction, an unknown model name. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mujoco/mujoco.h>

#include "robot_json.h"
#include "sid_internal.h"
#include "dry_friction.h"
#include "constraint_rig.h"
#include "test_util.h"

Suite *dry_friction_suite(void);

/* A pendulum (n = 1) or chain whose joints swing about y and x, loads near the friction levels. */
static void make_chain(rig_chain *c, int n, unsigned seed)
{
    memset(c, 0, sizeof *c);
    c->n = n;
    unsigned s = seed;
    for (int k = 0; k < n; k++) {
        rig_chain_link(c, k, &s);
        c->floss[k] = tu_uniform(&s, 0.2, 0.5);
        c->amp[k] = tu_uniform(&s, 1.0, 2.0) * c->floss[k] * (n - k);
        c->w[k] = tu_uniform(&s, 4, 9);
        c->ph[k] = tu_uniform(&s, 0, 6.28);
    }
}

/* Both simulators from rest at q = 0.1 per joint, 2 s at 1 ms by integ; the worst |dq|, and how
 * often our rows changed between sticking and slipping (at the step's start, RK4's first stage). */
static double agreement(const rig_chain *c, sid_integrator integ, int *switches, int *sticks)
{
    static char xml[16384];
    ck_assert_int_lt(rig_mjcf_integrator(c, xml, sizeof xml, 0, integ == SID_RK4 ? "RK4" : "Euler"), (int)sizeof xml);
    mjModel *mm = rig_mujoco(xml);
    mjData *md = mj_makeData(mm);
    rig_model p;
    rig_model_make(&p, c, "dry", NULL);
    const int n = c->n;
    ck_assert_int_eq(mm->nv, n);
    ck_assert_int_eq(sid_model_nv(p.m), n);
    double q[RIG_MAXJ], v[RIG_MAXJ], u[RIG_MAXJ], q1[RIG_MAXJ], v1[RIG_MAXJ], worst = 0;
    int state[RIG_MAXJ], prev[RIG_MAXJ];
    sid_error err = {0};
    for (int k = 0; k < n; k++) q[k] = md->qpos[k] = 0.1, v[k] = md->qvel[k] = 0, prev[k] = 2;
    *switches = *sticks = 0;
    for (int step = 0; step < 2000; step++) {
        const double t = step * 1e-3;
        for (int k = 0; k < n; k++) u[k] = md->qfrc_applied[k] = rig_torque(c, k, t);
        mj_step(mm, md);
        if (integ == SID_RK4)   /* the rows at the step's start: the first stage alone */
            ck_assert_int_eq(sid_dry_accel(&(sid_fd_point){p.m, p.theta, p.ws, NULL, q, v, u, 1e-3, 0}, 1, 0, &err), SID_OK);
        double res;
        ck_assert_int_eq(sid_dry_last(p.ws, NULL, state, &res), n);
        ck_assert_msg(sid_step(p.m, p.theta, p.ws, integ, 1e-3, q, v, u, q1, v1, &err) == SID_OK, "%s", err.msg);
        if (integ == SID_EULER) ck_assert_int_eq(sid_dry_last(p.ws, NULL, state, &res), n);
        ck_assert_msg(res < 1e-9, "step %d: KKT residual %g", step, res);
        for (int k = 0; k < n; k++) {
            q[k] = q1[k], v[k] = v1[k];
            worst = fmax(worst, fabs(q[k] - md->qpos[k]));
            *switches += prev[k] != 2 && (prev[k] == 0) != (state[k] == 0);
            *sticks += state[k] == 0;
            prev[k] = state[k];
        }
    }
    rig_model_free(&p);
    mj_deleteData(md);
    mj_deleteModel(mm);
    return worst;
}

START_TEST(mujoco_agreement)
{
    const int sizes[2] = {1, 4};
    for (int i = 0; i < 4; i++) {
        rig_chain c;
        int switches, sticks;
        const sid_integrator integ = i < 2 ? SID_EULER : SID_RK4;
        make_chain(&c, sizes[i % 2], 11 + (unsigned)(i % 2));
        const double worst = agreement(&c, integ, &switches, &sticks);
        fprintf(stderr, "dry friction vs MuJoCo frictionloss, %s, %d joint(s), 2 s at 1 ms: max |dq| %.2e rad, %d "
                        "stick/slip switches, %d of %d joint-steps sticking\n",
                integ == SID_RK4 ? "rk4" : "euler", c.n, worst, switches, sticks, 2000 * c.n);
        /* both sides solve the same QP exactly; what is left is rounding, grown by 2000 steps */
        ck_assert_msg(worst <= 1e-8, "%d joints: max |dq| %g", c.n, worst);
        /* the comparison must exercise both regimes, repeatedly, on every joint */
        ck_assert_int_ge(switches, 6 * c.n);
        ck_assert_int_ge(sticks, 100 * c.n);
    }
}
END_TEST

/* ---- gradients of a window --------------------------------------------------------------- */

/* A zeroed window on the heap (it is large) stepped by integ; rig_win_free frees it. */
static rig_window *win_make(int n, unsigned seed, sid_integrator integ)
{
    rig_window *w = calloc(1, sizeof *w);
    w->integ = integ;
    make_chain(&w->c, n, seed);
    rig_model_make(&w->p, &w->c, "dry", NULL);
    rig_win_start(w, seed, 0.3);
    return w;
}

static void window_gradient_by(sid_integrator integ)
{
    rig_window *w = win_make(3, 21, integ);
    const int n = w->c.n, np = sid_model_nparam(w->p.m);
    double q0bar[RIG_MAXJ], v0bar[RIG_MAXJ], *thetabar = calloc((size_t)np, sizeof(double));
    rig_win_adjoint(w, q0bar, v0bar, thetabar);
    /* the window must contain both regimes */
    int sticks = 0, slips = 0, state[RIG_MAXJ];
    double u[RIG_MAXJ], q1[RIG_MAXJ], v1[RIG_MAXJ];
    sid_error err = {0};
    for (int k = 0; k < RIG_NSTEP; k++) {
        for (int i = 0; i < n; i++) u[i] = rig_torque(&w->c, i, k * 1e-3);
        sid_step(w->p.m, w->p.theta, w->p.ws, SID_EULER, 1e-3, w->Q[k], w->V[k], u, q1, v1, &err);   /* the rows */
        sid_dry_last(w->p.ws, NULL, state, NULL);
        for (int i = 0; i < n; i++) sticks += !state[i], slips += !!state[i];
    }
    ck_assert_int_gt(sticks, RIG_NSTEP / 4);
    ck_assert_int_gt(slips, RIG_NSTEP / 4);
    char where[256];
    int checked, bounds;
    const double worst = rig_win_gradient_err(w, q0bar, v0bar, thetabar, where, sizeof where, &checked, &bounds);
    fprintf(stderr, "dry friction window gradient, %s (%d steps, %d sticking / %d slipping joint-steps): worst "
                    "relative error %.2e at %s; %d parameters with a gradient\n",
            integ == SID_RK4 ? "rk4" : "euler", RIG_NSTEP, sticks, slips, worst, where, checked);
    /* coulomb, masses, COMs, inertias, armature, viscous, origins: all act through the rows */
    ck_assert_int_ge(checked, 6 * n);
    /* central differences at step 1e-6 are good to ~1e-7; kinks of the active set are
     * piecewise-smooth points the steps do not straddle */
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

/* Forward mode of the window along random (q0dot, v0dot, thetadot) against the adjoint. */
START_TEST(window_forward_mode)
{
    for (int i = 0; i < 2; i++) {
        rig_window *w = win_make(3, 22, i ? SID_RK4 : SID_EULER);
        rig_win_forward_mode(w, i ? "dry friction, rk4," : "dry friction, euler,");
        rig_win_free(w);
    }
}
END_TEST

/* The adjoint from the tape record (what fits use) is the adjoint that re-solves, step by step
 * along a window that sticks and slips: the record restores the step, it does not approximate. */
START_TEST(taped_adjoint)
{
    for (int i = 0; i < 2; i++) {
        rig_window *w = win_make(3, 23, i ? SID_RK4 : SID_EULER);
        rig_win_taped(w, 1, i ? "dry friction, rk4," : "dry friction, euler,", "largest entry");
        rig_win_free(w);
    }
}
END_TEST

/* ---- sticking, slipping, energy ---------------------------------------------------------- */

/* One joint about the vertical (no gravity torque), no damping, constant torque u. */
static void vertical_joint(rig_chain *c, double u)
{
    memset(c, 0, sizeof *c);
    c->n = 1;
    c->axis[0][2] = 1;
    c->mass[0] = 1;
    c->com[0][0] = 0.1;
    c->inertia[0][0] = c->inertia[0][1] = c->inertia[0][2] = 0.01;
    c->floss[0] = 0.5;
    c->bias[0] = u;
}

START_TEST(stick_really_sticks)
{
    rig_chain c;
    sid_error err = {0};
    for (int slip = 0; slip < 2; slip++) {
        const double u = slip ? 0.8 : 0.4;   /* below, above the friction level 0.5 */
        vertical_joint(&c, u);
        rig_model p;
        rig_model_make(&p, &c, "dry", NULL);
        double q[1] = {0}, v[1] = {0}, q1[1], v1[1], uu[1] = {u};
        const double I = 0.01 + 1 * 0.1 * 0.1;   /* about the axis: izz + m r^2 */
        for (int k = 0; k < 1000; k++) {
            ck_assert_int_eq(sid_step(p.m, p.theta, p.ws, SID_EULER, 1e-3, q, v, uu, q1, v1, &err), SID_OK);
            q[0] = q1[0], v[0] = v1[0];
        }
        if (!slip) {
            /* the soft constraint's steady creep: a = A (R u - b v) / (A + R) = 0 at v = R u / b */
            const double R = (1 - SID_DRY_DMIN) / SID_DRY_DMIN / I, b = 2 / (SID_DRY_DMAX * SID_DRY_TIMECONST);
            const double creep = R * u / b;
            fprintf(stderr, "dry friction: torque 0.8 of the level: v after 1 s %.6g rad/s (soft model's creep %.6g), "
                            "q %.3g rad (frictionless: %.3g)\n", v[0], creep, q[0], u / I / 2);
            ck_assert_msg(v[0] >= 0 && fabs(v[0] - creep) <= 1e-6 * creep, "v %g, creep %g", v[0], creep);
            ck_assert_msg(q[0] <= creep * 1.0 + 1e-12, "q %g > creep x 1 s %g", q[0], creep);
        } else {
            /* sliding: the full friction torque opposes, a = (u - floss) / I */
            const double a = (u - 0.5) / I;
            ck_assert_msg(fabs(v[0] - a * 1.0) <= 1e-3 * a, "v %g, expected %g", v[0], a);
        }
        rig_model_free(&p);
    }
}
END_TEST

/* A double pendulum swinging freely from a tilt: its energy never rises above the frictionless
 * run's worst excursion (the Euler step's own), and friction takes a clear share by the end. */
START_TEST(passivity)
{
    rig_chain c;
    make_chain(&c, 2, 31);
    for (int k = 0; k < 2; k++) c.amp[k] = c.bias[k] = c.damping[k] = 0, c.floss[k] = 0.05;
    double band = 0, E0 = 0, Eend = 0, rise = 0;
    sid_error err = {0};
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 0)
            for (int k = 0; k < 2; k++) c.floss[k] = 0;
        else
            for (int k = 0; k < 2; k++) c.floss[k] = 0.05;
        rig_model p;
        rig_model_make(&p, &c, "dry", NULL);
        double q[2] = {1.0, -0.5}, v[2] = {0, 0}, q1[2], v1[2], u[2] = {0, 0};
        const double e0 = sid_energy(p.m, p.theta, p.ws, q, v);
        for (int k = 0; k < 3000; k++) {
            ck_assert_int_eq(sid_step(p.m, p.theta, p.ws, SID_EULER, 1e-3, q, v, u, q1, v1, &err), SID_OK);
            memcpy(q, q1, sizeof q), memcpy(v, v1, sizeof v);
            const double e = sid_energy(p.m, p.theta, p.ws, q, v) - e0;
            if (pass == 0) band = fmax(band, fabs(e));
            else rise = fmax(rise, e);
        }
        if (pass == 1) E0 = e0, Eend = sid_energy(p.m, p.theta, p.ws, q, v);
        rig_model_free(&p);
    }
    fprintf(stderr, "dry friction passivity: energy %.4g J -> %.4g J in 3 s; highest rise %.2e J (Euler's own band "
                    "without friction %.2e J)\n", E0, Eend, rise, band);
    ck_assert_msg(rise <= band, "energy rose %g above the start, Euler's band %g", rise, band);
    ck_assert_msg(E0 - Eend > 10 * band, "friction took only %g J", E0 - Eend);
}
END_TEST

/* ---- a fit --------------------------------------------------------------------------------- */

/* The fit pipeline (windows, tape, adjoint, L-BFGS) on the dry model: a 3-joint chain's
 * coulomb, viscous, armature and masses 20 % off, noise-free logs of the truth made by this
 * simulator (MuJoCo's, as mujoco_agreement shows; tests/tools/dryrec.py does the same from
 * MuJoCo's own logs of the 7-joint arm), about 15 % of the joint-steps sticking: the loss falls
 * to rounding (measured 7e-18 of its start) and every parameter comes back to 1e-5 (measured
 * 1.7e-6, viscous friction, which the sticking stretches see least). */
START_TEST(fit_recovers)
{
    rig_chain c;
    make_chain(&c, 3, 41);
    rig_model p;
    rig_model_make(&p, &c, "dry", NULL);
    sid_error err = {0};
    const int np = sid_model_nparam(p.m);
    int mask[256] = {0}, idx[SID_MAX_FREE], n = 0;
    ck_assert_int_le(np, 256);
    const char *globs[] = {"joints.*.friction.coulomb", "joints.*.friction.viscous", "joints.*.armature", "links.*.mass"};
    for (int g = 0; g < 4; g++) sid_model_param_match(p.m, globs[g], mask);
    double truth[256], lo[SID_MAX_FREE], hi[SID_MAX_FREE];
    memcpy(truth, p.theta, sizeof(double) * (size_t)np);
    for (int i = 0; i < np; i++) {
        if (!mask[i]) continue;
        truth[i] = p.theta[i] * (n % 2 ? 0.8 : 1.2);
        idx[n] = i, lo[n] = 0.1 * p.theta[i], hi[n] = 10 * p.theta[i];
        n++;
    }
    sid_traj *logs[1] = {tu_synth_log(p.m, truth, 2001, 1e-3, 0.7, 7)};
    ck_assert_ptr_nonnull(logs[0]);
    /* the data must hold both regimes */
    int sticks = 0, state[RIG_MAXJ];
    for (int k = 0; k + 1 < logs[0]->n; k++) {
        double q1[RIG_MAXJ], v1[RIG_MAXJ];
        ck_assert_int_eq(sid_step(p.m, truth, p.ws, SID_EULER, 1e-3, logs[0]->q + k * c.n, logs[0]->qd + k * c.n,
                                  logs[0]->u + k * c.n, q1, v1, &err), SID_OK);
        sid_dry_last(p.ws, NULL, state, NULL);
        for (int i = 0; i < c.n; i++) sticks += !state[i];
    }
    ck_assert_int_gt(sticks, 600);
    ck_assert_int_lt(sticks, 3 * 2000 - 600);
    sid_fit_result res;
    int at;
    const double worst = rig_fit_worst(p.m, p.theta, truth, logs[0], n, idx, lo, hi, &res, &at);
    fprintf(stderr, "dry friction fit, 3 joints (%d of 6000 joint-steps sticking), %d parameters 20 %% off, "
                    "noise-free: loss %.3e -> %.3e in %d iterations; worst relative error %.2e at %s\n",
            sticks, n, res.loss0, res.loss, res.iterations, worst, sid_model_param(p.m, at)->name);
    ck_assert_msg(res.loss <= 1e-14 * res.loss0, "loss fell only to %g of %g", res.loss / res.loss0, res.loss0);
    ck_assert_msg(worst <= 1e-5, "%s: relative error %g", sid_model_param(p.m, at)->name, worst);
    sid_traj_free(logs[0]);
    rig_model_free(&p);
}
END_TEST

/* ---- with compliant contact --------------------------------------------------------------- */

/* A two-joint arm hanging from z = 0.5 whose tip sphere presses into the ground (compliant
 * contact is a force: it enters a0 and every row's problem); with "hard" the step is refused.
 * servos: j1 on a voltage motor and j2 on a position servo instead of torque motors (the
 * actuators' damping implicitfast takes). */
static char *contact_arm(const char *contact_model, int servos)
{
    static char buf[4096];
    snprintf(buf, sizeof buf,
             "{\"name\": \"arm\", \"links\": [{\"name\": \"w\"}, {\"name\": \"a\", \"mass\": 1, \"com\": [0, 0, -0.15], "
             "\"inertia\": {\"ixx\": 0.01, \"iyy\": 0.012, \"izz\": 0.004}}, {\"name\": \"b\", \"mass\": 0.5, "
             "\"com\": [0.01, 0, -0.12], \"inertia\": {\"ixx\": 0.004, \"iyy\": 0.005, \"izz\": 0.002}}], "
             "\"joints\": [{\"name\": \"j1\", \"type\": \"revolute\", \"parent\": \"w\", \"child\": \"a\", "
             "\"origin\": {\"xyz\": [0, 0, 0.5]}, \"axis\": [0, 1, 0], \"armature\": 0.01, \"friction\": {\"viscous\": "
             "0.02, \"coulomb\": 0.3, \"model\": \"dry\"}, \"motor\": %s}, {\"name\": \"j2\", "
             "\"type\": \"revolute\", \"parent\": \"a\", \"child\": \"b\", \"origin\": {\"xyz\": [0, 0, -0.3]}, "
             "\"axis\": [1, 0, 0], \"armature\": 0.005, \"friction\": {\"viscous\": 0.01, \"coulomb\": 0.05, "
             "\"model\": \"dry\"}, \"motor\": %s}], \"contact\": {\"model\": \"%s\", "
             "\"ground\": {\"height\": 0}, \"spheres\": [{\"name\": \"tip\", \"link\": \"b\", \"xyz\": [0, 0, -0.1952], "
             "\"radius\": 0.005}]}}",
             servos ? "{\"input\": \"voltage\", \"kt\": 0.3, \"ke\": 0.3, \"resistance\": 2}" : "{\"input\": \"torque\"}",
             servos ? "{\"input\": \"position\", \"kp\": 4, \"kd\": 0.3}" : "{\"input\": \"torque\"}", contact_model);
    return buf;
}

/* One step of the contact arm by integ under its contact model: the adjoint against central
 * differences of w.(q1, v1) for the state and every parameter, and forward mode along a random
 * direction against the adjoint (dot-product test). */
static void contact_step_case(const char *contact, sid_integrator integ)
{
    sid_robot_desc d;
    sid_model *m;
    double *theta;
    sid_error err = {0};
    const char *txt = contact_arm(contact, integ == SID_IMPLICITFAST);
    ck_assert_msg(robot_json_parse("arm.json", txt, strlen(txt), &d, NULL, &err) == 0, "%s", err.msg);
    ck_assert_msg(sid_model_create(&m, &theta, &d, &err) == SID_OK, "%s", err.msg);
    sid_workspace *ws = sid_workspace_create(m);
    const int np = sid_model_nparam(m);
    /* the tip 0.2 mm into the ground at q = 0 (its centre at z = 0.0048, radius 5 mm); j1 at
     * rest under a torque below its level sticks, j2 slips (its drag on the ground acts along
     * y, which j1's axis does not feel) */
    double q[2] = {0.0, 0.0}, v[2] = {0.0, -0.8}, u[2] = {0.1, 0.02}, wq[2] = {0.7, -0.4}, wv[2] = {0.3, 0.9};
    double q1[2], v1[2];
    ck_assert_msg(sid_step(m, theta, ws, integ, 1e-3, q, v, u, q1, v1, &err) == SID_OK, "%s", err.msg);
    int state[2];
    if (integ == SID_EULER) {   /* RK4's last stage is elsewhere; its first is this state */
        sid_dry_last(ws, NULL, state, NULL);
        ck_assert_msg(state[0] == 0 && state[1] != 0, "states %d %d: expected j1 sticking, j2 slipping", state[0],
                      state[1]);
    }
    double qbar[2] = {0}, vbar[2] = {0}, *thetabar = calloc((size_t)np, sizeof(double));
    ck_assert_int_eq(sid_step_vjp(m, theta, ws, integ, 1e-3, q, v, u, wq, wv, qbar, vbar, thetabar, &err), SID_OK);
    double worst = 0;
    char where[400] = "none";
    for (int j = -4; j < np; j++) {
        double *x = j < -2 ? &q[j + 4] : j < 0 ? &v[j + 2] : &theta[j];
        const double a = j < -2 ? qbar[j + 4] : j < 0 ? vbar[j + 2] : thetabar[j];
        const double x0 = *x, e = 1e-6 * fmax(1, fabs(x0));
        double L[2];
        for (int s = 0; s < 2; s++) {
            *x = x0 + (s ? -e : e);
            ck_assert_int_eq(sid_step(m, theta, ws, integ, 1e-3, q, v, u, q1, v1, &err), SID_OK);
            L[s] = wq[0] * q1[0] + wq[1] * q1[1] + wv[0] * v1[0] + wv[1] * v1[1];
        }
        *x = x0;
        const double num = (L[0] - L[1]) / (2 * e), r = tu_rel_err(a, num, 1e-9);
        if (r > worst) worst = r, snprintf(where, sizeof where, "%s: adjoint %.10g, fd %.10g",
                                          j < 0 ? "state" : sid_model_param(m, j)->name, a, num);
    }
    /* forward mode along a random direction: w.(J xdot) = (J^T w).xdot */
    unsigned sd = 9;
    double qd[2], vd[2], scratch[18], *thd = calloc((size_t)np, sizeof(double)), rev = 0, fwd = 0;
    for (int i = 0; i < 2; i++) {
        qd[i] = tu_uniform(&sd, -1, 1), vd[i] = tu_uniform(&sd, -1, 1);
        rev += qbar[i] * qd[i] + vbar[i] * vd[i];
    }
    for (int j = 0; j < np; j++) thd[j] = tu_uniform(&sd, -1, 1) * fmax(0.01, fabs(theta[j])), rev += thetabar[j] * thd[j];
    ck_assert_msg(sid_step_jvp(m, theta, ws, integ, 1e-3, q, v, u, 1, thd, qd, vd, scratch, &err) == SID_OK, "%s",
                  err.msg);
    for (int i = 0; i < 2; i++) fwd += wq[i] * qd[i] + wv[i] * vd[i];
    fprintf(stderr, "dry friction with %s contact, %s, one step: worst relative error %.2e at %s; forward mode "
                    "%.2e off the adjoint\n", contact, sid_integrator_name(integ), worst, where,
            fabs(fwd - rev) / fabs(rev));
    ck_assert_msg(worst <= 1e-6, "relative error %g at %s", worst, where);
    ck_assert_msg(fabs(fwd - rev) <= 1e-10 * fabs(rev), "forward %.15g, reverse %.15g", fwd, rev);
    free(thd);
    free(thetabar);
    sid_workspace_free(ws);
    sid_model_free(m);
    sid_free(theta);
    robot_desc_free(&d);
}

START_TEST(contact_step_gradient)
{
    contact_step_case("compliant", SID_EULER);
    contact_step_case("compliant", SID_RK4);
    contact_step_case("hard", SID_EULER);
    contact_step_case("compliant", SID_IMPLICITFAST);
    contact_step_case("hard", SID_IMPLICITFAST);
}
END_TEST

/* ---- misuse ------------------------------------------------------------------------------ */

START_TEST(misuse)
{
    rig_chain c;
    make_chain(&c, 1, 3);
    rig_model p;
    rig_model_make(&p, &c, "dry", NULL);
    sid_error err = {0};
    double q[2] = {0, 0}, v[2] = {0, 0}, u[2] = {0, 0}, q1[2], v1[2];
    ck_assert_int_eq(sid_step(p.m, p.theta, p.ws, SID_RK4, 1e-3, q, v, u, q1, v1, &err), SID_OK);
    rig_model_free(&p);
    /* hard contact needs the euler integrator, dry friction or not */
    sid_robot_desc da;
    sid_model *ma;
    double *tha;
    const char *txt = contact_arm("hard", 0);
    ck_assert_msg(robot_json_parse("arm.json", txt, strlen(txt), &da, NULL, &err) == 0, "%s", err.msg);
    ck_assert_msg(sid_model_create(&ma, &tha, &da, &err) == SID_OK, "%s", err.msg);
    sid_workspace *wa = sid_workspace_create(ma);
    ck_assert_int_eq(sid_step(ma, tha, wa, SID_RK4, 1e-3, q, v, u, q1, v1, &err), SID_ERR_INPUT);
    ck_assert_msg(strstr(err.msg, "hard contact") && strstr(err.msg, "euler"), "%s", err.msg);
    sid_workspace_free(wa);
    sid_model_free(ma);
    sid_free(tha);
    robot_desc_free(&da);
    /* the smooth model stays the default and has no constraint rows */
    rig_model_make(&p, &c, NULL, NULL);
    ck_assert_ptr_null(p.ws->dry);
    ck_assert_int_eq(sid_step(p.m, p.theta, p.ws, SID_RK4, 1e-3, q, v, u, q1, v1, &err), SID_OK);
    rig_model_free(&p);
    static char buf[8192];
    sid_robot_desc d;
    int n = rig_json(&c, buf, sizeof buf, "sticky", NULL);
    ck_assert_int_ne(robot_json_parse("chain.json", buf, (size_t)n, &d, NULL, &err), 0);
    ck_assert_msg(strstr(err.msg, "joints[0].friction.model") && strstr(err.msg, "\"dry\""), "%s", err.msg);
    /* Stribeck needs the smooth model */
    const char *stribeck = "{\"name\": \"s\", \"links\": [{\"name\": \"a\"}, {\"name\": \"b\", \"mass\": 1, "
                           "\"inertia\": {\"ixx\": 0.01, \"iyy\": 0.01, \"izz\": 0.01}}], \"joints\": [{\"name\": \"j\", "
                           "\"type\": \"revolute\", \"parent\": \"a\", \"child\": \"b\", \"axis\": [0, 1, 0], "
                           "\"friction\": {\"coulomb\": 0.1, \"model\": \"dry\", \"stribeck\": {\"torque\": 0.1, "
                           "\"velocity\": 0.1}}}]}";
    ck_assert_int_ne(robot_json_parse("s.json", stribeck, strlen(stribeck), &d, NULL, &err), 0);
    ck_assert_msg(strstr(err.msg, "joints[0].friction.stribeck"), "%s", err.msg);
}
END_TEST

Suite *dry_friction_suite(void)
{
    Suite *s = suite_create("dry_friction");
    TCase *tc = tcase_create("dry_friction");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, mujoco_agreement);
    tcase_add_test(tc, window_gradient);
    tcase_add_test(tc, window_forward_mode);
    tcase_add_test(tc, taped_adjoint);
    tcase_add_test(tc, stick_really_sticks);
    tcase_add_test(tc, passivity);
    tcase_add_test(tc, fit_recovers);
    tcase_add_test(tc, contact_step_gradient);
    tcase_add_test(tc, misuse);
    suite_add_tcase(s, tc);
    return s;
}
