/* test_backlash.c — a joint with backlash (core/dynamics/backlash.h): the energy of the free system is
 * conserved to the integrator's order and never grows with damping; inside the gap the link
 * moves as if uncoupled, in contact with a stiff coupling as a rigid joint with armature Jm;
 * the adjoint and forward-mode derivatives of every parameter (and of fitted start states)
 * against central differences, Euler and RK4; recovery of the backlash parameters from logs
 * this model simulated, clean and noisy (data/backlash_arm is the same arm). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backlash.h"
#include "robot_json.h"
#include "robot_load.h"
#include "sid_internal.h"
#include "test_util.h"

Suite *backlash_suite(void);

#define ROBOT "../data/backlash_arm/truth.json"

/* data/backlash_arm's truth, changed by the caller's edit (NULL: as it is). */
static sid_model *arm(void (*edit)(sid_robot_desc *, const double *), const double *a, double **theta)
{
    sid_robot_desc d;
    sid_error err = {0};
    memset(&d, 0, sizeof d);
    ck_assert_msg(robot_load(ROBOT, &d, NULL, NULL, &err) == 0, "%s", err.msg);
    if (edit) edit(&d, a);
    sid_model *m;
    ck_assert_msg(sid_model_create(&m, theta, &d, &err) == SID_OK, "%s", err.msg);
    robot_desc_free(&d);
    return m;
}

/* a = {width, stiffness, damping, inertia, viscous, gravity z} */
static void set_all(sid_robot_desc *d, const double *a)
{
    sid_joint_desc *j = &d->joint[0];
    j->backlash_width = a[0], j->backlash_stiffness = a[1], j->backlash_damping = a[2], j->backlash_inertia = a[3];
    j->viscous = a[4];
    d->gravity[2] = a[5];
}

/* no backlash, armature a[0], viscous a[1], gravity z a[2] */
static void rigid(sid_robot_desc *d, const double *a)
{
    d->joint[0].has_backlash = 0;
    d->joint[0].armature = a[0];
    d->joint[0].viscous = a[1];
    d->gravity[2] = a[2];
}

/* The spring's energy k \int_0^x dz by composite Simpson on 4000 intervals: dz is smooth on the
 * scale w = 1e-3 and |x| < 0.2, so the rule's error (h^4 dz''' ~ (5e-5)^4 / w^2) is < 1e-11. */
static double spring_energy(double b, double w, double k, double x)
{
    const int n = 4000;
    const double h = x / n;
    double s = sid_backlash_dz(b, w, 0, NULL) + sid_backlash_dz(b, w, x, NULL);
    for (int i = 1; i < n; i++) s += (i % 2 ? 4 : 2) * sid_backlash_dz(b, w, i * h, NULL);
    return k * s * h / 3;
}

/* Total energy: the tree's (kinetic, armature, gravity), the rotor's and the dead zone's spring. */
static double energy(const sid_model *m, const double *th, sid_workspace *ws, const double *q, const double *v)
{
    const int pb = tu_param(m, "joints.shoulder.backlash.width");
    const double Jm = th[pb + P_BACKLASH_INERTIA], x = q[1] - q[0];
    return sid_energy(m, th, ws, q, v) + 0.5 * Jm * v[1] * v[1] +
           spring_energy(th[pb + P_BACKLASH_WIDTH], th[pb + P_BACKLASH_SMOOTHING], th[pb + P_BACKLASH_STIFFNESS], x);
}

/* Simulate 1 s from link q = 0.8, motor 0.12 rad ahead (spring loaded), no torque; the
 * largest |E - E0| / E0 and whether E ever grew by more than tol between steps. */
static double drift(const sid_model *m, const double *th, sid_integrator integ, double h, double *grew)
{
    sid_workspace *ws = sid_workspace_create(m);
    double q[2] = {0.8, 0.92}, v[2] = {0, 0}, q1[2], v1[2], u[1] = {0};
    sid_error err = {0};
    const double E0 = energy(m, th, ws, q, v);
    double worst = 0, prev = E0;
    *grew = 0;
    for (int k = 0; k < (int)lround(1 / h); k++) {
        ck_assert_msg(sid_step(m, th, ws, integ, h, q, v, u, q1, v1, &err) == SID_OK, "%s", err.msg);
        memcpy(q, q1, sizeof q), memcpy(v, v1, sizeof v);
        const double E = energy(m, th, ws, q, v);
        worst = fmax(worst, fabs(E - E0) / fabs(E0));
        *grew = fmax(*grew, (E - prev) / fabs(E0));
        prev = E;
    }
    sid_workspace_free(ws);
    return worst;
}

