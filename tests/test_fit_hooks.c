/* test_fit_hooks.c — sid_io_fit_run_hooked, the pipeline `sysid fit` runs through (pipeline/fit_run.c):
 * its progress (each phase begins, steps and ends, in order: one step per accepted iteration,
 * one per covariance window), its interrupt flag (read by the optimizer and by the
 * covariance), and its messages reaching the program's warning callback. Runs from tests/. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "diag.h"
#include "sid_io.h"

#define ROBOT "../data/pendulum/robot.json"
#define LOG "../data/pendulum/log.csv"
#define MAX_EVENTS 4096

typedef struct {
    int n;
    sid_io_progress ev[MAX_EVENTS];
    volatile int *stop;   /* set from the progress callback at iteration stop_at */
    int stop_at;
} events;

static void record(void *ctx, const sid_io_progress *p)
{
    events *e = ctx;
    if (e->n < MAX_EVENTS)
        e->ev[e->n++] = *p;
    if (e->stop && p->phase == SID_IO_PHASE_FIT && p->event == SID_IO_PROGRESS_STEP && p->step == e->stop_at)
        *e->stop = 2;   /* SIGINT's number, as the command's handler sets it */
}

typedef struct {
    int nwarn, nnote;
    char warn[512], note[1024], note2[512];   /* the first of each, and the second note */
} msgs;

static void collect(void *ctx, sid_io_msg_kind kind, const char *msg)
{
    msgs *m = ctx;
    if (kind == SID_IO_NOTE && m->nnote == 1)
        snprintf(m->note2, sizeof m->note2, "%s", msg);
    if (kind == SID_IO_NOTE && m->nnote++ == 0)
        snprintf(m->note, sizeof m->note, "%s", msg);
    if (kind == SID_IO_WARNING && m->nwarn++ == 0)
        snprintf(m->warn, sizeof m->warn, "%s", msg);
}

typedef struct {
    sid_io_robot *r;
    sid_io_spec *s;
    sid_io_logs *l;
} inputs;

/* The pendulum with its viscous friction free, as tests/test_io_api.c fits it. */
static void load(inputs *in)
{
    sid_error err = { 0 };
    const char *log = LOG;
    ck_assert_msg(!sid_io_robot_load(ROBOT, &in->r, &err) && !sid_io_spec_load(NULL, &in->s, &err) &&
                  !sid_io_spec_set(in->s, "--free-only", "joints.hinge.friction.viscous", &err) &&
                  !sid_io_logs_load(in->r, in->s, 1, &log, &in->l, &err), "%s", err.msg);
}

static void unload(inputs *in)
{
    sid_io_logs_free(in->l);
    sid_io_spec_free(in->s);
    sid_io_robot_free(in->r);
}

/* Events of phase ph from index *k on: BEGIN, STEPs, END; returns the number of steps. */
static int phase(const events *e, int *k, sid_io_phase ph)
{
    ck_assert_int_lt(*k, e->n);
    ck_assert_int_eq(e->ev[*k].phase, ph);
    ck_assert_int_eq(e->ev[*k].event, SID_IO_PROGRESS_BEGIN);
    int steps = 0;
    double last = 0;
    for ((*k)++; *k < e->n && e->ev[*k].event == SID_IO_PROGRESS_STEP; (*k)++) {
        const sid_io_progress *p = &e->ev[*k];
        ck_assert_int_eq(p->phase, ph);
        ck_assert_int_eq(p->step, ++steps);   /* iterations and windows are counted from 1, in order */
        ck_assert_msg(p->seconds >= last, "time went back: %g after %g", p->seconds, last);
        last = p->seconds;
        if (ph == SID_IO_PHASE_FIT)
            ck_assert_msg(isfinite(p->loss) && p->loss >= 0 && isfinite(p->gnorm), "loss %g |grad| %g", p->loss,
                          p->gnorm);
    }
    ck_assert_int_lt(*k, e->n);
    ck_assert_int_eq(e->ev[*k].phase, ph);
    ck_assert_int_eq(e->ev[*k].event, SID_IO_PROGRESS_END);
    (*k)++;
    return steps;
}

