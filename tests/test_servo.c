/* test_servo.c — position and velocity servos (core/dynamics/servo.h): their derivatives against central
 * finite differences and forward mode against the adjoint; agreement with MuJoCo 2.2.2's
 * position and velocity actuators on MJCF models imported by sysid's importer; recovery of
 * servo gains and the robot's parameters from logs MuJoCo made. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include <mujoco/mujoco.h>

#include "diag.h"
#include "mjcf.h"
#include "robot_json.h"
#include "sid_internal.h"
#include "test_util.h"

Suite *servo_suite(void);

/* ---- gradients ------------------------------------------------------------------------------ */

/* A random robot (every feature of tu_random_robot: prismatic and fixed joints, friction,
 * offsets) whose motors are servos: joint j a position servo with a torque limit (j % 3 == 0),
 * a position servo without one (1), a velocity servo with one (2); gear 1..3. The limits are
 * of the size of the servo's force at the test's states, so tanh is neither linear nor flat. */
static sid_robot_desc *servo_robot(unsigned seed)
{
    sid_robot_desc *d = tu_random_robot(seed, 6, TU_ALL);
    tu_servos(d, seed * 7 + 1, 2, 6);
    return d;
}

typedef struct {
    sid_integrator integ;
    sid_model *m;
    sid_workspace *ws;
    double *theta;
    double q[64], v[64], u[64], wq[64], wv[64];
    double h;
} gproblem;

/* L = wq . q1 + wv . v1 after one step. */
static double step_loss(gproblem *p)
{
    const int nv = sid_model_nv(p->m);
    double q1[64], v1[64];
    sid_error err = {0};
    ck_assert_int_eq(sid_step(p->m, p->theta, p->ws, p->integ, p->h, p->q, p->v, p->u, q1, v1,
                              &err), SID_OK);
    double L = 0;
    for (int i = 0; i < nv; i++) L += p->wq[i] * q1[i] + p->wv[i] * v1[i];
    return L;
}

/* Central difference in *x, step 1e-6 max(1, |x|) (tests/README.md, "Derivative checks"). */
static double central(gproblem *p, double *x)
{
    const double x0 = *x, e = 1e-6 * fmax(1, fabs(x0));
    *x = x0 + e;
    const double Lp = step_loss(p);
    *x = x0 - e;
    const double Lm = step_loss(p);
    *x = x0;
    return (Lp - Lm) / (2 * e);
}

static void gproblem_init(gproblem *p, unsigned seed, sid_integrator integ)
{
    sid_robot_desc *d = servo_robot(seed);
    sid_error err = {0};
    memset(p, 0, sizeof *p);
    ck_assert_msg(sid_model_create(&p->m, &p->theta, d, &err) == SID_OK, "%s", err.msg);
    tu_desc_free(d);
    p->ws = sid_workspace_create(p->m);
    p->integ = integ;
    p->h = 1e-2;
    unsigned s = seed + 100;
    for (int i = 0; i < sid_model_nv(p->m); i++) {
        p->q[i] = tu_uniform(&s, -1.5, 1.5), p->v[i] = tu_uniform(&s, -2, 2), p->u[i] = tu_uniform(&s, -1, 1);
        p->wq[i] = tu_uniform(&s, -1, 1), p->wv[i] = tu_uniform(&s, -1, 1);
    }
}

static void gproblem_free(gproblem *p)
{
    sid_workspace_free(p->ws);
    sid_model_free(p->m);
    sid_free(p->theta);
}

/* Is the servo at moving joint k saturating at the test's state: |f| / L of its tanh? */
static double saturation(const gproblem *p, int k)
{
    char name[96];
    snprintf(name, sizeof name, "joints.%s.motor.limit", sid_model_dof_joint_name(p->m, k));
    const int il = sid_model_param_find(p->m, name);
    if (il < 0) return 0;
    snprintf(name, sizeof name, "joints.%s.motor.kd", sid_model_dof_joint_name(p->m, k));
    const int ikd = sid_model_param_find(p->m, name);
    snprintf(name, sizeof name, "joints.%s.motor.kp", sid_model_dof_joint_name(p->m, k));
    const int ikp = sid_model_param_find(p->m, name);
    snprintf(name, sizeof name, "joints.%s.motor.gear", sid_model_dof_joint_name(p->m, k));
    const int ig = sid_model_param_find(p->m, name);
    snprintf(name, sizeof name, "joints.%s.offset", sid_model_dof_joint_name(p->m, k));
    const int io = sid_model_param_find(p->m, name);
    const int qi = sid_model_dof_joint_qadr(p->m, k), vi = sid_model_dof_joint_vadr(p->m, k);
    const double G = p->theta[ig], kd = p->theta[ikd];
    const double f = ikp >= 0 ? p->theta[ikp] * (p->u[vi] - G * (p->q[qi] + p->theta[io])) - kd * G * p->v[vi]
                              : kd * (p->u[vi] - G * p->v[vi]);
    return fabs(f) / p->theta[il];
}

/* Every parameter's and state's adjoint against central differences; tol relative (tu_rel_err
 * with atol 1e-9): a step is a few hundred operations on numbers of order one, so the
 * difference's own error, ~1e-16 / 1e-6 truncation plus 1e-12 rounding, is far below 1e-6. */
