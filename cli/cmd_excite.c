/* cmd_excite.c — `sysid excite ROBOT --duration S -o EXCITATION.csv`: design the experiment.
 *
 * Reads the robot and the fit spec (which parameters the design is for, the fit's windows and
 * simulation step), gathers every moving joint's limits (robot file first, flags for what it
 * lacks), lets core/stats/excite.c optimise the command, then writes it as a log (t, q, qd, u: the
 * nominal model's predicted trajectory, ready for `sysid simulate`, or for the robot, its u
 * columns) and prints what a fit of it would determine. Nothing is written unless the design
 * succeeded and its simulation respects the limits.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic.h"
#include "cmd.h"
#include "diag.h"
#include "excite.h"
#include "numfmt.h"
#include "keyframe.h"
#include "robot_json.h"
#include "robot_load.h"
#include "traj_csv.h"
#include "warn.h"

static const cmd_info info = {
    "excite", CMD_EXCITE, "sysid excite ROBOT --duration S -o EXCITATION.csv [-c SPEC.json] [--free GLOB] "
                          "[--max-torque X] [--max-velocity X] [--max-angle X] [--pose Q,... | --keyframe NAME] [--seed N] [--json]",
    "Design an excitation trajectory for ROBOT (robot.json, URDF or MJCF): per motor\n"
    "joint a band-limited Fourier series (a torque for torque and current motors, a\n"
    "position reference for position servos) about the command that holds the start\n"
    "pose at rest (--pose, --keyframe; the robot file's first keyframe; q = 0, or the\n"
    "middle of a limit that excludes 0), under\n"
    "sin^2 ramps at both ends, optimised so that a fit of the parameters the spec\n"
    "frees (as sysid fit: -c, --free) learns the most: the information J^T J of the\n"
    "fit's windowed residuals, scaled by the assumed noise, every window's start\n"
    "state eliminated, at the nominal parameters. Every candidate is scaled to the\n"
    "largest amplitude whose simulation stays within 97 % of each joint's position,\n"
    "velocity and torque limit: the robot's (limit, limit.effort, limit.velocity, a\n"
    "servo's limit), else --max-angle, --max-velocity, --max-torque. The\n"
    "coefficients are optimised derivative-free (NLopt BOBYQA) from a seeded random\n"
    "multi-sine.\n"
    "\n"
    "-o writes the design as a log: t, q.*, qd.* (the nominal model's predicted,\n"
    "noise-free trajectory) and u.* (the commands to play). stdout gets the predicted\n"
    "report: each parameter's standard error, the condition number, the limits used.\n",
    "With --json the report is one object: design, duration, dt, harmonics,\n"
    "base_freq, criterion, evaluations, scale, substeps, noise_q, noise_qd,\n"
    "limits_used {position, velocity, torque}, end_max_qd, windows, condition,\n"
    "logdet, worst_relative_se, worst_parameter, unresolved, parameters [{name,\n"
    "nominal, se, relative_se}] (se and relative_se null: not identifiable).\n"
    "The same inputs and --seed give the same bytes, for any --threads.\n"
    "\n"
    "Exit status: 0 success, 2 invalid input (nothing written), 3 numerical failure.\n",
};

/* Parse an excite option's number: 0, or a usage error naming the option. */
static int number(const char *s, const char *name, double def, double lo, double *x)
{
    if (!s) {
        *x = def;
        return 0;
    }
    char *end;
    const double v = strtod(s, &end);
    if (end == s || *end || !isfinite(v) || v < lo) {
        cmd_usage_error(&info, "%s: expected a number >= %g, got '%s'", name, lo, s);
        return -1;
    }
    *x = v;
    return 0;
}

typedef struct {
    double *q0, *q_lo, *q_hi, *qd_max, *tau_max;
} limits;

