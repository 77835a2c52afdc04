/* test_limits.c — joint position limits (core/dynamics/joint_limit.h): the soft constraint's derivatives,
 * its agreement with MuJoCo 2.2.2's limit, loading and writing robot.json's "limit", recovery.
 *
 * Derivatives. One step's adjoint (Euler, RK4) against central differences in q, v and every
 * parameter of a random robot with every parameter kind and limits on every moving joint, some
 * penetrated by 100 w, some by 3 w (the softplus's knee), some far away, one-sided ones among them;
 * the forward mode against the adjoint on the same step (dot-product test). Then a whole window
 * of a pendulum that swings into its limits: the loss's gradient in the limit's four parameters
 * and in the window's start state against central differences, and the forward-mode Jacobian's
 * J^T r / nres against the adjoint's gradient; with the limits far away the limit parameters'
 * gradient is exactly 0 (the force underflows to 0 beyond 745 w).
 *
 * MuJoCo. The pendulum and a two-joint arm (tests/fixtures/limits/, MuJoCo twins with the
 * same frames and inertias as data/pendulum and data/double_pendulum, limited with MuJoCo's
 * default solref 0.02 1 and solimp 0.9 0.95 0.001) swing into their ranges for 2 s at h = 1 ms,
 * Euler in both; our gains are the default rule (docs/formats.md). The residual difference is the
 * models' (joint_limit.h): MuJoCo's constraint acceleration is (1 - d) a_free + d a_ref with an
 * impedance d of 0.9 to 0.95 (so its effective stiffness is d^2 k_a, 0.81 to 0.90 of ours,
 * and its damping d b_a), its force never pulls, and it starts exactly at the bound, where ours
 * starts a few w before it. The largest effect is the pull: leaving the bound, our damper holds
 * the joint back where MuJoCo's force lets go, so ours rebounds at 0.2 (pendulum) to 0.65 (arm
 * shoulder) of MuJoCo's speed; the overshoot differs by -9 % (pendulum) to +39 % (the arm, whose
 * joints push each other into their bounds), and after each bounce the phase error carries on
 * (max |dq| 0.16 and 0.29 rad over 2 s). The figures are printed and held to the measured values
 * with a margin: they pin the model, they do not make it MuJoCo's. With the
 * limits far away the limit force is exactly zero: the same trajectory to the bit as without a
 * limit, and MuJoCo's as in test_mujoco.c.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mujoco/mujoco.h>

#include "readfile.h"
#include "robot_json.h"
#include "robot_load.h"
#include "sid_internal.h"
#include "test_util.h"

Suite *limits_suite(void);

#define FIX "fixtures/limits/"
/* Relative difference step in q and in a limit's bounds: the softplus bends on the scale w = 1e-4,
 * and at the usual 1e-6 (tests/README.md) the difference's truncation error dominates (measured on one step:
 * 1.3e-5, 1.3e-7, 1.5e-8 relative at steps 1e-6, 1e-7, 3e-8, falling as the step squared
 * towards the adjoint). Elsewhere 1e-6, whose rounding error smaller steps would raise. */
#define SHARP 1e-7





/* ---- one step: adjoint and forward mode against central differences -------------------- */

typedef struct {
    sid_model *m;
    sid_workspace *ws;
    sid_integrator integ;
    double *theta;
    double q[64], v[64], u[64], wq[64], wv[64];
    double h;
} step_problem;

static double step_eval(step_problem *p)
{
    double q1[64], v1[64], L = 0;
    sid_error err = {0};
    ck_assert_int_eq(sid_step(p->m, p->theta, p->ws, p->integ, p->h, p->q, p->v, p->u, q1, v1, &err), SID_OK);
    for (int i = 0; i < sid_model_nq(p->m); i++) L += p->wq[i] * q1[i];
    for (int i = 0; i < sid_model_nv(p->m); i++) L += p->wv[i] * v1[i];
    return L;
}

/* Central difference in x with step rel * max(1, |x|). */
static double step_fd(step_problem *p, double *x, double rel)
{
    const double x0 = *x, e = rel * fmax(1, fabs(x0));
    *x = x0 + e;
    const double Lp = step_eval(p);
    *x = x0 - e;
    const double Lm = step_eval(p);
    *x = x0;
    return (Lp - Lm) / (2 * e);
}

/* A random robot (every parameter kind) whose moving joints all have limits, placed around the
 * state q: joint j penetrates its upper bound by 100 w (j % 4 == 0), its lower one by 3 w
 * (j % 4 == 1, no upper bound), both bounds 1 away (j % 4 == 2), its upper bound by 0 (j % 4 == 3,
 * at the knee, no lower bound). */
static void step_problem_make(step_problem *p, unsigned seed, sid_integrator integ)
{
    sid_robot_desc *d = tu_random_robot(seed, 6, TU_ALL);
    unsigned s = seed + 100;
    memset(p, 0, sizeof *p);
    const double w = SID_LIMIT_WIDTH;
    double qj[64];
    int k = 0;
    for (int j = 0; j < d->njoint; j++) {
        sid_joint_desc *jd = &d->joint[j];
        if (jd->type == SID_JOINT_FIXED) continue;
        const double q = qj[j] = tu_uniform(&s, -1.5, 1.5);
        switch (k % 4) {
        case 0: jd->has_limit_lower = jd->has_limit_upper = 1, jd->limit_upper = q - 100 * w, jd->limit_lower = q - 1; break;
        case 1: jd->has_limit_lower = 1, jd->limit_lower = q + 3 * w; break;
        case 2: jd->has_limit_lower = jd->has_limit_upper = 1, jd->limit_lower = q - 1, jd->limit_upper = q + 1; break;
        default: jd->has_limit_upper = 1, jd->limit_upper = q; break;
        }
        if (k % 2) jd->has_limit_stiffness = 1, jd->limit_stiffness = tu_uniform(&s, 50, 500);   /* else computed */
        if (k % 3 == 0) jd->has_limit_damping = 1, jd->limit_damping = tu_uniform(&s, 1, 10);
        k++;
    }
    sid_error err = {0};
    ck_assert_msg(sid_model_create(&p->m, &p->theta, d, &err) == SID_OK, "%s", err.msg);
    tu_desc_free(d);
    /* the state in the model's q order, each joint at the place its limits were set around */
    for (int i = 0; i < sid_model_ndof_joints(p->m); i++) {
        const int qa = sid_model_dof_joint_qadr(p->m, i), va = sid_model_dof_joint_vadr(p->m, i);
        p->q[qa] = qj[sid_model_dof_joint_desc(p->m, i)];
        p->v[va] = tu_uniform(&s, -2, 2);
        p->u[va] = tu_uniform(&s, -1, 1);
        p->wq[va] = tu_uniform(&s, -1, 1);
        p->wv[va] = tu_uniform(&s, -1, 1);
    }
    ck_assert_int_eq(sid_model_param_match(p->m, "joints.*.limit.stiffness", NULL), 6);
    ck_assert_int_eq(sid_model_param_match(p->m, "joints.*.limit.lower", NULL), 5);
    ck_assert_int_eq(sid_model_param_match(p->m, "joints.*.limit.upper", NULL), 4);
    p->ws = sid_workspace_create(p->m);
    p->integ = integ;
    p->h = 1e-3;   /* short enough that every joint stays in its regime over the step */
}

