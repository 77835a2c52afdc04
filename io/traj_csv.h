/* traj_csv.h — logs (CSV) <-> sid_traj (docs/formats.md "Logs (CSV)").
 *
 * A log has one header row and one row per sample. Its columns have logical names: `t`,
 * `q.<coordinate>` for every position coordinate (required), `qd.<coordinate>` for every
 * velocity coordinate (all or none), `u.<coordinate>` for the velocity coordinates of every
 * joint with a motor (required), `tau.<coordinate>` (accepted, unused), pushes
 * `f.<link>.fx` .. `.tz` (world frame) and `f.<link>@link.*` (link frame) into tr->push
 * (sid.h, SID_PUSH_STRIDE; read under their own names, never mapped). A one-dof joint's
 * coordinate is named after the joint; a free joint "base" has positions base.x .. base.qz
 * and velocities base.vx .. base.wz (sid_model_q_name, sid_model_v_name). A column map
 * says which header holds a logical column when the names differ, one entry per column or
 * one pattern for every joint ("q.*": "pos_{joint}", colpattern.h); a scale multiplies its
 * values, or a unit converts them (units.h). Other columns are ignored with a warning.
 * The delimiter (',', ';' or tab) is the one of the header line; ';' logs may write decimal
 * commas. Times are re-based: the first sample is at t = 0, its time subtracted exactly
 * (logtime.h) before any rounding. An empty command cell holds the previous command.
 * Errors name the file, the line and the column: "log.csv: line 7, column q.elbow:
 * expected a number, got 'abc'". A free joint's logged quaternion must have a norm
 * between 0.5 and 1.5 on every row; it is kept as logged (not normalised).
 */
#ifndef CLI_TRAJ_CSV_H
#define CLI_TRAJ_CSV_H

#include <stdio.h>

#include "sid.h"

/* What an entry of a column map sets. */
enum { TRAJ_COL_SOURCE = 1, TRAJ_COL_SCALE = 2, TRAJ_COL_UNIT = 4 };

typedef struct {
    char name[SID_MAX_NAME + 8];   /* logical column "t", "q.shoulder", or a pattern "q.*" */
    char source[256];              /* header that holds it (a template for a pattern) */
    double scale;                  /* values are multiplied by this (1 = as logged) */
    char unit[24];                 /* or converted from this unit (units.h); "" = none */
    int set;                       /* TRAJ_COL_*: what the entry gives */
    char origin[160];              /* where the source came from, for messages */
    char conv_origin[160];         /* where the scale or unit came from */
} traj_column;

typedef struct {
    int n;
    traj_column *col;
} traj_colmap;

void traj_colmap_init(traj_colmap *map);
void traj_colmap_free(traj_colmap *map);
/* Entry for logical column or pattern name, created (nothing set) if absent; NULL if no
 * memory or the name is too long. */
traj_column *traj_colmap_get(traj_colmap *map, const char *name);
/* Copy src's entries into dst, replacing what dst's entries of the same name set (flags over
 * file: a unit replaces a scale and the other way round); src's new patterns go before
 * dst's, so that they are tried first. */
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
