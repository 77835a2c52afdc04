/* traj_csv.h — logs (CSV) <-> sid_traj (FORMATS.md "Logs (CSV)").
 *
 * A log has one header row and one row per sample. Its columns have logical names: `t`,
 * `q.<coordinate>` for every position coordinate (required), `qd.<coordinate>` for every
 * velocity coordinate (all or none), `u.<coordinate>` for the velocity coordinates of every
 * joint with a motor (required), `tau.<coordinate>` (accepted, unused). A one-dof joint's
 * coordinate is named after the joint; a free joint "base" has positions base.x .. base.qz
 * and velocities base.vx .. base.wz (sid_model_q_name, sid_model_v_name). A column map
 * says which header holds a logical column when the names differ, and a scale multiplies
 * its values (unit conversion). Other columns are ignored with a warning on stderr.
 * Errors name the file, the line and the column: "log.csv: line 7, column q.elbow:
 * expected a number, got 'abc'". A free joint's logged quaternion must have a norm
 * between 0.5 and 1.5 on every row; it is kept as logged (not normalised).
 */
#ifndef CLI_TRAJ_CSV_H
#define CLI_TRAJ_CSV_H

#include <stdio.h>

#include "sid.h"

typedef struct {
    char name[SID_MAX_NAME + 8];   /* logical column: "t", "q.shoulder" */
    char source[256];              /* header of the file that holds it; "" = name itself */
    double scale;                  /* values are multiplied by this (1 = as logged) */
    char origin[128];              /* where the entry came from, for messages */
} traj_column;

typedef struct {
    int n;
    traj_column *col;
} traj_colmap;

void traj_colmap_init(traj_colmap *map);
void traj_colmap_free(traj_colmap *map);
/* Entry for logical column name, created (source "", scale 1) if absent; NULL if no memory. */
traj_column *traj_colmap_get(traj_colmap *map, const char *name);
/* Copy src's entries into dst, replacing dst's entries of the same name (flags over file). */
int traj_colmap_merge(traj_colmap *dst, const traj_colmap *src);

/* Read the log at path ("-": stdin) for model m; *tr is new (sid_traj_free). map may be
 * NULL. Returns 0, or nonzero with err set (SID_ERR_INPUT naming file, line, column). */
int traj_csv_load(const char *path, const sid_model *m, const traj_colmap *map, sid_traj **tr,
                  sid_error *err);

/* Write a trajectory with the log's logical columns: t, q.*, qd.*, u.* (joints with a
 * motor), in coordinate order, %.17g-exact. q (n x nq) and v (n x nv) default to tr's own when NULL; v is
 * omitted when both v and tr->qd are NULL. Returns 0, or -1 on a write error (errno). */
int traj_csv_write(FILE *f, const sid_model *m, const sid_traj *tr, const double *q,
                   const double *v);

#endif
