/* test_io_api.c — the public API of include/sysid/sid_io.h: errors that name the file and the place,
 * warnings through the program's callback, a fit whose written robot and report hold the
 * fitted values, the version macros. (tests/cli_install.sh checks that a fit through the API
 * gives sysid fit's numbers, from an installed copy.) Runs from tests/. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "diag.h"
#include "readfile.h"
#include "sid_io.h"

#define ROBOT "../data/pendulum/robot.json"
#define LOG "../data/pendulum/log.csv"

/* A temporary file holding text; its path in path (at least 32 bytes). */
static void temp_file(char *path, const char *text)
{
    strcpy(path, "/tmp/sysid_io_api_XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, text, strlen(text)), (int)strlen(text));
    close(fd);
}

typedef struct {
    int n;
    sid_io_msg_kind kind;
    char last[512];
} seen;

static void collect(void *ctx, sid_io_msg_kind kind, const char *msg)
{
    seen *s = ctx;
    s->n++;
    s->kind = kind;
    snprintf(s->last, sizeof s->last, "%s", msg);
}

START_TEST(test_errors_name_the_place)
{
    sid_error err = { 0 };
    sid_io_robot *r = (sid_io_robot *)1;
    ck_assert_int_eq(sid_io_robot_load("no_such_robot.json", &r, &err), SID_ERR_INPUT);
    ck_assert_ptr_null(r);
    ck_assert_int_eq(err.status, SID_ERR_INPUT);
    ck_assert_msg(!strncmp(err.msg, "no_such_robot.json: ", 20), "%s", err.msg);

    char bad[32];
    temp_file(bad, "{ \"name\": \"x\", \"links\": [ { \"name\": \"base\" }, { \"name\": \"l\", \"mass\": -1 } ], \"joints\": [] }");
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(sid_io_robot_load(bad, &r, &err), SID_ERR_INPUT);
    ck_assert_msg(strstr(err.msg, "links[1].mass") != NULL, "%s", err.msg);
    unlink(bad);

    ck_assert_int_eq(sid_io_robot_load(ROBOT, &r, &err), SID_OK);
    temp_file(bad, "t,q.hinge,qd.hinge,u.hinge\n0,0,0,0\n0.001,abc,0,0\n");
    sid_io_logs *l = (sid_io_logs *)1;
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(sid_io_logs_load(r, NULL, 1, (const char *const *)&(const char *){ bad }, &l, &err), SID_ERR_INPUT);
    ck_assert_ptr_null(l);
    ck_assert_msg(strstr(err.msg, "line 3") && strstr(err.msg, "q.hinge"), "%s", err.msg);
    unlink(bad);

    sid_io_spec *s;
    temp_file(bad, "{ \"window\": \"long\" }");
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(sid_io_spec_load(bad, &s, &err), SID_ERR_INPUT);
    ck_assert_msg(strstr(err.msg, "window") != NULL, "%s", err.msg);
    unlink(bad);
    ck_assert_int_eq(sid_io_spec_load(NULL, &s, &err), SID_OK);
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(sid_io_spec_set(s, "--window", "-3", &err), SID_ERR_INPUT);
    ck_assert_msg(strstr(err.msg, "--window") != NULL, "%s", err.msg);
    /* a glob that matches nothing is the fit's error, naming the glob */
    ck_assert_int_eq(sid_io_spec_set(s, "--free-only", "links.nothing.mass", &err), SID_OK);
    ck_assert_int_eq(sid_io_logs_load(r, s, 1, (const char *const *)&(const char *){ LOG }, &l, &err), SID_OK);
    sid_io_fit *f = (sid_io_fit *)1;
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(sid_io_fit_run(r, s, l, &f, &err), SID_ERR_INPUT);
    ck_assert_ptr_null(f);
    ck_assert_msg(strstr(err.msg, "links.nothing.mass") != NULL, "%s", err.msg);
    sid_io_logs_free(l);
    sid_io_spec_free(s);
    sid_io_robot_free(r);
}
END_TEST

START_TEST(test_warnings_reach_the_callback)
{
    char path[32];
    temp_file(path, "{ \"name\": \"x\", \"colour\": \"red\", \"links\": [ { \"name\": \"base\" }, { \"name\": \"l\", \"mass\": 1,"
                    " \"inertia\": { \"ixx\": 0.1, \"iyy\": 0.1, \"izz\": 0.1 } } ], \"joints\": [ { \"name\": \"j\", \"type\": \"revolute\", \"parent\": \"base\", \"child\": \"l\" } ] }");
    seen s = { 0 };
    sid_io_set_warn(collect, &s);
    sid_io_robot *r;
    sid_error err = { 0 };
    ck_assert_msg(sid_io_robot_load(path, &r, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(s.n, 1);
    ck_assert_int_eq(s.kind, SID_IO_WARNING);
    ck_assert_msg(strstr(s.last, path) && strstr(s.last, "colour"), "%s", s.last);
    sid_io_robot_free(r);
    sid_io_set_warn(NULL, NULL);   /* none: dropped */
    ck_assert_int_eq(sid_io_robot_load(path, &r, &err), SID_OK);
    ck_assert_int_eq(s.n, 1);
    sid_io_robot_free(r);
    unlink(path);
    cli_diag_install();
}
END_TEST

/* Fit the pendulum's viscous friction; the written robot, reloaded, and the report hold the
 * fitted value exactly (numbers are written in their shortest exact form). */
START_TEST(test_fit_and_write)
{
    sid_io_robot *r, *back;
    sid_io_spec *s;
    sid_io_logs *l;
    sid_io_fit *f;
    sid_error err = { 0 };
    const char *log = LOG;
    ck_assert_msg(!sid_io_robot_load(ROBOT, &r, &err) && !sid_io_spec_load(NULL, &s, &err) &&
                  !sid_io_spec_set(s, "--free-only", "joints.hinge.friction.viscous", &err) &&
                  !sid_io_logs_load(r, s, 1, &log, &l, &err) && !sid_io_fit_run(r, s, l, &f, &err), "%s", err.msg);
    ck_assert_int_eq(sid_io_logs_count(l), 1);
    ck_assert_int_eq(sid_io_logs_get(l, 0)->n, 5001);
    ck_assert_int_eq(sid_io_fit_nfree(f), 1);
    const int i = sid_io_fit_free_param(f, 0), np = sid_io_robot_nparam(r);
    ck_assert_str_eq(sid_io_robot_param_name(r, i), "joints.hinge.friction.viscous");
    const double *t0 = sid_io_robot_theta(r), *t = sid_io_fit_theta(f);
    for (int k = 0; k < np; k++)
        if (k != i)
            ck_assert_msg(t[k] == t0[k], "fixed %s moved", sid_io_robot_param_name(r, k));
    /* the log is MuJoCo's run of this pendulum (data/pendulum/README.md): the fit lowers the
     * loss by moving the friction a little (what the simulators' differences leave), within
     * 5 % of the nominal 0.02; the standard error is finite and small against the value */
    ck_assert_msg(t[i] != t0[i] && fabs(t[i] / t0[i] - 1) < 0.05, "fitted %g, nominal %g", t[i], t0[i]);
    ck_assert(sid_io_fit_result(f)->loss < sid_io_fit_result(f)->loss0);
    const double se = sid_io_fit_stderr(f, 0);
    ck_assert_msg(isfinite(se) && se > 0 && se < 0.1 * t[i], "stderr %g of %g", se, t[i]);

    char rpath[32], jpath[32];
    temp_file(rpath, "");
    temp_file(jpath, "");
    ck_assert_msg(!sid_io_fit_write_robot(f, rpath, &err) && !sid_io_fit_write_report(f, jpath, &err), "%s", err.msg);
    ck_assert_msg(!sid_io_robot_load(rpath, &back, &err), "%s", err.msg);
    for (int k = 0; k < np; k++)
        ck_assert_msg(sid_io_robot_theta(back)[k] == t[k], "%s: %.17g written, %.17g fitted",
                      sid_io_robot_param_name(r, k), sid_io_robot_theta(back)[k], t[k]);
    size_t len;
    char *text = readfile(jpath, &len, &err);
    ck_assert_ptr_nonnull(text);
    cJSON *rep = cJSON_Parse(text);
    ck_assert_ptr_nonnull(rep);
    const cJSON *p = cJSON_GetArrayItem(cJSON_GetObjectItem(rep, "parameters"), 0);
    ck_assert_str_eq(cJSON_GetObjectItem(p, "name")->valuestring, "joints.hinge.friction.viscous");
    ck_assert(cJSON_GetObjectItem(p, "fitted")->valuedouble == t[i]);
    ck_assert(cJSON_GetObjectItem(cJSON_GetObjectItem(rep, "loss"), "after")->valuedouble == sid_io_fit_result(f)->loss);
    cJSON_Delete(rep);
    free(text);
    unlink(rpath);
    unlink(jpath);
    sid_io_robot_free(back);
    sid_io_fit_free(f);
    sid_io_logs_free(l);
    sid_io_spec_free(s);
    sid_io_robot_free(r);
}
END_TEST

START_TEST(test_version)
{
    char v[32];
    snprintf(v, sizeof v, "%d.%d.%d", SID_VERSION_MAJOR, SID_VERSION_MINOR, SID_VERSION_PATCH);
    ck_assert_str_eq(v, SID_VERSION);
    ck_assert_str_eq(sid_version(), SID_VERSION);
}
END_TEST

Suite *io_api_suite(void);
Suite *io_api_suite(void)
{
    Suite *s = suite_create("io_api");
    TCase *tc = tcase_create("api");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_errors_name_the_place);
    tcase_add_test(tc, test_warnings_reach_the_callback);
    tcase_add_test(tc, test_fit_and_write);
    tcase_add_test(tc, test_version);
    suite_add_tcase(s, tc);
    return s;
}
