/* robot_load.c — see robot_load.h. */
#include "robot_load.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mjcf.h"
#include "readfile.h"
#include "robot_json.h"
#include "urdf.h"

static int space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

int robot_format_of(const char *path, const char *text, size_t len, robot_format *fmt, sid_error *err)
{
    size_t i = 0;
    if (len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3)) i = 3;   /* a UTF-8 byte order mark */
    for (;;) {
        while (i < len && space(text[i])) i++;
        if (i >= len || text[i] != '<') {
            *fmt = ROBOT_JSON;   /* the JSON reader says what is wrong with anything else */
            return 0;
        }
        /* skip the declaration, comments, processing instructions and a DOCTYPE */
        if (!strncmp(text + i, "<!--", 4)) {
            const char *close = strstr(text + i + 4, "-->");
            if (!close) break;
            i = (size_t)(close - text) + 3;
        } else if (text[i + 1] == '?' || text[i + 1] == '!') {
            int depth = 0;   /* a DOCTYPE's [internal subset] holds '>'s of its own */
            size_t k = i + 2;
            for (; k < len && !(text[k] == '>' && depth <= 0); k++) depth += (text[k] == '[') - (text[k] == ']');
            if (k >= len) break;
            i = k + 1;
        } else {
            break;
        }
    }
    size_t n = 0;
    const char *name = text + i + 1;
    while (i + 1 + n < len && !space(name[n]) && name[n] != '>' && name[n] != '/') n++;
    if (n == 5 && !strncmp(name, "robot", 5)) *fmt = ROBOT_URDF;
    else if (n == 6 && !strncmp(name, "mujoco", 6)) *fmt = ROBOT_MJCF;
    else if (n == 13 && !strncmp(name, "mujocoinclude", 13)) {
        sid_error_set(err, SID_ERR_INPUT, "%s: an MJCF <mujocoinclude> fragment: give the model file that includes it",
                      path);
        return -1;
    } else {
        sid_error_set(err, SID_ERR_INPUT, "%s: an XML file whose root element is <%.*s>: sysid reads robot.json, "
                      "URDF (<robot>) and MJCF (<mujoco>)", path, (int)(n > 40 ? 40 : n), name);
        return -1;
    }
    return 0;
}

const char *robot_format_name(robot_format f)
{
    switch (f) {
    case ROBOT_URDF: return "URDF";
    case ROBOT_MJCF: return "MJCF";
    case ROBOT_JSON: break;
    }
    return "robot.json";
}

int robot_file_format(const char *path, robot_format *fmt, sid_error *err)
{
    size_t len;
    char *text = readfile(path, &len, err);
    int rc = text ? robot_format_of(path, text, len, fmt, err) : -1;
    free(text);
    return rc;
}

int robot_import(const char *path, const char *text, size_t len, robot_format fmt, const robot_import_opts *o,
                 char **json, sid_error *err)
{
    const robot_import_opts none = { 0 };
    if (!o) o = &none;
    *json = NULL;
    switch (fmt) {
    case ROBOT_URDF: {
        const urdf_import_opts uo = { o->balance_inertia };
        return urdf_import_with(path, text, len, &uo, json, err);
    }
    case ROBOT_MJCF: return mjcf_import(path, text, len, json, err);   /* <compiler balanceinertia> */
    case ROBOT_JSON: break;
    }
    sid_error_set(err, SID_ERR_INPUT, "%s: not a URDF or MJCF file", path);
    return -1;
}

/* The last file imported and its robot.json: a command that loads its robot twice (validate
 * does) converts it, and prints the importer's warnings, once. Kept until exit. */
static struct {
    char *path, *text, *json;
    size_t len;
} last;

static int import_once(const char *path, const char *text, size_t len, robot_format f, char **json, sid_error *err)
{
    if (last.path && !strcmp(last.path, path) && last.len == len && !memcmp(last.text, text, len)) {
        *json = strdup(last.json);
        return *json ? 0 : (sid_error_set(err, SID_ERR_NOMEM, "%s: out of memory", path), -1);
    }
    if (robot_import(path, text, len, f, NULL, json, err)) return -1;
    char *p = strdup(path), *t = malloc(len + 1), *j = strdup(*json);
    if (!p || !t || !j) {
        free(p), free(t), free(j);
        return 0;   /* no memo: the next load imports again */
    }
    memcpy(t, text, len + 1);
    free(last.path), free(last.text), free(last.json);
    last.path = p, last.text = t, last.json = j, last.len = len;
    return 0;
}

int robot_load(const char *path, sid_robot_desc *d, cJSON **doc, robot_format *fmt, sid_error *err)
{
    memset(d, 0, sizeof *d);
    if (doc) *doc = NULL;
    size_t len;
    char *text = readfile(path, &len, err), *json = NULL;
    robot_format f;
    if (!text || robot_format_of(path, text, len, &f, err)) {
        free(text);
        return -1;
    }
    if (fmt) *fmt = f;
    if (f != ROBOT_JSON) {
        if (import_once(path, text, len, f, &json, err)) {
            free(text);
            return -1;
        }
        free(text);
        text = json;
        len = strlen(json);
    }
    int rc = robot_json_parse(path, text, len, d, doc, err);
    free(text);
    return rc;
}

/* core names elements by their place in the robot.json ("links[35].inertia"); an imported file
 * has no such places, so name them as the file does ("link 'gripper_motor'.inertia"). */
void robot_name_elements(const sid_robot_desc *d, sid_error *err)
{
    static const char *const arr[2] = { "links[", "joints[" }, *const what[2] = { "link", "joint" };
    for (int a = 0; a < 2; a++) {
        char *at = strstr(err->msg, arr[a]);
        if (!at) continue;
        char *end;
        long k = strtol(at + strlen(arr[a]), &end, 10);
        if (*end != ']' || k < 0 || k >= (a ? d->njoint : d->nlink)) continue;
        char buf[sizeof err->msg];
        snprintf(buf, sizeof buf, "%.*s%s '%s'%s", (int)(at - err->msg), err->msg, what[a],
                 a ? d->joint[k].name : d->link[k].name, end + 1);
        snprintf(err->msg, sizeof err->msg, "%s", buf);
    }
}

int robot_model(const char *path, sid_model **m, double **theta0, cJSON **doc, sid_error *err)
{
    sid_robot_desc d;
    robot_format fmt;
    *m = NULL;
    *theta0 = NULL;
    if (robot_load(path, &d, doc, &fmt, err)) return -1;
    sid_status s = sid_model_create(m, theta0, &d, err);
    if (s != SID_OK && fmt != ROBOT_JSON) robot_name_elements(&d, err);
    robot_desc_free(&d);
    if (s != SID_OK) {
        sid_error_prefix(err, "%s", path);
        if (doc) {
            cJSON_Delete(*doc);
            *doc = NULL;
        }
        return -1;
    }
    return 0;
}
