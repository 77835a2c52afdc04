/* sid_io.h — libsysid's files: load a robot (robot.json, URDF or MJCF), its logs and a fit
 * spec, fit, and write the fitted robot and the report, as `sysid fit` does (docs/formats.md).
 *
 *   sid_io_robot *r; sid_io_spec *s; sid_io_logs *l; sid_io_fit *f; sid_error err = { 0 };
 *   if (sid_io_robot_load("robot.json", &r, &err) || sid_io_spec_load(NULL, &s, &err) ||
 *       sid_io_spec_set(s, "--free-only", "joints.*.friction.viscous", &err) ||
 *       sid_io_logs_load(r, s, 1, (const char *[]){ "log.csv" }, &l, &err) ||
 *       sid_io_fit_run(r, s, l, &f, &err))
 *       fprintf(stderr, "%s\n", err.msg);
 *
 * Every function that can fail returns SID_OK (0), or the status of the failure (as core's
 * functions do; SID_ERR_INPUT: a file's mistake; SID_ERR_NUMERIC and the like: the
 * simulation) with err (may be NULL) set: err.msg names the file and the line and column or
 * the JSON path, and what was expected ("robot.json: links[2].mass: expected a positive
 * number, got -1"). On failure the output pointer is NULL and no file was written.
 *
 * Warnings (an unknown key, a gap in a log, a fit's time limit or skipped covariance) and
 * notes (what a fit frees and fits, as `sysid fit` prints them) go to the callback
 * sid_io_set_warn installs; without one they are dropped. A fit's progress and its
 * interrupt flag are sid_io_fit_run_hooked's. Nothing here prints or exits. The library keeps global state
 * (that callback, the last URDF/MJCF import): call it from one thread at a time.
 * The core (the model, simulation and fit) is sid.h.
 */
#ifndef SID_IO_H
#define SID_IO_H