/* Each moving joint's start pose and limits: the robot file's, else the flags' (-1: none). */
/* --pose Q,Q,...: nq numbers into q0; 0, or a usage error. */
static int parse_pose(const char *s, int nq, double *q0)
{
    const char *p = s;
    for (int i = 0; i < nq; i++) {
        char *end;
        q0[i] = strtod(p, &end);
        if (end == p || !isfinite(q0[i]) || (i + 1 < nq ? *end != ',' : *end != '\0')) {
            cmd_usage_error(&info, "--pose: expected %d comma-separated numbers (one per joint, in q order), got '%s'", nq, s);
            return -1;
        }
        p = end + 1;
    }
    return 0;
}

/* The joints that lack one kind of limit, for one message naming them all. */
enum { MISSING_LISTED = 8 };
typedef struct {
    int n;
    char names[8 * SID_MAX_NAME];
} missing;

static void missing_add(missing *m, const char *name)
{
    const size_t len = strlen(m->names);
    if (m->n++ < MISSING_LISTED) snprintf(m->names + len, sizeof m->names - len, "%s%s", len ? ", " : "", name);
}

/* pose_from: where a given pose comes from, for messages ("--pose", "keyframe 'home'"). */
static int joint_limits(const char *robot, const sid_model *m, const double *pose, const char *pose_from,
                        double max_angle, double max_vel, double max_tau, limits *L)
{
    sid_robot_desc d;
    sid_error err = { 0 };
    if (robot_load(robot, &d, NULL, NULL, &err))
        return cli_fail(&err);
    int rc = EXIT_OK;
    missing miss[3] = { { 0, "" }, { 0, "" }, { 0, "" } };   /* position, velocity, torque */
    for (int k = 0; k < sid_model_ndof_joints(m) && rc == EXIT_OK; k++) {
        const sid_joint_desc *j = &d.joint[sid_model_dof_joint_desc(m, k)];
        const int iq = sid_model_dof_joint_qadr(m, k), iv = sid_model_dof_joint_vadr(m, k);
        const char *name = sid_model_dof_joint_name(m, k);
        if (j->type == SID_JOINT_FREE) {
            cli_error("%s: joint '%s' is a free joint; excite designs commands for one-dof joints only", robot, name);
            rc = EXIT_INPUT;
            break;
        }
        double lo = j->has_limit_lower ? j->limit_lower : -HUGE_VAL, hi = j->has_limit_upper ? j->limit_upper : HUGE_VAL;
        double q0 = 0;
        if (pose) q0 = pose[iq];
        else if (!(lo < 0 && 0 < hi) && isfinite(lo) && isfinite(hi)) q0 = 0.5 * (lo + hi);
        else if (!(lo < 0)) q0 = lo + (max_angle > 0 ? max_angle : 1);
        else if (!(0 < hi)) q0 = hi - (max_angle > 0 ? max_angle : 1);
        if (pose && !(lo < q0 && q0 < hi)) {
            cli_error("%s: joint '%s': %s %g is not inside its limits [%g, %g]", robot, name, pose_from, q0, lo, hi);
            rc = EXIT_INPUT;
            break;
        }
        if (!isfinite(lo) || !isfinite(hi)) {
            if (!(max_angle > 0)) missing_add(&miss[0], name);
            if (!isfinite(lo)) lo = q0 - max_angle;
            if (!isfinite(hi)) hi = q0 + max_angle;
        }
        double vmax = j->limit_velocity > 0 ? j->limit_velocity : max_vel;
        double tmax = j->limit_effort > 0 ? j->limit_effort : j->has_servo_limit ? j->servo_limit * j->gear : max_tau;
        if (!(vmax > 0)) missing_add(&miss[1], name);
        if (!(tmax > 0)) missing_add(&miss[2], name);
        L->q0[iq] = q0, L->q_lo[iq] = lo, L->q_hi[iq] = hi;
        L->qd_max[iv] = vmax, L->tau_max[iv] = tmax;
    }
    robot_desc_free(&d);
    if (rc == EXIT_OK && (miss[0].n || miss[1].n || miss[2].n)) {   /* every missing limit in one message */
        static const char *const what[3] = { "position", "velocity", "torque" };
        static const char *const give[3] = { "--max-angle X (the range q0 +- X; or limit.lower and limit.upper)",
                                             "--max-velocity X (or limit.velocity)",
                                             "--max-torque X (or limit.effort, a servo's motor.limit)" };
        char msg[2048];
        size_t len = 0;
        for (int k = 0; k < 3; k++)
            if (miss[k].n && len < sizeof msg)
                len += (size_t)snprintf(msg + len, sizeof msg - len, "%s no %s limit on %d joint%s (%s%s): give %s",
                                        len ? ";" : "", what[k], miss[k].n, miss[k].n == 1 ? "" : "s", miss[k].names,
                                        miss[k].n > MISSING_LISTED ? ", ..." : "", give[k]);
        cli_error("%s: the excitation needs a limit for every joint:%s", robot, msg);
        rc = EXIT_INPUT;
    }
    return rc;
}

