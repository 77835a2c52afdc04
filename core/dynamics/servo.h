/* servo.h — position and velocity servos: a joint's motor closes a PD loop on a reference.
 *
 * With gear G, the servo works on the actuator coordinate l = G (q + offset) (the encoder's
 * reading times the gear, as MuJoCo's joint transmission has actuator length G q) and its rate
 * G qd; the command u is the reference of l (rad or m; rad/s or m/s for a velocity servo):
 *     position servo: f = kp (u - G (q + offset)) - kd G qd
 *     velocity servo: f = kd (u - G qd)
 * saturated smoothly at the torque limit L where one is given, f_s = L tanh(f / L) (absent: f_s
 * = f), and the joint's generalised force gains tau = G f_s. With G = 1, offset 0 and no limit
 * this is MuJoCo's `position` actuator (gain kp, bias 0 -kp 0) plus a `velocity` one with ctrl 0
 * (gain kv, bias 0 0 -kv), or one `general` actuator with gain kp and bias 0 -kp -kd; MuJoCo's
 * forcerange clamps f instead, so the two differ within a few L of the limit (L tanh(1) = 0.76 L
 * at f = L). The servo's force is evaluated explicitly at the step's start (MuJoCo 2.2.2's
 * Euler is implicit in joint damping only), so under euler kd is not integrated implicitly like
 * viscous; implicitfast takes G^2 kd implicitly too (actuator_damping.h). */
#ifndef SID_SERVO_H
#define SID_SERVO_H

#include "fd_point.h"
#include "model.h"

/* F += tau_servo(q, v, u) for every joint with a servo (F has nv entries). */
void sid_servo_force(const sid_model *m, const double *theta, const double *q, const double *v, const double *u,
                     double *F);
/* Adjoint: with output adjoint Fbar, accumulate qbar, vbar (either may be NULL) and thetabar. */
void sid_servo_force_vjp(const sid_fd_point *p, const double *Fbar, const sid_state_bar *bar);
/* The commands' adjoint: ubar[i] += (dtau_servo/du_i) Fbar[i] (command_grad.c). */
void sid_servo_force_ubar(const sid_fd_point *p, const double *Fbar, double *ubar);
/* Forward mode: Fdot += tangent of tau_servo along (qdot, vdot, thetadot); qdot may be NULL (0). */
void sid_servo_force_jvp(const sid_fd_point *p, const sid_state_dir *dir, double *Fdot);

#endif
