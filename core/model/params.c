/* params.c — the parameter table: every kind of number robot.json holds, one row each.
 *
 * A row says where the number lives (its owner: the robot, a link, a joint, the ground or a
 * contact sphere; the key path below the owner; its components), on which owners it exists,
 * its unit, its valid range and the message when violated, its default when robot.json leaves
 * it out, how a fit scales it, and where the loader keeps it in the sid_*_desc structs. Model
 * creation, parameter names and JSON paths, the robot.json reader and writer, validation and
 * the optimizer's scaling all read this table; a new parameter kind is one row here (plus the
 * physics that uses it).
 *
 * Rows are in parameter order: sid_model_create lays theta out owner by owner (gravity, links,
 * joints, ground, spheres in description order), each owner's rows in table order, and the
 * rows of one block (a body's inertial, origin, dof, Stribeck, motor and limit numbers; the ground's)
 * are consecutive, so model.h's P_* offsets index them. */
#include "model.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

static const char *const inertia_diag[] = {"ixx", "iyy", "izz"};
static const char *const inertia_prod[] = {"ixy", "ixz", "iyz"};

#define LINK(f) offsetof(sid_link_desc, f)
#define JOINT(f) offsetof(sid_joint_desc, f)
#define GROUND(f) offsetof(sid_ground_desc, f)
#define SPHERE(f) offsetof(sid_sphere_desc, f)
#define NONE NAN   /* no default: never absent where it exists */

/* kind, owner, key, ncomp, comp0, comp_key, on, block, unit (revolute or any), prismatic, torque input,
 * range, required, default, log scale, typical, desc offset, fitted by default */
