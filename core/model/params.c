/* params.c — the parameter table's rows (sid_params.h holds the table: one row per kind).
 *
 * A row says where the number lives (its owner: the robot, a link, a joint, the ground or a
 * contact sphere; the key path below the owner; its components), on which owners it exists,
 * its unit, its valid range and the message when violated, its default when robot.json leaves
 * it out, how a fit scales it, and where the loader keeps it in the sid_*_desc structs. Model
 * creation, parameter names and JSON paths, the robot.json reader and writer, validation and
 * the optimizer's scaling all read these rows. */
#include "model.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

static const char *const inertia_diag[] = {"ixx", "iyy", "izz"};
static const char *const inertia_prod[] = {"ixy", "ixz", "iyz"};

#define NONE NAN   /* no default: never absent where it exists */
#define DESC_ROBOT sid_robot_desc
#define DESC_LINK sid_link_desc
#define DESC_JOINT sid_joint_desc
#define DESC_GROUND sid_ground_desc
#define DESC_SPHERE sid_sphere_desc
#define UNPAREN(...) __VA_ARGS__

#define PART(kind, owner, block, key, ncomp, comp0, comp_key, on, unit, unit_prismatic, unit_torque, range, required, \
             dflt, log_scale, typical, field, fit)                                                                  \
    {SID_P_##kind, SID_OWNER_##owner, key, ncomp, comp0, comp_key, SID_ON_##on, SID_BLOCK_##block, unit,            \
     unit_prismatic, unit_torque, SID_RANGE_##range, required, {UNPAREN dflt}, log_scale, typical,                  \
     offsetof(DESC_##owner, field), fit},
#define ROW(kind, owner, block, key, ncomp, ...) PART(kind, owner, block, key, ncomp, 0, __VA_ARGS__)

static const sid_param_row table[] = {SID_PARAM_TABLE(SID_IGNORE_, ROW, PART)};
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