/* Without torque, friction or damping the energy is conserved to the integrator's order: halving
 * the step shrinks RK4's drift 16x (asserted > 10x) and semi-implicit Euler's 2x (> 1.6x);
 * the drifts themselves are small (RK4 < 1e-6 at 0.2 ms: the contact's period is 2 pi /
 * sqrt(40 / 0.01) = 0.1 s, 500 steps). With the coupling's damping and motor-side viscous
 * friction the energy never grows from one step to the next (beyond RK4's own drift, 1e-9 of
 * E0 per step), and falls by more than 1 % over the second. */
START_TEST(energy_conserved)
{
    double *th;
    const double a[6] = {0.05, 40, 0, 0.01, 0, -9.81};
    sid_model *m = arm(set_all, a, &th);
    ck_assert_int_eq(sid_model_nq_state(m), 2);
    ck_assert_int_eq(sid_model_nq(m), 1);
    double g;
    const double r1 = drift(m, th, SID_RK4, 2e-4, &g), r2 = drift(m, th, SID_RK4, 1e-4, &g);
    const double e1 = drift(m, th, SID_EULER, 2e-4, &g), e2 = drift(m, th, SID_EULER, 1e-4, &g);
    fprintf(stderr, "backlash energy (no damping, 1 s): rk4 drift %.2e at 0.2 ms, %.2e at 0.1 ms (ratio %.1f); "
                    "euler %.2e, %.2e (ratio %.2f)\n", r1, r2, r1 / r2, e1, e2, e1 / e2);
    ck_assert_msg(r1 < 1e-6 && r1 / r2 > 10, "rk4 %g %g", r1, r2);
    ck_assert_msg(e1 < 1e-2 && e1 / e2 > 1.6, "euler %g %g", e1, e2);
    sid_model_free(m), sid_free(th);
    const double ad[6] = {0.05, 40, 0.3, 0.01, 0.02, -9.81};
    m = arm(set_all, ad, &th);
    const double lost = drift(m, th, SID_RK4, 1e-4, &g);
    fprintf(stderr, "backlash energy (damping 0.3, viscous 0.02): largest step-to-step growth %.2e of E0, "
                    "lost %.2e of E0\n", g, lost);
    ck_assert_msg(g < 1e-9, "energy grew by %g", g);
    ck_assert_msg(lost > 0.01, "damping dissipates nothing (%g)", lost);
    sid_model_free(m), sid_free(th);
}
END_TEST

/* Inside the gap the link moves as if uncoupled: gap 0.2 rad, no gravity, link at 0.5 rad/s,
 * motor at rest, 0.15 s: |x| reaches 0.075, 25 w inside the gap edge, where the coupling's
 * force is below k w exp(-25) = 6e-13 N m, so the link follows the free link (no backlash, no
 * motor) to 1e-9 rad. In contact, with width 0 (dz(x) = x exactly) and a stiff coupling, the arm
 * moves as the rigid joint with armature Jm: over 1 s of a 0.2 N m command the difference is
 * the coupling's deflection, O(tau / k), and shrinks ~10x when k grows 10x. */