static const sid_param_row table[] = {
    {SID_P_GRAVITY, SID_OWNER_ROBOT, "gravity", 3, 0, NULL, SID_ON_ALWAYS, SID_BLOCK_GRAVITY, "m/s^2", NULL, NULL,
     SID_RANGE_ANY, 0, {0, 0, -9.81}, 0, 1, offsetof(sid_robot_desc, gravity), 0},

    {SID_P_MASS, SID_OWNER_LINK, "mass", 1, 0, NULL, SID_ON_MASS, SID_BLOCK_INERTIAL, "kg", NULL, NULL,
     SID_RANGE_POSITIVE, 1, {NONE}, 1, 1, LINK(mass), 1},
    {SID_P_COM, SID_OWNER_LINK, "com", 3, 0, NULL, SID_ON_MASS, SID_BLOCK_INERTIAL, "m", NULL, NULL, SID_RANGE_ANY,
     0, {0, 0, 0}, 0, 0.1, LINK(com), 0},
    /* the inertia tensor about the COM: moments (required when "inertia" is given), then products;
     * its range is a rigid body's, checked as a whole (sid_model_check_theta) */
    {SID_P_INERTIA, SID_OWNER_LINK, "inertia", 3, 0, inertia_diag, SID_ON_MASS, SID_BLOCK_INERTIAL, "kg*m^2", NULL,
     NULL, SID_RANGE_ANY, 1, {NONE, NONE, NONE}, 0, 0.01, LINK(inertia), 0},
    {SID_P_INERTIA, SID_OWNER_LINK, "inertia", 3, 3, inertia_prod, SID_ON_MASS, SID_BLOCK_INERTIAL, "kg*m^2", NULL,
     NULL, SID_RANGE_ANY, 0, {0, 0, 0}, 0, 0.01, LINK(inertia) + 3 * sizeof(double), 0},

    {SID_P_XYZ, SID_OWNER_JOINT, "origin.xyz", 3, 0, NULL, SID_ON_ORIGIN, SID_BLOCK_ORIGIN, "m", NULL, NULL,
     SID_RANGE_ANY, 0, {0, 0, 0}, 0, 0.1, JOINT(xyz), 0},
    {SID_P_RPY, SID_OWNER_JOINT, "origin.rpy", 3, 0, NULL, SID_ON_ORIGIN, SID_BLOCK_ORIGIN, "rad", NULL, NULL,
     SID_RANGE_ANY, 0, {0, 0, 0}, 0, 0.1, JOINT(rpy), 0},
    {SID_P_ARMATURE, SID_OWNER_JOINT, "armature", 1, 0, NULL, SID_ON_DOF, SID_BLOCK_DOF, "kg*m^2", "kg", NULL,
     SID_RANGE_NONNEGATIVE, 0, {0}, 0, 1e-3, JOINT(armature), 1},
    {SID_P_VISCOUS, SID_OWNER_JOINT, "friction.viscous", 1, 0, NULL, SID_ON_DOF, SID_BLOCK_DOF, "N*m*s/rad", "N*s/m",
     NULL, SID_RANGE_NONNEGATIVE, 0, {0}, 0, 0.01, JOINT(viscous), 1},
    {SID_P_COULOMB, SID_OWNER_JOINT, "friction.coulomb", 1, 0, NULL, SID_ON_DOF, SID_BLOCK_DOF, "N*m", "N", NULL,
     SID_RANGE_NONNEGATIVE, 0, {0}, 0, 0.01, JOINT(coulomb), 1},
    {SID_P_SMOOTHING, SID_OWNER_JOINT, "friction.smoothing", 1, 0, NULL, SID_ON_DOF, SID_BLOCK_DOF, "rad/s", "m/s",
     NULL, SID_RANGE_POSITIVE, 0, {0.01}, 1, 0.1, JOINT(smoothing), 0},
    {SID_P_OFFSET, SID_OWNER_JOINT, "offset", 1, 0, NULL, SID_ON_DOF, SID_BLOCK_DOF, "rad", "m", NULL, SID_RANGE_ANY,
     0, {0}, 0, 0.01, JOINT(offset), 0},
    {SID_P_TORQUE_BIAS, SID_OWNER_JOINT, "torque_bias", 1, 0, NULL, SID_ON_DOF, SID_BLOCK_DOF, "N*m", "N", NULL,
     SID_RANGE_ANY, 0, {0}, 0, 0.01, JOINT(torque_bias), 0},
    {SID_P_STRIBECK_TORQUE, SID_OWNER_JOINT, "friction.stribeck.torque", 1, 0, NULL, SID_ON_STRIBECK,
     SID_BLOCK_STRIBECK, "N*m", "N", NULL, SID_RANGE_ANY, 1, {NONE}, 0, 0.01, JOINT(stribeck_torque), 0},
    {SID_P_STRIBECK_VELOCITY, SID_OWNER_JOINT, "friction.stribeck.velocity", 1, 0, NULL, SID_ON_STRIBECK,
     SID_BLOCK_STRIBECK, "rad/s", "m/s", NULL, SID_RANGE_POSITIVE, 1, {NONE}, 1, 0.1, JOINT(stribeck_velocity), 0},
    /* direction- and load-dependent Coulomb friction (joint_force.c, dry_friction.c): rows only
     * where given, so every robot without them keeps its parameter vector */
    {SID_P_COULOMB_NEGATIVE, SID_OWNER_JOINT, "friction.coulomb_negative", 1, 0, NULL, SID_ON_COULOMB_NEGATIVE,
     SID_BLOCK_COULOMB_NEGATIVE, "N*m", "N", NULL, SID_RANGE_NONNEGATIVE, 0, {NONE}, 0, 0.01,
     JOINT(coulomb_negative), 0},
    {SID_P_FRICTION_LOAD, SID_OWNER_JOINT, "friction.load", 1, 0, NULL, SID_ON_FRICTION_LOAD,
     SID_BLOCK_FRICTION_LOAD, "1", NULL, NULL, SID_RANGE_NONNEGATIVE, 0, {NONE}, 0, 0.01, JOINT(friction_load), 0},
    {SID_P_GEAR, SID_OWNER_JOINT, "motor.gear", 1, 0, NULL, SID_ON_MOTOR, SID_BLOCK_MOTOR, "1", NULL, NULL,
     SID_RANGE_ANY, 0, {1}, 0, 1, JOINT(gear), 0},
    /* a servo has no kt: its gains already scale the torque (servo.h) */
    {SID_P_KT, SID_OWNER_JOINT, "motor.kt", 1, 0, NULL, SID_ON_ELECTRIC, SID_BLOCK_MOTOR, "N*m/A", "N/A", "1",
     SID_RANGE_ANY, 0, {1}, 0, 0.1, JOINT(kt), 1},
    {SID_P_KE, SID_OWNER_JOINT, "motor.ke", 1, 0, NULL, SID_ON_VOLTAGE, SID_BLOCK_MOTOR, "V*s/rad", NULL, NULL,
     SID_RANGE_ANY, 0, {0}, 0, 0.01, JOINT(ke), 1},
    /* the voltage model divides by it */
    {SID_P_RESISTANCE, SID_OWNER_JOINT, "motor.resistance", 1, 0, NULL, SID_ON_VOLTAGE, SID_BLOCK_MOTOR, "ohm", NULL,
     NULL, SID_RANGE_POSITIVE, 1, {1}, 1, 1, JOINT(resistance), 0},
    /* a servo (servo.h): kd on both kinds (a velocity servo's gain, required there by the
     * loader; a position servo's damping, 0 when absent), kp on a position servo; the smooth
     * torque limit only where given (absent: no saturation), not fitted by default since logs
     * that never saturate say nothing about it. A position servo's kd is the viscous friction's
     * torque again, -(viscous + gear^2 kd) qd: motion tells only their sum, so the default set
     * frees viscous and holds kd (a velocity servo's kd, its only gain, is freed all the same) */
    {SID_P_KD, SID_OWNER_JOINT, "motor.kd", 1, 0, NULL, SID_ON_SERVO, SID_BLOCK_SERVO, "N*m*s/rad", "N*s/m", NULL,
     SID_RANGE_NONNEGATIVE, 0, {0}, 0, 0.1, JOINT(kd), 0},
    {SID_P_KP, SID_OWNER_JOINT, "motor.kp", 1, 0, NULL, SID_ON_POSITION_SERVO, SID_BLOCK_SERVO, "N*m/rad", "N/m",
     NULL, SID_RANGE_POSITIVE, 1, {NONE}, 1, 10, JOINT(kp), 1},
    {SID_P_SERVO_LIMIT, SID_OWNER_JOINT, "motor.limit", 1, 0, NULL, SID_ON_SERVO_LIMIT, SID_BLOCK_SERVO_LIMIT, "N*m",
     "N", NULL, SID_RANGE_POSITIVE, 0, {NONE}, 1, 1, JOINT(servo_limit), 0},
    /* the command delay (delay.h): a row only where robot.json gives it (so models without one
     * are today's, parameter for parameter), not fitted by default */
    {SID_P_DELAY, SID_OWNER_JOINT, "motor.delay", 1, 0, NULL, SID_ON_DELAY, SID_BLOCK_DELAY, "s", NULL, NULL,
     SID_RANGE_NONNEGATIVE, 0, {0}, 0, 0.01, JOINT(delay), 0},
    /* a joint torque sensor's gain and bias (torque_sensor.h): rows only where robot.json gives
     * "torque_sensor", so every other robot keeps its parameter vector; not fitted by default */
    {SID_P_SENSOR_GAIN, SID_OWNER_JOINT, "torque_sensor.gain", 1, 0, NULL, SID_ON_TORQUE_SENSOR,
     SID_BLOCK_TORQUE_SENSOR, "1", NULL, NULL, SID_RANGE_ANY, 0, {1}, 0, 1, JOINT(sensor_gain), 0},
    {SID_P_SENSOR_BIAS, SID_OWNER_JOINT, "torque_sensor.bias", 1, 0, NULL, SID_ON_TORQUE_SENSOR,
     SID_BLOCK_TORQUE_SENSOR, "N*m", "N", NULL, SID_RANGE_ANY, 0, {0}, 0, 0.01, JOINT(sensor_bias), 0},
    /* backlash (backlash.h): rows only where robot.json gives "backlash", so every robot without
     * one keeps its parameter vector; width, stiffness and inertia required there, not fitted by
     * default (a log without direction reversals says nothing about the width) */
    {SID_P_BACKLASH_WIDTH, SID_OWNER_JOINT, "backlash.width", 1, 0, NULL, SID_ON_BACKLASH, SID_BLOCK_BACKLASH, "rad",
     "m", NULL, SID_RANGE_NONNEGATIVE, 1, {NONE}, 0, 0.01, JOINT(backlash_width), 0},
    {SID_P_BACKLASH_STIFFNESS, SID_OWNER_JOINT, "backlash.stiffness", 1, 0, NULL, SID_ON_BACKLASH, SID_BLOCK_BACKLASH,
     "N*m/rad", "N/m", NULL, SID_RANGE_POSITIVE, 1, {NONE}, 1, 100, JOINT(backlash_stiffness), 0},
    {SID_P_BACKLASH_DAMPING, SID_OWNER_JOINT, "backlash.damping", 1, 0, NULL, SID_ON_BACKLASH, SID_BLOCK_BACKLASH,
     "N*m*s/rad", "N*s/m", NULL, SID_RANGE_NONNEGATIVE, 0, {0}, 0, 0.1, JOINT(backlash_damping), 0},
    {SID_P_BACKLASH_INERTIA, SID_OWNER_JOINT, "backlash.inertia", 1, 0, NULL, SID_ON_BACKLASH, SID_BLOCK_BACKLASH,
     "kg*m^2", "kg", NULL, SID_RANGE_POSITIVE, 1, {NONE}, 1, 1e-3, JOINT(backlash_inertia), 0},
    /* the dead zone's corner width: the model is C-infinity, and exact to O(smoothing) outside it */
    {SID_P_BACKLASH_SMOOTHING, SID_OWNER_JOINT, "backlash.smoothing", 1, 0, NULL, SID_ON_BACKLASH, SID_BLOCK_BACKLASH,
     "rad", "m", NULL, SID_RANGE_POSITIVE, 0, {1e-3}, 1, 1e-3, JOINT(backlash_smoothing), 0},
    /* the position limit (joint_limit.h): bounds as given (each may be absent: unbounded), gains
     * computed where absent (sid_model_absent_values); none fitted by default, since joints in
     * normal logs never reach their limits */
    {SID_P_LIMIT_LOWER, SID_OWNER_JOINT, "limit.lower", 1, 0, NULL, SID_ON_LIMIT_LOWER, SID_BLOCK_LIMIT_LOWER, "rad",
     "m", NULL, SID_RANGE_ANY, 0, {NONE}, 0, 0.01, JOINT(limit_lower), 0},
    {SID_P_LIMIT_UPPER, SID_OWNER_JOINT, "limit.upper", 1, 0, NULL, SID_ON_LIMIT_UPPER, SID_BLOCK_LIMIT_UPPER, "rad",
     "m", NULL, SID_RANGE_ANY, 0, {NONE}, 0, 0.01, JOINT(limit_upper), 0},
    {SID_P_LIMIT_STIFFNESS, SID_OWNER_JOINT, "limit.stiffness", 1, 0, NULL, SID_ON_LIMIT_SPRING, SID_BLOCK_LIMIT, "N*m/rad",
     "N/m", NULL, SID_RANGE_NONNEGATIVE, 0, {NONE}, 0, 100, JOINT(limit_stiffness), 0},
    {SID_P_LIMIT_DAMPING, SID_OWNER_JOINT, "limit.damping", 1, 0, NULL, SID_ON_LIMIT_SPRING, SID_BLOCK_LIMIT, "N*m*s/rad",
     "N*s/m", NULL, SID_RANGE_NONNEGATIVE, 0, {NONE}, 0, 1, JOINT(limit_damping), 0},

    /* the compliant normal force's activation width and the friction's velocity scale divide */
    {SID_P_GROUND_HEIGHT, SID_OWNER_GROUND, "height", 1, 0, NULL, SID_ON_ALWAYS, SID_BLOCK_GROUND, "m", NULL, NULL,
     SID_RANGE_ANY, 0, {0}, 0, 0.01, GROUND(height), 0},
    {SID_P_GROUND_STIFFNESS, SID_OWNER_GROUND, "stiffness", 1, 0, NULL, SID_ON_ALWAYS, SID_BLOCK_GROUND, "N/m", NULL,
     NULL, SID_RANGE_NONNEGATIVE, 0, {1e4}, 0, 1e4, GROUND(stiffness), 0},
    {SID_P_GROUND_DAMPING, SID_OWNER_GROUND, "damping", 1, 0, NULL, SID_ON_ALWAYS, SID_BLOCK_GROUND, "N*s/m^2", NULL,
     NULL, SID_RANGE_NONNEGATIVE, 0, {1e3}, 0, 1e3, GROUND(damping), 0},
    {SID_P_GROUND_FRICTION, SID_OWNER_GROUND, "friction", 1, 0, NULL, SID_ON_ALWAYS, SID_BLOCK_GROUND, "1", NULL,
     NULL, SID_RANGE_NONNEGATIVE, 0, {1}, 0, 1, GROUND(friction), 0},
    {SID_P_GROUND_WIDTH, SID_OWNER_GROUND, "width", 1, 0, NULL, SID_ON_ALWAYS, SID_BLOCK_GROUND, "m", NULL, NULL,
     SID_RANGE_POSITIVE, 0, {1e-3}, 1, 0.01, GROUND(width), 0},
    {SID_P_GROUND_SMOOTHING, SID_OWNER_GROUND, "smoothing", 1, 0, NULL, SID_ON_ALWAYS, SID_BLOCK_GROUND, "m/s", NULL,
     NULL, SID_RANGE_POSITIVE, 0, {1e-2}, 1, 0.01, GROUND(smoothing), 0},

    {SID_P_SPHERE_XYZ, SID_OWNER_SPHERE, "xyz", 3, 0, NULL, SID_ON_ALWAYS, SID_BLOCK_SPHERE, "m", NULL, NULL,
     SID_RANGE_ANY, 1, {NONE, NONE, NONE}, 0, 0.01, SPHERE(xyz), 0},
    {SID_P_SPHERE_RADIUS, SID_OWNER_SPHERE, "radius", 1, 0, NULL, SID_ON_ALWAYS, SID_BLOCK_SPHERE, "m", NULL, NULL,
     SID_RANGE_NONNEGATIVE, 0, {0}, 0, 0.01, SPHERE(radius), 0},
};
#define NROW (int)(sizeof table / sizeof table[0])

