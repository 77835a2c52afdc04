/* cmd_validate.c — `sysid validate ROBOT.json [LOG.csv...]`: check inputs before a fit.
 *
 * Loads the robot (every field's type and range, then core's structural checks and
 * physical consistency of the nominal parameters) and each log against it, and prints a
 * summary a person can sanity-check: sizes, duration, and the spread of sample intervals
 * (real logs jitter and drop samples).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cmd.h"
#include "diag.h"
#include "numfmt.h"
#include "robot_json.h"
#include "robot_load.h"
#include "stepchoice.h"
#include "traj_csv.h"

static const cmd_info info = {
    "validate", CMD_VALIDATE, "sysid validate ROBOT.json [LOG.csv...] [-c SPEC.json] "
                              "[--window S] [--integrator " CMD_INTEGRATORS "] [--substeps N] [--max-dt S] "
                              "[--columns MAP] [--scale MAP] [--json]",
    "Check a robot and its logs, and print a summary: links, joints and parameters\n"
    "of the robot; samples, duration and sample intervals (min, median, max) of each\n"
    "log; and the simulation step the other commands will use on these logs, with\n"
    "its estimated error. Without --substeps or --max-dt the step is chosen: the\n"
    "longest division of the median sample interval (1, 2, 4, ... 32 substeps) whose\n"
    "position error over a window, estimated by step doubling at the robot's values,\n"
    "is within 1.5e-3 of each coordinate's spread. Errors name the file and the place\n"
    "(JSON path, or line and column). Of a fit spec (-c), the log column mapping and\n"
    "the window and simulation settings are used.\n",
    "JSON: {\"robot\": {...}, \"logs\": [...], \"step\": {\"seconds\", \"substeps\",\n"
    "       \"max_dt\", \"interval\", \"integrator\", \"automatic\", \"error\",\n"
    "       \"error_abs\", \"coordinate\", \"tolerance\", \"window\", \"windows\",\n"
    "       \"capped\"}} (\"step\" only with logs; error null when not estimated\n"
    "       or diverged).\n\n"
    "Exit status: 0 valid, 2 invalid input.\n",
};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct {
    double dmin, dmed, dmax;
} dt_stats;

static int interval_stats(const sid_traj *tr, dt_stats *s)
{
    int n = tr->n - 1;
    double *dt = malloc((size_t)n * sizeof *dt);
    if (!dt)
        return -1;
    for (int i = 0; i < n; i++)
        dt[i] = tr->t[i + 1] - tr->t[i];
    qsort(dt, (size_t)n, sizeof *dt, cmp_double);
    s->dmin = dt[0];
    s->dmax = dt[n - 1];
    s->dmed = n % 2 ? dt[n / 2] : 0.5 * (dt[n / 2 - 1] + dt[n / 2]);
    free(dt);
    return 0;
}

static double num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    /* numfmt_json items are raw text; plain numbers have valuedouble */
    return cJSON_IsRaw(v) ? strtod(v->valuestring, NULL) : cJSON_GetNumberValue(v);
}

static const char *str(const cJSON *o, const char *key)
{
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));
}

/* The pushes a log gives (f.* columns), as "box: world force, link torque" per link: a part
 * counts when any sample of it is nonzero. */
static cJSON *pushes_json(const sid_model *m, const sid_traj *tr)
{
    static const char *const part[4] = {"world torque", "world force", "link torque", "link force"};
    const int nb = sid_model_nbody(m);
    cJSON *a = cJSON_CreateArray();
    for (int b = 1; b < nb; b++) {
        char text[SID_MAX_NAME + 80];
        size_t n = (size_t)snprintf(text, sizeof text, "%s:", sid_model_link_name(m, b));
        int any = 0;
        for (int p = 0; p < 4; p++) {
            int given = 0;
            for (int k = 0; k < tr->n && !given; k++)
                for (int c = 0; c < 3; c++)
                    given |= tr->push[((size_t)k * (size_t)nb + (size_t)b) * SID_PUSH_STRIDE + (size_t)(3 * p + c)] != 0;
            if (given && n < sizeof text)
                n += (size_t)snprintf(text + n, sizeof text - n, "%s %s", any++ ? "," : "", part[p]);
        }
        if (any) cJSON_AddItemToArray(a, cJSON_CreateString(text));
    }
    return a;
}