static void step_problem_free(step_problem *p)
{
    sid_workspace_free(p->ws);
    sid_model_free(p->m);
    sid_free(p->theta);
}

/* Measured worst relative errors: 1.3e-7 (euler, q at the knee), 6.7e-8 (rk4, a lower bound);
 * tolerance 1e-6 as test_gradient.c's (tests/README.md's error measure). */
static void step_vjp_check(sid_integrator integ, unsigned seed)
{
    step_problem p;
    step_problem_make(&p, seed, integ);
    const int nv = sid_model_nv(p.m), np = sid_model_nparam(p.m);
    double qbar[64] = {0}, vbar[64] = {0}, *thetabar = calloc((size_t)np, sizeof(double));
    sid_error err = {0};
    ck_assert_int_eq(sid_step_vjp(p.m, p.theta, p.ws, integ, p.h, p.q, p.v, p.u, p.wq, p.wv, qbar, vbar, thetabar, &err),
                     SID_OK);
    double worst = 0, limit_norm = 0;
    char where[256] = "none";
    for (int i = 0; i < nv; i++) {
        const double fq = step_fd(&p, &p.q[i], SHARP), fv = step_fd(&p, &p.v[i], 1e-6);
        const double eq = tu_rel_err(qbar[i], fq, 1e-9), ev = tu_rel_err(vbar[i], fv, 1e-9);
        if (eq > worst) worst = eq, snprintf(where, sizeof where, "q[%d]: %.10g vs fd %.10g", i, qbar[i], fq);
        if (ev > worst) worst = ev, snprintf(where, sizeof where, "v[%d]: %.10g vs fd %.10g", i, vbar[i], fv);
    }
    for (int j = 0; j < np; j++) {
        const int bound = sid_model_param(p.m, j)->kind == SID_P_LIMIT_LOWER || sid_model_param(p.m, j)->kind == SID_P_LIMIT_UPPER;
        const double num = step_fd(&p, &p.theta[j], bound ? SHARP : 1e-6), e = tu_rel_err(thetabar[j], num, 1e-9);
        if (e > worst)
            worst = e, snprintf(where, sizeof where, "%s: %.10g vs fd %.10g", sid_model_param(p.m, j)->name, thetabar[j], num);
        if (strstr(sid_model_param(p.m, j)->name, ".limit.")) limit_norm += thetabar[j] * thetabar[j];
    }
    fprintf(stderr, "limits: step vjp %s: worst relative error %.2e at %s\n", integ == SID_EULER ? "euler" : "rk4", worst,
            where);
    ck_assert_msg(sqrt(limit_norm) > 1e-3, "limit parameters' gradient %g: the limits are not engaged", sqrt(limit_norm));
    ck_assert_msg(worst <= 1e-6, "relative error %g at %s", worst, where);
    free(thetabar);
    step_problem_free(&p);
}

START_TEST(step_vjp_matches_fd)
{
    step_vjp_check(SID_EULER, 21);
    step_vjp_check(SID_RK4, 22);
}
END_TEST

/* w . (J xdot) by forward mode equals (J^T w) . xdot by the adjoint, to rounding (1e-10 relative,
 * as test_gradient.c: both are sums of the same products in another order). */
static void step_jvp_check(sid_integrator integ, unsigned seed)
{
    step_problem p;
    step_problem_make(&p, seed, integ);
    const int nv = sid_model_nv(p.m), np = sid_model_nparam(p.m);
    unsigned s = seed + 9;
    double qd[64], vd[64], qd0[64], vd0[64], scratch[9 * 64];
    double *thd = calloc((size_t)np, sizeof(double)), *thetabar = calloc((size_t)np, sizeof(double));
    for (int i = 0; i < nv; i++) qd0[i] = qd[i] = tu_uniform(&s, -1, 1), vd0[i] = vd[i] = tu_uniform(&s, -1, 1);
    for (int j = 0; j < np; j++) thd[j] = tu_uniform(&s, -1, 1) * fmax(0.01, fabs(p.theta[j]));
    sid_error err = {0};
    ck_assert_int_eq(sid_step_jvp(p.m, p.theta, p.ws, integ, p.h, p.q, p.v, p.u, 1, thd, qd, vd, scratch, &err), SID_OK);
    double qbar[64] = {0}, vbar[64] = {0};
    ck_assert_int_eq(sid_step_vjp(p.m, p.theta, p.ws, integ, p.h, p.q, p.v, p.u, p.wq, p.wv, qbar, vbar, thetabar, &err),
                     SID_OK);
    double fwd = 0, rev = 0;
    for (int i = 0; i < nv; i++) fwd += p.wq[i] * qd[i] + p.wv[i] * vd[i], rev += qbar[i] * qd0[i] + vbar[i] * vd0[i];
    for (int j = 0; j < np; j++) rev += thetabar[j] * thd[j];
    fprintf(stderr, "limits: step jvp %s: forward %.15g reverse %.15g\n", integ == SID_EULER ? "euler" : "rk4", fwd, rev);
    ck_assert_msg(fabs(fwd - rev) <= 1e-10 * (fabs(fwd) + fabs(rev)), "JVP %.15g vs VJP %.15g", fwd, rev);
    free(thd);
    free(thetabar);
    step_problem_free(&p);
}

START_TEST(step_jvp_matches_vjp)
{
    step_jvp_check(SID_EULER, 23);
    step_jvp_check(SID_RK4, 24);
}
END_TEST

/* The step loop allocates nothing, limits included. */
START_TEST(no_allocation_in_steps)
{
    step_problem p;
    step_problem_make(&p, 25, SID_EULER);
    const int np = sid_model_nparam(p.m);
    double *thetabar = calloc((size_t)np, sizeof(double)), qbar[64] = {0}, vbar[64] = {0}, q1[64], v1[64];
    double qd[64] = {0}, vd[64] = {0}, scratch[9 * 64];
    sid_error err = {0};
    const long before = sid_alloc_count();
    for (int integ = 0; integ < 2; integ++)
        for (int k = 0; k < 10; k++) {
            ck_assert_int_eq(sid_step(p.m, p.theta, p.ws, integ, p.h, p.q, p.v, p.u, q1, v1, &err), SID_OK);
            ck_assert_int_eq(sid_step_vjp(p.m, p.theta, p.ws, integ, p.h, p.q, p.v, p.u, p.wq, p.wv, qbar, vbar, thetabar,
                                          &err), SID_OK);
            ck_assert_int_eq(sid_step_jvp(p.m, p.theta, p.ws, integ, p.h, p.q, p.v, p.u, 1, thetabar, qd, vd, scratch, &err),
                             SID_OK);
        }
    ck_assert_int_eq(sid_alloc_count(), before);
    free(thetabar);
    step_problem_free(&p);
}
END_TEST

