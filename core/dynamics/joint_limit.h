/* joint_limit.h — a joint's position limit as a stated soft constraint, and its derivatives.
 *
 * For a revolute or prismatic joint with bounds lower <= upper (either may be absent), the
 * penetrations d_u = q - upper and d_l = lower - q enter the softplus S(d) = w log(1 + exp(d / w))
 * of fixed width w = SID_LIMIT_WIDTH, whose slope sigma(d) = S'(d) is the logistic; the joint's
 * generalised force gains
 *     tau_lim = -(k S(d_u) + b sigma(d_u) qd) + (k S(d_l) - b sigma(d_l) qd)
 * (k the limit's stiffness, b its damping): a spring on the penetration and a damper switched on
 * by it, smooth, so that its derivatives are exact. Far inside the range it is exactly zero:
 * exp(d / w) underflows to 0 for d < -745 w (0.075 rad or m); at d = -10 w it is still
 * S = 4.5e-5 w, sigma = 4.5e-5.
 *
 * Absent gains are MuJoCo's default soft limit (solref timeconst 0.02 s, dampratio 1; solimp
 * dmax 0.95): acceleration gains k_a = 1 / (dmax^2 tc^2 dr^2), b_a = 2 / (dmax tc) times the dof's
 * effective inertia at q = 0, 1 / (M^-1)_jj with armature (MuJoCo's dof_invweight0).
 * What differs from MuJoCo's constraint-based limit: MuJoCo solves for a constraint force at the
 * acceleration level, a = (1 - d) a_free + d a_ref with a_ref = -b_a qd - k_a d r and an impedance
 * d(r) rising from 0.9 at the limit to 0.95 at 1 mm of penetration, and its force never pulls
 * (f >= 0) and only acts once the limit is crossed. Here the force is a plain spring-damper at
 * full gain, acting on top of the free acceleration, its damper can pull while the joint leaves
 * the limit, and the softplus starts it smoothly a few w before the bound. Near the limit the two
 * therefore differ: on a pendulum the overshoot past the bound is 9 % smaller than MuJoCo's and
 * the joint leaves the bound at 0.2 of MuJoCo's speed, the damper holding back what MuJoCo's
 * force, which cannot pull, lets go (tests/test_limits.c measures it); away from the limits the
 * two are the same model. This is limit.model "spring"; "constraint" is MuJoCo's limit itself, rows
 * of the per-step constraint QP (dry_friction.h), and never reaches this file (no p_limit). */
#ifndef SID_JOINT_LIMIT_H
#define SID_JOINT_LIMIT_H

#include "fd_point.h"
#include "model.h"

#define SID_LIMIT_WIDTH 1e-4        /* w [rad or m]: the softplus's width */
#define SID_LIMIT_TIMECONST 0.02    /* MuJoCo's default solref[0] [s] */
#define SID_LIMIT_DAMPRATIO 1.0     /* MuJoCo's default solref[1] */
#define SID_LIMIT_DMAX 0.95         /* MuJoCo's default solimp[1] */

/* F += tau_lim(q, v) for every joint with a limit (F has nv entries). */
void sid_joint_limit_force(const sid_model *m, const double *theta, const double *q, const double *v, double *F);
/* Adjoint: with output adjoint Fbar, accumulate qbar, vbar and thetabar. */
void sid_joint_limit_force_vjp(const sid_fd_point *p, const double *Fbar, const sid_state_bar *bar);
/* Forward mode: Fdot += tangent of tau_lim along (qdot, vdot, thetadot). */
void sid_joint_limit_force_jvp(const sid_fd_point *p, const sid_state_dir *dir, double *Fdot);

#endif
