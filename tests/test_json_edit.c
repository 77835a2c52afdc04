/* test_json_edit.c — values found and replaced by JSON path with every other byte kept
 * (io/json_edit.c), and fitted robots written into the user's file (io/robot_json.c). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "json_edit.h"
#include "robot_json.h"
#include "robot_load.h"
#include "test_util.h"

Suite *json_edit_suite(void);

/* The bytes of the value at path, or "(missing)" / "(blocked)". */
static const char *found(const char *text, const char *path)
{
    static char buf[256];
    size_t a, b;
    const int r = json_edit_find(text, path, &a, &b);
    if (r != 1)
        return r == 0 ? "(missing)" : "(blocked)";
    snprintf(buf, sizeof buf, "%.*s", (int)(b - a), text + a);
    return buf;
}

/* text after json_edit_set(path, value), which must succeed */
static char *set(const char *text, const char *path, const char *value)
{
    char *t = strdup(text);
    ck_assert_ptr_nonnull(t);
    ck_assert_msg(json_edit_set(&t, path, value) == 0, "set %s in %s", path, text);
    return t;
}

static void expect_set(const char *text, const char *path, const char *value, const char *want)
{
    char *t = set(text, path, value);
    ck_assert_msg(strcmp(t, want) == 0, "set %s=%s:\n%s\nwanted\n%s", path, value, t, want);
    /* what was set is what is found, and the result is valid JSON */
    ck_assert_str_eq(found(t, path), value);
    cJSON *doc = cJSON_Parse(t);
    ck_assert_msg(doc != NULL, "not JSON:\n%s", t);
    cJSON_Delete(doc);
    free(t);
}

START_TEST(finds_values_by_path)
{
    const char *t =
        " {\"_s\": \"a \\\"mass\\\": 9, } ] { [ \\\\\", \"mass\": 0.50,\n"
        "  \"massive\": 2, \"com\" : [ 1e-3 , -0,{\"x\":[true, null]} ],\n"
        "\t\"j\\u006fints\": [{\"name\": \"a\"}, {\"friction\": {\"viscous\": 1E+2}}], \"n\": -0.0}";
    ck_assert_str_eq(found(t, "mass"), "0.50");       /* not the "mass" inside the string */
    ck_assert_str_eq(found(t, "massive"), "2");       /* nor a key that only starts the same */
    ck_assert_str_eq(found(t, "com[0]"), "1e-3");
    ck_assert_str_eq(found(t, "com[1]"), "-0");
    ck_assert_str_eq(found(t, "com[2].x[1]"), "null");
    ck_assert_str_eq(found(t, "com"), "[ 1e-3 , -0,{\"x\":[true, null]} ]");
    ck_assert_str_eq(found(t, "_s"), "\"a \\\"mass\\\": 9, } ] { [ \\\\\"");
    ck_assert_str_eq(found(t, "joints[1].friction.viscous"), "1E+2");   /* an escaped key */
    ck_assert_str_eq(found(t, "joints[0].name"), "\"a\"");
    ck_assert_str_eq(found(t, "n"), "-0.0");
    ck_assert_str_eq(found(t, "joints[0].friction.viscous"), "(missing)");
    ck_assert_str_eq(found(t, "inertia.ixx"), "(missing)");
    ck_assert_str_eq(found(t, "joints[2]"), "(blocked)");        /* past the end */
    ck_assert_str_eq(found(t, "com[3]"), "(blocked)");
    ck_assert_str_eq(found(t, "mass.x"), "(blocked)");           /* a number is no object */
    ck_assert_str_eq(found(t, "com.x"), "(blocked)");
    ck_assert_str_eq(found(t, "mass[0]"), "(blocked)");
    ck_assert_str_eq(found("[]", "[0]"), "(blocked)");
    ck_assert_str_eq(found("{}", "a"), "(missing)");
    ck_assert_str_eq(found("\xEF\xBB\xBF {\"a\": 1}", "a"), "1");   /* after a byte order mark */
}
END_TEST

START_TEST(replaces_only_the_value)
{
    expect_set("{\"a\": 1, \"b\": [0.10, 2]}", "b[0]", "0.25", "{\"a\": 1, \"b\": [0.25, 2]}");
    expect_set("{\"a\":\t1e-3 ,\"b\":2}", "a", "-0.5", "{\"a\":\t-0.5 ,\"b\":2}");
    expect_set("{\"s\": \"}\", \"a\": {\"b\": 1}}", "a.b", "3", "{\"s\": \"}\", \"a\": {\"b\": 3}}");
    expect_set("{\"a\": [1, [2, 3]]}", "a[1][1]", "4", "{\"a\": [1, [2, 4]]}");
    expect_set("{\"a\": 1}\r\n", "a", "2", "{\"a\": 2}\r\n");
    expect_set("\xEF\xBB\xBF{\"a\": 1}", "b", "2", "\xEF\xBB\xBF{\"a\": 1, \"b\": 2}");
}
END_TEST

