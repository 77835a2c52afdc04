/* test_main.c — the Check runner: every suite of tests/. Run from tests/ (fixture paths are
 * relative). Check's own variables select: CK_RUN_SUITE=name one suite, CK_RUN_CASE=name one
 * test case (in every suite that has one of that name), CK_INCLUDE_TAGS / CK_EXCLUDE_TAGS by
 * tag (`make debug` leaves out "slow"); CK_FORK=no runs in-process (for gdb).
 *
 * Check itself runs nothing, and succeeds, when a selector names nothing; so a typo would pass.
 * Here a selection that names no suite or no case, or that leaves no check to run, is an
 * error: exit 2 with a message naming the selector. Exit 1 when a check fails. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"

Suite *dynamics_suite(void);
Suite *gradient_suite(void);
Suite *model_suite(void);
Suite *mujoco_suite(void);
Suite *loss_suite(void);
Suite *fit_suite(void);
Suite *recovery_suite(void);
Suite *free_suite(void);
Suite *hard_contact_suite(void);
Suite *hard_forward_suite(void);
Suite *contact_mujoco_suite(void);
Suite *contact_recovery_suite(void);
Suite *json_edit_suite(void);
Suite *windows_suite(void);
Suite *step_choice_suite(void);
Suite *covariance_suite(void);
Suite *urdf_suite(void);
Suite *xml_text_suite(void);
Suite *twin_suite(void);
Suite *limits_suite(void);
Suite *mjcf_suite(void);
Suite *contact_force_suite(void);
Suite *lm_suite(void);
Suite *shard_suite(void);
Suite *io_api_suite(void);
Suite *fit_hooks_suite(void);
Suite *dry_friction_suite(void);
Suite *limit_constraint_suite(void);
Suite *servo_suite(void);
Suite *delay_suite(void);
Suite *pushes_suite(void);
Suite *intervals_suite(void);
Suite *friction_levels_suite(void);
Suite *torque_sensor_suite(void);
Suite *window_select_suite(void);
Suite *inertia_param_suite(void);
Suite *backlash_suite(void);
Suite *forward_suite(void);
Suite *jacobian_rows_suite(void);
Suite *command_grad_suite(void);
Suite *excite_suite(void);
Suite *mesh_suite(void);

/* name: as the suite's own suite_create gives it (CK_RUN_SUITE compares against that) */
static const struct {
    const char *name;
    Suite *(*make)(void);
} suites[] = {
    {"dynamics", dynamics_suite},
    {"gradient", gradient_suite},
    {"model", model_suite},
    {"mujoco", mujoco_suite},
    {"loss", loss_suite},
    {"fit", fit_suite},
    {"recovery", recovery_suite},
    {"free", free_suite},
    {"hard_contact", hard_contact_suite},
    {"hard_forward", hard_forward_suite},
    {"contact_mujoco", contact_mujoco_suite},
    {"contact_recovery", contact_recovery_suite},
    {"json_edit", json_edit_suite},
    {"windows", windows_suite},
    {"step_choice", step_choice_suite},
    {"covariance", covariance_suite},
    {"urdf", urdf_suite},
    {"xml_text", xml_text_suite},
    {"twin", twin_suite},
    {"limits", limits_suite},
    {"mjcf", mjcf_suite},
    {"lm", lm_suite},
    {"contact_force", contact_force_suite},
    {"io_api", io_api_suite},
    {"fit_hooks", fit_hooks_suite},
    {"dry_friction", dry_friction_suite},
    {"friction_levels", friction_levels_suite},
    {"limit_constraint", limit_constraint_suite},
    {"servo", servo_suite},
    {"delay", delay_suite},
    {"pushes", pushes_suite},
    {"intervals", intervals_suite},
    {"torque_sensor", torque_sensor_suite},
    {"window_select", window_select_suite},
    {"inertia_param", inertia_param_suite},
    {"backlash", backlash_suite},
    {"forward", forward_suite},
    {"jacobian_rows", jacobian_rows_suite},
    {"command_grad", command_grad_suite},
    {"shard", shard_suite},
    {"excite", excite_suite},
    {"mesh", mesh_suite},
};
enum { NSUITE = (int)(sizeof suites / sizeof suites[0]) };

static void list_suites(void)
{
    fprintf(stderr, "test_runner: suites:");
    for (int i = 0; i < NSUITE; i++) fprintf(stderr, " %s", suites[i].name);
    fprintf(stderr, "\n");
}

/* What selects, for messages: "CK_RUN_SUITE=fit CK_EXCLUDE_TAGS=slow", or "(all)". */
static void print_selection(void)
{
    static const char *const vars[] = {"CK_RUN_SUITE", "CK_RUN_CASE", "CK_INCLUDE_TAGS", "CK_EXCLUDE_TAGS"};
    int any = 0;
    for (int i = 0; i < 4; i++) {
        const char *v = getenv(vars[i]);
        if (v) fprintf(stderr, " %s='%s'", vars[i], v), any = 1;
    }
    if (!any) fprintf(stderr, " (no selector: all suites)");
}

int main(void)
{
    cli_diag_install();   /* io's warnings on stderr, as sysid prints them: suites capture them */
    const char *sname = getenv("CK_RUN_SUITE"), *cname = getenv("CK_RUN_CASE");
    int selected = -1;
    for (int i = 0; sname && i < NSUITE; i++)
        if (strcmp(sname, suites[i].name) == 0) selected = i;
    if (sname && selected < 0) {
        fprintf(stderr, "test_runner: error: CK_RUN_SUITE='%s' names no suite\n", sname);
        list_suites();
        return 2;
    }
    SRunner *sr = NULL;
    int has_case = 0;
    for (int i = 0; i < NSUITE; i++) {
        Suite *s = suites[i].make();
        if (cname && (selected < 0 || selected == i) && suite_tcase(s, cname)) has_case = 1;
        if (sr)
            srunner_add_suite(sr, s);
        else
            sr = srunner_create(s);
    }
    if (cname && !has_case) {
        fprintf(stderr, "test_runner: error: CK_RUN_CASE='%s' names no test case of %s%s\n", cname,
                selected < 0 ? "any suite" : "suite ", selected < 0 ? "" : suites[selected].name);
        fprintf(stderr, "test_runner: the cases are the tcase_create names in tests/test_*.c\n");
        list_suites();
        srunner_free(sr);
        return 2;
    }
    srunner_run_all(sr, CK_NORMAL);
    const int run = srunner_ntests_run(sr), failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    if (run == 0) {
        fprintf(stderr, "test_runner: error: no checks ran; selection:");
        print_selection();
        fprintf(stderr, "\n");
        list_suites();
        return 2;
    }
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
