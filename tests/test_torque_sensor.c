/* test_torque_sensor.c — joint torque sensors (core/problem/torque_sensor.h): tau_link and the
 * acceleration against MuJoCo's mj_forward qacc and mj_rne (links only) on data/double_pendulum's
 * twin; the loss's adjoint gradient and the forward-mode residual Jacobian with tau rows
 * against central differences for every parameter of a random 3-joint robot (friction, motors,
 * offsets, prismatic joints) and the sensors' gain and bias; rows only where robot.json gives a
 * torque_sensor; weight 0 changes nothing; recovery: motion alone leaves the scale of masses,
 * inertias, armature, damping and motor constants undetermined (a null direction of J^T J),
 * the sensors fix it and a fit recovers gain 1.1, bias 0.05 and a mass started 30 % off. */
#include <check.h>
#include <math.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "robot_json.h"
#include "robot_load.h"
#include "sid_internal.h"
#include "test_util.h"
#include "torque_sensor.h"

Suite *torque_sensor_suite(void);

#define ROBOT "../data/double_pendulum/robot.json"
#define DT 1e-3

/* data/double_pendulum; sensors (gain, bias) on the joints whose has[] is 1. */
static sid_model *dp_model(const int has[2], const double gain[2], const double bias[2], double **theta)
{
    sid_robot_desc d;
    sid_error err = {0};
    memset(&d, 0, sizeof d);
    ck_assert_msg(robot_load(ROBOT, &d, NULL, NULL, &err) == 0, "%s", err.msg);
    for (int j = 0; j < 2; j++) {
        d.joint[j].has_torque_sensor = has[j];
        d.joint[j].sensor_gain = gain[j];
        d.joint[j].sensor_bias = bias[j];
    }
    sid_model *m;
    ck_assert_msg(sid_model_create(&m, theta, &d, &err) == SID_OK, "%s", err.msg);
    robot_desc_free(&d);
    return m;
}

/* Give tr tau columns on every dof: what sensors with gain g and bias b (1, 0 where no
 * sensor) read of tau_link at the logged state (noise-free logs: the simulated state). */
static void add_tau(const sid_model *m, const double *theta, sid_traj *tr)
{
    const int nq = m->nq, nv = m->nv;
    sid_workspace *ws = sid_workspace_create(m);
    double a[64], tau[64], x[128];
    sid_error err = {0};
    tr->tau = sid_alloc(sizeof(double) * (size_t)(tr->n * nv));
    tr->tau_has = sid_alloc(sizeof(int) * (size_t)nv);
    for (int i = 0; i < nv; i++) tr->tau_has[i] = 1;
    for (int k = 0; k < tr->n; k++) {
        sid_traj_state_q(m, theta, tr, k, x);
        sid_traj_velocity(m, tr, k, x + nq);
        ck_assert_msg(sid_tau_link(&(sid_fd_point){m, theta, ws, NULL, x, x + nq, tr->u + (size_t)k * (size_t)nv, 0, 0}, a, tau, &err) == SID_OK,
                      "%s", err.msg);
        for (int b = 1; b < m->nbody; b++) {
            const sid_body *bd = &m->body[b];
            if (bd->vadr < 0) continue;
            const double g = bd->p_sensor >= 0 ? theta[bd->p_sensor + P_SENSOR_GAIN] : 1;
            const double c = bd->p_sensor >= 0 ? theta[bd->p_sensor + P_SENSOR_BIAS] : 0;
            tr->tau[(size_t)k * (size_t)nv + (size_t)bd->vadr] = g * tau[bd->vadr] + c;
        }
    }
    sid_workspace_free(ws);
}

/* tau_link = M a + c of the links, a = the plain forward dynamics: MuJoCo's mj_forward qacc and
 * mj_rne (flg_acc 1: M without armature, as this definition) on the twin, at 20 random states
 * and commands: agreement to 1e-10 (rounding of two different solvers on torques of ~10 N m). */