static double check_vjp(unsigned seed, sid_integrator integ, double *worst_servo)
{
    gproblem p;
    gproblem_init(&p, seed, integ);
    const int nv = sid_model_nv(p.m), np = sid_model_nparam(p.m);
    double qbar[64] = {0}, vbar[64] = {0}, *thetabar = calloc((size_t)np, sizeof(double));
    sid_error err = {0};
    ck_assert_int_eq(sid_step_vjp(p.m, p.theta, p.ws, integ, p.h, p.q, p.v, p.u, p.wq, p.wv,
                                  qbar, vbar, thetabar, &err), SID_OK);
    double worst = 0, ws = 0;
    char where[256] = "none";
    for (int i = 0; i < nv; i++) {
        const double eq = tu_rel_err(qbar[i], central(&p, &p.q[i]), 1e-9);
        const double ev = tu_rel_err(vbar[i], central(&p, &p.v[i]), 1e-9);
        if (eq > worst) worst = eq, snprintf(where, sizeof where, "q[%d]", i);
        if (ev > worst) worst = ev, snprintf(where, sizeof where, "v[%d]", i);
    }
    int nservo = 0, nlimit = 0;
    double gmax[3] = {0, 0, 0};   /* the largest |gradient| of kp, kd, limit */
    for (int j = 0; j < np; j++) {
        const sid_param_info *pi = sid_model_param(p.m, j);
        const double num = central(&p, &p.theta[j]), e = tu_rel_err(thetabar[j], num, 1e-9);
        if (e > worst)
            worst = e, snprintf(where, sizeof where, "%s: analytic %.10g, fd %.10g", pi->name, thetabar[j], num);
        if (pi->kind == SID_P_KP || pi->kind == SID_P_KD || pi->kind == SID_P_SERVO_LIMIT) {
            if (fabs(num) > 1e-3) ws = fmax(ws, fabs(thetabar[j] - num) / fabs(num));   /* the report's figure */
            nservo++;
            nlimit += pi->kind == SID_P_SERVO_LIMIT;
            const int k = pi->kind == SID_P_KP ? 0 : pi->kind == SID_P_KD ? 1 : 2;
            gmax[k] = fmax(gmax[k], fabs(thetabar[j]));
        }
    }
    ck_assert_int_ge(nservo, 9);
    /* a servo parameter without a gradient would pass any comparison */
    for (int k = 0; k < 3; k++) ck_assert_msg(gmax[k] > 1e-3, "servo kind %d: gradients up to %g only", k, gmax[k]);
    ck_assert_int_ge(nlimit, 2);
    /* the limits are in tanh's curved part, neither linear (|f|/L << 1) nor flat (>> 1) */
    double smin = 1e9, smax = 0;
    for (int k = 0; k < sid_model_ndof_joints(p.m); k++) {
        const double sat = saturation(&p, k);
        if (sat > 0) smin = fmin(smin, sat), smax = fmax(smax, sat);
    }
    fprintf(stderr, "servo %s step adjoint: worst relative error %.2e at %s (servo parameters with |gradient| > 1e-3: %.2e; |f|/L %.2f..%.2f)\n",
            sid_integrator_name(integ), worst, where, ws, smin, smax);
    ck_assert_msg(smax > 0.3 && smax < 5, "saturation |f|/L up to %g: not exercising tanh", smax);
    ck_assert_msg(worst <= 1e-6, "relative error %g at %s", worst, where);
    *worst_servo = ws;
    free(thetabar);
    gproblem_free(&p);
    return worst;
}

START_TEST(servo_step_vjp_matches_fd)
{
    double ws;
    check_vjp(21, SID_EULER, &ws);
    check_vjp(22, SID_RK4, &ws);
    check_vjp(23, SID_EULER, &ws);
    check_vjp(25, SID_IMPLICITFAST, &ws);
}
END_TEST

/* Forward mode is the adjoint's transpose: w . (J xdot) = (J^T w) . xdot for random directions
 * (the dot-product test), to rounding (1e-10 relative). */
static void check_jvp(unsigned seed, sid_integrator integ)
{
    gproblem p;
    gproblem_init(&p, seed, integ);
    const int nv = sid_model_nv(p.m), np = sid_model_nparam(p.m);
    unsigned s = seed + 9;
    double qd[64], vd[64], dq[64], dv[64], scratch[9 * 64];
    double *thd = calloc((size_t)np, sizeof(double)), *thetabar = calloc((size_t)np, sizeof(double));
    for (int i = 0; i < nv; i++) dq[i] = qd[i] = tu_uniform(&s, -1, 1), dv[i] = vd[i] = tu_uniform(&s, -1, 1);
    for (int j = 0; j < np; j++) thd[j] = tu_uniform(&s, -1, 1) * fmax(0.01, fabs(p.theta[j]));
    sid_error err = {0};
    ck_assert_int_eq(sid_step_jvp(p.m, p.theta, p.ws, integ, p.h, p.q, p.v, p.u, 1, thd, qd, vd,
                                  scratch, &err), SID_OK);
    double qbar[64] = {0}, vbar[64] = {0};
    ck_assert_int_eq(sid_step_vjp(p.m, p.theta, p.ws, integ, p.h, p.q, p.v, p.u, p.wq, p.wv,
                                  qbar, vbar, thetabar, &err), SID_OK);
    double fwd = 0, rev = 0;
    for (int i = 0; i < nv; i++) fwd += p.wq[i] * qd[i] + p.wv[i] * vd[i], rev += qbar[i] * dq[i] + vbar[i] * dv[i];
    for (int j = 0; j < np; j++) rev += thetabar[j] * thd[j];
    fprintf(stderr, "servo %s jvp: forward %.15g reverse %.15g\n", sid_integrator_name(integ), fwd, rev);
    ck_assert_msg(fabs(fwd - rev) <= 1e-10 * (fabs(fwd) + fabs(rev)), "JVP %.15g vs VJP %.15g", fwd, rev);
    free(thd);
    free(thetabar);
    gproblem_free(&p);
}

START_TEST(servo_jvp_matches_vjp)
{
    check_jvp(31, SID_EULER);
    check_jvp(32, SID_RK4);
    check_jvp(33, SID_IMPLICITFAST);
}
END_TEST


/* Through whole windows: the loss gradient of sid_problem_loss (adjoint) against central
 * differences of the loss for every servo parameter and a sample of the others, and against
 * forward mode (sum over windows of J^T r / nres from sid_problem_window_jacobian). Logs are
 * tu_synth_log's (references: three sines per joint) at theta moved 10 %, 0.3 s, windows of
 * 0.1 s. Errors are tu_rel_err's with atol 1e-9 of the largest |gradient| (the loss is small,
 * ~1e-4, and a difference's rounding, 1e-16 L / 1e-6, is absolute). Tolerance 1e-6 against the
 * difference (three windows of 50 steps: its truncation and rounding stay far below), 1e-9
 * between the two exact modes (atol 1e-15 of the largest gradient). */
