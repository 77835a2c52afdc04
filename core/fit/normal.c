/* normal.c — J^T J and J^T r of the windowed residuals, window by window (see normal.h). */
#include "normal.h"
#include "linalg.h"

#include <math.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static int sums_init(sid_normal_sums *S, const sid_normal_pass *np, const sid_normal_extra *ex, int ns, int cap)
{
    const sid_problem *p = np->p;
    const int n = np->nfree, nchan = ex ? ex->nchan : 0, per_channel = ex && ex->Mc;
    memset(S, 0, sizeof *S);
    S->n = n, S->ns = ns, S->nchan = nchan, S->nq = p->m->nqo;   /* channels: the logged coordinates */
    const size_t nn = (size_t)n * (size_t)n, ss = (size_t)ns * (size_t)ns, sn = (size_t)ns * (size_t)n;
    const size_t extra = nchan ? nn + (size_t)n + 4 * (size_t)nchan : 0;
    if (!(S->buf = sid_alloc(sizeof(double) * (nn + (size_t)n + 2 * ss + 2 * sn + 2 * (size_t)ns + extra)))) return -1;
    S->A = S->buf, S->g = S->A + nn, S->B = S->g + n, S->C = S->B + ss, S->gs = S->C + sn;
    S->X = S->gs + ns, S->V = S->X + sn;
    if (nchan) S->gw = S->V + ss + ns, S->M = S->gw + n, S->chan = S->M + nn, S->last = S->chan + 3 * nchan;
    if (per_channel) {
        if (!(S->Mc = sid_alloc(sizeof(double) * (size_t)nchan * (nn + ss + sn)))) return -1;
        S->Bc = S->Mc + (size_t)nchan * nn, S->Cc = S->Bc + (size_t)nchan * ss;
    }
    return sid_jac_work_init(&S->jw, p, n, cap);
}

static void sums_free(sid_normal_sums *S)
{
    sid_jac_work_free(&S->jw);
    sid_free(S->buf);
    sid_free(S->Mc);
}

/* A block of a window's rows into the sums: the parameters' Jp^T Jp and Jp^T r (in row order,
 * as the whole window's would be), the start state's blocks into B, C and gs. */
static void add_rows(void *ctx, int row0, int rows, const double *r, const double *J)
{
    sid_normal_sums *S = ctx;
    const int n = S->n, ns = S->ns, ncol = n + ns;
    double *A = S->A, *B = S->B, *C = S->C;
    /* without start states nothing but these sums touches A, which stays symmetric to the bit
     * (row[a] row[b] = row[b] row[a]): the lower triangle only, mirrored after the window */
    const int lower = !ns;
    for (int i = 0; i < rows; i++) {
        const double *row = J + (size_t)i * (size_t)ncol;
        S->rr += r[i] * r[i];
        for (int a = 0; a < n; a++) {
            S->g[a] += row[a] * r[i];
            const int nb = lower ? a + 1 : n;
            for (int b = 0; b < nb; b++) A[a * n + b] += row[a] * row[b];
        }
    }
    if (S->chan) {
        /* the window's score, and per channel r^2 and r_k r_{k-1} (rows of a sample follow
         * each other: q rows, velocity rows, then torque sensor rows, jacobian.c) */
        for (int i = 0; i < rows; i++) {
            const double *row = J + (size_t)i * (size_t)ncol;
            for (int a = 0; a < n; a++) S->gw[a] += row[a] * r[i];
            const int gr = row0 + i, j = gr % S->per_sample;
            /* torque sensor rows share the last channel, without a lag (they are not one series) */
            const int c = j < S->qrows ? j : j < S->qrows + S->qdrows ? S->nq + j - S->qrows : S->nchan - 1;
            double *cs = S->chan + 3 * c;
            cs[0] += r[i] * r[i];
            cs[2] += 1;
            if (S->Mc) {
                const size_t nn = (size_t)n * (size_t)n;
                double *Mc = S->Mc + (size_t)c * nn, *Bc = S->Bc + (size_t)c * (size_t)(ns * ns), *Cc = S->Cc + (size_t)c * (size_t)(ns * n);
                const double *rx = row + n;
                for (int a = 0; a < n; a++)
                    for (int b = 0; b < n; b++) Mc[a * n + b] += row[a] * row[b];
                for (int a = 0; a < ns; a++) {
                    for (int b = 0; b < ns; b++) Bc[a * ns + b] += rx[a] * rx[b];
                    for (int b = 0; b < n; b++) Cc[a * n + b] += rx[a] * row[b];
                }
            }
            if (c == S->nchan - 1) continue;
            if (gr >= S->per_sample) cs[1] += r[i] * S->last[c];
            S->last[c] = r[i];
        }
    }
    if (!ns) return;
    for (int i = 0; i < rows; i++) {
        const double *row = J + (size_t)i * (size_t)ncol, *rx = row + n;
        for (int a = 0; a < ns; a++) {
            S->gs[a] += rx[a] * r[i];
            for (int b = 0; b < ns; b++) B[a * ns + b] += rx[a] * rx[b];
            for (int b = 0; b < n; b++) C[a * n + b] += rx[a] * row[b];
        }
    }
}

