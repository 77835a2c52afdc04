/* fitspec.h — fit specifications (docs/formats.md "Fit specification") and the flags that
 * override them.
 *
 *   { "free": ["links.*.mass", "joints.*.friction.*"],
 *     "bounds": { "links.*.mass": { "scale": [0.2, 5] }, "joints.*.friction.*": [0, 10] },
 *     "window": 0.5, "substeps": 1, "max_dt": 0.001, "integrator": "euler",
 *     "weights": { "q": 1, "qd": 0.1 },
 *     "optimizer": { "method": "lbfgs", "max_iter": 1000, "ftol_rel": 1e-10 },
 *     "columns": { "t": "time", "q.*": "pos_{joint}" },
 *     "units": { "t": "ms", "q.*": "deg" }, "scale": { "u.*": 0.5 }, "start": "fitted",
 *     "smoothing": { "sigma": 0.05, "pairs": 16, "seed": 1 }, "contact_model": "hard" }
 *
 * "window": "auto" (or --window auto) lets `sysid fit` choose the window by cross-validation
 * (window_select.h), which records the choice here; other commands refuse it.
 * Every key is optional; absent ones keep the defaults of fitspec_init (those above, with
 * "free" empty, no bounds, no max_dt, no smoothing, the robot's own contact model).
 * "substeps" splits every log interval into that many simulation steps; "max_dt" also
 * splits any interval longer than it. "units" converts a logical column's values (units.h),
 * "scale" multiplies them (after the "columns" renaming; keys may be patterns, colpattern.h). "start" says where each window starts: "logged" (the logged
 * state) or "fitted" (the start states are unknowns fitted with the parameters: multiple
 * shooting); unset, each command picks its own default. "smoothing" makes `sysid fit`
 * minimise the randomized-smoothing estimate of the loss (see sid_fit_opts; sigma and pairs
 * are required, seed defaults to 1). "contact_model" overrides the robot's contact.model
 * (fitspec_apply_model). "optimizer" may also be just the method's name ("lm" or "lbfgs").
 * Keys starting with '_' and "description" are for people; other
 * unknown keys are ignored with a warning.
 *
 * Globs are core's sid_glob_match: '*' also crosses dots, '?' is one character, '[' and ']'
 * match themselves, so "links.*.com[2]" selects every link's z COM. A parameter takes its bounds from the
 * first bounds entry that matches it (command-line --bounds come before the file's);
 * without one it is bounded by its kind's range only (a friction >= 0). --free adds to the
 * file's list; the first --free-only replaces it. "fixed" / --fix hold parameters fixed.
 * Without "free" or --free, a fit frees the parameters the table marks fit_default (masses,
 * armature, viscous and Coulomb friction, motor constants) wherever they move something,
 * except the first motor's kt, or servo's kp (a velocity servo's kd) (fitspec_selection.gauge): from
 * motion alone, the torque scale of
 * the whole robot cannot be told from the masses.
 */
#ifndef CLI_FITSPEC_H
#define CLI_FITSPEC_H

#include "sid.h"
#include "traj_csv.h"

#define FITSPEC_ORIGIN 160
#define FITSPEC_MAX_WINDOWS 8    /* window lengths "window": "auto" tries at most */

/* "start": unset (the command's default), the logged states, or fitted ones. */
enum { FITSPEC_START_UNSET = -1, FITSPEC_START_LOGGED = 0, FITSPEC_START_FITTED = 1 };

typedef struct {
    char *glob;
    int relative;                  /* 1: lo, hi multiply the nominal value */
    double lo, hi;
    char origin[FITSPEC_ORIGIN];   /* e.g. cfg.json: bounds["links.*.mass"] */
} fitspec_bound;

typedef struct {
    char *glob;
    char origin[FITSPEC_ORIGIN];
} fitspec_glob;

