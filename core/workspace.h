/* workspace.h — the mutable scratch of one simulation thread (internal to core/).
 * Sized once by sid_workspace_create, so the step loop never allocates. Per-body arrays are
 * indexed by body; joint-space arrays have nv entries, matrices nv x nv row-major. */
#ifndef SID_WORKSPACE_H
#define SID_WORKSPACE_H

#include "model.h"
#include "spatial.h"

struct sid_workspace {
    int nbody, nv;
    /* forward kinematics and RNEA at the last (q, v, a) */
    sid_xform *X;         /* (nbody) parent -> body transform */
    sid_m3 *RT;           /* (nbody) fixed origin rotation R(rpy), child -> parent */
    sid_m3 *dRT;          /* (3 nbody) dR/droll, dR/dpitch, dR/dyaw of each origin rotation */
    double *theta_seen;   /* (nparam) theta that RT, dRT and I were computed from */
    int cache_valid;
    sid_m3 *Q;            /* (nbody) joint rotation Rot(axis, q) */
    sid_inertia *I;       /* (nbody) body inertia from theta */
    sid_sv *vJ, *v, *a, *h, *f;   /* (nbody) joint velocity, velocity, acceleration, I v, net force */
    /* composite inertias for the mass matrix: mass, first moment, inertia about the origin */
    double *cm;           /* (nbody) */
    sid_v3 *ch;           /* (nbody) */
    sid_m3 *cI;           /* (nbody) */
    /* reverse-mode adjoints of the RNEA quantities */
    sid_sv *vbar, *abar, *fbar;
    sid_m3 *Ebar;
    sid_v3 *rbar;
    sid_inertia *Ibar;
    /* joint space */
    double *M;            /* (nv x nv) mass matrix with armature and implicit damping; then its factor L^T L */
    double *c, *F, *rhs, *tmp;   /* (nv) */
    double *w;            /* (nv) adjoint solve w = A^-1 abar */
    double *rk;           /* (10 nv) RK4 stage states and accelerations */
    double *rkbar;        /* (8 nv) their adjoints */
    double *Lst;          /* (4 nv x nv) the RK4 stages' L^T L factors */
};

/* Quantities that depend on theta only (origin rotations and their derivatives, body
 * inertias) are computed once per theta: a step compares theta with the last one seen. */
void sid_workspace_bind(const sid_model *m, const double *theta, sid_workspace *ws);
/* Compute every body's transform and inertia at q (fills ws->X, RT, Q, I). */
void sid_kinematics(const sid_model *m, const double *theta, sid_workspace *ws, const double *q);
/* RNEA on the kinematics in ws: tau = M a + c (v, a may be NULL for zero). */
void sid_rnea(const sid_model *m, const double *theta, sid_workspace *ws, const double *v, const double *a,
              double *tau);
/* Reverse sweep of sid_rnea (call right after it): with output adjoint taubar, accumulate
 * qbar += (dtau/dq)^T taubar, vbar += (dtau/dv)^T taubar, thetabar += (dtau/dtheta)^T taubar. */
void sid_rnea_vjp(const sid_model *m, const double *theta, sid_workspace *ws, const double *q,
                  const double *taubar, double *qbar, double *vbar, double *thetabar);
/* Forward-mode twin of sid_rnea (call right after it): the directional derivative taudot of
 * tau along (qdot, vdot, thetadot), with the acceleration held fixed. */
void sid_rnea_jvp(const sid_model *m, const double *theta, sid_workspace *ws, const double *q, const double *qdot,
                  const double *vdot, const double *thetadot, double *taudot);
/* Mass matrix of the kinematics in ws (no armature), into M (nv x nv). */
void sid_crba(const sid_model *m, sid_workspace *ws, double *M);
/* Adjoint of sid_joint_force: with output adjoint Fbar, accumulate vbar (may be NULL) and thetabar. */
void sid_joint_force_vjp(const sid_model *m, const double *theta, const double *v, const double *u,
                         const double *Fbar, double *vbar, double *thetabar);
/* Forward-mode twin of sid_joint_force: Fdot along (vdot, thetadot). */
void sid_joint_force_jvp(const sid_model *m, const double *theta, const double *v, const double *u,
                         const double *vdot, const double *thetadot, double *Fdot);
/* In place, the tree-sparse factor A = L^T L of a joint-space matrix of m (nv x nv, entries
 * only where a dof meets its ancestors, as the mass matrix); -1 if not positive definite. */
int sid_factor(const sid_model *m, double *A);
/* Solve L^T L x = b in place (x overwrites b) with a factor from sid_factor. */
void sid_factor_solve(const sid_model *m, const double *L, double *b);

/* Adjoint of one Euler step whose acceleration a and factor L (sid_factor of M + B + hD) were
 * kept from the forward pass (after sid_step they are in ws->rk and ws->M): no mass matrix
 * is recomputed. Same accumulation as sid_step_vjp. */
void sid_euler_vjp_taped(const sid_model *m, const double *theta, sid_workspace *ws, double h, const double *q,
                         const double *v, const double *u, const double *a, const double *L, const double *q1bar,
                         const double *v1bar, double *qbar, double *vbar, double *thetabar);
/* Adjoint of one RK4 step whose stages (q2, v2, q3, v3, q4, v4, a1..a4; after sid_step in
 * ws->rk) and stage factors (ws->Lst) were kept from the forward pass. */
void sid_rk4_vjp_taped(const sid_model *m, const double *theta, sid_workspace *ws, double h, const double *q,
                       const double *v, const double *u, const double *stages, const double *L, const double *q1bar,
                       const double *v1bar, double *qbar, double *vbar, double *thetabar);
/* Number of equal substeps for a log interval of length dt under options o. */
int sid_substeps(const sid_sim_opts *o, double dt);
/* The simulator's q at log sample k: logged q minus the encoder offsets. */
void sid_traj_state_q(const sid_model *m, const double *theta, const sid_traj *tr, int k, double *q);

#endif
