/* robot_json.h — robot.json <-> sid_robot_desc and back (docs/formats.md "robot.json").
 *
 * Loading checks every field's type and range and names the JSON path of a mistake:
 *   "robot.json: links[2].mass: expected a positive number, got -1".
 * Where the numbers are, their ranges and defaults are core's parameter table (params.c);
 * this file reads the structure around them (names, types, links, motors, contact).
 * Structural checks (tree shape, duplicate names, zero axes, inertia) are core's
 * sid_model_create; robot_model (robot_load.h) prefixes its messages with the file name.
 * Defaults: gravity [0, 0, -9.81]; origin xyz and rpy 0; axis [1, 0, 0] as in URDF; the
 * optional joint fields as sid_joint_desc_defaults. "continuous" is a revolute joint. A
 * "free" joint has none of origin, axis, armature, friction, motor, offset, limit (an error
 * names the field); a fixed joint has no limit. A limit's effort and velocity are recorded
 * (non-negative), not simulated; lower <= upper. The optional "contact" object gives the
 * ground (its fields default as sid_ground_desc_defaults; present only when "ground" is
 * given) and the spheres (xyz required, radius 0 by default), which need a ground.
 * Unknown keys are ignored with a warning on stderr (as unknown log columns are), except
 * keys starting with '_', which are free for annotations. A key given twice is an error.
 *
 * Writing keeps the user's file: the loaded document holds the file's text (in the root's
 * valuestring, unused by cJSON for objects and freed by cJSON_Delete), and only the numbers
 * of theta that differ from what the file says are spliced into it (json_edit.h); every
 * other byte (layout, key order, spellings like 0.50 or 1e-3) stays, so a fit that changes
 * nothing writes the file as it was. A changed number is written in numfmt's shortest exact
 * form. An absent optional field is added only when its value differs from what the loader
 * would use for it (the default, or for a joint limit's stiffness and damping the value computed
 * from the written model, sid_model_absent_values): as the last member of its object, laid out
 * like its siblings. A
 * document without its text (built in memory) is printed anew by jsonfile_write.
 */
#ifndef CLI_ROBOT_JSON_H
#define CLI_ROBOT_JSON_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "sid.h"

/* Load path into d (free with robot_desc_free); if doc is not NULL it receives the parsed
 * document, holding the file's text for the writer (free with cJSON_Delete). Returns 0, or
 * nonzero with err set. */
int robot_json_load(const char *path, sid_robot_desc *d, cJSON **doc, sid_error *err);
/* The same from the text of a robot.json (len bytes, NUL-terminated; path names it in messages). */
int robot_json_parse(const char *path, const char *text, size_t len, sid_robot_desc *d, cJSON **doc,
                     sid_error *err);
void robot_desc_free(sid_robot_desc *d);

/* doc with every parameter of theta at its JSON path, for jsonfile_write: a raw item holding
 * the patched text of the file doc was loaded from, or (without that text) a new document;
 * NULL with err set (naming path) if theta holds NaN or Inf or a parameter has no place. */
cJSON *robot_json_fitted(const char *path, const cJSON *doc, const sid_model *m,
                         const double *theta, sid_error *err);

/* Write doc with every parameter of theta at its JSON path to path, atomically. Fails
 * (SID_ERR_NONFINITE) without writing if theta holds NaN or Inf. */
int robot_json_write(const char *path, const cJSON *doc, const sid_model *m,
                     const double *theta, sid_error *err);

#endif