START_TEST(servo_loss_gradient)
{
    sid_robot_desc *d = servo_robot(51);
    sid_model *m;
    double *theta;
    sid_error err = {0};
    ck_assert_msg(sid_model_create(&m, &theta, d, &err) == SID_OK, "%s", err.msg);
    tu_desc_free(d);
    const int np = sid_model_nparam(m);
    double *truth = malloc(sizeof(double) * (size_t)np), *grad = calloc((size_t)np, sizeof(double));
    unsigned s = 52;
    for (int i = 0; i < np; i++) truth[i] = theta[i] * (1 + 0.1 * tu_uniform(&s, -1, 1));
    sid_traj *log = tu_synth_log(m, truth, 151, 2e-3, 0.8, 53);
    sid_loss_opts o;
    sid_loss_opts_defaults(&o);
    o.window = 0.1;
    o.sim.substeps = 1;
    sid_problem *p;
    ck_assert_msg(sid_problem_create(&p, m, (const sid_traj *const *)&log, 1, &o, &err) == SID_OK, "%s", err.msg);
    double L;
    ck_assert_int_eq(sid_problem_loss(p, theta, NULL, &L, grad, NULL, &err), SID_OK);
    /* forward mode, every parameter at once */
    const int nw = sid_problem_nwindows(p);
    int *idx = malloc(sizeof(int) * (size_t)np), nres = 0;
    for (int i = 0; i < np; i++) idx[i] = i;
    double *fwd = calloc((size_t)np, sizeof(double));
    for (int w = 0; w < nw; w++) nres += sid_problem_window_rows(p, w);
    for (int w = 0; w < nw; w++) {
        const int rows = sid_problem_window_rows(p, w);
        double *r = malloc(sizeof(double) * (size_t)rows), *J = malloc(sizeof(double) * (size_t)rows * (size_t)np);
        ck_assert_int_eq(sid_problem_window_jacobian(p, theta, NULL, w, np, idx, r, J, &err), SID_OK);
        for (int k = 0; k < rows; k++)
            for (int i = 0; i < np; i++) fwd[i] += J[(size_t)k * np + i] * r[k] / nres;
        free(r);
        free(J);
    }
    double worst_fd = 0, worst_fwd = 0, servo_fd = 0, gmax = 0;
    for (int i = 0; i < np; i++) gmax = fmax(gmax, fabs(grad[i]));
    const double atol = 1e-9 * gmax;   /* the loss is small: errors relative to its gradient's size */
    int nservo = 0;
    char where[320] = "none";
    for (int i = 0; i < np; i++) {
        const sid_param_info *pi = sid_model_param(m, i);
        const int servo = pi->kind == SID_P_KP || pi->kind == SID_P_KD || pi->kind == SID_P_SERVO_LIMIT;
        worst_fwd = fmax(worst_fwd, tu_rel_err(fwd[i], grad[i], 1e-6 * atol));
        if (!servo && i % 3) continue;   /* every servo parameter, a third of the others */
        const double x0 = theta[i], e = 1e-6 * fmax(1, fabs(x0));
        double Lp, Lm;
        theta[i] = x0 + e;
        ck_assert_int_eq(sid_problem_loss(p, theta, NULL, &Lp, NULL, NULL, &err), SID_OK);
        theta[i] = x0 - e;
        ck_assert_int_eq(sid_problem_loss(p, theta, NULL, &Lm, NULL, NULL, &err), SID_OK);
        theta[i] = x0;
        const double num = (Lp - Lm) / (2 * e), er = tu_rel_err(grad[i], num, atol);
        if (er > worst_fd) worst_fd = er, snprintf(where, sizeof where, "%s: adjoint %.10g fd %.10g", pi->name, grad[i], num);
        if (servo) nservo++;
        if (servo && fabs(num) > 1e-3 * gmax) servo_fd = fmax(servo_fd, fabs(grad[i] - num) / fabs(num));   /* reported */
    }
    fprintf(stderr, "servo loss gradient over windows: adjoint vs fd worst %.2e at %s (%d servo parameters; plain relative error where |gradient| > 1e-3 of the largest: %.2e); "
            "forward vs adjoint %.2e (largest |gradient| %.3g)\n", worst_fd, where, nservo, servo_fd, worst_fwd, gmax);
    ck_assert_int_ge(nservo, 9);
    ck_assert_msg(worst_fd <= 1e-6, "adjoint vs fd %g at %s", worst_fd, where);
    ck_assert_msg(worst_fwd <= 1e-9, "forward vs adjoint %g", worst_fwd);
    free(fwd);
    free(idx);
    sid_problem_free(p);
    sid_traj_free(log);
    free(truth);
    free(grad);
    sid_model_free(m);
    sid_free(theta);
}
END_TEST

/* ---- agreement with MuJoCo ------------------------------------------------------------------ */

/* A pendulum whose hinge has a <position> and a <velocity> actuator (MuJoCo 2.2.2's PD: the
 * importer merges them, the velocity's ctrl 0), with joint damping and armature. */
static const char PENDULUM[] =
    "<mujoco model='servo_pendulum'>\n"
    "  <compiler angle='radian'/>\n"
    "  <option timestep='0.001' integrator='Euler'/>\n"
    "  <worldbody>\n"
    "    <body name='arm' pos='0 0 1'>\n"
    "      <joint name='hinge' type='hinge' axis='0 1 0' damping='0.05' armature='0.01'/>\n"
    "      <inertial pos='0.2 0 0' mass='0.8' diaginertia='0.004 0.012 0.011'/>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "  <actuator>\n"
    "    <position name='p_hinge' joint='hinge' kp='20'/>\n"
    "    <velocity name='v_hinge' joint='hinge' kv='0.8'/>\n"
    "  </actuator>\n"
    "</mujoco>\n";

/* A 4-dof chain: a PD <general> (gain 30, bias 0 -30 -2), a <position> with gear 2, a slide
 * on a <position>, a <velocity> servo with gear 1.5. */
static const char CHAIN[] =
    "<mujoco model='servo_chain'>\n"
    "  <compiler angle='radian'/>\n"
    "  <option timestep='0.001' integrator='Euler'/>\n"
    "  <worldbody>\n"
    "    <body name='l1' pos='0 0 1'>\n"
    "      <joint name='j1' type='hinge' axis='0 0 1' damping='0.1' armature='0.02'/>\n"
    "      <inertial pos='0.1 0.02 0' mass='1.2' diaginertia='0.01 0.02 0.015'/>\n"
    "      <body name='l2' pos='0.25 0 0'>\n"
    "        <joint name='j2' type='hinge' axis='0 1 0' damping='0.05' armature='0.01'/>\n"
    "        <inertial pos='0.12 0 -0.01' mass='0.9' diaginertia='0.006 0.011 0.009'/>\n"
    "        <body name='l3' pos='0.24 0 0'>\n"
    "          <joint name='j3' type='slide' axis='1 0 0' damping='0.5' armature='0.05'/>\n"
    "          <inertial pos='0.05 0 0' mass='0.4' diaginertia='0.001 0.002 0.002'/>\n"
    "          <body name='l4' pos='0.1 0 0'>\n"
    "            <joint name='j4' type='hinge' axis='0 1 0' damping='0.02' armature='0.005'/>\n"
    "            <inertial pos='0.06 0 0' mass='0.3' diaginertia='0.0005 0.001 0.001'/>\n"
    "          </body>\n"
    "        </body>\n"
    "      </body>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "  <actuator>\n"
    "    <general name='a1' joint='j1' gainprm='30' biastype='affine' biasprm='0 -30 -2'/>\n"
    "    <position name='a2' joint='j2' kp='15' gear='2'/>\n"
    "    <position name='a3' joint='j3' kp='200'/>\n"
    "    <velocity name='a4' joint='j4' kv='1.5' gear='1.5'/>\n"
    "  </actuator>\n"
    "</mujoco>\n";

/* xml written to a temporary file (MuJoCo reads files), its path in path. */
static void write_temp(const char *xml, char *path)
{
    strcpy(path, "/tmp/sysid_servo_XXXXXX");
    const int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    ck_assert_ptr_nonnull(f);
    fputs(xml, f);
    fclose(f);
}

/* Our model of an MJCF text through the importer. */
static sid_model *import_model(const char *path, const char *xml, double **theta)
{
    char *json = NULL;
    sid_error err = {0};
    sid_robot_desc d;
    const int q = cli_quiet;
    cli_quiet = 1;
    ck_assert_msg(mjcf_import(path, xml, strlen(xml), &json, &err) == 0, "%s", err.msg);
    cli_quiet = q;
    ck_assert_msg(robot_json_parse(path, json, strlen(json), &d, NULL, &err) == 0, "%s", err.msg);
    sid_model *m;
    ck_assert_msg(sid_model_create(&m, theta, &d, &err) == SID_OK, "%s", err.msg);
    robot_desc_free(&d);
    free(json);
    return m;
}

