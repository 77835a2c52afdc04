/* test_hard_contact.c — the hard contact model (contact_hard.c): a box resting on the ground
 * stays put; a sliding box stops after the Coulomb distance; the step's adjoint (implicit
 * differentiation of the contact solve) against central differences of the converged solver in
 * sticking, sliding and separated states, on a floating box and on a leg (a descendant link);
 * and the gradient the naive "impulses held fixed" adjoint gets wrong (a box on unknown friction,
 * a ball dropped from an unknown height) while the implicit one matches differences of the loss. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "sid_internal.h"

Suite *hard_contact_suite(void);

enum { SEP = 0, STICK = 1, SLIDE = 2 };
static const char *mode_name[] = {"sep", "stick", "slide"};

static sid_model *hard_robot(int leg, double friction, double **theta)
{
    sid_model *m = tu_box_robot(leg, SID_CONTACT_HARD, friction, theta);
    ck_assert_ptr_nonnull(m);
    return m;
}

/* A ball (radius 0.05 m, 0.2 kg) on a free joint. */
static sid_model *ball_robot(double friction, double **theta)
{
    sid_robot_desc d = {0};
    const double I = 0.4 * 0.2 * 0.05 * 0.05;
    sid_link_desc link[2] = {{.name = "world"}, {.name = "ball", .has_mass = 1, .mass = 0.2, .inertia = {I, I, I, 0, 0, 0}}};
    sid_joint_desc joint;
    sid_joint_desc_defaults(&joint);
    snprintf(joint.name, sizeof joint.name, "base");
    joint.type = SID_JOINT_FREE, joint.parent = 0, joint.child = 1;
    sid_sphere_desc sphere = {.name = "ball", .link = 1, .radius = 0.05};
    d.gravity[2] = -9.81;
    d.nlink = 2, d.link = link, d.njoint = 1, d.joint = &joint, d.nsphere = 1, d.sphere = &sphere;
    sid_ground_desc_defaults(&d.ground);
    d.ground.model = SID_CONTACT_HARD;
    d.ground.friction = friction;
    sid_model *m;
    sid_error err = {0};
    ck_assert_msg(sid_model_create(&m, theta, &d, &err) == SID_OK, "%s", err.msg);
    return m;
}

/* Gap of sphere s at q. */
static double gap(const sid_model *m, const double *theta, sid_workspace *ws, const double *q, int s)
{
    sid_kinematics(m, theta, ws, q);
    const int b = m->sphere[s].body;
    const double *ps = theta + m->sphere[s].p;
    const sid_v3 x = sid_v3_add(ws->pw[b], sid_m3_mul_v3(&ws->Rw[b], sid_v3_load(ps + P_SPHERE_XYZ)));
    return x.z - ps[P_SPHERE_RADIUS] - theta[m->p_ground + P_GROUND_HEIGHT];
}

/* Quaternion of a rotation by angle t about the unit axis (x, y, z). */
static void quat(double t, double x, double y, double z, double *qa)
{
    const double n = sqrt(x * x + y * y + z * z), s = sin(t / 2) / n;
    qa[0] = cos(t / 2), qa[1] = s * x, qa[2] = s * y, qa[3] = s * z;
}

/* Hamilton product c = a * b (a rotation b in a's frame after a). */
static void quat_mul(const double *a, const double *b, double *c)
{
    c[0] = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
    c[1] = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
    c[2] = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
    c[3] = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
}

/* Shift the free base vertically so that sphere s has gap phi. */
static void place(const sid_model *m, const double *theta, sid_workspace *ws, double *q, int s, double phi)
{
    q[2] += phi - gap(m, theta, ws, q, s);
}

/* ---- 1, 2: physics -------------------------------------------------------------------------- */

static void simulate(const sid_model *m, const double *theta, sid_workspace *ws, double h, int n, double *q, double *v)
{
    double q1[16], v1[16], u[16] = {0};
    sid_error err = {0};
    for (int k = 0; k < n; k++) {
        ck_assert_msg(sid_step(m, theta, ws, SID_EULER, h, q, v, u, q1, v1, &err) == SID_OK, "%s", err.msg);
        memcpy(q, q1, sizeof(double) * (size_t)m->nq);
        memcpy(v, v1, sizeof(double) * (size_t)m->nv);
    }
}

START_TEST(box_rests)
{
    double *theta;
    sid_model *m = hard_robot(0, 0.7, &theta);
    sid_workspace *ws = sid_workspace_create(m);
    double q[7] = {0.3, -0.2, 0.065, 1, 0, 0, 0}, v[6] = {0};
    const double q0[7] = {0.3, -0.2, 0.065, 1, 0, 0, 0};
    const long allocs = sid_alloc_count();
    simulate(m, theta, ws, 1e-3, 1000, q, v);
    ck_assert_msg(sid_alloc_count() == allocs, "the hard step allocated");
    double dq = 0, vn = 0;
    for (int i = 0; i < 7; i++) dq = fmax(dq, fabs(q[i] - q0[i]));
    for (int i = 0; i < 6; i++) vn = fmax(vn, fabs(v[i]));
    int mode[8];
    double res;
    const int nc = sid_hard_last(ws, NULL, mode, NULL, &res);
    fprintf(stderr, "hard box at rest, 1 s: max |q - q0| = %.2e (z %.2e), max |v| = %.2e, %d contacts, residual %.1e\n", dq,
            q[2] - q0[2], vn, nc, res);
    ck_assert_int_eq(nc, 4);
    for (int i = 0; i < 4; i++) ck_assert_int_eq(mode[i], STICK);
    ck_assert_msg(dq < 1e-6, "the box moved by %g", dq);
    ck_assert_msg(vn < 1e-6, "the box moves at %g", vn);
    sid_workspace_free(ws);
    sid_model_free(m);
    sid_free(theta);
}
END_TEST