void sid_normal_eliminate_start(sid_normal_sums *S)
{
    const int n = S->n, ns = S->ns;
    double *ev = S->V + ns * ns, emax = 0;
    sid_jacobi_eigen(S->B, ns, ev, S->V);   /* B = V diag(ev) V^T */
    for (int i = 0; i < ns; i++) emax = fmax(emax, ev[i]);
    memset(S->X, 0, sizeof(double) * (size_t)(ns * n));
    for (int i = 0; i < ns; i++) {
        if (!(ev[i] > 1e-14 * emax)) continue;
        for (int b = 0; b < n; b++) {
            double vc = 0;
            for (int k = 0; k < ns; k++) vc += S->V[k * ns + i] * S->C[k * n + b];
            for (int a = 0; a < ns; a++) S->X[a * n + b] += S->V[a * ns + i] * vc / ev[i];
        }
    }
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++)
            for (int k = 0; k < ns; k++) S->A[a * n + b] -= S->C[k * n + a] * S->X[k * n + b];
}

/* With a shard: the other processes' chunk statuses (and errors, if one failed) or their
 * rows of sums, and then every chunk's row added in chunk order, as one process would. */
static sid_status gather_rows(const sid_normal_pass *np, double *rows, size_t rowlen, const sid_normal_out *out,
                              sid_error *err)
{
    sid_problem *p = np->p;
    const int n = np->nfree;
    double *A = out->A, *g = out->g, *rr = out->rr;
    sid_normal_extra *ex = out->ex;
    int failed;
    sid_status s = sid_problem_gather_status(p, &failed, err);
    if (s || failed) return s;
    s = sid_problem_gather(p, rows, sizeof(double) * rowlen, 0, err);
    for (int c = 0; !s && c < p->nchunk; c++) {
        const double *row = rows + (size_t)c * rowlen;
        for (size_t i = 0; i < (size_t)n * (size_t)n; i++) A[i] += row[i];
        for (int i = 0; g && i < n; i++) g[i] += row[n * n + i];
        *rr += row[n * n + n];
        if (ex) {
            for (size_t i = 0; i < (size_t)n * (size_t)n; i++) ex->M[i] += row[(size_t)(n * n + n + 1) + i];
            for (int i = 0; i < 3 * ex->nchan; i++) ex->chan[i] += row[2 * n * n + n + 1 + i];
            const double *mc = row + 2 * (size_t)n * (size_t)n + (size_t)n + 1 + 3 * (size_t)ex->nchan;
            for (size_t i = 0; ex->Mc && i < (size_t)ex->nchan * (size_t)n * (size_t)n; i++) ex->Mc[i] += mc[i];
        }
    }
    if (!s && np->progress && p->progress) p->progress(p->progress_ctx, p->nwin, p->nwin);
    return s;
}

/* Rows per block: a few MB of J whatever the number of columns, and no more than a window. */
#define BLOCK_DOUBLES ((size_t)1 << 18)

