/* test_intervals.c — intervals that know when they are wrong (covariance.c, optimize.c):
 * the sandwich covariance, the per-channel classic covariance and the robust degrees of
 * freedom against dense computations from the explicit window Jacobians, standard errors
 * against the spread of estimates over seeds, the sandwich's agreement with the classic one on
 * white residuals, the residual diagnostics on white and on mismatched residuals and fits, and
 * the no_progress stop against a fit started at its optimum. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "student_t.h"
#include "test_util.h"

Suite *intervals_suite(void);

typedef struct {
    sid_model *m;
    double *theta, *truth;
    sid_traj *log, *clean;
    int idx[64], n;
} fixture;

/* A 3-joint robot with friction and motors, its log simulated with viscous friction and
 * armature moved by 30 %, those free; Gaussian noise sq on q, sqd on qd (the clean log kept). */
static void fixture_make(fixture *f, int samples, double sq, double sqd, unsigned seed)
{
    sid_robot_desc *d = tu_random_robot(41, 3, TU_FRICTION | TU_MOTORS);
    sid_error err = {0};
    ck_assert_msg(sid_model_create(&f->m, &f->theta, d, &err) == SID_OK, "%s", err.msg);
    tu_desc_free(d);
    const int np = sid_model_nparam(f->m);
    int mask[1024] = {0};
    sid_model_param_match(f->m, "joints.*.friction.viscous", mask);
    sid_model_param_match(f->m, "joints.*.armature", mask);
    f->truth = malloc(sizeof(double) * (size_t)np);
    memcpy(f->truth, f->theta, sizeof(double) * (size_t)np);
    f->n = 0;
    for (int i = 0; i < np; i++)
        if (mask[i]) f->idx[f->n++] = i, f->truth[i] *= 1.3;
    ck_assert_int_eq(f->n, 6);
    f->log = tu_synth_log(f->m, f->truth, samples, 1e-3, 0.4, 3);
    f->clean = tu_synth_log(f->m, f->truth, samples, 1e-3, 0.4, 3);
    if (sq > 0 || sqd > 0) tu_add_noise(f->log, sq, sqd, seed);
}

static void fixture_free(fixture *f)
{
    sid_traj_free(f->log);
    sid_traj_free(f->clean);
    free(f->truth);
    sid_model_free(f->m);
    sid_free(f->theta);
}

/* The problem borrows the pointer *log: it must outlive the problem. */
static sid_problem *problem(const sid_model *m, sid_traj *const *log, double window, int estimate)
{
    sid_loss_opts o;
    sid_loss_opts_defaults(&o);
    o.window = window;
    o.estimate_start = estimate;
    o.weight_qd = 1;   /* the same weight on q and qd rows: with scaled noise, one residual variance */
    sid_problem *p;
    sid_error err = {0};
    ck_assert_msg(sid_problem_create(&p, m, (const sid_traj *const *)log, 1, &o, &err) == SID_OK, "%s", err.msg);
    return p;
}

/* The window start states of f's clean log: the true ones (nwin x (nq + nv), malloc'd). */
static double *true_starts(const fixture *f, double window)
{
    sid_problem *p = problem(f->m, &f->clean, window, 1);
    const int nx = sid_model_nq(f->m) + sid_model_nv(f->m);
    double *x0 = malloc(sizeof(double) * (size_t)(sid_problem_nwindows(p) * nx));
    sid_problem_start_states(p, f->truth, x0);
    sid_problem_free(p);
    return x0;
}

/* Gaussian noise of rel times each column's scale (its standard deviation over the log, as the
 * problem's residual scales): every residual row then has the same variance rel^2. */
static void add_scaled_noise(fixture *f, double rel, unsigned seed)
{
    sid_problem *p = problem(f->m, &f->clean, 0.1, 0);
    const double *sq = sid_problem_scale_q(p), *sqd = sid_problem_scale_qd(p);
    sid_traj *tr = f->log;
    unsigned s = seed;
    for (int k = 0; k < tr->n; k++)
        for (int i = 0; i < tr->nq + tr->nv; i++) {
            const double u1 = tu_uniform(&s, 1e-12, 1), u2 = tu_uniform(&s, 0, 1);
            const double e = rel * sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
            if (i < tr->nq)
                tr->q[(size_t)k * tr->nq + i] += e * sq[i];
            else
                tr->qd[(size_t)k * tr->nv + i - tr->nq] += e * sqd[i - tr->nq];
        }
    sid_problem_free(p);
}

