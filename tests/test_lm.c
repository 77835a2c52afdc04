/* test_lm.c — Levenberg-Marquardt (core/fit/lm.c): its Schur-reduced step against the dense
 * system built here from the same window Jacobians; recovery of known truth on the double
 * pendulum, with and without fitted start states, in fewer evaluations than L-BFGS; on noisy
 * data a minimum no worse than L-BFGS's; the same
 * bits for any thread count; bounds; the interrupt flag. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fit_driver.h"
#include "linalg.h"
#include "robot_json.h"
#include "robot_load.h"
#include "test_util.h"

Suite *lm_suite(void);

/* ---- the step: Schur elimination against the dense system --------------------------------- */

START_TEST(schur_step_equals_dense_step)
{
    /* 3 joints with friction and motors, 0.3 s at 1 kHz cut in 0.1 s windows: 3 windows of 6
     * start-state unknowns each; the free parameters all positive with positive bounds, so the
     * fit's variables are log(theta / nominal) and d theta / d x = theta (sid.h, "fitting") */
    sid_robot_desc *desc = tu_random_robot(41, 3, TU_FRICTION | TU_MOTORS);
    sid_model *m;
    double *theta;
    sid_error err = {0};
    ck_assert_msg(sid_model_create(&m, &theta, desc, &err) == SID_OK, "%s", err.msg);
    tu_desc_free(desc);
    const int np = sid_model_nparam(m), nq = sid_model_nq(m), nv = sid_model_nv(m), nx = nq + nv;
    int mask[1024] = {0}, idx[64], nf = 0;
    sid_model_param_match(m, "joints.*.friction.viscous", mask);
    sid_model_param_match(m, "joints.*.armature", mask);
    double *truth = malloc(sizeof(double) * (size_t)np), lo[64], hi[64];
    memcpy(truth, theta, sizeof(double) * (size_t)np);
    for (int i = 0; i < np; i++)
        if (mask[i] && theta[i] > 0) {
            truth[i] *= 1.3;
            lo[nf] = 0.1 * theta[i], hi[nf] = 10 * theta[i];
            idx[nf++] = i;
        }
    ck_assert_int_ge(nf, 4);
    sid_traj *log = tu_synth_log(m, truth, 301, 1e-3, 0.4, 3);
    tu_add_noise(log, 1e-3, 1e-2, 5);
    sid_loss_opts o;
    sid_loss_opts_defaults(&o);
    o.window = 0.1;
    o.estimate_start = 1;
    sid_problem *p;
    ck_assert_msg(sid_problem_create(&p, m, (const sid_traj *const *)&log, 1, &o, &err) == SID_OK, "%s", err.msg);
    const int nwin = sid_problem_nwindows(p), n = nf + nwin * nx, nres = sid_problem_nresiduals(p);
    ck_assert_int_eq(nwin, 3);
    double *x0 = malloc(sizeof(double) * (size_t)(nwin * nx));
    sid_problem_start_states(p, theta, x0);
    for (int j = 0; j < nwin * nx; j++) x0[j] += 1e-3 * sin(j + 1.0);   /* not the logged ones exactly */
    sid_fit_opts fo;
    sid_fit_opts_defaults(&fo);
    fo.optimizer = SID_OPT_LM, fo.nfree = nf, fo.idx = idx, fo.lo = lo, fo.hi = hi;

    /* the dense J (nres x n): parameter columns times theta, window w's start columns (at
     * nf + w nx) times the residual scales, each window's rows its own */
    double *J = calloc((size_t)nres * (size_t)n, sizeof(double)), *r = malloc(sizeof(double) * (size_t)nres);
    double cs[64];
    for (int i = 0; i < nx; i++) cs[i] = i < nq ? sid_problem_scale_q(p)[i] : sid_problem_scale_qd(p)[i - nq];
    int row = 0;
    for (int w = 0; w < nwin; w++) {
        const int rows = sid_problem_window_rows(p, w), nc = nf + nx;
        double *Jw = malloc(sizeof(double) * (size_t)rows * (size_t)nc);
        ck_assert_msg(sid_problem_window_jacobian(p, theta, x0 + w * nx, w, nf, idx, r + row, Jw, &err) == SID_OK, "%s",
                      err.msg);
        for (int i = 0; i < rows; i++) {
            for (int k = 0; k < nf; k++) J[(size_t)(row + i) * n + k] = Jw[(size_t)i * nc + k] * theta[idx[k]];
            for (int j = 0; j < nx; j++) J[(size_t)(row + i) * n + nf + w * nx + j] = Jw[(size_t)i * nc + nf + j] * cs[j];
        }
        row += rows;
        free(Jw);
    }
    ck_assert_int_eq(row, nres);
    /* (A + lambda D) h = -g, A = J^T J / nres, g = J^T r / nres, D = diag(A) floored at 1e-12 of its largest */
    const double lambda = 1e-2;
    double *A = calloc((size_t)n * (size_t)n, sizeof(double)), *h = calloc((size_t)n, sizeof(double));
    double *hs = malloc(sizeof(double) * (size_t)n), dmax = 0;
    int *piv = malloc(sizeof(int) * (size_t)n);
    for (int a = 0; a < n; a++) {
        for (int i = 0; i < nres; i++) h[a] -= J[(size_t)i * n + a] * r[i] / nres;
        for (int b = 0; b < n; b++)
            for (int i = 0; i < nres; i++) A[a * n + b] += J[(size_t)i * n + a] * J[(size_t)i * n + b] / nres;
        dmax = fmax(dmax, A[a * n + a]);
    }
    for (int a = 0; a < n; a++) A[a * n + a] += lambda * fmax(A[a * n + a], 1e-12 * dmax);
    ck_assert_int_eq(sid_lu_factor(n, A, piv), 0);
    sid_lu_solve(n, A, piv, 0, h);
    ck_assert_msg(sid_lm_step(p, theta, x0, &fo, lambda, hs, &err) == SID_OK, "%s", err.msg);
    double emax = 0, hmax = 0;
    for (int a = 0; a < n; a++) emax = fmax(emax, fabs(hs[a] - h[a])), hmax = fmax(hmax, fabs(h[a]));
    fprintf(stderr, "lm step: %d unknowns (%d parameters, %d windows x %d), |h| %.3g, Schur vs dense %.2e\n", n, nf,
            nwin, nx, hmax, emax / hmax);
    /* both solve the same 30-odd unknowns in double precision from a matrix of condition
     * well below 1e4 (damped): agreement to 1e-10 of the step leaves room for rounding */
    ck_assert_msg(hmax > 0 && emax <= 1e-10 * hmax, "Schur step differs from the dense one by %g of %g", emax, hmax);
    free(J), free(r), free(A), free(h), free(hs), free(piv), free(x0), free(truth);
    sid_problem_free(p);
    sid_traj_free(log);
    sid_model_free(m);
    sid_free(theta);
}
END_TEST

