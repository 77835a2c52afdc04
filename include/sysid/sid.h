/* sid.h — public interface of libsysid, the differentiable rigid-body core of sysid.
 *
 * Conventions, fixed once here:
 *  - Units are SI: m, kg, kg·m², s, rad, N, N·m, A, V, Ω.
 *  - Spatial vectors are [angular; linear] (Featherstone), expressed in body frames.
 *  - A robot is a tree of bodies; body 0 is the root, welded to the world. Every other
 *    body b has exactly one joint connecting it to parent[b] < b (topological order).
 *  - Every number of robot.json is an entry of the parameter vector theta (see
 *    sid_param_info); the model holds only structure (topology, joint types, axes) and
 *    the indices at which each body's and joint's numbers live in theta.
 *  - Positions q (nq) and velocities v (nv) are separate vectors; their sizes may differ.
 *  - Commands u have one entry per velocity coordinate (0 where a joint has no motor; a servo's
 *    reference, servo.h).
 *
 * Nothing here reads files, prints or exits. Functions that can fail return sid_status and
 * fill the sid_error passed last (which may be NULL).
 */
#ifndef SID_H
#define SID_H

#include <stddef.h>

#define SID_VERSION "0.1.0"
#define SID_MAX_NAME 64
#define SID_MAX_JOINTS 64

/* ---- status and errors ---------------------------------------------------------------- */

typedef enum {
    SID_OK = 0,
    SID_ERR_INPUT,     /* invalid model, log or option: the caller's input is wrong */
    SID_ERR_NONFINITE, /* a simulation produced NaN or Inf */
    SID_ERR_SINGULAR,  /* a mass matrix was not positive definite */
    SID_ERR_NOMEM,     /* an allocation failed */
    SID_ERR_NUMERIC,   /* an optimizer or solver failed to produce a usable point */
    SID_ERR_INTERRUPTED   /* stopped because the caller's interrupt flag was set */
} sid_status;

typedef struct {
    sid_status status;
    char msg[512];
} sid_error;