#ifdef __cplusplus
extern "C" {
#endif

#include "sid.h"

/* The release: SID_VERSION ("MAJOR.MINOR.PATCH") as numbers, and the loaded library's own. */
#define SID_VERSION_MAJOR 0
#define SID_VERSION_MINOR 1
#define SID_VERSION_PATCH 0
const char *sid_version(void);

/* ---- warnings ---------------------------------------------------------------------------- */

typedef enum {
    SID_IO_WARNING,   /* something in an input file is ignored or suspect */
    SID_IO_NOTE       /* a choice made for the user (sysid prints it without a prefix) */
} sid_io_msg_kind;

/* msg: one line without its newline, naming file:line or the JSON path; valid during the call. */
typedef void (*sid_io_warn_fn)(void *ctx, sid_io_msg_kind kind, const char *msg);
/* Install fn (NULL: drop every message); ctx is handed back to it. */
void sid_io_set_warn(sid_io_warn_fn fn, void *ctx);

/* ---- a robot ----------------------------------------------------------------------------- */

typedef struct sid_io_robot sid_io_robot;

/* Read path in any format (told by its content) into a model and its nominal parameters. */
sid_status sid_io_robot_load(const char *path, sid_io_robot **r, sid_error *err);
void sid_io_robot_free(sid_io_robot *r);
sid_model *sid_io_robot_model(const sid_io_robot *r);
/* The nominal parameters (sid_model_nparam of them), as the file gives them. */
const double *sid_io_robot_theta(const sid_io_robot *r);
int sid_io_robot_nparam(const sid_io_robot *r);
/* Parameter i's name ("joints.elbow.friction.viscous"), as specs and `sysid params` name it. */
const char *sid_io_robot_param_name(const sid_io_robot *r, int i);
/* Write the robot with parameters theta to path (robot.json, atomically; "-": stdout): the
 * file's own text with only the changed numbers rewritten. */
sid_status sid_io_robot_write(const sid_io_robot *r, const double *theta, const char *path, sid_error *err);

/* ---- a fit spec -------------------------------------------------------------------------- */

typedef struct sid_io_spec sid_io_spec;

/* The spec at path (docs/formats.md "Fit specification"), or the defaults of `sysid fit` (path NULL). */
sid_status sid_io_spec_load(const char *path, sid_io_spec **s, sid_error *err);
/* Apply a `sysid fit` flag over the file, as on the command line: "--free" GLOB, "--free-only",
 * "--fix", "--bounds", "--window", "--start", "--integrator", "--substeps", "--max-iter",
 * "--columns", "--units", "--scale", ... (`sysid fit --help`). */
sid_status sid_io_spec_set(sid_io_spec *s, const char *flag, const char *value, sid_error *err);
void sid_io_spec_free(sid_io_spec *s);

/* ---- logs -------------------------------------------------------------------------------- */

typedef struct sid_io_logs sid_io_logs;

/* Read n logs (CSV) for r's model, with s's column map, units and scales (s may be NULL). */
sid_status sid_io_logs_load(const sid_io_robot *r, const sid_io_spec *s, int n, const char *const *paths,
                     sid_io_logs **l, sid_error *err);
int sid_io_logs_count(const sid_io_logs *l);
const sid_traj *sid_io_logs_get(const sid_io_logs *l, int j);
void sid_io_logs_free(sid_io_logs *l);

/* ---- a fit ------------------------------------------------------------------------------- */

typedef struct sid_io_fit sid_io_fit;

/* Fit r's free parameters (s: which, bounds, windows, optimizer) to the logs l, then the
 * standard errors and the predictions from the logged start states: `sysid fit`'s own
 * sequence of calls (same inputs, same numbers, same messages). r's model takes s's "contact_model"; s records the choices made for
 * it (start velocities, simulation step). r, s and l must outlive f. */
sid_status sid_io_fit_run(sid_io_robot *r, sid_io_spec *s, const sid_io_logs *l, sid_io_fit **f, sid_error *err);

/* What a fit is doing, for a progress display: a phase begins, steps (the fit: once per
 * accepted iteration; the covariance: once per window), and ends. */
typedef enum { SID_IO_PHASE_FIT, SID_IO_PHASE_COVARIANCE } sid_io_phase;
typedef enum { SID_IO_PROGRESS_BEGIN, SID_IO_PROGRESS_STEP, SID_IO_PROGRESS_END } sid_io_progress_event;
typedef struct {
    sid_io_phase phase;
    sid_io_progress_event event;
    int step, total;        /* fit: the iteration, total 0; covariance: windows done, windows in all */
    double loss, gnorm;     /* fit steps: the loss and |gradient| (scaled coordinates) there */
    double seconds;         /* since the phase began */
} sid_io_progress;
/* p is valid during the call; the callback must not call back into the fit. */
typedef void (*sid_io_progress_fn)(void *ctx, const sid_io_progress *p);
typedef struct {
    sid_io_progress_fn progress;   /* NULL: none */
    void *ctx;                     /* handed back to progress */
    /* NULL, or a flag (a signal handler's) that stops the fit at its next evaluation and the
     * covariance at its next window when it becomes nonzero: the fit then returns SID_OK with
     * the best point so far (sid_fit_result.stop SID_STOP_INTERRUPTED) and no standard errors. */
    volatile const int *interrupt;
} sid_io_fit_hooks;
/* sid_io_fit_run with progress and an interrupt flag (hooks may be NULL: sid_io_fit_run). */
sid_status sid_io_fit_run_hooked(sid_io_robot *r, sid_io_spec *s, const sid_io_logs *l, const sid_io_fit_hooks *hooks,
                                 sid_io_fit **f, sid_error *err);
void sid_io_fit_free(sid_io_fit *f);
/* The fitted parameters (sid_io_robot_nparam of them; the fixed ones at their nominal values). */
const double *sid_io_fit_theta(const sid_io_fit *f);
/* Loss before and after, iterations, why it stopped (core's result). */
const sid_fit_result *sid_io_fit_result(const sid_io_fit *f);
/* The free parameters: their count, and the index (into theta) of the k-th. */
int sid_io_fit_nfree(const sid_io_fit *f);
int sid_io_fit_free_param(const sid_io_fit *f, int k);
/* The standard error of the k-th free parameter; HUGE_VAL when the data do not determine it
 * or it could not be computed. */
double sid_io_fit_stderr(const sid_io_fit *f, int k);
/* The fitted robot (sid_io_robot_write of the fitted theta) and the JSON report of `sysid fit
 * --report`, each written atomically ("-": stdout). */
sid_status sid_io_fit_write_robot(const sid_io_fit *f, const char *path, sid_error *err);
sid_status sid_io_fit_write_report(const sid_io_fit *f, const char *path, sid_error *err);

#ifdef __cplusplus
}
#endif

#endif