START_TEST(tau_link_matches_mujoco)
{
    const int has[2] = {0, 0};
    const double one[2] = {1, 1}, zero[2] = {0, 0};
    double *theta;
    sid_model *m = dp_model(has, one, zero, &theta);
    char errstr[1000] = "";
    mjModel *mm = mj_loadXML("../data/double_pendulum/model.xml", NULL, errstr, sizeof errstr);
    ck_assert_msg(mm != NULL, "%s", errstr);
    mjData *md = mj_makeData(mm);
    sid_workspace *ws = sid_workspace_create(m);
    unsigned st = 7;
    double worst_a = 0, worst_t = 0, big = 0;
    sid_error err = {0};
    for (int trial = 0; trial < 20; trial++) {
        double q[2], v[2], u[2], a[2], tau[2], res[2];
        for (int i = 0; i < 2; i++) {
            q[i] = tu_uniform(&st, -3, 3), v[i] = tu_uniform(&st, -4, 4), u[i] = tu_uniform(&st, -5, 5);
            md->qpos[i] = q[i], md->qvel[i] = v[i];
        }
        /* the twin's elbow motor has gear 0.5 = robot.json's gear 10 x kt 0.05 (current u) */
        md->ctrl[0] = u[0], md->ctrl[1] = u[1];
        mj_forward(mm, md);
        mj_rne(mm, md, 1, res);
        ck_assert_int_eq(sid_tau_link(&(sid_fd_point){m, theta, ws, NULL, q, v, u, 0, 0}, a, tau, &err), SID_OK);
        for (int i = 0; i < 2; i++) {
            worst_a = fmax(worst_a, fabs(a[i] - md->qacc[i]));
            worst_t = fmax(worst_t, fabs(tau[i] - res[i]));
            big = fmax(big, fabs(res[i]));
        }
    }
    fprintf(stderr, "torque sensor: tau_link vs MuJoCo mj_rne at 20 states: max|dtau| %.2e N m (|tau| up to %.3g), "
                    "max|da| %.2e rad/s^2\n", worst_t, big, worst_a);
    ck_assert_msg(worst_t < 1e-10 && worst_a < 1e-9, "dtau %g, da %g", worst_t, worst_a);
    ck_assert_msg(big > 1, "torques too small to compare (%g)", big);
    sid_workspace_free(ws);
    mj_deleteData(md);
    mj_deleteModel(mm);
    sid_model_free(m);
    sid_free(theta);
}
END_TEST

/* Rows only where given; a weight of 0 (the default) scores nothing: the same loss and gradient
 * to the bit as a log without tau columns. */
START_TEST(rows_where_given_and_weight_zero)
{
    const int none[2] = {0, 0}, one_s[2] = {1, 0};
    const double g[2] = {1.1, 1}, b[2] = {0.05, 0};
    double *th0, *th1;
    sid_model *m0 = dp_model(none, g, b, &th0), *m1 = dp_model(one_s, g, b, &th1);
    ck_assert_int_eq(sid_model_nparam(m1), sid_model_nparam(m0) + 2);
    ck_assert(sid_model_param_find(m1, "joints.shoulder.torque_sensor.gain") >= 0);
    ck_assert(sid_model_param_find(m1, "joints.shoulder.torque_sensor.bias") >= 0);
    ck_assert(sid_model_param_find(m1, "joints.elbow.torque_sensor.gain") < 0);
    sid_traj *tr = tu_synth_log(m0, th0, 300, DT, 1.0, 5), *tt = tu_synth_log(m0, th0, 300, DT, 1.0, 5);
    add_tau(m1, th1, tt);
    sid_loss_opts lo;
    sid_loss_opts_defaults(&lo);
    lo.window = 0.1, lo.threads = 1, lo.sim.substeps = 2;
    const sid_traj *l0[1] = {tr}, *l1[1] = {tt};
    sid_problem *p0, *p1;
    sid_error err = {0};
    ck_assert(sid_problem_create(&p0, m0, l0, 1, &lo, &err) == SID_OK);
    ck_assert(sid_problem_create(&p1, m0, l1, 1, &lo, &err) == SID_OK);
    ck_assert_int_eq(sid_problem_nresiduals(p0), sid_problem_nresiduals(p1));
    const int np = sid_model_nparam(m0);
    double L0, L1, *g0 = calloc((size_t)np, sizeof(double)), *g1 = calloc((size_t)np, sizeof(double));
    ck_assert(sid_problem_loss(p0, th0, NULL, &L0, g0, NULL, &err) == SID_OK);
    ck_assert(sid_problem_loss(p1, th0, NULL, &L1, g1, NULL, &err) == SID_OK);
    ck_assert(L0 == L1);
    ck_assert_int_eq(memcmp(g0, g1, sizeof(double) * (size_t)np), 0);
    sid_problem_free(p1);
    /* a negative weight is an input error */
    lo.weight_tau = -1;
    ck_assert_int_eq(sid_problem_create(&p1, m0, l1, 1, &lo, &err), SID_ERR_INPUT);
    ck_assert_msg(strstr(err.msg, "weight_tau") != NULL, "%s", err.msg);
    free(g0), free(g1), sid_problem_free(p0), sid_traj_free(tr), sid_traj_free(tt);
    sid_model_free(m0), sid_model_free(m1), sid_free(th0), sid_free(th1);
}
END_TEST