/* ---- fits on the double pendulum with known truth ----------------------------------------- */

typedef struct {
    sid_model *m;
    double *theta0, *truth;
    cJSON *doc;
    sid_traj *logs[2];
    int idx[64], n, np, nx;
    double lo[64], hi[64];
} pend;

/* The bundled double pendulum, viscous friction, armature, motor constants and masses 20-50 %
 * off their nominal values (as test_recovery.c), two 3 s logs simulated from that truth. */
static void pend_make(pend *f, unsigned seed)
{
    sid_error err = {0};
    ck_assert_msg(robot_model("../data/double_pendulum/robot.json", &f->m, &f->theta0, &f->doc, &err) == 0, "%s",
                  err.msg);
    f->np = sid_model_nparam(f->m), f->nx = sid_model_nq(f->m) + sid_model_nv(f->m);
    int *mask = calloc((size_t)f->np, sizeof(int));
    const char *globs[] = {"joints.*.friction.viscous", "joints.*.armature", "joints.*.motor.kt", "links.*.mass"};
    for (int g = 0; g < 4; g++) sid_model_param_match(f->m, globs[g], mask);
    f->truth = malloc(sizeof(double) * (size_t)f->np);
    memcpy(f->truth, f->theta0, sizeof(double) * (size_t)f->np);
    unsigned s = seed;
    f->n = 0;
    for (int i = 0; i < f->np; i++) {
        const double v = f->theta0[i];
        if (!mask[i] || v == 0) continue;
        const double e = tu_uniform(&s, 0.2, 0.5);
        f->truth[i] = v * (tu_uniform(&s, 0, 1) < 0.5 ? 1 + e : 1 - e);
        f->lo[f->n] = v > 0 ? 0.1 * v : 10 * v;
        f->hi[f->n] = v > 0 ? 10 * v : 0.1 * v;
        f->idx[f->n++] = i;
    }
    free(mask);
    f->logs[0] = tu_synth_log(f->m, f->truth, 1501, 2e-3, 0.6, seed + 1);
    f->logs[1] = tu_synth_log(f->m, f->truth, 1501, 2e-3, 0.6, seed + 2);
}

