/* cmd_import.c — `sysid import ROBOT.urdf|ROBOT.xml [-o robot.json]`: convert once.
 *
 * Every command reads URDF and MJCF directly (robot_load.h); import writes the robot.json
 * they are read as, for a user who wants to edit it, keep it under version control, or see
 * what sysid made of the file. The result is checked the way every command checks a robot
 * (loaded back, the model built) before anything is written.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic.h"
#include "cmd.h"
#include "diag.h"
#include "readfile.h"
#include "robot_json.h"
#include "robot_load.h"

static const cmd_info info = {
    "import", CMD_IMPORT, "sysid import ROBOT.urdf|ROBOT.xml [-o ROBOT.json] [--balance-inertia]",
    "Convert a URDF or MJCF robot description into sysid's robot.json\n"
    "(docs/formats.md, \"URDF\" and \"MJCF\" say what is read and how). Every command\n"
    "reads URDF and MJCF files directly; import writes what they are read as.\n"
    "Whatever the file says that sysid cannot express is named in a warning with its\n"
    "line; nothing is dropped silently. The robot.json goes to stdout, or to -o FILE\n"
    "(atomically).\n",
    "Exit status: 0 written; 2 the file is not a robot sysid can read (nothing written).\n",
};

int cmd_import(int argc, char **argv)
{
    cmd_args a;
    int rc = cmd_parse(&info, argc, argv, &a);
    if (rc != CMD_RUN) return rc;
    if (a.nop != 1) return cmd_usage_error(&info, "expected one robot file, got %d", a.nop);
    const char *path = a.op[0], *out = a.out ? a.out : "-";
    sid_error err = { 0 };
    size_t len;
    char *text = readfile(path, &len, &err), *json = NULL;
    robot_format fmt;
    if (!text || robot_format_of(path, text, len, &fmt, &err)) {
        free(text);
        return cli_fail(&err);
    }
    if (fmt == ROBOT_JSON) {
        free(text);
        cli_error("%s: already a robot.json (import reads URDF and MJCF)", path);
        return EXIT_INPUT;
    }
    const robot_import_opts o = { a.balance_inertia };
    if (robot_import(path, text, len, fmt, &o, &json, &err)) {
        free(text);
        return cli_fail(&err);
    }
    free(text);
    /* what every command would do with it: read it back and build the model */
    sid_robot_desc d;
    sid_model *m = NULL;
    double *theta = NULL;
    if (robot_json_parse(path, json, strlen(json), &d, NULL, &err) == 0) {
        if (sid_model_create(&m, &theta, &d, &err) != SID_OK) {
            robot_name_elements(&d, &err);
            sid_error_prefix(&err, "%s", path);
        }
        robot_desc_free(&d);
    }
    if (!m) {
        free(json);
        return cli_fail(&err);
    }
    sid_free(theta);
    sid_model_free(m);
    atomic_file af;
    if (atomic_open(&af, out, &err) != SID_OK) {
        free(json);
        return cli_fail(&err);
    }
    if (fputs(json, af.f) < 0) {
        atomic_abort(&af);
        free(json);
        cli_error("%s: write failed", out);
        return EXIT_INPUT;
    }
    free(json);
    if (atomic_commit(&af, &err) != SID_OK) return cli_fail(&err);
    return EXIT_OK;
}