/* The inverse of the symmetric positive definite A (n x n, destroyed) into X by Gauss-Jordan. */
static void invert(int n, double *A, double *X)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) X[i * n + j] = i == j;
    for (int k = 0; k < n; k++) {
        const double d = A[k * n + k];
        for (int j = 0; j < n; j++) A[k * n + j] /= d, X[k * n + j] /= d;
        for (int i = 0; i < n; i++) {
            if (i == k) continue;
            const double g = A[i * n + k];
            for (int j = 0; j < n; j++) A[i * n + j] -= g * A[k * n + j], X[i * n + j] -= g * X[k * n + j];
        }
    }
}

/* Dense, from each window's explicit Jacobian [Jp Js]: the start state projected out,
 * Jt = (I - Js (Js^T Js)^-1 Js^T) Jp, A = sum Jt^T Jt, M = sum (Jt^T r)(Jt^T r)^T, and the
 * sandwich G/(G-1) A^-1 M A^-1 into R (n x n); the lag-1 sums per channel into lag (nq + nv);
 * the classic covariance A^-1 (sum_c sigma_c^2 Jt_c^T Jt_c) A^-1 over channels c into Cl, with
 * sigma_c^2 = |r_c|^2 / n_c * rows / dof; the robust interval's degrees of freedom into dof (n):
 * tr(O)^2 / tr(O^2), O = diag(a^T A_w a) - (A_w a)^T A^-1 (A_v a) as an explicit G x G matrix;
 * A^-1 into Ainv (may be NULL). */