static void pend_free(pend *f)
{
    sid_traj_free(f->logs[0]);
    sid_traj_free(f->logs[1]);
    free(f->truth);
    cJSON_Delete(f->doc);
    sid_model_free(f->m);
    sid_free(f->theta0);
}

static sid_problem *pend_problem(const pend *f, int estimate, int threads)
{
    sid_loss_opts o;
    sid_loss_opts_defaults(&o);
    o.window = 0.25;
    o.estimate_start = estimate;
    o.threads = threads;
    sid_problem *p;
    sid_error err = {0};
    ck_assert_msg(sid_problem_create(&p, f->m, (const sid_traj *const *)f->logs, 2, &o, &err) == SID_OK, "%s", err.msg);
    return p;
}

/* Fit from the nominal values with optimizer opt: theta (np) and x0 (the start states, or NULL)
 * receive the result. */
static void pend_fit(const pend *f, sid_problem *p, sid_optimizer opt, sid_fit_opts *fo, double *theta, double **x0,
                     sid_fit_result *r)
{
    sid_error err = {0};
    memcpy(theta, f->theta0, sizeof(double) * (size_t)f->np);
    *x0 = NULL;
    if (sid_problem_estimates_start(p)) {
        *x0 = malloc(sizeof(double) * (size_t)(sid_problem_nwindows(p) * f->nx));
        sid_problem_start_states(p, theta, *x0);
    }
    fo->optimizer = opt, fo->nfree = f->n, fo->idx = f->idx, fo->lo = f->lo, fo->hi = f->hi;
    ck_assert_msg(sid_fit(p, theta, *x0, fo, r, &err) == SID_OK, "%s", err.msg);
}

static double worst_error(const pend *f, const double *theta, int *worst)
{
    double e = 0;
    for (int k = 0; k < f->n; k++) {
        const int i = f->idx[k];
        const double ek = fabs(theta[i] - f->truth[i]) / fabs(f->truth[i]);
        if (ek >= e) e = ek, *worst = i;
    }
    return e;
}

START_TEST(recovers_truth_in_fewer_evaluations)
{
    const int estimate = _i;
    pend f;
    pend_make(&f, 100);
    sid_problem *p = pend_problem(&f, estimate, 0);
    double *th_lm = malloc(sizeof(double) * (size_t)f.np), *th_bf = malloc(sizeof(double) * (size_t)f.np);
    double *x0_lm, *x0_bf;
    sid_fit_opts fo;
    sid_fit_result r_lm, r_bf;
    /* the same demand on both: a relative decrease of 1e-15 (test_recovery.c's) */
    sid_fit_opts_defaults(&fo);
    fo.ftol_rel = 1e-15;
    pend_fit(&f, p, SID_OPT_LM, &fo, th_lm, &x0_lm, &r_lm);
    sid_fit_opts_defaults(&fo);
    fo.ftol_rel = 1e-15;
    pend_fit(&f, p, SID_OPT_LBFGS, &fo, th_bf, &x0_bf, &r_bf);
    int w_lm = 0, w_bf = 0;
    const double e_lm = worst_error(&f, th_lm, &w_lm), e_bf = worst_error(&f, th_bf, &w_bf);
    fprintf(stderr,
            "lm recovery, double pendulum, %d parameters, start states %s:\n"
            "  lm:    %3d iterations, %4d evaluations (%d Jacobians), %.2f s, loss %.2e -> %.2e, worst error %.1e (%s), %s\n"
            "  lbfgs: %3d iterations, %4d evaluations, %.2f s, loss %.2e -> %.2e, worst error %.1e (%s), %s\n",
            f.n, estimate ? "fitted" : "logged", r_lm.iterations, r_lm.evaluations, r_lm.jacobians, r_lm.seconds,
            r_lm.loss0, r_lm.loss, e_lm, sid_model_param(f.m, w_lm)->name, r_lm.message, r_bf.iterations,
            r_bf.evaluations, r_bf.seconds, r_bf.loss0, r_bf.loss, e_bf, sid_model_param(f.m, w_bf)->name,
            r_bf.message);
    ck_assert_int_eq(r_lm.stop, SID_STOP_CONVERGED);
    /* noise-free data from the model itself: the truth is the exact minimum, so LM's
     * quadratic convergence reaches it to far below 1e-8 (the brief's bound) */
    ck_assert_msg(e_lm <= 1e-8, "lm: %s relative error %g", sid_model_param(f.m, w_lm)->name, e_lm);
    /* evaluations count every trial loss and every Jacobian pass as one */
    ck_assert_msg(r_lm.evaluations < r_bf.evaluations, "lm %d evaluations, lbfgs %d", r_lm.evaluations,
                  r_bf.evaluations);
    free(th_lm), free(th_bf), free(x0_lm), free(x0_bf);
    sid_problem_free(p);
    pend_free(&f);
}
END_TEST

