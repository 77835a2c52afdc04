/* covariance.c — what the data determine: parameter covariance from the exact residual
 * Jacobian, and the near-null directions of J that the data cannot resolve.
 *
 * J^T J is first scaled to unit diagonal (C = D J^T J D, D = diag(1 / |J_k|)) so that its
 * eigenvalues compare parameters of different units; eigenvectors with eigenvalue below
 * SID_NULL_RATIO times the largest are combinations the data do not determine. The covariance
 * is built on the pseudo-inverse A+ on the rest; a parameter that takes part in a null
 * direction has no standard error (HUGE_VAL) and is reported as not identifiable, never as a
 * number.
 *
 * Classic covariance. The rows are residuals of different channels (each logged coordinate's
 * position or velocity, divided by its scale), whose noise differs relative to their scales:
 * 1 mm on a 2 cm bounce and 1 mm on a 1 m slide are not one variance. One pooled sigma^2
 * (J^T J)^-1 then overstates some parameters' errors and understates others' (by up to the
 * square root of the number of channels). For white noise of variance sigma_c^2 on channel
 * c the unweighted least-squares estimate has exactly A+ (sum_c sigma_c^2 J_c^T J_c) A+ (J_c:
 * the channel's rows, start states projected out), so that is the classic covariance, with
 * sigma_c^2 = (|r_c|^2 / n_c) nres / dof (the degrees of freedom shared in proportion to the
 * rows). Equal variances give sigma^2 A+ again.
 *
 * J is never held: normal.c sums each window's rows into J^T J as they arrive, so memory is
 * O(P^2) per thread plus one block, the same to the bit for any number of threads; each
 * window's start state is eliminated as soon as its rows are in.
 *
 * The classic covariance assumes white residuals: true when the model fits and the noise is
 * independent, false when the model does not fit (a systematic error is smooth from sample to
 * sample). Two checks of that assumption come from the same pass: each residual channel's lag-1
 * autocorrelation, and its RMS against the noise the log itself shows (the second difference of
 * a logged coordinate, q_{k+1} - 2 q_k + q_{k-1}, is N(0, 6 sigma^2) for white noise of
 * variance sigma^2 plus the signal's h^2 q'', so its median size estimates the noise, from
 * above where the signal is fast).
 *
 * Thresholds. |Lag 1| above SID_DIAG_LAG1 = 0.3: for AR(1) residuals and smooth regressors the
 * variance of a fitted parameter is (1 + rho) / (1 - rho) times the white-noise one, 1.86 at
 * 0.3, so a nominal 95 % interval covers about 85 %; it must also be outside the white-noise
 * band (4 / sqrt(n), four standard deviations, so that a few dozen channels do not raise false
 * alarms) and the residual must not be far below the noise (an exact fit's rounding residue is
 * smooth too, and harmless: RMS above half the noise level). An RMS above SID_DIAG_RMS_RATIO = 3
 * times a noise level that is itself an overestimate cannot be measurement noise.
 *
 * The robust interval is the cluster-robust sandwich over windows, G/(G-1) A+ (sum_w g_w g_w^T)
 * A+ (Liang and Zeger 1986; G/(G-1) is the usual CR1 small-sample factor, and for windows
 * that carry equal information exactly the bias of the scores' outer products, which lose
 * A_w A+ A_w each to the fit): windows are the clusters because each has its own start state,
 * which cuts the correlation at its start; on white residuals its expectation is the classic
 * covariance. It is estimated from G pieces, fewer in effect when a few windows carry a
 * parameter, so its interval takes the Student t quantile on Bell and McCaffrey's degrees of
 * freedom (robust_dof) rather than 1.96 (4 degrees of freedom: 2.78). CR2's per-window leverage correction would need each window's
 * (I - A_w A+)^(-1/2) after the pass; G/(G-1) is its equal-windows value. */