/* ---- a window of the pendulum: loss gradient, forward-mode Jacobian ---------------------- */

static void load(const char *path, sid_model **m, double **theta, cJSON **doc)
{
    sid_error err = {0};
    ck_assert_msg(robot_model(path, m, theta, doc, &err) == 0, "%s", err.msg);
}

/* Free joints mixed in and contact: a box on a free joint with a leg on a limited hip, the hip
 * 100 w past its upper bound, the foot 1 mm into the ground; one step's adjoint in the hip's q
 * and v and the limit's parameters against central differences, with compliant contact (Euler,
 * RK4) and hard contact (Euler). Measured worst: 2.3e-8; tolerance 1e-6 as above. */
static void box_check(sid_integrator integ, sid_contact_model contact)
{
    step_problem p;
    memset(&p, 0, sizeof p);
    load(FIX "box_leg.json", &p.m, &p.theta, NULL);
    sid_model_set_contact_model(p.m, contact);
    p.ws = sid_workspace_create(p.m);
    p.integ = integ;
    p.h = 1e-3;
    const double x0[8] = {0.01, -0.02, 0.1027, 0.99875, 0.02, 0.03, -0.0304, 0.4 + 100 * SID_LIMIT_WIDTH};
    const double v0[7] = {0.1, 0.05, -0.02, 0.1, -0.2, 0.05, 0.5};
    double nrm = 0;
    for (int i = 3; i < 7; i++) nrm += x0[i] * x0[i];
    for (int i = 0; i < 8; i++) p.q[i] = i >= 3 && i < 7 ? x0[i] / sqrt(nrm) : x0[i];
    unsigned s = 31;
    for (int i = 0; i < 7; i++) p.v[i] = v0[i], p.wq[i] = tu_uniform(&s, -1, 1), p.wv[i] = tu_uniform(&s, -1, 1);
    p.wq[7] = tu_uniform(&s, -1, 1);
    p.u[6] = 0.1;
    const int np = sid_model_nparam(p.m);
    double qbar[64] = {0}, vbar[64] = {0}, *thetabar = calloc((size_t)np, sizeof(double));
    sid_error err = {0};
    ck_assert_msg(sid_step_vjp(p.m, p.theta, p.ws, integ, p.h, p.q, p.v, p.u, p.wq, p.wv, qbar, vbar, thetabar, &err) ==
                      SID_OK, "%s", err.msg);
    double worst = 0;
    char where[256] = "none";
    const double fq = step_fd(&p, &p.q[7], SHARP), fv = step_fd(&p, &p.v[6], 1e-6);
    const double eq = tu_rel_err(qbar[7], fq, 1e-9), ev = tu_rel_err(vbar[6], fv, 1e-9);
    if (eq > worst) worst = eq, snprintf(where, sizeof where, "q.hip %.10g vs fd %.10g", qbar[7], fq);
    if (ev > worst) worst = ev, snprintf(where, sizeof where, "v.hip %.10g vs fd %.10g", vbar[6], fv);
    for (int j = 0; j < np; j++) {
        const sid_param_info *pi = sid_model_param(p.m, j);
        if (pi->row->block != SID_BLOCK_LIMIT_LOWER && pi->row->block != SID_BLOCK_LIMIT_UPPER &&
            pi->row->block != SID_BLOCK_LIMIT)
            continue;
        const int bound = pi->kind == SID_P_LIMIT_LOWER || pi->kind == SID_P_LIMIT_UPPER;
        const double num = step_fd(&p, &p.theta[j], bound ? SHARP : 1e-6), e = tu_rel_err(thetabar[j], num, 1e-9);
        if (e > worst) worst = e, snprintf(where, sizeof where, "%s %.10g vs fd %.10g", pi->name, thetabar[j], num);
        if (pi->kind != SID_P_LIMIT_LOWER) ck_assert_msg(fabs(thetabar[j]) > 1e-6, "%s: gradient %g", pi->name, thetabar[j]);
    }
    fprintf(stderr, "limits: box and leg, %s, %s contact: worst relative error %.2e at %s\n",
            integ == SID_EULER ? "euler" : "rk4", contact == SID_CONTACT_HARD ? "hard" : "compliant", worst, where);
    ck_assert_msg(worst <= 1e-6, "relative error %g at %s", worst, where);
    free(thetabar);
    step_problem_free(&p);
}

START_TEST(free_joint_and_contact)
{
    box_check(SID_EULER, SID_CONTACT_COMPLIANT);
    box_check(SID_RK4, SID_CONTACT_COMPLIANT);
    box_check(SID_EULER, SID_CONTACT_HARD);
}
END_TEST

/* Largest |q - bound| past a bound of dof 0 over the log (0: never reached). */
static double log_overshoot(const sid_traj *tr, double lo, double hi)
{
    double o = 0;
    for (int k = 0; k < tr->n; k++) o = fmax(o, fmax(tr->q[(size_t)k * tr->nq] - hi, lo - tr->q[(size_t)k * tr->nq]));
    return o;
}

/* The pendulum with its limits at +-bound, driven by 1.5 N·m of sines for 0.6 s (one window).
 * Central differences with step 1e-7 (not the usual 1e-6): the softplus bends on the scale
 * w = 1e-4, and the difference's truncation error, measured on d loss / d upper (Euler), falls
 * as the step squared, 2.6e-4, 2.6e-6, 2.6e-8 relative at steps 1e-5, 1e-6, 1e-7, towards the
 * adjoint; at 1e-7 the worst is 1.1e-7 (RK4, lower), so 1e-6 is the tolerance. */