START_TEST(adds_missing_keys_like_their_siblings)
{
    /* multi-line: the last member's line break and indentation */
    expect_set("{\n  \"a\": 1,\n  \"b\": 2\n}\n", "c", "3", "{\n  \"a\": 1,\n  \"b\": 2,\n  \"c\": 3\n}\n");
    expect_set("{\n\t\t\"a\" : 1\n\t}", "c", "3", "{\n\t\t\"a\" : 1,\n\t\t\"c\" : 3\n\t}");
    expect_set("{\r\n  \"a\": 1\r\n}\r\n", "c", "3", "{\r\n  \"a\": 1,\r\n  \"c\": 3\r\n}\r\n");
    /* one line, compact or spaced */
    expect_set("{\"a\":1,\"b\":2}", "c", "3", "{\"a\":1,\"b\":2,\"c\":3}");
    expect_set("{ \"a\": 1, \"b\": 2 }", "c", "3", "{ \"a\": 1, \"b\": 2, \"c\": 3 }");
    expect_set("{\"a\": 1}", "c", "3", "{\"a\": 1, \"c\": 3}");
    expect_set("{\"a\":1}", "c", "3", "{\"a\":1,\"c\":3}");
    /* after a member whose value is an object or array, not inside it */
    expect_set("{\"a\": {\"x\": 1}}", "c", "3", "{\"a\": {\"x\": 1}, \"c\": 3}");
    expect_set("{\"a\": [{\"x\": 1}]}", "a[0].y", "2", "{\"a\": [{\"x\": 1, \"y\": 2}]}");
    /* empty objects */
    expect_set("{\"g\": {}}", "g.f", "0.8", "{\"g\": { \"f\": 0.8 }}");
    expect_set("{\"g\": {  \n }}", "g.f", "0.8", "{\"g\": { \"f\": 0.8 }}");
    /* missing objects on the way, created on one line */
    expect_set("{\n  \"name\": \"j\"\n}", "friction.stribeck.torque", "0.1",
               "{\n  \"name\": \"j\",\n  \"friction\": { \"stribeck\": { \"torque\": 0.1 } }\n}");
    expect_set("{\"a\": 1}", "b", "[0, 0, 1]", "{\"a\": 1, \"b\": [0, 0, 1]}");
    /* a key spelled with escapes is the same key: replaced, not added twice */
    expect_set("{\"\\u0061rmature\": 1}", "armature", "2", "{\"\\u0061rmature\": 2}");
}
END_TEST

START_TEST(refuses_what_it_cannot_place)
{
    static const char *const cases[][2] = {
        { "{\"a\": [1]}", "a[1]" },       /* arrays never grow */
        { "{\"a\": 1}", "b[0]" },         /* nor are they created element by element */
        { "{\"a\": 1}", "a.b" },          /* a number is no object */
        { "{\"a\": [1]}", "a.b" },
        { "[1]", "a" },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char *t = strdup(cases[k][0]);
        ck_assert_int_eq(json_edit_set(&t, cases[k][1], "2"), -1);
        ck_assert_str_eq(t, cases[k][0]);   /* untouched */
        free(t);
    }
}
END_TEST

/* ---- the robot writer ---- */

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "%s", path);
    static char buf[1 << 16];
    const size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return strdup(buf);
}

static const char *const robots[] = {
    "../data/pendulum/robot.json",      "../data/double_pendulum/robot.json",
    "../data/arm7/robot.json",          "../data/tree/robot.json",
    "../data/box/robot.json",           "../data/ball/robot.json",
    "../data/dfki_pendulum/robot.json", "../data/dfki_double_pendulum/robot.json",
    "fixtures/keepfile/odd.json",       "fixtures/keepfile/oneline.json",
    "fixtures/keepfile/sparse.json",
};

/* text into a new temporary file, whose name goes to tmp */
static void write_temp(char tmp[27], const char *text)
{
    strcpy(tmp, "/tmp/sysid_keepfile_XXXXXX");
    const int fd = mkstemp(tmp);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
}

/* Unchanged parameters write the file as it is; randomly changed ones (about a third,
 * absent fields included) read back bit for bit. Each robot as given, and printed by cJSON
 * with tabs and on one line. */
