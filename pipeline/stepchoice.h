/* stepchoice.h — the simulation step a command uses (core's sid_step_choose), and the
 * sentence that says what it is and why. */
#ifndef CLI_STEPCHOICE_H
#define CLI_STEPCHOICE_H

#include <stddef.h>

#include "fitspec.h"
#include "sid.h"

/* Choose the step for the spec's settings on logs at theta (or keep the one the spec or the
 * robot gives) and write the options chosen into spec->sim; with say, a note says which and
 * why ("step: ..."). 0, or -1 with err set. */
int stepchoice_apply(fitspec *spec, const sid_model *m, const double *theta, sid_traj *const *logs,
                     const char *const *path, int nlog, int say, sid_step_choice *c, sid_error *err);
/* "0.5 ms (4 substeps of the 2 ms sample interval, euler): estimated position error ..." */
void stepchoice_describe(const sid_step_choice *c, const sid_model *m, char *buf, size_t n);

#endif