START_TEST(test_progress_in_order)
{
    inputs in;
    load(&in);
    static events e;
    memset(&e, 0, sizeof e);
    msgs m = { 0 };
    sid_io_set_warn(collect, &m);
    const sid_io_fit_hooks hooks = { record, &e, NULL };
    sid_io_fit *f;
    sid_error err = { 0 };
    ck_assert_msg(!sid_io_fit_run_hooked(in.r, in.s, in.l, &hooks, &f, &err), "%s", err.msg);
    const sid_fit_result *fr = sid_io_fit_result(f);
    int k = 0;
    /* one step per accepted iteration (core's sid_fit_opts.progress), the last at the count */
    ck_assert_int_eq(phase(&e, &k, SID_IO_PHASE_FIT), fr->iterations);
    ck_assert_int_gt(fr->iterations, 0);
    /* the covariance: one step per window, each saying how many there are (the pendulum's
     * 5 s log in the default 0.5 s windows: 10, as `sysid fit` says) */
    const int kc = k;
    ck_assert_int_eq(phase(&e, &k, SID_IO_PHASE_COVARIANCE), 10);
    for (int j = kc + 1; j < k - 1; j++)
        ck_assert_int_eq(e.ev[j].total, 10);
    ck_assert_int_eq(k, e.n);   /* nothing after the covariance ends */
    ck_assert(isfinite(sid_io_fit_stderr(f, 0)));
    /* what `sysid fit` prints before fitting reaches the program as notes: the step, the fit */
    ck_assert_msg(strstr(m.note, "step: ") == m.note, "%s", m.note);
    ck_assert_msg(strstr(m.note2, "fitting 1 parameter of " ROBOT " to 1 log (10 windows") == m.note2, "%s", m.note2);
    const int i = sid_io_fit_free_param(f, 0);
    const double fitted = sid_io_fit_theta(f)[i];
    sid_io_fit_free(f);
    unload(&in);

    /* the hooks only watch: without them, the same fit to the bit */
    load(&in);
    ck_assert_msg(!sid_io_fit_run(in.r, in.s, in.l, &f, &err), "%s", err.msg);
    ck_assert_msg(sid_io_fit_theta(f)[i] == fitted, "%.17g without hooks, %.17g with", sid_io_fit_theta(f)[i], fitted);
    sid_io_fit_free(f);
    unload(&in);
    cli_diag_install();
}
END_TEST

START_TEST(test_interrupt_before)
{
    /* a flag already set: the optimizer stops at its first evaluation and the covariance is
     * skipped, yet the fit succeeds with the best point (the nominal one) and says why */
    inputs in;
    load(&in);
    msgs m = { 0 };
    sid_io_set_warn(collect, &m);
    volatile int flag = 2;
    const sid_io_fit_hooks hooks = { NULL, NULL, &flag };
    sid_io_fit *f;
    sid_error err = { 0 };
    ck_assert_msg(!sid_io_fit_run_hooked(in.r, in.s, in.l, &hooks, &f, &err), "%s", err.msg);
    ck_assert_int_eq(sid_io_fit_result(f)->stop, SID_STOP_INTERRUPTED);
    ck_assert_int_eq(sid_io_fit_result(f)->iterations, 0);
    ck_assert(sid_io_fit_stderr(f, 0) == HUGE_VAL);
    ck_assert_int_ge(m.nwarn, 1);
    ck_assert_msg(strstr(m.warn, "covariance: ") == m.warn && strstr(m.warn, "interrupted"), "%s", m.warn);
    sid_io_fit_free(f);
    unload(&in);
    cli_diag_install();
}
END_TEST

START_TEST(test_interrupt_during)
{
    /* set from the progress callback at the second iteration: the optimizer stops at its next
     * evaluation, so at most one more iteration is accepted */
    inputs in;
    load(&in);
    static events e;
    memset(&e, 0, sizeof e);
    volatile int flag = 0;
    e.stop = &flag;
    e.stop_at = 2;
    sid_io_set_warn(NULL, NULL);
    const sid_io_fit_hooks hooks = { record, &e, &flag };
    sid_io_fit *f;
    sid_error err = { 0 };
    ck_assert_msg(!sid_io_fit_run_hooked(in.r, in.s, in.l, &hooks, &f, &err), "%s", err.msg);
    const sid_fit_result *fr = sid_io_fit_result(f);
    ck_assert_int_eq(fr->stop, SID_STOP_INTERRUPTED);
    ck_assert_msg(fr->iterations >= 2 && fr->iterations <= 3, "%d iterations", fr->iterations);
    ck_assert(fr->loss <= fr->loss0);
    ck_assert(sid_io_fit_stderr(f, 0) == HUGE_VAL);
    int k = 0;
    ck_assert_int_eq(phase(&e, &k, SID_IO_PHASE_FIT), fr->iterations);
    ck_assert_int_eq(phase(&e, &k, SID_IO_PHASE_COVARIANCE), 0);   /* stopped before its first window */
    sid_io_fit_free(f);
    unload(&in);
    cli_diag_install();
}
END_TEST

Suite *fit_hooks_suite(void);
Suite *fit_hooks_suite(void)
{
    Suite *s = suite_create("fit_hooks");
    TCase *tc = tcase_create("hooks");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_progress_in_order);
    tcase_add_test(tc, test_interrupt_before);
    tcase_add_test(tc, test_interrupt_during);
    suite_add_tcase(s, tc);
    return s;
}