/* The limit that stops the amplitude growing: the one used most (why a torque budget may stay
 * unused: a velocity or position limit reached first). */
static const char *binding(const sid_excite_result *r)
{
    return r->use_tau >= r->use_qd && r->use_tau >= r->use_q ? "torque" : r->use_qd >= r->use_q ? "velocity" : "position";
}

static const char *num(char *buf, double x)
{
    if (!isfinite(x)) return "-";
    snprintf(buf, 32, "%.4g", x);
    return buf;
}

static void print_text(const sid_model *m, const double *theta, const sid_excite_opts *o, const sid_excite_result *r,
                       int nwin)
{
    char a[32], b[32], c[32];
    printf("excitation: %g s at %g Hz, %d harmonics of %g Hz per joint (%d coefficients), %s, %d evaluations\n",
           o->duration, 1 / o->dt, o->harmonics, o->f0, 2 * o->harmonics * sid_model_nv(m),
           !o->optimise ? "random multi-sine" : o->criterion == SID_EXCITE_WORST ? "optimised (worst)" :
                                                                                   "optimised (logdet)",
           r->evaluations);
    printf("limits used: position %.0f %%, velocity %.0f %%, torque %.0f %% (amplitude %.4g: the %s limit binds); "
           "at the end |qd| <= %.3g\n", 100 * r->use_q, 100 * r->use_qd, 100 * r->use_tau, r->scale, binding(r),
           r->end_qd);
    printf("predicted for noise %g (q), %g (qd), %d windows of %g s, start states eliminated:\n", o->noise_q,
           o->noise_qd, nwin, o->loss.window);
    printf("  %-36s %12s %12s %10s\n", "parameter", "nominal", "std.error", "relative");
    for (int a_ = 0; a_ < o->nfree; a_++) {
        const double v = theta[o->idx[a_]];
        const double typ = fmax(fabs(v), sid_model_param(m, o->idx[a_])->row->typical);
        const double se = r->se[a_];
        if (isfinite(se))
            snprintf(c, sizeof c, "%.3g %%", 100 * se / typ);
        else
            snprintf(c, sizeof c, "not ident.");
        printf("  %-36s %12s %12s %10s\n", sid_model_param(m, o->idx[a_])->name, num(a, v), num(b, se), c);
    }
    printf("condition number %s, log det %.6g, worst relative standard error %s (%s)%s\n", num(a, r->cond), r->logdet,
           isfinite(r->worst_rel) ? (snprintf(b, sizeof b, "%.3g %%", 100 * r->worst_rel), b) : "not identifiable",
           sid_model_param(m, o->idx[r->worst])->name, r->nnull ? "; some directions unresolved" : "");
}

static cJSON *json_num(double x)
{
    cJSON *n = numfmt_json(x);
    return n ? n : cJSON_CreateNull();
}