START_TEST(box_slides_coulomb_distance)
{
    const double mu = 0.5, v0 = 1.0, g = 9.81;
    double *theta;
    sid_model *m = hard_robot(0, mu, &theta);
    sid_workspace *ws = sid_workspace_create(m);
    double q[7] = {0, 0, 0.065, 1, 0, 0, 0}, v[6] = {v0, 0, 0, 0, 0, 0};
    simulate(m, theta, ws, 1e-3, 600, q, v);
    const double d = v0 * v0 / (2 * mu * g), err = fabs(q[0] - d) / d;
    double vn = 0;
    for (int i = 0; i < 6; i++) vn = fmax(vn, fabs(v[i]));
    fprintf(stderr, "hard box sliding at %g m/s, mu %g: stops after %.5f m, Coulomb %.5f m (error %.2f %%), |v| %.1e, "
            "y %.1e, z - z0 %.1e\n", v0, mu, q[0], d, 100 * err, vn, q[1], q[2] - 0.065);
    ck_assert_msg(err < 0.02, "stopping distance %g vs %g", q[0], d);
    ck_assert_msg(vn < 1e-6, "still moving at %g", vn);
    ck_assert_msg(fabs(q[1]) < 1e-9 && fabs(q[2] - 0.065) < 1e-5, "drift y %g z %g", q[1], q[2] - 0.065);
    sid_workspace_free(ws);
    sid_model_free(m);
    sid_free(theta);
}
END_TEST

/* A box thrown spinning onto the ground, then the leg robot kicking: every contact solve
 * converges, nothing sinks, and the box comes to rest. */
START_TEST(tumble)
{
    for (int run = 0; run < 8; run++) {
        const int leg = run & 1;
        unsigned seed = 100 + (unsigned)run;
        double *theta;
        sid_model *m = hard_robot(leg, tu_uniform(&seed, 0.2, 1.0), &theta);
        sid_workspace *ws = sid_workspace_create(m);
        double q[8] = {0, 0, 0.3, 0, 0, 0, 0, 0.5}, v[7] = {1.5, -0.5, 1, 4, -6, 3, 0}, u[7] = {0}, q1[8], v1[7];
        for (int i = 0; i < 6; i++) v[i] = tu_uniform(&seed, -3, 3) * (i < 3 ? 1 : 3);
        quat(tu_uniform(&seed, 0, 3), tu_uniform(&seed, -1, 1), tu_uniform(&seed, -1, 1), tu_uniform(&seed, -1, 1), q + 3);
        sid_error err = {0};
        double worst_res = 0, worst_gap = 0;
        int nstick = 0, nslide = 0;
        for (int k = 0; k < 3000; k++) {
            if (leg) u[6] = 0.05 * sin(0.01 * k);
            ck_assert_msg(sid_step(m, theta, ws, SID_EULER, 1e-3, q, v, u, q1, v1, &err) == SID_OK, "%s", err.msg);
            memcpy(q, q1, sizeof(double) * (size_t)m->nq);
            memcpy(v, v1, sizeof(double) * (size_t)m->nv);
            int mode[8];
            double res;
            const int nc = sid_hard_last(ws, NULL, mode, NULL, &res);
            for (int i = 0; i < nc; i++) nstick += mode[i] == STICK, nslide += mode[i] == SLIDE;
            worst_res = fmax(worst_res, res);
            for (int s = 0; s < m->nsphere; s++) worst_gap = fmin(worst_gap, gap(m, theta, ws, q, s));
        }
        double vn = 0;
        for (int i = 0; i < 6; i++) vn = fmax(vn, fabs(v[i]));
        fprintf(stderr, "hard %s tumbling 3 s (run %d): worst solver residual %.1e, deepest penetration %.2e m, %d sticking and %d "
                "sliding contact-steps, final |v_base| %.1e\n", leg ? "leg robot" : "box", run, worst_res, -worst_gap, nstick, nslide, vn);
        ck_assert_msg(worst_res < 1e-9, "solver residual %g", worst_res);
        ck_assert_msg(worst_gap > -2e-3, "penetration %g", -worst_gap);
        if (!leg) ck_assert_msg(vn < 1e-6, "the box still moves at %g", vn);
        sid_workspace_free(ws);
        sid_model_free(m);
        sid_free(theta);
    }
}
END_TEST

START_TEST(rk4_rejected)
{
    double *theta;
    sid_model *m = hard_robot(0, 0.5, &theta);
    sid_workspace *ws = sid_workspace_create(m);
    double q[7] = {0, 0, 0.065, 1, 0, 0, 0}, v[6] = {0}, u[6] = {0}, q1[7], v1[6];
    sid_error err = {0};
    ck_assert_int_eq(sid_step(m, theta, ws, SID_RK4, 1e-3, q, v, u, q1, v1, &err), SID_ERR_INPUT);
    ck_assert_msg(strstr(err.msg, "euler") != NULL, "%s", err.msg);
    sid_workspace_free(ws);
    sid_model_free(m);
    sid_free(theta);
}
END_TEST

/* ---- 3: the step's adjoint ------------------------------------------------------------------ */

typedef struct {
    const sid_model *m;
    sid_workspace *ws;
    double *theta;
    double q[16], v[16], u[16], wq[16], wv[16];
    double h;
} check;

static double eval(check *c)
{
    double q1[16], v1[16], L = 0;
    sid_error err = {0};
    ck_assert_msg(sid_step(c->m, c->theta, c->ws, SID_EULER, c->h, c->q, c->v, c->u, q1, v1, &err) == SID_OK, "%s", err.msg);
    for (int i = 0; i < c->m->nq; i++) L += c->wq[i] * q1[i];
    for (int i = 0; i < c->m->nv; i++) L += c->wv[i] * v1[i];
    return L;
}

/* Fourth-order central difference of the converged solver's step. */
/* Difference step (relative) and the error floor relative to the gradient's largest entry. */
static double fd_scale = 1e-6, fd_floor = 1e-9;
static double central(check *c, double *x)
{
    const double x0 = *x, e = fd_scale * fmax(0.1, fabs(x0));
    double L[4];
    const double off[4] = {-2, -1, 1, 2};
    for (int k = 0; k < 4; k++) {
        *x = x0 + off[k] * e;
        L[k] = eval(c);
    }
    *x = x0;
    return (L[0] - 8 * L[1] + 8 * L[2] - L[3]) / (12 * e);
}