static void window_check(sid_integrator integ, double bound, int engaged)
{
    sid_model *m;
    double *theta;
    load(FIX "pendulum.json", &m, &theta, NULL);
    const int il = sid_model_param_find(m, "joints.hinge.limit.lower"), iu = sid_model_param_find(m, "joints.hinge.limit.upper");
    const int ik = sid_model_param_find(m, "joints.hinge.limit.stiffness"), ib = sid_model_param_find(m, "joints.hinge.limit.damping");
    ck_assert(il >= 0 && iu >= 0 && ik >= 0 && ib >= 0);
    theta[il] = -bound, theta[iu] = bound;
    sid_traj *tr = tu_synth_log(m, theta, 601, 1e-3, 1.5, 7);
    const double over = log_overshoot(tr, -bound, bound);
    ck_assert_msg(engaged ? over > 1e-3 : over == 0, "overshoot %g past +-%g", over, bound);
    sid_loss_opts o;
    sid_loss_opts_defaults(&o);
    o.window = 0;
    o.threads = 1;
    o.sim.integrator = integ;
    o.sim.substeps = 1;
    sid_problem *p;
    sid_error err = {0};
    ck_assert_msg(sid_problem_create(&p, m, (const sid_traj *const *)&tr, 1, &o, &err) == SID_OK, "%s", err.msg);
    const int np = sid_model_nparam(m), nx = sid_model_nq(m) + sid_model_nv(m);
    ck_assert_int_eq(sid_problem_nwindows(p), 1);
    /* theta off the truth, so that the residuals and the gradient are not zero */
    theta[ik] *= 1.3, theta[ib] *= 0.7, theta[iu] += 0.002, theta[il] -= 0.001;
    double x0[2], *grad = calloc((size_t)np, sizeof(double)), gx0[2], loss;
    sid_problem_start_states(p, theta, x0);
    x0[1] += 0.05;
    ck_assert_int_eq(sid_problem_loss(p, theta, x0, &loss, grad, gx0, &err), SID_OK);
    const int check[4] = {il, iu, ik, ib};
    double worst = 0;
    for (int c = 0; c < 4 + nx; c++) {
        double *x = c < 4 ? &theta[check[c]] : &x0[c - 4], x00 = *x, e = 1e-7 * fmax(1, fabs(x00)), lp, lm;
        *x = x00 + e;
        ck_assert_int_eq(sid_problem_loss(p, theta, x0, &lp, NULL, NULL, &err), SID_OK);
        *x = x00 - e;
        ck_assert_int_eq(sid_problem_loss(p, theta, x0, &lm, NULL, NULL, &err), SID_OK);
        *x = x00;
        const double num = (lp - lm) / (2 * e), an = c < 4 ? grad[check[c]] : gx0[c - 4];
        const double rel = tu_rel_err(an, num, 1e-12);
        fprintf(stderr, "limits: window %s bound %g: d loss / d %s: adjoint %.10g fd %.10g rel %.1e\n",
                integ == SID_EULER ? "euler" : "rk4", bound, c < 4 ? sid_model_param(m, check[c])->name : c == 4 ? "q0" : "v0",
                an, num, rel);
        worst = fmax(worst, rel);
        if (!engaged && c < 4) ck_assert_msg(an == 0, "limit far away, yet a gradient %g", an);
        if (engaged) ck_assert_msg(fabs(an) > 1e-8, "gradient %g: too small to test", an);
    }
    ck_assert_msg(worst <= 1e-6, "window gradient: relative error %g", worst);
    /* forward mode: J^T r / nres is the gradient (loss = 1/2 |r|^2 / nres) */
    const int rows = sid_problem_window_rows(p, 0), idx[4] = {il, iu, ik, ib};
    double *r = malloc(sizeof(double) * (size_t)rows), *J = malloc(sizeof(double) * (size_t)rows * 4);
    ck_assert_int_eq(sid_problem_window_jacobian(p, theta, x0, 0, 4, idx, r, J, &err), SID_OK);
    for (int c = 0; c < 4; c++) {
        double g = 0;
        for (int i = 0; i < rows; i++) g += J[(size_t)i * 4 + c] * r[i];
        g /= sid_problem_nresiduals(p);
        ck_assert_msg(fabs(g - grad[idx[c]]) <= 1e-9 * fabs(grad[idx[c]]) + 1e-300, "%s: forward %.15g adjoint %.15g",
                      sid_model_param(m, idx[c])->name, g, grad[idx[c]]);
    }
    free(r);
    free(J);
    free(grad);
    sid_problem_free(p);
    sid_traj_free(tr);
    sid_model_free(m);
    sid_free(theta);
}

START_TEST(window_gradient_in_the_limit)
{
    window_check(SID_EULER, 0.3, 1);
    window_check(SID_RK4, 0.3, 1);
}
END_TEST

START_TEST(window_gradient_far_from_the_limit)
{
    window_check(SID_EULER, 3, 0);
    window_check(SID_RK4, 3, 0);
}
END_TEST

/* ---- against MuJoCo 2.2.2 ------------------------------------------------------------------ */

/* A MuJoCo twin and our model of the same fixture, dofs matched by joint name. */
typedef struct {
    sid_model *m;
    double *theta;
    sid_workspace *ws;
    mjModel *mm;
    mjData *md;
    int nv, dadr[8], jid[8], act[8];
    double gain[8];
} twin;

static void twin_load(twin *t, const char *json, const char *xml)
{
    char errstr[1000] = "";
    memset(t, 0, sizeof *t);
    load(json, &t->m, &t->theta, NULL);
    t->ws = sid_workspace_create(t->m);
    t->mm = mj_loadXML(xml, NULL, errstr, sizeof errstr);
    ck_assert_msg(t->mm != NULL, "%s: %s", xml, errstr);
    t->md = mj_makeData(t->mm);
    t->nv = sid_model_nv(t->m);
    ck_assert_int_eq(t->mm->nv, t->nv);
    for (int k = 0; k < t->nv; k++) {
        t->jid[k] = mj_name2id(t->mm, mjOBJ_JOINT, sid_model_dof_joint_name(t->m, k));
        ck_assert_int_ge(t->jid[k], 0);
        t->dadr[k] = t->mm->jnt_dofadr[t->jid[k]];
        t->act[k] = mj_name2id(t->mm, mjOBJ_ACTUATOR, sid_model_dof_joint_name(t->m, k));
        t->gain[k] = t->act[k] >= 0 ? t->mm->actuator_gear[6 * t->act[k]] : 0;
    }
}

static void twin_free(twin *t)
{
    mj_deleteData(t->md);
    mj_deleteModel(t->mm);
    sid_workspace_free(t->ws);
    sid_model_free(t->m);
    sid_free(t->theta);
}

/* Our theta's bounds of dof k (lower, upper; +-HUGE_VAL where unbounded). */
static void bounds(const twin *t, int k, double *lo, double *hi)
{
    char name[160];
    snprintf(name, sizeof name, "joints.%s.limit.lower", sid_model_dof_joint_name(t->m, k));
    const int il = sid_model_param_find(t->m, name);
    snprintf(name, sizeof name, "joints.%s.limit.upper", sid_model_dof_joint_name(t->m, k));
    const int iu = sid_model_param_find(t->m, name);
    *lo = il >= 0 ? t->theta[il] : -HUGE_VAL;
    *hi = iu >= 0 ? t->theta[iu] : HUGE_VAL;
}

