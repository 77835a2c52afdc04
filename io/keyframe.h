/* keyframe.h — a robot file's named states (robot.json "keyframes", an MJCF's <key>s): the
 * pose, velocities and commands a simulation or an excitation can start from.
 *
 *   "keyframes": [ { "name": "home", "q": { "elbow": 1.57, ... }, "qd": { ... }, "u": { ... } } ]
 *
 * q and qd by moving joint [rad or m, rad/s or m/s; a free joint: [x, y, z, qw, qx, qy, qz] and
 * [vx, vy, vz, wx, wy, wz], MuJoCo's qpos and qvel], u by joint with a motor (its command);
 * a joint left out is at 0 (a free joint at the origin, unrotated); a free joint's quaternion is
 * normalised, as MuJoCo's compiler normalises a key's. */
#ifndef SID_KEYFRAME_H
#define SID_KEYFRAME_H

#include <cjson/cJSON.h>

#include "sid.h"

/* The robot.json reader's check of root's "keyframes" against d's joints: 0, or -1 with err
 * naming file and the JSON path. */
int keyframes_check(const char *file, const cJSON *root, const sid_robot_desc *d, sid_error *err);

/* The name of root's first keyframe, or NULL when it has none. */
const char *keyframe_first(const cJSON *root);

/* Keyframe name of root as m's state: q (nq, the simulator's, no encoder offsets), v (nv) and
 * u (nv; 0 where not given). 0, or -1 with err naming the keyframes there are. */
int keyframe_state(const char *file, const cJSON *root, const sid_model *m, const char *name, double *q, double *v,
                   double *u, sid_error *err);

#endif
