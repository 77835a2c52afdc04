/* bench.h — the pieces of `make bench` that its rows share (tests/bench/README.md).
 *
 * A cell is one thing to time: a function doing one run of work and the factor that turns
 * seconds per run into the unit printed (µs per step, ms per gradient). bench_measure times a
 * group of cells interleaved, repetition r of every cell before repetition r + 1 of any, so a
 * noisy moment of the machine hits ours and MuJoCo's alike; each cell reports the median of
 * its repetitions.
 *
 * A twin is one robot in both simulators: our model from robot.json and MuJoCo's from the
 * MJCF json2mjcf.py wrote for it, with our dofs mapped to MuJoCo's qpos/qvel addresses and
 * actuators by joint name (as tests/test_mujoco.c does).
 */
#ifndef BENCH_H
#define BENCH_H

#include <mujoco/mujoco.h>

#include "sid.h"

#define BENCH_MAXREP 9

/* ---- timing ------------------------------------------------------------------------------ */

typedef struct {
    void (*run)(void *ctx);   /* one run of the work */
    void *ctx;
    double scale;             /* printed value = seconds per run * scale */
    int once;                 /* 1: a single timed run, no warm-up, no repetition (very long work) */
    long iters;               /* runs per repetition, from the warm-up run */
    int nrep;
    double rep[BENCH_MAXREP];
    double median;
} bench_cell;

extern int bench_reps;          /* repetitions per cell (5; 3 with BENCH_QUICK) */
extern double bench_min_time;   /* seconds per repetition of a cell (0.3; 0.05 with BENCH_QUICK) */
extern volatile double bench_sink;   /* results go here so no work is optimised away */

/* BENCH_CPU=1: cells timed by the process's CPU time, for a machine other work loads
 * (single-threaded rows only); else the wall clock */
int bench_cpu_time(void);
double bench_now(void);   /* CLOCK_MONOTONIC (BENCH_CPU: CLOCK_PROCESS_CPUTIME_ID), seconds */
void bench_cell_init(bench_cell *c, void (*run)(void *), void *ctx, double scale);
void bench_measure(bench_cell *const *cells, int n);

/* ---- models and logs --------------------------------------------------------------------- */

typedef struct {
    char name[64];
    sid_robot_desc desc;
    sid_model *m;
    double *theta;
    int nv;
    double gain[SID_MAX_JOINTS];     /* joint torque per unit command (gear kt), 0 without motor */
    int prismatic[SID_MAX_JOINTS];
    /* MuJoCo twin (mm == NULL when the robot has none) */
    mjModel *mm;
    mjData *md;
    int qadr[SID_MAX_JOINTS], dadr[SID_MAX_JOINTS], act[SID_MAX_JOINTS];
} bench_robot;

/* Load robot.json (and MJCF xml if not NULL); exits with a message on failure. */
void bench_robot_load(bench_robot *r, const char *name, const char *json, const char *xml);
void bench_robot_free(bench_robot *r);

/* Command per dof at time t: a 10-tone multi-sine (0.2 to 2 Hz) of amplitude amp[k] (command
 * units), phases from a fixed seed; 0 for dofs without a motor. */
void bench_command(const bench_robot *r, const double *amp, double t, double *u);

/* A log of T seconds at 1 kHz: the commands above replayed by sid_simulate (euler) at the
 * parameters theta (NULL: nominal) from (q0, v0 = 0); exits on failure. */
sid_traj *bench_log_make(const bench_robot *r, const double *theta, const double *q0, const double *amp, double T);

/* Exit with "bench: what: message" when s is not SID_OK. */
void bench_check(sid_status s, const sid_error *err, const char *what);
void bench_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* Row 8: floating box with ground contact (bench_contact.c); row prints one table row. */
void bench_contact(void (*row)(int, const char *, const char *, const char *, const char *, const char *));

#endif