/* The reference of a joint at time t: a few sines per joint, rad (or m for the slide, rad/s for
 * a velocity servo). */
static double reference(int k, double t)
{
    return 0.4 * sin(2 * 3.14159265358979323846 * (0.5 + 0.23 * k) * t + k) + 0.2 * sin(2 * 3.14159265358979323846 * (1.7 + 0.11 * k) * t);
}

/* 2 s at MuJoCo's step from a non-zero state, references as MuJoCo's ctrl (0 for a merged
 * velocity actuator), our model of xml stepped by integ, MuJoCo's of mj_xml (NULL: xml) by its
 * own integrator: max |q_ours - q_mujoco| over the run. */
static double mujoco_agreement_of(const char *xml, sid_integrator integ, const char *mj_xml)
{
    char path[64], errbuf[1000] = "";
    write_temp(xml, path);
    double *theta;
    sid_model *m = import_model(path, xml, &theta);
    if (mj_xml) {
        unlink(path);
        write_temp(mj_xml, path);
    }
    mjModel *mm = mj_loadXML(path, NULL, errbuf, sizeof errbuf);
    unlink(path);
    ck_assert_msg(mm != NULL, "MuJoCo: %s", errbuf);
    mjData *md = mj_makeData(mm);
    sid_workspace *ws = sid_workspace_create(m);
    const int nd = sid_model_ndof_joints(m), nv = sid_model_nv(m);
    int qadr[16], act[16];
    double q[16] = {0}, v[16] = {0}, u[16] = {0}, q1[16], v1[16];
    for (int k = 0; k < nd; k++) {
        const int j = mj_name2id(mm, mjOBJ_JOINT, sid_model_dof_joint_name(m, k));
        ck_assert_int_ge(j, 0);
        qadr[k] = mm->jnt_qposadr[j];
        ck_assert_int_eq(mm->jnt_dofadr[j], sid_model_dof_joint_vadr(m, k));   /* the same order */
        act[k] = -1;
        /* the actuator whose ctrl is the reference: the first on the joint (a <position> before
         * a merged <velocity>, whose ctrl stays 0) */
        for (int a = mm->nu - 1; a >= 0; a--)
            if (mm->actuator_trnid[2 * a] == j) act[k] = a;
        ck_assert_int_ge(act[k], 0);
        q[sid_model_dof_joint_qadr(m, k)] = md->qpos[qadr[k]] = 0.3 * (k + 1) * (k % 2 ? -1 : 1);
        v[sid_model_dof_joint_vadr(m, k)] = md->qvel[mm->jnt_dofadr[j]] = 0.5 - 0.2 * k;
    }
    double worst = 0, moved = 0;   /* moved: how far the servos took the joints */
    sid_error err = {0};
    const double h = mm->opt.timestep;
    for (int it = 0; it * h < 2; it++) {
        for (int k = 0; k < nd; k++) u[sid_model_dof_joint_vadr(m, k)] = md->ctrl[act[k]] = reference(k, it * h);
        ck_assert_int_eq(sid_step(m, theta, ws, integ, h, q, v, u, q1, v1, &err), SID_OK);
        mj_step(mm, md);
        for (int k = 0; k < nd; k++) {
            worst = fmax(worst, fabs(q1[sid_model_dof_joint_qadr(m, k)] - md->qpos[qadr[k]]));
            moved = fmax(moved, fabs(md->qpos[qadr[k]] - 0.3 * (k + 1) * (k % 2 ? -1 : 1)));
        }
        memcpy(q, q1, sizeof q);
        memcpy(v, v1, sizeof v);
    }
    (void)nv;
    /* the servos did work: the joints moved far from where they started */
    ck_assert_msg(moved > 0.1, "the joints hardly moved (%g)", moved);
    sid_workspace_free(ws);
    sid_model_free(m);
    sid_free(theta);
    mj_deleteData(md);
    mj_deleteModel(mm);
    return worst;
}

static double mujoco_agreement(const char *xml)
{
    return mujoco_agreement_of(xml, SID_EULER, NULL);
}

/* Same model, same numbers, so only rounding differs: a few hundred operations a step on numbers
 * of order one, 2000 steps of a stable closed loop, ~1e-13; 1e-9 rad (the issue's) is the bound. */
START_TEST(servo_matches_mujoco)
{
    const double pend = mujoco_agreement(PENDULUM), chain = mujoco_agreement(CHAIN);
    fprintf(stderr, "servo vs MuJoCo 2.2.2, 2 s at 1 ms: pendulum %.2e rad, 4-dof chain %.2e (rad or m)\n", pend, chain);
    ck_assert_msg(pend <= 1e-9, "pendulum: %g", pend);
    ck_assert_msg(chain <= 1e-9, "chain: %g", chain);
}
END_TEST

/* ---- implicitfast ---------------------------------------------------------------------------- */

/* The PD pendulum again, at 2 ms, with MuJoCo 2.2.2's `implicit` integrator (its damping, the
 * servo's kv and the Coriolis terms implicit): a single hinge has no Coriolis terms, so implicit
 * and implicitfast are the same method there. */
static const char PENDULUM_IMPLICIT[] =
    "<mujoco model='servo_pendulum'>\n"
    "  <compiler angle='radian'/>\n"
    "  <option timestep='0.002' integrator='implicit'/>\n"
    "  <worldbody>\n"
    "    <body name='arm' pos='0 0 1'>\n"
    "      <joint name='hinge' type='hinge' axis='0 1 0' damping='0.05' armature='0.01'/>\n"
    "      <inertial pos='0.2 0 0' mass='0.8' diaginertia='0.004 0.012 0.011'/>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "  <actuator>\n"
    "    <general name='pd' joint='hinge' gainprm='20' biastype='affine' biasprm='0 -20 -0.8'/>\n"
    "  </actuator>\n"
    "</mujoco>\n";

/* A 3-dof arm (two crossed hinges and a slide: Coriolis terms that implicit would take and
 * implicitfast does not) on PD <general> actuators, gears 1, 2, 1; %s: the integrator, %g: the
 * joints' damping and the servos' kd (biasprm's third). */
