/* html_predict.h — the windowed predictions a report plots: for every log of a problem, what the
 * nominal and the fitted parameters predict at each sample the fit's windows score, from the
 * same start states (the problem's), with the windows' boundaries. */
#ifndef CLI_HTML_PREDICT_H
#define CLI_HTML_PREDICT_H

#include "sid.h"

typedef struct {
    const sid_traj *tr;
    const char *name;          /* the log's path */
    double *q[2], *v[2];       /* (n x nq), (n x nv) predicted: [0] nominal, [1] fitted; where win[k] >= 0 */
    int *win;                  /* (n) the window scoring sample k, -1: not scored */
    int nbound;
    double *bound;             /* (nbound) times where a window starts [s] */
    double *fn[3];             /* (n) total compliant contact normal force [N] of the nominal and the fitted
                                * predictions (where win[k] >= 0) and of the logged states under the fitted
                                * parameters (NULL without logged velocities); all NULL without compliant contact */
} html_logpred;

typedef struct {
    int nlog;
    html_logpred *log;
    int ok[2];                 /* the prediction of [0] nominal, [1] fitted did not diverge */
    char why[2][512];          /* else why */
    double *rmse_q[2], *rmse_qd[2];   /* (nq), (nv) over every scored sample of every log, as sid_problem_rmse */
    int has_qd;
} html_predset;

/* Predict every window of p (its logs tr[0..nlog-1], named name[]) at theta0 and theta. A
 * prediction that diverges is recorded (ok, why), not an error; errors are out of memory. */
sid_status html_predict(sid_problem *p, const double *theta0, const double *theta, const sid_traj *const *tr,
                        const char *const *name, int nlog, html_predset *out, sid_error *err);
void html_predict_free(html_predset *s);

#endif
