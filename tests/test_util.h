/* test_util.h — random robots and gradient-check helpers shared by the Check suites. */
#ifndef TEST_UTIL_H
#define TEST_UTIL_H

#include "sid.h"

/* Features of a generated robot. */
enum {
    TU_BRANCHED = 1,      /* a tree, not a chain */
    TU_PRISMATIC = 2,     /* some prismatic joints */
    TU_FIXED = 4,         /* a fixed joint in the middle */
    TU_FRICTION = 8,      /* viscous, Coulomb and Stribeck friction, armature */
    TU_MOTORS = 16,       /* torque, current and voltage motors */
    TU_OFFSETS = 32,      /* encoder offsets */
    TU_ALL = 63
};

/* A random robot with njoint moving joints (plus a fixed one with TU_FIXED): random axes,
 * origins, rpy, masses, COMs and full inertia tensors. Free with tu_desc_free. */
sid_robot_desc *tu_random_robot(unsigned seed, int njoint, int features);
void tu_desc_free(sid_robot_desc *d);
/* Make d's motors servos (revolute and prismatic joints): joint j a position servo with a
 * torque limit (j % 3 == 0), a position servo without one (1), a velocity servo with one (2);
 * gear 1..3, kp 2..10, kd 0.1..1 and limits in [limit_lo, limit_hi], drawn from seed. */
void tu_servos(sid_robot_desc *d, unsigned seed, double limit_lo, double limit_hi);
/* Make every revolute and prismatic joint of d dry (Coulomb 0.05, no Stribeck term), the
 * motorised ones with a load row (0.05), whose bound moves with the command. */
void tu_dry_joints(sid_robot_desc *d);
/* The robot file at path (robot.json, URDF or MJCF), changed by edit (NULL: as it is), made a
 * model; theta gets its parameters. The test fails when either step does. */
sid_model *tu_file_model(const char *path, void (*edit)(sid_robot_desc *), double **theta);
/* The index of parameter name in m; the test fails when m has none. */
int tu_param(const sid_model *m, const char *name);
/* tu_random_robot's model, with its first joint off the root link made free when floating
 * (a floating base); theta gets the nominal parameters. */
sid_model *tu_random_model(unsigned seed, int njoint, int features, int floating, double **theta);
/* A box (0.2 x 0.15 x 0.1 m, 1 kg) on a free joint "base" with a contact sphere (radius 5 mm)
 * at each bottom corner, ground at z = 0.01 with the given model and friction (other ground
 * fields: defaults); with leg, also a swinging leg on a motorised hinge "hip" whose foot is a
 * sphere: contact on a descendant. NULL (with a message on stderr) if the model is rejected. */
sid_model *tu_box_robot(int leg, sid_contact_model model, double friction, double **theta);
/* Uniform in [lo, hi) from a small deterministic generator. */
double tu_uniform(unsigned *state, double lo, double hi);

/* MuJoCo-style relative error of analytic a against finite difference b:
 * max(0, |a - b| - atol) / (|a| + |b| + atol). */
double tu_rel_err(double a, double b, double atol);

/* A log of n samples at dt whose commands are sums of three sines of amplitude amp per
 * motor and whose states are simulated (Euler, one substep) with theta_true. */
sid_traj *tu_synth_log(const sid_model *m, const double *theta_true, int n, double dt, double amp, unsigned seed);
/* Replay tr's commands (and pushes) from its first state under o (NULL: the defaults) and write
 * the simulated states over its q and qd: a log the model at theta makes exactly. The test
 * fails when the simulation does. */
void tu_replay(const sid_model *m, const double *theta, sid_traj *tr, const sid_sim_opts *o);
/* Add Gaussian noise of standard deviation sq to q and sqd to qd. */
void tu_add_noise(sid_traj *tr, double sq, double sqd, unsigned seed);
/* The noise floor of problem p (loss weights weight_q, weight_qd) on logs with velocities and
 * that noise (tu_add_noise's sq and sqd): the expected loss of the true parameters from the
 * true start states, 1/2 mean over residual rows of w sigma^2 / scale^2. A fit of nfit unknowns
 * to nres residuals expects (1 - nfit / nres) of it. */
double tu_noise_loss(const sid_problem *p, double weight_q, double weight_qd, double sq, double sqd);

#endif
