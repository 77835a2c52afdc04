/* fit_friction.c — fit the viscous friction of data/arm7 through libsysid, as
 * `sysid fit data/arm7/robot.json data/arm7/log.csv --free-only 'joints.*.friction.viscous'`.
 * Build: cc fit_friction.c $(pkg-config --cflags --libs sysid); run from the source tree
 * (or give the robot and the log as arguments). */
#include <stdio.h>
#include <sysid/sid_io.h>

static void warn(void *ctx, sid_io_msg_kind kind, const char *msg)
{
    (void)ctx;
    fprintf(stderr, "%s%s\n", kind == SID_IO_WARNING ? "warning: " : "", msg);
}

int main(int argc, char **argv)
{
    const char *robot = argc > 2 ? argv[1] : "data/arm7/robot.json";
    const char *log = argc > 2 ? argv[2] : "data/arm7/log.csv";
    sid_io_robot *r = NULL; sid_io_spec *s = NULL; sid_io_logs *l = NULL; sid_io_fit *f = NULL;
    sid_error err = { 0 };
    sid_io_set_warn(warn, NULL);
    int rc = sid_io_robot_load(robot, &r, &err) || sid_io_spec_load(NULL, &s, &err) ||
             sid_io_spec_set(s, "--free-only", "joints.*.friction.viscous", &err) ||
             sid_io_logs_load(r, s, 1, &log, &l, &err) || sid_io_fit_run(r, s, l, &f, &err);
    if (rc) {
        fprintf(stderr, "fit_friction: %s\n", err.msg);
    } else {
        const sid_fit_result *res = sid_io_fit_result(f);
        printf("libsysid %s: loss %.6g -> %.6g, %d iterations\n", sid_version(), res->loss0, res->loss,
               res->iterations);
        for (int k = 0; k < sid_io_fit_nfree(f); k++) {
            const int i = sid_io_fit_free_param(f, k);
            printf("%-28s %-8.4g %.17g +- %.3g\n", sid_io_robot_param_name(r, i), sid_io_robot_theta(r)[i],
                   sid_io_fit_theta(f)[i], sid_io_fit_stderr(f, k));
        }
    }
    sid_io_fit_free(f); sid_io_logs_free(l); sid_io_spec_free(s); sid_io_robot_free(r);
    return rc ? 2 : 0;
}
