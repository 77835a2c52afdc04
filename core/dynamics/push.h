/* push.h — external wrenches on links logged as inputs (docs/formats.md "Logs", f.<link>.*): held
 * over a sample interval like commands, they enter the dynamics as external forces beside a
 * contact model's (fd.c), so RNEA's force pass and its adjoint carry them (push.c).
 * A log's layout: sid.h, SID_PUSH_STRIDE. */
#ifndef SID_PUSH_H
#define SID_PUSH_H

#include "kinematics.h"

/* The pushes of log tr over interval k (nbody x SID_PUSH_STRIDE), or NULL when it has none. */
const double *sid_push_at(const sid_traj *tr, int nbody, int k);
/* fext += the pushes ws->push in body coordinates, at the world poses in ws. */
void sid_push_forces(const sid_model *m, sid_workspace *ws, sid_sv *fext);
/* Adjoint: a world-frame wrench w gives R^T w, so ws->Rwbar += w fextbar^T (then
 * sid_world_pose_vjp); a link-frame wrench has none. */
void sid_push_forces_vjp(const sid_model *m, sid_workspace *ws, const sid_sv *fextbar);

/* Tangent of sid_push_forces: a world-frame wrench turns with the link, Rdot^T w, Rdot the
 * world rotation's tangent in ws->Rwbar (sid_rnea_jvp_motion); added to fextdot. */
void sid_push_forces_jvp(const sid_model *m, sid_workspace *ws, sid_sv *fextdot);

#endif
