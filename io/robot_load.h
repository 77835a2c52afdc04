/* robot_load.h — a robot from any file sysid reads, told apart by its content: robot.json
 * (docs/formats.md), URDF (root element <robot>) or MJCF (root element <mujoco>).
 *
 * An XML file is converted by its importer (urdf.h, mjcf.h) into the text of a robot.json,
 * which then loads like any robot.json: every command takes every format, and what a command
 * writes back (a fitted robot, `params --set`) is a robot.json; `sysid export` puts fitted
 * values back into the URDF or MJCF they came from. The name of the file says nothing: a
 * ".xml" may be either, and a robot.json may be called anything.
 */
#ifndef CLI_ROBOT_LOAD_H
#define CLI_ROBOT_LOAD_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "sid.h"

typedef enum { ROBOT_JSON, ROBOT_URDF, ROBOT_MJCF } robot_format;

/* What the text is; -1 with err set for XML that is neither URDF nor MJCF (naming the root). */
int robot_format_of(const char *path, const char *text, size_t len, robot_format *fmt, sid_error *err);
const char *robot_format_name(robot_format f);   /* "robot.json", "URDF", "MJCF" */
/* The format of the file at path (robot_format_of on its text). */
int robot_file_format(const char *path, robot_format *fmt, sid_error *err);

typedef struct {
    int balance_inertia;   /* repair inertias that break the triangle inequality (as MuJoCo's balanceinertia) */
} robot_import_opts;

/* The robot.json text (*json, malloc'ed) of the URDF or MJCF text read from path. */
int robot_import(const char *path, const char *text, size_t len, robot_format fmt, const robot_import_opts *o,
                 char **json, sid_error *err);

/* Read path in any format into d (free with robot_desc_free) and, if doc is not NULL, the
 * document with its robot.json text (the file's own, or the importer's) for the writer;
 * fmt (may be NULL) receives the format. 0, or -1 with err set. */
int robot_load(const char *path, sid_robot_desc *d, cJSON **doc, robot_format *fmt, sid_error *err);

/* In core's message err, "links[35]" and "joints[2]" (places in a robot.json) become
 * "link 'NAME'" and "joint 'NAME'", as an imported file names them. */
void robot_name_elements(const sid_robot_desc *d, sid_error *err);

/* robot_load + sid_model_create, core's messages prefixed by path. *theta0 is sid_alloc'ed
 * (sid_free); doc may be NULL. */
int robot_model(const char *path, sid_model **m, double **theta0, cJSON **doc, sid_error *err);

#endif