static void pd_arm(char *xml, size_t n, const char *integ, const double damping[3], const double kd[3])
{
    snprintf(xml, n,
             "<mujoco model='pd_arm'>\n"
             "  <compiler angle='radian'/>\n"
             "  <option timestep='0.002' integrator='%s'/>\n"
             "  <worldbody>\n"
             "    <body name='l1' pos='0 0 1'>\n"
             "      <joint name='j1' type='hinge' axis='0 0 1' damping='%.17g' armature='0.02'/>\n"
             "      <inertial pos='0.1 0.02 0' mass='1.2' diaginertia='0.01 0.02 0.015'/>\n"
             "      <body name='l2' pos='0.25 0 0'>\n"
             "        <joint name='j2' type='hinge' axis='0 1 0' damping='%.17g' armature='0.01'/>\n"
             "        <inertial pos='0.12 0 -0.01' mass='0.9' diaginertia='0.006 0.011 0.009'/>\n"
             "        <body name='l3' pos='0.24 0 0'>\n"
             "          <joint name='j3' type='slide' axis='1 0 0' damping='%.17g' armature='0.05'/>\n"
             "          <inertial pos='0.05 0 0' mass='0.4' diaginertia='0.001 0.002 0.002'/>\n"
             "        </body>\n"
             "      </body>\n"
             "    </body>\n"
             "  </worldbody>\n"
             "  <actuator>\n"
             "    <general name='a1' joint='j1' gainprm='30' biastype='affine' biasprm='0 -30 %.17g'/>\n"
             "    <general name='a2' joint='j2' gear='2' gainprm='15' biastype='affine' biasprm='0 -15 %.17g'/>\n"
             "    <general name='a3' joint='j3' gainprm='200' biastype='affine' biasprm='0 -200 %.17g'/>\n"
             "  </actuator>\n"
             "</mujoco>\n",
             integ, damping[0], damping[1], damping[2], -kd[0], -kd[1], -kd[2]);
}

/* implicitfast against MuJoCo 2.2.2, which has no implicitfast: on one hinge against its
 * `implicit` (the same method there); on the arm against its derivation, since the servo's
 * -kd G^2 v moved into the joint's damping makes MuJoCo's Euler (implicit in damping) take
 * exactly implicitfast's step: the arm with damping d and kd against MuJoCo's Euler on the arm
 * with damping d + G^2 kd and kd 0. Only rounding differs: 1e-9 as servo_matches_mujoco. */
START_TEST(implicitfast_matches_mujoco)
{
    const double pend = mujoco_agreement_of(PENDULUM_IMPLICIT, SID_IMPLICITFAST, NULL);
    const double d[3] = {0.1, 0.05, 0.5}, kd[3] = {2, 1, 5}, G[3] = {1, 2, 1}, none[3] = {0, 0, 0};
    double moved[3];
    for (int k = 0; k < 3; k++) moved[k] = d[k] + G[k] * G[k] * kd[k];
    char ours[4096], theirs[4096];
    pd_arm(ours, sizeof ours, "Euler", d, kd);
    pd_arm(theirs, sizeof theirs, "Euler", moved, none);
    const double arm = mujoco_agreement_of(ours, SID_IMPLICITFAST, theirs);
    /* and the two methods differ on the arm: the comparison has something to see */
    const double euler_gap = mujoco_agreement_of(ours, SID_EULER, theirs);
    fprintf(stderr, "implicitfast vs MuJoCo 2.2.2, 2 s at 2 ms: pendulum vs implicit %.2e rad, 3-dof arm vs Euler with "
            "the servos' kd moved into damping %.2e (euler instead: %.2e)\n", pend, arm, euler_gap);
    ck_assert_msg(pend <= 1e-9, "pendulum: %g", pend);
    ck_assert_msg(arm <= 1e-9, "arm: %g", arm);
    ck_assert_msg(euler_gap > 1e-4, "euler and implicitfast agree to %g on the arm", euler_gap);
}
END_TEST

/* Why a robot file asks for implicitfast: stiff servos at the file's own step. The arm with
 * kd = 400, 60, 1000 at 2 ms: explicit in kd, Euler's damping step h G^2 kd / I exceeds 2 and
 * the arm diverges; implicitfast holds it (heavily damped, it moves slowly: within 2 of its
 * start). */
START_TEST(implicitfast_holds_stiff_servos)
{
    const double d[3] = {0.1, 0.05, 0.5}, kd[3] = {400, 60, 1000};
    char xml[4096], path[64];
    pd_arm(xml, sizeof xml, "Euler", d, kd);
    write_temp(xml, path);
    double *theta;
    sid_model *m = import_model(path, xml, &theta);
    unlink(path);
    sid_workspace *ws = sid_workspace_create(m);
    const int nv = sid_model_nv(m);
    double worst[2] = {0, 0};
    int diverged[2] = {0, 0};
    for (int pass = 0; pass < 2; pass++) {
        const sid_integrator integ = pass ? SID_IMPLICITFAST : SID_EULER;
        double q[8] = {0.3, -0.2, 0.05}, v[8] = {0}, u[8], q1[8], v1[8];
        sid_error err = {0};
        for (int it = 0; it < 1000 && !diverged[pass]; it++) {
            for (int k = 0; k < nv; k++) u[k] = reference(k, it * 2e-3);
            if (sid_step(m, theta, ws, integ, 2e-3, q, v, u, q1, v1, &err) != SID_OK) diverged[pass] = 1;
            for (int k = 0; k < nv && !diverged[pass]; k++) {
                if (fabs(q1[k]) > 100) diverged[pass] = 1;
                worst[pass] = fmax(worst[pass], fabs(q1[k] - q[k]));
            }
            memcpy(q, q1, sizeof q);
            memcpy(v, v1, sizeof v);
        }
    }
    fprintf(stderr, "stiff servos at 2 ms: euler %s, implicitfast %s (largest move in a step %.2e)\n",
            diverged[0] ? "diverges" : "holds", diverged[1] ? "diverges" : "holds", worst[1]);
    ck_assert_msg(diverged[0], "euler held the stiff servos: the test is not stiff");
    ck_assert_msg(!diverged[1], "implicitfast diverged");
    ck_assert_msg(worst[1] < 0.01, "implicitfast: a step moves a joint by %g", worst[1]);
    sid_workspace_free(ws);
    sid_model_free(m);
    sid_free(theta);
}
END_TEST

/* ---- MJCF import and export of servos -------------------------------------------------------- */

/* The robot.json description an MJCF text imports to. */
static void import_desc(const char *xml, sid_robot_desc *d)
{
    char path[64], *json = NULL;
    sid_error err = {0};
    write_temp(xml, path);
    const int q = cli_quiet;
    cli_quiet = 1;
    ck_assert_msg(mjcf_import(path, xml, strlen(xml), &json, &err) == 0, "%s", err.msg);
    cli_quiet = q;
    ck_assert_msg(robot_json_parse(path, json, strlen(json), d, NULL, &err) == 0, "%s", err.msg);
    unlink(path);
    free(json);
}

static const sid_joint_desc *joint_named(const sid_robot_desc *d, const char *name)
{
    for (int j = 0; j < d->njoint; j++)
        if (!strcmp(d->joint[j].name, name)) return &d->joint[j];
    ck_abort_msg("no joint %s", name);
    return NULL;
}

/* A limited forcerange, and actuators that are no PD: a <general> whose bias is not -gain, one
 * with dynamics, an <intvelocity>. */