static void dense_sandwich(sid_problem *p, const fixture *f, const double *theta, const double *x0, int estimate,
                           double *R, double *lag, double *Cl, double *dof, double *Ainv)
{
    const int n = f->n, nq = sid_model_nq(f->m), nx = nq + sid_model_nv(f->m), ns = estimate ? nx : 0, nc = n + ns;
    const int G = sid_problem_nwindows(p);
    double *A = calloc((size_t)(n * n), sizeof(double)), *M = calloc((size_t)(n * n), sizeof(double));
    double *Ai = malloc(sizeof(double) * (size_t)(n * n)), *rr = calloc((size_t)(2 * nx), sizeof(double));
    double *Mc = calloc((size_t)(nx * n * n), sizeof(double)), *Aw = calloc((size_t)(G * n * n), sizeof(double));
    long nres = 0;
    for (int w = 0; w < G; w++) {
        const int rows = sid_problem_window_rows(p, w);
        double *r = malloc(sizeof(double) * (size_t)rows), *J = malloc(sizeof(double) * (size_t)rows * (size_t)nc);
        sid_error err = {0};
        ck_assert_msg(sid_problem_window_jacobian(p, theta, estimate ? x0 + (size_t)w * nx : NULL, w, n, f->idx, r, J, &err) ==
                          SID_OK, "%s", err.msg);
        /* B = Js^T Js, K = B^-1 Js^T (ns x rows), Jt = Jp - Js K Jp */
        double B[28 * 28] = {0}, Bi[28 * 28];
        for (int i = 0; i < rows; i++)
            for (int a = 0; a < ns; a++)
                for (int b = 0; b < ns; b++) B[a * ns + b] += J[(size_t)i * nc + n + a] * J[(size_t)i * nc + n + b];
        if (ns) invert(ns, B, Bi);
        double C[28 * 64] = {0}, BC[28 * 64] = {0};   /* Js^T Jp, B^-1 Js^T Jp */
        for (int i = 0; i < rows; i++)
            for (int a = 0; a < ns; a++)
                for (int b = 0; b < n; b++) C[a * n + b] += J[(size_t)i * nc + n + a] * J[(size_t)i * nc + b];
        for (int a = 0; a < ns; a++)
            for (int b = 0; b < n; b++)
                for (int k = 0; k < ns; k++) BC[a * n + b] += Bi[a * ns + k] * C[k * n + b];
        double g[64] = {0};
        for (int i = 0; i < rows; i++) {
            double jt[64];
            for (int a = 0; a < n; a++) {
                jt[a] = J[(size_t)i * nc + a];
                for (int k = 0; k < ns; k++) jt[a] -= J[(size_t)i * nc + n + k] * BC[k * n + a];
                g[a] += jt[a] * r[i];
            }
            for (int a = 0; a < n; a++)
                for (int b = 0; b < n; b++) {
                    A[a * n + b] += jt[a] * jt[b];
                    Aw[(size_t)w * n * n + a * n + b] += jt[a] * jt[b];
                    Mc[(size_t)(i % nx) * n * n + a * n + b] += jt[a] * jt[b];
                }
        }
        nres += rows;
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++) M[a * n + b] += g[a] * g[b];
        /* per channel: rows of a sample are q then qd, all logged here */
        for (int i = 0; i < rows; i++) {
            const int c = i % nx;
            rr[2 * c] += r[i] * r[i];
            if (i >= nx) rr[2 * c + 1] += r[i] * r[i - nx];
        }
        free(r);
        free(J);
    }
    invert(n, A, Ai);
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) {
            double v = 0;
            for (int c = 0; c < n; c++)
                for (int d = 0; d < n; d++) v += Ai[a * n + c] * M[c * n + d] * Ai[d * n + b];
            R[a * n + b] = (double)G / (G - 1) * v;
        }
    for (int c = 0; c < nx; c++) lag[c] = rr[2 * c + 1] / rr[2 * c];
    const double dofr = (double)(nres - n - (long)G * ns);
    double *W = calloc((size_t)(n * n), sizeof(double));
    for (int c = 0; c < nx; c++)
        for (int i = 0; i < n * n; i++) W[i] += rr[2 * c] / (double)(nres / nx) * (double)nres / dofr * Mc[(size_t)c * n * n + i];
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) {
            double v = 0;
            for (int c = 0; c < n; c++)
                for (int d = 0; d < n; d++) v += Ai[a * n + c] * W[c * n + d] * Ai[d * n + b];
            Cl[a * n + b] = v;
        }
    double *Z = malloc(sizeof(double) * (size_t)(G * n)), *O = malloc(sizeof(double) * (size_t)(G * G));
    for (int k = 0; k < n; k++) {
        const double *ak = Ai + k * n;
        for (int w = 0; w < G; w++)
            for (int a = 0; a < n; a++) {
                double v = 0;
                for (int b = 0; b < n; b++) v += Aw[(size_t)w * n * n + a * n + b] * ak[b];
                Z[w * n + a] = v;
            }
        for (int w = 0; w < G; w++)
            for (int v = 0; v < G; v++) {
                double m = 0;
                for (int a = 0; a < n; a++)
                    for (int b = 0; b < n; b++) m += Z[w * n + a] * Ai[a * n + b] * Z[v * n + b];
                double lam = 0;
                for (int a = 0; a < n; a++) lam += ak[a] * Z[w * n + a];
                O[w * G + v] = (w == v ? lam : 0) - m;
            }
        double tr = 0, tr2 = 0;
        for (int w = 0; w < G; w++) {
            tr += O[w * G + w];
            for (int v = 0; v < G; v++) tr2 += O[w * G + v] * O[v * G + w];
        }
        dof[k] = fmin(fmax(tr * tr / tr2, 1), G - 1);
    }
    if (Ainv) memcpy(Ainv, Ai, sizeof(double) * (size_t)(n * n));
    free(Z);
    free(O);
    free(W);
    free(Mc);
    free(Aw);
    free(A);
    free(M);
    free(Ai);
    free(rr);
}

/* The streamed sandwich equals the dense one, with and without start states. Tolerance: the
 * two differ only in rounding, through (pseudo-)inverses of condition ~1e4 (scaled J^T J) and
 * of the start blocks: measured worst 2.2e-14 relative; 1e-10 leaves room for other platforms. */