typedef struct {
    double maxdq;            /* max |q_ours - q_mujoco| over the run and the dofs */
    double over[2][8];       /* [ours, mujoco] largest penetration past a bound, per dof */
    double rebound[2][8];    /* [ours, mujoco] |velocity| when first leaving a bound, per dof */
    double first[2][8];      /* [ours, mujoco] time of that first exit (-1: none) */
} agreement;

/* Both from (q0, v0) with the commands amp sin(2 pi f_k t + phi_k) at the joint, 2 s at 1 ms,
 * Euler; q_ours_out (2000 x nv, may be NULL) receives our trajectory. */
static agreement twin_run(twin *t, const double *q0, const double *v0, double amp, double *q_ours_out)
{
    agreement a = {0};
    double q[8], v[8], u[8], lo[8], hi[8];
    int inside[2][8] = {{0}}, left[2][8] = {{0}};
    sid_error err = {0};
    mj_resetData(t->mm, t->md);
    for (int k = 0; k < t->nv; k++) {
        q[k] = q0[k], v[k] = v0[k];
        t->md->qpos[t->mm->jnt_qposadr[t->jid[k]]] = q0[k];
        t->md->qvel[t->dadr[k]] = v0[k];
        bounds(t, k, &lo[k], &hi[k]);
        for (int s = 0; s < 2; s++) a.first[s][k] = -1, a.over[s][k] = -HUGE_VAL;
    }
    for (int n = 0; n < 2000; n++) {
        const double tt = n * 1e-3;
        for (int k = 0; k < t->nv; k++) {
            const double tau = t->act[k] >= 0 ? amp * sin(6.283185307179586 * (0.6 + 0.45 * k) * tt + 0.8 * k) : 0;
            u[k] = t->act[k] >= 0 ? tau / t->gain[k] : 0;
            if (t->act[k] >= 0) t->md->ctrl[t->act[k]] = u[k];
        }
        ck_assert_int_eq(sid_step(t->m, t->theta, t->ws, SID_EULER, 1e-3, q, v, u, q, v, &err), SID_OK);
        mj_step(t->mm, t->md);
        for (int k = 0; k < t->nv; k++) {
            const double qm = t->md->qpos[t->mm->jnt_qposadr[t->jid[k]]], vm = t->md->qvel[t->dadr[k]];
            const double qs[2] = {q[k], qm}, vs[2] = {v[k], vm};
            a.maxdq = fmax(a.maxdq, fabs(q[k] - qm));
            for (int s = 0; s < 2; s++) {
                const double pen = fmax(qs[s] - hi[k], lo[k] - qs[s]);
                a.over[s][k] = fmax(a.over[s][k], pen);
                if (pen > 0) inside[s][k] = 1;
                else if (inside[s][k] && !left[s][k]) left[s][k] = 1, a.rebound[s][k] = fabs(vs[s]), a.first[s][k] = tt;
            }
        }
        if (q_ours_out) memcpy(q_ours_out + (size_t)n * (size_t)t->nv, q, sizeof(double) * (size_t)t->nv);
    }
    return a;
}

static void print_agreement(const char *what, const twin *t, const agreement *a)
{
    fprintf(stderr, "limits: mujoco %s: max |dq| %.3e over 2 s\n", what, a->maxdq);
    for (int k = 0; k < t->nv; k++)
        if (a->over[1][k] > 0)
            fprintf(stderr,
                    "limits: mujoco %s %s: overshoot ours %.4e mujoco %.4e (%+.1f %%), first rebound ours %.4f mujoco "
                    "%.4f (ratio %.2f) at %.3f / %.3f s\n",
                    what, sid_model_dof_joint_name(t->m, k), a->over[0][k], a->over[1][k],
                    100 * (a->over[0][k] / a->over[1][k] - 1), a->rebound[0][k], a->rebound[1][k],
                    a->rebound[0][k] / a->rebound[1][k], a->first[0][k], a->first[1][k]);
}

/* Bounds, set from the measured figures with a margin: max |dq| <= tol_dq; for every dof that
 * reaches a bound, |overshoot ours / MuJoCo's - 1| <= tol_over and the ratio of the first
 * rebound speeds within [rlo, rhi] (ours leaves slower: its damper pulls, MuJoCo's does not). */
static void near_limit(const char *json, const char *xml, const double *q0, const double *v0, double amp, double tol_dq,
                       double tol_over, double rlo, double rhi)
{
    twin t;
    twin_load(&t, json, xml);
    const agreement a = twin_run(&t, q0, v0, amp, NULL);
    print_agreement(json, &t, &a);
    int reached = 0;
    for (int k = 0; k < t.nv; k++) {
        const char *name = sid_model_dof_joint_name(t.m, k);
        if (a.over[1][k] <= 0) continue;
        reached++;
        ck_assert_msg(a.over[0][k] > 0, "%s: MuJoCo's reaches its limit, ours not", name);
        ck_assert_msg(fabs(a.over[0][k] / a.over[1][k] - 1) <= tol_over, "%s: overshoot %g vs %g", name, a.over[0][k],
                      a.over[1][k]);
        ck_assert_msg(a.first[0][k] > 0 && a.first[1][k] > 0, "%s: never left the limit", name);
        const double r = a.rebound[0][k] / a.rebound[1][k];
        ck_assert_msg(r >= rlo && r <= rhi, "%s: rebound %g vs %g", name, a.rebound[0][k], a.rebound[1][k]);
    }
    ck_assert_int_ge(reached, 1);
    ck_assert_msg(a.maxdq <= tol_dq, "max |dq| %g", a.maxdq);
    twin_free(&t);
}

/* Measured: max |dq| 0.156 rad; overshoot -9.1 %; first rebound 0.21 of MuJoCo's. */
START_TEST(pendulum_into_its_limits)
{
    const double q0[1] = {0}, v0[1] = {4};
    near_limit(FIX "pendulum.json", FIX "pendulum.xml", q0, v0, 0, 0.25, 0.15, 0.1, 0.4);
}
END_TEST

/* Measured: max |dq| 0.290 rad; overshoot +39 % (shoulder), +29 % (elbow); first rebound 0.65
 * (shoulder) and 6.7 (elbow, driven, and thrown by the shoulder's bounce) times MuJoCo's. */
START_TEST(arm_into_its_limits)
{
    const double q0[2] = {0, 0}, v0[2] = {3, 2};
    near_limit(FIX "arm2.json", FIX "arm2.xml", q0, v0, 1, 0.45, 0.6, 0.3, 10);
}
END_TEST

/* Limits moved to +-3 rad (MuJoCo's range too), which neither swing comes near: our trajectory
 * is the one without limits to the bit (S and sigma underflow to 0 beyond 745 w; at 10 w they
 * would still be 4.5e-5 w and 4.5e-5), and MuJoCo's within 1e-6 rad (test_mujoco.c's bound). */
