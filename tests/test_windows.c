/* test_windows.c — the fixed window grid (problem.c, docs/formats.md "Windows"): window i of a log
 * covers (t0 + iW, t0 + (i+1)W], a sample on a boundary closes the window before it, the
 * next window starts from it, a trailing window covering less than W/2 is dropped with its
 * samples unscored, and boundaries do not drift over 1000 windows when W is no multiple of
 * the sample interval. Logs with known times; the states play no part. */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "test_util.h"

Suite *windows_suite(void);

typedef struct {
    sid_model *m;
    double *theta;
    sid_traj *tr;
    sid_problem *p;
} grid;

/* A one-joint robot and a log with times t[0..n-1]. */
static void grid_make(grid *g, const double *t, int n, double window, int estimate_start)
{
    sid_robot_desc *d = tu_random_robot(3, 1, 0);
    sid_error err = {0};
    ck_assert_msg(sid_model_create(&g->m, &g->theta, d, &err) == SID_OK, "%s", err.msg);
    tu_desc_free(d);
    g->tr = sid_traj_create(n, sid_model_nq(g->m), sid_model_nv(g->m), 1);
    for (int k = 0; k < n; k++) g->tr->t[k] = t[k];
    sid_loss_opts o;
    sid_loss_opts_defaults(&o);
    o.window = window;
    o.estimate_start = estimate_start;
    o.threads = 1;
    ck_assert_msg(sid_problem_create(&g->p, g->m, (const sid_traj *const *)&g->tr, 1, &o, &err) == SID_OK, "%s",
                  err.msg);
}

static void grid_free(grid *g)
{
    sid_problem_free(g->p);
    sid_traj_free(g->tr);
    sid_free(g->theta);
    sid_model_free(g->m);
}

static void window_is(const grid *g, int w, int start, int first, int last)
{
    int l, k0, a, b;
    sid_problem_window_samples(g->p, w, &l, &k0, &a, &b);
    ck_assert_msg(l == 0 && k0 == start && a == first && b == last,
                  "window %d: starts at %d, scores [%d, %d]; expected %d, [%d, %d]", w, k0, a, b, start, first, last);
}

/* Residual rows are q and qd of every scored sample: the count says which were scored. */
static void scored_samples_are(const grid *g, int n)
{
    const int per = sid_model_nq(g->m) + sid_model_nv(g->m);
    ck_assert_int_eq(sid_problem_nresiduals(g->p), n * per);
}

/* 100 Hz, t = 0.01 k, 0.1 s windows: samples 10 and 20 (on boundaries) close windows 0 and 1.
 * A log ending at 0.24 s has a trailing window covering 0.04 s < 0.05 s: dropped; at 0.25 s
 * it covers exactly half: kept. The same for times made by repeated addition, and after t0. */
START_TEST(boundaries_membership_and_trailing_window)
{
    for (int variant = 0; variant < 3; variant++)
        for (int n = 25; n <= 26; n++) {
            double t[26], acc = variant == 2 ? 1000.3 : 0;
            for (int k = 0; k < n; k++) {
                t[k] = variant == 0 ? 0.01 * k : acc;
                acc += 0.01;
            }
            grid g;
            grid_make(&g, t, n, 0.1, 0);
            ck_assert_int_eq(sid_problem_nwindows(g.p), n == 25 ? 2 : 3);
            window_is(&g, 0, 0, 1, 10);
            window_is(&g, 1, 10, 11, 20);
            if (n == 26) window_is(&g, 2, 20, 21, 25);
            scored_samples_are(&g, n == 25 ? 20 : 25);
            grid_free(&g);
        }
}
END_TEST

/* Fitted start states score each window's start sample instead of its end, the last window
 * its end too; the dropped trailing window's samples stay unscored. */
START_TEST(fitted_starts_score_every_sample_once)
{
    double t[25];
    for (int k = 0; k < 25; k++) t[k] = 0.01 * k;
    grid g;
    grid_make(&g, t, 25, 0.1, 1);
    ck_assert_int_eq(sid_problem_nwindows(g.p), 2);
    window_is(&g, 0, 0, 0, 9);
    window_is(&g, 1, 10, 10, 20);
    scored_samples_are(&g, 21);
    grid_free(&g);
}
END_TEST