/* The step at (q, v, theta) + e (qd, vd, thd) into q1, v1. */
static void step_along(check *c, double e, const double *qd, const double *vd, const double *thd, double *q1, double *v1)
{
    const sid_model *m = c->m;
    double q[16], v[16], *th = malloc(sizeof(double) * (size_t)m->nparam);
    for (int i = 0; i < m->nq; i++) q[i] = c->q[i] + e * qd[i];
    for (int i = 0; i < m->nv; i++) v[i] = c->v[i] + e * vd[i];
    for (int i = 0; i < m->nparam; i++) th[i] = c->theta[i] + e * thd[i];
    sid_error err = {0};
    ck_assert_msg(sid_step(m, th, c->ws, SID_EULER, c->h, q, v, c->u, q1, v1, &err) == SID_OK, "%s", err.msg);
    free(th);
}

/* Forward mode (contact_hard_jvp.c) at the check's state: the tangent along three directions
 * (state only, parameters only, both; parameters scaled by their size) against fourth-order
 * central differences of the step along each, relative to the tangent's largest entry (worst
 * into *fd_err), and the dot-product test <J d, w> = <d, J^T w> with the adjoint's qbar, vbar,
 * thetabar for the check's weights (into *dot_err). *naive_err: the differences' error of the
 * tangent with the impulses held fixed (frozen), which must fail. */
static void tangent_check(check *c, const double *qbar, const double *vbar, const double *thetabar, double *fd_err,
                          double *dot_err, double *naive_err)
{
    const sid_model *m = c->m;
    const int nq = m->nq, nv = m->nv, np = m->nparam, nd = 3;
    double *thd = calloc((size_t)(nd * np), sizeof(double)), qd0[3 * 16] = {0}, vd0[3 * 16] = {0};
    double qd[3 * 16], vd[3 * 16], qn[3 * 16], vn[3 * 16], *scratch = calloc((size_t)(nd * 9 * nv), sizeof(double));
    unsigned s = 901;
    for (int d = 0; d < nd; d++) {
        if (d != 1) {
            for (int i = 0; i < nq; i++) qd0[d * nq + i] = tu_uniform(&s, -1, 1);
            for (int i = 0; i < nv; i++) vd0[d * nv + i] = tu_uniform(&s, -1, 1);
        }
        if (d != 0)
            for (int i = 0; i < np; i++)
                thd[(size_t)(d * np + i)] = tu_uniform(&s, -1, 1) * fmax(0.1, fabs(c->theta[i]));
    }
    sid_error err = {0};
    for (int frozen = 0; frozen < 2; frozen++) {
        double *qo = frozen ? qn : qd, *vo = frozen ? vn : vd;
        memcpy(qo, qd0, sizeof qd0);
        memcpy(vo, vd0, sizeof vd0);
        sid_hard_set_frozen(c->ws, frozen);
        ck_assert_msg(sid_step_jvp(m, c->theta, c->ws, SID_EULER, c->h, c->q, c->v, c->u, nd, thd, qo, vo, scratch, &err) ==
                      SID_OK, "%s", err.msg);
    }
    sid_hard_set_frozen(c->ws, 0);
    *fd_err = *dot_err = *naive_err = 0;
    for (int d = 0; d < nd; d++) {
        const double e = fd_scale, off[4] = {-2, -1, 1, 2};
        double q1[4][16], v1[4][16], big = 0, diff = 0, diffn = 0;
        for (int k = 0; k < 4; k++) step_along(c, off[k] * e, qd0 + d * nq, vd0 + d * nv, thd + (size_t)(d * np), q1[k], v1[k]);
        for (int i = 0; i < nq + nv; i++) {
            const double *y[4] = {i < nq ? &q1[0][i] : &v1[0][i - nq], i < nq ? &q1[1][i] : &v1[1][i - nq],
                                  i < nq ? &q1[2][i] : &v1[2][i - nq], i < nq ? &q1[3][i] : &v1[3][i - nq]};
            const double num = (*y[0] - 8 * *y[1] + 8 * *y[2] - *y[3]) / (12 * e);
            const double an = i < nq ? qd[d * nq + i] : vd[d * nv + i - nq];
            const double nai = i < nq ? qn[d * nq + i] : vn[d * nv + i - nq];
            big = fmax(big, fabs(an));
            diff = fmax(diff, fabs(an - num));
            diffn = fmax(diffn, fabs(nai - num));
        }
        *fd_err = fmax(*fd_err, diff / big);
        *naive_err = fmax(*naive_err, diffn / big);
        double lhs = 0, rhs = 0, mag = 0;
        for (int i = 0; i < nq; i++) lhs += qd[d * nq + i] * c->wq[i], mag += fabs(qd[d * nq + i] * c->wq[i]);
        for (int i = 0; i < nv; i++) lhs += vd[d * nv + i] * c->wv[i], mag += fabs(vd[d * nv + i] * c->wv[i]);
        for (int i = 0; i < nq; i++) rhs += qd0[d * nq + i] * qbar[i], mag += fabs(qd0[d * nq + i] * qbar[i]);
        for (int i = 0; i < nv; i++) rhs += vd0[d * nv + i] * vbar[i], mag += fabs(vd0[d * nv + i] * vbar[i]);
        for (int i = 0; i < np; i++) rhs += thd[(size_t)(d * np + i)] * thetabar[i], mag += fabs(thd[(size_t)(d * np + i)] * thetabar[i]);
        *dot_err = fmax(*dot_err, fabs(lhs - rhs) / mag);
    }
    free(thd);
    free(scratch);
}

/* The step's VJP at (q, v) against differences for q, v and every parameter, and its tangent
 * (tangent_check); the contacts' modes must be `want` (sphere order; -1: not a contact). */
