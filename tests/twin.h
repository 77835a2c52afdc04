/* twin.h — sysid's model of a robot file against MuJoCo's compile of the same file, for the
 * import tests (test_urdf.c, test_mjcf.c).
 *
 * What is compared does not depend on how either side cuts the robot into bodies (MuJoCo
 * fuses a URDF's fixed links, sysid splits a multi-joint MJCF body into a chain): per joint,
 * the mass and world COM of everything the joint carries, the joint's world anchor and axis;
 * per body found under the same name on both sides, its mass and world inertia about its
 * COM; the joint-space mass matrix (armature included) and bias forces at random states; and a
 * replay of the same generalised forces. Joints are matched by name. */
#ifndef TEST_TWIN_H
#define TEST_TWIN_H

#include <stddef.h>

#include <mujoco/mujoco.h>

#include "sid.h"

typedef struct {
    int ndof;             /* joints matched by name (moving ones) */
    int nbody;            /* bodies matched by name (with a mass) */
    double mass;          /* max relative difference of total and per-joint subtree masses */
    double com;           /* max |difference| of per-joint subtree COMs in world [m], qpos0 and random q */
    double inertia;       /* max |difference| of matched bodies' mass [kg] and world inertia about the COM [kg m^2] */
    double frame;         /* max |difference| of joint anchors [m] and axes in world, qpos0 and random q */
    double M, bias;       /* max |difference| of the mass matrix and the bias forces at random states */
    double replay;        /* max |dq| over the replay [rad or m] */
} twin_figures;

/* m, theta: our model of the robot file; mm: MuJoCo's compile of the same robot (mesh geoms
 * removed if need be). In the replay (seconds long, Euler at 1 ms, from a random state) both
 * sides get the same sinusoidal generalised force on every one-dof joint (our torque_bias,
 * MuJoCo's qfrc_applied); limits, contact, equality constraints, actuators, joint springs and
 * dry friction are off on both sides (MuJoCo's disable flags; our Coulomb friction, servo gains and limit
 * gains set to 0 and the ground moved out of reach in a copy of theta), so that what is
 * compared is the rigid-body tree, its damping and armature. nstate random states for M and
 * bias. Returns 0, or -1 with msg naming the first structural mismatch (a joint missing, a
 * type differing). */
int twin_compare(const sid_model *m, const double *theta, mjModel *mm, double seconds, int nstate,
                 twin_figures *f, char *msg, size_t len);

/* The figures on one line to stderr: "twin: NAME  dofs N  mass .. com .. inertia .. frame .. M .. bias .. replay ..". */
void twin_print(const char *name, const twin_figures *f);

#endif
