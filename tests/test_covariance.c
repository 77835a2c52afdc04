/* test_covariance.c — the covariance's sums: the same to the bit for any number of threads,
 * and a window longer than one block of rows summed as its whole Jacobian would be (its
 * per-channel noise variances and the covariance they give against a dense computation). */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

Suite *covariance_suite(void);

typedef struct {
    sid_model *m;
    double *theta, *truth;
    sid_traj *log;
    int idx[64], n;
} fixture;

/* A 3-joint robot with friction, motors and offsets, its log simulated with the friction and
 * motor constants moved, the moved parameters free (and the offsets, at zero). */
static void fixture_make(fixture *f, int samples)
{
    sid_robot_desc *d = tu_random_robot(41, 3, TU_FRICTION | TU_MOTORS | TU_OFFSETS);
    sid_error err = {0};
    ck_assert_msg(sid_model_create(&f->m, &f->theta, d, &err) == SID_OK, "%s", err.msg);
    tu_desc_free(d);
    const int np = sid_model_nparam(f->m);
    int mask[1024] = {0};
    sid_model_param_match(f->m, "joints.*.friction.viscous", mask);
    sid_model_param_match(f->m, "joints.*.armature", mask);
    sid_model_param_match(f->m, "joints.*.offset", mask);
    f->truth = malloc(sizeof(double) * (size_t)np);
    memcpy(f->truth, f->theta, sizeof(double) * (size_t)np);
    f->n = 0;
    for (int i = 0; i < np; i++)
        if (mask[i]) f->idx[f->n++] = i, f->truth[i] *= 1.3;
    ck_assert_int_ge(f->n, 6);
    f->log = tu_synth_log(f->m, f->truth, samples, 1e-3, 0.4, 3);
    tu_add_noise(f->log, 1e-3, 1e-2, 5);
}

static void fixture_free(fixture *f)
{
    sid_traj_free(f->log);
    free(f->truth);
    sid_model_free(f->m);
    sid_free(f->theta);
}

static sid_problem *problem(const fixture *f, double window, int estimate, int threads, double **x0)
{
    sid_loss_opts o;
    sid_loss_opts_defaults(&o);
    o.window = window;
    o.estimate_start = estimate;
    o.threads = threads;
    sid_problem *p;
    sid_error err = {0};
    ck_assert_msg(sid_problem_create(&p, f->m, (const sid_traj *const *)&f->log, 1, &o, &err) == SID_OK, "%s", err.msg);
    *x0 = NULL;
    if (estimate) {
        *x0 = malloc(sizeof(double) * (size_t)(sid_problem_nwindows(p) * (sid_model_nq(f->m) + sid_model_nv(f->m))));
        sid_problem_start_states(p, f->theta, *x0);
    }
    return p;
}

START_TEST(same_bits_for_any_thread_count)
{
    /* 40 windows in 40 chunks, start states eliminated per window */
    fixture f;
    fixture_make(&f, 4001);
    sid_covariance_result *c[3];
    for (int t = 0; t < 3; t++) {
        double *x0;
        sid_problem *p = problem(&f, 0.1, 1, t + 1, &x0);
        sid_error err = {0};
        c[t] = sid_alloc(sizeof *c[t]);
        ck_assert_msg(sid_problem_covariance(p, f.truth, x0, f.n, f.idx, NULL, c[t], &err) == SID_OK, "%s", err.msg);
        free(x0);
        sid_problem_free(p);
    }
    const size_t nn = (size_t)f.n * (size_t)f.n;
    for (int t = 1; t < 3; t++) {
        ck_assert(c[t]->sigma2 == c[0]->sigma2 && c[t]->cond == c[0]->cond && c[t]->dof == c[0]->dof);
        ck_assert(!memcmp(c[t]->cov, c[0]->cov, sizeof(double) * nn));
        ck_assert(!memcmp(c[t]->stderr_, c[0]->stderr_, sizeof(double) * (size_t)f.n));
        ck_assert_int_eq(c[t]->nnull, c[0]->nnull);
        /* the robust interval, its degrees of freedom and the diagnostics' noise levels too */
        ck_assert(!memcmp(c[t]->cov_robust, c[0]->cov_robust, sizeof(double) * nn));
        ck_assert(!memcmp(c[t]->dof_robust, c[0]->dof_robust, sizeof(double) * (size_t)f.n));
        ck_assert(!memcmp(c[t]->t95_robust, c[0]->t95_robust, sizeof(double) * (size_t)f.n));
        ck_assert(!memcmp(c[t]->sigma2_channel, c[0]->sigma2_channel, sizeof(double) * (size_t)c[0]->nchan));
        ck_assert(!memcmp(c[t]->noise, c[0]->noise, sizeof(double) * (size_t)c[0]->nchan));
    }
    for (int t = 0; t < 3; t++) sid_free(c[t]);
    fixture_free(&f);
}
END_TEST

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

