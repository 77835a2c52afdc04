/* fit_run.h — the fit's pipeline, one copy for `sysid fit` (cli/cmd_fit.c) and the library's
 * sid_io_fit_run: select the free parameters, choose the simulation step, make the problems,
 * fit (core's sid_fit), the covariance, the predictions from the logged start states, the
 * gradient at the result and the derived quantities, into a report (report.h) ready but for
 * what only the caller knows (the inputs' digests, the gates, the flags, the total time).
 *
 * Its messages go out through sid_io_warn and sid_io_note in the order `sysid fit` prints
 * them; its progress (fit iterations, covariance windows) through the hooks (sid_io.h).
 * The caller loads the robot (with fitspec_apply_model) and the logs, and writes the files.
 */
#ifndef IO_FIT_RUN_H
#define IO_FIT_RUN_H

#include <cjson/cJSON.h>

#include "fitspec.h"
#include "report.h"
#include "sid_io.h"

typedef struct {
    const char *robot;               /* its path, for messages */
    sid_model *m;
    const double *theta0;            /* nominal parameters */
    const cJSON *doc;                /* the robot's robot.json text (derived quantities) */
    fitspec *spec;                   /* records the choices made (start velocities, step) */
    int nlog, nval;                  /* logs to fit, then --validate logs */
    sid_traj *const *tr;             /* (nlog + nval), borrowed: must outlive the fit */
    const char *const *path;         /* (nlog + nval) their paths */
    const sid_io_fit_hooks *hooks;   /* NULL: none */
} fit_run_input;

struct sid_io_fit {
    const sid_io_robot *r;           /* sid_io_fit_run's robot (sid_io_fit_write_robot); else NULL */
    fitspec_selection sel;
    sid_problem *pfit;               /* the fit's problem */
    sid_problem *ppred, *pval;       /* predictions from logged start states: fitted, --validate logs (NULL: none) */
    double *theta, *x0;              /* fitted parameters; fitted window start states (NULL: logged) */
    double *grad;                    /* d loss / d theta at the result; NULL: unknown */
    sid_fit_result fr;
    sid_covariance_result *cov;      /* NULL: not computed */
    int ntrace, cap;                 /* accepted iterations: loss and |gradient| (the report's trace) */
    double *trace_loss, *trace_gnorm;
    derived_set derived;
    const sid_io_fit_hooks *hooks;
    report_input *log_in;            /* sid_io_fit_run's digests of the logs (the report's log); else NULL */
    report rep;                      /* all but robot, config, log, val, gates, flags and seconds_total */
};

/* Run the pipeline on in; *out is the fit (sid_io_fit_free), NULL on failure with err set and
 * the status returned. A non-finite fitted value is a failure (SID_ERR_NONFINITE). */
sid_status fit_run(const fit_run_input *in, sid_io_fit **out, sid_error *err);

#endif