static void far_from_limit(const char *json, const char *xml, const double *q0, const double *v0, double amp)
{
    twin t, free_t;
    twin_load(&t, json, xml);
    twin_load(&free_t, json, xml);
    sid_robot_desc d;
    sid_error err = {0};
    ck_assert_int_eq(robot_json_load(json, &d, NULL, &err), 0);
    for (int j = 0; j < d.njoint; j++) d.joint[j].has_limit_lower = d.joint[j].has_limit_upper = 0;
    sid_model_free(free_t.m);
    sid_free(free_t.theta);
    ck_assert_int_eq(sid_model_create(&free_t.m, &free_t.theta, &d, &err), SID_OK);
    robot_desc_free(&d);
    ck_assert_int_eq(sid_model_param_match(free_t.m, "*.limit.*", NULL), 0);
    for (int k = 0; k < t.nv; k++) {
        char name[160];
        for (int side = 0; side < 2; side++) {
            snprintf(name, sizeof name, "joints.%s.limit.%s", sid_model_dof_joint_name(t.m, k), side ? "upper" : "lower");
            const int i = sid_model_param_find(t.m, name);
            if (i >= 0) t.theta[i] = side ? 3 : -3;
        }
        t.mm->jnt_range[2 * t.jid[k]] = -3;
        t.mm->jnt_range[2 * t.jid[k] + 1] = 3;
    }
    double *qa = malloc(sizeof(double) * 2000 * (size_t)t.nv), *qb = malloc(sizeof(double) * 2000 * (size_t)t.nv);
    const agreement a = twin_run(&t, q0, v0, amp, qa);
    twin_run(&free_t, q0, v0, amp, qb);
    double same = 0;
    for (int i = 0; i < 2000 * t.nv; i++) same = fmax(same, fabs(qa[i] - qb[i]));
    fprintf(stderr, "limits: far from the limits, %s: max |dq| %.3e against MuJoCo, %.3e against no limit\n", json,
            a.maxdq, same);
    for (int k = 0; k < t.nv; k++) ck_assert_msg(a.over[0][k] < -0.5 && a.over[1][k] < -0.5, "came near +-3");
    ck_assert_msg(same <= 1e-12, "limits far away changed the trajectory by %g", same);
    ck_assert_msg(a.maxdq <= 1e-6, "against MuJoCo: %g", a.maxdq);
    free(qa);
    free(qb);
    twin_free(&t);
    twin_free(&free_t);
}

START_TEST(far_limits_change_nothing)
{
    const double p0[1] = {0}, pv[1] = {4}, a0[2] = {0, 0}, av[2] = {3, 2};
    far_from_limit(FIX "pendulum.json", FIX "pendulum.xml", p0, pv, 0);
    far_from_limit(FIX "arm2.json", FIX "arm2.xml", a0, av, 1);
}
END_TEST

/* Resting on a bound: the pendulum's range moved to [0.3, 1] rad, released at rest at 0.3 rad,
 * gravity pressing it onto the lower bound; after 2 s both have settled. The statics differ by
 * the model: ours balances the load a0 = tau_g / I with the full spring, k_a r = a0, MuJoCo's
 * with (1 - d) a0 = d^2 k_a r at its impedance d(r) (solimp 0.9 0.95 0.001 0.5 2), so ours sinks
 * d^2 / (1 - d) times deeper: 8.8 at MuJoCo's 0.26 mrad (d = 0.907), 18 once d reaches 0.95.
 * Measured: ours 2.24e-3 rad (a0 / k_a predicts 2.26e-3: the softplus and cos q make the rest),
 * MuJoCo's 2.57e-4 rad, ratio 8.7 (predicted 8.8). Held within 5 % of both predictions. */
START_TEST(resting_on_a_bound)
{
    twin t;
    twin_load(&t, FIX "pendulum.json", FIX "pendulum.xml");
    const int il = sid_model_param_find(t.m, "joints.hinge.limit.lower"), iu = sid_model_param_find(t.m, "joints.hinge.limit.upper");
    t.theta[il] = 0.3, t.theta[iu] = 1;
    t.mm->jnt_range[2 * t.jid[0]] = 0.3;
    t.mm->jnt_range[2 * t.jid[0] + 1] = 1;
    const double q0[1] = {0.3}, v0[1] = {0};
    double *q = malloc(sizeof(double) * 2000);
    twin_run(&t, q0, v0, 0, q);
    const double r_ours = 0.3 - q[1999], r_mj = 0.3 - t.md->qpos[0];
    /* ours: gravity's torque at the bound over the inertia (k / k_a), over k_a */
    double tau[1], zero[1] = {0};
    const double qb[1] = {0.3}, ka = 1 / (0.95 * 0.95 * 0.02 * 0.02);
    sid_inverse_dynamics(&(sid_fd_point){t.m, t.theta, t.ws, sid_contact_source(t.m), qb, zero, NULL, 0, 0}, zero, tau);
    const double I = t.theta[sid_model_param_find(t.m, "joints.hinge.limit.stiffness")] / ka;
    const double predicted = tau[0] / I / ka;
    /* MuJoCo's impedance at its penetration (engine_core_constraint.c, getimpedance) */
    const double x = r_mj / 0.001, y = x < 0.5 ? x * x / 0.5 : 1 - (1 - x) * (1 - x) / 0.5, d = 0.9 + y * (0.95 - 0.9);
    fprintf(stderr, "limits: resting on a bound: penetration ours %.4e (predicted %.4e) mujoco %.4e (d %.4f), ratio %.2f "
                    "(predicted %.2f)\n",
            r_ours, predicted, r_mj, d, r_ours / r_mj, d * d / (1 - d));
    ck_assert_msg(fabs(r_ours / predicted - 1) < 0.05, "ours %g, predicted %g", r_ours, predicted);
    ck_assert_msg(r_mj > 0 && x < 1 && fabs(r_ours / r_mj / (d * d / (1 - d)) - 1) < 0.05, "ratio %g", r_ours / r_mj);
    free(q);
    twin_free(&t);
}
END_TEST

/* ---- loading and writing robot.json ----------------------------------------------------------- */

/* A one-joint robot whose joint has the given type and extra members. */
static int parse(const char *type, const char *extra, sid_robot_desc *d, cJSON **doc, sid_error *err)
{
    char text[1024];
    snprintf(text, sizeof text,
             "{ \"links\": [ { \"name\": \"base\" }, { \"name\": \"pole\", \"mass\": 1, \"com\": [0, 0, -0.2],\n"
             "    \"inertia\": { \"ixx\": 0.01, \"iyy\": 0.01, \"izz\": 0.002 } } ],\n"
             "  \"joints\": [ { \"name\": \"hinge\", \"type\": \"%s\", \"parent\": \"base\", \"child\": \"pole\"%s%s } ] }\n",
             type, *extra ? ", " : "", extra);
    return robot_json_parse("r.json", text, strlen(text), d, doc, err);
}