typedef struct {
    int nfree;
    fitspec_glob *free;            /* globs of the free parameters */
    int free_given;                /* "free" or a --free flag was given; else the default set */
    int nfixed;
    fitspec_glob *fixed;           /* globs held fixed even where a free glob (or the default) matches */
    int nbound;
    fitspec_bound *bound;          /* first match wins */
    double window;                 /* [s] per window; 0: one window over the whole log */
    int window_auto;               /* "window": "auto": fit_run chooses it (window_select.h) */
    int nwindow_cand;              /* the choice made: candidates tried (0: none yet), */
    double window_cand[FITSPEC_MAX_WINDOWS];    /* their lengths [s] (0: one window per log) */
    double window_score[FITSPEC_MAX_WINDOWS];   /* and mean held-out losses (HUGE_VAL: a fit failed) */
    int window_tried[FITSPEC_MAX_WINDOWS];      /* 0: the search did not need it (score NAN) */
    int window_folds;              /* cross-validation folds */
    double window_eval;            /* [s] the held-out evaluation window (0: one per log) */
    double window_nominal;         /* the nominal parameters' mean held-out loss */
    sid_sim_opts sim;              /* integrator, substeps, max_dt */
    int integrator_given;          /* the spec or a flag named the integrator; else the robot's, or euler */
    double w_q, w_qd;              /* loss weights of position and velocity errors */
    double w_tau;                  /* torque sensor weight (weights.tau, --weight-tau); 0: not scored */
    int max_iter;
    double ftol_rel;
    double time_limit;             /* [s] of wall time; 0: none */
    sid_optimizer optimizer;       /* "optimizer": "lbfgs" (default) or "lm" */
    int threads;                   /* --threads: windows in parallel; 0: all cores (a flag only) */
    traj_colmap columns;           /* log column renaming and scales */
    int start;                     /* FITSPEC_START_*: window start states */
    int start_velocity_from_q;     /* "start_velocity": "positions" (1), "logged" (0), "auto" (-1, default) */
    double smoothing_sigma;        /* "smoothing": in the scaled coordinates of the fit */
    int smoothing_pairs;           /* 0: no smoothing (the adjoint gradient) */
    unsigned long smoothing_seed;  /* 1 unless given */
    int contact_model;             /* -1: as the robot says; else a sid_contact_model */
    char contact_origin[FITSPEC_ORIGIN];   /* where contact_model was set, for messages */
    /* bookkeeping for flags overriding the file */
    int free_flagged, nbound_flagged;
} fitspec;

/* Which parameters a spec frees for a model, with their bounds (-/+HUGE_VAL: none). */
typedef struct {
    int n;
    int *idx;                      /* (n) parameter indices, increasing */
    double *lo, *hi;               /* (n) */
    int gauge;                     /* the default set's first kt, held fixed as the unit of torque; -1: none */
} fitspec_selection;

void fitspec_init(fitspec *s);
void fitspec_free(fitspec *s);
/* Read the spec at path into s (over its current values). 0, or -1 with err set. */
int fitspec_load(fitspec *s, const char *path, sid_error *err);

/* Apply one flag over the file: --free GLOB, --bounds GLOB=LO:HI | GLOB=scale:A:B | JSON,
 * --window S|auto, --integrator euler|rk4, --substeps N, --max-dt S, --columns JSON|k=v,...,
 * --units JSON|k=unit,..., --scale JSON|k=x,..., --max-iter N, --ftol-rel X, --time-limit S, --optimizer lbfgs|lm,
 * --start logged|fitted,
 * --smoothing SIGMA,PAIRS[,SEED] | off, --contact compliant|hard. 0, or -1 with err. */
int fitspec_apply_flag(fitspec *s, const char *flag, const char *value, sid_error *err);

/* The free parameters of m and their bounds around the nominal theta0. Errors: a free, fixed
 * or bounds glob that matches nothing, a relative bound on a zero nominal, a nominal outside
 * its bounds, no free parameter at all ("--free '*'" frees every one). */
int fitspec_select(const fitspec *s, const sid_model *m, const double *theta0,
                   fitspec_selection *sel, sid_error *err);
void fitspec_selection_free(fitspec_selection *sel);

/* Logged velocities farther than this (relative rms) from the positions' derivative are noise. */
#define FITSPEC_NOISY_VELOCITY 0.25
/* "start_velocity": "auto" decided on the logs: from positions if any log's velocity column
 * differs from the positions' derivative by more than FITSPEC_NOISY_VELOCITY (says so on
 * stderr); else logged. Does nothing when the spec or a flag chose. */
void fitspec_choose_start_velocity(fitspec *s, const sid_model *m, sid_traj *const *tr, const char *const *path,
                                   int n);
/* The spec's loss options (window, weights, integrator, substeps, max_dt, and
 * estimate_start when "start" is "fitted") for core. */
void fitspec_loss_opts(const fitspec *s, sid_loss_opts *o);
/* The spec's optimizer options with sel's free parameters and bounds (borrowed: sel must
 * outlive o); progress, ctx and interrupt are left NULL for the caller. */
void fitspec_fit_opts(const fitspec *s, const fitspec_selection *sel, sid_fit_opts *o);
/* Spec and model settled together: "contact_model" overrides the robot's, with a warning naming
 * robot (its path) when it has no contact and so nothing to override; a spec that names no
 * integrator takes the robot's own (its file's "integrator", an MJCF's <option integrator>). */
void fitspec_apply_model(fitspec *s, sid_model *m, const char *robot);

#endif