int sid_param_rows(const sid_param_row **rows)
{
    *rows = table;
    return NROW;
}

const sid_param_row *sid_param_row_of(sid_param_kind kind, int comp)
{
    for (int r = 0; r < NROW; r++)
        if (table[r].kind == kind && comp >= table[r].comp0 && comp < table[r].comp0 + table[r].ncomp) return &table[r];
    return NULL;
}

int sid_param_count(sid_param_owner owner)
{
    int n = 0;
    for (int r = 0; r < NROW; r++) n += table[r].owner == owner ? table[r].ncomp : 0;
    return n;
}

const char *sid_param_owner_array(sid_param_owner owner)
{
    switch (owner) {
    case SID_OWNER_LINK: return "links";
    case SID_OWNER_JOINT: return "joints";
    case SID_OWNER_SPHERE: return "contact.spheres";
    case SID_OWNER_GROUND: return "contact.ground";
    case SID_OWNER_ROBOT: break;
    }
    return "";
}

int sid_param_exists(const sid_param_row *row, const sid_robot_desc *d, int owner)
{
    const sid_joint_desc *j = row->owner == SID_OWNER_JOINT ? &d->joint[owner] : NULL;
    const int dof = j && (j->type == SID_JOINT_REVOLUTE || j->type == SID_JOINT_PRISMATIC);
    switch (row->on) {
    case SID_ON_ALWAYS: return row->owner != SID_OWNER_GROUND || d->ground.present;
    case SID_ON_MASS: return d->link[owner].has_mass;
    case SID_ON_ORIGIN: return j->type != SID_JOINT_FREE;   /* a free joint's pose is state */
    case SID_ON_DOF: return dof;
    case SID_ON_STRIBECK: return dof && j->has_stribeck;
    case SID_ON_COULOMB_NEGATIVE: return dof && j->has_coulomb_negative;
    case SID_ON_FRICTION_LOAD: return dof && j->has_friction_load;
    case SID_ON_MOTOR: return dof && j->motor != SID_MOTOR_NONE;
    case SID_ON_VOLTAGE: return dof && j->motor == SID_MOTOR_VOLTAGE;
    case SID_ON_LIMIT: return dof && (j->has_limit_lower || j->has_limit_upper);
    case SID_ON_LIMIT_LOWER: return dof && j->has_limit_lower;
    case SID_ON_LIMIT_SPRING:
        return dof && (j->has_limit_lower || j->has_limit_upper) && j->limit_model == SID_LIMIT_SPRING;
    case SID_ON_LIMIT_UPPER: return dof && j->has_limit_upper;
    case SID_ON_ELECTRIC:
        return dof && (j->motor == SID_MOTOR_TORQUE || j->motor == SID_MOTOR_CURRENT || j->motor == SID_MOTOR_VOLTAGE);
    case SID_ON_SERVO: return dof && (j->motor == SID_MOTOR_POSITION || j->motor == SID_MOTOR_VELOCITY);
    case SID_ON_POSITION_SERVO: return dof && j->motor == SID_MOTOR_POSITION;
    case SID_ON_SERVO_LIMIT:
        return dof && (j->motor == SID_MOTOR_POSITION || j->motor == SID_MOTOR_VELOCITY) && j->has_servo_limit;
    case SID_ON_DELAY: return dof && j->motor != SID_MOTOR_NONE && j->has_delay;
    case SID_ON_TORQUE_SENSOR: return dof && j->has_torque_sensor;
    case SID_ON_BACKLASH: return dof && j->has_backlash;
    }
    return 0;
}