static void step_check(const char *name, sid_model *m, double *theta, const double *q, const double *v, const int *want,
                       double tol)
{
    check c = {0};
    c.m = m, c.theta = theta, c.h = 1e-3;
    c.ws = sid_workspace_create(m);
    memcpy(c.q, q, sizeof(double) * (size_t)m->nq);
    memcpy(c.v, v, sizeof(double) * (size_t)m->nv);
    unsigned s = 77;
    for (int i = 0; i < m->nv; i++) c.wv[i] = tu_uniform(&s, -1, 1), c.u[i] = tu_uniform(&s, -0.2, 0.2);
    for (int i = 0; i < m->nq; i++) c.wq[i] = tu_uniform(&s, -1, 1);
    eval(&c);
    int sph[16], mode[16];
    double res;
    const int nc = sid_hard_last(c.ws, sph, mode, NULL, &res);
    char modes[256] = "";
    for (int i = 0; i < nc; i++)
        snprintf(modes + strlen(modes), sizeof modes - strlen(modes), " %s:%s", m->sphere[sph[i]].body ? "" : "", mode_name[mode[i]]);
    int got[16];
    for (int i = 0; i < m->nsphere; i++) got[i] = -1;
    for (int i = 0; i < nc; i++) got[sph[i]] = mode[i];
    for (int i = 0; i < m->nsphere; i++)
        ck_assert_msg(got[i] == want[i], "%s: sphere %d is %s, expected %s (modes%s)", name, i,
                      got[i] < 0 ? "no contact" : mode_name[got[i]], want[i] < 0 ? "no contact" : mode_name[want[i]], modes);
    ck_assert_msg(res < 1e-12, "%s: solver residual %g", name, res);
    const int np = m->nparam;
    double qbar[16] = {0}, vbar[16] = {0};
    double *thetabar = calloc((size_t)np, sizeof(double));
    sid_error err = {0};
    ck_assert_msg(sid_step_vjp(m, theta, c.ws, SID_EULER, c.h, c.q, c.v, c.u, c.wq, c.wv, qbar, vbar, thetabar, &err) == SID_OK,
                  "%s", err.msg);
    double gmax = 0;
    for (int i = 0; i < m->nq; i++) gmax = fmax(gmax, fabs(qbar[i]));
    for (int i = 0; i < m->nv; i++) gmax = fmax(gmax, fabs(vbar[i]));
    for (int j = 0; j < np; j++) gmax = fmax(gmax, fabs(thetabar[j]));
    const double atol = fd_floor * gmax;
    /* the naive adjoint (impulses held fixed), to show that the check can tell */
    double qn[16] = {0}, vn[16] = {0}, *tn = calloc((size_t)np, sizeof(double));
    sid_hard_set_frozen(c.ws, 1);
    ck_assert_int_eq(sid_step_vjp(m, theta, c.ws, SID_EULER, c.h, c.q, c.v, c.u, c.wq, c.wv, qn, vn, tn, &err), SID_OK);
    sid_hard_set_frozen(c.ws, 0);
    double worst = 0, worst_abs = 0, naive = 0;
    char where[256] = "none";
    for (int i = 0; i < m->nq + m->nv + np; i++) {
        double *x = i < m->nq ? &c.q[i] : i < m->nq + m->nv ? &c.v[i - m->nq] : &theta[i - m->nq - m->nv];
        const double an = i < m->nq ? qbar[i] : i < m->nq + m->nv ? vbar[i - m->nq] : thetabar[i - m->nq - m->nv];
        const double num = central(&c, x), e = tu_rel_err(an, num, atol);
        worst_abs = fmax(worst_abs, fabs(an - num));
        naive = fmax(naive, tu_rel_err(i < m->nq ? qn[i] : i < m->nq + m->nv ? vn[i - m->nq] : tn[i - m->nq - m->nv], num, atol));
        if (e > worst) {
            worst = e;
            if (i < m->nq) snprintf(where, sizeof where, "q[%d]: %.10g vs fd %.10g", i, an, num);
            else if (i < m->nq + m->nv) snprintf(where, sizeof where, "v[%d]: %.10g vs fd %.10g", i - m->nq, an, num);
            else snprintf(where, sizeof where, "%s: %.10g vs fd %.10g", m->param[i - m->nq - m->nv].name, an, num);
        }
    }
    fprintf(stderr, "hard step VJP, %s (modes%s; residual %.0e): worst relative error %.2e at %s; max |analytic - fd| %.1e "
            "of max |g| %.3g; naive adjoint's worst error %.2g\n", name, modes, res, worst, where, worst_abs, gmax, naive);
    ck_assert_msg(worst <= tol, "%s: relative error %g at %s", name, worst, where);
    ck_assert_msg(naive > 1e-2, "%s: the naive adjoint passes too (%g): the check cannot tell", name, naive);
    double tfd, tdot, tnaive;
    tangent_check(&c, qbar, vbar, thetabar, &tfd, &tdot, &tnaive);
    fprintf(stderr, "hard step JVP, %s: tangent vs central differences %.2e, dot-product test with the VJP %.2e; naive "
            "tangent's error %.2g\n", name, tfd, tdot, tnaive);
    ck_assert_msg(tfd <= tol, "%s: tangent vs central differences %g", name, tfd);
    ck_assert_msg(tdot <= 1e-10, "%s: dot-product test %g", name, tdot);
    ck_assert_msg(tnaive > 1e-2, "%s: the naive tangent passes too (%g): the check cannot tell", name, tnaive);
    free(tn);
    free(thetabar);
    sid_workspace_free(c.ws);
}

/* The box tilted by angle t about axis (ax, ay, 0), its lowest corner at gap phi. */
static void tilted(const sid_model *m, const double *theta, sid_workspace *ws, double t, double ax, double ay, int low,
                   double phi, double *q)
{
    q[0] = 0.1, q[1] = -0.05, q[2] = 0.2;
    quat(t, ax, ay, 0, q + 3);
    place(m, theta, ws, q, low, phi);
}

START_TEST(vjp_box_stick)
{
    double *theta;
    sid_model *m = hard_robot(0, 0.7, &theta);
    sid_workspace *ws = sid_workspace_create(m);
    double q[7], v[6] = {0.02, -0.01, -0.03, 0.1, -0.2, 0.05};
    /* about (1, -1): corner c0 (-x, -y) goes down */
    tilted(m, theta, ws, 0.25, 1, -1, 0, -2e-4, q);
    const int want[4] = {STICK, -1, -1, -1};
    step_check("box, one corner sticking", m, theta, q, v, want, 1e-5);
    sid_workspace_free(ws);
    sid_model_free(m);
    sid_free(theta);
}
END_TEST

