/* test_dynamics.c — spatial algebra identities and rigid-body dynamics physics checks. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "sid_internal.h"

Suite *dynamics_suite(void);

static sid_sv random_sv(unsigned *s)
{
    return sid_sv_make(sid_v3_make(tu_uniform(s, -1, 1), tu_uniform(s, -1, 1), tu_uniform(s, -1, 1)),
                       sid_v3_make(tu_uniform(s, -1, 1), tu_uniform(s, -1, 1), tu_uniform(s, -1, 1)));
}

START_TEST(spatial_identities)
{
    unsigned s = 7;
    for (int trial = 0; trial < 20; trial++) {
        const sid_v3 ax = sid_v3_make(tu_uniform(&s, -1, 1), tu_uniform(&s, -1, 1), tu_uniform(&s, -1, 1));
        const sid_v3 axis = sid_v3_scale(1 / sid_v3_norm(ax), ax);
        const sid_m3 R = sid_m3_axis_angle(axis, tu_uniform(&s, -3, 3));
        /* R R^T = 1 */
        const sid_m3 Rt = sid_m3_transpose(&R), P = sid_m3_mul(&R, &Rt);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) ck_assert_double_eq_tol(P.m[i][j], i == j, 1e-14);
        sid_xform X = {Rt, sid_v3_make(tu_uniform(&s, -1, 1), tu_uniform(&s, -1, 1), tu_uniform(&s, -1, 1))};
        const sid_sv m = random_sv(&s), f = random_sv(&s), v = random_sv(&s);
        /* power is frame-invariant: (X m) . f = m . (X^T f) */
        ck_assert_double_eq_tol(sid_sv_dot(sid_xform_motion(&X, m), f), sid_sv_dot(m, sid_xform_force_inv(&X, f)), 1e-13);
        /* v x* = -(v x)^T */
        ck_assert_double_eq_tol(sid_sv_dot(sid_sv_crossm(v, m), f), -sid_sv_dot(m, sid_sv_crossf(v, f)), 1e-13);
        /* v x v = 0 */
        const sid_sv z = sid_sv_crossm(v, v);
        ck_assert_double_eq_tol(sid_sv_dot(z, z), 0, 1e-28);
        /* spatial inertia is symmetric and positive: (I a) . b = a . (I b), (I a) . a > 0 */
        sid_inertia I = {1.3, sid_v3_make(0.1, -0.2, 0.05), {{{0.02, 0.001, 0.002}, {0.001, 0.03, -0.001}, {0.002, -0.001, 0.025}}}};
        ck_assert_double_eq_tol(sid_sv_dot(sid_inertia_mul(&I, m), v), sid_sv_dot(m, sid_inertia_mul(&I, v)), 1e-14);
        ck_assert(sid_sv_dot(sid_inertia_mul(&I, m), m) > 0);
    }
}
END_TEST

/* The model and a state for the physics tests. */
typedef struct {
    sid_model *m;
    double *theta;
    sid_workspace *ws;
    int nq, nv;
} fixture;

static fixture make(unsigned seed, int njoint, int features)
{
    fixture fx;
    sid_robot_desc *d = tu_random_robot(seed, njoint, features);
    sid_error err = {0};
    ck_assert_msg(sid_model_create(&fx.m, &fx.theta, d, &err) == SID_OK, "%s", err.msg);
    tu_desc_free(d);
    fx.ws = sid_workspace_create(fx.m);
    fx.nq = sid_model_nq(fx.m);
    fx.nv = sid_model_nv(fx.m);
    return fx;
}

static void release(fixture *fx)
{
    sid_workspace_free(fx->ws);
    sid_model_free(fx->m);
    sid_free(fx->theta);
}

START_TEST(mass_matrix_spd_and_matches_rnea)
{
    const int features[] = {0, TU_BRANCHED | TU_PRISMATIC | TU_FIXED};
    for (int f = 0; f < 2; f++) {
        fixture fx = make(3 + (unsigned)f, 7, features[f]);
        const int n = fx.nv;
        unsigned s = 11;
        double q[64], v[64], a[64], tau0[64], tau1[64], M[64 * 64], L[64 * 64];
        for (int i = 0; i < n; i++) q[i] = tu_uniform(&s, -2, 2), v[i] = 0, a[i] = 0;
        sid_mass_matrix(fx.m, fx.theta, fx.ws, q, M);
        sid_inverse_dynamics(&(sid_fd_point){fx.m, fx.theta, fx.ws, sid_contact_source(fx.m), q, v, NULL, 0, 0}, a, tau0);
        for (int j = 0; j < n; j++) {
            /* column j of M = ID(q, 0, e_j) - ID(q, 0, 0) */
            a[j] = 1;
            sid_inverse_dynamics(&(sid_fd_point){fx.m, fx.theta, fx.ws, sid_contact_source(fx.m), q, v, NULL, 0, 0}, a, tau1);
            a[j] = 0;
            for (int i = 0; i < n; i++) {
                ck_assert_double_eq_tol(M[i * n + j], M[j * n + i], 1e-14);
                ck_assert_double_eq_tol(M[i * n + j], tau1[i] - tau0[i], 1e-12);
            }
        }
        /* the tree-sparse factor solves M x = b */
        memcpy(L, M, sizeof(double) * (size_t)(n * n));
        ck_assert_int_eq(sid_factor(fx.m, L), 0);
        double b[64], x[64];
        for (int i = 0; i < n; i++) b[i] = x[i] = tu_uniform(&s, -1, 1);
        sid_factor_solve(fx.m, L, x);
        for (int i = 0; i < n; i++) {
            double r = -b[i];
            for (int j = 0; j < n; j++) r += M[i * n + j] * x[j];
            ck_assert_msg(fabs(r) < 1e-10 * (1 + fabs(b[i])), "residual %g at %d", r, i);
        }
        release(&fx);
    }
}
END_TEST