static void print_text(const cJSON *out)
{
    const cJSON *ro = cJSON_GetObjectItemCaseSensitive(out, "robot"), *lo;
    const cJSON *co = cJSON_GetObjectItemCaseSensitive(ro, "contact");
    const char *name = str(ro, "name");
    printf("%s: robot %s: %.0f links, %.0f joints (%.0f moving, %.0f with a motor), "
           "%.0f parameters", str(ro, "file"), name && name[0] ? name : "(unnamed)", num(ro, "links"),
           num(ro, "joints"), num(ro, "moving_joints"), num(ro, "motors"),
           num(ro, "parameters"));
    if (co)
        printf("; contact: %s ground, %.0f sphere%s", str(co, "model"), num(co, "spheres"),
               num(co, "spheres") == 1 ? "" : "s");
    putchar('\n');
    cJSON_ArrayForEach(lo, cJSON_GetObjectItemCaseSensitive(out, "logs"))
    {
        double med = num(lo, "dt_median");
        printf("%s: %.0f samples over %.6g s; interval min %.6g, median %.6g, max %.6g s "
               "(max/median %.3g); velocities %s\n", str(lo, "file"), num(lo, "samples"),
               num(lo, "duration"), num(lo, "dt_min"), med, num(lo, "dt_max"),
               num(lo, "dt_max") / med,
               cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(lo, "velocities")) ? "logged"
                                                                                : "not logged");
        const cJSON *pu;
        cJSON_ArrayForEach(pu, cJSON_GetObjectItemCaseSensitive(lo, "pushes"))
            printf("%s: pushes on %s\n", str(lo, "file"), pu->valuestring);
    }
}

/* The step as JSON; error null when not estimated or diverged. */
static cJSON *step_json(const sid_step_choice *c, const sid_model *m)
{
    cJSON *o = cJSON_CreateObject();
    const int known = c->error >= 0 && isfinite(c->error);
    cJSON_AddItemToObject(o, "seconds", numfmt_json(c->h));
    cJSON_AddNumberToObject(o, "substeps", c->substeps);
    cJSON_AddItemToObject(o, "max_dt", c->sim.max_dt > 0 ? numfmt_json(c->sim.max_dt) : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "interval", numfmt_json(c->interval));
    cJSON_AddStringToObject(o, "integrator", sid_integrator_name(c->sim.integrator));
    cJSON_AddBoolToObject(o, "automatic", c->automatic);
    cJSON_AddItemToObject(o, "error", known ? numfmt_json(c->error) : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "error_abs", known ? numfmt_json(c->error_abs) : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "coordinate",
                          known && c->coord >= 0 ? cJSON_CreateString(sid_model_q_name(m, c->coord)) : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "tolerance", numfmt_json(c->tol));
    cJSON_AddItemToObject(o, "window", numfmt_json(c->window));
    cJSON_AddNumberToObject(o, "windows", c->windows);
    cJSON_AddBoolToObject(o, "capped", c->capped);
    return o;
}

static void add_num(cJSON *o, const char *key, double x)
{
    cJSON_AddItemToObject(o, key, numfmt_json(x));
}