START_TEST(bad_limits_are_named)
{
    static const struct {
        const char *type, *extra, *msg;
    } bad[] = {
        {"revolute", "\"limit\": { \"lower\": 1, \"upper\": 0.5 }",
         "r.json: joints[0].limit: expected lower <= upper, got lower 1 > upper 0.5"},
        {"revolute", "\"limit\": { \"upper\": 0.5, \"stiffness\": -1 }",
         "r.json: joints[0].limit.stiffness: expected a non-negative number, got -1"},
        {"prismatic", "\"limit\": { \"lower\": 0, \"damping\": -0.5 }",
         "r.json: joints[0].limit.damping: expected a non-negative number, got -0.5"},
        {"revolute", "\"limit\": { \"lower\": \"a\" }", "r.json: joints[0].limit.lower: expected a finite number, got"},
        {"revolute", "\"limit\": { \"upper\": 1, \"effort\": -2 }",
         "r.json: joints[0].limit.effort: expected a non-negative number, got -2"},
        {"revolute", "\"limit\": { \"upper\": 1, \"velocity\": true }",
         "r.json: joints[0].limit.velocity: expected a non-negative number, got"},
        {"revolute", "\"limit\": [0, 1]", "r.json: joints[0].limit: expected an object, got"},
        {"fixed", "\"limit\": { \"lower\": 0, \"upper\": 1 }", "r.json: joints[0].limit: expected no limit on a fixed joint"},
        {"free", "\"limit\": { \"lower\": 0, \"upper\": 1 }", "r.json: joints[0].limit: a free joint has no limit"},
    };
    for (size_t c = 0; c < sizeof bad / sizeof bad[0]; c++) {
        sid_robot_desc d;
        sid_error err = {0};
        ck_assert_msg(parse(bad[c].type, bad[c].extra, &d, NULL, &err) != 0, "case %zu loaded", c);
        fprintf(stderr, "limits: %s\n", err.msg);
        ck_assert_int_eq(err.status, SID_ERR_INPUT);
        ck_assert_msg(strncmp(err.msg, bad[c].msg, strlen(bad[c].msg)) == 0, "case %zu: %s", c, err.msg);
    }
    /* core says the same of a theta a caller (a fit, --set) made: lower <= upper */
    sid_robot_desc d;
    sid_model *m;
    double *theta;
    sid_error err = {0};
    ck_assert_int_eq(parse("revolute", "\"limit\": { \"lower\": -1, \"upper\": 1 }", &d, NULL, &err), 0);
    ck_assert_int_eq(sid_model_create(&m, &theta, &d, &err), SID_OK);
    theta[sid_model_param_find(m, "joints.hinge.limit.lower")] = 2;
    ck_assert_int_eq(sid_model_check_theta(m, theta, &err), SID_ERR_INPUT);
    ck_assert_str_eq(err.msg, "joints[0].limit: expected lower <= upper, got lower 2 > upper 1");
    sid_model_free(m);
    sid_free(theta);
    robot_desc_free(&d);
}
END_TEST

/* The parameters a limit makes, their units, and the computed gains against their rule worked by
 * hand: the pendulum's hinge (axis y through the origin) has I = iyy + m (x^2 + z^2) + armature
 * = 0.025 + 0.8 (0.01^2 + 0.3^2) + 0.002 = 0.09908 kg m^2, so k = I / (0.95 * 0.02)^2 and
 * b = 2 I / (0.95 * 0.02). Given gains are kept; one-sided limits have one bound. */
START_TEST(limit_parameters)
{
    sid_model *m;
    double *theta;
    load(FIX "pendulum.json", &m, &theta, NULL);
    static const char *const names[4][2] = {{"joints.hinge.limit.lower", "rad"}, {"joints.hinge.limit.upper", "rad"},
                                            {"joints.hinge.limit.stiffness", "N*m/rad"},
                                            {"joints.hinge.limit.damping", "N*m*s/rad"}};
    int at[4];
    for (int k = 0; k < 4; k++) {
        at[k] = sid_model_param_find(m, names[k][0]);
        ck_assert_msg(at[k] >= 0, "%s missing", names[k][0]);
        ck_assert_str_eq(sid_model_param(m, at[k])->unit, names[k][1]);
    }
    const double I = 0.025 + 0.8 * (0.01 * 0.01 + 0.3 * 0.3) + 0.002, tc = 0.95 * 0.02;
    fprintf(stderr, "limits: pendulum gains %.15g %.15g, by hand %.15g %.15g\n", theta[at[2]], theta[at[3]], I / (tc * tc),
            2 * I / tc);
    ck_assert(theta[at[0]] == -0.5 && theta[at[1]] == 0.5);
    ck_assert_msg(fabs(theta[at[2]] / (I / (tc * tc)) - 1) < 1e-13, "stiffness %.17g", theta[at[2]]);
    ck_assert_msg(fabs(theta[at[3]] / (2 * I / tc) - 1) < 1e-13, "damping %.17g", theta[at[3]]);
    sid_model_free(m);
    sid_free(theta);

    sid_robot_desc d;
    sid_error err = {0};
    ck_assert_int_eq(parse("prismatic", "\"limit\": { \"upper\": 0.1, \"stiffness\": 1000, \"effort\": 5 }", &d, NULL, &err),
                     0);
    ck_assert(d.joint[0].limit_effort == 5 && d.joint[0].limit_velocity == -1);
    ck_assert_int_eq(sid_model_create(&m, &theta, &d, &err), SID_OK);
    ck_assert_int_eq(sid_model_param_match(m, "*.limit.*", NULL), 3);
    ck_assert_int_lt(sid_model_param_find(m, "joints.hinge.limit.lower"), 0);
    ck_assert(theta[sid_model_param_find(m, "joints.hinge.limit.stiffness")] == 1000);
    ck_assert_str_eq(sid_model_param(m, sid_model_param_find(m, "joints.hinge.limit.damping"))->unit, "N*s/m");
    /* a slide's inertia is its mass: b = 2 m / (dmax tc) */
    ck_assert(fabs(theta[sid_model_param_find(m, "joints.hinge.limit.damping")] / (2 * 1.0 / tc) - 1) < 1e-13);
    sid_model_free(m);
    sid_free(theta);
    robot_desc_free(&d);
}
END_TEST

/* The text robot_json_fitted writes for theta (checked to keep the file's layout). */
static char *fitted_text(const char *path, const cJSON *doc, const sid_model *m, const double *theta)
{
    sid_error err = {0};
    cJSON *out = robot_json_fitted(path, doc, m, theta, &err);
    ck_assert_msg(out != NULL, "%s", err.msg);
    ck_assert_msg(cJSON_IsRaw(out), "the file's layout was not kept");
    char *text = strdup(out->valuestring);
    cJSON_Delete(out);
    return text;
}