START_TEST(vjp_box_slide)
{
    double *theta;
    sid_model *m = hard_robot(0, 0.7, &theta);
    sid_workspace *ws = sid_workspace_create(m);
    double q[7], v[6] = {0.9, 0.4, -0.05, 0.3, -0.2, 0.5};
    tilted(m, theta, ws, 0.25, 1, -1, 0, -2e-4, q);
    const int want[4] = {SLIDE, -1, -1, -1};
    step_check("box, one corner sliding", m, theta, q, v, want, 1e-5);
    sid_workspace_free(ws);
    sid_model_free(m);
    sid_free(theta);
}
END_TEST

START_TEST(vjp_box_slide_and_separated)
{
    double *theta;
    sid_model *m = hard_robot(0, 0.7, &theta);
    sid_workspace *ws = sid_workspace_create(m);
    double q[7], v[6] = {0.7, -0.3, 0.01, 0.1, 0.05, -0.2};
    /* rolled about x (the -y corners c0, c1 low), then pitched a little so that c1 is ~1.5 mm up */
    double q1[4], q2[4];
    quat(0.3, 1, 0, 0, q1);
    quat(-0.015, 0, 1, 0, q2);
    q[0] = 0, q[1] = 0, q[2] = 0.2;
    quat_mul(q1, q2, q + 3);
    place(m, theta, ws, q, 0, -1e-4);
    fprintf(stderr, "gaps: %.2e %.2e %.2e %.2e\n", gap(m, theta, ws, q, 0), gap(m, theta, ws, q, 1), gap(m, theta, ws, q, 2),
            gap(m, theta, ws, q, 3));
    const int want[4] = {SLIDE, SEP, -1, -1};
    step_check("box, a corner sliding, a corner separated", m, theta, q, v, want, 1e-5);
    sid_workspace_free(ws);
    sid_model_free(m);
    sid_free(theta);
}
END_TEST

START_TEST(vjp_box_two_sliding)
{
    double *theta;
    sid_model *m = hard_robot(0, 0.4, &theta);
    sid_workspace *ws = sid_workspace_create(m);
    double q[7], v[6] = {0.8, 0.3, -0.02, 0.05, 0.02, 0.1};
    double q1[4], q2[4];
    quat(0.3, 1, 0, 0, q1);
    quat(0.0005, 0, 1, 0, q2);
    q[0] = 0, q[1] = 0, q[2] = 0.2;
    quat_mul(q1, q2, q + 3);
    place(m, theta, ws, q, 0, -1e-4);
    const int want[4] = {SLIDE, SLIDE, -1, -1};
    step_check("box, two corners sliding", m, theta, q, v, want, 1e-5);
    sid_workspace_free(ws);
    sid_model_free(m);
    sid_free(theta);
}
END_TEST

/* Four coplanar corners sticking: lambda is unique only through the regularisation, and moving one
 * sphere (its radius, say) off the plane of the others changes the redundant part of lambda by
 * (beta / h) / r per metre, so the modes hold only within ~1e-8 m: checked with a tiny step. */
START_TEST(vjp_box_four_stick)
{
    double *theta;
    sid_model *m = hard_robot(0, 0.7, &theta);
    sid_workspace *ws = sid_workspace_create(m);
    double q[7] = {0.1, 0.2, 0.065 - 1e-4, 1, 0, 0, 0}, v[6] = {0.01, -0.01, -0.01, 0.02, 0.01, 0.03};
    const int want[4] = {STICK, STICK, STICK, STICK};
    fd_scale = 1e-10, fd_floor = 1e-5;
    step_check("box, four corners sticking", m, theta, q, v, want, 1e-4);
    fd_scale = 1e-6, fd_floor = 1e-9;
    sid_workspace_free(ws);
    sid_model_free(m);
    sid_free(theta);
}
END_TEST

START_TEST(vjp_box_two_stick)
{
    double *theta;
    sid_model *m = hard_robot(0, 0.9, &theta);
    sid_workspace *ws = sid_workspace_create(m);
    double q[7], v[6] = {0.01, -0.01, -0.01, 0.02, 0.01, 0.03};
    quat(0.3, 1, 0, 0, q + 3);
    q[0] = 0, q[1] = 0, q[2] = 0.2;
    place(m, theta, ws, q, 0, -1e-4);
    const int want[4] = {STICK, STICK, -1, -1};
    step_check("box, two corners sticking", m, theta, q, v, want, 1e-5);
    sid_workspace_free(ws);
    sid_model_free(m);
    sid_free(theta);
}
END_TEST

/* The leg robot with the box level and high, the foot (a descendant link) on the ground. */
static void foot_state(const sid_model *m, const double *theta, sid_workspace *ws, double hip, double *q)
{
    const double q0[8] = {0, 0, 0.3, 1, 0, 0, 0, hip};
    memcpy(q, q0, sizeof q0);
    place(m, theta, ws, q, 4, -2e-4);
}

START_TEST(vjp_leg_foot_stick)
{
    double *theta;
    sid_model *m = hard_robot(1, 0.8, &theta);
    sid_workspace *ws = sid_workspace_create(m);
    double q[8], v[7] = {0.01, 0.02, -0.02, 0.05, -0.1, 0.03, 0.1};
    foot_state(m, theta, ws, 0.2, q);
    const int want[5] = {-1, -1, -1, -1, STICK};
    step_check("leg, foot sticking", m, theta, q, v, want, 1e-5);
    sid_workspace_free(ws);
    sid_model_free(m);
    sid_free(theta);
}
END_TEST