START_TEST(noisy_minimum_no_worse_than_lbfgs)
{
    /* noise of 1e-3 rad and 1e-2 rad/s (test_recovery.c's): the minimum is no longer the truth;
     * both optimizers go to it from the same start, L-BFGS until its relative decrease is
     * below 1e-15, so LM's loss must not be above L-BFGS's by more than that rounding */
    pend f;
    pend_make(&f, 200);
    tu_add_noise(f.logs[0], 1e-3, 1e-2, 203);
    tu_add_noise(f.logs[1], 1e-3, 1e-2, 204);
    sid_problem *p = pend_problem(&f, 1, 0);
    double *th = malloc(sizeof(double) * (size_t)f.np), *x0;
    sid_fit_opts fo;
    sid_fit_result r_lm, r_bf;
    sid_fit_opts_defaults(&fo);
    fo.ftol_rel = 1e-15;
    pend_fit(&f, p, SID_OPT_LM, &fo, th, &x0, &r_lm);
    free(x0);
    sid_fit_opts_defaults(&fo);
    fo.ftol_rel = 1e-15;
    pend_fit(&f, p, SID_OPT_LBFGS, &fo, th, &x0, &r_bf);
    fprintf(stderr, "lm noisy: loss %.10e (%d evaluations, %s), lbfgs %.10e (%d evaluations)\n", r_lm.loss,
            r_lm.evaluations, r_lm.message, r_bf.loss, r_bf.evaluations);
    ck_assert_int_eq(r_lm.stop, SID_STOP_CONVERGED);
    ck_assert_msg(r_lm.loss <= r_bf.loss * (1 + 1e-12), "lm loss %.15g above lbfgs %.15g", r_lm.loss, r_bf.loss);
    free(th), free(x0);
    sid_problem_free(p);
    pend_free(&f);
}
END_TEST

START_TEST(same_bits_for_any_thread_count)
{
    pend f;
    pend_make(&f, 300);
    double *th[2], *x0[2];
    sid_fit_result r[2];
    for (int t = 0; t < 2; t++) {
        sid_problem *p = pend_problem(&f, 1, t + 1);
        sid_fit_opts fo;
        sid_fit_opts_defaults(&fo);
        fo.max_iter = 6;   /* the same path, not only the same end */
        th[t] = malloc(sizeof(double) * (size_t)f.np);
        pend_fit(&f, p, SID_OPT_LM, &fo, th[t], &x0[t], &r[t]);
        if (t == 1) ck_assert_int_eq(sid_problem_nwindows(p), 24);
        if (t == 1) ck_assert_int_eq(r[1].stop, SID_STOP_MAX_ITER);
        sid_problem_free(p);
    }
    ck_assert(r[0].loss == r[1].loss && r[0].iterations == r[1].iterations && r[0].evaluations == r[1].evaluations);
    ck_assert(!memcmp(th[0], th[1], sizeof(double) * (size_t)f.np));
    ck_assert(!memcmp(x0[0], x0[1], sizeof(double) * (size_t)(24 * f.nx)));
    for (int t = 0; t < 2; t++) free(th[t]), free(x0[t]);
    pend_free(&f);
}
END_TEST

