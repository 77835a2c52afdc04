/* covariance.c — what the data determine: parameter covariance sigma^2 (J^T J)^-1 from the
 * exact residual Jacobian, and the near-null directions of J that the data cannot resolve.
 *
 * J^T J is first scaled to unit diagonal (C = D J^T J D, D = diag(1 / |J_k|)) so that its
 * eigenvalues compare parameters of different units; eigenvectors with eigenvalue below
 * SID_NULL_RATIO times the largest are combinations the data do not determine. The covariance
 * is the pseudo-inverse on the rest; a parameter that takes part in a null direction has no
 * standard error (HUGE_VAL) and is reported as not identifiable, never as a number.
 *
 * J is never held: normal.c sums each window's rows into J^T J as they arrive, so memory is
 * O(P^2) per thread plus one block, the same to the bit for any number of threads; each
 * window's start state is eliminated as soon as its rows are in. */
#include "linalg.h"
#include "normal.h"

#include <math.h>
#include <string.h>

/* Covariance and null directions from the normal matrix A = J^T J (n x n, destroyed), the
 * residual sum of squares rr and the degrees of freedom. */
static sid_status from_normal(int n, double *A, double rr, int dof, sid_covariance_result *out, sid_error *err)
{
    memset(out, 0, sizeof *out);
    double *V = sid_alloc(sizeof(double) * (size_t)(2 * n * n + 2 * n));
    if (!V) return sid_error_set(err, SID_ERR_NOMEM, "out of memory");
    double *P = V + n * n, *dscale = P + n * n, *ev = dscale + n;
    for (int a = 0; a < n; a++) dscale[a] = A[a * n + a] > 0 ? 1 / sqrt(A[a * n + a]) : 0;
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) A[a * n + b] *= dscale[a] * dscale[b];
    /* LAPACK: 0.7 s where the cyclic Jacobi takes 17 s at 693 parameters */
    if (sid_sym_eigen(A, n, ev, V)) {
        sid_free(V);
        return sid_error_set(err, SID_ERR_NUMERIC, "covariance: the eigen-decomposition of J^T J failed");
    }
    double emax = 0;
    for (int i = 0; i < n; i++) emax = fmax(emax, ev[i]);
    out->dof = dof;
    out->sigma2 = dof > 0 ? rr / dof : 0;
    for (int a = 0; a < n; a++) out->identifiable[a] = dscale[a] > 0;
    /* pseudo-inverse of the scaled matrix on the determined directions; null ones recorded */
    double emin_kept = emax;
    for (int i = 0; i < n; i++) {
        const double ratio = emax > 0 ? ev[i] / emax : 0;
        if (ratio < SID_NULL_RATIO) {
            const int k = out->nnull++;
            out->null_ratio[k] = ratio > 0 ? ratio : 0;
            for (int a = 0; a < n; a++) {
                out->null_dir[k * n + a] = V[a * n + i];
                if (fabs(V[a * n + i]) > 0.1) out->identifiable[a] = 0;
            }
            continue;
        }
        emin_kept = fmin(emin_kept, ev[i]);
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++) P[a * n + b] += V[a * n + i] * V[b * n + i] / ev[i];
    }
    out->cond = emin_kept > 0 ? emax / emin_kept : HUGE_VAL;
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) out->cov[a * n + b] = out->sigma2 * dscale[a] * dscale[b] * P[a * n + b];
    for (int a = 0; a < n; a++) out->stderr_[a] = out->identifiable[a] ? sqrt(fmax(out->cov[a * n + a], 0)) : HUGE_VAL;
    sid_free(V);
    return SID_OK;
}

/* B+ C for the symmetric positive semi-definite B (m x m, destroyed) and C (m x n), into X;
 * V: m x m + m doubles of scratch. */
static void pinv_solve(int m, double *B, int n, const double *C, double *X, double *V)
{
    double *ev = V + m * m, emax = 0;
    sid_jacobi_eigen(B, m, ev, V);
    for (int i = 0; i < m; i++) emax = fmax(emax, ev[i]);
    memset(X, 0, sizeof(double) * (size_t)(m * n));
    for (int i = 0; i < m; i++) {
        if (!(ev[i] > 1e-14 * emax)) continue;
        for (int b = 0; b < n; b++) {
            double vc = 0;
            for (int k = 0; k < m; k++) vc += V[k * m + i] * C[k * n + b];
            for (int a = 0; a < m; a++) X[a * n + b] += V[a * m + i] * vc / ev[i];
        }
    }
}

/* After window w's rows: eliminate its start state, A -= C^T B+ C (Schur complement). */
static sid_status eliminate_start(void *ctx, sid_normal_sums *S, int w, sid_error *err)
{
    const int n = S->n, ns = S->ns;
    (void)ctx, (void)w, (void)err;
    if (!ns) return SID_OK;
    pinv_solve(ns, S->B, n, S->C, S->X, S->V);
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++)
            for (int k = 0; k < ns; k++) S->A[a * n + b] -= S->C[k * n + a] * S->X[k * n + b];
    return SID_OK;
}

sid_status sid_problem_covariance(sid_problem *p, const double *theta, const double *x0, int nfree, const int *idx,
                                  volatile const int *interrupt, sid_covariance_result *out, sid_error *err)
{
    const sid_model *m = sid_problem_model(p);
    const int n = nfree, nx = sid_model_nq(m) + sid_model_nv(m), ns = sid_problem_estimates_start(p) ? nx : 0;
    const int nwin = sid_problem_nwindows(p);
    if (n < 1 || n > SID_MAX_FREE) return sid_error_set(err, SID_ERR_INPUT, "covariance: %d free parameters (1..%d)", n, SID_MAX_FREE);
    long nres = 0;
    for (int w = 0; w < nwin; w++) nres += sid_problem_window_rows(p, w);
    double *A = sid_alloc(sizeof(double) * (size_t)n * (size_t)n), rr = 0;
    if (!A) return sid_error_set(err, SID_ERR_NOMEM, "out of memory");
    sid_status s = sid_normal_run(p, theta, x0, n, idx, interrupt, 1, eliminate_start, NULL, A, NULL, &rr, err);
    if (s == SID_ERR_INTERRUPTED) sid_error_prefix(err, "covariance");
    if (!s) s = from_normal(n, A, rr, (int)(nres - n - (long)nwin * ns), out, err);
    sid_free(A);
    return s;
}
