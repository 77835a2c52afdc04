/* window_select.h — "window": "auto": the window length chosen by cross-validation on the
 * fitted logs alone (docs/formats.md "Choosing the window").
 *
 * Candidates: 0.1, 0.2, 0.5, 1 and 2 s that are at least WINDOW_MIN_SAMPLES sample intervals
 * and at most the shortest training piece, plus 0 (one window per piece) when no piece is
 * longer than WINDOW_FREE_RUN_MAX. Two folds: with two logs, leave one out; with more, log j in
 * fold j mod 2; with one log, its two halves, each held out in turn while the other is fitted.
 * Each (fold, candidate) is a fit with the spec's own options (optimizer, iterations, time limit
 * per fit, start states) from that fold's previous fit (its first from the nominal parameters:
 * a fit of another fold has seen this one's held-out pieces), so that each fold's fits after
 * its first start near their answer; its score is the loss of the held-out pieces at the fitted parameters under one fixed
 * protocol, the same for every candidate: positions only (weights q 1, qd 0), windows of the
 * longest candidate (0: one per piece) from logged start states, residuals scaled over the
 * held-out pieces — `sysid eval --window E` with those weights. The candidates are searched
 * from the middle one (0.5 s): longer ones while their mean score stays within a tie of the
 * lowest, then, if none beat the middle, shorter ones while each beats the lowest. The choice is
 * the longest candidate tried whose mean score over the folds is within WINDOW_TIE of the best
 * plus WINDOW_TIE_NOMINAL of the nominal parameters' held-out loss (differences that small are
 * convergence noise; a longer window is closer to open-loop use).
 */
#ifndef IO_WINDOW_SELECT_H
#define IO_WINDOW_SELECT_H

#include "fit_run.h"

#define WINDOW_MIN_SAMPLES 5       /* sample intervals per window at least */
#define WINDOW_FREE_RUN_MAX 5.0    /* [s] pieces at most this long may also be replayed whole */
#define WINDOW_FOLDS 2             /* folds: each fit sees half the data, a candidate costs about one fit */
#define WINDOW_BLOCKS 2            /* a single log's contiguous blocks */
#define WINDOW_TIE 0.01            /* scores within this of the best, relatively, */
#define WINDOW_TIE_NOMINAL 1e-6    /* plus this of the nominal held-out loss, are a tie */
#define WINDOW_FIT_ITER 200        /* iterations of a fold's fit at most */
#define WINDOW_FLAT 10.0           /* a fold's fit is flat when a span changes its chi-square by less (sid_fit_opts) */

/* Choose in->spec->window for the free parameters sel (in->spec->sim already chosen), recording
 * the candidates, scores and folds in the spec; says so through sid_io_note. Interrupted
 * (in->hooks->interrupt), it stops after the current fit with SID_ERR_INTERRUPTED. 0, or -1
 * with err set. */
int window_select(const fit_run_input *in, const fitspec_selection *sel, sid_error *err);

#endif