static double gap_vs_free(void)
{
    double *thb, *thf;
    const double a[6] = {0.2, 40, 0.3, 0.01, 0, 0}, r[3] = {0, 0, 0};
    sid_model *mb = arm(set_all, a, &thb), *mf = arm(rigid, r, &thf);
    sid_workspace *wb = sid_workspace_create(mb), *wf = sid_workspace_create(mf);
    double qb[2] = {0, 0}, vb[2] = {0.5, 0}, qf[1] = {0}, vf[1] = {0.5}, q1[2], v1[2], u[1] = {0}, worst = 0;
    sid_error err = {0};
    for (int k = 0; k < 1500; k++) {
        ck_assert(sid_step(mb, thb, wb, SID_RK4, 1e-4, qb, vb, u, q1, v1, &err) == SID_OK);
        memcpy(qb, q1, sizeof qb), memcpy(vb, v1, sizeof vb);
        ck_assert(sid_step(mf, thf, wf, SID_RK4, 1e-4, qf, vf, u, q1, v1, &err) == SID_OK);
        qf[0] = q1[0], vf[0] = v1[0];
        worst = fmax(worst, fabs(qb[0] - qf[0]));
    }
    ck_assert_msg(fabs(qb[1] - qb[0]) > 0.07 && fabs(qb[1] - qb[0]) < 0.1, "x = %g", qb[1] - qb[0]);
    sid_workspace_free(wb), sid_workspace_free(wf);
    sid_model_free(mb), sid_model_free(mf), sid_free(thb), sid_free(thf);
    return worst;
}

static double contact_vs_rigid(double k)
{
    double *thb, *thr;
    /* critically damped coupling: c = 2 sqrt(k Jm_eff), Jm_eff ~ Jm */
    const double a[6] = {0, k, 2 * sqrt(k * 0.01), 0.01, 0.02, -9.81}, r[3] = {0.01, 0.02, -9.81};
    sid_model *mb = arm(set_all, a, &thb), *mr = arm(rigid, r, &thr);
    sid_workspace *wb = sid_workspace_create(mb), *wr = sid_workspace_create(mr);
    double qb[2] = {0.3, 0.3}, vb[2] = {0, 0}, qr[1] = {0.3}, vr[1] = {0}, q1[2], v1[2], worst = 0;
    sid_error err = {0};
    const double h = 5e-5;
    for (int k2 = 0; k2 < 20000; k2++) {
        const double t = k2 * h, u[1] = {0.2 * sin(6 * t) + 0.1 * sin(17 * t)};
        ck_assert(sid_step(mb, thb, wb, SID_RK4, h, qb, vb, u, q1, v1, &err) == SID_OK);
        memcpy(qb, q1, sizeof qb), memcpy(vb, v1, sizeof vb);
        ck_assert(sid_step(mr, thr, wr, SID_RK4, h, qr, vr, u, q1, v1, &err) == SID_OK);
        qr[0] = q1[0], vr[0] = v1[0];
        worst = fmax(worst, fabs(qb[0] - qr[0]));
    }
    sid_workspace_free(wb), sid_workspace_free(wr);
    sid_model_free(mb), sid_model_free(mr), sid_free(thb), sid_free(thr);
    return worst;
}

START_TEST(dead_zone)
{
    const double gap = gap_vs_free(), c4 = contact_vs_rigid(1e4), c5 = contact_vs_rigid(1e5);
    fprintf(stderr, "backlash dead zone: inside the gap the link vs a free link %.2e rad; in contact vs the rigid "
                    "joint with armature Jm: %.2e rad at k = 1e4, %.2e at k = 1e5 (ratio %.1f)\n",
            gap, c4, c5, c4 / c5);
    ck_assert_msg(gap < 1e-9, "gap %g", gap);
    ck_assert_msg(c5 < 1e-4 && c4 / c5 > 5, "contact %g %g", c4, c5);
}
END_TEST

/* A log of the truth arm and a problem on it at theta moved off the truth (or at truth with
 * fitted starts: est). */
typedef struct {
    sid_model *m;
    double *th, *tht;
    sid_traj *tr;
    const sid_traj **logs;   /* the problem keeps the pointer */
    sid_problem *p;
} setup;

static setup make_setup(sid_integrator integ, int substeps, int est, int n, unsigned seed)
{
    setup s;
    s.m = arm(NULL, NULL, &s.tht);
    s.tr = tu_synth_log(s.m, s.tht, n, 1e-3, 0.3, seed);
    s.th = sid_alloc(sizeof(double) * (size_t)sid_model_nparam(s.m));
    memcpy(s.th, s.tht, sizeof(double) * (size_t)sid_model_nparam(s.m));
    sid_loss_opts lo;
    sid_loss_opts_defaults(&lo);
    lo.window = 0.2, lo.threads = 1, lo.sim.integrator = integ, lo.sim.substeps = substeps, lo.estimate_start = est;
    s.logs = malloc(sizeof *s.logs);
    s.logs[0] = s.tr;
    sid_error err = {0};
    ck_assert_msg(sid_problem_create(&s.p, s.m, s.logs, 1, &lo, &err) == SID_OK, "%s", err.msg);
    return s;
}