/* The loss with tau rows: adjoint gradient and forward-mode (J^T r / nres) against central
 * differences for every parameter of a random robot with sensors on every joint, evaluated away
 * from the truth so that every residual is nonzero. Step 1e-6 max(|theta|, typical): the
 * difference's truncation error is O(step^2) ~ 1e-12 relative and its rounding ~ 1e-16 / 1e-6
 * = 1e-10 of the loss's scale; the tolerance, 1e-6 relative with atol 1e-8 |grad|max (a
 * parameter that barely moves the loss is compared absolutely), leaves room for both. */
static double check_gradient(sid_integrator integ, int substeps, int delayed)
{
    sid_robot_desc *d = tu_random_robot(3, 3, TU_PRISMATIC | TU_FRICTION | TU_MOTORS | TU_OFFSETS);
    for (int j = 0; j < d->njoint; j++) {
        d->joint[j].has_torque_sensor = 1;
        d->joint[j].sensor_gain = 1.0 + 0.1 * j, d->joint[j].sensor_bias = 0.02 * (j - 1);
        /* fractional delays of 2.3 + 4.1 j samples on the motors (no sample boundary within the steps) */
        if (delayed && d->joint[j].motor != SID_MOTOR_NONE) d->joint[j].has_delay = 1, d->joint[j].delay = (2.3 + 4.1 * j) * DT;
    }
    sid_model *m;
    double *tht, *th;
    sid_error err = {0};
    ck_assert_msg(sid_model_create(&m, &tht, d, &err) == SID_OK, "%s", err.msg);
    sid_traj *tr = tu_synth_log(m, tht, 240, DT, 1.0, 17);
    add_tau(m, tht, tr);
    const int np = sid_model_nparam(m);
    th = malloc(sizeof(double) * (size_t)np);
    unsigned st = 99;
    for (int i = 0; i < np; i++) th[i] = tht[i] * (1 + tu_uniform(&st, -0.03, 0.03)) + tu_uniform(&st, -1e-3, 1e-3);
    /* keep strictly positive quantities positive and inertias physical: perturb those only by scale */
    for (int i = 0; i < np; i++) {
        const sid_param_info *pi = sid_model_param(m, i);
        if (pi->kind == SID_P_INERTIA || pi->kind == SID_P_SMOOTHING || pi->kind == SID_P_STRIBECK_VELOCITY ||
            pi->kind == SID_P_MASS || pi->row->range != SID_RANGE_ANY)
            th[i] = tht[i] * (1 + tu_uniform(&st, -0.02, 0.02));
    }
    sid_loss_opts lo;
    sid_loss_opts_defaults(&lo);
    lo.window = 0.06, lo.threads = 1, lo.sim.substeps = substeps, lo.sim.integrator = integ, lo.weight_tau = 1;
    const sid_traj *logs[1] = {tr};
    sid_problem *p;
    ck_assert_msg(sid_problem_create(&p, m, logs, 1, &lo, &err) == SID_OK, "%s", err.msg);
    double L, *g = calloc((size_t)np, sizeof(double)), *fwd = calloc((size_t)np, sizeof(double));
    ck_assert_msg(sid_problem_loss(p, th, NULL, &L, g, NULL, &err) == SID_OK, "%s", err.msg);
    int *idx = malloc(sizeof(int) * (size_t)np);
    for (int i = 0; i < np; i++) idx[i] = i;
    const int nw = sid_problem_nwindows(p), nres = sid_problem_nresiduals(p);
    for (int w = 0; w < nw; w++) {
        const int rows = sid_problem_window_rows(p, w);
        double *r = malloc(sizeof(double) * (size_t)rows), *J = malloc(sizeof(double) * (size_t)rows * (size_t)np);
        ck_assert_msg(sid_problem_window_jacobian(p, th, NULL, w, np, idx, r, J, &err) == SID_OK, "%s", err.msg);
        for (int i = 0; i < rows; i++)
            for (int c = 0; c < np; c++) fwd[c] += r[i] * J[(size_t)i * (size_t)np + (size_t)c] / nres;
        free(r), free(J);
    }
    double gmax = 0, dmax = 0, own_worst = 0;
    for (int i = 0; i < np; i++) gmax = fmax(gmax, fabs(g[i]));
    double worst = 0;
    int worst_i = 0, kinds = 0;
    unsigned seen[64] = {0};
    for (int i = 0; i < np; i++) {
        const sid_param_info *pi = sid_model_param(m, i);
        const double x0 = th[i], e = 1e-6 * fmax(fabs(x0), pi->row->typical);
        double Lp, Lm;
        th[i] = x0 + e;
        ck_assert(sid_problem_loss(p, th, NULL, &Lp, NULL, NULL, &err) == SID_OK);
        th[i] = x0 - e;
        ck_assert(sid_problem_loss(p, th, NULL, &Lm, NULL, NULL, &err) == SID_OK);
        th[i] = x0;
        const double fd = (Lp - Lm) / (2 * e), at = 1e-8 * gmax;
        const double er = fmax(tu_rel_err(g[i], fd, at), tu_rel_err(fwd[i], fd, at));
        if (er > worst) worst = er, worst_i = i;
        dmax = fmax(dmax, fmax(fabs(g[i] - fd), fabs(fwd[i] - fd)) / gmax);
        if (!seen[pi->kind]) seen[pi->kind] = 1, kinds++;
        /* the new rows and the delays by their own size (no atol): each moves the loss enough */
        if (pi->kind == SID_P_SENSOR_GAIN || pi->kind == SID_P_SENSOR_BIAS || pi->kind == SID_P_DELAY) {
            const double own = fmax(tu_rel_err(g[i], fd, 0), tu_rel_err(fwd[i], fd, 0));
            if (own > 1e-6)
                fprintf(stderr, "torque sensor gradient: %s: adjoint %.10g forward %.10g fd %.10g\n", pi->name, g[i], fwd[i], fd);
            ck_assert_msg(own < 1e-6, "%s: relative error %g", pi->name, own);
            own_worst = fmax(own_worst, own);
        }
    }
    fprintf(stderr, "torque sensor gradient (%s, %d substeps%s, %d parameters of %d kinds, loss %.3e): worst relative "
                    "error %.2e (%s: adjoint %.10g forward %.10g), max |error| / max |grad| %.2e; gain, bias%s: %.2e\n",
            integ == SID_EULER ? "euler" : "rk4", substeps, delayed ? ", delays" : "", np, kinds, L, worst,
            sid_model_param(m, worst_i)->name, g[worst_i], fwd[worst_i], dmax, delayed ? ", delay" : "", own_worst);
    ck_assert(seen[SID_P_SENSOR_GAIN] && seen[SID_P_SENSOR_BIAS]);
    ck_assert(!delayed || seen[SID_P_DELAY]);
    free(g), free(fwd), free(idx), free(th);
    sid_problem_free(p), sid_traj_free(tr), sid_model_free(m), sid_free(tht), tu_desc_free(d);
    return worst;
}

