/* fd_point.h — where the dynamics is evaluated, and what its adjoint and tangent carry: the
 * point every force source and the forward dynamics (fd.h) take, so that their derivatives
 * take three arguments, not nine. Internal to core/. */
#ifndef SID_FD_POINT_H
#define SID_FD_POINT_H

#include "workspace.h"

struct sid_fext_source;   /* contact.h */

/* Where the forward dynamics is evaluated: the model at theta with its workspace and the
 * external forces of fx (NULL: none), the state (q, v), the command u, and hd, the step of the
 * implicit damping (h: MuJoCo's Euler step; 0: the plain dynamics); implicit_act: the actuators'
 * damping is implicit too (actuator_damping.h; the implicitfast integrator). */
typedef struct {
    const sid_model *m;
    const double *theta;
    sid_workspace *ws;
    const struct sid_fext_source *fx;
    const double *q, *v, *u;
    double hd;
    int implicit_act;
} sid_fd_point;

/* What an adjoint accumulates into: qbar (nq), vbar (nv), thetabar (nparam). */
typedef struct {
    double *qbar, *vbar, *thetabar;
} sid_state_bar;

/* One direction's tangents of q (nq), v (nv) and theta (nparam). */
typedef struct {
    const double *qd, *vd, *thd;
} sid_state_dir;

#endif