static void free_setup(setup *s)
{
    sid_problem_free(s->p), free(s->logs), sid_traj_free(s->tr), sid_model_free(s->m), sid_free(s->th), sid_free(s->tht);
}

/* Every parameter's adjoint and forward-mode derivative against central differences of the
 * loss (step 1e-6 of the parameter's size, floored at 1e-6): relative error (tu_rel_err, atol
 * 1e-9 of the largest gradient) below 1e-5, the difference's O(step^2) error plus rounding
 * being ~1e-8 here. The theta moved 10-30 % off the truth, so the loss and gradients are not 0. */
static double check_grad(sid_integrator integ, int substeps, int est)
{
    setup s = make_setup(integ, substeps, est, 600, est ? 3 : integ == SID_RK4 ? 2 : 1);
    const int np = sid_model_nparam(s.m);
    static const struct { const char *n; double f; } moves[] = {
        {"joints.shoulder.backlash.width", 1.3}, {"joints.shoulder.backlash.stiffness", 0.8},
        {"joints.shoulder.backlash.damping", 1.2}, {"joints.shoulder.backlash.inertia", 0.85},
        {"joints.shoulder.friction.viscous", 1.3}, {"links.arm.mass", 1.1}};
    for (size_t i = 0; i < sizeof moves / sizeof moves[0]; i++) s.th[tu_param(s.m, moves[i].n)] *= moves[i].f;
    sid_error err = {0};
    const int nw = sid_problem_nwindows(s.p), nxo = sid_model_nq(s.m) + sid_model_nv(s.m);
    double *x0 = NULL, *gx = NULL;
    if (est) {
        x0 = malloc(sizeof(double) * (size_t)(nw * nxo)), gx = calloc((size_t)(nw * nxo), sizeof(double));
        sid_problem_start_states(s.p, s.tht, x0);
        for (int i = 0; i < nw * nxo; i++) x0[i] += 0.01 * sin(3.0 * i);
    }
    double L, *g = calloc((size_t)np, sizeof(double));
    ck_assert_msg(sid_problem_loss(s.p, s.th, x0, &L, g, gx, &err) == SID_OK, "%s", err.msg);
    /* forward mode: dL/dtheta = sum_w r . J / nres over every parameter (and start column) */
    const int ncol = np + (est ? nxo : 0), nres = sid_problem_nresiduals(s.p);
    int *idx = malloc(sizeof(int) * (size_t)np);
    for (int i = 0; i < np; i++) idx[i] = i;
    double *fwd = calloc((size_t)np, sizeof(double)), *fwx = calloc((size_t)(nw * nxo + 1), sizeof(double));
    for (int w = 0; w < nw; w++) {
        const int rows = sid_problem_window_rows(s.p, w);
        double *r = malloc(sizeof(double) * (size_t)rows), *J = malloc(sizeof(double) * (size_t)rows * (size_t)ncol);
        ck_assert_msg(sid_problem_window_jacobian(s.p, s.th, x0 ? x0 + (size_t)w * (size_t)nxo : NULL, w, np, idx, r, J,
                                                  &err) == SID_OK, "%s", err.msg);
        for (int i = 0; i < rows; i++)
            for (int c = 0; c < ncol; c++) {
                const double t = r[i] * J[(size_t)i * (size_t)ncol + (size_t)c] / nres;
                if (c < np) fwd[c] += t;
                else fwx[w * nxo + c - np] += t;
            }
        free(r), free(J);
    }
    double gmax = 0;
    for (int i = 0; i < np; i++) gmax = fmax(gmax, fabs(g[i]));
    double worst = 0;
    const char *at = "none";
    for (int i = 0; i < np; i++) {
        const double x = s.th[i], e = 1e-6 * fmax(fabs(x), 1);
        double Lp, Lm;
        s.th[i] = x + e;
        ck_assert(sid_problem_loss(s.p, s.th, x0, &Lp, NULL, NULL, &err) == SID_OK);
        s.th[i] = x - e;
        ck_assert(sid_problem_loss(s.p, s.th, x0, &Lm, NULL, NULL, &err) == SID_OK);
        s.th[i] = x;
        const double fd = (Lp - Lm) / (2 * e);
        const double ea = tu_rel_err(g[i], fd, 1e-9 * gmax), ef = tu_rel_err(fwd[i], fd, 1e-9 * gmax);
        if (strstr(sid_model_param(s.m, i)->name, "backlash"))
            fprintf(stderr, "  %-36s adjoint % .10e forward % .10e fd % .10e\n", sid_model_param(s.m, i)->name, g[i],
                    fwd[i], fd);
        if (fmax(ea, ef) > worst) worst = fmax(ea, ef), at = sid_model_param(s.m, i)->name;
    }
    for (int j = 0; est && j < nw * nxo; j += 7) {   /* a sample of the start-state columns */
        const double x = x0[j], e = 1e-6;
        double Lp, Lm;
        x0[j] = x + e;
        ck_assert(sid_problem_loss(s.p, s.th, x0, &Lp, NULL, NULL, &err) == SID_OK);
        x0[j] = x - e;
        ck_assert(sid_problem_loss(s.p, s.th, x0, &Lm, NULL, NULL, &err) == SID_OK);
        x0[j] = x;
        const double fd = (Lp - Lm) / (2 * e);
        const double ea = tu_rel_err(gx[j], fd, 1e-9 * gmax), ef = tu_rel_err(fwx[j], fd, 1e-9 * gmax);
        if (fmax(ea, ef) > worst) worst = fmax(ea, ef), at = "a start state";
    }
    fprintf(stderr, "backlash gradient %s substeps %d%s: loss %.3e, %d parameters, worst rel err (adjoint, forward) %.2e at %s\n",
            integ == SID_EULER ? "euler" : "rk4", substeps, est ? " fitted starts" : "", L, np, worst, at);
    ck_assert_msg(L > 1e-6, "loss %g: nothing to check", L);
    ck_assert_msg(worst < 1e-5, "relative error %g at %s", worst, at);
    free(g), free(fwd), free(fwx), free(idx), free(x0), free(gx);
    free_setup(&s);
    return worst;
}

