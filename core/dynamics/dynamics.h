/* dynamics.h — RNEA with external body forces, its adjoint and tangent, the mass matrix and its
 * factor, on the kinematics in the workspace (call sid_kinematics first). */
#ifndef SID_DYNAMICS_H
#define SID_DYNAMICS_H

#include "fd_point.h"
#include "kinematics.h"
#include "linalg.h"

/* RNEA's root-to-leaves pass: body velocities ws->v, accelerations ws->a and inertial forces
 * ws->f at joint velocities v and accelerations a (NULL for zero). */
void sid_rnea_motion(const sid_model *m, const double *theta, sid_workspace *ws, const double *v, const double *a);
/* RNEA's leaves-to-root pass after sid_rnea_motion: tau = S^T (f - fext) summed up the tree;
 * fext (nbody, body coordinates) the external forces on the bodies, or NULL for none. */
void sid_rnea_forces(const sid_model *m, sid_workspace *ws, const sid_sv *fext, double *tau);
/* Both passes: tau = M a + c - J^T fext. */
void sid_rnea(const sid_model *m, const double *theta, sid_workspace *ws, const double *v, const double *a,
              const sid_sv *fext, double *tau);
/* First half of RNEA's reverse sweep (after sid_rnea): clears every body adjoint in ws, then the
 * force pass's adjoint from taubar; fextbar (nbody, may be NULL) receives fext's adjoint. */
void sid_rnea_vjp_forces(const sid_model *m, sid_workspace *ws, const double *taubar, sid_sv *fextbar);
/* Second half: the motion pass's and the transforms' adjoints, with whatever the external
 * forces' adjoint added to the body velocity and transform adjoints in ws, into
 * qbar += (dtau/dq)^T taubar, vbar += (dtau/dv)^T taubar, thetabar += (dtau/dtheta)^T taubar. */
void sid_rnea_vjp_motion(const sid_model *m, sid_workspace *ws, const double *q, double *qbar, double *vbar,
                         double *thetabar);
/* Both halves, for RNEA without external forces. */
/* Whether sid_rnea_vjp_rows may replace sid_rnea_vjp for thetabar read only at cols: revolute
 * and fixed joints only, no world poses (spheres, pushes), no origin among cols. */
int sid_rnea_vjp_rows_ok(const sid_model *m, const sid_workspace *ws, int ncols, const int *cols);
/* sid_rnea_vjp (no external forces) through forward mode's per-body terms, at the RNEA state of
 * the last sid_rnea at (q, v, a); thetabar right at the inertias and gravity only. */
void sid_rnea_vjp_rows(const sid_model *m, sid_workspace *ws, const double *taubar, double *qbar, double *vbar,
                       double *thetabar);
void sid_rnea_vjp(const sid_model *m, sid_workspace *ws, const double *q, const double *taubar, const sid_state_bar *bar);
/* Forward-mode twin of sid_rnea (call right after it): the directional derivative taudot of
 * tau along (qdot, vdot, thetadot), with the acceleration held fixed. In two halves so that
 * external forces can add their tangent between them: the motion pass's (it leaves the body
 * velocity tangents in ws->vbar and, with world poses, theirs in ws->Rwbar, pwbar), then the
 * force pass's with fextdot (nbody, or NULL) the external forces' tangent. */
void sid_rnea_jvp_motion(const sid_model *m, const double *theta, sid_workspace *ws, const double *q,
                         const sid_state_dir *dir);
void sid_rnea_jvp_forces(const sid_model *m, sid_workspace *ws, const sid_sv *fextdot, double *taudot);
/* Both halves, without external forces. */
void sid_rnea_jvp(const sid_model *m, const double *theta, sid_workspace *ws, const double *q, const sid_state_dir *dir,
                  double *taudot);
/* Mass matrix of the kinematics in ws (no armature), into M (nv x nv). */
void sid_crba(const sid_model *m, sid_workspace *ws, double *M);
/* Joint-space mass matrix (CRBA) at q, nv x nv row-major, without armature. */
void sid_mass_matrix(const sid_model *m, const double *theta, sid_workspace *ws, const double *q, double *M);
/* Kinetic + potential energy (for tests). */
double sid_energy(const sid_model *m, const double *theta, sid_workspace *ws, const double *q, const double *v);

/* In place, the tree-sparse factor A = L^T L of a joint-space matrix of m (nv x nv, entries
 * only where a dof meets its ancestors, as the mass matrix); -1 if not positive definite. */
static inline int sid_factor(const sid_model *m, double *A) { return sid_tree_factor(m->nv, m->dof_parent, A); }
/* Solve L^T L x = b in place (x overwrites b) with a factor from sid_factor. */
static inline void sid_factor_solve(const sid_model *m, const double *L, double *b)
{
    sid_tree_solve(m->nv, m->dof_parent, L, b);
}

#endif
