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
    sid_sv *vJ, *aJ, *v, *a, *h, *f;   /* (nbody) joint velocity and acceleration, velocity, acceleration, I v, net force */
    /* world poses (body -> world rotation, origin) and contact forces, for models with contact */
    sid_m3 *Rw, *Rwbar;
    sid_v3 *pw, *pwbar;
    sid_sv *fext;         /* (nbody) external (contact) force on each body, body coordinates */
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
    double *rk;           /* (sid_rk_size) RK4 stage states q2 v2 q3 v3 q4 v4 and accelerations a1..a4 */
    double *rkbar;        /* (9 nv + nq) their adjoints and scratch */
    double *Lst;          /* (4 nv x nv) the RK4 stages' L^T L factors */
    /* hard contact (contact_hard.c): its scratch (NULL without spheres), and what sid_rnea and
     * sid_rnea_vjp add for it (SID_HARD_OFF: nothing) */
    struct sid_hard *hard;
    int hard_mode;
};

/* ---- hard contact (contact_hard.c) ---- */
#define SID_HARD_BETA 0.2   /* Baumgarte factor: u_n >= -beta phi / h */
#define SID_HARD_REG 1e-3   /* regularisation r = SID_HARD_REG / total mass of the Delassus matrix */
/* hard_mode: OFF; FORCES: the impulses / h act as external forces in sid_rnea, and sid_rnea_vjp
 * propagates their geometry's adjoint; VELOCITY: sid_rnea_vjp is seeded with the adjoints of
 * the contact velocities and gaps (the implicit part of the step's adjoint). */
enum { SID_HARD_OFF = 0, SID_HARD_FORCES, SID_HARD_VELOCITY };
struct sid_hard *sid_hard_create(const sid_model *m);
void sid_hard_free(struct sid_hard *h);
/* One Euler step with hard contact, and its adjoint (same contracts as sid_step, sid_step_vjp). */
sid_status sid_hard_step(const sid_model *m, const double *theta, sid_workspace *ws, double h, const double *q,
                         const double *v, const double *u, double *q1, double *v1, sid_error *err);
sid_status sid_hard_step_vjp(const sid_model *m, const double *theta, sid_workspace *ws, double h, const double *q,
                             const double *v, const double *u, const double *q1bar, const double *v1bar, double *qbar,
                             double *vbar, double *thetabar, sid_error *err);
/* RNEA hooks: external forces of the last solve into ws->fext; their (or the seeds') adjoint. */
void sid_hard_fext(const sid_model *m, sid_workspace *ws);
void sid_hard_rnea_vjp(const sid_model *m, const double *theta, sid_workspace *ws, double *thetabar);
/* Tests: the last solve's contacts (sphere, mode 0 separated / 1 sticking / 2 sliding, impulse
 * (3 per contact), relative residual); returns their number. Arrays may be NULL. */
int sid_hard_last(const sid_workspace *ws, int *sphere, int *mode, double *lambda, double *residual);
/* Tests: frozen = 1 makes the adjoint hold the impulses fixed (the naive gradient). */
void sid_hard_set_frozen(sid_workspace *ws, int frozen);
/* The adjoint of the Euler forward dynamics with a given acceleration and factor (integrator.c). */
void sid_fd_vjp_factored(const sid_model *m, const double *theta, sid_workspace *ws, const double *q,
                         const double *v, const double *u, double hd, const double *a, const double *L,
                         const double *abar, double *qbar, double *vbar, double *thetabar);

/* Velocity coordinates of a joint: 6 for a free joint, 1 for a revolute or prismatic one. */
static inline int sid_joint_ndof(const sid_body *bd) { return bd->type == SID_JOINT_FREE ? 6 : bd->vadr >= 0; }

/* Column k of a joint's motion subspace S, in the body frame (X: the body's transform). A free
 * joint's velocity is (world linear, body angular), so its linear columns are the world axes
 * seen from the body, the columns of E = R^T; its angular columns are the unit vectors. */
static inline sid_sv sid_joint_col(const sid_body *bd, const sid_xform *X, int k)
{
    const sid_v3 z = {0, 0, 0};
    if (bd->type == SID_JOINT_FREE) {
        if (k < 3) return sid_sv_make(z, sid_v3_make(X->E.m[0][k], X->E.m[1][k], X->E.m[2][k]));
        return sid_sv_make(sid_v3_make(k == 3, k == 4, k == 5), z);
    }
    const sid_v3 ax = sid_v3_load(bd->axis);
    return bd->type == SID_JOINT_PRISMATIC ? sid_sv_make(z, ax) : sid_sv_make(ax, z);
}

/* Doubles of an RK4 step's stages: three stage states and four accelerations. */
static inline int sid_rk_size(const sid_model *m) { return 3 * m->nq + 7 * m->nv; }

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
/* Compliant contact forces of the spheres at the kinematics and body velocities in ws (after
 * sid_rnea's velocity pass) into ws->fext. */
void sid_contact_forces(const sid_model *m, const double *theta, sid_workspace *ws);
/* Adjoint of sid_contact_forces given ws->fbar (the adjoint of the net body forces f - fext):
 * accumulates ws->vbar, ws->Rwbar, ws->pwbar and thetabar (may be NULL). */
void sid_contact_forces_vjp(const sid_model *m, const double *theta, sid_workspace *ws, double *thetabar);
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
