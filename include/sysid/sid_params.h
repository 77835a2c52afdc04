/* sid_params.h — the parameter table: every kind of number robot.json holds, one row each.
 *
 * The table is this one list. sid.h makes the kinds' and blocks' enums of it, the core's model.h
 * the offsets inside a body's blocks, and params.c the rows the readers, writers, names, units,
 * validation and the optimizer's scaling read: a new parameter kind is one ROW here (plus the
 * physics that uses it), a new block one BLOCK line (plus where the model keeps its start).
 *
 * Rows are in parameter order: sid_model_create lays theta out owner by owner (gravity, links,
 * joints, ground, spheres in description order), each owner's rows in this order. A BLOCK line
 * opens a block: the rows under it, up to the next one, are its numbers, in this order.
 *
 *   BLOCK(block)
 *   ROW(kind, owner, block, key, ncomp, comp_key, on, unit, unit_prismatic, unit_torque_input,
 *       range, required, (defaults...), log_scale, typical, desc field, fitted by default)
 *   PART(the same, with comp0 after ncomp): the next components of the kind above (the inertia's
 *       products after its moments)
 *
 * key: the path below the owner in robot.json; comp_key: the components' object keys (a name
 * params.c defines) or NULL (an array); NONE: no default (never absent where it exists); desc
 * field: where the loader keeps the number in the owner's sid_*_desc. sid.h documents each column
 * (sid_param_row). */
#ifndef SID_PARAMS_H
#define SID_PARAMS_H

