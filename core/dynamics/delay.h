/* delay.h — a motor's command delay d [s] (robot.json joints[].motor.delay, docs/formats.md).
 *
 * The step of log interval k (all its substeps) holds the command the motor sees at the
 * interval's start, the log's commands linearly interpolated at s = t_k - d:
 *     u_d(k) = u_i + f (u_{i+1} - u_i),  t_i < s <= t_{i+1},  f = (s - t_i) / (t_{i+1} - t_i)
 * and u_0 for s <= t_0. At d = 0 this is u_k itself (today's zero-order hold, bit for bit); it
 * is continuous in d, with du_d/dd = -(u_{i+1} - u_i) / (t_{i+1} - t_i) between sample
 * boundaries (at d a whole number of samples, the slope of the earlier interval: the one-sided
 * derivative toward larger delays). Every motor's generalised force is linear in its command
 * with slope g (torque and current: gear kt; voltage: gear kt / R; position servo: gear kp;
 * velocity servo: gear kd; a saturating servo has no delay), exactly as torque_bias enters it
 * with slope 1, so the delay's adjoint and tangent ride on torque_bias's: dL/dd = sum over
 * intervals of (dL/dbias of that interval's steps) g du_d/dd. */
#ifndef SID_DELAY_H
#define SID_DELAY_H

#include "model.h"
#include "workspace.h"

/* Whether any joint of m has a delay row. */
int sid_delay_any(const sid_model *m);
/* The commands of interval k's steps: tr's own row k without delays, else ws->ud filled. */
const double *sid_delay_u(const sid_model *m, const double *theta, const sid_traj *tr, int k, sid_workspace *ws);
/* Before the adjoint of interval k's steps: move each delayed joint's torque_bias adjoint
 * aside (ws->dsave) and zero it, so the steps leave that interval's own share. */
void sid_delay_vjp_begin(const sid_model *m, double *thetabar, sid_workspace *ws);
/* After them: the delay's adjoint gains the share times g du_d/dd; torque_bias gets it back. */
void sid_delay_vjp_end(const sid_model *m, const double *theta, const sid_traj *tr, int k, double *thetabar,
                       sid_workspace *ws);
/* Adjoint of sid_delay_u for interval (or sample) k: ubk (nvo) is the adjoint of the commands
 * it returned; each joint's goes to the log samples its command was read from (a delayed one
 * split (1 - f) and f over the two it interpolates), added to ubar, whose row 0 is sample k_base
 * (rows of nvo). command_grad.c. */
void sid_delay_u_vjp(const sid_model *m, const double *theta, const sid_traj *tr, int k, const double *ubk,
                     double *ubar, int k_base);
/* The earliest log sample the commands of interval k read (k itself without delays). */
int sid_delay_first_sample(const sid_model *m, const double *theta, const sid_traj *tr, int k);
/* The entries of theta where sid_delay_jvp_seed's thetadot can be nonzero, given the nfree
 * directions' own entries idx: idx, then each delayed joint's torque_bias, each entry once, into
 * cols (room for nfree + nbody); returns their count. */
int sid_delay_jvp_cols(const sid_model *m, int nfree, const int *idx, int *cols);
/* Forward mode for interval k: each direction's torque_bias tangent becomes its own seed (1 for
 * a direction that is that torque_bias, else 0) plus its delay tangent times g du_d/dd. With
 * tr NULL, only the seed (restores thetadot after a window). */
void sid_delay_jvp_seed(const sid_model *m, const double *theta, const sid_traj *tr, int k, int ndir, int nfree,
                        const int *idx, double *thetadot);

#endif