START_TEST(sandwich_matches_dense)
{
    fixture f;
    fixture_make(&f, 1001, 1e-3, 1e-2, 7);
    for (int estimate = 0; estimate < 2; estimate++) {
        sid_problem *p = problem(f.m, &f.log, 0.1, estimate);
        double *x0 = estimate ? true_starts(&f, 0.1) : NULL;
        sid_covariance_result *c = sid_alloc(sizeof *c);
        sid_error err = {0};
        ck_assert_msg(sid_problem_covariance(p, f.theta, x0, f.n, f.idx, NULL, c, &err) == SID_OK, "%s", err.msg);
        double R[64 * 64], lag[64], Cl[64 * 64], dof[64];
        dense_sandwich(p, &f, f.theta, x0, estimate, R, lag, Cl, dof, NULL);
        const int n = f.n;
        double worst = 0, worst_cl = 0, worst_dof = 0;
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++) {
                const double scale = sqrt(R[a * n + a] * R[b * n + b]), scl = sqrt(Cl[a * n + a] * Cl[b * n + b]);
                worst = fmax(worst, fabs(c->cov_robust[a * n + b] - R[a * n + b]) / scale);
                worst_cl = fmax(worst_cl, fabs(c->cov[a * n + b] - Cl[a * n + b]) / scl);
            }
        for (int a = 0; a < n; a++) {
            worst_dof = fmax(worst_dof, fabs(c->dof_robust[a] - dof[a]) / dof[a]);
            ck_assert_msg(tu_rel_err(c->t95_robust[a], sid_student_t_quantile(0.975, dof[a]), 0) < 1e-8, "t quantile");
        }
        fprintf(stderr, "intervals: sandwich vs dense (start states %s): worst %.2g, classic per channel %.2g, dof %.2g "
                "(dof %.3g .. %.3g of G - 1 = %d)\n", estimate ? "fitted" : "logged", worst, worst_cl, worst_dof, dof[0],
                dof[n - 1], c->nwindows - 1);
        ck_assert_msg(worst < 1e-10, "estimate %d: sandwich off the dense one by %.3g", estimate, worst);
        ck_assert_msg(worst_cl < 1e-10, "estimate %d: classic covariance off the dense one by %.3g", estimate, worst_cl);
        ck_assert_msg(worst_dof < 1e-8, "estimate %d: robust dof off the dense ones by %.3g", estimate, worst_dof);
        ck_assert_int_eq(c->nwindows, sid_problem_nwindows(p));
        for (int ch = 0; ch < c->nchan; ch++)
            ck_assert_msg(fabs(c->lag1[ch] - lag[ch]) < 1e-12, "channel %d lag1 %.15g vs %.15g", ch, c->lag1[ch], lag[ch]);
        sid_free(c);
        free(x0);
        sid_problem_free(p);
    }
    fixture_free(&f);
}
END_TEST

/* At the truth from the true start states the residuals are the added white noise, of one
 * variance sigma^2 on every row (add_scaled_noise): the sandwich's expectation is then the
 * classic covariance (E[g g^T] = sigma^2 J^T J per window; with noise of different variances
 * on different rows the two differ, and the sandwich is the right one).
 * With G = 80 windows each (se_robust / se)^2 has a standard deviation of about sqrt(2 / G) =
 * 0.16; its mean over 6 parameters and 4 seeds must be within 0.25 of 1 (3 standard deviations
 * even if the 6 were one). The diagnostics must say ok: residual RMS over the log's noise
 * level within 10 % of 1 (the second difference of 8000 samples estimates sigma to ~1 %; the
 * signal adds h^2 q'' ~ 1e-5 of a column's scale against a noise of 1e-3), lag 1 inside
 * 4 / sqrt(n). */
START_TEST(white_noise_sandwich_is_classic)
{
    double mean = 0;
    int count = 0;
    for (unsigned seed = 1; seed <= 4; seed++) {
        fixture f;
        fixture_make(&f, 8001, 0, 0, seed);
        add_scaled_noise(&f, 1e-3, seed);
        sid_problem *p = problem(f.m, &f.log, 0.1, 1);
        double *x0 = true_starts(&f, 0.1);
        sid_covariance_result *c = sid_alloc(sizeof *c);
        sid_error err = {0};
        ck_assert_msg(sid_problem_covariance(p, f.truth, x0, f.n, f.idx, NULL, c, &err) == SID_OK, "%s", err.msg);
        for (int a = 0; a < f.n; a++) {
            const double q = c->stderr_robust[a] / c->stderr_[a];
            mean += q * q, count++;
        }
        ck_assert_msg(!c->mismatch && c->residuals_white, "seed %u: verdict mismatch on white noise", seed);
        for (int ch = 0; ch < c->nchan; ch++) {
            ck_assert_msg(fabs(c->rms[ch] / c->noise[ch] - 1) < 0.1, "seed %u channel %d: rms %g noise %g", seed, ch,
                          c->rms[ch], c->noise[ch]);
            ck_assert_msg(fabs(c->lag1[ch]) < 4 / sqrt(c->count[ch]), "seed %u channel %d: lag1 %g", seed, ch, c->lag1[ch]);
        }
        sid_free(c);
        free(x0);
        sid_problem_free(p);
        fixture_free(&f);
    }
    mean /= count;
    fprintf(stderr, "intervals: white noise, mean (se_robust / se)^2 = %.3f over %d\n", mean, count);
    ck_assert_msg(fabs(mean - 1) < 0.25, "mean (se_robust / se)^2 = %g on white noise", mean);
}
END_TEST