#include "linalg.h"
#include "normal.h"
#include "student_t.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* Memory and work limits of the refinements (beyond them: the pooled sigma^2, and G - 1 for
 * the robust interval's degrees of freedom): each channel's share of J^T J per thread,
 * nchan n^2 doubles; every window's reduced J^T J, G n^2 doubles and G n^3 operations. */
#define COV_CHANNEL_DOUBLES ((size_t)1 << 21)
#define COV_WINDOW_DOUBLES ((size_t)1 << 22)
#define COV_DOF_WORK 3e8

/* What the window callback needs: each window's reduced J^T J is kept for the degrees of
 * freedom as the running sum of its chunk after it (Acum, G x n x n, or NULL). */
typedef struct {
    int n;
    double *Acum;
} cov_ctx;

/* The bread of a sandwich estimate: the pseudo-inverse P (n x n) of the scaled normal matrix
 * and the scaling D = dscale (n). */
typedef struct {
    int n;
    const double *P, *dscale;
} bread;

/* out = scale D P (D M D) P D; T: n x n scratch. */
static void sandwich(const bread *br, const double *M, double scale, double *out, double *T)
{
    const int n = br->n;
    const double *P = br->P, *dscale = br->dscale;
    for (int a = 0; a < n; a++)   /* T = P (D M D) */
        for (int b = 0; b < n; b++) {
            double v = 0;
            for (int c = 0; c < n; c++) v += P[a * n + c] * dscale[c] * M[c * n + b] * dscale[b];
            T[a * n + b] = v;
        }
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) {
            double v = 0;
            for (int c = 0; c < n; c++) v += T[a * n + c] * P[c * n + b];
            out[a * n + b] = scale * dscale[a] * dscale[b] * v;
        }
}

/* Degrees of freedom of the robust variance of parameter k (Bell and McCaffrey 2002, the
 * Satterthwaite approximation): under the working model of white residuals of one variance,
 * the CR1 estimate of a_k^T cov a_k (a_k = A+ e_k) is a quadratic form in the windows'
 * scores, sum_w (a_k^T g_w)^2, with g_w = s_w - A_w A+ s (s_w independent, cov A_w, s their
 * sum), so (a_k^T g_w)_w has covariance O = diag(lambda_w) - Z^T A+ Z, lambda_w = a_k^T A_w a_k,
 * Z's columns z_w = A_w a_k; its dof is tr(O)^2 / tr(O^2). Equal windows give G - 1; one
 * window that carries most of a parameter's information gives close to 1, and t quantiles
 * widen the interval accordingly. Aw: the G reduced window blocks; Ap = A+ (n x n); z, K, T:
 * scratch (G n, n x n, n x n). */
typedef struct {
    int n, G;
    const double *Aw, *Ap;
    double *z, *K, *T;
} dof_work;

static double robust_dof(const dof_work *dw, int k)
{
    const int n = dw->n, G = dw->G;
    const double *Aw = dw->Aw, *Ap = dw->Ap;
    double *z = dw->z, *K = dw->K, *T = dw->T;
    const double *a = Ap + (size_t)k * (size_t)n;   /* A+ is symmetric: row k is a_k */
    double trO = 0, sl2 = 0, slm = 0;
    memset(K, 0, sizeof(double) * (size_t)(n * n));
    for (int w = 0; w < G; w++) {
        const double *Ak = Aw + (size_t)w * (size_t)(n * n);
        double lam = 0, mww = 0;
        for (int i = 0; i < n; i++) {
            double v = 0;
            for (int j = 0; j < n; j++) v += Ak[i * n + j] * a[j];
            z[i] = v;
            lam += a[i] * v;
        }
        for (int i = 0; i < n; i++) {
            double v = 0;
            for (int j = 0; j < n; j++) v += Ap[i * n + j] * z[j];
            mww += z[i] * v;
            for (int j = 0; j < n; j++) K[i * n + j] += z[i] * z[j];
        }
        trO += lam - mww;
        sl2 += lam * lam;
        slm += lam * mww;
    }
    for (int i = 0; i < n; i++)   /* T = A+ K; sum_wv m_wv^2 = tr(T T) */
        for (int j = 0; j < n; j++) {
            double v = 0;
            for (int c = 0; c < n; c++) v += Ap[i * n + c] * K[c * n + j];
            T[i * n + j] = v;
        }
    double mm = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) mm += T[i * n + j] * T[j * n + i];
    const double trO2 = sl2 - 2 * slm + mm;
    const double dof = trO2 > 0 ? trO * trO / trO2 : G - 1;
    return fmin(fmax(dof, 1), G - 1);
}

