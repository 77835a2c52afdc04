/* report.h — what `sysid fit` reports: the JSON report (--report, --json), the summary table
 * and the warnings on stderr.
 *
 * The report says what the data determine and what they do not: a parameter in a null
 * direction of the Jacobian has "identifiable": false and null (never a number) as its
 * standard error and interval; one at a bound or with a relative standard error above 50 %
 * is flagged. Every number is written exactly (numfmt); report_json fails rather than write
 * NaN or Inf. Wall-clock times are kept in one "timing" object, so that two runs on the same
 * inputs give the same report once it is dropped.
 */
#ifndef CLI_REPORT_H
#define CLI_REPORT_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "derived.h"
#include "fitspec.h"
#include "sha256.h"
#include "sid.h"

#define REPORT_POOR_REL_STDERR 0.5   /* relative standard error above which a value is "poorly determined" */
#define REPORT_AT_BOUND_REL 1e-6     /* a value this close (relative) to a bound is stuck there */
#define REPORT_NULL_COEF 0.1         /* parameters shown in a null direction */
#define REPORT_AT_BOUND_PUSH 1e-6    /* a bound "holds a value back" if one scale step beyond lowers the loss by this (relative) */
#define REPORT_LOSS_ROUNDING 1e-12   /* a loss below this times the nominal one is rounding error: nothing pushes */

/* An input file and its digest ("" when it cannot be hashed, e.g. standard input). */
typedef struct {
    const char *path;
    char sha256[SHA256_HEX];
    int samples;                     /* logs: rows; else 0 */
} report_input;

/* Predictions from the logged start states, before and after the fit, on a set of logs. */
typedef struct {
    int present;                     /* 0: no such set (no --validate) */
    int has_qd;                      /* some log has velocities */
    int ok[2];                       /* [0] before, [1] after: computed (did not diverge) */
    double loss[2];
    double *rmse_q[2], *rmse_qd[2];  /* (nq), (nv): per coordinate [rad, m or 1], [rad/s or m/s] */
    int has_tau;                     /* torque sensor readings are scored (weight_tau > 0) */
    double *rmse_tau[2];             /* (nv) their RMSE [N*m or N], 0 where a coordinate has none */
} report_prediction;

/* Everything a report shows; all borrowed. */
typedef struct {
    const sid_model *m;
    const fitspec *spec;
    const fitspec_selection *sel;    /* free parameters and bounds */
    int estimate_start;
    int nwindows;
    report_input robot, config;      /* config.path NULL: no -c */
    int nlog, nval;
    const report_input *log, *val;
    const double *theta0, *theta;    /* nominal and fitted (nparam) */
    const sid_fit_result *fit;
    const sid_covariance_result *cov;   /* NULL if it could not be computed */
    report_prediction pred_fit, pred_val;
    int has_max_rmse, has_max_loss;
    double max_rmse, max_loss;       /* the --max-rmse and --max-loss gates */
    double seconds_total, seconds_cov;
    const char *cov_skipped;       /* why cov is NULL ("interrupted", "failed"), or NULL */
    const derived_set *derived;    /* combinations shown with the parameters; NULL: none */
    const double *grad;            /* (nparam) d loss / d theta at the fitted point; NULL: unknown */
    sid_step_choice step;            /* the simulation step used, and how it was chosen */
    /* what `sysid report` needs to rebuild the page (cmd_report.c) and the page shows */
    int nflag;                       /* the command line's fit-spec flags, in order (options.h) */
    const char *const *flag, *const *flag_value;
    int ntrace;                      /* accepted iterations recorded */
    const double *trace_loss, *trace_gnorm;   /* (ntrace) loss and |gradient| (scaled) per iteration */
} report;

#define REPORT_CORRELATION_MAX 64    /* "identifiability.correlation" for at most this many free parameters */

/* Classification of free parameter k (index into sel). */
typedef struct {
    int identifiable;                /* -1: unknown (no covariance) */
    int at_bound;                    /* -1 lower, +1 upper, 0 neither */
    int poor;                        /* relative standard error (the shown one) > REPORT_POOR_REL_STDERR */
    double stderr_;                  /* HUGE_VAL when not identifiable or unknown */
    double shown;                    /* the standard error the table shows: the robust one where the
                                      * residuals say the model does not fit (report_robust_shown) */
} report_param;

void report_param_classify(const report *r, int k, report_param *out);
/* (x - x0) / x0 over the signed nominal x0 != 0: a negative quantity's change of magnitude
 * (com[2] -0.56 -> -0.50 is -10 %), as the report's relative_change and the table's change. */
double report_relative_change(double x, double x0);
/* The largest per-coordinate q RMSE after the fit over the fit and validation logs; HUGE_VAL if
 * a prediction diverged. */
double report_worst_rmse(const report *r);
/* Does the table show the robust (sandwich) intervals: the diagnostics say model mismatch? */
int report_robust_shown(const report *r);
/* Do the --max-rmse and --max-loss gates pass? */
int report_gates_pass(const report *r);

/* The report as a JSON object; NULL with err set (SID_ERR_NONFINITE naming the field) if a
 * number is not finite, or SID_ERR_NOMEM. */
cJSON *report_json(const report *r, sid_error *err);
/* The summary table for people (stderr). */
void report_table(FILE *f, const report *r);
/* One warning line (cli_warn) per unidentifiable combination, parameter at a bound and
 * poorly determined parameter. */
void report_warnings(const report *r);

#endif
