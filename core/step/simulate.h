/* simulate.h — how log intervals become steps, and the simulator's q from a log (simulate.c). */
#ifndef SID_SIMULATE_H
#define SID_SIMULATE_H

#include "model.h"

/* Number of equal substeps for a log interval of length dt under options o. */
int sid_substeps(const sid_sim_opts *o, double dt);
/* The simulator's q at log sample k: logged q minus the encoder offsets. */
void sid_traj_state_q(const sid_model *m, const double *theta, const sid_traj *tr, int k, double *q);

#endif