START_TEST(vjp_leg_foot_slide)
{
    double *theta;
    sid_model *m = hard_robot(1, 0.5, &theta);
    sid_workspace *ws = sid_workspace_create(m);
    double q[8], v[7] = {0.6, -0.3, -0.05, 0.2, 0.1, -0.3, 0.5};
    foot_state(m, theta, ws, 0.2, q);
    const int want[5] = {-1, -1, -1, -1, SLIDE};
    step_check("leg, foot sliding", m, theta, q, v, want, 1e-5);
    sid_workspace_free(ws);
    sid_model_free(m);
    sid_free(theta);
}
END_TEST

/* Foot and a box corner in contact together: the box pitched nose down (+x corners low), the
 * leg swung so that its foot is as low as corner c1, c3 lifted by a small roll. */
START_TEST(vjp_leg_foot_and_corner)
{
    double *theta;
    sid_model *m = hard_robot(1, 0.6, &theta);
    sid_workspace *ws = sid_workspace_create(m);
    double q[8], v[7] = {0.5, 0.2, -0.02, 0.1, -0.1, 0.2, -0.3};
    double q1[4], q2[4];
    quat(0.2, 0, 1, 0, q1);
    quat(0.03, 1, 0, 0, q2);
    q[0] = 0, q[1] = 0, q[2] = 0.3;
    quat_mul(q1, q2, q + 3);
    /* hip angle: the foot 0.5 mm above corner c1 */
    double lo = 0.3, hi = 1.6;
    for (int it = 0; it < 60; it++) {
        q[7] = 0.5 * (lo + hi);
        const double d = gap(m, theta, ws, q, 4) - gap(m, theta, ws, q, 1) - 5e-4;
        if (d < 0) lo = q[7];
        else hi = q[7];
    }
    place(m, theta, ws, q, 1, -2e-4);
    fprintf(stderr, "gaps: %.2e %.2e %.2e %.2e foot %.2e (hip %.3f)\n", gap(m, theta, ws, q, 0), gap(m, theta, ws, q, 1),
            gap(m, theta, ws, q, 2), gap(m, theta, ws, q, 3), gap(m, theta, ws, q, 4), q[7]);
    const int want[5] = {-1, SLIDE, -1, SEP, SLIDE};
    step_check("leg, foot and a corner sliding, a corner separated", m, theta, q, v, want, 1e-5);
    sid_workspace_free(ws);
    sid_model_free(m);
    sid_free(theta);
}
END_TEST

/* ---- 4: where the naive gradient fails -------------------------------------------------------- */

/* Simulate n steps from x (q then v), keeping every state in xs ((n + 1) x nx). */
static void rollout(const sid_model *m, const double *theta, sid_workspace *ws, double h, int n, double *xs)
{
    const int nq = m->nq, nv = m->nv, nx = nq + nv;
    double u[16] = {0};
    sid_error err = {0};
    for (int k = 0; k < n; k++) {
        const double *x = xs + (size_t)k * (size_t)nx;
        double *x1 = xs + (size_t)(k + 1) * (size_t)nx;
        ck_assert_msg(sid_step(m, theta, ws, SID_EULER, h, x, x + nq, u, x1, x1 + nq, &err) == SID_OK, "%s", err.msg);
    }
}

/* Reverse the rollout from the seed xbar (nx) at the end: gradient w.r.t. the start state
 * into xbar, and theta into thetabar; per-sample seeds seed(k) added on the way if given. */
static void reverse(const sid_model *m, const double *theta, sid_workspace *ws, double h, int n, const double *xs,
                    const double *seeds, double *xbar, double *thetabar)
{
    const int nq = m->nq, nv = m->nv, nx = nq + nv;
    double u[16] = {0}, x1bar[32];
    sid_error err = {0};
    for (int k = n - 1; k >= 0; k--) {
        if (seeds)
            for (int i = 0; i < nx; i++) xbar[i] += seeds[(size_t)(k + 1) * (size_t)nx + (size_t)i];
        const double *x = xs + (size_t)k * (size_t)nx;
        memset(x1bar, 0, sizeof x1bar);
        ck_assert_msg(sid_step_vjp(m, theta, ws, SID_EULER, h, x, x + nq, u, xbar, xbar + nq, x1bar, x1bar + nq, thetabar,
                                   &err) == SID_OK, "%s", err.msg);
        memcpy(xbar, x1bar, sizeof(double) * (size_t)nx);
    }
}

/* A box on unknown friction: the log of a box sliding with friction 0.5; the loss of a model
 * with friction 0.4 over a window. dL/dmu from the implicit adjoint (through the library's
 * windowed loss, and by hand) matches differences of the loss; the naive adjoint, which holds
 * the impulses fixed, misses it. */