/* What a covariance is computed from: the normal matrix A = J^T J (n x n, destroyed), the
 * normal pass's extra sums (the robust meat M, each channel's share of J^T J Mc, or NULL: one
 * sigma^2, and the channels' residual sums), every window's reduced J^T J Aw (or NULL), the
 * residual sum of squares rr, the number of rows nres and the degrees of freedom. */
typedef struct {
    int n;
    double *A;
    const sid_normal_extra *ex;
    const double *Aw;
    int nwin;
    double rr;
    long nres;
    int dof;
} cov_sums;

/* Covariance and null directions from the sums. */
static sid_status from_normal(const cov_sums *cs, sid_covariance_result *out, sid_error *err)
{
    const int n = cs->n, nchan = cs->ex->nchan, nwin = cs->nwin, dof = cs->dof;
    double *A = cs->A;
    const double *M = cs->ex->M, *Mc = cs->ex->Mc, *ch = cs->ex->chan, *Aw = cs->Aw, rr = cs->rr;
    const long nres = cs->nres;
    memset(out, 0, sizeof *out);
    double *V = sid_alloc(sizeof(double) * (size_t)(4 * n * n + 3 * n));
    if (!V) return sid_error_set(err, SID_ERR_NOMEM, "out of memory");
    double *P = V + n * n, *Mw = P + n * n, *Ap = Mw + n * n, *dscale = Ap + n * n, *ev = dscale + n, *z = ev + n;
    memset(P, 0, sizeof(double) * (size_t)(n * n));
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
        for (int b = 0; b < n; b++) Ap[a * n + b] = dscale[a] * dscale[b] * P[a * n + b];
    /* classic: each channel's own noise variance, dof-corrected in proportion to its rows,
     * sigma_c^2 = (rr_c / n_c) nres / dof, and A+ (sum_c sigma_c^2 J_c^T J_c) A+; with one
     * variance on every channel it is sigma^2 A+ again */
    out->noise_per_channel = Mc != NULL && dof > 0;
    if (out->noise_per_channel) {
        memset(Mw, 0, sizeof(double) * (size_t)(n * n));
        for (int c = 0; c < nchan; c++) {
            const double cnt = ch[3 * c + 2];
            if (!(cnt > 0)) continue;
            const double s2 = ch[3 * c] / cnt * (double)nres / dof;
            if (c < SID_MAX_CHANNELS) out->sigma2_channel[c] = s2;
            const double *Mk = Mc + (size_t)c * (size_t)(n * n);
            for (int i = 0; i < n * n; i++) Mw[i] += s2 * Mk[i];
        }
        sandwich(&(bread){n, P, dscale}, Mw, 1, out->cov, V);
    } else {
        for (int i = 0; i < n * n; i++) out->cov[i] = out->sigma2 * Ap[i];
    }
    for (int a = 0; a < n; a++) out->stderr_[a] = out->identifiable[a] ? sqrt(fmax(out->cov[a * n + a], 0)) : HUGE_VAL;
    /* the cluster-robust sandwich, CR1, with t quantiles on its degrees of freedom */
    out->nwindows = nwin;
    sandwich(&(bread){n, P, dscale}, M, nwin > 1 ? (double)nwin / (nwin - 1) : 1, out->cov_robust, V);
    for (int a = 0; a < n; a++) {
        out->stderr_robust[a] = out->identifiable[a] ? sqrt(fmax(out->cov_robust[a * n + a], 0)) : HUGE_VAL;
        out->dof_robust[a] = nwin > 1 ? nwin - 1 : 1;
        if (Aw && nwin > 1 && out->identifiable[a]) out->dof_robust[a] = robust_dof(&(dof_work){n, nwin, Aw, Ap, z, Mw, V}, a);
        out->t95_robust[a] = sid_student_t_quantile(0.975, out->dof_robust[a]);
    }
    sid_free(V);
    return SID_OK;
}