/* The nominal model (viscous friction and armature 30 % low) against the truth's log with a
 * little noise: the residuals are the smooth mismatch, lag 1 near 1 and far above the noise. */
START_TEST(mismatch_flagged)
{
    fixture f;
    fixture_make(&f, 4001, 1e-5, 1e-4, 3);
    sid_problem *p = problem(f.m, &f.log, 0.5, 1);
    double *x0 = true_starts(&f, 0.5);
    sid_covariance_result *c = sid_alloc(sizeof *c);
    sid_error err = {0};
    ck_assert_msg(sid_problem_covariance(p, f.theta, x0, f.n, f.idx, NULL, c, &err) == SID_OK, "%s", err.msg);
    ck_assert(c->mismatch);
    ck_assert(!c->residuals_white);
    ck_assert_int_ge(c->worst_lag1, 0);
    ck_assert_msg(c->lag1[c->worst_lag1] > 0.9, "lag1 %g", c->lag1[c->worst_lag1]);
    ck_assert_msg(c->rms_over_noise > SID_DIAG_RMS_RATIO, "rms over noise %g", c->rms_over_noise);
    sid_free(c);
    free(x0);
    sid_problem_free(p);
    fixture_free(&f);
}
END_TEST

/* Standard errors against the spread they claim to describe: S seeds of one truth, each log with
 * white noise of a different size relative to each channel's scale (1e-4 rad on q, 3e-2 rad/s on
 * qd: about 30 times as large relative to its scale on qd as on q), fitted by Levenberg-Marquardt
 * from the nominal model with start states estimated. Over the S x 6 estimates the mean of
 * ((fitted - truth) / stderr)^2 is 1 when the standard errors are right, for the classic ones
 * and (G = 20 windows) the robust ones; with one pooled sigma^2 it was far from 1 (printed:
 * the pooled standard errors from the same fit). Held: within a factor of 2 (a factor of
 * sqrt 2 in the standard error); S x 6 = 48 squares of standard normals have a mean within
 * [0.5, 1.6] with probability above 0.99 even if each seed's six were one. Then the same logs
 * with the truth's Coulomb friction tripled, which the fit cannot follow: every seed's report
 * must say model_mismatch. Measured: mean 1.31 classic, 1.46 robust, 2.02 with the pooled
 * sigma^2; 8 of 8 flagged. (With 3e-2 rad/s on qd the unweighted fit trades a smooth q misfit
 * for the qd noise, and the residuals are rightly not white: weight the rows by their noise.) */