/* theta of the robot.json text (its gains computed again where absent). */
static double *reload(const char *text, int np)
{
    sid_robot_desc d;
    sid_model *m;
    double *theta;
    sid_error err = {0};
    ck_assert_msg(robot_json_parse("fitted.json", text, strlen(text), &d, NULL, &err) == 0, "%s", err.msg);
    ck_assert_msg(sid_model_create(&m, &theta, &d, &err) == SID_OK, "%s", err.msg);
    ck_assert_int_eq(sid_model_nparam(m), np);
    robot_desc_free(&d);
    sid_model_free(m);
    return theta;
}

/* Absent, computed gains round-trip: written unchanged, the file is the same to the byte; a
 * changed mass (which moves what an absent gain would be on reload) or a changed gain writes the
 * gains the model simulated with, and the written file reads back to theta to the bit. */
START_TEST(written_limits_round_trip)
{
    static const char *const files[] = {FIX "pendulum.json", FIX "arm2.json"};
    for (int f = 0; f < 2; f++) {
        sid_model *m;
        double *theta;
        cJSON *doc;
        load(files[f], &m, &theta, &doc);
        const int np = sid_model_nparam(m);
        size_t len;
        sid_error err = {0};
        char *orig = readfile(files[f], &len, &err);
        ck_assert_ptr_nonnull(orig);
        char *same = fitted_text(files[f], doc, m, theta);
        ck_assert_msg(strcmp(same, orig) == 0, "%s: not byte-identical:\n%s", files[f], same);
        ck_assert_ptr_null(strstr(same, "stiffness"));
        for (int change = 0; change < 2; change++) {
            double *t2 = malloc(sizeof(double) * (size_t)np);
            memcpy(t2, theta, sizeof(double) * (size_t)np);
            if (change == 0) t2[sid_model_param_find(m, f ? "links.upper.mass" : "links.pole.mass")] *= 1.1;
            else t2[sid_model_param_find(m, f ? "joints.elbow.limit.damping" : "joints.hinge.limit.damping")] *= 0.5;
            char *text = fitted_text(files[f], doc, m, t2);
            double *back = reload(text, np);
            ck_assert_msg(memcmp(back, t2, sizeof(double) * (size_t)np) == 0, "%s: change %d did not read back:\n%s",
                          files[f], change, text);
            ck_assert_ptr_nonnull(strstr(text, "\"damping\""));
            sid_free(back);
            free(text);
            free(t2);
        }
        free(same);
        free(orig);
        cJSON_Delete(doc);
        sid_model_free(m);
        sid_free(theta);
    }
}
END_TEST

/* ---- recovery ------------------------------------------------------------------------------ */

/* The pendulum's limit at +-0.3 rad, its stiffness and damping the computed ones, the log (1.5 s
 * at 1 ms, 1.5 N m of sines, Euler) hits both bounds; a fit from twice the stiffness and half the
 * damping brings both back within 1e-6 relative (noise-free: measured in the message). */
START_TEST(gains_recovered)
{
    sid_model *m;
    double *theta;
    load(FIX "pendulum.json", &m, &theta, NULL);
    const int np = sid_model_nparam(m);
    const int il = sid_model_param_find(m, "joints.hinge.limit.lower"), iu = sid_model_param_find(m, "joints.hinge.limit.upper");
    const int idx[2] = {sid_model_param_find(m, "joints.hinge.limit.stiffness"),
                        sid_model_param_find(m, "joints.hinge.limit.damping")};
    theta[il] = -0.3, theta[iu] = 0.3;
    double *truth = malloc(sizeof(double) * (size_t)np);
    memcpy(truth, theta, sizeof(double) * (size_t)np);
    sid_traj *tr = tu_synth_log(m, truth, 1501, 1e-3, 1.5, 11);
    ck_assert(log_overshoot(tr, -0.3, 0.3) > 1e-3);
    theta[idx[0]] *= 2, theta[idx[1]] *= 0.5;
    sid_loss_opts o;
    sid_loss_opts_defaults(&o);
    o.window = 0.5;
    o.sim.substeps = 1;
    sid_problem *p;
    sid_error err = {0};
    ck_assert_msg(sid_problem_create(&p, m, (const sid_traj *const *)&tr, 1, &o, &err) == SID_OK, "%s", err.msg);
    sid_fit_opts fo;
    sid_fit_opts_defaults(&fo);
    const double lo[2] = {0, 0}, hi[2] = {HUGE_VAL, HUGE_VAL};
    fo.nfree = 2, fo.idx = idx, fo.lo = lo, fo.hi = hi;
    fo.ftol_rel = 1e-15;
    sid_fit_result res;
    ck_assert_msg(sid_fit(p, theta, NULL, &fo, &res, &err) == SID_OK, "%s", err.msg);
    for (int k = 0; k < 2; k++) {
        const double e = fabs(theta[idx[k]] / truth[idx[k]] - 1);
        fprintf(stderr, "limits: recovery %s: truth %.10g fitted %.10g error %.2e (loss %.2e -> %.2e, %d iterations)\n",
                sid_model_param(m, idx[k])->name, truth[idx[k]], theta[idx[k]], e, res.loss0, res.loss, res.iterations);
        ck_assert_msg(e <= 1e-6, "%s: relative error %g", sid_model_param(m, idx[k])->name, e);
    }
    sid_problem_free(p);
    sid_traj_free(tr);
    free(truth);
    sid_model_free(m);
    sid_free(theta);
}
END_TEST

Suite *limits_suite(void)
{
    Suite *s = suite_create("limits");
    TCase *tc = tcase_create("gradients");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, step_vjp_matches_fd);
    tcase_add_test(tc, step_jvp_matches_vjp);
    tcase_add_test(tc, no_allocation_in_steps);
    tcase_add_test(tc, free_joint_and_contact);
    tcase_add_test(tc, window_gradient_in_the_limit);
    tcase_add_test(tc, window_gradient_far_from_the_limit);
    suite_add_tcase(s, tc);
    TCase *mt = tcase_create("mujoco");
    tcase_set_timeout(mt, 60);
    tcase_add_test(mt, pendulum_into_its_limits);
    tcase_add_test(mt, arm_into_its_limits);
    tcase_add_test(mt, far_limits_change_nothing);
    tcase_add_test(mt, resting_on_a_bound);
    suite_add_tcase(s, mt);
    TCase *lt = tcase_create("robot_json");
    tcase_add_test(lt, bad_limits_are_named);
    tcase_add_test(lt, limit_parameters);
    tcase_add_test(lt, written_limits_round_trip);
    suite_add_tcase(s, lt);
    TCase *rt = tcase_create("recovery");
    tcase_set_timeout(rt, 60);
    tcase_add_test(rt, gains_recovered);
    suite_add_tcase(s, rt);
    return s;
}