/* 500 Hz, W = 25 ms (12.5 intervals): 1000 windows alternate 12 and 13 samples, window i
 * ending at the last sample at or before 0.025 (i + 1), every second one on a boundary.
 * Chained windows would end every 12 samples and be 250 samples (0.5 s) behind by the end.
 * Trailing parts of 12 ms (dropped) and 14 ms (kept). */
START_TEST(no_drift_over_1000_windows)
{
    const int base = 12501;
    double *t = malloc(sizeof(double) * (size_t)(base + 7));
    for (int k = 0; k < base + 7; k++) t[k] = 0.002 * k;
    for (int extra = 0; extra <= 7; extra += 6) {
        const int n = base + extra;   /* extra 6: ends at 25.012 s; 7: 25.014 s */
        grid g;
        grid_make(&g, t, n, 0.025, 0);
        const int nwin = sid_problem_nwindows(g.p);
        ck_assert_int_eq(nwin, extra == 7 ? 1001 : 1000);
        int prev = 0;
        for (int i = 0; i < 1000; i++) {
            const int last = (int)floor(12.5 * (i + 1));
            window_is(&g, i, prev, prev + 1, last);
            prev = last;
        }
        ck_assert_int_eq(prev, base - 1);
        if (extra == 7) window_is(&g, 1000, base - 1, base, n - 1);
        scored_samples_are(&g, extra == 7 ? n - 1 : base - 1);
        grid_free(&g);
    }
    free(t);
}
END_TEST

/* Jittered times (+-40 % of the interval): every window scores exactly the samples in its
 * grid interval and starts from the last sample at or before it. */
START_TEST(jittered_samples_belong_to_their_grid_interval)
{
    const int n = 5000;
    const double dt = 0.002, W = 0.1, t0 = 0.37;
    double *t = malloc(sizeof(double) * (size_t)n);
    unsigned s = 11;
    for (int k = 0; k < n; k++) t[k] = t0 + dt * k + (k ? tu_uniform(&s, -0.4, 0.4) * dt : 0);
    grid g;
    grid_make(&g, t, n, W, 0);
    const int nwin = sid_problem_nwindows(g.p);
    ck_assert_int_eq(nwin, (int)floor((t[n - 1] - t0) / W + 0.5));
    for (int w = 0; w < nwin; w++) {
        int l, k0, a, b;
        sid_problem_window_samples(g.p, w, &l, &k0, &a, &b);
        ck_assert_int_eq(a, k0 + 1);
        ck_assert_msg(t[k0] - t0 <= w * W, "window %d starts at %.9g", w, t[k0]);
        ck_assert_msg(t[a] - t0 > w * W && t[b] - t0 <= (w + 1) * W, "window %d: [%.9g, %.9g]", w, t[a], t[b]);
        ck_assert_msg(b == n - 1 || t[b + 1] - t0 > (w + 1) * W, "window %d ends early", w);
    }
    grid_free(&g);
    free(t);
}
END_TEST

/* A gap longer than a window leaves empty windows out; the next starts from the last sample
 * before the gap. A log shorter than W/2 keeps its only window. */
START_TEST(gaps_and_short_logs)
{
    double t[16];
    for (int k = 0; k <= 10; k++) t[k] = 0.01 * k;
    for (int k = 11; k < 16; k++) t[k] = 0.35 + 0.01 * (k - 11);   /* 0.35 .. 0.39 */
    grid g;
    grid_make(&g, t, 16, 0.1, 0);
    ck_assert_int_eq(sid_problem_nwindows(g.p), 2);
    window_is(&g, 0, 0, 1, 10);
    window_is(&g, 1, 10, 11, 15);
    grid_free(&g);
    grid_make(&g, t, 3, 0.5, 0);
    ck_assert_int_eq(sid_problem_nwindows(g.p), 1);
    window_is(&g, 0, 0, 1, 2);
    grid_free(&g);
}
END_TEST

Suite *windows_suite(void)
{
    Suite *s = suite_create("windows");
    TCase *tc = tcase_create("grid");
    tcase_add_test(tc, boundaries_membership_and_trailing_window);
    tcase_add_test(tc, fitted_starts_score_every_sample_once);
    tcase_add_test(tc, no_drift_over_1000_windows);
    tcase_add_test(tc, jittered_samples_belong_to_their_grid_interval);
    tcase_add_test(tc, gaps_and_short_logs);
    suite_add_tcase(s, tc);
    return s;
}