START_TEST(inverse_of_forward_dynamics)
{
    /* RNEA(q, v, FD(q, v, u)) + B a + D v = F(u, v): the two algorithms agree to 1e-10 */
    fixture fx = make(5, 7, TU_ALL);
    const int n = fx.nv;
    unsigned s = 5;
    double q[64], v[64], u[64], a[64], tau[64], F[64];
    sid_error err = {0};
    for (int trial = 0; trial < 10; trial++) {
        for (int i = 0; i < n; i++) q[i] = tu_uniform(&s, -2, 2), v[i] = tu_uniform(&s, -3, 3), u[i] = tu_uniform(&s, -2, 2);
        const sid_fd_point pt = {fx.m, fx.theta, fx.ws, sid_contact_source(fx.m), q, v, u, 0, 0};
        ck_assert_int_eq(sid_fd(&pt, a, &err), SID_OK);
        sid_inverse_dynamics(&pt, a, tau);
        sid_joint_force(fx.m, fx.theta, v, u, F);
        for (int b = 1; b < fx.m->nbody; b++) {
            const sid_body *bd = &fx.m->body[b];
            if (bd->vadr < 0) continue;
            const double *pd = fx.theta + bd->p_dof;
            const int i = bd->vadr;
            const double lhs = tau[i] + pd[P_ARMATURE] * a[i] + pd[P_VISCOUS] * v[i];
            ck_assert_msg(fabs(lhs - F[i]) <= 1e-10 * (1 + fabs(F[i])), "dof %d: %.17g vs %.17g", i, lhs, F[i]);
        }
    }
    release(&fx);
}
END_TEST

START_TEST(energy_conserved_rk4)
{
    /* frictionless, unactuated 7-joint arm, 10 s of RK4 at 1 ms: relative drift < 1e-6 */
    fixture fx = make(9, 7, 0);
    const int n = fx.nv;
    double q[64], v[64], q1[64], v1[64], u[64] = {0};
    unsigned s = 3;
    for (int i = 0; i < n; i++) q[i] = tu_uniform(&s, -1, 1), v[i] = tu_uniform(&s, -1, 1);
    const double E0 = sid_energy(fx.m, fx.theta, fx.ws, q, v);
    sid_error err = {0};
    double worst = 0;
    for (int k = 0; k < 10000; k++) {
        ck_assert_int_eq(sid_step(fx.m, fx.theta, fx.ws, SID_RK4, 1e-3, q, v, u, q1, v1, &err), SID_OK);
        memcpy(q, q1, sizeof q);
        memcpy(v, v1, sizeof v);
        if (k % 100 == 99) {
            const double drift = fabs(sid_energy(fx.m, fx.theta, fx.ws, q, v) - E0) / fabs(E0);
            if (drift > worst) worst = drift;
        }
    }
    ck_assert_msg(worst < 1e-6, "relative energy drift %g", worst);
    release(&fx);
}
END_TEST

START_TEST(step_loop_does_not_allocate)
{
    fixture fx = make(2, 7, TU_ALL);
    double q[64] = {0}, v[64] = {0}, u[64] = {0}, q1[64], v1[64], qb[64], vb[64], tb[1024];
    double *thetabar = tb;
    ck_assert_int_le(sid_model_nparam(fx.m), 1024);
    sid_error err = {0};
    const long before = sid_alloc_count();
    for (int k = 0; k < 100; k++) {
        for (int i = 0; i < fx.nv; i++) u[i] = sin(0.1 * k + i), qb[i] = vb[i] = 0;
        ck_assert_int_eq(sid_step(fx.m, fx.theta, fx.ws, k % 2 ? SID_RK4 : SID_EULER, 1e-3, q, v, u, q1, v1, &err), SID_OK);
        ck_assert_int_eq(sid_step_vjp(fx.m, fx.theta, fx.ws, SID_RK4, 1e-3, q, v, u, q1, v1, qb, vb, thetabar, &err), SID_OK);
        memcpy(q, q1, sizeof q);
        memcpy(v, v1, sizeof v);
    }
    ck_assert_int_eq(sid_alloc_count(), before);
    release(&fx);
}
END_TEST

START_TEST(divergence_is_reported_not_propagated)
{
    fixture fx = make(4, 3, 0);
    double q[64] = {0}, v[64] = {0}, u[64] = {0}, q1[64], v1[64];
    v[0] = INFINITY;
    sid_error err = {0};
    ck_assert_int_ne(sid_step(fx.m, fx.theta, fx.ws, SID_EULER, 1e-3, q, v, u, q1, v1, &err), SID_OK);
    ck_assert_ptr_nonnull(strstr(err.msg, "not"));
    release(&fx);
}
END_TEST

Suite *dynamics_suite(void)
{
    Suite *s = suite_create("dynamics");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, spatial_identities);
    tcase_add_test(tc, mass_matrix_spd_and_matches_rnea);
    tcase_add_test(tc, inverse_of_forward_dynamics);
    tcase_add_test(tc, energy_conserved_rk4);
    tcase_add_test(tc, step_loop_does_not_allocate);
    tcase_add_test(tc, divergence_is_reported_not_propagated);
    suite_add_tcase(s, tc);
    return s;
}
