/* free_joint.h — the position update of every joint type, a free joint's quaternion included
 * (free_joint.c), with its adjoint and tangent. Internal to core/. */
#ifndef SID_FREE_JOINT_H
#define SID_FREE_JOINT_H

#include "model.h"

/* Position update q1 = q (+) h v: a plain sum for one-dof joints; for a free joint the linear
 * part adds h v and the quaternion turns by exp(h w / 2) in the body frame (then is normalised).
 * q1 may alias q. */
void sid_integrate_q(const sid_model *m, const double *q, const double *v, double h, double *q1);
/* Adjoint of sid_integrate_q at (q, v): qbar += (dq1/dq)^T q1bar, vbar += (dq1/dv)^T q1bar. */
void sid_integrate_q_vjp(const sid_model *m, const double *q, const double *v, double h, const double *q1bar,
                         double *qbar, double *vbar);
/* Tangent of sid_integrate_q at (q, v), in place: qd <- (dq1/dq) qd + (dq1/dv) vd. */
void sid_integrate_q_jvp(const sid_model *m, const double *q, const double *v, double h, double *qd, const double *vd);

#endif