START_TEST(gradient_matches_fd)
{
    double worst = check_grad(SID_EULER, 1, 0);
    worst = fmax(worst, check_grad(SID_RK4, 2, 0));
    worst = fmax(worst, check_grad(SID_EULER, 2, 1));
    fprintf(stderr, "backlash gradient: worst relative error %.2e\n", worst);
}
END_TEST

/* A contact sphere 10 m above the ground: its force underflows to exactly 0 (softplus of
 * -1e4 widths), but the model now takes jacobian.c's central-difference path (contact has no
 * forward mode). Its window Jacobian, parameter and start-state columns, agrees with the
 * forward-mode one of the arm without the sphere to 1e-6 of the largest entry: the differences
 * (step 1e-6 of each variable) err by O(step^2) and rounding / step, ~1e-9 here. */
static void far_sphere(sid_robot_desc *d, const double *a)
{
    (void)a;
    sid_ground_desc_defaults(&d->ground);
    d->nsphere = 1;
    d->sphere = calloc(1, sizeof *d->sphere);
    snprintf(d->sphere[0].name, sizeof d->sphere[0].name, "tip");
    d->sphere[0].link = 1, d->sphere[0].xyz[2] = 10, d->sphere[0].radius = 0.01;
    ck_assert_str_eq(d->link[1].name, "arm");
}

