/* cmd_export.c — `sysid export FITTED.json --into ROBOT.urdf|ROBOT.xml [-o OUT]`: the fitted
 * values back into the user's own robot file.
 *
 * The output is a copy of ROBOT with only the numbers that the fit changed rewritten
 * (urdf.h, mjcf.h); every comment, every unrelated element and the layout stay byte for byte.
 * Fitted values the format cannot hold (motor constants in URDF, Stribeck friction, ...) are
 * listed on stderr under "not representable", never dropped silently.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic.h"
#include "cmd.h"
#include "diag.h"
#include "mjcf.h"
#include "readfile.h"
#include "robot_json.h"
#include "robot_load.h"
#include "urdf.h"

static const cmd_info info = {
    "export", CMD_EXPORT, "sysid export FITTED.json --into ROBOT.urdf|ROBOT.xml [-o OUT]",
    "Write the parameters of FITTED.json (a fit's output, or any robot sysid reads)\n"
    "into a copy of the URDF or MJCF file they were imported from: only the numbers\n"
    "that differ from the file's own are rewritten, where the file defines them (in\n"
    "MJCF: the element, or the default class that gives them), and every other byte\n"
    "stays. The copy goes to stdout, or to -o OUT (atomically; OUT may be ROBOT\n"
    "itself). Values the format cannot hold are listed on stderr under \"not\n"
    "representable\".\n",
    "Exit status: 0 written; 2 invalid input, or FITTED.json is not a robot of the\n"
    "file's structure (links and joints by name); nothing written.\n",
};

/* A joint limit's stiffness and damping that the target file leaves to be computed (URDF and
 * MJCF have no place for them) come back from a fit written out, as the values computed then.
 * Where they still equal what the file's own import computes, they are the file's: mark them
 * absent in fitted too, so that only gains a fit changed count as not representable. */
static int limit_gains_as_computed(sid_robot_desc *fitted, const char *into, sid_error *err)
{
    sid_robot_desc t;
    sid_model *m = NULL;
    double *theta = NULL;
    if (robot_load(into, &t, NULL, NULL, err)) return -1;
    if (sid_model_create(&m, &theta, &t, err) != SID_OK) {
        robot_desc_free(&t);
        return 0;   /* the exporter reports what is wrong with the file */
    }
    for (int j = 0; j < fitted->njoint; j++) {
        sid_joint_desc *fj = &fitted->joint[j];
        int tj = 0;
        while (tj < t.njoint && strcmp(t.joint[tj].name, fj->name)) tj++;
        if (tj == t.njoint) continue;
        char name[SID_MAX_NAME + 40];
        snprintf(name, sizeof name, "joints.%s.limit.stiffness", fj->name);
        int ks = sid_model_param_find(m, name);
        snprintf(name, sizeof name, "joints.%s.limit.damping", fj->name);
        int kd = sid_model_param_find(m, name);
        if (fj->has_limit_stiffness && !t.joint[tj].has_limit_stiffness && ks >= 0 && fj->limit_stiffness == theta[ks]) {
            fj->has_limit_stiffness = 0;
            fj->limit_stiffness = t.joint[tj].limit_stiffness;
        }
        if (fj->has_limit_damping && !t.joint[tj].has_limit_damping && kd >= 0 && fj->limit_damping == theta[kd]) {
            fj->has_limit_damping = 0;
            fj->limit_damping = t.joint[tj].limit_damping;
        }
    }
    sid_free(theta);
    sid_model_free(m);
    robot_desc_free(&t);
    return 0;
}

int cmd_export(int argc, char **argv)
{
    cmd_args a;
    int rc = cmd_parse(&info, argc, argv, &a);
    if (rc != CMD_RUN) return rc;
    if (a.nop != 1) return cmd_usage_error(&info, "expected one fitted robot, got %d", a.nop);
    if (!a.into) return cmd_usage_error(&info, "--into ROBOT.urdf|ROBOT.xml is required");
    const char *out = a.out ? a.out : "-";
    if (a.out && strcmp(a.out, "-") && atomic_same_file(a.out, a.op[0]))
        return cmd_usage_error(&info, "-o %s would overwrite the fitted robot %s", a.out, a.op[0]);
    sid_error err = { 0 };
    sid_robot_desc fitted;
    if (robot_load(a.op[0], &fitted, NULL, NULL, &err)) return cli_fail(&err);
    size_t len, olen = 0;
    char *text = readfile(a.into, &len, &err), *copy = NULL;
    robot_format fmt;
    if (!text || robot_format_of(a.into, text, len, &fmt, &err)) {
        free(text);
        robot_desc_free(&fitted);
        return cli_fail(&err);
    }
    if (fmt == ROBOT_JSON) {
        free(text);
        robot_desc_free(&fitted);
        cli_error("--into %s: a robot.json (export writes into URDF and MJCF; for robot.json, fit's -o or "
                  "`params --set` write it)", a.into);
        return EXIT_INPUT;
    }
    if (limit_gains_as_computed(&fitted, a.into, &err)) {
        free(text);
        robot_desc_free(&fitted);
        return cli_fail(&err);
    }
    rc = fmt == ROBOT_URDF ? urdf_export(a.into, text, len, &fitted, &copy, &olen, &err)
                           : mjcf_export(a.into, text, len, &fitted, &copy, &olen, &err);
    free(text);
    robot_desc_free(&fitted);
    if (rc) return cli_fail(&err);
    atomic_file af;
    if (atomic_open(&af, out, &err) != SID_OK) {
        free(copy);
        return cli_fail(&err);
    }
    if (fwrite(copy, 1, olen, af.f) != olen) {
        atomic_abort(&af);
        free(copy);
        cli_error("%s: write failed", out);
        return EXIT_INPUT;
    }
    free(copy);
    if (atomic_commit(&af, &err) != SID_OK) return cli_fail(&err);
    return EXIT_OK;
}
