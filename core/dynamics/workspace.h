/* workspace.h — the mutable scratch of one simulation thread (internal to core/).
 * One buffer sized by sid_workspace_size and carved by sid_workspace_init (workspace_layout.c), so the
 * step loop never allocates. Per-body
 * arrays are indexed by body; joint-space arrays have nv entries, matrices nv x nv row-major.
 * Each module reads and writes its own part; what one module hands another goes through
 * function arguments (external forces fext and their adjoint fextbar, for one). */
#ifndef SID_WORKSPACE_H
#define SID_WORKSPACE_H

#include "model.h"
#include "spatial.h"

#include <stddef.h>

/* Consecutive blocks of one buffer: with buf NULL a sequence of takes only counts the bytes
 * (sizing); the same sequence on a buffer of that size then carves it. Blocks are aligned for
 * any type. */
typedef struct {
    char *buf;
    size_t used;
} sid_carve;

static inline void *sid_carve_take(sid_carve *c, size_t count, size_t size)
{
    const size_t align = _Alignof(max_align_t), at = (c->used + align - 1) / align * align;
    c->used = at + count * size;
    return c->buf ? c->buf + at : NULL;
}

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
    sid_sv *fextbar;      /* (nbody) its adjoint */
    const double *push;   /* (nbody x SID_PUSH_STRIDE) the logged pushes held this interval, or NULL
                           * (push.h); whoever steps a log sets it */
    /* composite inertias for the mass matrix: mass, first moment, inertia about the origin */
    double *cm;           /* (nbody) */
    sid_v3 *ch;           /* (nbody) */
    sid_m3 *cI;           /* (nbody) */
    /* reverse-mode adjoints of the RNEA quantities */
    sid_sv *vbar, *abar, *fbar;
    sid_m3 *Ebar;
    sid_v3 *rbar;
    sid_inertia *Ibar;
    /* forward mode's direction-independent part of a revolute joint's transform tangent
     * (dynamics.c): per unit qdot, dX/dq v_p, dX/dq a_p, d(X^T)/dq f_b at the current v, a, f;
     * jv_valid 0 whenever the kinematics or the RNEA rewrite them. jv_fx: one direction's
     * transform tangent term of the parent force, from the motion pass to the force pass. */
    sid_sv *jv_v, *jv_a, *jv_f, *jv_fx;
    sid_sv *jv_vS;        /* (nbody) v_b x S, the joint velocity tangent's share of the acceleration */
    double *jv_B;         /* (nbody x 36) d(v x* I v)/dv at the current v, row-major 6 x 6 */
    int jv_valid;
    /* joint space */
    double *M;            /* (nv x nv) mass matrix with armature and implicit damping; then its factor L^T L */
    double *c, *F, *rhs, *tmp;   /* (nv) */
    double *w;            /* (nv) adjoint solve w = A^-1 abar */
    double *jrows;        /* (2 nv x (nq + nv + nparam)) the acceleration's Jacobian rows (sid_fd_jacobian_rows),
                           * room for two (euler_dry.c) */
    double *jbar;         /* (nparam + 2 nv + nq) their sweeps' thetabar, unit abar and row */
    double *ud, *dsave;   /* (nv) delayed commands, torque_bias adjoints set aside (delay.h) */
    double *ubar;         /* (nv) or NULL: where the step adjoints add dL/du of the commands they were
                           * given (command_grad.c sets it to its lane's scratch; NULL: not wanted) */
    double *rk;           /* (sid_rk_size) RK4 stage states q2 v2 q3 v3 q4 v4 and accelerations a1..a4 */
    double *rkbar;        /* (9 nv + nq) their adjoints and scratch */
    double *Lst;          /* (4 x (nv x nv + 2 nf)) the RK4 stages' records (stage.c) */
    struct sid_hard *hard;   /* hard contact's scratch (contact_hard.h); NULL without spheres */
    struct sid_sphere_state *sphere;   /* (nsphere) compliant contact's sphere states at its last forces, for
                                        * its tangent (contact.c); NULL without spheres */
    struct sid_dry *dry;     /* dry friction's scratch (dry_friction.h); NULL without dry joints */
};

#endif