START_TEST(fitted_robots_keep_the_file)
{
    const int layout = _i % 3;
    char path[64], relaid[27] = "";
    snprintf(path, sizeof path, "%s", robots[_i / 3]);
    if (layout) {
        char *orig = slurp(path);
        cJSON *d = cJSON_Parse(orig);
        char *t = layout == 1 ? cJSON_Print(d) : cJSON_PrintUnformatted(d);
        write_temp(relaid, t);
        snprintf(path, sizeof path, "%s", relaid);
        cJSON_free(t);
        cJSON_Delete(d);
        free(orig);
    }
    sid_model *m;
    double *theta0;
    cJSON *doc;
    sid_error err = { 0 };
    ck_assert_msg(robot_model(path, &m, &theta0, &doc, &err) == 0, "%s", err.msg);
    const int np = sid_model_nparam(m);
    char *text = slurp(path);

    cJSON *out = robot_json_fitted("out.json", doc, m, theta0, &err);
    ck_assert_msg(cJSON_IsRaw(out), "%s: not written as the user's text", path);
    ck_assert_msg(strcmp(out->valuestring, text) == 0, "%s: a no-op write changed the file", path);
    cJSON_Delete(out);

    double *theta = malloc((size_t)np * sizeof *theta);
    unsigned rng = 1234u + (unsigned)_i;
    for (int round = 0; round < 20; round++) {
        for (int i = 0; i < np; i++) {
            const double u = tu_uniform(&rng, -1, 1);
            theta[i] = theta0[i];
            if (tu_uniform(&rng, 0, 1) < 0.33)   /* 17 significant digits, or a small number */
                theta[i] = theta0[i] != 0 ? theta0[i] * (1 + 1e-3 * u) : 1e-6 * fabs(u) + 1e-9;
        }
        out = robot_json_fitted("out.json", doc, m, theta, &err);
        ck_assert_msg(cJSON_IsRaw(out), "%s: not written as the user's text", path);
        char tmp[27];
        write_temp(tmp, out->valuestring);
        sid_robot_desc d;
        const int rc = robot_json_load(tmp, &d, NULL, &err);
        remove(tmp);
        ck_assert_msg(rc == 0, "%s: the written file does not load: %s\n%s", path, err.msg,
                      out->valuestring);
        for (int i = 0; i < np; i++) {
            const sid_param_info *p = sid_model_param(m, i);
            const double got = sid_param_field(p->row, &d, p->owner)[p->comp - p->row->comp0];
            ck_assert_msg(memcmp(&got, &theta[i], sizeof got) == 0, "%s: %s reads back as %.17g, not %.17g",
                          path, p->name, got, theta[i]);
        }
        robot_desc_free(&d);
        cJSON_Delete(out);
    }
    free(theta);
    free(text);
    if (layout)
        remove(relaid);
    cJSON_Delete(doc);
    sid_free(theta0);
    sid_model_free(m);
}
END_TEST

/* A document that never had a text (built in memory) is serialised as before. */
START_TEST(documents_without_text_are_serialised)
{
    sid_model *m;
    double *theta;
    cJSON *doc;
    sid_error err = { 0 };
    ck_assert_msg(robot_model("../data/pendulum/robot.json", &m, &theta, &doc, &err) == 0, "%s", err.msg);
    cJSON *copy = cJSON_Duplicate(doc, 1);
    cJSON_free(copy->valuestring);
    copy->valuestring = NULL;
    cJSON *out = robot_json_fitted("out.json", copy, m, theta, &err);
    ck_assert(cJSON_IsObject(out));
    cJSON_Delete(out);
    cJSON_Delete(copy);
    cJSON_Delete(doc);
    sid_free(theta);
    sid_model_free(m);
}
END_TEST

Suite *json_edit_suite(void)
{
    Suite *s = suite_create("json_edit");
    TCase *tc = tcase_create("scanner");
    tcase_add_test(tc, finds_values_by_path);
    tcase_add_test(tc, replaces_only_the_value);
    tcase_add_test(tc, adds_missing_keys_like_their_siblings);
    tcase_add_test(tc, refuses_what_it_cannot_place);
    suite_add_tcase(s, tc);
    tc = tcase_create("writer");
    tcase_add_loop_test(tc, fitted_robots_keep_the_file, 0, 3 * (int)(sizeof robots / sizeof robots[0]));
    tcase_add_test(tc, documents_without_text_are_serialised);
    suite_add_tcase(s, tc);
    return s;
}
