/* coords.h — a model's coordinates as logs and tables show them.
 *
 * A one-dof joint has one position and one velocity, both named after it; a free joint has
 * seven positions ("base.x" .. "base.qz") and six velocities ("base.vx" .. "base.wz"), named
 * by core (sid_model_q_name, sid_model_v_name). Tables of per-coordinate errors show a
 * one-dof joint on one row, as before free joints existed, and each coordinate of a free
 * joint on a row of its own.
 */
#ifndef CLI_COORDS_H
#define CLI_COORDS_H

#include "sid.h"

/* Position and velocity coordinates of moving joint k: [*q0, *q0 + *nq), [*v0, *v0 + *nv). */
void coords_joint(const sid_model *m, int k, int *q0, int *nq, int *v0, int *nv);

/* The velocity coordinates that have a command column (u.*), in order; returns how many.
 * idx needs room for sid_model_nv entries. */
int coords_motor(const sid_model *m, int *idx);

typedef struct {
    const char *name;   /* the coordinate's name (a one-dof joint's name) */
    int q, v;           /* position and velocity index shown on this row; -1: none */
    const char *unit;   /* "rad, rad/s" or "m, m/s" (one-dof joint); "m", "1" (quaternion
                         * component), "m/s" or "rad/s" (a free joint's coordinates) */
} coords_row;

/* Rows of a per-coordinate table; rows needs room for nq + nv. Returns how many. */
int coords_rows(const sid_model *m, coords_row *rows);
/* The same rows in a new array (free()), their number in *n and the width of the name
 * column (the longest name, at least 5 for the "joint" heading) in *width; NULL if out of
 * memory. */
coords_row *coords_table(const sid_model *m, int *n, int *width);

#endif
