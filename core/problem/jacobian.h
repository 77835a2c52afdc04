/* jacobian.h — a window's residual rows and their Jacobian (jacobian.c), handed in blocks of
 * rows to a consumer as the simulation produces them, so that no window's whole Jacobian is
 * ever held: memory O(block x columns) whatever the window's length (covariance.c). */
#ifndef SID_JACOBIAN_H
#define SID_JACOBIAN_H

#include "problem.h"

/* One thread's scratch for the Jacobians of nfree parameter columns (then the start state's
 * nq + nv when the problem estimates it): the current block of up to cap rows, and the
 * tangents of forward mode. One allocation. */
typedef struct {
    int nfree, ncol, cap;
    double *r, *J;                          /* (cap), (cap x ncol): the block being filled */
    double *thd, *qdot, *vdot, *scratch;    /* forward mode: tangents of ncol directions */
    int *cols, ncols;                       /* the entries of theta where thd can be nonzero (delay.h) */
    void *buf;
} sid_jac_work;

/* Rows [row0, row0 + rows) of the window's residuals r (rows) and Jacobian J (rows x ncol). */
typedef void (*sid_jac_rows_fn)(void *ctx, int row0, int rows, const double *r, const double *J);

/* Size jw for problem p, nfree parameter columns and blocks of cap rows (raised to one
 * sample's rows); 0, or -1 when memory ran out (jw then holds nothing). */
int sid_jac_work_init(sid_jac_work *jw, const sid_problem *p, int nfree, int cap);
void sid_jac_work_free(sid_jac_work *jw);

/* The residuals and Jacobian of the pass's window (as sid_problem_window_jacobian; columns: the
 * parameters idx, then the start state if fitted) handed to fn in order, in blocks of at most
 * jw->cap rows, computed on the pass's lane; allocates nothing, so windows can run in parallel
 * on their own lanes and scratch. */
sid_status sid_window_jacobian_rows(const sid_window_pass *wp, sid_jac_work *jw, const int *idx, sid_jac_rows_fn fn,
                                    void *ctx, sid_error *err);

#endif