static const char LIMITED[] =
    "<mujoco model='servo_limited'>\n"
    "  <compiler angle='radian' autolimits='true'/>\n"
    "  <worldbody>\n"
    "    <body name='a' pos='0 0 1'>\n"
    "      <joint name='ja' type='hinge' axis='0 1 0'/>\n"
    "      <inertial pos='0.2 0 0' mass='1' diaginertia='0.01 0.01 0.01'/>\n"
    "      <body name='b' pos='0.3 0 0'>\n"
    "        <joint name='jb' type='hinge' axis='0 1 0'/>\n"
    "        <inertial pos='0.2 0 0' mass='1' diaginertia='0.01 0.01 0.01'/>\n"
    "        <body name='c' pos='0.3 0 0'>\n"
    "          <joint name='jc' type='hinge' axis='0 1 0'/>\n"
    "          <inertial pos='0.2 0 0' mass='1' diaginertia='0.01 0.01 0.01'/>\n"
    "          <body name='e' pos='0.3 0 0'>\n"
    "            <joint name='je' type='hinge' axis='0 1 0'/>\n"
    "            <inertial pos='0.2 0 0' mass='1' diaginertia='0.01 0.01 0.01'/>\n"
    "          </body>\n"
    "        </body>\n"
    "      </body>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "  <actuator>\n"
    "    <position name='pa' joint='ja' kp='10' forcerange='-3 3'/>\n"
    "    <general name='gb' joint='jb' gainprm='10' biastype='affine' biasprm='0 -5 0'/>\n"
    "    <general name='gc' joint='jc' dyntype='filter' gainprm='10' biastype='affine' biasprm='0 -10 0'/>\n"
    "    <intvelocity name='ie' joint='je' kp='10'/>\n"
    "  </actuator>\n"
    "</mujoco>\n";

START_TEST(servo_mjcf_import)
{
    sid_robot_desc d;
    import_desc(CHAIN, &d);
    const sid_joint_desc *j1 = joint_named(&d, "j1"), *j2 = joint_named(&d, "j2"), *j3 = joint_named(&d, "j3"),
                         *j4 = joint_named(&d, "j4");
    ck_assert(j1->motor == SID_MOTOR_POSITION && j1->kp == 30 && j1->kd == 2 && j1->gear == 1 && !j1->has_servo_limit);
    ck_assert(j2->motor == SID_MOTOR_POSITION && j2->kp == 15 && j2->kd == 0 && j2->gear == 2);
    ck_assert(j3->motor == SID_MOTOR_POSITION && j3->kp == 200 && j3->type == SID_JOINT_PRISMATIC);
    ck_assert(j4->motor == SID_MOTOR_VELOCITY && j4->kd == 1.5 && j4->gear == 1.5);
    robot_desc_free(&d);
    import_desc(PENDULUM, &d);   /* <position> + <velocity>: one PD */
    ck_assert(d.joint[0].motor == SID_MOTOR_POSITION && d.joint[0].kp == 20 && d.joint[0].kd == 0.8);
    robot_desc_free(&d);
    import_desc(LIMITED, &d);
    const sid_joint_desc *ja = joint_named(&d, "ja");
    ck_assert(ja->motor == SID_MOTOR_POSITION && ja->kp == 10 && ja->has_servo_limit && ja->servo_limit == 3);
    ck_assert_int_eq(joint_named(&d, "jb")->motor, SID_MOTOR_NONE);
    ck_assert_int_eq(joint_named(&d, "jc")->motor, SID_MOTOR_NONE);
    ck_assert_int_eq(joint_named(&d, "je")->motor, SID_MOTOR_NONE);
    robot_desc_free(&d);
}
END_TEST

/* Fitted gains and limits written back (mjcf_export) read back to the bit, and MuJoCo's compile of
 * the exported file agrees with our model of it (servo_matches_mujoco's measure): the export
 * writes what MuJoCo reads as those gains. */
static void export_round_trip(const char *xml, int mujoco)
{
    sid_robot_desc d, r;
    import_desc(xml, &d);
    int nchanged = 0;
    for (int j = 0; j < d.njoint; j++) {
        sid_joint_desc *jd = &d.joint[j];
        if (jd->motor != SID_MOTOR_POSITION && jd->motor != SID_MOTOR_VELOCITY) continue;
        if (jd->motor == SID_MOTOR_POSITION) jd->kp *= 1.25, nchanged++;
        if (jd->kd != 0 || jd->motor == SID_MOTOR_VELOCITY) jd->kd *= 1.5, nchanged++;
        if (jd->has_servo_limit) jd->servo_limit *= 2, nchanged++;
    }
    ck_assert_int_ge(nchanged, 2);
    char path[64], *out = NULL;
    size_t outlen;
    sid_error err = {0};
    write_temp(xml, path);
    const int q = cli_quiet;
    cli_quiet = 1;
    ck_assert_msg(mjcf_export(path, xml, strlen(xml), &d, &out, &outlen, &err) == 0, "%s", err.msg);
    cli_quiet = q;
    unlink(path);
    import_desc(out, &r);
    for (int j = 0; j < d.njoint; j++) {
        const sid_joint_desc *a = &d.joint[j], *b = joint_named(&r, a->name);
        ck_assert_msg(a->motor == b->motor && a->kp == b->kp && a->kd == b->kd && a->has_servo_limit == b->has_servo_limit &&
                          (!a->has_servo_limit || a->servo_limit == b->servo_limit),
                      "%s: kp %.17g/%.17g kd %.17g/%.17g limit %.17g/%.17g", a->name, a->kp, b->kp, a->kd, b->kd,
                      a->servo_limit, b->servo_limit);
    }
    /* (MuJoCo clamps at a forcerange where we saturate smoothly: no agreement to hold there) */
    const double agree = mujoco ? mujoco_agreement(out) : 0;
    fprintf(stderr, "servo export: %d values written and read back to the bit; MuJoCo on the exported file %.2e\n",
            nchanged, agree);
    ck_assert_msg(agree <= 1e-9, "MuJoCo on the exported file: %g", agree);
    robot_desc_free(&d);
    robot_desc_free(&r);
    free(out);
}

START_TEST(servo_mjcf_export)
{
    export_round_trip(CHAIN, 1);
    export_round_trip(PENDULUM, 1);
    export_round_trip(LIMITED, 0);
}
END_TEST

/* ---- recovery from MuJoCo's logs ------------------------------------------------------------- */

/* data/arm7's robot with a position servo on every joint (gear 1, no limit): nominal gains. */
static const double KP[7] = {300, 300, 100, 100, 30, 20, 10}, KD[7] = {20, 20, 5, 5, 1, 0.6, 0.3};
static const double Q0[7] = {0.3, -2.9, 2.3, -1.6, 2.1, 2.4, -0.7}, AMP[7] = {0.3, 0.6, 1, 0.4, 0.3, 0.2, 0.1};

