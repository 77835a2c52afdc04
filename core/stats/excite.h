/* excite.h — designing the experiment: an excitation command that maximises what a fit would
 * learn about the free parameters, within the joints' limits (excite.c; `sysid excite`).
 *
 * The command of every motor joint i is a band-limited Fourier series under a smooth envelope
 * about the command that holds the start pose q0 at rest:
 *     u_i(t) = u_hold,i + g_i s A_i e(t) sum_h (a_ih sin(2 pi h f0 t) + b_ih cos(2 pi h f0 t)) / H
 * h = 1 .. H, coefficients in [-1, 1], A_i the joint's torque limit (torque and current motors;
 * g_i = 1 / (gear kt) turns the torque into the command) or its position range about q0
 * (position servos, whose command is a reference: g_i = gear), and e(t) = sin^2 ramps from 0 to 1
 * over the first and last `ramp` seconds, so the command starts and ends at the hold with zero
 * slope. u_hold is the command whose acceleration at (q0, 0) is zero: gravity's torque at q0.
 * For a torque-driven joint "rest" is that: it starts still at q0 and its command returns to
 * the hold, but it may still swing when the command ends (penalised, SID_EXCITE_END_WEIGHT; the
 * report says how fast).
 *
 * Every candidate is made feasible rather than penalised: its amplitude s is the largest (found
 * by bracketing and bisection on simulations) for which the simulated trajectory stays within
 * SID_EXCITE_MARGIN of every position, velocity and torque limit. Its information is the
 * Gauss-Newton J^T J of the fit's windowed residuals at the nominal parameters, each residual
 * divided by the assumed noise level (noise_q, noise_qd), every window's start state eliminated
 * by its Schur complement (as covariance.c): the inverse is the covariance a fit of a log with
 * that noise would have, so its standard errors are in the parameters' units.
 *
 * The exact gradient of log det J^T J with respect to the coefficients needs second derivatives
 * of the simulation, which the library does not have: the coefficients are optimised
 * derivative-free (NLopt's BOBYQA, within the box [-1, 1]), from the seeded random multi-sine
 * (unit amplitude, random phase per harmonic), which is also the design of optimise = 0.
 * Deterministic: the same inputs and seed give the same design, for any number of threads. */
#ifndef SID_EXCITE_H
#define SID_EXCITE_H

#include "sid.h"

#define SID_EXCITE_MARGIN 0.97   /* a design uses at most this fraction of any limit */
/* The optimiser's score also has SID_EXCITE_END_WEIGHT sum_i (qd_i(T) / qd_max_i)^2: a torque-driven
 * joint may still swing when its command is back at the hold, and designs that end calmer are
 * preferred (2: ending at 30 % of the speed limit costs as much as 20 % more standard error). */
#define SID_EXCITE_END_WEIGHT 2.0

typedef enum {
    SID_EXCITE_LOGDET,   /* maximise log det of the relative information (D-optimal) */
    SID_EXCITE_WORST     /* minimise the largest relative standard error */
} sid_excite_criterion;

typedef struct {
    double duration;          /* [s] */
    double dt;                /* command (and sample) interval [s] */
    int harmonics;            /* H */
    double f0;                /* fundamental [Hz]; harmonics f0 .. H f0 */
    double ramp;              /* [s] of each sin^2 ramp */
    double noise_q, noise_qd; /* assumed noise [rad or m], [rad/s or m/s]; noise_qd 0: velocities not scored */
    sid_excite_criterion criterion;
    int optimise;             /* 0: the seeded random multi-sine, scaled to the limits */
    int max_evals;            /* designs simulated by the optimiser at most */
    unsigned long seed;
    sid_loss_opts loss;       /* window and simulation of the fit (estimate_start is forced on) */
    int nfree;
    const int *idx;           /* (nfree) the parameters the design is for */
    const double *q0;         /* (nq) start pose [rad or m], the simulator's coordinates */
    const double *q_lo, *q_hi;   /* (nq) position limits (q_lo < q0 < q_hi) */
    const double *qd_max;     /* (nv) speed limits, > 0 */
    const double *tau_max;    /* (nv) joint torque limits, > 0 */
    volatile const int *interrupt;   /* may be NULL */
} sid_excite_opts;

typedef struct {
    sid_traj *traj;           /* the design: commands and the nominal model's simulated q, qd */
    double *se;               /* (nfree) predicted standard errors; HUGE_VAL: not identifiable */
    double *info;             /* (nfree x nfree) the information J^T J (noise-scaled) */
    double cond;              /* condition number of the unit-diagonal information, identifiable part */
    double logdet;            /* log det of the relative information T J^T J T, T = typical values */
    double worst_rel;         /* largest se / typical (HUGE_VAL: a parameter not identifiable) */
    int worst;                /* its place in idx */
    int nnull;                /* directions the design does not resolve */
    double scale;             /* the amplitude s */
    double use_q, use_qd, use_tau;   /* the largest fraction of each kind of limit used */
    double end_qd;            /* largest |qd| at the last sample */
    int evaluations;          /* designs simulated and scored */
} sid_excite_result;

/* The hold command (nv, 0 where no motor) at q0 (o->q0). */
sid_status sid_excite_hold(const sid_model *m, const double *theta, const sid_excite_opts *o, double *u_hold,
                           sid_error *err);
/* Design the excitation for m at theta (the nominal parameters). r is filled (free it with
 * sid_excite_result_free, also after an error). Errors: no motor on a moving joint, a motor
 * other than torque, current or position servo, free joints, backlash, bad options. */
sid_status sid_excite_run(const sid_model *m, const double *theta, const sid_excite_opts *o, sid_excite_result *r,
                          sid_error *err);
void sid_excite_result_free(sid_excite_result *r);
/* The information of a given trajectory (commands and states, e.g. any log) as sid_excite_run
 * scores a design: r's se, info, cond, logdet, worst_rel, worst, nnull (traj is not touched). */
sid_status sid_excite_score(const sid_model *m, const double *theta, const sid_traj *tr, const sid_excite_opts *o,
                            sid_excite_result *r, sid_error *err);

#endif
