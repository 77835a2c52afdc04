/* units.h — unit names of log columns ("deg", "ns", "mN*m") and what they convert to.
 *
 * A log column's unit says how to bring its numbers to the SI unit sysid computes in
 * (docs/formats.md "Units"): value_SI = value * mul / div. Powers of ten are divisors, so that
 * "ms" divides by 1000 exactly instead of multiplying by an inexact 0.001. Every unit has a
 * kind; a column accepts only the kinds its quantity can have (an angle for a revolute
 * joint's q, a length for a prismatic one's).
 */
#ifndef CLI_UNITS_H
#define CLI_UNITS_H

typedef enum {
    UNIT_TIME,
    UNIT_ANGLE,
    UNIT_LENGTH,
    UNIT_ANGULAR_VELOCITY,
    UNIT_VELOCITY,
    UNIT_TORQUE,
    UNIT_FORCE,
    UNIT_CURRENT,
    UNIT_VOLTAGE,
    UNIT_NKIND
} unit_kind;

typedef struct {
    const char *name;
    unit_kind kind;
    double mul, div;     /* SI value = value * mul / div */
    int pow10;           /* mul == 1 and div == 10^-pow10: an exact decimal shift (times) */
} unit_def;

/* The unit called name ("N·m" and "N*m" are the same), or NULL. */
const unit_def *unit_find(const char *name);
/* "an angle", "a time", ... for messages. */
const char *unit_kind_name(unit_kind k);
/* The units of kind k, comma-separated ("rad, deg, rev"), for messages. */
const char *unit_kind_list(unit_kind k);
/* Every unit, kind by kind ("s, ms, ...; rad, deg, rev; ..."), for messages. */
const char *unit_all_list(void);

#endif