static sid_model *servo_arm(double **theta)
{
    sid_robot_desc d;
    sid_error err = {0};
    ck_assert_msg(robot_json_load("../data/arm7/robot.json", &d, NULL, &err) == 0, "%s", err.msg);
    for (int j = 0; j < d.njoint; j++) {
        sid_joint_desc *jd = &d.joint[j];
        ck_assert_int_ne(jd->motor, SID_MOTOR_NONE);
        jd->motor = SID_MOTOR_POSITION, jd->gear = 1, jd->kp = KP[j], jd->kd = KD[j];
    }
    sid_model *m;
    ck_assert_msg(sid_model_create(&m, theta, &d, &err) == SID_OK, "%s", err.msg);
    robot_desc_free(&d);
    return m;
}

/* A log MuJoCo makes of the arm at truth: data/arm7/model.xml with its motors turned into PD
 * servos (gain kp, bias 0 -kp -kd, gear 1) and the truth's masses, damping and armature; the
 * references sines about Q0 held over each 2 ms sample, 1 ms Euler steps; from the log's first
 * sample at rest at the reference. */
static sid_traj *mujoco_arm_log(const sid_model *m, const double *truth, int n, unsigned seed)
{
    char errbuf[1000] = "";
    mjModel *mm = mj_loadXML("../data/arm7/model.xml", NULL, errbuf, sizeof errbuf);
    ck_assert_msg(mm != NULL, "MuJoCo: %s", errbuf);
    ck_assert(fabs(mm->opt.timestep - 1e-3) < 1e-15 && mm->opt.integrator == mjINT_EULER);
    const int nd = sid_model_ndof_joints(m);
    ck_assert_int_eq(mm->nu, nd);
    char name[96];
    int qadr[7], dadr[7];
    for (int i = 0; i < sid_model_nparam(m); i++) {
        const sid_param_info *p = sid_model_param(m, i);
        if (p->kind != SID_P_MASS) continue;
        snprintf(name, sizeof name, "%.*s", (int)(strlen(p->name) - strlen("links..mass")), p->name + strlen("links."));
        const int b = mj_name2id(mm, mjOBJ_BODY, name);
        ck_assert_int_ge(b, 0);
        mm->body_mass[b] = truth[i];   /* the inertia about the COM stays, as ours does */
    }
    for (int k = 0; k < nd; k++) {
        const char *jn = sid_model_dof_joint_name(m, k);
        const int j = mj_name2id(mm, mjOBJ_JOINT, jn), a = mj_name2id(mm, mjOBJ_ACTUATOR, jn);
        ck_assert(j >= 0 && a >= 0 && mm->actuator_trnid[2 * a] == j);
        qadr[k] = mm->jnt_qposadr[j], dadr[k] = mm->jnt_dofadr[j];
        snprintf(name, sizeof name, "joints.%s.friction.viscous", jn);
        mm->dof_damping[dadr[k]] = truth[sid_model_param_find(m, name)];
        snprintf(name, sizeof name, "joints.%s.armature", jn);
        mm->dof_armature[dadr[k]] = truth[sid_model_param_find(m, name)];
        snprintf(name, sizeof name, "joints.%s.motor.kp", jn);
        const double kp = truth[sid_model_param_find(m, name)];
        snprintf(name, sizeof name, "joints.%s.motor.kd", jn);
        const double kd = truth[sid_model_param_find(m, name)];
        mm->actuator_gaintype[a] = mjGAIN_FIXED, mm->actuator_biastype[a] = mjBIAS_AFFINE;
        for (int c = 0; c < mjNGAIN; c++) mm->actuator_gainprm[a * mjNGAIN + c] = 0;
        for (int c = 0; c < mjNBIAS; c++) mm->actuator_biasprm[a * mjNBIAS + c] = 0;
        mm->actuator_gainprm[a * mjNGAIN] = kp;
        mm->actuator_biasprm[a * mjNBIAS + 1] = -kp, mm->actuator_biasprm[a * mjNBIAS + 2] = -kd;
        for (int c = 0; c < 6; c++) mm->actuator_gear[6 * a + c] = c == 0;
    }
    mjData *md = mj_makeData(mm);
    unsigned s = seed;
    double freq[7][3], phase[7][3];
    for (int k = 0; k < nd; k++)
        for (int c = 0; c < 3; c++) freq[k][c] = tu_uniform(&s, 0.2, 2.5), phase[k][c] = tu_uniform(&s, 0, 6.28);
    sid_traj *tr = sid_traj_create(n, sid_model_nq(m), sid_model_nv(m), 1);
    const double dt = 2e-3;
    for (int k = 0; k < nd; k++) md->qpos[qadr[k]] = Q0[k];
    for (int r = 0; r < n; r++) {
        const double t = r * dt;
        tr->t[r] = t;
        for (int k = 0; k < nd; k++) {
            double ref = Q0[k];
            for (int c = 0; c < 3; c++) ref += AMP[k] / 3 * (sin(2 * 3.14159265358979323846 * freq[k][c] * t + phase[k][c]) - sin(phase[k][c]));
            md->ctrl[k] = ref;   /* actuator k is joint k's (checked above) */
            tr->q[r * tr->nq + sid_model_dof_joint_qadr(m, k)] = md->qpos[qadr[k]];
            tr->qd[r * tr->nv + sid_model_dof_joint_vadr(m, k)] = md->qvel[dadr[k]];
            tr->u[r * tr->nv + sid_model_dof_joint_vadr(m, k)] = ref;
        }
        for (int sub = 0; sub < 2; sub++) mj_step(mm, md);
    }
    mj_deleteData(md);
    mj_deleteModel(mm);
    return tr;
}

/* Fit kp, kd, masses, viscous friction and armature from nominal to MuJoCo's logs of the truth
 * (each 10-30 % off nominal; link1's mass stays at nominal and is not fitted: j1 is vertical,
 * so only the inertia about it, armature included, reaches the data, as test_recovery.c finds).
 * Returns the largest relative error of what the data determine: masses, kp, and each joint's
 * viscous + kd and armature + h viscous (see below). */
