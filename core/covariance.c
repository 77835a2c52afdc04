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
 * window's start state is eliminated as soon as its rows are in.
 *
 * sigma^2 (J^T J)^-1 assumes white residuals: true when the model fits and the noise is
 * independent, false when the model does not fit (a systematic error is smooth from sample to
 * sample). Two checks of that assumption come from the same pass: each residual channel's lag-1
 * autocorrelation, and its RMS against the noise the log itself shows (the second difference of
 * a logged coordinate, q_{k+1} - 2 q_k + q_{k-1}, has variance 6 sigma^2 for white noise of
 * variance sigma^2 plus h^4 q''''-size signal, so it estimates the noise from above).
 *
 * Thresholds. Lag 1 above SID_DIAG_LAG1 = 0.3: for AR(1) residuals and smooth regressors the
 * variance of a fitted parameter is (1 + rho) / (1 - rho) times the white-noise one, 1.86 at
 * 0.3, so a nominal 95 % interval covers about 85 %; it must also be outside the white-noise
 * band (4 / sqrt(n), four standard deviations, so that a few dozen channels do not raise false
 * alarms) and the residual must not be far below the noise (an exact fit's rounding residue is
 * smooth too, and harmless: RMS above half the noise level). An RMS above SID_DIAG_RMS_RATIO = 3
 * times a noise level that is itself an overestimate cannot be measurement noise.
 *
 * The robust interval is the cluster-robust sandwich over windows, G/(G-1) A+ (sum_w g_w g_w^T)
 * A+ (Liang and Zeger 1986; G/(G-1) is the usual CR1 small-sample factor): windows are the
 * clusters because each has its own start state, which cuts the correlation at its start; on
 * white residuals its expectation is sigma^2 A+ again, the classic covariance. */
#include "linalg.h"
#include "normal.h"

#include <math.h>
#include <string.h>

/* Covariance and null directions from the normal matrix A = J^T J (n x n, destroyed), the
 * residual sum of squares rr and the degrees of freedom. */
static sid_status from_normal(int n, double *A, const double *M, int nwin, double rr, int dof, sid_covariance_result *out,
                              sid_error *err)
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
    /* sandwich: D P (D M D) P D, P the scaled pseudo-inverse; V is free again (n x n) */
    out->nwindows = nwin;
    const double cr1 = nwin > 1 ? (double)nwin / (nwin - 1) : 1;
    for (int a = 0; a < n; a++)   /* V = P (D M D) */
        for (int b = 0; b < n; b++) {
            double v = 0;
            for (int c = 0; c < n; c++) v += P[a * n + c] * dscale[c] * M[c * n + b] * dscale[b];
            V[a * n + b] = v;
        }
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) {
            double v = 0;
            for (int c = 0; c < n; c++) v += V[a * n + c] * P[c * n + b];
            out->cov_robust[a * n + b] = cr1 * dscale[a] * dscale[b] * v;
        }
    for (int a = 0; a < n; a++)
        out->stderr_robust[a] = out->identifiable[a] ? sqrt(fmax(out->cov_robust[a * n + a], 0)) : HUGE_VAL;
    sid_free(V);
    return SID_OK;
}

/* The residual diagnostics from the per-channel sums ch (nchan x 3, as sid_normal_extra). */
static void diagnose(const sid_problem *p, const double *ch, sid_covariance_result *out)
{
    const sid_model *m = p->m;
    const int nq = m->nqo, nv = m->nvo, nc = nq + nv;   /* the logged coordinates (backlash.h) */
    out->nchan = nc;
    out->worst_lag1 = out->worst_ratio = -1;
    out->rms_over_noise = 0;
    out->residuals_white = 1;
    for (int c = 0; c < nc; c++) {
        /* the log's noise: sum of squared second differences over every log that has the channel */
        double d2 = 0;
        long nd = 0;
        for (int l = 0; l < p->nlog; l++) {
            const sid_traj *tr = p->logs[l];
            const double *y = c < nq ? tr->q : tr->qd;
            const int stride = c < nq ? nq : nv, i = c < nq ? c : c - nq;
            if (!y) continue;
            for (int k = 1; k + 1 < tr->n; k++) {
                const double d = y[(size_t)(k + 1) * stride + i] - 2 * y[(size_t)k * stride + i] + y[(size_t)(k - 1) * stride + i];
                d2 += d * d;
                nd++;
            }
        }
        const double *cs = ch + 3 * c;
        const int cnt = (int)cs[2];
        const double w = c < nq ? p->o.weight_q : p->o.weight_qd, sc = c < nq ? p->sq[c] : p->sqd[c - nq];
        out->count[c] = cnt;
        out->noise[c] = nd ? sqrt(d2 / (6.0 * (double)nd)) : 0;
        if (!cnt || !(w > 0)) continue;
        const double rms_scaled = sqrt(cs[0] / cnt);
        out->rms[c] = rms_scaled * sc / sqrt(w);
        out->lag1[c] = cs[0] > 0 ? cs[1] / cs[0] : 0;
        out->correlated[c] = out->lag1[c] > SID_DIAG_LAG1 && out->lag1[c] > 4 / sqrt((double)cnt) &&
                             out->rms[c] > 0.5 * out->noise[c] && rms_scaled > 1e-10;
        if (out->correlated[c]) out->residuals_white = 0;
        if (out->worst_lag1 < 0 || out->lag1[c] > out->lag1[out->worst_lag1]) out->worst_lag1 = c;
        if (out->noise[c] > 0 && out->rms[c] / out->noise[c] > out->rms_over_noise) {
            out->rms_over_noise = out->rms[c] / out->noise[c];
            out->worst_ratio = c;
        }
    }
    out->mismatch = !out->residuals_white || out->rms_over_noise > SID_DIAG_RMS_RATIO;
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

/* After window w's rows: eliminate its start state, A -= C^T B+ C (Schur complement), and add
 * the window's score with the start state eliminated, g = gw - (B+ C)^T gs, to M as g g^T. */
static sid_status eliminate_start(void *ctx, sid_normal_sums *S, int w, sid_error *err)
{
    const int n = S->n, ns = S->ns;
    (void)ctx, (void)w, (void)err;
    if (ns) {
        pinv_solve(ns, S->B, n, S->C, S->X, S->V);
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++)
                for (int k = 0; k < ns; k++) S->A[a * n + b] -= S->C[k * n + a] * S->X[k * n + b];
        for (int a = 0; a < n; a++)
            for (int k = 0; k < ns; k++) S->gw[a] -= S->X[k * n + a] * S->gs[k];
    }
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) S->M[a * n + b] += S->gw[a] * S->gw[b];
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
    const int nc = sid_model_nq(m) + sid_model_nv(m);
    double *A = sid_alloc(sizeof(double) * ((size_t)n * (size_t)n * 2 + 3 * (size_t)nc)), rr = 0;
    if (!A) return sid_error_set(err, SID_ERR_NOMEM, "out of memory");
    sid_normal_extra ex = { A + n * n, nc, A + 2 * n * n };
    sid_status s = sid_normal_run_extra(p, theta, x0, n, idx, interrupt, 1, eliminate_start, NULL, A, NULL, &rr, &ex, err);
    if (s == SID_ERR_INTERRUPTED) sid_error_prefix(err, "covariance");
    if (!s) s = from_normal(n, A, ex.M, nwin, rr, (int)(nres - n - (long)nwin * ns), out, err);
    if (!s) diagnose(p, ex.chan, out);
    sid_free(A);
    return s;
}
