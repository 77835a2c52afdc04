/* covariance.c — what the data determine: parameter covariance sigma^2 (J^T J)^-1 from the
 * exact residual Jacobian, and the near-null directions of J that the data cannot resolve.
 *
 * J^T J is first scaled to unit diagonal (C = D J^T J D, D = diag(1 / |J_k|)) so that its
 * eigenvalues compare parameters of different units; eigenvectors with eigenvalue below
 * SID_NULL_RATIO times the largest are combinations the data do not determine. The covariance
 * is the pseudo-inverse on the rest; a parameter that takes part in a null direction has no
 * standard error (HUGE_VAL) and is reported as not identifiable, never as a number. */
#include "sid.h"

#include <math.h>
#include <string.h>

/* Cyclic Jacobi eigen-decomposition of the symmetric n x n A (destroyed): eigenvalues in ev,
 * eigenvectors in the columns of V. Robust and accurate for the small matrices here. */
static void jacobi_eigen(double *A, int n, double *ev, double *V)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) V[i * n + j] = i == j;
    for (int sweep = 0; sweep < 100; sweep++) {
        double off = 0, diag = 0;
        for (int i = 0; i < n; i++) {
            diag += A[i * n + i] * A[i * n + i];
            for (int j = i + 1; j < n; j++) off += A[i * n + j] * A[i * n + j];
        }
        if (off <= 1e-30 * diag) break;
        for (int p = 0; p < n; p++)
            for (int q = p + 1; q < n; q++) {
                const double apq = A[p * n + q];
                if (apq == 0) continue;
                const double tau = (A[q * n + q] - A[p * n + p]) / (2 * apq);
                const double t = (tau >= 0 ? 1 : -1) / (fabs(tau) + sqrt(1 + tau * tau));
                const double c = 1 / sqrt(1 + t * t), s = t * c;
                for (int k = 0; k < n; k++) {
                    const double akp = A[k * n + p], akq = A[k * n + q];
                    A[k * n + p] = c * akp - s * akq;
                    A[k * n + q] = s * akp + c * akq;
                }
                for (int k = 0; k < n; k++) {
                    const double apk = A[p * n + k], aqk = A[q * n + k];
                    A[p * n + k] = c * apk - s * aqk;
                    A[q * n + k] = s * apk + c * aqk;
                }
                for (int k = 0; k < n; k++) {
                    const double vkp = V[k * n + p], vkq = V[k * n + q];
                    V[k * n + p] = c * vkp - s * vkq;
                    V[k * n + q] = s * vkp + c * vkq;
                }
            }
    }
    for (int i = 0; i < n; i++) ev[i] = A[i * n + i];
}

sid_status sid_covariance(int nres, int nfree, const double *r, const double *J, sid_covariance_result *out,
                          sid_error *err)
{
    const int n = nfree;
    memset(out, 0, sizeof *out);
    if (n < 1 || n > SID_MAX_FREE) return sid_error_set(err, SID_ERR_INPUT, "covariance: %d free parameters (1..%d)", n, SID_MAX_FREE);
    double *A = sid_alloc(sizeof(double) * (size_t)(3 * n * n + 2 * n));
    if (!A) return sid_error_set(err, SID_ERR_NOMEM, "out of memory");
    double *V = A + n * n, *P = V + n * n, *dscale = P + n * n, *ev = dscale + n;
    double rr = 0;
    for (int i = 0; i < nres; i++) rr += r[i] * r[i];
    for (size_t i = 0; i < (size_t)nres; i++) {
        const double *row = J + i * (size_t)n;
        for (int a = 0; a < n; a++)
            for (int b = a; b < n; b++) A[a * n + b] += row[a] * row[b];
    }
    for (int a = 0; a < n; a++)
        for (int b = 0; b < a; b++) A[a * n + b] = A[b * n + a];
    for (int a = 0; a < n; a++) dscale[a] = A[a * n + a] > 0 ? 1 / sqrt(A[a * n + a]) : 0;
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) A[a * n + b] *= dscale[a] * dscale[b];
    jacobi_eigen(A, n, ev, V);
    double emax = 0;
    for (int i = 0; i < n; i++) emax = fmax(emax, ev[i]);
    out->dof = nres - n;
    out->sigma2 = out->dof > 0 ? rr / out->dof : 0;
    out->cond = 0;
    for (int a = 0; a < n; a++) out->identifiable[a] = dscale[a] > 0;
    /* pseudo-inverse of C on the determined directions; null directions recorded */
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
    sid_free(A);
    return SID_OK;
}