const char *sid_param_on_what(sid_param_on on)
{
    switch (on) {
    case SID_ON_MASS: return "only a link with a mass has it";
    case SID_ON_ORIGIN: return "a free joint has none";
    case SID_ON_DOF: return "only a revolute or prismatic joint has it";
    case SID_ON_STRIBECK: return "only Stribeck friction has it";
    case SID_ON_COULOMB_NEGATIVE: return "only a revolute or prismatic joint has it";
    case SID_ON_FRICTION_LOAD: return "only a revolute or prismatic joint has it";
    case SID_ON_MOTOR: return "only a joint with a motor has it";
    case SID_ON_VOLTAGE: return "only a voltage motor has it";
    case SID_ON_LIMIT: return "only a joint limit with a lower or an upper bound has it";
    case SID_ON_LIMIT_LOWER: return "only a joint limit with a lower bound has it";
    case SID_ON_LIMIT_SPRING:
        return "only a joint limit of the spring model has it (the constraint model's stiffness and damping are "
               "MuJoCo's solref: timeconst 0.02 s, dampratio 1)";
    case SID_ON_LIMIT_UPPER: return "only a joint limit with an upper bound has it";
    case SID_ON_ELECTRIC: return "only a torque, current or voltage motor has it";
    case SID_ON_SERVO: return "only a position or velocity servo has it";
    case SID_ON_POSITION_SERVO: return "only a position servo has it";
    case SID_ON_SERVO_LIMIT: return "only a servo with a torque limit has it";
    case SID_ON_DELAY: return "only a joint with a motor and a given motor.delay has it";
    case SID_ON_TORQUE_SENSOR: return "only a revolute or prismatic joint with a torque_sensor has it";
    case SID_ON_BACKLASH: return "only a revolute or prismatic joint with a given backlash has it";
    case SID_ON_ALWAYS: break;
    }
    return "the element has none";
}

