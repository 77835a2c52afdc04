/* problem.h — what the files of the windowed loss share (internal to core/): the windows a
 * problem cuts its logs into, the per-thread lanes of scratch, the problem itself, and the
 * functions that pass a window from one stage to the next (problem.c sets up, problem_run.c sums,
 * rollout.c simulates and tapes, adjoint.c sweeps back, loss.c scores a sample, jacobian.c
 * and metrics.c evaluate windows for the covariance and the RMSE). */
#ifndef SID_PROBLEM_H
#define SID_PROBLEM_H

#include "measure.h"
#include "step.h"
#include "simulate.h"
#include "workspace.h"

/* Windows are independent, so they run on all cores. For results that do not depend on the
 * number of threads, windows are grouped into at most MAX_CHUNKS chunks fixed by the problem
 * alone; a chunk's windows add up in order into the chunk's own sums, and the chunks add up
 * in order at the end. MAX_CHUNKS bounds the per-chunk gradient buffers. */
#define MAX_CHUNKS 64

/* The scratch of one thread, carved from one buffer: workspace, checkpoints, tape and state buffers. */
typedef struct {
    void *buf;               /* the lane's one allocation */
    sid_workspace *ws;
    double *cp;              /* (max_cp x (nq + nv)) checkpoint states of the current window */
    double *tape;            /* ((max_seg_steps + 1) x stride) step states of one segment */
    int *tape_sample;        /* (cp_every + 1) tape index of each sample of the segment */
    double *x, *x1, *xbar, *xbar1;   /* (nq + nv) each */
    double *tau_buf;         /* torque sensor scratch (torque_sensor.h); NULL unless scored */
    double *ubk;             /* (nv) the command adjoint of one interval or sample (command_grad.c) */
} lane;

typedef struct {
    int log, k0, k1;   /* log and samples [k0, k1] it simulates */
    int ra, rb;        /* samples [ra, rb] that give residuals */
} window;

struct sid_problem {
    const sid_model *m;
    const sid_traj *const *logs;
    int nlog;
    sid_loss_opts o;
    const sid_step_variant *step;   /* the step of the model's contact model and o.sim.integrator */
    int nwin, nres, cp_every;
    int max_rows;            /* the most residual rows of a window (sid_problem_window_rows), stubs' too */
    window *win;
    double *sq, *sqd;        /* (nq), (nv) residual scales */
    int tau_on;              /* torque sensor residuals scored (torque_sensor.h) */
    double *stau;            /* (nv) their scales; NULL unless tau_on */
    int max_seg_steps, max_cp;
    int stride;              /* doubles per tape entry: the state and the step's record */
    int nlane, nchunk, chunk_windows;
    lane *lane;              /* (nlane) one per thread */
    double *chunk_sum;       /* (nchunk) loss sums */
    double *chunk_grad;      /* (nchunk x nparam) gradient sums */
    double *chunk_sse;       /* (nchunk x (nq + nv)) squared errors for the RMSE */
    sid_status *chunk_status;
    sid_error *chunk_err;
    sid_progress_fn progress;     /* sid_problem_set_progress: called by long passes (the covariance) */
    void *progress_ctx;
    sid_shard shard;              /* sid_problem_set_shard; shard.size 0: unsharded */
    int chunk_lo, chunk_hi;       /* the chunks computed here: [chunk_lo, chunk_hi) */
};

/* A log's summary (sid_log_summarize, log_summary.c): its samples, which columns it has, its
 * velocity noise and its place in its list of logs; then the running sums over the list's logs
 * up to and including it, in the order one pass over them all adds (so the last log's are the
 * residual scales' sums, the same bits whoever computes which log's); its tau columns: samples, samples with
 * qd, whether a log has tau columns (and pushes with them); q's sums and sums of squares (nqo
 * each), qd's (nvo each), per velocity coordinate whether a log has its tau column, the tau
 * sum of squares and count (nvo each). */
enum {
    SID_SUM_N, SID_SUM_HAS_QD, SID_SUM_HAS_TAU, SID_SUM_HAS_PUSH, SID_SUM_VEL_NOISE, SID_SUM_POS, SID_SUM_TAU_COLS,
    SID_SUM_RUN_N, SID_SUM_RUN_NQD, SID_SUM_RUN_TAU, SID_SUM_RUN_TAU_PUSH, SID_SUM_Q
};
/* A stub's summary; NULL for a loaded log. */
const double *sid_traj_summary_of(const sid_traj *tr);
/* sid_log_summarize but the velocity noise (0 unless tr is a stub): what a problem needs. */
void sid_log_sums(const sid_model *m, const sid_traj *tr, const double *prev, double *summary);

/* The step choice's windows when the loss has one per log (step_choice.c) [s]. */
#define SID_STEP_TEST_WINDOW 0.5

/* Where the backward pass puts the commands' cotangents (command_grad.c): window w's, for
 * samples first[w] .. k1 of its log, at buf + off[w] (nvo per sample). */
typedef struct {
    double *buf;
    const size_t *off;
    const int *first;
} sid_ubar_out;

/* The torque sensors' part of a problem (problem.c; their residuals: torque_sensor.h). */
/* Check the options and the model, set p->tau_on and the scales p->stau (nv) from the running
 * sums through the last log (its summary, problem.h); after the windows are cut, before the
 * lanes. SID_ERR_INPUT naming what is refused. */
sid_status sid_tau_setup(sid_problem *p, const double *last, sid_error *err);
/* Residual rows per sample of log tr (0 unless scored). */
int sid_tau_sample_rows(const sid_problem *p, const sid_traj *tr);
/* Doubles of a lane's tau scratch (0 unless scored). */
size_t sid_tau_lane_doubles(const sid_problem *p);

