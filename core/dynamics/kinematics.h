/* kinematics.h — body transforms at q, world poses, the theta-only cache, and their adjoint. */
#ifndef SID_KINEMATICS_H
#define SID_KINEMATICS_H

#include "workspace.h"

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


/* Quantities that depend on theta only (origin rotations and their derivatives, body
 * inertias) are computed once per theta: a step compares theta with the last one seen. */
void sid_workspace_bind(const sid_model *m, const double *theta, sid_workspace *ws);
/* Every body's transform and inertia at q (ws->X, RT, Q, I), and with spheres its world pose (Rw, pw). */
void sid_kinematics(const sid_model *m, const double *theta, sid_workspace *ws, const double *q);
/* Adjoint of the world poses: ws->Rwbar, pwbar into the transforms' adjoints ws->Ebar, rbar. */
void sid_world_pose_vjp(const sid_model *m, sid_workspace *ws);
/* Adjoint of the transforms: from ws->Ebar, rbar accumulate qbar and thetabar (either may be NULL). */
void sid_kinematics_vjp(const sid_model *m, const sid_workspace *ws, const double *q, double *qbar, double *thetabar);

/* Tangent of a free joint's transform (free_joint.c): Edot and rdot along its q tangent qd. */
void sid_free_xform_jvp(const sid_body *bd, const double *q, const double *qd, sid_m3 *Ed, sid_v3 *rd);

#endif