sid_status sid_normal_run(const sid_normal_pass *np, const sid_normal_out *out, sid_error *err)
{
    sid_problem *p = np->p;
    const double *theta = np->theta, *x0 = np->x0;
    const int nfree = np->nfree, *idx = np->idx, progress = np->progress;
    volatile const int *interrupt = np->interrupt;
    double *A = out->A, *g = out->g, *rr = out->rr;
    sid_normal_extra *ex = out->ex;
    const sid_model *m = sid_problem_model(p);
    const int n = nfree, nx = sid_model_nq(m) + sid_model_nv(m), ns = sid_problem_estimates_start(p) ? nx : 0;
    const int ncol = n + ns, nwin = sid_problem_nwindows(p), nlane = p->nlane;
    const int maxrows = p->max_rows > 1 ? p->max_rows : 1;
    const int cap = (size_t)maxrows < BLOCK_DOUBLES / (size_t)ncol ? maxrows : (int)(BLOCK_DOUBLES / (size_t)ncol);
    sid_normal_sums *S = sid_alloc(sizeof(sid_normal_sums) * (size_t)nlane);
    sid_status s = SID_OK;
    /* with a shard: each chunk's sums as a row (A, g, rr, then M, chan and Mc), gathered, then added */
    const size_t nn = (size_t)n * (size_t)n, nmc = ex && ex->Mc ? (size_t)ex->nchan * nn : 0;
    const size_t rowlen = nn + (size_t)n + 1 + (ex ? nn + 3 * (size_t)ex->nchan + nmc : 0);
    double *rows = p->shard.size ? sid_alloc(sizeof(double) * rowlen * (size_t)p->nchunk) : NULL;
    int ok = S != NULL && (rows || !p->shard.size);
    for (int t = 0; ok && t < nlane; t++) ok = !sums_init(&S[t], np, ex, ns, cap);
    if (!ok) {
        s = sid_error_set(err, SID_ERR_NOMEM, "out of memory");
        goto done;
    }
    memset(A, 0, sizeof(double) * (size_t)n * (size_t)n);
    if (g) memset(g, 0, sizeof(double) * (size_t)n);
    *rr = 0;
    if (ex) {
        memset(ex->M, 0, sizeof(double) * (size_t)n * (size_t)n);
        memset(ex->chan, 0, sizeof(double) * 3 * (size_t)ex->nchan);
        if (ex->Mc) memset(ex->Mc, 0, sizeof(double) * (size_t)ex->nchan * (size_t)n * (size_t)n);
    }
    /* the loss's chunks and per-chunk status, unused while this pass runs */
#ifdef _OPENMP
#pragma omp parallel for ordered schedule(dynamic, 1) num_threads(nlane)
#endif
    for (int c = p->chunk_lo; c < p->chunk_hi; c++) {
#ifdef _OPENMP
        const int t = omp_get_thread_num();
#else
        const int t = 0;
#endif
        sid_normal_sums *St = &S[t];
        memset(St->A, 0, sizeof(double) * (size_t)(n * n + n));
        St->rr = 0;
        if (St->chan) {
            memset(St->M, 0, sizeof(double) * (size_t)n * (size_t)n);
            memset(St->chan, 0, sizeof(double) * 3 * (size_t)St->nchan);
            if (St->Mc) memset(St->Mc, 0, sizeof(double) * (size_t)St->nchan * (size_t)n * (size_t)n);
        }
        p->chunk_status[c] = SID_OK;
        for (int w = c * p->chunk_windows; w < (c + 1) * p->chunk_windows && w < nwin; w++) {
            if (interrupt && *interrupt) {
                p->chunk_status[c] = sid_error_set(&p->chunk_err[c], SID_ERR_INTERRUPTED,
                                                   "interrupted after %d of %d windows", w, nwin);
                break;
            }
            memset(St->B, 0, sizeof(double) * (size_t)(ns * ns + ns * n + ns));
            if (St->chan) {
                const window *win = &p->win[w];
                memset(St->gw, 0, sizeof(double) * (size_t)n);
                St->qrows = p->o.weight_q > 0 ? St->nq : 0;
                St->qdrows = p->o.weight_qd > 0 && p->logs[win->log]->qd ? p->m->nvo : 0;
                St->per_sample = sid_problem_window_rows(p, w) / (win->rb - win->ra + 1);
                if (St->Mc) memset(St->Bc, 0, sizeof(double) * (size_t)St->nchan * (size_t)(ns * ns + ns * n));
            }
            const sid_window_pass wp = {p, &p->lane[t], theta, &p->win[w], x0 ? x0 + (size_t)w * (size_t)nx : NULL};
            sid_status sw = sid_window_jacobian_rows(&wp, &St->jw, idx, add_rows, St, &p->chunk_err[c]);
            if (!ns)   /* add_rows summed the lower triangle */
                for (int a = 0; a < n; a++)
                    for (int b = a + 1; b < n; b++) St->A[a * n + b] = St->A[b * n + a];
            if (!sw && np->fn) sw = np->fn(np->ctx, St, w, &p->chunk_err[c]);
            if ((p->chunk_status[c] = sw)) break;
        }
#ifdef _OPENMP
#pragma omp ordered
#endif
        if (!p->chunk_status[c] && rows) {
            double *row = rows + (size_t)c * rowlen;
            memcpy(row, St->A, sizeof(double) * (size_t)(n * n + n));
            row[n * n + n] = St->rr;
            if (ex) {
                memcpy(row + n * n + n + 1, St->M, sizeof(double) * (size_t)n * (size_t)n);
                memcpy(row + 2 * n * n + n + 1, St->chan, sizeof(double) * 3 * (size_t)ex->nchan);
                if (nmc) memcpy(row + 2 * nn + (size_t)n + 1 + 3 * (size_t)ex->nchan, St->Mc, sizeof(double) * nmc);
            }
        } else if (!p->chunk_status[c]) {
            for (size_t i = 0; i < (size_t)n * (size_t)n; i++) A[i] += St->A[i];
            for (int i = 0; g && i < n; i++) g[i] += St->g[i];
            *rr += St->rr;
            if (ex) {
                for (size_t i = 0; i < (size_t)n * (size_t)n; i++) ex->M[i] += St->M[i];
                for (int i = 0; i < 3 * ex->nchan; i++) ex->chan[i] += St->chan[i];
                for (size_t i = 0; ex->Mc && i < (size_t)ex->nchan * (size_t)n * (size_t)n; i++) ex->Mc[i] += St->Mc[i];
            }
            if (progress && p->progress)
                p->progress(p->progress_ctx, (c + 1) * p->chunk_windows < nwin ? (c + 1) * p->chunk_windows : nwin, nwin);
        }
    }
    if (rows && (s = gather_rows(np, rows, rowlen, out, err))) goto done;
    for (int c = 0; c < p->nchunk; c++)
        if (p->chunk_status[c]) {
            if (err) *err = p->chunk_err[c];
            s = p->chunk_status[c];
            goto done;
        }
done:
    sid_free(rows);
    for (int t = 0; S && t < nlane; t++) sums_free(&S[t]);
    sid_free(S);
    return s;
}
