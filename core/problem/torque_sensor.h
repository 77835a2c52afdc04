/* torque_sensor.h — joint torque sensors: logged tau.<joint> columns as residuals (internal to
 * core/; docs/formats.md "Torque sensors").
 *
 * What a sensor measures: the torque the joint transmits to its link, the link-side generalised
 * force that the rigid-body tree needs,
 *     tau_link = RNEA(q, v, a) = M(q) a + c(q, v)        (links only: no armature, no friction)
 * at the simulated state (q, v) of each sample and its acceleration a = fd(q, v, u) (the plain
 * forward dynamics, hd = 0, with the command of the interval the sample starts; the same for
 * Euler and RK4). Equivalently the motor's torque minus the joint's armature, friction, damping
 * and limit forces. A sensor reads g tau_link + b (torque_sensor.gain, .bias; 1 and 0 where
 * robot.json gives no torque_sensor). Residual of coordinate i at sample k, weighted as q and qd
 * are: r = sqrt(weight_tau) (g tau_link + b - tau_log) / s_i, s_i the RMS of the logged column
 * over all logs (not its spread: a joint holding against gravity has a large mean and a small
 * spread), floored at 1e-3.
 *
 * A delayed motor (delay.h) sees the sample's delayed command; its derivative rides on
 * torque_bias's as in the steps. Scored only with weight_tau > 0 (default 0: logs with tau
 * columns fit as before). Not with contact, free joints, dry friction, constraint limits or
 * logged pushes (each changes the acceleration or the transmitted torque in ways this file does
 * not differentiate): sid_tau_setup refuses them. */
#ifndef SID_TORQUE_SENSOR_H
#define SID_TORQUE_SENSOR_H

#include "problem.h"

/* Sensor i's gain and bias at theta (1 and 0 without a sensor block; *pg: the block's first
 * parameter, or -1). */
void sid_tau_gain_bias(const sid_model *m, const double *theta, int i, double *g, double *b, int *pg);

/* tau_link at (q, v) with command u: a (nv) receives the acceleration, tau (nv) the torque. */
sid_status sid_tau_link(const sid_fd_point *p, double *a, double *tau, sid_error *err);

/* The sample's sensor terms at state x: adds 1/2 sum w (d / s)^2 to sums->sum, squared raw
 * errors of the readings to sums->sse_tau (nv, may be NULL) and, with xbar, d(sum)/dx to xbar
 * and d(sum)/dtheta to thetabar (through RNEA's and the forward dynamics' adjoints). No-op
 * unless scored. */
sid_status sid_tau_residual(const sid_sample *smp, const double *x, const sid_loss_sums *sums, double *xbar,
                            double *thetabar, sid_error *err);
/* The same residuals as rows (in coordinate order) with their tangent rows: dirs->thetadot's
 * torque_bias entries are reseeded for the sample's delayed command (delay.h); out->n is set. */
sid_status sid_tau_residual_rows(const sid_sample *smp, const double *x, const sid_sample_dirs *dirs, sid_rows *out,
                                 sid_error *err);

#endif