/* Record status s and a printf-style message in err (if not NULL); returns s. */
sid_status sid_error_set(sid_error *err, sid_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Prefix err->msg with a context string ("prefix: old message"). */
void sid_error_prefix(sid_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *sid_status_str(sid_status s);

/* Seconds on the monotonic clock (core/base/clock.c): what every timing reads. */
double sid_clock_seconds(void);

/* ---- counted allocation (so tests can prove the step loop does not allocate) ---------- */

void *sid_alloc(size_t n);            /* zero-filled; NULL on failure */
void sid_free(void *p);
long sid_alloc_count(void);           /* number of sid_alloc calls so far */

/* ---- robot description: what cli/ fills from robot.json ----------------------------- */

/* A free joint (6 dof) connects a floating link to the root link. Its position is
 * (x, y, z, qw, qx, qy, qz): origin in the world frame and the unit quaternion of the link's
 * orientation; its velocity (vx, vy, vz, wx, wy, wz): linear velocity of the link origin in the
 * world frame, angular velocity in the link frame (MuJoCo's convention). */
typedef enum { SID_JOINT_FIXED, SID_JOINT_REVOLUTE, SID_JOINT_PRISMATIC, SID_JOINT_FREE } sid_joint_type;
/* Motor inputs: torque, current and voltage motors turn u into a torque; position and velocity
 * servos (servo.h) take u as their reference. */
typedef enum {
    SID_MOTOR_NONE, SID_MOTOR_TORQUE, SID_MOTOR_CURRENT, SID_MOTOR_VOLTAGE, SID_MOTOR_POSITION, SID_MOTOR_VELOCITY
} sid_motor_input;
/* A joint's Coulomb friction (friction.model): smooth, tau = coulomb tanh(v / smoothing) as a
 * force; dry, MuJoCo's frictionloss, a per-step constraint that sticks (dry_friction.h). */
typedef enum { SID_FRICTION_SMOOTH, SID_FRICTION_DRY } sid_friction_model;
/* A joint's position limit (limit.model): spring, a smooth spring-damper force (joint_limit.h);
 * constraint, MuJoCo's limit, a one-sided row of the per-step constraint QP (dry_friction.h). */
typedef enum { SID_LIMIT_SPRING, SID_LIMIT_CONSTRAINT } sid_limit_model;

typedef struct {
    char name[SID_MAX_NAME];
    int has_mass;             /* 0: massless link (mass, com, inertia absent) */
    double mass;              /* [kg] */
    double com[3];            /* [m] in the link frame */
    double inertia[6];        /* [kg·m²] about the COM: ixx iyy izz ixy ixz iyz */
} sid_link_desc;

typedef struct {
    char name[SID_MAX_NAME];
    sid_joint_type type;
    int parent, child;        /* indices into sid_robot_desc.link; -1 if unresolved */
    double xyz[3], rpy[3];    /* origin of the joint frame in the parent link frame [m, rad] */
    double axis[3];           /* in the joint frame; need not be unit (normalised on create) */
    double armature;          /* [kg·m² or kg] */
    double viscous, coulomb, smoothing;   /* [N·m·s/rad], [N·m], [rad/s] */
    sid_friction_model friction_model;   /* what coulomb means (smoothing unused when dry) */
    int has_stribeck;
    double stribeck_torque, stribeck_velocity;   /* [N·m], [rad/s] */
    /* Direction- and load-dependent Coulomb friction (each present only where robot.json gives
     * it): the level while moving negative (absent: coulomb, symmetric), and mu_L, the level's
     * growth with the motor's torque, level = coulomb (or coulomb_negative) + mu_L |tau_m|. */
    int has_coulomb_negative, has_friction_load;
    double coulomb_negative, friction_load;      /* [N·m], [-] */
    sid_motor_input motor;
    double gear, kt, ke, resistance;      /* [-], [N·m/A], [V·s/rad], [Ω] */
    /* A servo's gains and its optional smooth torque limit (servo.h): [N·m/rad or N/m],
     * [N·m·s/rad or N·s/m], [N·m or N] */
    double kp, kd;
    int has_servo_limit;
    double servo_limit;
    /* Command delay [s] (delay.h): the motor sees the command of t - delay; a row only where given */
    int has_delay;
    double delay;
    /* Joint torque sensor (torque_sensor.h): reading = gain tau_link + bias; rows only where
     * robot.json gives "torque_sensor" (a logged tau column without one reads gain 1, bias 0) */
    int has_torque_sensor;
    double sensor_gain, sensor_bias;          /* [-], [N·m or N] */
    /* Backlash (backlash.h): a motor-side rotor of inertia backlash_inertia coupled to the link
     * through a smoothed dead zone of width backlash_width, a spring-damper in contact; its rows
     * exist only where robot.json gives "backlash" */
    int has_backlash;
    double backlash_width, backlash_stiffness, backlash_damping, backlash_inertia, backlash_smoothing;
    double offset;            /* encoder offset: measured q = q + offset [rad or m] */
    double torque_bias;       /* constant generalised force added to the joint's [N·m or N] */
    /* Position limit (a revolute or prismatic joint's "limit"), a soft constraint (joint_limit.h):
     * either side may be absent (unbounded). Stiffness and damping absent: computed by
     * sid_model_create from MuJoCo's default soft limit and the dof's inertia at q = 0. */
    int has_limit_lower, has_limit_upper;
    double limit_lower, limit_upper;          /* [rad or m] */
    sid_limit_model limit_model;              /* constraint: no stiffness or damping (MuJoCo's solref) */
    int has_limit_stiffness, has_limit_damping;
    double limit_stiffness, limit_damping;    /* [N·m/rad or N/m], [N·m·s/rad or N·s/m] */
    double limit_effort, limit_velocity;      /* URDF's, recorded, not simulated; -1: absent */
} sid_joint_desc;

/* Contact: spheres fixed to links against the ground plane z = height (world frame).
 *  compliant: penetration d = height + radius - z_centre, S(d) = w log(1 + exp(d / w)),
 *             normal force f_n = S(d) (stiffness - damping * zdot) (Hunt-Crossley: no pull
 *             unless zdot > stiffness / damping), smooth Coulomb friction
 *             f_t = -friction f_n v_t / sqrt(|v_t|^2 + smoothing^2) at the sphere's lowest point.
 *  hard:      Euler only (RK4 with hard contact is SID_ERR_INPUT). Each step: a = fd(q, v, u)
 *             without contact, v* = v + h a; every sphere whose gap phi = z_centre - radius -
 *             height is below a margin is a contact with an impulse lambda (world axes) at its
 *             lowest point; v+ = v* + A^-1 J^T lambda (A = M + B + h D, J the contact points'
 *             world velocities), with ln >= 0, u_n >= -beta phi / h (beta 0.2: no penetration
 *             velocity), complementarity, Coulomb friction |l_t| <= friction ln with maximum
 *             dissipation (sticking: u_t = 0; sliding: l_t opposite u_t), solved to machine
 *             precision (a 1e-3 / total-mass regularisation makes lambda unique on redundant
 *             contacts); q+ = q (+) h v+. Stiffness, damping, width and smoothing are unused.
 *             The step's adjoint differentiates the solution implicitly (implicit function
 *             theorem on the conditions with the active set fixed); see contact_hard.c. */
typedef enum { SID_CONTACT_COMPLIANT, SID_CONTACT_HARD, SID_NCONTACT_MODEL } sid_contact_model;

typedef struct {
    char name[SID_MAX_NAME];
    int link;                 /* index into sid_robot_desc.link; -1 if unresolved */
    double xyz[3];            /* centre in the link frame [m] */
    double radius;            /* [m] */
} sid_sphere_desc;

typedef struct {
    int present;              /* 0: no ground, no contact */
    sid_contact_model model;
    double height;            /* [m] */
    double stiffness;         /* [N/m] */
    double damping;           /* [N·s/m²] Hunt-Crossley: f_n = S(d) (stiffness - damping zdot) */
    double friction;          /* [-] Coulomb coefficient */
    double width;             /* [m] activation width w of the compliant normal force */
    double smoothing;         /* [m/s] velocity scale of the smooth Coulomb friction */
} sid_ground_desc;

/* Defaults (docs/formats.md): compliant, height 0, stiffness 1e4, damping 1e3, friction 1,
 * width 1e-3, smoothing 1e-2; present = 1. */
void sid_ground_desc_defaults(sid_ground_desc *g);

/* euler: MuJoCo's semi-implicit Euler, implicit in joint damping; rk4: classic Runge-Kutta;
 * implicitfast: MuJoCo 3's, Euler implicit in joint damping and the actuators' damping too
 * (a servo's kd, a voltage motor's back-EMF), for stiff servos at a robot file's own step. */
typedef enum { SID_EULER, SID_RK4, SID_IMPLICITFAST, SID_NINTEGRATOR } sid_integrator;

typedef struct {
    char name[SID_MAX_NAME];
    double gravity[3];        /* [m/s²] in the world (root) frame */
    int nlink, njoint;
    sid_link_desc *link;      /* in robot.json order */
    sid_joint_desc *joint;    /* in robot.json order */
    sid_ground_desc ground;   /* present = 0: no contact */
    int nsphere;
    sid_sphere_desc *sphere;  /* in robot.json order */
    double timestep;          /* [s] the step the model is defined at (MuJoCo's <option timestep>),
                               * which the automatic step choice takes; 0: none */
    int has_integrator;       /* 1: the file names its integrator (MuJoCo's <option integrator>), */
    sid_integrator integrator;   /* which a spec or flag that names none takes */
} sid_robot_desc;

/* Defaults of the optional joint fields (docs/formats.md): all zero, smoothing 0.01, gear 1, kt 1, no
 * limit (limit effort and velocity -1: absent). */
void sid_joint_desc_defaults(sid_joint_desc *j);

/* ---- parameters: the table of every kind (sid_params.h) ------------------------------------ */

#include "sid_params.h"

/* The kinds, in the table's order (sid_params.h). */
#define SID_KIND_ENUM_(kind, ...) SID_P_##kind,
#define SID_IGNORE_(...)
typedef enum { SID_PARAM_TABLE(SID_IGNORE_, SID_KIND_ENUM_, SID_IGNORE_) SID_NPARAM_KIND } sid_param_kind;

/* What a parameter belongs to: its name and JSON path start with the owner's. */
typedef enum { SID_OWNER_ROBOT, SID_OWNER_LINK, SID_OWNER_JOINT, SID_OWNER_GROUND, SID_OWNER_SPHERE } sid_param_owner;
/* Which owners have it: every one; links with a mass; joints with an origin (all but free ones);
 * moving one-dof joints; those with Stribeck friction; with a motor; with a voltage motor; with a
 * position limit (a lower or an upper bound); with a lower bound; with an upper bound; with a
 * torque, current or voltage motor; with a servo; with a position servo; with a servo whose
 * torque limit is given. */
typedef enum {
    SID_ON_ALWAYS, SID_ON_MASS, SID_ON_ORIGIN, SID_ON_DOF, SID_ON_STRIBECK, SID_ON_MOTOR, SID_ON_VOLTAGE,
    SID_ON_LIMIT, SID_ON_LIMIT_LOWER, SID_ON_LIMIT_UPPER, SID_ON_ELECTRIC, SID_ON_SERVO, SID_ON_POSITION_SERVO,
    SID_ON_SERVO_LIMIT, SID_ON_LIMIT_SPRING, SID_ON_COULOMB_NEGATIVE, SID_ON_FRICTION_LOAD, SID_ON_DELAY,
    SID_ON_TORQUE_SENSOR,
    SID_ON_BACKLASH
} sid_param_on;
typedef enum { SID_RANGE_ANY, SID_RANGE_NONNEGATIVE, SID_RANGE_POSITIVE } sid_param_range;
/* The block of theta a row's numbers live in (model.h's P_* offsets index a block). */
#define SID_BLOCK_ENUM_(block) SID_BLOCK_##block,
typedef enum { SID_PARAM_TABLE(SID_BLOCK_ENUM_, SID_IGNORE_, SID_IGNORE_) SID_NPARAM_BLOCK } sid_param_block;

/* One row of the parameter table: a kind, or a part of one (the inertia's moments and products). */
typedef struct {
    sid_param_kind kind;
    sid_param_owner owner;
    const char *key;              /* path below the owner in robot.json, '.'-separated ("friction.viscous") */
    int ncomp, comp0;             /* components comp0 .. comp0 + ncomp - 1 (a scalar: 1, 0) */
    const char *const *comp_key;  /* components as object keys ("ixx"), or NULL: an array, "[k]" */
    sid_param_on on;
    sid_param_block block;
    const char *unit;             /* revolute joints and everything else */
    const char *unit_prismatic;   /* NULL: unit */
    const char *unit_torque_input;   /* for a joint whose motor takes torque; NULL: as above */
    sid_param_range range;
    int required;                 /* 1: must be given where its enclosing object is */
    double dflt[3];               /* per component, when robot.json leaves it out (NaN: never absent) */
    int log_scale;                /* 1: a fit moves log(theta / nominal) (a strictly positive quantity) */
    double typical;               /* a fit's step scale when the nominal value is 0 */
    size_t offset;                /* of component comp0 in the owner's sid_*_desc (a double) */
    int fit_default;              /* 1: freed by a fit that names no free parameters (where it moves something) */
} sid_param_row;

typedef struct {
    char name[2 * SID_MAX_NAME + 32];   /* e.g. "links.upper.inertia.ixx", "gravity[2]" */
    const char *unit;                   /* e.g. "kg*m^2" */
    sid_param_kind kind;
    int owner;                          /* link, joint or sphere index in the description; -1 otherwise */
    int comp;                           /* component within a vector field, else 0 */
    const sid_param_row *row;
} sid_param_info;

/* The table (rows in parameter order) and its length. */
int sid_param_rows(const sid_param_row **rows);
/* The row of component comp of a kind (NULL if none). */
const sid_param_row *sid_param_row_of(sid_param_kind kind, int comp);
/* Numbers an owner of this class can have at most (the table's components). */
int sid_param_count(sid_param_owner owner);
/* "links", "joints", "contact.spheres", "contact.ground" or "" (the robot). */
const char *sid_param_owner_array(sid_param_owner owner);

/* Does the row exist on owner (an index into d's links, joints or spheres; ignored otherwise)? */
int sid_param_exists(const sid_param_row *row, const sid_robot_desc *d, int owner);
/* Who has a row's parameter, for messages ("only a voltage motor has it"). */
const char *sid_param_on_what(sid_param_on on);
/* The row's unit on that owner (prismatic joints and torque-input motors have their own). */
const char *sid_param_unit(const sid_param_row *row, const sid_robot_desc *d, int owner);
/* Where the loader keeps the row's first component in d (components follow it). */
double *sid_param_field(const sid_param_row *row, sid_robot_desc *d, int owner);
const double *sid_param_value(const sid_param_row *row, const sid_robot_desc *d, int owner);
/* Every number of an owner's description (a sid_robot_desc, sid_link_desc, ...) to its default. */
void sid_param_defaults(sid_param_owner owner, void *desc);
/* Component comp's name ("joints.elbow.friction.viscous") and robot.json path ("joints[1].friction.viscous"). */
void sid_param_name(const sid_param_row *row, const char *owner_name, int comp, char *buf, size_t len);
void sid_param_json_path(const sid_param_row *row, int owner, int comp, char *buf, size_t len);
/* "a positive number", ...: what a range expects; and whether x is in it (and finite). */
const char *sid_param_range_what(sid_param_range range);
int sid_param_in_range(sid_param_range range, double x);

/* ---- model --------------------------------------------------------------------------- */

typedef struct sid_model sid_model;

/* Validate d and build the model; *theta0 receives a new array (sid_alloc) of the nominal
 * parameter values. Errors name the JSON path ("joints[2].parent: ...").  */
sid_status sid_model_create(sid_model **m, double **theta0, const sid_robot_desc *d, sid_error *err);
void sid_model_free(sid_model *m);

/* Logged coordinates: the tree's positions and velocities, the columns of a log and of a
 * window's start state (sid_problem_*). */
int sid_model_nq(const sid_model *m);
int sid_model_nv(const sid_model *m);
/* Simulated state: the logged coordinates, then one hidden motor-side position and velocity
 * per backlash joint (backlash.h); what sid_step's q and v hold. Equal to the above without backlash. */
int sid_model_nq_state(const sid_model *m);
int sid_model_nv_state(const sid_model *m);
int sid_model_nparam(const sid_model *m);
const sid_param_info *sid_model_param(const sid_model *m, int i);
/* The model's positions from measured ones (nq each, may alias): the encoder offsets taken off,
 * as the loss reads a log (core/model/measure.h). */
void sid_model_q_from_measured(const sid_model *m, const double *theta, const double *qm, double *q);
int sid_model_param_find(const sid_model *m, const char *name);   /* -1 if absent */
/* 0 if parameter i belongs to a link that no moving joint carries (welded to the world, its
 * mass moves nothing); 1 otherwise. */
int sid_model_param_moves(const sid_model *m, int i);
/* Does name match pattern? '*' matches any run of characters (dots included), '?' any one,
 * '\\' makes the next character literal; everything else, '[' and ']' too, matches itself, so
 * "links.*.com[2]" selects every link's z COM. The one matcher of --free, bounds and --set. */
int sid_glob_match(const char *pattern, const char *name);
/* Set mask[i] = 1 for every parameter whose name matches glob (sid_glob_match); mask may be
 * NULL. Returns the number matched. */
int sid_model_param_match(const sid_model *m, const char *glob, int *mask);
/* robot.json path of parameter i for messages, e.g. "links[2].inertia.ixx". */
void sid_model_param_path(const sid_model *m, int i, char *buf, size_t len);
/* Moving (non-fixed) joints in q order: count, name, description index, q and v address. */
int sid_model_ndof_joints(const sid_model *m);
const char *sid_model_dof_joint_name(const sid_model *m, int k);
int sid_model_dof_joint_desc(const sid_model *m, int k);
int sid_model_dof_joint_has_motor(const sid_model *m, int k);
/* The body of the link named name (its pushes' place in sid_traj.push), -1 if none; 0 is the root. */
int sid_model_link_body(const sid_model *m, const char *name);
int sid_model_nbody(const sid_model *m);   /* links, the root included: sid_traj.push has 12 numbers each */
const char *sid_model_link_name(const sid_model *m, int body);
/* Moving joint k's motor input (SID_MOTOR_NONE: no motor). */
sid_motor_input sid_model_dof_joint_motor(const sid_model *m, int k);
int sid_model_dof_joint_is_prismatic(const sid_model *m, int k);
sid_joint_type sid_model_dof_joint_type(const sid_model *m, int k);
int sid_model_dof_joint_qadr(const sid_model *m, int k);
int sid_model_dof_joint_vadr(const sid_model *m, int k);
/* Name of position coordinate i / velocity coordinate i: a one-dof joint's own name, or for a
 * free joint "<joint>.x", .y, .z, .qw, .qx, .qy, .qz (q) and "<joint>.vx" .. ".wz" (v); the
 * log columns are "q.<name>", "qd.<name>", "u.<name>". */
const char *sid_model_q_name(const sid_model *m, int i);
const char *sid_model_v_name(const sid_model *m, int i);
/* 1 if position coordinate i is angular (rad or a quaternion component), 0 for a length. */
int sid_model_q_is_angular(const sid_model *m, int i);
int sid_model_v_is_angular(const sid_model *m, int i);
/* Contact: 1 if the model has a ground plane; its contact model. */
int sid_model_has_contact(const sid_model *m);
sid_contact_model sid_model_contact_model(const sid_model *m);
/* The robot's own simulation step (sid_robot_desc.timestep), 0 when it has none. */
double sid_model_timestep(const sid_model *m);
/* The robot's own integrator (sid_robot_desc.integrator), -1 when its file names none. */
int sid_model_integrator(const sid_model *m);
/* Override the contact model chosen in the robot (a fit spec's "contact_model"). A problem
 * binds the model's step variant when it is created: switch before sid_problem_create. */
void sid_model_set_contact_model(sid_model *m, sid_contact_model c);
/* Check theta is physically valid (positive masses, inertia triangle inequality, a joint
 * limit's lower <= upper, ...). */
sid_status sid_model_check_theta(const sid_model *m, const double *theta, sid_error *err);
/* What robot.json's absence of each parameter stands for at theta (nparam values into x): the
 * table's default, NaN where the parameter is never absent, and for a joint limit's stiffness
 * and damping the values computed from the model (joint_limit.h), which depend on theta's
 * masses, inertias and armatures. The writer leaves an absent field absent when theta equals it. */
sid_status sid_model_absent_values(const sid_model *m, const double *theta, double *x, sid_error *err);

/* ---- the step's scratch and what the page reads of its dynamics -------------------- */

typedef struct sid_workspace sid_workspace;

/* Workspace for steps of model m; all scratch of the step loop lives here, in one buffer:
 * n = sid_workspace_size(m) bytes, carved by sid_workspace_init (buf aligned as malloc's;
 * NULL if n is too small), or allocated by sid_workspace_create and freed by sid_workspace_free. */
size_t sid_workspace_size(const sid_model *m);
sid_workspace *sid_workspace_init(const sid_model *m, void *buf, size_t n);
sid_workspace *sid_workspace_create(const sid_model *m);
void sid_workspace_free(sid_workspace *ws);
/* The compliant contact's normal force of each sphere [N] at (q, v) (fn: nsphere numbers, in
 * robot.json order), as a step's dynamics sees it; returns the number of spheres, 0 without
 * compliant contact (hard contact acts as impulses inside a step); fn NULL: only that number.
 * ws: sid_workspace_create. */
int sid_contact_normal_forces(const sid_model *m, const double *theta, sid_workspace *ws, const double *q,
                              const double *v, double *fn);

/* ---- integration ---------------------------------------------------------------------- */


/* Names as files and flags spell them ("euler", "rk4", "implicitfast"; "compliant", "hard"), from the step
 * table (core/step/step.c); NULL past the last. Parse: 0 and *out set, or -1 for no such name. */
const char *sid_integrator_name(int i);
int sid_integrator_parse(const char *name, sid_integrator *out);
const char *sid_contact_model_name(int c);
int sid_contact_model_parse(const char *name, sid_contact_model *out);

typedef struct {
    sid_integrator integrator;
    int substeps;     /* simulation steps per log interval (>= 1); 0: not given, for
                       * sid_step_choose to choose (until then one) */
    double max_dt;    /* if > 0: also split any interval longer than this [s] */
} sid_sim_opts;

void sid_sim_opts_defaults(sid_sim_opts *o);   /* euler, substeps 0 (not given), no max_dt */


/* One step of length h from (q, v) with command u held; writes (q1, v1). */
sid_status sid_step(const sid_model *m, const double *theta, sid_workspace *ws,
                    sid_integrator integ, double h, const double *q, const double *v,
                    const double *u, double *q1, double *v1, sid_error *err);

/* ---- trajectories --------------------------------------------------------------------- */

typedef struct {
    int n, nq, nv;        /* samples, position and velocity sizes */
    double *t;            /* (n) [s], strictly increasing */
    double *q;            /* (n x nq) measured positions (encoder offset included) */
    double *qd;           /* (n x nv) measured velocities, or NULL when the log has none */
    double *u;            /* (n x nv) motor commands, 0 where a joint has no motor */
    double *push;         /* (n x SID_PUSH_STRIDE nbody) logged external wrenches on the links, or
                           * NULL: none; sid_traj_free frees it (sid_alloc) */
    double *tau;          /* (n x nv) logged joint torque sensor readings (tau.<joint>), or NULL:
                           * none; only where tau_has; sid_traj_free frees it (sid_alloc) */
    int *tau_has;         /* (nv) 1 where the log has that coordinate's tau column; with tau */
} sid_traj;
/* A log's pushes (docs/formats.md "Logs", f.<link>.*; core/dynamics/push.h), held over each sample interval like
 * the commands: per body (sid_model_link_body), a world-frame torque and force (tx ty tz fx fy fz
 * [N·m, N]) from SID_PUSH_WORLD, then a link-frame one from SID_PUSH_LINK, at the link's origin. */
enum { SID_PUSH_WORLD = 0, SID_PUSH_LINK = 6, SID_PUSH_STRIDE = 12 };

sid_traj *sid_traj_create(int n, int nq, int nv, int has_qd);
void sid_traj_free(sid_traj *tr);

/* Velocity at sample k: logged qd, or a smoothed central difference of q when absent. */
void sid_traj_velocity(const sid_model *m, const sid_traj *tr, int k, double *v);
/* Velocity at sample k from positions alone (a difference over +-2 samples), for logs whose
 * velocity column is itself a noisy difference of encoder positions. */
void sid_traj_velocity_from_q(const sid_model *m, const sid_traj *tr, int k, double *v);
/* How far the logged velocities are from the positions' own derivative: rms(qd - qd from q) /
 * rms(qd from q), 0 without a velocity column; v is scratch of nv doubles. */
double sid_traj_velocity_noise(const sid_model *m, const sid_traj *tr, double *v);
/* The noise level of each logged position coordinate (noise, nqo values), as the log itself
 * shows it: per difference order k = 2, 3, 4, median |k-th difference| / (0.6745 sqrt(C(2k, k)))
 * (white noise of standard deviation s has k-th differences of standard deviation
 * sqrt(C(2k, k)) s; a median, so that impacts and jumps do not count), the smallest of the
 * three (a smooth motion adds to the low orders' differences, noise to all); over at most 8192
 * evenly spaced samples. A stub's comes from its summary. 0 for a log too short. */
void sid_traj_position_noise(const sid_model *m, const sid_traj *tr, double *noise);

/* Work a log may ask for: simulation steps of one log interval, and of one log. Beyond them
 * the options or the log's time unit are surely wrong (ns read as s, --max-dt 1e-13). */
#define SID_MAX_SUBSTEPS 1e6
#define SID_MAX_LOG_STEPS 1e9
/* SID_ERR_INPUT, naming the interval and the flags to change, if tr under o needs more. */
sid_status sid_sim_check(const sid_sim_opts *o, const sid_traj *tr, sid_error *err);

/* Replay tr's commands from its first logged state; q_out (n x nq, measured convention)
 * and v_out (n x nv) receive the simulated trajectory at the log's sample times. */
sid_status sid_simulate(const sid_model *m, const double *theta, const sid_traj *tr,
                        const sid_sim_opts *o, double *q_out, double *v_out, sid_error *err);
/* The same from the state (q0: nq less the hidden backlash sides, the simulator's q without
 * encoder offsets; v0) instead of the log's first (either NULL: the log's). */
sid_status sid_simulate_from(const sid_model *m, const double *theta, const sid_traj *tr, const sid_sim_opts *o,
                             const double *q0, const double *v0, double *q_out, double *v_out, sid_error *err);

/* ---- windowed trajectory loss and its gradient -------------------------------------------
 * Each log is cut into windows of `window` seconds on a fixed grid, (t0 + iW, t0 + (i+1)W],
 * a trailing window shorter than W/2 dropped; each window restarts from the logged state
 * and replays the logged commands. Residuals are simulated minus logged q and qd at every
 * sample after a window's start, each joint's signal divided by a scale fixed from the data
 * (its standard deviation over all logs), weighted:
 *     loss = 1/2 sum_r w_r (delta_r / scale_r)^2 / nres.                                      */

typedef struct {
    double window;        /* seconds per window; 0 = one window per log */
    double weight_q, weight_qd;
    sid_sim_opts sim;
    int checkpoint;       /* log samples between checkpoints of the backward pass; 0 = sqrt(window) */
    int estimate_start;   /* 1: window start states are unknowns (multiple shooting), see problem.c */
    int threads;          /* windows evaluated in parallel; 0 = all cores. Results do not depend on it. */
    int start_velocity_from_q;   /* 1: logged start velocities from positions, even where qd is logged */
    double weight_tau;    /* torque sensor residuals (torque_sensor.h); 0 (the default): not scored */
} sid_loss_opts;

void sid_loss_opts_defaults(sid_loss_opts *o);   /* window 0.5 s, weights q 1 and qd 0.1 */
int sid_problem_default_threads(void);          /* what threads = 0 means here: all cores */

typedef struct sid_problem sid_problem;

/* Bind a model, logs (borrowed, must outlive the problem) and options; sizes all buffers. */
sid_status sid_problem_create(sid_problem **p, const sid_model *m, const sid_traj *const *logs, int nlog,
                              const sid_loss_opts *o, sid_error *err);
void sid_problem_free(sid_problem *p);
/* Progress of a long pass over the windows (the covariance): fn(ctx, windows done, windows in
 * all), called in window order from one thread at a time; fn NULL: none. */
typedef void (*sid_progress_fn)(void *ctx, int done, int total);
void sid_problem_set_progress(sid_problem *p, sid_progress_fn fn, void *ctx);
/* Sharding over processes (mpi/: `sysid-mpi`, the same fit on many machines). Each of size
 * processes computes only its contiguous block of the problem's chunks (chunks
 * [nchunk rank / size, nchunk (rank + 1) / size)); wherever chunk partials are summed, gather
 * fills the other processes' parts of buf, which is laid out by chunk (or by window) in order:
 * process r's part is bytes [off[r], off[r + 1]) (off has size + 1 entries), and this process's
 * part is already in place. Every process then adds all chunks in chunk order, so the sums are
 * the same to the bit as one process's. gather is called at the same points, in the same order,
 * on every process; its status, if not SID_OK, is the pass's. */
typedef sid_status (*sid_shard_gather_fn)(void *ctx, void *buf, const size_t *off, sid_error *err);
typedef struct {
    int rank, size;
    sid_shard_gather_fn gather;
    void *ctx;
} sid_shard;
/* p's shard (NULL: none, every chunk here, the default). */
void sid_problem_set_shard(sid_problem *p, const sid_shard *s);
/* The shard every sid_problem_create after this call starts with (NULL: none): how one
 * process's fit, with all the problems it makes, becomes one rank's part. */
void sid_shard_set_default(const sid_shard *s);
/* Sharded reading (mpi/): each process parses only the logs its chunks of windows touch and
 * holds the others as stubs, their time column and a summary (sid_log_summarize) of what every
 * problem needs from all logs: the sample count, which columns the log has, its velocity noise
 * its positions' noise (sid_traj_position_noise), and the residual scales' running sums over
 * the logs of its list up to it (prev: the summary
 * of the log before it in the list, NULL for the first), so that whoever holds which log, the
 * scales are the bits of one pass. The summary is sid_log_summary_size doubles; a stub's is
 * what it was made with, valid at its place in that list only (sid_problem_create checks). A
 * stub cannot be simulated: only windows of logs a process holds may run there
 * (sid_problem_create checks its chunks). */
size_t sid_log_summary_size(const sid_model *m);
void sid_log_summarize(const sid_model *m, const sid_traj *tr, const double *prev, double *summary);
/* A stub of n samples at times t (copied) with that summary (copied); sid_traj_free frees it. */
sid_traj *sid_traj_stub(const sid_model *m, int n, const double *t, const double *summary);
int sid_traj_is_stub(const sid_traj *tr);
/* Whether the log has velocities (a stub: whether its log has). */
int sid_traj_has_velocities(const sid_traj *tr);
/* need[l] = 1 for each of the logs (stubs or not) that process s->rank's chunks of windows
 * touch in every problem a fit under o makes of them (the fit's, the predictions', the step
 * choice's windows); 0 for the others. s NULL or of size 1: every log. */
void sid_shard_logs_needed(const sid_traj *const *logs, int nlog, const sid_loss_opts *o, const sid_shard *s,
                           int *need);
const sid_model *sid_problem_model(const sid_problem *p);
int sid_problem_nwindows(const sid_problem *p);
int sid_problem_nresiduals(const sid_problem *p);
const double *sid_problem_scale_q(const sid_problem *p);    /* (nq) */
const double *sid_problem_scale_qd(const sid_problem *p);   /* (nv) */
const double *sid_problem_scale_tau(const sid_problem *p);  /* (nv) torque residual scales (torque_sensor.h) */
/* Peak bytes of the backward pass's tape (checkpoints plus one recomputed segment). */
size_t sid_problem_tape_bytes(const sid_problem *p);

/* The logged start states of all windows (nwindows x (nq + nv)): q minus offsets, v. */
void sid_problem_start_states(const sid_problem *p, const double *theta, double *x0);
int sid_problem_estimates_start(const sid_problem *p);
/* Window w (0 .. nwindows - 1): its log, the sample it starts from, and the samples
 * [first, last] it scores. Windows lie on a fixed grid (problem.c, docs/formats.md). */
void sid_problem_window_samples(const sid_problem *p, int w, int *log, int *start, int *first, int *last);
/* What window w predicts at each sample it simulates, start .. last (sid_problem_window_samples):
 * q ((last - start + 1) x nq) as measured (offsets added, quaternion signs nearer the log's) and
 * v ((last - start + 1) x nv), from x0w (NULL: the logged start). Uses the problem's first lane:
 * not while another pass over p runs. */
sid_status sid_problem_window_predict(sid_problem *p, const double *theta, const double *x0w, int w, double *q,
                                      double *v, sid_error *err);

/* Loss at theta, windows starting from x0 (nwindows x (nq + nv)) or, if x0 is NULL, from the
 * logged states; with grad (nparam) its gradient by the adjoint method, and with grad_x0
 * (nwindows x (nq + nv)) the gradient with respect to each window's start state. */
sid_status sid_problem_loss(sid_problem *p, const double *theta, const double *x0, double *loss, double *grad,
                            double *grad_x0, sid_error *err);
/* Gradient of the same loss with respect to every logged command, for trajectory optimisation:
 * ubar[l] (logs[l]->n x nv, the layout of logs[l]->u) receives d loss / d u[k][j] of log l, by
 * one adjoint pass (command_grad.c); *loss (if not NULL) the loss. A command is held over its
 * sample interval, so u[k] moves the steps of interval k (and, with torque sensors scored, the
 * model of reading k); a delayed motor's command at t_k - d is interpolated, so its cotangent
 * splits over the two samples read (delay.h). A sample several windows read gets the sum, one
 * no window reads 0 (the last sample's commands move nothing but a torque reading). Every step
 * variant with an adjoint supports it. Does not depend on the thread count. */
sid_status sid_problem_grad_commands(sid_problem *p, const double *theta, const double *x0, double *loss,
                                     double *const *ubar, sid_error *err);
/* Residual rows of window w (see sid_problem_window_jacobian). */
int sid_problem_window_rows(const sid_problem *p, int w);
/* Weighted residuals r of window w (rows; r = sqrt(w) delta / scale, so loss = 1/2 |r|^2 / nres
 * over all windows) and their exact Jacobian J (rows x ncol, row-major) by forward-mode
 * differentiation through every step: columns are theta[idx[0..nfree-1]], then, when the
 * problem estimates start states, the nq + nv components of the window's start state x0w
 * (x0w NULL: the logged start). Cost ~ ncol simulations of the window. */
sid_status sid_problem_window_jacobian(sid_problem *p, const double *theta, const double *x0w, int w, int nfree,
                                       const int *idx, double *r, double *J, sid_error *err);
/* Root-mean-square error per joint of q and qd over all residual samples, unscaled and
 * unweighted (rmse_qd may be NULL; it is 0 where no log has velocities). */
sid_status sid_problem_rmse(sid_problem *p, const double *theta, const double *x0, double *rmse_q, double *rmse_qd,
                            sid_error *err);
/* Whether the problem scores torque sensor readings (weight_tau > 0 and a log with tau columns). */
int sid_problem_tau_scored(const sid_problem *p);
/* Root-mean-square error per velocity coordinate of the torque sensor readings (gain tau_link +
 * bias - logged tau, torque_sensor.h) over the residual samples, simulated from the logged
 * starts, unscaled and unweighted; 0 where no log has the column or nothing is scored. */
sid_status sid_problem_rmse_tau(sid_problem *p, const double *theta, double *rmse_tau, sid_error *err);

/* ---- choosing the simulation step (step_choice.c) -------------------------------------
 * When neither substeps nor max_dt is given, the step is h = interval / N, interval the logs'
 * median sample interval and N the first of 1, 2, 4, ... SID_STEP_MAX_SUBSTEPS whose position
 * error over a window is within every coordinate's allowance: estimated by step doubling,
 * 2^p / (2^p - 1) |q_h - q_h/2| for an integrator of order p (euler 1, rk4 4), at theta, from
 * the logged starts of up to 8 windows spread over the logs (the loss's windows, or 0.5 s ones
 * when it has one per log), the worst over their samples, each coordinate's divided by its
 * allowance: the larger of tol of its residual scale (sid_problem_scale_q) and SID_STEP_NOISE
 * of the noise its logs show (sid_traj_position_noise). The options chosen are N substeps and max_dt h (so that no
 * step of a longer, jittered interval exceeds h). A robot with its own timestep (an MJCF's
 * <option timestep>: its dry friction and constraints are defined per step) gets that step
 * instead: max_dt = timestep, N the fewest steps per median interval within it. */

#define SID_STEP_TOL 1.5e-3        /* error allowed, as a fraction of each coordinate's spread (docs/simulation-step.md: biases ~0.5 %) */
#define SID_STEP_NOISE 1.0         /* or as a fraction of the noise its logs show, if that is more */
#define SID_STEP_MAX_SUBSTEPS 32   /* at most this many steps per sample interval */

typedef struct {
    int automatic;        /* 1: chosen here; 0: as given (substeps or max_dt), nothing simulated */
    int from_robot;       /* 1: the robot's own timestep (sid_model_timestep), nothing simulated */
    sid_sim_opts sim;     /* the options to simulate with */
    double interval;      /* median sample interval of the logs [s] */
    int substeps;         /* steps per median interval */
    double h;             /* interval / substeps [s] */
    double error;         /* estimated error at h: worst |error| / allowance, within 1 passes (-1: not
                           * estimated, HUGE_VAL: a simulation diverged) */
    double error_abs;     /* that coordinate's error in its unit (rad or m) */
    int coord;            /* that position coordinate (-1: none) */
    double scale;         /* its residual scale (spread) */
    double noise;         /* the noise its logs show (sid_traj_position_noise) */
    double allowance;     /* its allowance: max(tol scale, noise_tol noise) */
    double tol, noise_tol;   /* the allowance's fractions of the spread and of the noise */
    double window;        /* [s] per tested window */
    int windows;          /* windows tested */
    int capped;           /* 1: stopped at the cap (or the work limits) with error above tol */
} sid_step_choice;

/* Choose the simulation step for model m at theta on the logs under loss options o (when
 * o->sim gives a step, or the robot its timestep, that one, and nothing is simulated); c->sim
 * is what to simulate with. */
sid_status sid_step_choose(const sid_model *m, const double *theta, const sid_traj *const *logs, int nlog,
                           const sid_loss_opts *o, double tol, sid_step_choice *c, sid_error *err);

/* ---- fitting: NLopt L-BFGS or Levenberg-Marquardt on scaled parameters ---------------------
 * Each free parameter is optimised as x = (theta - nominal) / typical, or as
 * x = log(theta / nominal) for a strictly positive quantity whose lower bound is positive,
 * so that steps are comparable across kilograms, metres and newton-metres. A link whose six
 * inertia entries are all free and unbounded moves them together through the log-Cholesky map
 * of its second moment about the COM (inertia_param.h), so that every trial point is a rigid
 * body (unless inertia_raw; bounded entries keep their box, elementwise). A trial point that
 * is unphysical (say, an inertia that is no longer positive definite) or whose simulation
 * diverges is rejected: the line search sees a large loss and steps back (LM: the step is
 * refused and the damping grows), and no NaN or Inf leaves the driver. The best point seen is
 * the result. */

/* A loss this small means residuals of ~1e-13 of their scale: rounding error, nothing to fit. */
#define SID_EXACT_LOSS 1e-26

typedef enum {
    SID_STOP_CONVERGED,   /* ftol_rel or xtol reached */
    SID_STOP_MAX_ITER,
    SID_STOP_TIME,
    SID_STOP_INTERRUPTED,
    SID_STOP_ROUNDOFF,    /* no further progress possible in floating point */
    SID_STOP_FAILURE,     /* the optimizer failed; see the message */
    SID_STOP_NO_PROGRESS  /* the starting point returned without evidence that it is optimal (optimize.c) */
} sid_stop;

/* The optimizer of a fit.
 *  SID_OPT_LBFGS: NLopt's L-BFGS on the loss and its adjoint gradient (the default).
 *  SID_OPT_LM:    trust-region Levenberg-Marquardt on the residuals' exact Jacobian (forward
 *                 mode, every step variant), see
 *                 lm.c: each iteration solves (J^T J + lambda D) h = -J^T r in the scaled
 *                 variables, D = diag(J^T J), with every window's start state eliminated by its
 *                 Schur complement (cost linear in the number of windows; the reduced system is
 *                 nfree x nfree); steps are clipped to the bounds (variables held at a bound the
 *                 gradient pushes against are left out of the step), only decreases of the loss
 *                 are accepted and lambda follows the gain ratio (Nielsen). Not with smoothing. */
/*  SID_OPT_AUTO:  the tool's choice (optimizer_auto.c): LM where its iteration, priced by the
 *                 Jacobian's rows model and the normal matrix, costs at most SID_AUTO_LM_RATIO
 *                 L-BFGS iterations (LM needs 10 to 30 times fewer), else L-BFGS; the one that
 *                 stalls hands over to the other once (LM stalled or refusing every step ->
 *                 L-BFGS; L-BFGS crawling, failing or roundoff-limited -> LM). r->choice says
 *                 which ran and why. */
typedef enum { SID_OPT_LBFGS, SID_OPT_LM, SID_OPT_AUTO } sid_optimizer;

/* The name of an optimizer ("lbfgs", "lm", "auto"). */
const char *sid_optimizer_str(sid_optimizer o);

typedef struct {
    sid_optimizer optimizer;     /* SID_OPT_LBFGS unless set */
    int nfree;
    const int *idx;              /* (nfree) indices into theta */
    const double *lo, *hi;       /* (nfree) absolute bounds (-HUGE_VAL / HUGE_VAL: none) */
    int max_iter;                /* accepted iterations */
    double ftol_rel;             /* relative loss change that counts as converged */
    double time_limit;           /* seconds; 0 = none */
    /* called once per accepted iteration (core never prints); may be NULL */
    void (*progress)(void *ctx, int iter, double loss, double gnorm, double seconds);
    void *ctx;
    volatile const int *interrupt;   /* nonzero: stop at the next evaluation (Ctrl-C) */
    /* Randomized smoothing (smoothing_pairs = 0: off). The optimizer then minimises the
     * smoothed loss E[L(x + sigma e)], E[e e^T] = I in the scaled coordinates x, estimated from
     * smoothing_pairs antithetic pairs (x + sigma e_i, x - sigma e_i) drawn once from
     * smoothing_seed (blocks of nfree orthogonal directions of length sqrt(nfree), see
     * smoothing.c), so the surrogate is deterministic; its gradient is
     * sum_i (L(x + sigma e_i) - L(x - sigma e_i)) e_i / (2 N sigma): no derivative of the
     * simulation is taken. Start states are then held at their first guess. Each objective
     * evaluation costs 2 N loss evaluations. A perturbed point is clamped to the bounds (the
     * estimate stays that of E[L(clamp(x + sigma e))]); one that is unphysical or diverges
     * counts as the rejection loss. The steps lie (bounds aside) in the span of the N
     * directions, so N < nfree fits only a random subspace of the parameters. */
    double smoothing_sigma;
    int smoothing_pairs;
    unsigned long smoothing_seed;
    int inertia_raw;             /* 1: inertia entries elementwise as other parameters (before the log-Cholesky map) */
    /* the flat test (optimizer_auto.c): converged when a span of iterations changes the fit's
     * chi-square by less than this (0: 1, a fraction of one standard error; window selection's
     * fold fits, which only rank candidates, take more) */
    double flat_factor;
} sid_fit_opts;

/* L-BFGS, no free parameters (set nfree, idx, lo, hi), max_iter 1000, ftol_rel 1e-10, no time limit
 * (a wall-clock limit makes the result depend on the machine), no progress callback or
 * interrupt, no smoothing, seed 1. The CLI's fit specs start from these. */
void sid_fit_opts_defaults(sid_fit_opts *o);

/* The optimizer sid_fit runs first on problem p with options o (SID_OPT_AUTO's choice, or the
 * one asked for), and why into buf: what sid_fit_result.choice starts with. */
sid_optimizer sid_fit_choose(const sid_problem *p, const sid_fit_opts *o, char *buf, size_t n);

/* The smoothing directions: pairs x n numbers (row i is e_i) from seed, standard normal then
 * made orthogonal within blocks of n rows, each of length sqrt(n); the same on every platform
 * and thread count; the first k rows do not depend on pairs >= k. */
void sid_smoothing_directions(unsigned long seed, int pairs, int n, double *e);

typedef struct {
    double loss0, loss;          /* at the nominal and at the returned point (always the plain loss) */
    double smoothed_loss0, smoothed_loss;   /* the smoothed loss there, which a smoothed fit minimises
                                             * (without smoothing: loss0, loss) */
    int iterations, evaluations, rejected;   /* with smoothing: objective evaluations (2 N losses
                                              * each) and rejected perturbed points; with LM:
                                              * trial losses plus Jacobians */
    int jacobians;               /* LM: Jacobian passes (each ~ nfree + nq + nv simulations); else 0 */
    double seconds;
    sid_stop stop;
    char message[160];
    /* which optimizers ran, in order (nran of them: a hand-over makes two), the iterations each
     * took, and why (SID_OPT_AUTO's choice, or "as asked") */
    sid_optimizer ran[2];
    int ran_iterations[2], nran;
    char choice[512];
} sid_fit_result;

/* 1 if a fit that stopped so is an answer (converged), 0 if it is the best point of one that
 * did not finish (the CLI's exit 1: docs/formats.md lists every stop reason with its exit code). */
int sid_stop_converged(sid_stop s);

const char *sid_stop_str(sid_stop s);

/* ---- what the data determine ------------------------------------------------------------ */

#define SID_MAX_FREE 1024   /* the covariance result holds two 1024 x 1024 matrices: allocate it */
#define SID_NULL_RATIO 1e-10   /* eigenvalue ratio of the scaled J^T J below which a direction is unresolved */
#define SID_MAX_CHANNELS (14 * SID_MAX_JOINTS)   /* residual channels: nq + nv */
/* Residual diagnostics' thresholds (covariance.c says why): a lag-1 autocorrelation above
 * SID_DIAG_LAG1, or a residual RMS above SID_DIAG_RMS_RATIO times the log's noise level, means
 * the model does not fit the data. */
#define SID_DIAG_LAG1 0.3
#define SID_DIAG_RMS_RATIO 3.0

typedef struct {
    int dof;                              /* nres - nfree */
    double sigma2;                        /* |r|^2 / dof, the residual variance */
    double cond;                          /* condition number of the scaled J^T J on its determined part */
    /* (nfree x nfree) in parameter units: (J^T J)^+ (sum_c sigma_c^2 J_c^T J_c) (J^T J)^+ over the
     * residual channels c, each with its own noise variance (covariance.c); sigma^2 (J^T J)^+
     * where the channels' shares would not fit in memory (noise_per_channel 0) */
    double cov[SID_MAX_FREE * SID_MAX_FREE];
    int noise_per_channel;
    double sigma2_channel[SID_MAX_CHANNELS];   /* sigma_c^2 per channel (as count below; 0: none) */
    double stderr_[SID_MAX_FREE];         /* sqrt(cov_kk); HUGE_VAL where not identifiable */
    int identifiable[SID_MAX_FREE];
    int nnull;                            /* unresolved directions */
    double null_dir[SID_MAX_FREE * SID_MAX_FREE];  /* (nnull x nfree) unit vectors in scaled coordinates */
    double null_ratio[SID_MAX_FREE];      /* their eigenvalue / the largest */
    /* Cluster-robust (sandwich) covariance over windows, for residuals that are not white:
     * G/(G-1) A+ (sum_w g_w g_w^T) A+, A the reduced J^T J, g_w = J_w^T r_w window w's score
     * with its start state eliminated (covariance.c); on the identifiable parameters. */
    double cov_robust[SID_MAX_FREE * SID_MAX_FREE];
    double stderr_robust[SID_MAX_FREE];   /* HUGE_VAL where not identifiable */
    double dof_robust[SID_MAX_FREE];      /* its degrees of freedom (Bell-McCaffrey; at most G - 1) */
    double t95_robust[SID_MAX_FREE];      /* the 97.5 % Student t quantile on them: ci95_robust's half-width
                                           * is t95_robust stderr_robust */
    int nwindows;                         /* G */
    /* Residual diagnostics at the fitted point, per channel (q coordinate i is channel i, velocity
     * i is nq + i; count 0: the channel has no residuals): */
    int nchan;
    int count[SID_MAX_CHANNELS];          /* residual samples */
    double lag1[SID_MAX_CHANNELS];        /* lag-1 autocorrelation sum r_k r_{k-1} / sum r_k^2, within windows */
    double rms[SID_MAX_CHANNELS];         /* residual RMS in the log's units */
    double noise[SID_MAX_CHANNELS];       /* the log's own noise level: RMS of its second difference / sqrt(6) */
    int correlated[SID_MAX_CHANNELS];     /* lag1 above SID_DIAG_LAG1 (and its white-noise band) with the
                                           * residual above half the noise level */
    int worst_lag1, worst_ratio;          /* channels of the largest lag1 / rms over noise, -1: none */
    double rms_over_noise;                /* the largest rms / noise over channels with noise > 0 */
    int residuals_white;                  /* no channel correlated */
    int mismatch;                         /* !residuals_white or rms_over_noise > SID_DIAG_RMS_RATIO */
} sid_covariance_result;

/* Covariance and identifiability of theta[idx[0..nfree-1]] at (theta, x0) from the exact
 * residual Jacobian; estimated start states are nuisance parameters, eliminated window by
 * window (Schur complement), so the covariance accounts for them. out is large: allocate it.
 * J is summed into J^T J as the rows come, never held: memory O(nfree^2) per thread plus a
 * block of rows, whatever the windows' length; windows run in parallel with the same result,
 * to the bit, for any number of threads.
 * interrupt (may be NULL) is read before each window: nonzero stops with SID_ERR_INTERRUPTED. */
sid_status sid_problem_covariance(sid_problem *p, const double *theta, const double *x0, int nfree, const int *idx,
                                  volatile const int *interrupt, sid_covariance_result *out, sid_error *err);
/* Minimise the problem's loss over the free parameters; theta holds the nominal values on
 * entry and the best point found on return (also when interrupted). When the problem
 * estimates start states, x0 (nwindows x (nq + nv)) holds their first guess on entry (see
 * sid_problem_start_states) and the fitted ones on return; otherwise it may be NULL. */
sid_status sid_fit(sid_problem *p, double *theta, double *x0, const sid_fit_opts *o, sid_fit_result *r, sid_error *err);
/* The objective sid_fit minimises, where a fit from theta would start (scaled coordinates
 * x = 0), start states held at x0 (NULL: logged): *f is the loss, or with smoothing the
 * smoothed loss, and gx (nfree) its gradient in the scaled coordinates of the free
 * parameters (adjoint, or the smoothing estimate). For tests and diagnostics. */
sid_status sid_fit_objective(sid_problem *p, const double *theta, const double *x0, const sid_fit_opts *o, double *f,
                             double *gx, sid_error *err);

#endif