/* What a pass over the chunks is for: with grad, chunk_grad holds each chunk's gradient and,
 * with grad_x0, the start states' (nqo + nvo per window); with rmse, chunk_sse each chunk's
 * squared errors; with ub (grad too, no shard), every window's command cotangents. */
typedef struct {
    int grad;
    double *grad_x0;
    int rmse;
    const sid_ubar_out *ub;
} sid_run_wants;

/* Run the windows of every chunk from start states x0 (NULL: logged), chunks in parallel; each
 * chunk's sums start from zero. */
sid_status sid_problem_run_chunks(sid_problem *p, const double *theta, const double *x0, const sid_run_wants *want,
                                  sid_error *err);

/* With a shard (sid_problem_set_shard), fill the other processes' parts of buf: unit bytes per
 * chunk, or with by_window per window (chunk c's windows in order); without one, nothing. */
sid_status sid_problem_gather(const sid_problem *p, void *buf, size_t unit, int by_window, sid_error *err);
/* With a shard, after a pass: every chunk's status, and when one failed (*failed set) every
 * chunk's error, so that every process returns the same one. A chunk that ran out of memory
 * names the process that ran it ("rank R of N, chunk c: out of memory"), the machine to look
 * at; other failures (a trial point that diverges) keep one process's words, which the report
 * may quote. */
sid_status sid_problem_gather_status(sid_problem *p, int *failed, sid_error *err);

/* One logged sample as its residuals see it: the problem at theta, log tr, sample k, and the
 * thread's lane (its scratch). */
typedef struct {
    const sid_problem *p;
    lane *L;
    const double *theta;
    const sid_traj *tr;
    int k;
} sid_sample;

/* What a forward pass adds to: the loss sum, and where not NULL the squared raw errors of q,
 * qd and the torque readings (per coordinate). */
typedef struct {
    double *sum, *sse_q, *sse_qd, *sse_tau;
} sid_loss_sums;

/* A forward-mode pass's directions at a sample: ndir of them, the first nfree the parameters
 * idx[d]; thetadot (ndir x nparam; a delayed command's residual seeds its tangent, delay.h),
 * and the state's qdot (ndir x nq) and vdot (ndir x nv). */
typedef struct {
    int ndir, nfree;
    const int *idx;
    double *thetadot;
    const double *qdot, *vdot;
} sid_sample_dirs;

/* Residual rows as a sample writes them: r (n of them) and their tangent rows J (n x ndir). */
typedef struct {
    double *r, *J;
    int n;
} sid_rows;

/* Residual terms of the sample at simulated state x = (q, v): adds 1/2 sum w (delta / s)^2 to
 * sums->sum, squared raw errors to sse_q / sse_qd (if not NULL) and, with xbar, the seed
 * d(sum)/dx to xbar and d(sum)/d(offset) to thetabar. */
void sid_loss_residual(const sid_sample *smp, const double *x, const sid_loss_sums *sums, double *xbar,
                       double *thetabar);
/* Residuals of the sample in the order of sid_problem_window_jacobian, with their tangent rows:
 * r = sqrt(w) delta / s, rows J[r][d] = sqrt(w) / s (qdot + offsetdot, or vdot); out->n is set. */
void sid_loss_residual_rows(const sid_sample *smp, const double *x, const sid_sample_dirs *dirs, sid_rows *out);

/* The logged start of window w in its logged coordinates xo (nqo + nvo): q = logged q minus the
 * offsets, v = logged or smoothed qd. */
void sid_rollout_start_logged(const sid_problem *p, const double *theta, const window *w, double *xo);
/* The start state of window w (the whole state, nq + nv; backlash.h): x0w (nqo + nvo) when given, else the logged state (q = logged q minus the
 * offsets, v = logged or smoothed qd). */
void sid_rollout_start_state(const sid_problem *p, const double *theta, const window *w, const double *x0w, double *x);
/* One window's pass through a thread's lane: the problem at theta, window w and its start state
 * (x0w, nqo + nvo: fitted; NULL: logged). */
typedef struct {
    const sid_problem *p;
    lane *L;
    const double *theta;
    const window *w;
    const double *x0w;
} sid_window_pass;

/* What a backward pass accumulates: the gradient thetabar; with x0bar, the start state's (x0w
 * as given to the rollout); with ubar, the logged commands' (rows of nvo, row 0 the log's sample
 * ubar_k0: at most sid_delay_first_sample(w->k0), up to w->k1; command_grad.c). */
typedef struct {
    double *thetabar, *x0bar, *ubar;
    int ubar_k0;
} sid_window_bar;

/* Simulate samples [ka, kb] of the window from the state in L->x (overwritten with the state at
 * kb), adding the residuals of its samples to sums (if not NULL). With tape, record the state
 * before every step and L->tape_sample[k - ka] for each sample. */
sid_status sid_rollout_span(const sid_window_pass *wp, int ka, int kb, double *tape, const sid_loss_sums *sums,
                            sid_error *err);
/* The forward pass of the window: its residuals added to sums, a checkpoint at every segment
 * start in L->cp; with taped, a window of one segment is also taped. Returns the number of
 * segments in *nseg. */
sid_status sid_rollout_window(const sid_window_pass *wp, int taped, const sid_loss_sums *sums, int *nseg,
                              sid_error *err);
/* The backward pass of the window after sid_rollout_window (nseg segments): accumulates into bar. */
sid_status sid_adjoint_window(const sid_window_pass *wp, int nseg, const sid_window_bar *bar, sid_error *err);

#endif