START_TEST(bounds_hold)
{
    /* every free parameter's upper bound (or lower, where the truth is below nominal) halfway
     * between nominal and truth: the unconstrained minimum is outside the box for all of
     * them, so any trial point beyond a bound that lowers the loss would have been accepted */
    pend f;
    pend_make(&f, 100);
    for (int k = 0; k < f.n; k++) {
        const int i = f.idx[k];
        const double mid = 0.5 * (f.theta0[i] + f.truth[i]);
        if (f.truth[i] > f.theta0[i]) f.hi[k] = mid;
        else f.lo[k] = mid;
    }
    sid_problem *p = pend_problem(&f, 1, 0);
    double *theta = malloc(sizeof(double) * (size_t)f.np), *x0;
    sid_fit_opts fo;
    sid_fit_opts_defaults(&fo);
    sid_fit_result r;
    pend_fit(&f, p, SID_OPT_LM, &fo, theta, &x0, &r);
    int at_bound = 0;
    for (int k = 0; k < f.n; k++) {
        const int i = f.idx[k];
        ck_assert_msg(theta[i] >= f.lo[k] && theta[i] <= f.hi[k], "%s = %.17g outside [%.17g, %.17g]",
                      sid_model_param(f.m, i)->name, theta[i], f.lo[k], f.hi[k]);
        /* log-space variables map back to the bound within rounding */
        at_bound += fabs(theta[i] - (f.truth[i] > f.theta0[i] ? f.hi[k] : f.lo[k])) <= 1e-12 * fabs(theta[i]);
    }
    fprintf(stderr, "lm bounds: %d of %d parameters end at their bound, %d iterations, %s\n", at_bound, f.n,
            r.iterations, r.message);
    ck_assert_int_ge(at_bound, 1);
    ck_assert_msg(r.loss < r.loss0, "loss %g, nominal %g", r.loss, r.loss0);
    free(theta), free(x0);
    sid_problem_free(p);
    pend_free(&f);
}
END_TEST

static volatile int stop_flag;

static void stop_after_two(void *ctx, int iter, double loss, double gnorm, double seconds)
{
    (void)ctx, (void)loss, (void)gnorm, (void)seconds;
    if (iter == 2) stop_flag = 1;
}

START_TEST(interrupt_stops)
{
    pend f;
    pend_make(&f, 100);
    sid_problem *p = pend_problem(&f, 1, 0);
    double *theta = malloc(sizeof(double) * (size_t)f.np), *x0;
    sid_fit_opts fo;
    sid_fit_opts_defaults(&fo);
    stop_flag = 0;
    fo.interrupt = &stop_flag;
    fo.progress = stop_after_two;
    sid_fit_result r;
    pend_fit(&f, p, SID_OPT_LM, &fo, theta, &x0, &r);
    ck_assert_int_eq(r.stop, SID_STOP_INTERRUPTED);
    ck_assert_int_eq(r.iterations, 2);
    ck_assert_msg(r.loss < r.loss0, "the best point so far is returned: loss %g, nominal %g", r.loss, r.loss0);
    free(theta), free(x0);
    sid_problem_free(p);
    pend_free(&f);
}
END_TEST

START_TEST(smoothing_is_lbfgs_only)
{
    pend f;
    pend_make(&f, 100);
    sid_problem *p = pend_problem(&f, 0, 0);
    double *theta = malloc(sizeof(double) * (size_t)f.np);
    memcpy(theta, f.theta0, sizeof(double) * (size_t)f.np);
    sid_fit_opts fo;
    sid_fit_opts_defaults(&fo);
    fo.optimizer = SID_OPT_LM, fo.nfree = f.n, fo.idx = f.idx, fo.lo = f.lo, fo.hi = f.hi;
    fo.smoothing_sigma = 0.05, fo.smoothing_pairs = 4;
    sid_fit_result r;
    sid_error err = {0};
    ck_assert_int_eq(sid_fit(p, theta, NULL, &fo, &r, &err), SID_ERR_INPUT);
    ck_assert_msg(strstr(err.msg, "smoothing") && strstr(err.msg, "lbfgs"), "%s", err.msg);
    free(theta);
    sid_problem_free(p);
    pend_free(&f);
}
END_TEST

/* SID_OPT_AUTO prices an LM iteration (optimizer_auto.c) and says so: on arm7's 10 s log at
 * 1 kHz (0.5 s windows, start states fitted) the joints' 28 parameters cost about 7 L-BFGS
 * iterations an LM iteration (LM runs), every link's inertial parameters too (98) about 18
 * (L-BFGS runs): 6.3 and 19 measured (docs/performance.md, "Levenberg-Marquardt or L-BFGS"). */
