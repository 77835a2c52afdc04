/* actuator_damping.h — how fast a joint's actuator force falls with its velocity: the damping
 * the implicitfast integrator takes implicitly beside the joint's viscous friction (MuJoCo's
 * implicitfast: M - h qDeriv, qDeriv the velocity derivative of the passive and actuator forces).
 *
 * A servo (servo.h) has tau = G f_s(f) with df/dv = -kd G: its damping G^2 kd; a voltage motor
 * tau = G kt (u - ke G v) / R: G^2 kt ke / R; others none. Taken without the servo's smooth
 * saturation (the unsaturated slope, as MuJoCo's position and velocity actuators' kv), so the
 * damping depends on theta only, never on the state: the step stays one linear solve and its
 * derivatives need no second derivative of the force. */
#ifndef SID_ACTUATOR_DAMPING_H
#define SID_ACTUATOR_DAMPING_H

#include "model.h"

/* The velocity coordinate body bd's actuator damps, -1 for a joint without such an actuator. */
int sid_actuator_damping_dof(const sid_body *bd);
/* Its damping at theta (0 without one). */
double sid_actuator_damping(const sid_body *bd, const double *theta);
/* thetabar += w d(damping)/dtheta. */
void sid_actuator_damping_vjp(const sid_body *bd, const double *theta, double w, double *thetabar);
/* The damping's tangent along thetadot. */
double sid_actuator_damping_jvp(const sid_body *bd, const double *theta, const double *thetadot);

#endif