static double servo_recover(double noise, unsigned seed)
{
    double *theta;
    sid_model *m = servo_arm(&theta);
    const int np = sid_model_nparam(m), nx = sid_model_nq(m) + sid_model_nv(m);
    static const char *const globs[] = {"joints.*.motor.kp", "joints.*.motor.kd", "links.*.mass",
                                        "joints.*.friction.viscous", "joints.*.armature"};
    int *mask = calloc((size_t)np, sizeof(int)), idx[SID_MAX_FREE], n = 0;
    for (int g = 0; g < 5; g++) sid_model_param_match(m, globs[g], mask);
    mask[sid_model_param_find(m, "links.link1.mass")] = 0;
    double *truth = malloc(sizeof(double) * (size_t)np), *nominal = malloc(sizeof(double) * (size_t)np);
    double lo[SID_MAX_FREE], hi[SID_MAX_FREE];
    char name[96];
    memcpy(truth, theta, sizeof(double) * (size_t)np);
    memcpy(nominal, theta, sizeof(double) * (size_t)np);
    unsigned s = seed;
    for (int i = 0; i < np; i++) {
        if (!mask[i]) continue;
        const double f = tu_uniform(&s, 0.1, 0.3);
        truth[i] = theta[i] * (tu_uniform(&s, 0, 1) < 0.5 ? 1 + f : 1 - f);
        idx[n] = i, lo[n] = 0.1 * theta[i], hi[n] = 10 * theta[i];
        n++;
    }
    sid_traj *logs[2] = {mujoco_arm_log(m, truth, 1001, seed + 1), mujoco_arm_log(m, truth, 1001, seed + 2)};
    if (noise > 0) {
        tu_add_noise(logs[0], 1e-3 * noise, 1e-2 * noise, seed + 3);
        tu_add_noise(logs[1], 1e-3 * noise, 1e-2 * noise, seed + 4);
    }
    sid_loss_opts o;
    sid_loss_opts_defaults(&o);
    o.window = 0.2;
    o.estimate_start = 1;
    o.sim.integrator = SID_EULER;
    o.sim.substeps = 2;   /* MuJoCo's 1 ms steps */
    sid_problem *p;
    sid_error err = {0};
    ck_assert_msg(sid_problem_create(&p, m, (const sid_traj *const *)logs, 2, &o, &err) == SID_OK, "%s", err.msg);
    double *x0 = malloc(sizeof(double) * (size_t)(sid_problem_nwindows(p) * nx));
    sid_problem_start_states(p, theta, x0);
    sid_fit_opts fo;
    sid_fit_opts_defaults(&fo);
    fo.nfree = n, fo.idx = idx, fo.lo = lo, fo.hi = hi;
    fo.ftol_rel = 1e-15;
    sid_fit_result res;
    ck_assert_msg(sid_fit(p, theta, x0, &fo, &res, &err) == SID_OK, "%s", err.msg);
    fprintf(stderr, "servo recovery (MuJoCo logs) noise %g: loss %.3e -> %.3e, %d iterations, %s\n", noise, res.loss0,
            res.loss, res.iterations, res.message);
    /* A servo's kd and the joint's viscous friction are one torque, -(viscous + G^2 kd) qd, and
     * under Euler's implicit damping (M + armature + h viscous) a = ... an armature shift of
     * -h viscous completes the exchange: (viscous + e, kd - e, armature - h e) moves nothing, so
     * the data fix viscous + kd and armature + h viscous of each joint (G = 1 here), not the three. */
    double worst = 0;
    for (int k = 0; k < n; k++) {
        const int i = idx[k];
        const sid_param_info *pi = sid_model_param(m, i);
        const double e = fabs(theta[i] - truth[i]) / fabs(truth[i]);
        fprintf(stderr, "  %-30s nominal %10.6g truth %10.6g fitted %10.6g error %8.2e%%%s\n", pi->name, nominal[i],
                truth[i], theta[i], 100 * e,
                pi->kind == SID_P_KD || pi->kind == SID_P_VISCOUS || pi->kind == SID_P_ARMATURE ? "  (in a pair below)" : "");
        if (pi->kind == SID_P_MASS || pi->kind == SID_P_KP) worst = fmax(worst, e);
    }
    const double h = 1e-3;
    for (int k = 0; k < sid_model_ndof_joints(m); k++) {
        const char *jn = sid_model_dof_joint_name(m, k);
        int ib, ikd, ia;
        snprintf(name, sizeof name, "joints.%s.friction.viscous", jn), ib = sid_model_param_find(m, name);
        snprintf(name, sizeof name, "joints.%s.motor.kd", jn), ikd = sid_model_param_find(m, name);
        snprintf(name, sizeof name, "joints.%s.armature", jn), ia = sid_model_param_find(m, name);
        const double d_true = truth[ib] + truth[ikd], d_fit = theta[ib] + theta[ikd];
        const double a_true = truth[ia] + h * truth[ib], a_fit = theta[ia] + h * theta[ib];
        const double ed = fabs(d_fit - d_true) / d_true, ea = fabs(a_fit - a_true) / a_true;
        fprintf(stderr, "  %-4s viscous + kd: truth %10.6g fitted %10.6g error %8.2e%%; armature + h viscous: truth "
                "%10.6g fitted %10.6g error %8.2e%%\n", jn, d_true, d_fit, 100 * ed, a_true, a_fit, 100 * ea);
        worst = fmax(worst, fmax(ed, ea));
    }
    if (noise == 0)
        ck_assert_msg(res.loss <= 1e-12 * res.loss0, "loss fell only to %g of %g", res.loss / res.loss0, res.loss0);
    free(x0);
    sid_problem_free(p);
    sid_traj_free(logs[0]);
    sid_traj_free(logs[1]);
    free(truth);
    free(nominal);
    free(mask);
    sid_model_free(m);
    sid_free(theta);
    return worst;
}

/* Noise-free: MuJoCo and sysid are the same model (servo_matches_mujoco), so the truth is
 * found to the optimizer's tolerance; measured 1.9e-7. */
START_TEST(servo_recovery_clean)
{
    const double e = servo_recover(0, 41);
    fprintf(stderr, "servo recovery, noise-free: worst relative error %.2e\n", e);
    ck_assert_msg(e <= 1e-6, "worst relative error %g", e);
}
END_TEST

/* Noisy: measured 2.8 % at worst (j7's armature + h viscous; masses to 2.5 %, kp 1.2 %); the
 * bound leaves the noise's own spread some room. */
START_TEST(servo_recovery_noisy)
{
    const double e = servo_recover(1, 41);
    fprintf(stderr, "servo recovery, noisy (1e-3 rad, 1e-2 rad/s): worst relative error %.2e\n", e);
    ck_assert_msg(e <= 0.05, "worst relative error %g", e);
}
END_TEST

Suite *servo_suite(void)
{
    Suite *s = suite_create("servo");
    TCase *tc = tcase_create("gradients");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, servo_step_vjp_matches_fd);
    tcase_add_test(tc, servo_jvp_matches_vjp);
    tcase_add_test(tc, servo_loss_gradient);
    suite_add_tcase(s, tc);
    TCase *tm = tcase_create("mujoco");
    tcase_set_timeout(tm, 60);
    tcase_add_test(tm, servo_matches_mujoco);
    tcase_add_test(tm, implicitfast_matches_mujoco);
    tcase_add_test(tm, implicitfast_holds_stiff_servos);
    tcase_add_test(tm, servo_mjcf_import);
    tcase_add_test(tm, servo_mjcf_export);
    suite_add_tcase(s, tm);
    TCase *tr = tcase_create("recovery");
    tcase_set_tags(tr, "slow");   /* numerics, not memory: `make debug` leaves them out */
    tcase_set_timeout(tr, 300);
    tcase_add_test(tr, servo_recovery_clean);
    tcase_add_test(tr, servo_recovery_noisy);
    suite_add_tcase(s, tr);
    return s;
}