#define SID_PARAM_TABLE(BLOCK, ROW, PART)                                                                        \
    BLOCK(GRAVITY)                                                                                               \
    ROW(GRAVITY, ROBOT, GRAVITY, "gravity", 3, NULL, ALWAYS, "m/s^2", NULL, NULL, ANY, 0, (0, 0, -9.81), 0, 1,    \
        gravity, 0)                                                                                              \
                                                                                                                 \
    BLOCK(INERTIAL)                                                                                              \
    ROW(MASS, LINK, INERTIAL, "mass", 1, NULL, MASS, "kg", NULL, NULL, POSITIVE, 1, (NONE), 1, 1, mass, 1)       \
    ROW(COM, LINK, INERTIAL, "com", 3, NULL, MASS, "m", NULL, NULL, ANY, 0, (0, 0, 0), 0, 0.1, com, 0)            \
    /* the inertia tensor about the COM: moments (required when "inertia" is given), then products;            \
     * its range is a rigid body's, checked as a whole (sid_model_check_theta) */                               \
    ROW(INERTIA, LINK, INERTIAL, "inertia", 3, inertia_diag, MASS, "kg*m^2", NULL, NULL, ANY, 1,                 \
        (NONE, NONE, NONE), 0, 0.01, inertia, 0)                                                                 \
    PART(INERTIA, LINK, INERTIAL, "inertia", 3, 3, inertia_prod, MASS, "kg*m^2", NULL, NULL, ANY, 0, (0, 0, 0),  \
         0, 0.01, inertia[3], 0)                                                                                 \
                                                                                                                 \
    BLOCK(ORIGIN)                                                                                                \
    ROW(XYZ, JOINT, ORIGIN, "origin.xyz", 3, NULL, ORIGIN, "m", NULL, NULL, ANY, 0, (0, 0, 0), 0, 0.1, xyz, 0)    \
    ROW(RPY, JOINT, ORIGIN, "origin.rpy", 3, NULL, ORIGIN, "rad", NULL, NULL, ANY, 0, (0, 0, 0), 0, 0.1, rpy, 0)  \
                                                                                                                 \
    BLOCK(DOF)                                                                                                   \
    ROW(ARMATURE, JOINT, DOF, "armature", 1, NULL, DOF, "kg*m^2", "kg", NULL, NONNEGATIVE, 0, (0), 0, 1e-3,       \
        armature, 1)                                                                                             \
    ROW(VISCOUS, JOINT, DOF, "friction.viscous", 1, NULL, DOF, "N*m*s/rad", "N*s/m", NULL, NONNEGATIVE, 0, (0), \
        0, 0.01, viscous, 1)                                                                                     \
    ROW(COULOMB, JOINT, DOF, "friction.coulomb", 1, NULL, DOF, "N*m", "N", NULL, NONNEGATIVE, 0, (0), 0, 0.01,   \
        coulomb, 1)                                                                                              \
    ROW(SMOOTHING, JOINT, DOF, "friction.smoothing", 1, NULL, DOF, "rad/s", "m/s", NULL, POSITIVE, 0, (0.01), 1, \
        0.1, smoothing, 0)                                                                                       \
    ROW(OFFSET, JOINT, DOF, "offset", 1, NULL, DOF, "rad", "m", NULL, ANY, 0, (0), 0, 0.01, offset, 0)           \
    ROW(TORQUE_BIAS, JOINT, DOF, "torque_bias", 1, NULL, DOF, "N*m", "N", NULL, ANY, 0, (0), 0, 0.01,            \
        torque_bias, 0)                                                                                          \
                                                                                                                 \
    BLOCK(STRIBECK)                                                                                              \
    ROW(STRIBECK_TORQUE, JOINT, STRIBECK, "friction.stribeck.torque", 1, NULL, STRIBECK, "N*m", "N", NULL, ANY,  \
        1, (NONE), 0, 0.01, stribeck_torque, 0)                                                                  \
    ROW(STRIBECK_VELOCITY, JOINT, STRIBECK, "friction.stribeck.velocity", 1, NULL, STRIBECK, "rad/s", "m/s",     \
        NULL, POSITIVE, 1, (NONE), 1, 0.1, stribeck_velocity, 0)                                                 \
                                                                                                                 \
    /* direction- and load-dependent Coulomb friction (joint_force.c, dry_friction.c): rows only                \
     * where given, so every robot without them keeps its parameter vector */                                   \
    BLOCK(COULOMB_NEGATIVE)                                                                                      \
    ROW(COULOMB_NEGATIVE, JOINT, COULOMB_NEGATIVE, "friction.coulomb_negative", 1, NULL, COULOMB_NEGATIVE, "N*m", \
        "N", NULL, NONNEGATIVE, 0, (NONE), 0, 0.01, coulomb_negative, 0)                                         \
    BLOCK(FRICTION_LOAD)                                                                                         \
    ROW(FRICTION_LOAD, JOINT, FRICTION_LOAD, "friction.load", 1, NULL, FRICTION_LOAD, "1", NULL, NULL,           \
        NONNEGATIVE, 0, (NONE), 0, 0.01, friction_load, 0)                                                       \
                                                                                                                 \
    BLOCK(MOTOR)                                                                                                 \
    ROW(GEAR, JOINT, MOTOR, "motor.gear", 1, NULL, MOTOR, "1", NULL, NULL, ANY, 0, (1), 0, 1, gear, 0)           \
    /* a servo has no kt: its gains already scale the torque (servo.h) */                                       \
    ROW(KT, JOINT, MOTOR, "motor.kt", 1, NULL, ELECTRIC, "N*m/A", "N/A", "1", ANY, 0, (1), 0, 0.1, kt, 1)        \
    ROW(KE, JOINT, MOTOR, "motor.ke", 1, NULL, VOLTAGE, "V*s/rad", NULL, NULL, ANY, 0, (0), 0, 0.01, ke, 1)      \
    /* the voltage model divides by it */                                                                       \
    ROW(RESISTANCE, JOINT, MOTOR, "motor.resistance", 1, NULL, VOLTAGE, "ohm", NULL, NULL, POSITIVE, 1, (1), 1,  \
        1, resistance, 0)                                                                                        \
                                                                                                                 \
    /* a servo (servo.h): kd on both kinds (a velocity servo's gain, required there by the                      \
     * loader; a position servo's damping, 0 when absent), kp on a position servo; the smooth                   \
     * torque limit only where given (absent: no saturation), not fitted by default since logs                  \
     * that never saturate say nothing about it. A position servo's kd is the viscous friction's                \
     * torque again, -(viscous + gear^2 kd) qd: motion tells only their sum, so the default set                 \
     * frees viscous and holds kd (a velocity servo's kd, its only gain, is freed all the same) */              \
    BLOCK(SERVO)                                                                                                 \
    ROW(KD, JOINT, SERVO, "motor.kd", 1, NULL, SERVO, "N*m*s/rad", "N*s/m", NULL, NONNEGATIVE, 0, (0), 0, 0.1,   \
        kd, 0)                                                                                                   \
    ROW(KP, JOINT, SERVO, "motor.kp", 1, NULL, POSITION_SERVO, "N*m/rad", "N/m", NULL, POSITIVE, 1, (NONE), 1,   \
        10, kp, 1)                                                                                               \
    BLOCK(SERVO_LIMIT)                                                                                           \
    ROW(SERVO_LIMIT, JOINT, SERVO_LIMIT, "motor.limit", 1, NULL, SERVO_LIMIT, "N*m", "N", NULL, POSITIVE, 0,     \
        (NONE), 1, 1, servo_limit, 0)                                                                            \
                                                                                                                 \
    /* the command delay (delay.h): a row only where robot.json gives it (so models without one                \
     * are today's, parameter for parameter), not fitted by default */                                          \
    BLOCK(DELAY)                                                                                                 \
    ROW(DELAY, JOINT, DELAY, "motor.delay", 1, NULL, DELAY, "s", NULL, NULL, NONNEGATIVE, 0, (0), 0, 0.01,       \
        delay, 0)                                                                                                \
                                                                                                                 \
    /* a joint torque sensor's gain and bias (torque_sensor.h): rows only where robot.json gives                \
     * "torque_sensor", so every other robot keeps its parameter vector; not fitted by default */               \
    BLOCK(TORQUE_SENSOR)                                                                                         \
    ROW(SENSOR_GAIN, JOINT, TORQUE_SENSOR, "torque_sensor.gain", 1, NULL, TORQUE_SENSOR, "1", NULL, NULL, ANY,   \
        0, (1), 0, 1, sensor_gain, 0)                                                                            \
    ROW(SENSOR_BIAS, JOINT, TORQUE_SENSOR, "torque_sensor.bias", 1, NULL, TORQUE_SENSOR, "N*m", "N", NULL, ANY,  \
        0, (0), 0, 0.01, sensor_bias, 0)                                                                         \
                                                                                                                 \
    /* backlash (backlash.h): rows only where robot.json gives "backlash", so every robot without               \
     * one keeps its parameter vector; width, stiffness and inertia required there, not fitted by               \
     * default (a log without direction reversals says nothing about the width) */                              \
    BLOCK(BACKLASH)                                                                                              \
    ROW(BACKLASH_WIDTH, JOINT, BACKLASH, "backlash.width", 1, NULL, BACKLASH, "rad", "m", NULL, NONNEGATIVE, 1,  \
        (NONE), 0, 0.01, backlash_width, 0)                                                                      \
    ROW(BACKLASH_STIFFNESS, JOINT, BACKLASH, "backlash.stiffness", 1, NULL, BACKLASH, "N*m/rad", "N/m", NULL,    \
        POSITIVE, 1, (NONE), 1, 100, backlash_stiffness, 0)                                                      \
    ROW(BACKLASH_DAMPING, JOINT, BACKLASH, "backlash.damping", 1, NULL, BACKLASH, "N*m*s/rad", "N*s/m", NULL,    \
        NONNEGATIVE, 0, (0), 0, 0.1, backlash_damping, 0)                                                        \
    ROW(BACKLASH_INERTIA, JOINT, BACKLASH, "backlash.inertia", 1, NULL, BACKLASH, "kg*m^2", "kg", NULL,          \
        POSITIVE, 1, (NONE), 1, 1e-3, backlash_inertia, 0)                                                       \
    /* the dead zone's corner width: the model is C-infinity, and exact to O(smoothing) outside it */           \
    ROW(BACKLASH_SMOOTHING, JOINT, BACKLASH, "backlash.smoothing", 1, NULL, BACKLASH, "rad", "m", NULL,          \
        POSITIVE, 0, (1e-3), 1, 1e-3, backlash_smoothing, 0)                                                     \
                                                                                                                 \
    /* the position limit (joint_limit.h): bounds as given (each may be absent: unbounded), gains               \
     * computed where absent (sid_model_absent_values); none fitted by default, since joints in                 \
     * normal logs never reach their limits */                                                                  \
    BLOCK(LIMIT_LOWER)                                                                                           \
    ROW(LIMIT_LOWER, JOINT, LIMIT_LOWER, "limit.lower", 1, NULL, LIMIT_LOWER, "rad", "m", NULL, ANY, 0, (NONE),  \
        0, 0.01, limit_lower, 0)                                                                                 \
    BLOCK(LIMIT_UPPER)                                                                                           \
    ROW(LIMIT_UPPER, JOINT, LIMIT_UPPER, "limit.upper", 1, NULL, LIMIT_UPPER, "rad", "m", NULL, ANY, 0, (NONE),  \
        0, 0.01, limit_upper, 0)                                                                                 \
    BLOCK(LIMIT)                                                                                                 \
    ROW(LIMIT_STIFFNESS, JOINT, LIMIT, "limit.stiffness", 1, NULL, LIMIT_SPRING, "N*m/rad", "N/m", NULL,         \
        NONNEGATIVE, 0, (NONE), 0, 100, limit_stiffness, 0)                                                      \
    ROW(LIMIT_DAMPING, JOINT, LIMIT, "limit.damping", 1, NULL, LIMIT_SPRING, "N*m*s/rad", "N*s/m", NULL,         \
        NONNEGATIVE, 0, (NONE), 0, 1, limit_damping, 0)                                                          \
                                                                                                                 \
    /* the compliant normal force's activation width and the friction's velocity scale divide */                \
    BLOCK(GROUND)                                                                                                \
    ROW(GROUND_HEIGHT, GROUND, GROUND, "height", 1, NULL, ALWAYS, "m", NULL, NULL, ANY, 0, (0), 0, 0.01, height, \
        0)                                                                                                       \
    ROW(GROUND_STIFFNESS, GROUND, GROUND, "stiffness", 1, NULL, ALWAYS, "N/m", NULL, NULL, NONNEGATIVE, 0,       \
        (1e4), 0, 1e4, stiffness, 0)                                                                             \
    ROW(GROUND_DAMPING, GROUND, GROUND, "damping", 1, NULL, ALWAYS, "N*s/m^2", NULL, NULL, NONNEGATIVE, 0,       \
        (1e3), 0, 1e3, damping, 0)                                                                               \
    ROW(GROUND_FRICTION, GROUND, GROUND, "friction", 1, NULL, ALWAYS, "1", NULL, NULL, NONNEGATIVE, 0, (1), 0,   \
        1, friction, 0)                                                                                          \
    ROW(GROUND_WIDTH, GROUND, GROUND, "width", 1, NULL, ALWAYS, "m", NULL, NULL, POSITIVE, 0, (1e-3), 1, 0.01,   \
        width, 0)                                                                                                \
    ROW(GROUND_SMOOTHING, GROUND, GROUND, "smoothing", 1, NULL, ALWAYS, "m/s", NULL, NULL, POSITIVE, 0, (1e-2),  \
        1, 0.01, smoothing, 0)                                                                                   \
                                                                                                                 \
    BLOCK(SPHERE)                                                                                                \
    ROW(SPHERE_XYZ, SPHERE, SPHERE, "xyz", 3, NULL, ALWAYS, "m", NULL, NULL, ANY, 1, (NONE, NONE, NONE), 0, 0.01, \
        xyz, 0)                                                                                                  \
    ROW(SPHERE_RADIUS, SPHERE, SPHERE, "radius", 1, NULL, ALWAYS, "m", NULL, NULL, NONNEGATIVE, 0, (0), 0, 0.01, \
        radius, 0)

#endif