int cmd_validate(int argc, char **argv)
{
    cmd_args a;
    int rc = cmd_parse(&info, argc, argv, &a);
    if (rc != CMD_RUN)
        return rc;
    if (a.nop < 1)
        return cmd_usage_error(&info, "expected a robot file");
    const char *robot = a.op[0];

    sid_error err = { 0 };
    fitspec spec;
    sid_robot_desc d = { 0 };
    sid_model *m = NULL;
    double *theta = NULL;
    cJSON *out = cJSON_CreateObject(), *logs = cJSON_CreateArray();
    sid_traj **trs = NULL;
    int ntr = 0;
    robot_format fmt = ROBOT_JSON;
    rc = EXIT_OK;
    if (cmd_spec_build(&spec, &a.spec, &err) || robot_load(robot, &d, NULL, &fmt, &err)) {
        rc = cli_fail(&err);
        goto done;
    }
    if (sid_model_create(&m, &theta, &d, &err) != SID_OK ||
        sid_model_check_theta(m, theta, &err) != SID_OK) {
        if (fmt != ROBOT_JSON) robot_name_elements(&d, &err);
        sid_error_prefix(&err, "%s", robot);
        rc = cli_fail(&err);
        goto done;
    }
    fitspec_apply_model(&spec, m, robot);   /* the robot's own integrator where the spec names none */
    int nd = sid_model_ndof_joints(m), nmotor = 0;
    for (int k = 0; k < nd; k++)
        nmotor += sid_model_dof_joint_has_motor(m, k) != 0;
    cJSON *ro = cJSON_AddObjectToObject(out, "robot");
    cJSON_AddStringToObject(ro, "file", robot);
    cJSON_AddStringToObject(ro, "name", d.name);
    cJSON_AddNumberToObject(ro, "links", d.nlink);
    cJSON_AddNumberToObject(ro, "joints", d.njoint);
    cJSON_AddNumberToObject(ro, "moving_joints", nd);
    cJSON_AddNumberToObject(ro, "motors", nmotor);
    cJSON_AddNumberToObject(ro, "parameters", sid_model_nparam(m));
    if (d.ground.present) {
        /* only robots with contact have the key, so older outputs stay as they were */
        cJSON *co = cJSON_AddObjectToObject(ro, "contact");
        cJSON_AddStringToObject(co, "model", sid_contact_model_name(d.ground.model));
        cJSON_AddNumberToObject(co, "spheres", d.nsphere);
    }

    ntr = a.nop - 1;
    trs = calloc((size_t)(ntr > 0 ? ntr : 1), sizeof *trs);
    if (!trs) {
        cli_error("out of memory");
        rc = EXIT_INPUT;
        goto done;
    }
    for (int i = 1; i < a.nop; i++) {
        sid_traj *tr;
        dt_stats s;
        if (traj_csv_load(a.op[i], m, &spec.columns, &trs[i - 1], &err)) {
            rc = cli_fail(&err);
            goto done;
        }
        tr = trs[i - 1];
        if (interval_stats(tr, &s)) {
            cli_error("out of memory");
            rc = EXIT_INPUT;
            goto done;
        }
        double T = tr->t[tr->n - 1] - tr->t[0];
        cJSON *lo = cJSON_CreateObject();
        cJSON_AddStringToObject(lo, "file", a.op[i]);
        cJSON_AddNumberToObject(lo, "samples", tr->n);
        add_num(lo, "duration", T);
        add_num(lo, "dt_min", s.dmin);
        add_num(lo, "dt_median", s.dmed);
        add_num(lo, "dt_max", s.dmax);
        cJSON_AddBoolToObject(lo, "velocities", tr->qd != NULL);
        if (tr->push) cJSON_AddItemToObject(lo, "pushes", pushes_json(m, tr));
        cJSON_AddItemToArray(logs, lo);
    }
    /* the step every other command will simulate these logs with */
    sid_step_choice step;
    if (ntr > 0 && stepchoice_apply(&spec, m, theta, trs, (const char *const *)a.op + 1, ntr, 0, &step, &err)) {
        sid_error_prefix(&err, "%s: choosing the simulation step", robot);
        rc = cli_fail(&err);
        goto done;
    }
    /* Only a valid set of inputs gets a summary: scripts see data or an error, not both. */
    cJSON_AddItemToObject(out, "logs", logs);
    logs = NULL;
    if (ntr > 0) cJSON_AddItemToObject(out, "step", step_json(&step, m));
    if (a.json) {
        rc = cmd_print_json(out);
        out = NULL;
    } else {
        print_text(out);
        if (ntr > 0) {
            char line[1024];
            stepchoice_describe(&step, m, line, sizeof line);
            printf("step: %s\n", line);
        }
    }
done:
    for (int i = 0; trs && i < ntr; i++) sid_traj_free(trs[i]);
    free(trs);
    cJSON_Delete(logs);
    cJSON_Delete(out);
    sid_free(theta);
    sid_model_free(m);
    robot_desc_free(&d);
    fitspec_free(&spec);
    return rc;
}