START_TEST(unknown_friction)
{
    double *theta;
    sid_model *m = hard_robot(0, 0.5, &theta);
    const int nq = m->nq, nv = m->nv, nx = nq + nv, n = 150, np = m->nparam;
    const int jmu = m->p_ground + P_GROUND_FRICTION;
    const double h = 1e-3;
    sid_workspace *ws = sid_workspace_create(m);
    double *xs = malloc(sizeof(double) * (size_t)((n + 1) * nx)), *xl = malloc(sizeof(double) * (size_t)((n + 1) * nx));
    const double x0[13] = {0, 0, 0.065, 1, 0, 0, 0, 1.0, 0.2, 0, 0, 0, 0.5};
    memcpy(xl, x0, sizeof x0);
    rollout(m, theta, ws, h, n, xl);
    /* the log */
    sid_traj *tr = sid_traj_create(n + 1, nq, nv, 1);
    for (int k = 0; k <= n; k++) {
        tr->t[k] = k * h;
        memcpy(tr->q + (size_t)k * (size_t)nq, xl + (size_t)k * (size_t)nx, sizeof(double) * (size_t)nq);
        memcpy(tr->qd + (size_t)k * (size_t)nv, xl + (size_t)k * (size_t)nx + nq, sizeof(double) * (size_t)nv);
        memset(tr->u + (size_t)k * (size_t)nv, 0, sizeof(double) * (size_t)nv);
    }
    theta[jmu] = 0.4;
    /* by hand: L = sum_k |x_k - xlog_k|^2 / 2 */
    memcpy(xs, x0, sizeof x0);
    rollout(m, theta, ws, h, n, xs);
    double *seeds = calloc((size_t)((n + 1) * nx), sizeof(double));
    for (int k = 1; k <= n; k++)
        for (int i = 0; i < nx; i++) seeds[k * nx + i] = xs[k * nx + i] - xl[k * nx + i];
    double xbar[32] = {0}, *tb = calloc((size_t)np, sizeof(double)), *tbn = calloc((size_t)np, sizeof(double));
    reverse(m, theta, ws, h, n, xs, seeds, xbar, tb);
    memset(xbar, 0, sizeof xbar);
    sid_hard_set_frozen(ws, 1);
    reverse(m, theta, ws, h, n, xs, seeds, xbar, tbn);
    sid_hard_set_frozen(ws, 0);
    double Lpm[2];
    const double e = 1e-6;
    for (int sgn = 0; sgn < 2; sgn++) {
        theta[jmu] = 0.4 + (sgn ? e : -e);
        memcpy(xs, x0, sizeof x0);
        rollout(m, theta, ws, h, n, xs);
        double L = 0;
        for (int k = 1; k <= n; k++)
            for (int i = 0; i < nx; i++) L += 0.5 * (xs[k * nx + i] - xl[k * nx + i]) * (xs[k * nx + i] - xl[k * nx + i]);
        Lpm[sgn] = L;
    }
    theta[jmu] = 0.4;
    const double fd = (Lpm[1] - Lpm[0]) / (2 * e), rel = fabs(tb[jmu] - fd) / fabs(fd);
    /* through the library's windowed loss (loss.c) */
    sid_loss_opts o;
    sid_loss_opts_defaults(&o);
    o.window = 0;
    o.sim.integrator = SID_EULER;
    o.threads = 1;
    sid_problem *p;
    sid_error err = {0};
    ck_assert_msg(sid_problem_create(&p, m, (const sid_traj *const *)&tr, 1, &o, &err) == SID_OK, "%s", err.msg);
    double Lw, Lp, Lm, *g = calloc((size_t)np, sizeof(double));
    ck_assert_msg(sid_problem_loss(p, theta, NULL, &Lw, g, NULL, &err) == SID_OK, "%s", err.msg);
    theta[jmu] = 0.4 + e;
    ck_assert_int_eq(sid_problem_loss(p, theta, NULL, &Lp, NULL, NULL, &err), SID_OK);
    theta[jmu] = 0.4 - e;
    ck_assert_int_eq(sid_problem_loss(p, theta, NULL, &Lm, NULL, NULL, &err), SID_OK);
    theta[jmu] = 0.4;
    const double fdw = (Lp - Lm) / (2 * e), relw = fabs(g[jmu] - fdw) / fabs(fdw);
    fprintf(stderr, "box on unknown friction: dL/dmu implicit %.8g, differences %.8g (error %.1e); naive (impulses held) "
            "%.3g; windowed loss: adjoint %.8g, differences %.8g (error %.1e)\n", tb[jmu], fd, rel, tbn[jmu], g[jmu], fdw, relw);
    ck_assert_msg(rel < 1e-5, "implicit dL/dmu %g vs %g", tb[jmu], fd);
    ck_assert_msg(relw < 1e-5, "windowed loss dL/dmu %g vs %g", g[jmu], fdw);
    ck_assert_msg(fabs(tbn[jmu] - fd) > 0.5 * fabs(fd), "the naive gradient %g should miss %g", tbn[jmu], fd);
    free(g);
    sid_problem_free(p);
    sid_traj_free(tr);
    free(seeds);
    free(tb);
    free(tbn);
    free(xs);
    free(xl);
    sid_workspace_free(ws);
    sid_model_free(m);
    sid_free(theta);
}
END_TEST

/* A ball thrown sideways from an unknown height: the position after it lands, as a function of
 * the drop height. The naive adjoint (impulses held fixed) says the ball ends 1:1 higher when
 * dropped higher and that its travel does not depend on the height; the implicit one, like the
 * differences, that it ends on the ground and travels further in the air. */
START_TEST(unknown_drop_height)
{
    double *theta;
    sid_model *m = ball_robot(0.3, &theta);
    const int nq = m->nq, nx = m->nq + m->nv, n = 400, np = m->nparam;
    const double h = 1e-3, z0 = 0.3;
    sid_workspace *ws = sid_workspace_create(m);
    double *xs = malloc(sizeof(double) * (size_t)((n + 1) * nx));
    const double x0[13] = {0, 0, z0, 1, 0, 0, 0, 1.0, 0, 0, 0, 0, 0};
    double fd[2];
    const double e = 1e-6;
    double Lp[2][2];
    for (int sgn = 0; sgn < 2; sgn++) {
        memcpy(xs, x0, sizeof x0);
        xs[2] = z0 + (sgn ? e : -e);
        rollout(m, theta, ws, h, n, xs);
        Lp[sgn][0] = xs[n * nx + 0], Lp[sgn][1] = xs[n * nx + 2];
    }
    fd[0] = (Lp[1][0] - Lp[0][0]) / (2 * e), fd[1] = (Lp[1][1] - Lp[0][1]) / (2 * e);
    memcpy(xs, x0, sizeof x0);
    rollout(m, theta, ws, h, n, xs);
    double *tb = calloc((size_t)np, sizeof(double));
    double gi[2], gn[2];
    for (int out = 0; out < 2; out++)
        for (int frozen = 0; frozen < 2; frozen++) {
            double xbar[32] = {0};
            xbar[out ? 2 : 0] = 1;
            sid_hard_set_frozen(ws, frozen);
            reverse(m, theta, ws, h, n, xs, NULL, xbar, tb);
            (frozen ? gn : gi)[out] = xbar[2];
        }
    sid_hard_set_frozen(ws, 0);
    fprintf(stderr, "ball dropped from %g m, end at x %.4f z %.4f: d x_end/d z0 implicit %.8g, differences %.8g, naive %.3g; "
            "d z_end/d z0 implicit %.3g, differences %.3g, naive %.3g\n", z0, xs[n * nx], xs[n * nx + 2], gi[0], fd[0], gn[0],
            gi[1], fd[1], gn[1]);
    ck_assert_msg(fabs(gi[0] - fd[0]) < 1e-5 * fabs(fd[0]) + 1e-8, "implicit dx/dz0 %g vs %g", gi[0], fd[0]);
    ck_assert_msg(fabs(gi[1] - fd[1]) < 1e-6, "implicit dz/dz0 %g vs %g", gi[1], fd[1]);
    ck_assert_msg(fabs(fd[0]) > 0.05, "the travel should depend on the drop height (%g)", fd[0]);
    ck_assert_msg(fabs(gn[1] - 1) < 1e-3 && fabs(fd[1]) < 1e-3, "naive dz/dz0 %g, true %g", gn[1], fd[1]);
    ck_assert_msg(fabs(gn[0] - fd[0]) > 0.5 * fabs(fd[0]), "naive dx/dz0 %g should miss %g", gn[0], fd[0]);
    (void)nq;
    free(tb);
    free(xs);
    sid_workspace_free(ws);
    sid_model_free(m);
    sid_free(theta);
}
END_TEST

