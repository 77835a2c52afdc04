/* model.h — the model's internal layout, shared by the core's own files only.
 * Bodies are in topological order (parent < child); body 0 is the root. Each field of a body
 * that is a parameter lives in theta at the index stored here (-1 when absent). */
#ifndef SID_MODEL_H
#define SID_MODEL_H

#include "sid.h"

/* Offsets inside a body's parameter blocks, P_<kind>: where the kind's first component sits in
 * its block (sid_params.h: a block's rows in order). A layout struct with one member per row
 * gives them: a row's offset less its block's opening marker's (never instantiated). */
#define SID_LAYOUT_BLOCK_(block) double block##_start_;
#define SID_LAYOUT_ROW_(kind, owner, block, key, ncomp, ...) double kind[ncomp];
#define SID_LAYOUT_PART_(kind, owner, block, key, ncomp, comp0, ...) double kind##_part##comp0[ncomp];
struct sid_param_layout_ { SID_PARAM_TABLE(SID_LAYOUT_BLOCK_, SID_LAYOUT_ROW_, SID_LAYOUT_PART_) };
#define SID_LAYOUT_AT_(member) (offsetof(struct sid_param_layout_, member) / sizeof(double))
#define SID_BLOCK_OFFSET_(kind, owner, block, ...) P_##kind = (int)(SID_LAYOUT_AT_(kind) - SID_LAYOUT_AT_(block##_start_) - 1),
enum { SID_PARAM_TABLE(SID_IGNORE_, SID_BLOCK_OFFSET_, SID_IGNORE_) };

typedef struct {
    int parent, link, joint;
    sid_joint_type type;
    double axis[3];           /* unit, in the joint (= child body) frame */
    int qadr, vadr;           /* first position / velocity index; -1 for fixed joints and the root */
    int p_inertial;           /* mass, com[3], inertia[6]; -1 for a massless link */
    int p_origin;             /* xyz[3], rpy[3]; -1 for the root and free joints */
    int p_dof;                /* armature, viscous, coulomb, smoothing, offset; -1 if fixed or free */
    int p_stribeck;           /* torque, velocity; -1 if absent */
    int p_coulneg;            /* friction.coulomb_negative; -1 if absent (symmetric: p_dof's coulomb) */
    int p_fload;              /* friction.load; -1 if absent (0) */
    int p_motor;              /* gear, kt [, ke, resistance] (a servo: gear); -1 if no motor */
    int p_limit;              /* limit stiffness, damping; -1 without a position limit */
    int p_limit_lower, p_limit_upper;   /* the limit's bounds; -1 where unbounded */
    int p_servo;              /* kd [, kp]; -1 unless a servo */
    int p_servo_limit;        /* a servo's torque limit; -1 where absent (no saturation) */
    int p_delay;              /* the motor's command delay (delay.h); -1 where absent (no delay) */
    int p_sensor;             /* torque sensor gain, bias (torque_sensor.h); -1 where absent (1, 0) */
    int p_backlash;           /* width, stiffness, damping, inertia, smoothing (backlash.h); -1 where absent */
    int bl_q, bl_v;           /* the motor side's hidden position / velocity index (after the tree's); -1 */
    sid_motor_input motor;
    int dry;                  /* 1: its coulomb is dry friction (dry_friction.h), not the smooth force */
    int climit;               /* 1: its limit is the constraint model (a QP row per bound, dry_friction.h) */
    int moves_mass;           /* 1 if a link with mass is this body or below it */
    int placeholder;          /* 1: welded (fixed joint) with an inertia no rigid body has (welded.c) */
} sid_body;

typedef struct {
    int body;                 /* the body the sphere is fixed to */
    int p;                    /* xyz[3], radius in theta */
} sid_sphere;

struct sid_model {
    /* nq, nv: the simulated state, the tree's coordinates then the hidden motor sides of
     * backlash joints (backlash.h); nqo, nvo: the tree's alone, the logged ones (= nq, nv
     * without backlash). A state x = (q, v) has the logged q at x[0, nqo), v at x[nq, nq + nvo). */
    int nbody, nq, nv, nparam;
    int nqo, nvo, nbacklash;
    int p_gravity;
    int p_ground;             /* height, stiffness, damping, friction, width, smoothing; -1: no contact */
    sid_contact_model contact;
    double timestep;          /* [s] the robot's own simulation step (sid_robot_desc); 0: none */
    int integrator;           /* the robot's own sid_integrator (sid_robot_desc); -1: none */
    int nsphere;
    sid_sphere *sphere;
    int nfree;                /* free joints (each a child of the root) */
    int nlimit;               /* joints with a position limit */
    int ndry;                 /* joints with dry friction (one constraint row each) */
    int nclim;                /* bounds of constraint-model limits (one row each, present when crossed) */
    sid_body *body;
    sid_param_info *param;
    int ndofj;                /* moving joints, in q order */
    int *dof_body;            /* (ndofj) body of each moving joint */
    int *dof_parent;          /* (nv) velocity index of the nearest moving ancestor, -1 at the root */
    char (*dof_name)[SID_MAX_NAME];
    char (*link_name)[SID_MAX_NAME];    /* (nbody) each body's link, for log columns f.<link>.* */
    char (*q_name)[SID_MAX_NAME + 8];   /* (nq), (nv) coordinate names, see sid_model_q_name */
    char (*v_name)[SID_MAX_NAME + 8];
    int *q_angular, *v_angular;          /* (nq), (nv) */
};

/* The velocity index a joint's motor, friction and viscous damping act on: the hidden motor
 * side of a backlash joint, else the joint's own. */
static inline int sid_drive_vadr(const sid_body *bd) { return bd->bl_v >= 0 ? bd->bl_v : bd->vadr; }


/* sid_model_create but for what robot.json leaves out that the model itself determines (a
 * joint limit's default stiffness and damping): model_absent.c fills those in. */
sid_status sid_model_build(sid_model **out, double **theta_out, const sid_robot_desc *d, sid_error *err);

/* welded.c: mark the placeholders at the model's nominal theta (a welded link whose inertia is no
 * rigid body's); then the inertia check of sid_model_check_theta: every other link's inertia
 * positive definite and within the triangle inequality, and a moving body merged with the
 * placeholders welded to it likewise. */
void sid_model_mark_placeholders(sid_model *m, const double *theta);
sid_status sid_model_check_inertia(const sid_model *m, const double *theta, sid_error *err);

#endif
