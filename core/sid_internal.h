/* sid_internal.h — the core's internal interfaces that the tests exercise one by one: kinematics,
 * RNEA and its adjoints, forward dynamics, contact, the steps. Not for cli/. */
#ifndef SID_INTERNAL_H
#define SID_INTERNAL_H

#include "contact_hard.h"
#include "fd.h"
#include "step.h"
#include "sid.h"

#endif