START_TEST(long_window_summed_in_blocks)
{
    /* one window of 40 000 samples: 240 000 rows, several blocks of rows */
    fixture f;
    fixture_make(&f, 40001);
    double *x0;
    sid_problem *p = problem(&f, 0, 0, 0, &x0);
    const int rows = sid_problem_window_rows(p, 0), n = f.n;
    ck_assert_int_gt((long)rows * n, 4L << 18);
    double *r = malloc(sizeof(double) * (size_t)rows), *J = malloc(sizeof(double) * (size_t)rows * (size_t)n);
    /* per residual channel (a sample's rows: q, then qd, here every coordinate) J_c^T J_c and |r_c|^2 */
    const int nch = sid_model_nq(f.m) + sid_model_nv(f.m);
    double *A = calloc((size_t)(n * n), sizeof(double)), *Ai = malloc(sizeof(double) * (size_t)(n * n)), rr = 0;
    double *Mc = calloc((size_t)(nch * n * n), sizeof(double)), rc[64] = {0}, cnt[64] = {0};
    sid_error err = {0};
    ck_assert_msg(sid_problem_window_jacobian(p, f.truth, NULL, 0, n, f.idx, r, J, &err) == SID_OK, "%s", err.msg);
    ck_assert_int_eq(rows % nch, 0);
    for (int i = 0; i < rows; i++) {
        const int ch = i % nch;
        rr += r[i] * r[i];
        rc[ch] += r[i] * r[i], cnt[ch] += 1;
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++) {
                A[a * n + b] += J[(size_t)i * n + a] * J[(size_t)i * n + b];
                Mc[(size_t)ch * n * n + a * n + b] += J[(size_t)i * n + a] * J[(size_t)i * n + b];
            }
    }
    sid_covariance_result *c = sid_alloc(sizeof *c);
    ck_assert_msg(sid_problem_covariance(p, f.truth, NULL, n, f.idx, NULL, c, &err) == SID_OK, "%s", err.msg);
    /* |r|^2 in the whole window's row order, to the bit */
    ck_assert_int_eq(c->dof, rows - n);
    ck_assert(c->sigma2 == rr / (rows - n));
    ck_assert(c->noise_per_channel);
    invert(n, A, Ai);
    /* A^-1 (sum_c sigma_c^2 J_c^T J_c) A^-1, sigma_c^2 = |r_c|^2 / n_c * rows / dof */
    double *W = calloc((size_t)(n * n), sizeof(double));
    for (int ch = 0; ch < nch; ch++) {
        const double s2 = rc[ch] / cnt[ch] * rows / (rows - n);
        ck_assert_msg(tu_rel_err(c->sigma2_channel[ch], s2, 0) < 1e-12, "channel %d: sigma^2 %.15g vs %.15g", ch,
                      c->sigma2_channel[ch], s2);
        for (int i = 0; i < n * n; i++) W[i] += s2 * Mc[(size_t)ch * n * n + i];
    }
    for (int a = 0; a < n; a++) {
        ck_assert(c->identifiable[a]);
        double v = 0;
        for (int x = 0; x < n; x++)
            for (int y = 0; y < n; y++) v += Ai[a * n + x] * W[x * n + y] * Ai[y * n + a];
        const double se = sqrt(v);
        ck_assert_msg(tu_rel_err(c->stderr_[a], se, 0) < 1e-8, "%s: %.15g vs %.15g", sid_model_param(f.m, f.idx[a])->name,
                      c->stderr_[a], se);
    }
    free(W);
    free(Mc);
    sid_free(c);
    free(r);
    free(J);
    free(A);
    free(Ai);
    sid_problem_free(p);
    fixture_free(&f);
}
END_TEST

Suite *covariance_suite(void)
{
    Suite *s = suite_create("covariance");
    TCase *tc = tcase_create("sums");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, same_bits_for_any_thread_count);
    tcase_add_test(tc, long_window_summed_in_blocks);
    suite_add_tcase(s, tc);
    return s;
}