START_TEST(gradient_matches_fd)
{
    double worst = fmax(check_gradient(SID_EULER, 1, 0), check_gradient(SID_RK4, 2, 0));
    worst = fmax(worst, check_gradient(SID_EULER, 2, 1));
    fprintf(stderr, "torque sensor gradient: worst relative error %.2e\n", worst);
    ck_assert_msg(worst < 1e-6, "relative error %g", worst);
}
END_TEST

/* The parameters that motion alone scales together: masses and inertias (iyy) of both links,
 * armature, viscous friction and motor constants (every force of this model x s: the same
 * motion). Returns how many; idx receives them. */
static int scale_set(const sid_model *m, int *idx)
{
    int n = 0;
    for (int i = 0; i < sid_model_nparam(m); i++) {
        const sid_param_info *pi = sid_model_param(m, i);
        const sid_param_kind k = pi->kind;
        /* the axes are y: of the inertia tensor only iyy moves anything */
        if (k == SID_P_MASS || (k == SID_P_INERTIA && pi->comp == 1) || k == SID_P_ARMATURE || k == SID_P_VISCOUS ||
            k == SID_P_KT)
            idx[n++] = i;
    }
    return n;
}

/* Identification motion cannot give: on data/double_pendulum (shoulder sensor gain 1.1, bias
 * 0.05; the elbow's tau column read with gain 1, no sensor entry), freeing masses, iyy,
 * armature, viscous friction, both kt and the shoulder sensor's gain and bias:
 *  - motion alone: J^T J has null directions (ratio below SID_NULL_RATIO): the scale, and the
 *    shoulder's armature against the upper link's iyy (both inertia about the same axis);
 *  - with the sensors: none, and LM from the fore link's mass 30 % off recovers every free
 *    parameter to 1e-6 relative (noise-free, the log's own integrator: exact up to LM's
 *    tolerance). Windows of 0.1 s: at 0.5 s a 30 % mass error sends the double pendulum far
 *    enough for LM to stop in a local minimum (loss 1.1e-2).
 * With noise (q 1e-4 rad, qd 1e-3 rad/s, tau 1 % of its RMS) the error is printed and bounded loosely. */