static int print_json(const sid_model *m, const double *theta, const sid_excite_opts *o, const sid_excite_result *r,
                      int nwin)
{
    cJSON *doc = cJSON_CreateObject(), *lim = cJSON_CreateObject(), *ps = cJSON_CreateArray();
    cJSON_AddStringToObject(doc, "design", o->optimise ? "optimal" : "random");
    cJSON_AddItemToObject(doc, "duration", json_num(o->duration));
    cJSON_AddItemToObject(doc, "dt", json_num(o->dt));
    cJSON_AddNumberToObject(doc, "harmonics", o->harmonics);
    cJSON_AddItemToObject(doc, "base_freq", json_num(o->f0));
    cJSON_AddStringToObject(doc, "criterion", o->criterion == SID_EXCITE_WORST ? "worst" : "logdet");
    cJSON_AddNumberToObject(doc, "evaluations", r->evaluations);
    cJSON_AddItemToObject(doc, "scale", json_num(r->scale));
    cJSON_AddNumberToObject(doc, "substeps", o->loss.sim.substeps);
    cJSON_AddItemToObject(doc, "noise_q", json_num(o->noise_q));
    cJSON_AddItemToObject(doc, "noise_qd", json_num(o->noise_qd));
    cJSON_AddItemToObject(lim, "position", json_num(r->use_q));
    cJSON_AddItemToObject(lim, "velocity", json_num(r->use_qd));
    cJSON_AddItemToObject(lim, "torque", json_num(r->use_tau));
    cJSON_AddItemToObject(doc, "limits_used", lim);
    cJSON_AddStringToObject(doc, "binding_limit", binding(r));   /* limits_used's largest */
    cJSON_AddItemToObject(doc, "end_max_qd", json_num(r->end_qd));
    cJSON_AddNumberToObject(doc, "windows", nwin);
    cJSON_AddItemToObject(doc, "condition", json_num(r->cond));
    cJSON_AddItemToObject(doc, "logdet", json_num(r->logdet));
    cJSON_AddItemToObject(doc, "worst_relative_se", json_num(r->worst_rel));
    cJSON_AddStringToObject(doc, "worst_parameter", sid_model_param(m, o->idx[r->worst])->name);
    cJSON_AddNumberToObject(doc, "unresolved", r->nnull);
    for (int a = 0; a < o->nfree; a++) {
        const double v = theta[o->idx[a]], typ = fmax(fabs(v), sid_model_param(m, o->idx[a])->row->typical);
        cJSON *p = cJSON_CreateObject();
        cJSON_AddStringToObject(p, "name", sid_model_param(m, o->idx[a])->name);
        cJSON_AddItemToObject(p, "nominal", json_num(v));
        cJSON_AddItemToObject(p, "se", json_num(r->se[a]));
        cJSON_AddItemToObject(p, "relative_se", json_num(r->se[a] / typ));
        cJSON_AddItemToArray(ps, p);
    }
    cJSON_AddItemToObject(doc, "parameters", ps);
    return cmd_print_json(doc);
}

