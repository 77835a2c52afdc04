/* sid_internal.h — the core's internal interfaces that the tests exercise one by one: kinematics,
 * RNEA and its adjoints, inverse and forward dynamics, mass matrix, energy, joint forces,
 * contact, the step table and the steps' adjoint and tangent (sid_step_vjp, sid_step_jvp).
 * Not for cli/. */
#ifndef SID_INTERNAL_H
#define SID_INTERNAL_H

#include "contact_hard.h"
#include "fd.h"
#include "free_joint.h"
#include "step.h"
#include "sid.h"

#endif