static double recover(int noisy, double *worst_out)
{
    const int has[2] = {1, 0};
    const double g[2] = {1.1, 1}, b[2] = {0.05, 0}, g0[2] = {1, 1}, b0[2] = {0, 0};
    double *tht, *th;
    sid_model *mt = dp_model(has, g, b, &tht);
    sid_traj *tr = tu_synth_log(mt, tht, 2000, DT, 1.0, 23);
    add_tau(mt, tht, tr);
    if (noisy) {
        unsigned st = 5;
        tu_add_noise(tr, 1e-4, 1e-3, 77);
        double rms = 0;
        for (int k = 0; k < tr->n * 2; k++) rms += tr->tau[k] * tr->tau[k];
        rms = sqrt(rms / (tr->n * 2));
        for (int k = 0; k < tr->n * 2; k++) {
            /* Box-Muller: Gaussian of 1 % of the RMS */
            const double u1 = tu_uniform(&st, 1e-12, 1), u2 = tu_uniform(&st, 0, 1);
            tr->tau[k] += 0.01 * rms * sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
        }
    }
    sid_model *m = dp_model(has, g0, b0, &th);
    const int fore = tu_param(m, "links.fore.mass");
    th[fore] *= 1.3;
    int idx[64], n = scale_set(m, idx);
    const int nscale = n;
    idx[n++] = tu_param(m, "joints.shoulder.torque_sensor.gain");
    idx[n++] = tu_param(m, "joints.shoulder.torque_sensor.bias");
    sid_loss_opts lo;
    sid_loss_opts_defaults(&lo);
    lo.sim.substeps = 1, lo.threads = 1, lo.window = 0.1;
    const sid_traj *logs[1] = {tr};
    sid_problem *p;
    sid_error err = {0};
    sid_covariance_result *c = sid_alloc(sizeof *c);
    if (!noisy) {
        /* motion alone at the truth: the scale (and armature vs iyy) are null directions */
        ck_assert(sid_problem_create(&p, m, logs, 1, &lo, &err) == SID_OK);
        ck_assert_msg(sid_problem_covariance(p, tht, NULL, nscale, idx, NULL, c, &err) == SID_OK, "%s", err.msg);
        fprintf(stderr, "torque sensor: motion only, %d scale parameters free: %d null direction(s), ratio %.1e\n",
                nscale, c->nnull, c->nnull ? c->null_ratio[0] : 1.0);
        ck_assert_msg(c->nnull == 2, "motion alone: %d null directions, expected 2", c->nnull);
        sid_problem_free(p);
    }
    lo.weight_tau = 1;
    ck_assert_msg(sid_problem_create(&p, m, logs, 1, &lo, &err) == SID_OK, "%s", err.msg);
    if (!noisy) {
        ck_assert_msg(sid_problem_covariance(p, tht, NULL, n, idx, NULL, c, &err) == SID_OK, "%s", err.msg);
        fprintf(stderr, "torque sensor: with tau rows, %d parameters free: %d null directions, cond %.2e\n", n, c->nnull,
                c->cond);
        ck_assert_int_eq(c->nnull, 0);
    }
    {
        double Lt, L0;
        ck_assert(sid_problem_loss(p, tht, NULL, &Lt, NULL, NULL, &err) == SID_OK);
        ck_assert(sid_problem_loss(p, th, NULL, &L0, NULL, NULL, &err) == SID_OK);
        fprintf(stderr, "torque sensor recovery (%s): loss at truth %.3e, at the start %.3e\n", noisy ? "noisy" : "clean", Lt, L0);
    }
    double lob[64], hib[64];
    for (int i = 0; i < n; i++) lob[i] = -HUGE_VAL, hib[i] = HUGE_VAL;
    sid_fit_opts fo;
    sid_fit_opts_defaults(&fo);
    fo.optimizer = SID_OPT_LM, fo.nfree = n, fo.idx = idx, fo.lo = lob, fo.hi = hib, fo.max_iter = 100;
    sid_fit_result *r = calloc(1, sizeof *r);
    ck_assert_msg(sid_fit(p, th, NULL, &fo, r, &err) == SID_OK, "%s", err.msg);
    double worst = 0;
    int wi = 0;
    for (int i = 0; i < n; i++) {
        const double e = fabs(th[idx[i]] - tht[idx[i]]) / fmax(fabs(tht[idx[i]]), i == n - 1 ? 0.05 : 1e-12);
        if (e > worst) worst = e, wi = i;
    }
    fprintf(stderr, "torque sensor recovery (%s, LM, fore mass from +30 %%): gain %.9f bias %.9f fore mass %.9f "
                    "(truth 1.1, 0.05, %.3g); worst relative error %.2e (%s), loss %.2e, %d iterations %s\n",
            noisy ? "noisy" : "clean", th[idx[n - 2]], th[idx[n - 1]], th[fore], tht[fore], worst,
            sid_model_param(m, idx[wi])->name, r->loss, r->iterations, r->message);
    *worst_out = worst;
    free(r), sid_free(c), sid_problem_free(p), sid_traj_free(tr);
    sid_model_free(m), sid_model_free(mt), sid_free(th), sid_free(tht);
    return worst;
}

START_TEST(recovery_clean)
{
    double w;
    recover(0, &w);
    ck_assert_msg(w < 1e-6, "relative error %g", w);
}
END_TEST

/* Noise: the error is what the noise allows, not exact; 5 % bounds a working fit here (the
 * clean fit's mass would be anywhere along the scale without the sensors). */
START_TEST(recovery_noisy)
{
    double w;
    recover(1, &w);
    ck_assert_msg(w < 0.05, "relative error %g", w);
}
END_TEST

Suite *torque_sensor_suite(void)
{
    Suite *s = suite_create("torque_sensor");
    TCase *tc = tcase_create("torque_sensor");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, tau_link_matches_mujoco);
    tcase_add_test(tc, rows_where_given_and_weight_zero);
    tcase_add_test(tc, gradient_matches_fd);
    suite_add_tcase(s, tc);
    TCase *slow = tcase_create("torque_sensor_recovery");
    tcase_set_timeout(slow, 120);
    tcase_set_tags(slow, "slow");
    tcase_add_test(slow, recovery_clean);
    tcase_add_test(slow, recovery_noisy);
    suite_add_tcase(s, slow);
    return s;
}