START_TEST(stderr_matches_spread)
{
    enum { S = 8 };
    double z2 = 0, z2r = 0, z2p = 0;
    int count = 0, flagged = 0;
    for (unsigned seed = 1; seed <= S; seed++) {
        for (int mismatched = 0; mismatched < 2; mismatched++) {
            fixture f;
            fixture_make(&f, 2001, 0, 0, seed);
            if (mismatched) {
                int mask[1024] = {0};
                sid_model_param_match(f.m, "joints.*.friction.coulomb", mask);
                for (int i = 0; i < sid_model_nparam(f.m); i++)
                    if (mask[i]) f.truth[i] *= 3;
                sid_traj_free(f.log);
                f.log = tu_synth_log(f.m, f.truth, 2001, 1e-3, 0.4, 3);
            }
            tu_add_noise(f.log, 1e-3, 1e-2, 100 + seed);
            sid_problem *p = problem(f.m, &f.log, 0.1, 1);
            const int nx = sid_model_nq(f.m) + sid_model_nv(f.m), G = sid_problem_nwindows(p);
            double *x0 = malloc(sizeof(double) * (size_t)(G * nx)), lo[64], hi[64];
            sid_problem_start_states(p, f.theta, x0);
            for (int k = 0; k < f.n; k++) lo[k] = 0, hi[k] = HUGE_VAL;
            sid_fit_opts o;
            sid_fit_opts_defaults(&o);
            o.optimizer = SID_OPT_LM;
            o.max_iter = 40;
            o.nfree = f.n, o.idx = f.idx, o.lo = lo, o.hi = hi;
            sid_fit_result r;
            sid_error err = {0};
            ck_assert_msg(sid_fit(p, f.theta, x0, &o, &r, &err) == SID_OK, "%s", err.msg);
            sid_covariance_result *c = sid_alloc(sizeof *c);
            ck_assert_msg(sid_problem_covariance(p, f.theta, x0, f.n, f.idx, NULL, c, &err) == SID_OK, "%s", err.msg);
            if (mismatched) {
                flagged += c->mismatch;
            } else {
                ck_assert_msg(r.stop == SID_STOP_CONVERGED, "seed %u: %s", seed, r.message);
                ck_assert_msg(!c->mismatch, "seed %u: a matched fit flagged model_mismatch (loss %g -> %g, %s)", seed, r.loss0, r.loss, r.message);
                ck_assert(c->noise_per_channel);
                double R[64 * 64], lag[64], Cl[64 * 64], dof[64], Ap[64 * 64];
                dense_sandwich(p, &f, f.theta, x0, 1, R, lag, Cl, dof, Ap);
                for (int a = 0; a < f.n; a++) {
                    const int i = f.idx[a];
                    const double e = f.theta[i] - f.truth[i], t = c->t95_robust[a] / 1.96;
                    z2 += e * e / (c->stderr_[a] * c->stderr_[a]);
                    z2r += e * e / (t * t * c->stderr_robust[a] * c->stderr_robust[a]);
                    z2p += e * e / (c->sigma2 * Ap[a * f.n + a]);
                    count++;
                }
            }
            sid_free(c);
            free(x0);
            sid_problem_free(p);
            fixture_free(&f);
        }
    }
    z2 /= count, z2r /= count, z2p /= count;
    fprintf(stderr, "intervals: mean ((fitted - truth) / stderr)^2 over %d: classic %.3f, robust (t-scaled) %.3f, "
            "pooled sigma^2 %.3f; mismatch flagged %d of %d\n", count, z2, z2r, z2p, flagged, S);
    ck_assert_msg(z2 > 0.5 && z2 < 1.6, "classic: mean z^2 %g", z2);
    ck_assert_msg(z2r > 0.5 && z2r < 1.6, "robust: mean z^2 %g", z2r);
    ck_assert_int_eq(flagged, S);
}
END_TEST

/* Started at its own optimum a fit is converged, not no_progress (both optimizers): the loss
 * cannot fall, but every trial point simulates and none is better. */
START_TEST(at_optimum_converged)
{
    fixture f;
    fixture_make(&f, 2001, 1e-3, 1e-2, 11);
    sid_problem *p = problem(f.m, &f.log, 0.25, 0);
    const int np = sid_model_nparam(f.m);
    for (int opt = 0; opt < 2; opt++) {
        double lo[64], hi[64], *theta = malloc(sizeof(double) * (size_t)np);
        memcpy(theta, f.theta, sizeof(double) * (size_t)np);
        for (int k = 0; k < f.n; k++) lo[k] = 0, hi[k] = HUGE_VAL;
        sid_fit_opts o;
        sid_fit_opts_defaults(&o);
        o.optimizer = opt ? SID_OPT_LM : SID_OPT_LBFGS;
        o.nfree = f.n, o.idx = f.idx, o.lo = lo, o.hi = hi;
        sid_fit_result r;
        sid_error err = {0};
        ck_assert_msg(sid_fit(p, theta, NULL, &o, &r, &err) == SID_OK, "%s", err.msg);
        ck_assert_msg(r.stop == SID_STOP_CONVERGED && r.loss < 0.5 * r.loss0, "first fit: %s", r.message);
        ck_assert_msg(sid_fit(p, theta, NULL, &o, &r, &err) == SID_OK, "%s", err.msg);
        ck_assert_msg(r.stop == SID_STOP_CONVERGED, "optimizer %d from its optimum: %s (%s)", opt, sid_stop_str(r.stop),
                      r.message);
        free(theta);
    }
    sid_problem_free(p);
    fixture_free(&f);
}
END_TEST

Suite *intervals_suite(void)
{
    Suite *s = suite_create("intervals");
    TCase *tc = tcase_create("intervals");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, sandwich_matches_dense);
    tcase_add_test(tc, white_noise_sandwich_is_classic);
    tcase_add_test(tc, mismatch_flagged);
    tcase_add_test(tc, at_optimum_converged);
    suite_add_tcase(s, tc);
    /* 16 fits: about 7 s optimised, numerics rather than memory */
    TCase *spread = tcase_create("spread");
    tcase_set_tags(spread, "slow");
    tcase_set_timeout(spread, 300);
    tcase_add_test(spread, stderr_matches_spread);
    suite_add_tcase(s, spread);
    return s;
}
