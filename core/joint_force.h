/* joint_force.h — reverse- and forward-mode twins of sid_joint_force (sid.h). */
#ifndef SID_JOINT_FORCE_H
#define SID_JOINT_FORCE_H

#include "model.h"

/* Generalised force from motors and friction (everything except viscous damping):
 * F = tau_motor(u, v) - (coulomb + s(v)) tanh(v / smoothing). */
void sid_joint_force(const sid_model *m, const double *theta, const double *v, const double *u, double *F);
/* Adjoint of sid_joint_force: with output adjoint Fbar, accumulate vbar (may be NULL) and thetabar. */
void sid_joint_force_vjp(const sid_model *m, const double *theta, const double *v, const double *u,
                         const double *Fbar, double *vbar, double *thetabar);
/* Forward-mode twin of sid_joint_force: Fdot along (vdot, thetadot). */
void sid_joint_force_jvp(const sid_model *m, const double *theta, const double *v, const double *u,
                         const double *vdot, const double *thetadot, double *Fdot);

#endif
