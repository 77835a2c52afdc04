/* units.c — the table of log units (units.h). */
#include "units.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* One row per spelling; the first spelling of a kind is its SI unit. "·" is U+00B7 and "µ"
 * U+00B5 in UTF-8 (what a keyboard or a spreadsheet writes). */
static const unit_def table[] = {
    { "s", UNIT_TIME, 1, 1, 0 },
    { "ms", UNIT_TIME, 1, 1e3, -3 },
    { "us", UNIT_TIME, 1, 1e6, -6 },
    { "\xC2\xB5s", UNIT_TIME, 1, 1e6, -6 },
    { "ns", UNIT_TIME, 1, 1e9, -9 },
    { "rad", UNIT_ANGLE, 1, 1, 0 },
    { "deg", UNIT_ANGLE, M_PI, 180, 0 },
    { "rev", UNIT_ANGLE, 2 * M_PI, 1, 0 },
    { "m", UNIT_LENGTH, 1, 1, 0 },
    { "cm", UNIT_LENGTH, 1, 1e2, 0 },
    { "mm", UNIT_LENGTH, 1, 1e3, 0 },
    { "um", UNIT_LENGTH, 1, 1e6, 0 },
    { "\xC2\xB5m", UNIT_LENGTH, 1, 1e6, 0 },
    { "rad/s", UNIT_ANGULAR_VELOCITY, 1, 1, 0 },
    { "deg/s", UNIT_ANGULAR_VELOCITY, M_PI, 180, 0 },
    { "rpm", UNIT_ANGULAR_VELOCITY, 2 * M_PI, 60, 0 },
    { "rev/s", UNIT_ANGULAR_VELOCITY, 2 * M_PI, 1, 0 },
    { "m/s", UNIT_VELOCITY, 1, 1, 0 },
    { "cm/s", UNIT_VELOCITY, 1, 1e2, 0 },
    { "mm/s", UNIT_VELOCITY, 1, 1e3, 0 },
    { "N*m", UNIT_TORQUE, 1, 1, 0 },
    { "N\xC2\xB7m", UNIT_TORQUE, 1, 1, 0 },
    { "Nm", UNIT_TORQUE, 1, 1, 0 },
    { "mN*m", UNIT_TORQUE, 1, 1e3, 0 },
    { "mN\xC2\xB7m", UNIT_TORQUE, 1, 1e3, 0 },
    { "mNm", UNIT_TORQUE, 1, 1e3, 0 },
    { "N", UNIT_FORCE, 1, 1, 0 },
    { "mN", UNIT_FORCE, 1, 1e3, 0 },
    { "kN", UNIT_FORCE, 1e3, 1, 0 },
    { "A", UNIT_CURRENT, 1, 1, 0 },
    { "mA", UNIT_CURRENT, 1, 1e3, 0 },
    { "V", UNIT_VOLTAGE, 1, 1, 0 },
    { "mV", UNIT_VOLTAGE, 1, 1e3, 0 },
};

static const char *const kind_name[UNIT_NKIND] = {
    "a time", "an angle", "a length", "an angular velocity", "a velocity", "a torque",
    "a force", "a current", "a voltage",
};


const unit_def *unit_find(const char *name)
{
    for (size_t i = 0; i < sizeof table / sizeof *table; i++)
        if (strcmp(table[i].name, name) == 0)
            return &table[i];
    return NULL;
}

const char *unit_kind_name(unit_kind k)
{
    return k < UNIT_NKIND ? kind_name[k] : "?";
}

/* The lists for messages, made from the table once (so that they cannot miss a unit). */
static char kind_list[UNIT_NKIND][128], all_list[UNIT_NKIND * 130];

static void make_lists(void)
{
    if (all_list[0])
        return;
    for (size_t i = 0; i < sizeof table / sizeof *table; i++) {
        char *l = kind_list[table[i].kind];
        size_t n = strlen(l);
        snprintf(l + n, sizeof kind_list[0] - n, "%s%s", n ? ", " : "", table[i].name);
    }
    for (int k = 0; k < UNIT_NKIND; k++) {
        size_t n = strlen(all_list);
        snprintf(all_list + n, sizeof all_list - n, "%s%s", k ? "; " : "", kind_list[k]);
    }
}

const char *unit_kind_list(unit_kind k)
{
    make_lists();
    return k < UNIT_NKIND ? kind_list[k] : "";
}

const char *unit_all_list(void)
{
    make_lists();
    return all_list;
}
