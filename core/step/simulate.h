/* simulate.h — how log intervals become steps, and the simulator's q from a log (simulate.c). */
#ifndef SID_SIMULATE_H
#define SID_SIMULATE_H

#include "model.h"

/* Number of equal substeps for a log interval of length dt under options o. */
int sid_substeps(const sid_sim_opts *o, double dt);
/* The substeps of log interval k (samples k to k + 1) of tr under o: their number, and with h
 * their length. Every loop over an interval's steps starts here. */
static inline int sid_interval_substeps(const sid_sim_opts *o, const sid_traj *tr, int k, double *h)
{
    const double dt = tr->t[k + 1] - tr->t[k];
    const int nsub = sid_substeps(o, dt);
    if (h) *h = dt / nsub;
    return nsub;
}
/* The steps of samples [k0, k1] of tr under o. */
static inline int sid_span_steps(const sid_sim_opts *o, const sid_traj *tr, int k0, int k1)
{
    int steps = 0;
    for (int k = k0; k < k1; k++) steps += sid_interval_substeps(o, tr, k, NULL);
    return steps;
}
/* The simulator's q at log sample k: logged q minus the encoder offsets. */
void sid_traj_state_q(const sid_model *m, const double *theta, const sid_traj *tr, int k, double *q);

#endif
