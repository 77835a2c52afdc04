/* constraint_rig.h — the test rig that test_dry_friction.c and test_limit_constraint.c share for
 * the constraint rows of dry_friction.h: a random serial chain written both as robot.json and
 * as MJCF (for MuJoCo 2.2.2 as the oracle), our model of it, and a 300-step window whose loss
 * is checked through the adjoint, forward mode, central differences and the tape. Each suite
 * keeps its own loads (torques, bounds) and its own tolerances and printed lines. */
#ifndef TEST_CONSTRAINT_RIG_H
#define TEST_CONSTRAINT_RIG_H

#include <stddef.h>

#include <mujoco/mujoco.h>

#include "robot_json.h"
#include "sid_internal.h"

#define RIG_MAXJ 8

/* A serial chain: joint k at xyz[k] in link k-1's frame about axis[k], link k's mass, COM and
 * diagonal inertia, the joint's armature, damping, frictionloss and bounds [lo, hi];
 * torque k = bias + amp sin(w t + ph). */
typedef struct {
    int n;
    double xyz[RIG_MAXJ][3], axis[RIG_MAXJ][3];
    double mass[RIG_MAXJ], com[RIG_MAXJ][3], inertia[RIG_MAXJ][3];
    double armature[RIG_MAXJ], damping[RIG_MAXJ], floss[RIG_MAXJ], lo[RIG_MAXJ], hi[RIG_MAXJ];
    double amp[RIG_MAXJ], w[RIG_MAXJ], ph[RIG_MAXJ], bias[RIG_MAXJ];
} rig_chain;

/* Joint k's place and inertias, drawn from s (the part of a random chain both suites share; each
 * draws its loads after it): joints about y and x alternately, links 0.3 m apart. */
void rig_chain_link(rig_chain *c, int k, unsigned *s);

/* The chain as robot.json: friction.model `friction` on every joint (NULL: none written),
 * a limit [lo, hi] with limit.model `limit` on every joint (NULL: no limit). Returns the length
 * snprintf wanted. */
int rig_json(const rig_chain *c, char *buf, size_t len, const char *friction, const char *limit);

/* The chain as MJCF at h = 1 ms, Euler, solver tolerance 1e-12 (MuJoCo's answer is then the QP's
 * exact solution), contacts off; `limited`: each joint limited to [lo, hi]. */
int rig_mjcf(const rig_chain *c, char *buf, size_t len, int limited);
/* The same with MuJoCo's integrator `integrator` ("Euler" or "RK4"). */
int rig_mjcf_integrator(const rig_chain *c, char *buf, size_t len, int limited, const char *integrator);

/* MuJoCo's compile of an MJCF text (fails the test with MuJoCo's message). */
mjModel *rig_mujoco(const char *xml);

double rig_torque(const rig_chain *c, int k, double t);

/* Our model of the chain (rig_json's friction and limit). */
typedef struct {
    sid_robot_desc desc;
    sid_model *m;
    double *theta;
    sid_workspace *ws;
} rig_model;

void rig_model_make(rig_model *p, const rig_chain *c, const char *friction, const char *limit);
void rig_model_free(rig_model *p);

/* ---- a window: L = sum_k wq[k].Q[k] + wv[k].V[k] over RIG_NSTEP steps of 1 ms by integ ---- */

enum { RIG_NSTEP = 300 };

typedef struct {
    rig_model p;
    rig_chain c;
    double q0[RIG_MAXJ], v0[RIG_MAXJ];
    double wq[RIG_NSTEP + 1][RIG_MAXJ], wv[RIG_NSTEP + 1][RIG_MAXJ];
    double Q[RIG_NSTEP + 1][RIG_MAXJ], V[RIG_NSTEP + 1][RIG_MAXJ];
    sid_integrator integ;   /* SID_EULER (0, what a zeroed window has) or SID_RK4 */
} rig_window;

/* The start state (q0 in [-qspan, qspan], v0 in [-0.5, 0.5]) and the weights, drawn from seed + 50;
 * w->c and w->p already made. */
void rig_win_start(rig_window *w, unsigned seed, double qspan);
double rig_win_loss(rig_window *w);
/* The adjoint of the window: dL/dq0, dL/dv0, dL/dtheta (thetabar accumulated into). */
void rig_win_adjoint(rig_window *w, double *q0bar, double *v0bar, double *thetabar);
/* dL/dx by central differences at step 1e-6 max(1, |x|), x a start state entry or a parameter. */
double rig_win_fd(rig_window *w, double *x);

/* The worst relative error (tu_rel_err, floor 2e-9 max(1, |L|): rounding) of the adjoint against rig_win_fd over the
 * start state and then every parameter, described in `where`; *checked: parameters whose
 * difference quotient exceeds 1e-6, *bounds: those of them named "limit.". */
double rig_win_gradient_err(rig_window *w, const double *q0bar, const double *v0bar, const double *thetabar,
                            char *where, size_t wlen, int *checked, int *bounds);

/* Forward mode along random (q0dot, v0dot, thetadot) against the adjoint (dot-product test),
 * printed as "<label> forward mode: ..." and asserted to agree to 1e-10 relative (both suites'
 * tolerance: the two modes are the same derivative summed in different orders). */
void rig_win_forward_mode(rig_window *w, const char *label);

/* Step by step along the window, the adjoint from the tape record against the re-solving one,
 * printed as "<label> taped adjoint vs re-solving adjoint: max difference .. (<largest> ..)" and
 * asserted to 1e-12 of the largest entry: the same arithmetic on the same numbers, but for A
 * rebuilt from the recorded factor. `replay`: also assert that the taped step lands on the
 * window's own states bit for bit (the dry friction suite's check). */
void rig_win_taped(rig_window *w, int replay, const char *label, const char *largest);

void rig_win_free(rig_window *w);   /* its model and itself */

/* ---- recovery ---- */

/* Fit theta[idx[0..n-1]] (bounds lo, hi) of m, from the values theta holds, to one log: 0.5 s
 * windows with fitted start states, one Euler step a sample, ftol_rel 1e-15; theta gets the
 * fit, res the optimizer's result. Returns the worst relative error against truth over the
 * free parameters, and in *at the parameter where it is. */
double rig_fit_worst(const sid_model *m, double *theta, const double *truth, const sid_traj *log, int n, const int *idx,
                     const double *lo, const double *hi, sid_fit_result *res, int *at);

#endif
