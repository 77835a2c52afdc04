/* test_contact_force.c — sid_contact_normal_forces, what the report page charts for robots with
 * contact: each sphere's compliant normal force f_n = w softplus(d / w) (stiffness - damping u_z)
 * (sid.h), checked against that formula evaluated here for a box resting level on its four corner
 * spheres, sinking, spinning about the vertical (which moves the contact points sideways, not
 * down: f_n unchanged) and lifted clear (f_n ~ 0); hard contact has no such force. */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "test_util.h"

Suite *contact_force_suite(void);

/* the box of tu_box_robot: corner spheres 5 mm at z = -0.05 in the box, ground at 0.01, defaults
 * stiffness 1e4, damping 1e3, width 1e-3 */
static double expected(double z, double uz)
{
    const double w = 1e-3, d = 0.01 + 0.005 - (z - 0.05), x = d / w;
    const double sp = (x > 0 ? x : 0) + log1p(exp(-fabs(x)));
    return w * sp * (1e4 - 1e3 * uz);
}

START_TEST(test_box_normal_force)
{
    double *theta;
    sid_model *m = tu_box_robot(0, SID_CONTACT_COMPLIANT, 1, &theta);
    ck_assert_ptr_nonnull(m);
    sid_workspace *ws = sid_workspace_create(m);
    double fn[8];
    const struct { double z, vz, wz; } c[] = { {0.064, 0, 0}, {0.064, -0.02, 0}, {0.064, -0.02, 3}, {0.2, 0, 0} };
    for (int k = 0; k < 4; k++) {
        const double q[7] = {0.01, -0.02, c[k].z, 1, 0, 0, 0}, v[6] = {0.3, 0, c[k].vz, 0, 0, c[k].wz};
        ck_assert_int_eq(sid_contact_normal_forces(m, theta, ws, q, v, fn), 4);
        for (int s = 0; s < 4; s++)
            /* the same formula in the same order of operations: rounding only */
            ck_assert_msg(fabs(fn[s] - expected(c[k].z, c[k].vz)) <= 1e-12 * fmax(1, fabs(fn[s])),
                          "case %d sphere %d: %.17g, expected %.17g", k, s, fn[s], expected(c[k].z, c[k].vz));
    }
    ck_assert(fn[0] < 1e-50);   /* 13.5 cm clear of the ground: w softplus(-135) k ~ 2e-58 N */
    sid_workspace_free(ws);
    sid_free(theta);
    sid_model_free(m);
    m = tu_box_robot(0, SID_CONTACT_HARD, 1, &theta);
    ws = sid_workspace_create(m);
    const double q[7] = {0, 0, 0.064, 1, 0, 0, 0}, v[6] = {0};
    ck_assert_int_eq(sid_contact_normal_forces(m, theta, ws, q, v, fn), 0);
    sid_workspace_free(ws);
    sid_free(theta);
    sid_model_free(m);
}
END_TEST

Suite *contact_force_suite(void)
{
    Suite *s = suite_create("contact_force");
    TCase *tc = tcase_create("normal");
    tcase_add_test(tc, test_box_normal_force);
    suite_add_tcase(s, tc);
    return s;
}