START_TEST(jacobian_differences)
{
    double *th0, *th1;
    sid_model *m0 = arm(NULL, NULL, &th0), *m1 = arm(far_sphere, NULL, &th1);
    sid_traj *tr = tu_synth_log(m0, th0, 300, 1e-3, 0.3, 4);
    sid_loss_opts lo;
    sid_loss_opts_defaults(&lo);
    lo.window = 0.1, lo.threads = 1, lo.estimate_start = 1;
    const sid_traj *logs[1] = {tr};
    sid_problem *p0, *p1;
    sid_error err = {0};
    ck_assert(sid_problem_create(&p0, m0, logs, 1, &lo, &err) == SID_OK);
    ck_assert_msg(sid_problem_create(&p1, m1, logs, 1, &lo, &err) == SID_OK, "%s", err.msg);
    const int idx0[4] = {tu_param(m0, "joints.shoulder.backlash.width"), tu_param(m0, "joints.shoulder.backlash.stiffness"),
                         tu_param(m0, "joints.shoulder.backlash.inertia"), tu_param(m0, "joints.shoulder.offset")};
    const int idx1[4] = {tu_param(m1, "joints.shoulder.backlash.width"), tu_param(m1, "joints.shoulder.backlash.stiffness"),
                         tu_param(m1, "joints.shoulder.backlash.inertia"), tu_param(m1, "joints.shoulder.offset")};
    const int nxo = sid_model_nq(m0) + sid_model_nv(m0), ncol = 4 + nxo, w = 1;
    double x0[2];   /* window 1's logged start, moved */
    double *xs = malloc(sizeof(double) * (size_t)(sid_problem_nwindows(p0) * nxo));
    sid_problem_start_states(p0, th0, xs);
    x0[0] = xs[w * nxo] + 0.01, x0[1] = xs[w * nxo + 1] - 0.05;
    const int rows = sid_problem_window_rows(p0, w);
    ck_assert_int_eq(rows, sid_problem_window_rows(p1, w));
    double *r0 = malloc(sizeof(double) * (size_t)rows), *r1 = malloc(sizeof(double) * (size_t)rows);
    double *J0 = malloc(sizeof(double) * (size_t)(rows * ncol)), *J1 = malloc(sizeof(double) * (size_t)(rows * ncol));
    ck_assert(sid_problem_window_jacobian(p0, th0, x0, w, 4, idx0, r0, J0, &err) == SID_OK);
    ck_assert(sid_problem_window_jacobian(p1, th1, x0, w, 4, idx1, r1, J1, &err) == SID_OK);
    double big = 0, worst = 0;
    for (int i = 0; i < rows * ncol; i++) big = fmax(big, fabs(J0[i]));
    for (int i = 0; i < rows * ncol; i++) worst = fmax(worst, fabs(J0[i] - J1[i]) / big);
    for (int i = 0; i < rows; i++) ck_assert_msg(fabs(r0[i] - r1[i]) <= 1e-14 * (1 + fabs(r0[i])), "residual %d", i);
    fprintf(stderr, "backlash window Jacobian: central differences vs forward mode %.2e of the largest entry (%d rows x %d)\n",
            worst, rows, ncol);
    ck_assert_msg(worst < 1e-6, "%g", worst);
    free(r0), free(r1), free(J0), free(J1), free(xs);
    sid_problem_free(p0), sid_problem_free(p1), sid_traj_free(tr);
    sid_model_free(m0), sid_model_free(m1), sid_free(th0), sid_free(th1);
}
END_TEST

/* Recovery of width, stiffness, damping and inertia by LM from 20-30 % off, on a 6 s log of the
 * truth arm from rest, as one window from its logged start (window 0: the motor side starts
 * where the truth's does, at the link, backlash.h; short windows start it unloaded where the
 * truth's is loaded, a bias docs/correctness.md "Backlash" measures): clean to 1e-6 relative (a noise-free
 * log of the same model and integrator); with Gaussian noise of 2e-4 rad on q and 2e-2 rad/s on
 * qd (a 15-bit encoder's quantisation is 1e-4 rad; a differentiated velocity) width, stiffness
 * and inertia within 3 %, the damping within 10 %: it acts only while the contact rings, a
 * 10 Hz mode that these 0.1 to 1 Hz sines barely excite (data/backlash_arm's log, with
 * sharper reversals, gives 0.2 %). */
