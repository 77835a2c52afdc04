/* normal.h — the Gauss-Newton normal equations of the windowed residuals, summed as each
 * window's Jacobian rows stream from jacobian.h, so J is never held (covariance.c, lm.c).
 *
 * Columns are the nfree parameters (p), then, when the problem estimates start states, the
 * window's nq + nv start state (s). A start state touches only its own window's rows, so the
 * sums have the block-arrow shape of bundle adjustment: one parameter block summed over all
 * windows, and per window the blocks Js^T Js, Js^T Jp, Js^T r, which a caller's callback
 * consumes window by window (eliminates by a Schur complement, or keeps). Windows run in
 * parallel in the problem's chunks; each chunk sums from zero and the chunks add up in chunk
 * order, so the sums are the same to the bit for any number of threads. */
#ifndef SID_NORMAL_H
#define SID_NORMAL_H

#include "jacobian.h"

/* One thread's sums: the current chunk's parameter block, the current window's start blocks. */
typedef struct {
    sid_jac_work jw;
    int n, ns;
    double *A;            /* (n x n) the chunk's Jp^T Jp (a callback may fold a window's blocks in) */
    double *g;            /* (n) the chunk's Jp^T r */
    double rr;            /* the chunk's |r|^2 */
    double *B, *C, *gs;   /* (ns x ns) Js^T Js, (ns x n) Js^T Jp, (ns) Js^T r of the current window */
    double *X, *V;        /* (ns x n), (ns x ns + ns): scratch for the callback */
    void *buf;
    /* with sid_normal_extra only (else NULL): */
    double *gw;           /* (n) the current window's Jp^T r */
    double *M;            /* (n x n) the chunk's sum of the callback's per-window outer products */
    double *chan;         /* (nchan x 3) the chunk's per-channel sum r^2, sum r_k r_{k-1}, count */
    double *last;         /* (nchan) the current window's previous residual of each channel */
    int nchan, nq, qrows, qdrows, per_sample;   /* channels; the current window's q, qd rows and rows per sample */
    /* with sid_normal_extra's Mc only (else NULL): per channel, the chunk's sum of Jp^T Jp over
     * the channel's rows (nchan x n x n; the callback folds each window's start-state terms in)
     * and the current window's Js^T Js, Js^T Jp over them (nchan x ns x ns, nchan x ns x n) */
    double *Mc, *Bc, *Cc;
} sid_normal_sums;

/* What the robust covariance and the residual diagnostics need beyond J^T J (covariance.c):
 * the sum over windows of what the callback folds into S->M (from S->gw, the window's score),
 * and per residual channel (q coordinate i is channel i, velocity i is nq + i, every other row
 * -- torque sensors -- channel nq + nv) the sums sum r^2, sum r_k r_{k-1} (lag one sample,
 * within a window) and the number of rows; with Mc, each channel's share of J^T J (S->Mc). */
typedef struct {
    double *M;            /* (nfree x nfree) */
    int nchan;            /* nq + nv + 1 */
    double *chan;         /* (nchan x 3) */
    double *Mc;           /* (nchan x nfree x nfree) or NULL */
} sid_normal_extra;

/* Window w's start state eliminated from S (its Schur complement), for a callback: X = B+ C
 * (B's pseudo-inverse: eigenvalues below 1e-14 of the largest count as 0; B destroyed, V
 * scratch) and A -= C^T X. */
void sid_normal_eliminate_start(sid_normal_sums *S);

/* Called after window w's rows are in S (from one thread at a time per S, windows in parallel). */
typedef sid_status (*sid_normal_window_fn)(void *ctx, sid_normal_sums *S, int w, sid_error *err);

/* A pass of the normal equations: every window of p at theta, window w starting from x0 + w
 * (nq + nv; x0 NULL: logged), the columns of the nfree parameters idx; fn(ctx, ...) (fn may be
 * NULL) called after each window; with progress, p's progress function after each chunk;
 * interrupt (may be NULL) read before each window: nonzero stops with SID_ERR_INTERRUPTED. */
typedef struct {
    sid_problem *p;
    const double *theta, *x0;
    int nfree;
    const int *idx;
    volatile const int *interrupt;
    int progress;
    sid_normal_window_fn fn;
    void *ctx;
} sid_normal_pass;

/* What the pass sums: A = sum Jp^T Jp (nfree x nfree), g = sum Jp^T r (nfree; may be NULL),
 * *rr = |r|^2, and ex (may be NULL) its sums, each from zero, in chunk order. */
typedef struct {
    double *A, *g, *rr;
    sid_normal_extra *ex;
} sid_normal_out;

sid_status sid_normal_run(const sid_normal_pass *np, const sid_normal_out *out, sid_error *err);

#endif