START_TEST(auto_prices_lm)
{
    sid_model *m;
    double *theta;
    cJSON *doc;
    sid_error err = {0};
    ck_assert_msg(robot_model("../data/arm7/robot.json", &m, &theta, &doc, &err) == 0, "%s", err.msg);
    sid_traj *log = tu_synth_log(m, theta, 4001, 1e-3, 0.5, 7);
    sid_loss_opts o;
    sid_loss_opts_defaults(&o);
    o.sim.substeps = 1;
    o.estimate_start = 1;
    sid_problem *p;
    ck_assert_msg(sid_problem_create(&p, m, (const sid_traj *const *)&log, 1, &o, &err) == SID_OK, "%s", err.msg);
    const int np = sid_model_nparam(m);
    int *mask = calloc((size_t)np, sizeof(int)), idx[256], n = 0;
    const char *joints[] = {"joints.*.armature", "joints.*.friction.viscous", "joints.*.friction.coulomb"};
    for (int g = 0; g < 3; g++) sid_model_param_match(m, joints[g], mask);
    for (int i = 0; i < np; i++) if (mask[i]) idx[n++] = i;
    ck_assert_int_eq(n, 21);
    const double r28 = sid_lm_cost_ratio(p, 28, NULL, NULL, NULL), r98 = sid_lm_cost_ratio(p, 98, NULL, NULL, NULL);
    fprintf(stderr, "auto: an LM iteration costs %.3g L-BFGS iterations with 28 free parameters, %.3g with 98\n", r28,
            r98);
    ck_assert_msg(r28 > 5 && r28 < 9, "28 parameters: %g", r28);
    ck_assert_msg(r98 > 14 && r98 < 22, "98 parameters: %g", r98);
    /* and the fit (the joints' 21 parameters but kt, 20 % off) says which ran and why */
    double lo[256], hi[256];
    for (int k = 0; k < n; k++) lo[k] = -HUGE_VAL, hi[k] = HUGE_VAL;
    sid_fit_opts fo;
    sid_fit_opts_defaults(&fo);
    fo.optimizer = SID_OPT_AUTO, fo.nfree = n, fo.idx = idx, fo.lo = lo, fo.hi = hi, fo.max_iter = 1;
    double *x0 = malloc(sizeof(double) * (size_t)(sid_problem_nwindows(p) * (sid_model_nq(m) + sid_model_nv(m))));
    sid_problem_start_states(p, theta, x0);
    for (int k = 0; k < n; k++) theta[idx[k]] = theta[idx[k]] ? 1.2 * theta[idx[k]] : 0.01;   /* something to fit */
    sid_fit_result r;
    ck_assert_msg(sid_fit(p, theta, x0, &fo, &r, &err) == SID_OK, "%s", err.msg);
    fprintf(stderr, "auto, 1 iteration: %s; %s\n", r.message, r.choice);
    ck_assert_int_eq(r.nran, 1);
    ck_assert_int_eq(r.ran[0], SID_OPT_LM);
    static const char want[] = "lm: an LM iteration (a Jacobian of 35 directions: 21 free parameters and 14 ";
    ck_assert_msg(!strncmp(r.choice, want, strlen(want)), "%s", r.choice);
    free(x0);
    free(mask);
    sid_problem_free(p);
    sid_traj_free(log);
    cJSON_Delete(doc);
    sid_model_free(m);
    sid_free(theta);
}
END_TEST

Suite *lm_suite(void)
{
    Suite *s = suite_create("lm");
    TCase *tc = tcase_create("lm");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, schur_step_equals_dense_step);
    tcase_add_loop_test(tc, recovers_truth_in_fewer_evaluations, 0, 2);
    tcase_add_test(tc, noisy_minimum_no_worse_than_lbfgs);
    tcase_add_test(tc, same_bits_for_any_thread_count);
    tcase_add_test(tc, bounds_hold);
    tcase_add_test(tc, interrupt_stops);
    tcase_add_test(tc, smoothing_is_lbfgs_only);
    tcase_add_test(tc, auto_prices_lm);
    suite_add_tcase(s, tc);
    return s;
}
