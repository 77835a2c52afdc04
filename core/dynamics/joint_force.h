/* joint_force.h — reverse- and forward-mode twins of sid_joint_force (sid.h). */
#ifndef SID_JOINT_FORCE_H
#define SID_JOINT_FORCE_H

#include "fd_point.h"
#include "model.h"

/* Generalised force from motors and friction (everything except viscous damping):
 * F = tau_motor(u, v) - (coulomb + s(v)) tanh(v / smoothing). */
void sid_joint_force(const sid_model *m, const double *theta, const double *v, const double *u, double *F);
/* Adjoint of sid_joint_force: with output adjoint Fbar, accumulate vbar (may be NULL) and thetabar. */
void sid_joint_force_vjp(const sid_fd_point *p, const double *Fbar, const sid_state_bar *bar);
/* The commands' adjoint of sid_joint_force: ubar[i] += (dF/du_i)^T Fbar (command_grad.c). */
void sid_joint_force_ubar(const sid_model *m, const double *theta, const double *v, const double *u,
                          const double *Fbar, double *ubar);
/* Forward-mode twin of sid_joint_force: Fdot along (vdot, thetadot). */
void sid_joint_force_jvp(const sid_fd_point *p, const sid_state_dir *dir, double *Fdot);
/* A torque, current or voltage motor's torque tau_m at one dof (body bd, its velocity v and
 * input u; 0 without one or for a servo), its adjoint (w the output's: accumulates thetabar and
 * returns the velocity's share, w dtau_m/dv) and its tangent: the load of load-dependent dry
 * friction (dry_friction.c). */
double sid_motor_torque(const sid_body *bd, const double *theta, double v, double u);
double sid_motor_torque_vjp(const sid_body *bd, const double *theta, double v, double u, double w, double *thetabar);
/* d tau_m / du of that motor (0 without one or for a servo): tau_m is linear in u. */
double sid_motor_torque_du(const sid_body *bd, const double *theta);
double sid_motor_torque_jvp(const sid_body *bd, const double *theta, double v, double u, double vdot,
                            const double *thetadot);

#endif
