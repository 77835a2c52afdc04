/* urdf.h — URDF in (as the text of a robot.json) and fitted values back into the URDF.
 *
 * robot.json's conventions are URDF's (docs/formats.md "robot.json"), so the mapping is direct:
 * links keep their mass, com (the inertial origin's xyz) and inertia (rotated into the link
 * frame by the inertial origin's rpy: I = R I' R^T); revolute, continuous, prismatic, fixed
 * and floating joints map to revolute, prismatic, fixed and free ones; every moving joint gets
 * a torque motor (URDF has no actuator model; logs carry joint torques); dynamics damping and
 * friction become viscous and (smooth) Coulomb friction; limits are recorded. docs/formats.md "URDF"
 * lists every rule, every warning and every error.
 *
 * Messages name the file, the line and the element: "panda.urdf:42: <joint name=\"j1\">: ...".
 * Names sysid cannot use (with . [ ] * ? , quotes or spaces) get '_' in their place, made
 * unique in document order, so that urdf_export finds them again by importing the file anew.
 */
#ifndef CLI_URDF_H
#define CLI_URDF_H

#include <stddef.h>

#include "sid.h"

/* Choices of the import that change numbers (all off by default). */
typedef struct {
    /* Replace an inertia whose principal moments break the triangle inequality by the isotropic
     * tensor of their mean (MuJoCo's compiler balanceinertia, `--balance-inertia`). */
    int balance_inertia;
} urdf_import_opts;

/* Convert a URDF document (text: len bytes read from path, NUL-terminated) into the text of an
 * equivalent robot.json (*json malloc'ed). Warnings via cli_warn name path:line and the element.
 * 0, or -1 with err set (SID_ERR_INPUT): "path:LINE: <joint name=\"x\">: what was expected". */
int urdf_import(const char *path, const char *text, size_t len, char **json, sid_error *err);
/* The same with options (opts NULL: the defaults, as urdf_import). */
int urdf_import_with(const char *path, const char *text, size_t len, const urdf_import_opts *opts,
                     char **json, sid_error *err);

/* A copy of the URDF text (*out malloc'ed, *outlen bytes) in which the values of fitted that differ
 * from the file's own import are written, changing only those numbers (comments, order, layout and
 * every other byte stay). Matches links and joints by the names urdf_import gives. Every value of
 * fitted that differs and URDF cannot hold (motor constants, Stribeck, offset, torque_bias,
 * smoothing, gravity, contact, armature...) is reported with cli_warn under one heading
 * "not representable in URDF (kept in FITTED.json only):" one line per parameter name with its value.
 * 0, or -1 with err set (a link or joint of fitted missing from the file, a different structure). */
int urdf_export(const char *path, const char *text, size_t len, const sid_robot_desc *fitted,
                char **out, size_t *outlen, sid_error *err);

#endif
