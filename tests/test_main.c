/* test_main.c — the Check runner: every suite of tests/. CK_RUN_SUITE=name selects one;
 * CK_FORK=no runs in-process (for gdb). Run from tests/ (fixture paths are relative). */
#include <check.h>
#include <stdlib.h>

Suite *dynamics_suite(void);
Suite *gradient_suite(void);
Suite *model_suite(void);
Suite *mujoco_suite(void);
Suite *loss_suite(void);
Suite *fit_suite(void);
Suite *recovery_suite(void);
Suite *free_suite(void);
Suite *hard_contact_suite(void);
Suite *contact_mujoco_suite(void);
Suite *contact_recovery_suite(void);

int main(void)
{
    SRunner *sr = srunner_create(dynamics_suite());
    srunner_add_suite(sr, gradient_suite());
    srunner_add_suite(sr, model_suite());
    srunner_add_suite(sr, mujoco_suite());
    srunner_add_suite(sr, loss_suite());
    srunner_add_suite(sr, fit_suite());
    srunner_add_suite(sr, recovery_suite());
    srunner_add_suite(sr, free_suite());
    srunner_add_suite(sr, hard_contact_suite());
    srunner_add_suite(sr, contact_mujoco_suite());
    srunner_add_suite(sr, contact_recovery_suite());
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