const char *sid_param_unit(const sid_param_row *row, const sid_robot_desc *d, int owner)
{
    if (row->owner != SID_OWNER_JOINT) return row->unit;
    const sid_joint_desc *j = &d->joint[owner];
    if (row->unit_torque_input && j->motor == SID_MOTOR_TORQUE) return row->unit_torque_input;
    if (row->unit_prismatic && j->type == SID_JOINT_PRISMATIC) return row->unit_prismatic;
    return row->unit;
}

double *sid_param_field(const sid_param_row *row, sid_robot_desc *d, int owner)
{
    char *base = NULL;
    switch (row->owner) {
    case SID_OWNER_ROBOT: base = (char *)d; break;
    case SID_OWNER_LINK: base = (char *)&d->link[owner]; break;
    case SID_OWNER_JOINT: base = (char *)&d->joint[owner]; break;
    case SID_OWNER_GROUND: base = (char *)&d->ground; break;
    case SID_OWNER_SPHERE: base = (char *)&d->sphere[owner]; break;
    }
    return (double *)(base + row->offset);
}

const double *sid_param_value(const sid_param_row *row, const sid_robot_desc *d, int owner)
{
    /* the same place as sid_param_field, read only */
    return sid_param_field(row, (sid_robot_desc *)d, owner);
}