/* The windowed loss (loss.c) of a model with hard contact: a ball thrown onto the ground, logged
 * with other parameters; the adjoint gradient of every parameter against differences. */
START_TEST(window_gradient_ball)
{
    double *theta;
    sid_model *m = ball_robot(0.4, &theta);
    const int nq = m->nq, nv = m->nv, nx = nq + nv, n = 300, np = m->nparam;
    const double h = 1e-3;
    sid_workspace *ws = sid_workspace_create(m);
    double *xl = malloc(sizeof(double) * (size_t)((n + 1) * nx));
    const double x0[13] = {0, 0, 0.2, 1, 0, 0, 0, 1.0, 0.3, 0, 2, -1, 0.5};
    memcpy(xl, x0, sizeof x0);
    rollout(m, theta, ws, h, n, xl);
    sid_traj *tr = sid_traj_create(n + 1, nq, nv, 1);
    for (int k = 0; k <= n; k++) {
        tr->t[k] = k * h;
        memcpy(tr->q + (size_t)k * (size_t)nq, xl + (size_t)k * (size_t)nx, sizeof(double) * (size_t)nq);
        memcpy(tr->qd + (size_t)k * (size_t)nv, xl + (size_t)k * (size_t)nx + nq, sizeof(double) * (size_t)nv);
        memset(tr->u + (size_t)k * (size_t)nv, 0, sizeof(double) * (size_t)nv);
    }
    /* the model to fit: other friction, radius, mass, inertia, ground height, centre offset */
    unsigned seed = 9;
    for (int j = 0; j < np; j++) theta[j] *= tu_uniform(&seed, 0.9, 1.1);
    theta[m->sphere[0].p + P_SPHERE_XYZ + 0] = 0.002;
    theta[m->sphere[0].p + P_SPHERE_XYZ + 2] = -0.003;
    theta[m->p_ground + P_GROUND_HEIGHT] = 0.004;
    sid_loss_opts o;
    sid_loss_opts_defaults(&o);
    o.window = 0.1;
    o.sim.integrator = SID_EULER;
    o.threads = 1;
    sid_problem *p;
    sid_error err = {0};
    ck_assert_msg(sid_problem_create(&p, m, (const sid_traj *const *)&tr, 1, &o, &err) == SID_OK, "%s", err.msg);
    double L, *g = calloc((size_t)np, sizeof(double));
    ck_assert_msg(sid_problem_loss(p, theta, NULL, &L, g, NULL, &err) == SID_OK, "%s", err.msg);
    double worst = 0, gmax = 0;
    char where[256] = "none";
    for (int j = 0; j < np; j++) gmax = fmax(gmax, fabs(g[j]));
    for (int j = 0; j < np; j++) {
        const double z0 = theta[j], e = 1e-7 * fmax(0.1, fabs(z0));
        double Lp, Lm;
        theta[j] = z0 + e;
        ck_assert_int_eq(sid_problem_loss(p, theta, NULL, &Lp, NULL, NULL, &err), SID_OK);
        theta[j] = z0 - e;
        ck_assert_int_eq(sid_problem_loss(p, theta, NULL, &Lm, NULL, NULL, &err), SID_OK);
        theta[j] = z0;
        const double num = (Lp - Lm) / (2 * e), r = tu_rel_err(g[j], num, 1e-9 * gmax);
        if (r > worst) worst = r, snprintf(where, sizeof where, "%s: %.10g vs fd %.10g", m->param[j].name, g[j], num);
    }
    fprintf(stderr, "hard ball, windowed loss %.4g: worst relative error of the gradient %.2e at %s (max |g| %.3g)\n", L,
            worst, where, gmax);
    ck_assert_msg(worst < 1e-4, "relative error %g at %s", worst, where);
    free(g);
    sid_problem_free(p);
    sid_traj_free(tr);
    free(xl);
    sid_workspace_free(ws);
    sid_model_free(m);
    sid_free(theta);
}
END_TEST

Suite *hard_contact_suite(void)
{
    Suite *s = suite_create("hard_contact");
    TCase *tc = tcase_create("hard_contact");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, box_rests);
    tcase_add_test(tc, box_slides_coulomb_distance);
    tcase_add_test(tc, tumble);
    tcase_add_test(tc, rk4_rejected);
    tcase_add_test(tc, vjp_box_stick);
    tcase_add_test(tc, vjp_box_slide);
    tcase_add_test(tc, vjp_box_slide_and_separated);
    tcase_add_test(tc, vjp_box_two_sliding);
    tcase_add_test(tc, vjp_box_four_stick);
    tcase_add_test(tc, vjp_box_two_stick);
    tcase_add_test(tc, vjp_leg_foot_stick);
    tcase_add_test(tc, vjp_leg_foot_slide);
    tcase_add_test(tc, vjp_leg_foot_and_corner);
    tcase_add_test(tc, unknown_friction);
    tcase_add_test(tc, unknown_drop_height);
    tcase_add_test(tc, window_gradient_ball);
    suite_add_tcase(s, tc);
    return s;
}
