/* fd.h — forward dynamics a = fd(q, v, u; theta) with the external forces of a contact model,
 * and its adjoint and tangent by the implicit function theorem (fd.c). */
#ifndef SID_FD_H
#define SID_FD_H

#include "contact.h"
#include "fd_point.h"
#include "dynamics.h"
#include "joint_force.h"
#include "joint_limit.h"
#include "servo.h"

/* Solve (M + B + hd D) a = F - c - D v + J^T fext for a; leaves the factor of A = M + B + hd D
 * in ws->M and the kinematics at q. */
sid_status sid_fd(const sid_fd_point *p, double *a, sid_error *err);
/* Adjoint of a = sid_fd(p) given abar, a and the factor L of A: accumulate into bar. Needs no
 * mass matrix: only w = A^-1 abar and one reverse RNEA at (q, v, a). */
void sid_fd_vjp_factored(const sid_fd_point *p, const double *a, const double *L, const double *abar,
                         const sid_state_bar *bar);
/* The same, recomputing the forward dynamics first. */
sid_status sid_fd_vjp(const sid_fd_point *p, const double *abar, const sid_state_bar *bar, sid_error *err);
/* Forward mode: sid_fd plus the RNEA at (q, v, a), with fx's forces and the pushes, that
 * sid_fd_jvp_dir needs. */
sid_status sid_fd_jvp_prepare(const sid_fd_point *p, double *a, sid_error *err);
/* The same RNEA alone, at an acceleration a the caller has, with the kinematics at q and the
 * factor of A already in ws (after sid_fd at q): what sid_fd_jvp_prepare does without solving. */
void sid_fd_jvp_at(const sid_fd_point *p, const double *a);
/* Directional derivative ad of a along dir, after sid_fd_jvp_prepare at the same point (fx's
 * forces_jvp, or none if NULL, and the pushes ws->push). */
void sid_fd_jvp_dir(const sid_fd_point *p, const double *a, const sid_state_dir *dir, double *ad);
/* The Jacobian of a, row by row, after sid_fd_jvp_prepare: row i (nq + nv + ncols entries,
 * stored by columns: (i, j) at j nv + i) is (da_i/dq, da_i/dv, da_i/dtheta[cols]), by one
 * reverse sweep per row (uses ws->jbar).
 * Cheaper than sid_fd_jvp_dir per direction when there are many more directions than nv. */
void sid_fd_jacobian_rows(const sid_fd_point *p, const double *a, int ncols, const int *cols, double *rows);
/* ad = rows (qd, vd, thd[cols]): sid_fd_jvp_dir's ad, for a thd that is zero outside cols. */
void sid_fd_jvp_rows(const sid_model *m, const double *rows, int ncols, const int *cols, const sid_state_dir *dir,
                     double *ad);
/* Whether ndir directions cost less by sid_fd_jacobian_rows than by sid_fd_jvp_dir. */
int sid_fd_rows_pay(const sid_model *m, int ndir);
/* Tests only: 0 or 1 makes sid_fd_rows_pay answer that (-1, the default: by cost); set it
 * before a pass, not during one. */
extern int sid_fd_rows_force;
/* Inverse dynamics at p (RNEA with p's external forces, no friction, no motor, no armature):
 * tau = M(q) a + c(q, v) - J^T fext. */
void sid_inverse_dynamics(const sid_fd_point *p, const double *a, double *tau);
/* Its adjoint: recomputes it at (q, v, a), then accumulates into bar for the output adjoint taubar. */
void sid_inverse_dynamics_vjp(const sid_fd_point *p, const double *a, const double *taubar, const sid_state_bar *bar);

#endif