void sid_param_defaults(sid_param_owner owner, void *desc)
{
    for (int r = 0; r < NROW; r++) {
        if (table[r].owner != owner) continue;
        double *x = (double *)((char *)desc + table[r].offset);
        for (int k = 0; k < table[r].ncomp; k++) x[k] = isnan(table[r].dflt[k]) ? 0 : table[r].dflt[k];
    }
}

/* "[k]" or ".ixx" for component k of a row (nothing for a scalar). */
static const char *comp_suffix(const sid_param_row *row, int comp, char *buf, size_t len)
{
    if (row->ncomp == 1 && !row->comp_key) return "";
    if (row->comp_key) snprintf(buf, len, ".%s", row->comp_key[comp - row->comp0]);
    else snprintf(buf, len, "[%d]", comp);
    return buf;
}

void sid_param_name(const sid_param_row *row, const char *owner_name, int comp, char *buf, size_t len)
{
    char c[16];
    const char *arr = sid_param_owner_array(row->owner), *sfx = comp_suffix(row, comp, c, sizeof c);
    if (row->owner == SID_OWNER_LINK || row->owner == SID_OWNER_JOINT || row->owner == SID_OWNER_SPHERE)
        snprintf(buf, len, "%s.%s.%s%s", arr, owner_name, row->key, sfx);
    else snprintf(buf, len, "%s%s%s%s", arr, *arr ? "." : "", row->key, sfx);
}

void sid_param_json_path(const sid_param_row *row, int owner, int comp, char *buf, size_t len)
{
    char c[16];
    const char *arr = sid_param_owner_array(row->owner), *sfx = comp_suffix(row, comp, c, sizeof c);
    if (row->owner == SID_OWNER_LINK || row->owner == SID_OWNER_JOINT || row->owner == SID_OWNER_SPHERE)
        snprintf(buf, len, "%s[%d].%s%s", arr, owner, row->key, sfx);
    else snprintf(buf, len, "%s%s%s%s", arr, *arr ? "." : "", row->key, sfx);
}

const char *sid_param_range_what(sid_param_range range)
{
    switch (range) {
    case SID_RANGE_POSITIVE: return "a positive number";
    case SID_RANGE_NONNEGATIVE: return "a non-negative number";
    case SID_RANGE_ANY: break;
    }
    return "a finite number";
}

int sid_param_in_range(sid_param_range range, double x)
{
    if (!isfinite(x)) return 0;
    return range == SID_RANGE_POSITIVE ? x > 0 : range == SID_RANGE_NONNEGATIVE ? x >= 0 : 1;
}