/* The k-th smallest of v[0..n-1] (reordered): quickselect, Hoare's partition. */
static double kth_smallest(double *v, long n, long k)
{
    long lo = 0, hi = n - 1;
    while (lo < hi) {
        const double pivot = v[lo + (hi - lo) / 2];
        long i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot) i++;
            while (v[j] > pivot) j--;
            if (i <= j) {
                const double t = v[i];
                v[i++] = v[j], v[j--] = t;
            }
        }
        if (k <= j) hi = j;
        else if (k >= i) lo = i;
        else break;
    }
    return v[k];
}

/* The logs whose second differences process p counts: with a shard, each log's by the process
 * that runs its first window (which holds it); in own[l]. */
static void own_logs(const sid_problem *p, int *own)
{
    const int w0 = p->chunk_lo * p->chunk_windows, w1 = p->chunk_hi * p->chunk_windows;
    for (int l = 0; l < p->nlog; l++) own[l] = !p->shard.size;
    for (int w = 0; p->shard.size && w < p->nwin; w++)
        if ((w == 0 || p->win[w - 1].log != p->win[w].log) && w >= w0 && w < w1) own[p->win[w].log] = 1;
}

/* How many of the sorted v[0..n-1] are <= x. */
static long count_le(const double *v, long n, double x)
{
    long lo = 0, hi = n;
    while (lo < hi) {
        const long mid = lo + (hi - lo) / 2;
        if (v[mid] <= x) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Pivots per order statistic and round of shard_median. */
#define MEDIAN_PIVOTS 32

/* The median of the values of all processes, each holding v[0..n-1] (>= 0), to the bit as one
 * process's quickselect finds it: the nd / 2-th smallest (and the one below for even nd) is
 * the least double x with at least k + 1 values <= x. Non-negative doubles order as their bit
 * patterns, so x is found by a search on the pattern: each round counts the values at or below
 * MEDIAN_PIVOTS pivots spread over the interval left, summed over the processes (this
 * process's counts at its first chunk, a gather by chunk), and keeps the part between the last
 * pivot short of k + 1 and the first that reaches it: 33 times narrower a round, 13 rounds for
 * the 2^63 patterns. */
static sid_status shard_median(const sid_problem *p, double *v, long n, double *med, sid_error *err)
{
    enum { K = MEDIAN_PIVOTS };
    double *cnt = sid_alloc(sizeof(double) * 2 * K * (size_t)p->nchunk);
    if (!cnt) return sid_error_set(err, SID_ERR_NOMEM, "out of memory");
    sid_sort_doubles(v, (size_t)n);
    uint64_t lo[2] = {0, 0}, hi[2] = {0x7ff0000000000000u, 0x7ff0000000000000u};   /* +inf: all values */
    uint64_t piv[2][K];
    int npiv[2] = {0, 0};
    long nd = 0, k[2] = {0, 0};
    sid_status s = SID_OK;
    for (int round = 0; !s; round++) {
        for (int j = 0; j < 2; j++) {   /* pivots lo <= piv < hi, increasing */
            const uint64_t span = hi[j] - lo[j], step = span / (K + 1);
            npiv[j] = !round ? 0 : step ? K : (int)span;
            for (int i = 0; i < npiv[j]; i++) piv[j][i] = step ? lo[j] + step * (uint64_t)(i + 1) - 1 : lo[j] + (uint64_t)i;
        }
        memset(cnt, 0, sizeof(double) * 2 * K * (size_t)p->nchunk);
        double *mine = cnt + 2 * K * (size_t)p->chunk_lo;
        if (p->chunk_lo < p->chunk_hi) {
            if (!round) mine[0] = (double)n;
            for (int j = 0; j < 2; j++)
                for (int i = 0; i < npiv[j]; i++) {
                    double x;
                    memcpy(&x, &piv[j][i], sizeof x);
                    mine[j * K + i] = (double)count_le(v, n, x);
                }
        }
        if ((s = sid_problem_gather(p, cnt, 2 * K * sizeof(double), 0, err))) break;
        double tot[2 * K];
        memset(tot, 0, sizeof tot);
        for (int c = 0; c < p->nchunk; c++)
            for (int i = 0; i < 2 * K; i++) tot[i] += cnt[(size_t)c * 2 * K + (size_t)i];
        if (!round) {   /* the count of all values */
            nd = (long)tot[0];
            k[0] = nd / 2, k[1] = nd % 2 == 0 ? nd / 2 - 1 : nd / 2;
            if (!nd) break;
            continue;
        }
        for (int j = 0; j < 2; j++) {
            int i = 0;
            while (i < npiv[j] && (long)tot[j * K + i] < k[j] + 1) i++;
            if (i < npiv[j]) hi[j] = piv[j][i];
            if (i > 0) lo[j] = piv[j][i - 1] + 1;
        }
        if (lo[0] >= hi[0] && lo[1] >= hi[1]) break;
    }
    *med = 0;
    if (!s && nd) {
        double a, b;
        memcpy(&a, &lo[0], sizeof a);
        memcpy(&b, &lo[1], sizeof b);
        *med = nd % 2 == 0 ? 0.5 * (a + b) : a;
    }
    sid_free(cnt);
    return s;
}

/* The residual diagnostics from the per-channel sums ch (nchan x 3, as sid_normal_extra). */
static sid_status diagnose(const sid_problem *p, const double *ch, sid_covariance_result *out, sid_error *err)
{
    const sid_model *m = p->m;
    const int nq = m->nqo, nv = m->nvo, nc = nq + nv;   /* the logged coordinates (backlash.h) */
    long nsamp = 0;
    int *own = sid_alloc(sizeof(int) * (size_t)p->nlog);
    if (!own) return sid_error_set(err, SID_ERR_NOMEM, "out of memory");
    own_logs(p, own);
    for (int l = 0; l < p->nlog; l++)
        if (own[l]) nsamp += p->logs[l]->n;
    double *d2 = sid_alloc(sizeof(double) * (size_t)(nsamp > 0 ? nsamp : 1));
    if (!d2) {
        sid_free(own);
        return sid_error_set(err, SID_ERR_NOMEM, "out of memory");
    }
    out->nchan = nc;
    out->worst_lag1 = out->worst_ratio = -1;
    out->rms_over_noise = 0;
    out->residuals_white = 1;
    for (int c = 0; c < nc; c++) {
        /* the log's noise from the median |second difference| over every log that has the
         * channel: for white noise of variance sigma^2 it is N(0, 6 sigma^2), whose median
         * absolute value is 0.67449 sqrt(6) sigma; a median, because impacts and other sudden
         * changes put a few huge second differences into a log (the tossed box's angular
         * velocities: an RMS of 0.17 rad/s where the noise is 0.01) and must not hide a misfit */
        long nd = 0;
        for (int l = 0; l < p->nlog; l++) {
            const sid_traj *tr = p->logs[l];
            const double *y = c < nq ? tr->q : tr->qd;
            const int stride = c < nq ? nq : nv, i = c < nq ? c : c - nq;
            if (!y || !own[l]) continue;
            for (int k = 1; k + 1 < tr->n; k++)
                d2[nd++] = fabs(y[(size_t)(k + 1) * stride + i] - 2 * y[(size_t)k * stride + i] + y[(size_t)(k - 1) * stride + i]);
        }
        double med = 0;
        if (p->shard.size) {
            sid_status s = shard_median(p, d2, nd, &med, err);
            if (s) {
                sid_free(d2), sid_free(own);
                return s;
            }
        } else if (nd) {
            med = kth_smallest(d2, nd, nd / 2);
            if (nd % 2 == 0) med = 0.5 * (med + kth_smallest(d2, nd / 2, nd / 2 - 1));   /* the lower half's largest */
        }
        const double *cs = ch + 3 * c;
        const int cnt = (int)cs[2];
        const double w = c < nq ? p->o.weight_q : p->o.weight_qd, sc = c < nq ? p->sq[c] : p->sqd[c - nq];
        out->count[c] = cnt;
        out->noise[c] = med / (0.6744897501960817 * sqrt(6.0));
        if (!cnt || !(w > 0)) continue;
        const double rms_scaled = sqrt(cs[0] / cnt);
        out->rms[c] = rms_scaled * sc / sqrt(w);
        out->lag1[c] = cs[0] > 0 ? cs[1] / cs[0] : 0;
        /* either sign: white noise has none; a negative one (a fit that oscillates about the
         * data) widens rather than narrows the true error, but the model does not fit either */
        out->correlated[c] = fabs(out->lag1[c]) > SID_DIAG_LAG1 && fabs(out->lag1[c]) > 4 / sqrt((double)cnt) &&
                             out->rms[c] > 0.5 * out->noise[c] && rms_scaled > 1e-10;
        if (out->correlated[c]) out->residuals_white = 0;
        if (out->worst_lag1 < 0 || fabs(out->lag1[c]) > fabs(out->lag1[out->worst_lag1])) out->worst_lag1 = c;
        if (out->noise[c] > 0 && out->rms[c] / out->noise[c] > out->rms_over_noise) {
            out->rms_over_noise = out->rms[c] / out->noise[c];
            out->worst_ratio = c;
        }
    }
    out->mismatch = !out->residuals_white || out->rms_over_noise > SID_DIAG_RMS_RATIO;
    sid_free(d2);
    sid_free(own);
    return SID_OK;
}

/* After window w's rows: eliminate its start state, A -= C^T B+ C (Schur complement), and add
 * the window's score with the start state eliminated, g = gw - (B+ C)^T gs, to M as g g^T;
 * each channel's share of J^T J gets its start-state terms, (Jp - Js X)^T (Jp - Js X) over
 * the channel's rows, X = B+ C; the window's reduced block is kept for the dof (cov_ctx). */
static sid_status eliminate_start(void *ctx, sid_normal_sums *S, int w, sid_error *err)
{
    const int n = S->n, ns = S->ns;
    const cov_ctx *cx = ctx;
    (void)err;
    if (ns) {
        sid_normal_eliminate_start(S);
        for (int a = 0; a < n; a++)
            for (int k = 0; k < ns; k++) S->gw[a] -= S->X[k * n + a] * S->gs[k];
        for (int c = 0; S->Mc && c < S->nchan; c++) {
            double *Mk = S->Mc + (size_t)c * (size_t)(n * n), *Ck = S->Cc + (size_t)c * (size_t)(ns * n);
            const double *Bk = S->Bc + (size_t)c * (size_t)(ns * ns);
            for (int k = 0; k < ns; k++)   /* Ck becomes Y = Bk X - 2 Ck, in place (element by element) */
                for (int b = 0; b < n; b++) {
                    double v = -2 * Ck[k * n + b];
                    for (int j = 0; j < ns; j++) v += Bk[k * ns + j] * S->X[j * n + b];
                    Ck[k * n + b] = v;
                }
            for (int a = 0; a < n; a++)   /* Mk += (X^T Y + Y^T X) / 2 = X^T Bk X - X^T Ck - Ck^T X */
                for (int b = 0; b < n; b++) {
                    double v = 0;
                    for (int k = 0; k < ns; k++) v += S->X[k * n + a] * Ck[k * n + b] + S->X[k * n + b] * Ck[k * n + a];
                    Mk[a * n + b] += 0.5 * v;
                }
        }
    }
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) S->M[a * n + b] += S->gw[a] * S->gw[b];
    if (cx->Acum) memcpy(cx->Acum + (size_t)w * (size_t)(n * n), S->A, sizeof(double) * (size_t)(n * n));
    return SID_OK;
}

sid_status sid_problem_covariance(sid_problem *p, const double *theta, const double *x0, int nfree, const int *idx,
                                  volatile const int *interrupt, sid_covariance_result *out, sid_error *err)
{
    const sid_model *m = sid_problem_model(p);
    const int n = nfree, nx = sid_model_nq(m) + sid_model_nv(m), ns = sid_problem_estimates_start(p) ? nx : 0;
    const int nwin = sid_problem_nwindows(p);
    if (n < 1 || n > SID_MAX_FREE) return sid_error_set(err, SID_ERR_INPUT, "covariance: %d free parameters (1..%d)", n, SID_MAX_FREE);
    const long nres = sid_problem_nresiduals(p);   /* every window's rows (sid_problem_window_rows), counted once */
    const int nc = m->nqo + m->nvo + 1;   /* the logged coordinates' channels and the other rows' */
    const size_t nn = (size_t)n * (size_t)n;
    const int per_channel = (size_t)nc * nn <= COV_CHANNEL_DOUBLES;
    const int keep_windows = nwin > 1 && (size_t)nwin * nn <= COV_WINDOW_DOUBLES && (double)nwin * (double)nn * n <= COV_DOF_WORK;
    double *A = sid_alloc(sizeof(double) * (nn * 2 + 3 * (size_t)nc + (per_channel ? (size_t)nc * nn : 0) +
                                            (keep_windows ? (size_t)nwin * nn : 0))), rr = 0;
    if (!A) return sid_error_set(err, SID_ERR_NOMEM, "out of memory");
    double *Mc = per_channel ? A + 2 * nn + 3 * (size_t)nc : NULL;
    cov_ctx cx = { n, keep_windows ? A + 2 * nn + 3 * (size_t)nc + (per_channel ? (size_t)nc * nn : 0) : NULL };
    sid_normal_extra ex = { A + nn, nc, A + 2 * nn, Mc };
    const sid_normal_pass np = {p, theta, x0, n, idx, interrupt, 1, eliminate_start, &cx};
    sid_status s = sid_normal_run(&np, &(sid_normal_out){A, NULL, &rr, &ex}, err);
    if (s == SID_ERR_INTERRUPTED) sid_error_prefix(err, "covariance");
    /* with a shard (sid_problem_set_shard): the other processes' windows' blocks */
    if (!s && cx.Acum) s = sid_problem_gather(p, cx.Acum, sizeof(double) * nn, 1, err);
    if (!s && cx.Acum) {   /* running sums within each chunk -> each window's own block */
        for (int w = nwin - 1; w > 0; w--)
            if (w % p->chunk_windows)
                for (size_t i = 0; i < nn; i++) cx.Acum[(size_t)w * nn + i] -= cx.Acum[(size_t)(w - 1) * nn + i];
    }
    const cov_sums cs = {n, A, &ex, cx.Acum, nwin, rr, nres, (int)(nres - n - (long)nwin * ns)};
    if (!s) s = from_normal(&cs, out, err);
    if (!s) s = diagnose(p, ex.chan, out, err);
    sid_free(A);
    return s;
}