static double recover(double sq, double sqd, double *err_out)
{
    double *tht, *th;
    sid_model *m = arm(NULL, NULL, &tht);
    sid_traj *tr = tu_synth_log(m, tht, 6000, 1e-3, 0.3, 21);
    if (sq > 0) tu_add_noise(tr, sq, sqd, 5);
    th = sid_alloc(sizeof(double) * (size_t)sid_model_nparam(m));
    memcpy(th, tht, sizeof(double) * (size_t)sid_model_nparam(m));
    static const char *const names[] = {"joints.shoulder.backlash.width", "joints.shoulder.backlash.stiffness",
                                        "joints.shoulder.backlash.damping", "joints.shoulder.backlash.inertia"};
    static const double f[4] = {1.3, 0.75, 1.25, 0.8};
    int idx[4];
    double lob[4], hib[4];
    for (int i = 0; i < 4; i++) {
        idx[i] = tu_param(m, names[i]);
        th[idx[i]] *= f[i];
        lob[i] = 0, hib[i] = HUGE_VAL;
    }
    sid_loss_opts lo;
    sid_loss_opts_defaults(&lo);
    lo.window = 0;
    const sid_traj *logs[1] = {tr};
    sid_problem *p;
    sid_error err = {0};
    ck_assert(sid_problem_create(&p, m, logs, 1, &lo, &err) == SID_OK);
    sid_fit_opts fo;
    sid_fit_opts_defaults(&fo);
    fo.optimizer = SID_OPT_LM, fo.nfree = 4, fo.idx = idx, fo.lo = lob, fo.hi = hib, fo.max_iter = 100;
    sid_fit_result *r = calloc(1, sizeof *r);
    ck_assert_msg(sid_fit(p, th, NULL, &fo, r, &err) == SID_OK, "%s", err.msg);
    double worst = 0;
    for (int i = 0; i < 4; i++) {
        err_out[i] = fabs(th[idx[i]] - tht[idx[i]]) / tht[idx[i]];
        worst = fmax(worst, err_out[i]);
    }
    fprintf(stderr, "backlash recovery (LM, q noise %.0e, qd noise %.0e): width %.3e (err %.1e), stiffness %.4g (%.1e), "
                    "damping %.4g (%.1e), inertia %.4g (%.1e); %d iterations, %.2f s (%s)\n",
            sq, sqd, th[idx[0]], err_out[0], th[idx[1]], err_out[1], th[idx[2]], err_out[2], th[idx[3]], err_out[3],
            r->iterations, r->seconds, r->message);
    free(r), sid_problem_free(p), sid_traj_free(tr), sid_model_free(m), sid_free(th), sid_free(tht);
    return worst;
}

START_TEST(recovery_clean)
{
    double e[4];
    ck_assert_msg(recover(0, 0, e) < 1e-6, "clean recovery %g %g %g %g", e[0], e[1], e[2], e[3]);
}
END_TEST

START_TEST(recovery_noisy)
{
    double e[4];
    recover(2e-4, 2e-2, e);
    ck_assert_msg(e[0] < 0.03 && e[1] < 0.03 && e[3] < 0.03 && e[2] < 0.1, "noisy recovery %g %g %g %g", e[0], e[1],
                  e[2], e[3]);
}
END_TEST

/* What the model refuses, naming the JSON path. */
static void dry(sid_robot_desc *d, const double *a) { (void)a, d->joint[0].friction_model = SID_FRICTION_DRY; }

START_TEST(refusals)
{
    sid_robot_desc d;
    sid_error err = {0};
    memset(&d, 0, sizeof d);
    ck_assert(robot_load(ROBOT, &d, NULL, NULL, &err) == 0);
    dry(&d, NULL);
    sid_model *m;
    double *th;
    ck_assert(sid_model_create(&m, &th, &d, &err) == SID_ERR_INPUT);
    ck_assert_msg(strstr(err.msg, "joints[0].backlash") && strstr(err.msg, "dry"), "%s", err.msg);
    robot_desc_free(&d);
}
END_TEST

Suite *backlash_suite(void)
{
    Suite *s = suite_create("backlash");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, energy_conserved);
    tcase_add_test(tc, dead_zone);
    tcase_add_test(tc, gradient_matches_fd);
    tcase_add_test(tc, jacobian_differences);
    tcase_add_test(tc, refusals);
    suite_add_tcase(s, tc);
    TCase *slow = tcase_create("slow");
    tcase_set_tags(slow, "slow");
    tcase_set_timeout(slow, 120);
    tcase_add_test(slow, recovery_clean);
    tcase_add_test(slow, recovery_noisy);
    suite_add_tcase(s, slow);
    return s;
}
