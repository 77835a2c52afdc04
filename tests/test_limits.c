/* test_limits.c — joint position limits (core/joint_limit.h): the soft constraint's derivatives,
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
 * Euler in both; our gains are the default rule (FORMATS.md). The residual difference is the
 * models' (joint_limit.h): MuJoCo's constraint acceleration is (1 - d) a_free + d a_ref with an
 * impedance d of 0.9 to 0.95 (so its effective stiffness is d^2 k_a, 0.81 to 0.90 of ours,
 * and its damping d b_a), its force never pulls, and it starts exactly at the bound, where ours
 * starts a few w before it. So the overshoot past the bound and the rebound speed differ by a
 * few per cent, and after each bounce the phase error carries on. The figures (max |dq|,
 * overshoot, rebound) are printed and held to the measured values with a margin. With the
 * limits far away the limit force is exactly zero: the same trajectory to the bit as without a
 * limit, and MuJoCo's as in test_mujoco.c.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mujoco/mujoco.h>

#include "robot_json.h"
#include "sid_internal.h"
#include "test_util.h"

Suite *limits_suite(void);

#define FIX "fixtures/limits/"
/* Relative difference step in q and in a limit's bounds: the softplus bends on the scale w = 1e-4,
 * and at STYLE.md's 1e-6 the difference's truncation error dominates (measured on one step:
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
    for (int i = 0; i < sid_model_nv(p->m); i++) L += p->wq[i] * q1[i] + p->wv[i] * v1[i];
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
 * tolerance 1e-6 as test_gradient.c's (STYLE.md's error measure). */
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
    ck_assert_msg(robot_json_model(path, m, theta, doc, &err) == 0, "%s", err.msg);
}

/* Largest |q - bound| past a bound of dof 0 over the log (0: never reached). */
static double log_overshoot(const sid_traj *tr, double lo, double hi)
{
    double o = 0;
    for (int k = 0; k < tr->n; k++) o = fmax(o, fmax(tr->q[(size_t)k * tr->nq] - hi, lo - tr->q[(size_t)k * tr->nq]));
    return o;
}

/* The pendulum with its limits at +-bound, driven by 1.5 N·m of sines for 0.6 s (one window).
 * Central differences with step 1e-7 (not STYLE.md's 1e-6): the softplus bends on the scale
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

Suite *limits_suite(void)
{
    Suite *s = suite_create("limits");
    TCase *tc = tcase_create("gradients");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, step_vjp_matches_fd);
    tcase_add_test(tc, step_jvp_matches_vjp);
    tcase_add_test(tc, no_allocation_in_steps);
    tcase_add_test(tc, window_gradient_in_the_limit);
    tcase_add_test(tc, window_gradient_far_from_the_limit);
    suite_add_tcase(s, tc);
    return s;
}
