/* mjcf.h — MuJoCo MJCF files in and out: import as robot.json, export fitted values back.
 *
 * The file is read as MuJoCo 2.2.2's compiler reads it (docs/formats.md "MJCF"): compiler settings,
 * nested default classes and childclass, <include>, the body tree with hinge, slide and free
 * joints, explicit inertials or inertia from primitive geoms, motors, a ground plane and
 * sphere geoms as contact. What sysid cannot express is warned about (file:line, element) or
 * is an error; nothing is dropped silently.
 */
#ifndef CLI_MJCF_H
#define CLI_MJCF_H

#include <stddef.h>

#include "sid.h"

/* Convert an MJCF document (text: len bytes read from path, NUL-terminated; <include> files are
 * read relative to path's directory) into the text of an equivalent robot.json (*json malloc'ed).
 * Warnings via cli_warn name file:line and the element. 0, or -1 with err set (SID_ERR_INPUT):
 * "file:LINE: <body name=\"x\">: what was expected". */
int mjcf_import(const char *path, const char *text, size_t len, char **json, sid_error *err);

/* A copy of the MJCF text (*out malloc'ed, *outlen bytes) with the values of fitted that differ from
 * the file's own import written where they are defined (the element itself or the default class
 * that gives them), changing only those numbers. When one default class serves joints fitted to
 * different values, the values move onto each joint element (the default stays) and a cli_warn says
 * so, naming the class and the joints. Values in an <include>d file: written into that file is not
 * possible with one output: list them as not written, naming the file. Every value of fitted that
 * differs and MJCF cannot hold (motor kt/ke/resistance, Stribeck, offset, torque_bias,
 * smoothing, ...) is reported with cli_warn under one heading
 * "not representable in MJCF (kept in FITTED.json only):", one line per parameter and value.
 * 0, or -1 with err set (a body/joint of fitted missing from the file, a different structure). */
int mjcf_export(const char *path, const char *text, size_t len, const sid_robot_desc *fitted,
                char **out, size_t *outlen, sid_error *err);

#endif