int cmd_excite(int argc, char **argv)
{
    cmd_args a;
    int rc = cmd_parse(&info, argc, argv, &a);
    if (rc != CMD_RUN)
        return rc;
    if (a.nop != 1)
        return cmd_usage_error(&info, "expected a robot file, got %d arguments", a.nop);
    const char *robot = a.op[0];
    if (!a.out)
        return cmd_usage_error(&info, "-o EXCITATION.csv is required");
    if (!a.excite[EXCITE_DURATION])
        return cmd_usage_error(&info, "--duration S is required");
    if (strcmp(a.out, "-") != 0 && atomic_same_file(a.out, robot))
        return cmd_usage_error(&info, "-o %s would overwrite the input %s", a.out, robot);
    const char *const *x = a.excite;
    double duration, dt, harm, f0, ramp, nq_, nqd_, mtau, mvel, mang, seed, evals;
    if (number(x[EXCITE_DURATION], "--duration", 0, 1e-9, &duration) || number(x[EXCITE_DT], "--dt", 0.01, 1e-9, &dt) ||
        number(x[EXCITE_HARMONICS], "--harmonics", 8, 1, &harm) ||
        number(x[EXCITE_BASE_FREQ], "--base-freq", 0.25, 1e-9, &f0) || number(x[EXCITE_RAMP], "--ramp", 1, 0, &ramp) ||
        number(x[EXCITE_NOISE_Q], "--noise-q", 1e-3, 1e-300, &nq_) ||
        number(x[EXCITE_NOISE_QD], "--noise-qd", 1e-2, 0, &nqd_) ||
        number(x[EXCITE_MAX_TORQUE], "--max-torque", -1, 1e-300, &mtau) ||
        number(x[EXCITE_MAX_VELOCITY], "--max-velocity", -1, 1e-300, &mvel) ||
        number(x[EXCITE_MAX_ANGLE], "--max-angle", -1, 1e-300, &mang) || number(x[EXCITE_SEED], "--seed", 1, 0, &seed) ||
        number(x[EXCITE_MAX_EVALS], "--max-evals", 200, 1, &evals))
        return EXIT_INPUT;
    if (harm != floor(harm) || harm > 50)
        return cmd_usage_error(&info, "--harmonics: expected a whole number 1 .. 50, got '%s'", x[EXCITE_HARMONICS]);
    if (seed != floor(seed) || evals != floor(evals) || evals > 1e6)
        return cmd_usage_error(&info, "--seed and --max-evals: expected whole numbers");
    if (duration / dt > 1e7)
        return cmd_usage_error(&info, "--duration %g s at --dt %g s: more than 1e7 samples", duration, dt);
    sid_excite_criterion crit = SID_EXCITE_WORST;
    if (x[EXCITE_CRITERION] && strcmp(x[EXCITE_CRITERION], "logdet") == 0) crit = SID_EXCITE_LOGDET;
    else if (x[EXCITE_CRITERION] && strcmp(x[EXCITE_CRITERION], "worst") != 0)
        return cmd_usage_error(&info, "--criterion: expected logdet or worst, got '%s'", x[EXCITE_CRITERION]);
    int optimise = 1;
    if (x[EXCITE_DESIGN] && strcmp(x[EXCITE_DESIGN], "random") == 0) optimise = 0;
    else if (x[EXCITE_DESIGN] && strcmp(x[EXCITE_DESIGN], "optimal") != 0)
        return cmd_usage_error(&info, "--design: expected optimal or random, got '%s'", x[EXCITE_DESIGN]);

    if (x[EXCITE_POSE] && a.keyframe) return cmd_usage_error(&info, "--pose and --keyframe: give one start pose");
    sid_error err = { 0 };
    fitspec spec;
    fitspec_selection sel = { 0 };
    cJSON *doc = NULL;
    sid_model *m = NULL;
    double *theta = NULL, *buf = NULL;
    sid_excite_result r = { 0 };
    if (cmd_spec_build(&spec, &a.spec, &err) || cmd_spec_model(&spec, robot, &m, &theta, &doc, &err) ||
        fitspec_select(&spec, m, theta, &sel, &err)) {
        rc = cli_fail(&err);
        goto done;
    }
    const int nq = sid_model_nq(m), nv = sid_model_nv(m);
    buf = calloc((size_t)(3 * nq + 2 * nv + 1), sizeof *buf);
    if (!buf) {
        cli_error("out of memory");
        rc = EXIT_INPUT;
        goto done;
    }
    limits L = { buf, buf + nq, buf + 2 * nq, buf + 3 * nq, buf + 3 * nq + nv };
    double *pose = NULL;
    char pose_from[2 * SID_MAX_NAME] = "--pose";
    /* the start pose: --pose, --keyframe, else the robot file's first keyframe (a robot arm's
     * "home"), else the rule of joint_limits */
    const char *key = a.keyframe ? a.keyframe : x[EXCITE_POSE] ? NULL : keyframe_first(doc);
    if (x[EXCITE_POSE] || key) {
        pose = calloc((size_t)(nq + 2 * nv) + 1, sizeof *pose);
        if (!pose || (x[EXCITE_POSE] ? parse_pose(x[EXCITE_POSE], nq, pose)
                                     : keyframe_state(robot, doc, m, key, pose, pose + nq, pose + nq + nv, &err))) {
            free(pose);
            rc = pose && key ? cli_fail(&err) : EXIT_INPUT;
            goto done;
        }
    }
    if (key) {
        snprintf(pose_from, sizeof pose_from, "keyframe '%s'", key);
        if (!a.keyframe) sid_io_note("excite: the start pose is the robot file's keyframe '%s' (--pose or --keyframe "
                                     "chooses another)", key);
    }
    rc = joint_limits(robot, m, pose, pose_from, mang, mvel, mtau, &L);
    free(pose);
    if (rc != EXIT_OK)
        goto done;
    sid_excite_opts o = { 0 };
    o.duration = duration, o.dt = dt, o.harmonics = (int)harm, o.f0 = f0, o.ramp = ramp;
    o.noise_q = nq_, o.noise_qd = nqd_, o.criterion = crit, o.optimise = optimise;
    o.max_evals = (int)evals, o.seed = (unsigned long)seed;
    fitspec_loss_opts(&spec, &o.loss);
    /* no log to choose the step on: 1 ms steps unless the spec or the robot says */
    if (o.loss.sim.substeps <= 0 && !(o.loss.sim.max_dt > 0)) {
        const double h = sid_model_timestep(m) > 0 ? sid_model_timestep(m) : 1e-3;
        o.loss.sim.substeps = (int)ceil(dt / h - 1e-9);
        if (o.loss.sim.substeps < 1) o.loss.sim.substeps = 1;
    }
    o.nfree = sel.n, o.idx = sel.idx;
    o.q0 = L.q0, o.q_lo = L.q_lo, o.q_hi = L.q_hi, o.qd_max = L.qd_max, o.tau_max = L.tau_max;
    sid_status s = sid_excite_run(m, theta, &o, &r, &err);
    if (s) {
        sid_error_prefix(&err, "%s", robot);
        rc = cli_fail(&err);
        goto done;
    }
    /* the design's own simulation is within SID_EXCITE_MARGIN of the limits by construction; refuse anything else */
    if (!(r.use_q <= 1 && r.use_qd <= 1 && r.use_tau <= 1)) {
        cli_error("%s: the designed excitation's simulation exceeds a limit (position %.3g, velocity %.3g, torque %.3g "
                  "of the limit); nothing written", robot, r.use_q, r.use_qd, r.use_tau);
        rc = EXIT_NUMERIC;
        goto done;
    }
    int nwin = 0;
    {
        sid_loss_opts lo = o.loss;
        lo.estimate_start = 1;
        sid_problem *p = NULL;
        const sid_traj *logs[1] = { r.traj };
        if (sid_problem_create(&p, m, logs, 1, &lo, &err) == SID_OK) nwin = sid_problem_nwindows(p);
        sid_problem_free(p);
    }
    if (strcmp(a.out, "-") == 0) {
        if (traj_csv_write(stdout, m, r.traj, NULL, NULL)) {
            cli_error("cannot write to standard output");
            rc = EXIT_INPUT;
        }
        goto done;
    }
    atomic_file af;
    if (atomic_open(&af, a.out, &err) != SID_OK) {
        rc = cli_fail(&err);
        goto done;
    }
    if (traj_csv_write(af.f, m, r.traj, NULL, NULL) != 0) {
        atomic_abort(&af);
        cli_error("%s: cannot write", a.out);
        rc = EXIT_INPUT;
        goto done;
    }
    if (atomic_commit(&af, &err) != SID_OK) {
        rc = cli_fail(&err);
        goto done;
    }
    if (a.json)
        rc = print_json(m, theta, &o, &r, nwin);
    else
        print_text(m, theta, &o, &r, nwin);
done:
    cJSON_Delete(doc);
    sid_excite_result_free(&r);
    free(buf);
    fitspec_selection_free(&sel);
    sid_free(theta);
    sid_model_free(m);
    fitspec_free(&spec);
    return rc;
}
