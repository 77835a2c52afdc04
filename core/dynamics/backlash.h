/* backlash.h — a joint with backlash: a dead zone of width b between the motor and the link.
 *
 * The motor side is a rotor of inertia Jm (backlash.inertia) with its own hidden coordinate
 * theta_m (and velocity omega_m), at the joint's output side, appended to the state after the
 * tree's coordinates (model.h: nq, nv the state, nqo, nvo the logged part). The motor's torque,
 * the joint's friction (viscous, Coulomb, Stribeck, direction and load terms) and torque_bias
 * act on the motor side, as gearbox and motor friction do; the joint's armature and its limit
 * stay on the link. The two are coupled through a smoothed dead-zone spring-damper
 *     x = theta_m - q,  xd = omega_m - qd,
 *     dz(x) = w sp((x - b/2) / w) - w sp((-x - b/2) / w),  sp(z) = log(1 + exp(z)),
 *     gate(x) = dz'(x) = s((x - b/2) / w) + s((-x - b/2) / w),  s the logistic,
 *     tau_c = k dz(x) + c xd gate(x),
 * (k backlash.stiffness, c backlash.damping, w backlash.smoothing): the link gets +tau_c, the
 * motor -tau_c. dz is C-infinity, within w of the hard dead zone (|x| - b/2 outside it, 0 inside),
 * and gate, its slope, is the smooth "in contact" indicator, so the damper only acts in contact.
 * The spring's energy k \int_0^x dz is >= 0 and the damper's power -c xd^2 gate <= 0: the
 * coupling never injects energy.
 *
 * Logs never hold the motor side: it has no residual rows and no log columns. A window starts
 * with theta_m = q, omega_m = qd (centred in the gap, unloaded), whether its start is logged or
 * fitted: a fitted start fits the link's state and the motor side follows it. */
#ifndef SID_BACKLASH_H
#define SID_BACKLASH_H

#include "fd_point.h"
#include "model.h"


/* dz(x) for width b and smoothing w, and its slope gate(x) in *gate. */
double sid_backlash_dz(double b, double w, double x, double *gate);

/* F += the coupling torques (F has nv entries). */
void sid_backlash_force(const sid_model *m, const double *theta, const double *q, const double *v, double *F);
/* Adjoint: with output adjoint Fbar, accumulate qbar, vbar and thetabar. */
void sid_backlash_force_vjp(const sid_fd_point *p, const double *Fbar, const sid_state_bar *bar);
/* Tangent: Fdot += dF along (qd, vd, thd). */
void sid_backlash_force_jvp(const sid_fd_point *p, const sid_state_dir *dir, double *Fdot);

/* The rotors' inertia on the mass matrix's diagonal (A is nv x nv), and the terms it adds to
 * the forward dynamics' adjoint (R -= Jm a: thetabar -= a w) and tangent (ad -= Jmdot a). */
void sid_backlash_inertia(const sid_model *m, const double *theta, double *A);
void sid_backlash_inertia_vjp(const sid_model *m, const double *a, const double *w, double *thetabar);
void sid_backlash_inertia_jvp(const sid_model *m, const double *thd, const double *a, double *ad);

/* tau's hidden entries to 0 (the tree's algorithms write only the tree's). */
void sid_backlash_zero_hidden(const sid_model *m, double *tau);

/* A full state x = (q, v) from a window's start xo = (q[nqo], v[nvo]): the motor sides start at
 * their links' q and qd. xo may be x (then expanded in place). */
void sid_backlash_expand(const sid_model *m, const double *xo, double *x);
/* In a full state whose logged parts are set, the motor sides to their links' q and qd. */
void sid_backlash_start(const sid_model *m, double *x);
/* Adjoint of sid_backlash_expand: xobar (nqo + nvo) = d/dxo of the state adjoint xbar. */
void sid_backlash_fold(const sid_model *m, const double *xbar, double *xobar);
/* Tangent seed of expand for a start direction along logged coordinate j of xo: qdot, vdot. */
void sid_backlash_seed(const sid_model *m, int j, double *qdot, double *vdot);

#endif
