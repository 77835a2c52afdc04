/* test_hard_forward.c — hard contact's forward mode over windows (contact_hard_jvp.c through
 * jacobian.c): on a box thrown onto the ground (landing, sliding, spinning, corners joining
 * and leaving) and on the box with its swinging leg (a contact on a descendant link, motor
 * torques), the window Jacobian against central differences of the window's residuals, and
 * the dot-product test at window scale: sum over windows of J^T r / nres against the
 * adjoint's gradient of the loss, for the parameter and the start-state columns. (The step's
 * tangent, per contact mode, is checked in test_hard_contact.c.) */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "sid_internal.h"

Suite *hard_forward_suite(void);

enum { BOX, LEG, NSCENE };
static const char *const scene_name[NSCENE] = {"box thrown onto hard ground", "box and leg on hard ground"};

static double pscale(double th) { return fmax(fabs(th), 0.1); }

/* A log of n samples at 2 ms simulated with theta from the scene's start: the box 8 mm above
 * the ground, tilted, thrown sideways and spinning; the leg robot the same, its hip under
 * tu_synth_log's sine torques, the foot swung down to land with the box. */
static sid_traj *make_log(const sid_model *m, int scene, const double *theta, int n)
{
    sid_traj *tr = tu_synth_log(m, theta, n, 2e-3, 0.3, 5);
    const double qb[7] = {0, 0, 0.073, cos(0.03), sin(0.03), 0.4 * sin(0.03), 0}, vb[6] = {0.5, -0.2, -0.3, 0.3, -0.2, 2};
    memcpy(tr->q, qb, sizeof qb);
    memcpy(tr->qd, vb, sizeof vb);
    if (scene == LEG) {   /* slower, so that contacts stick too */
        const double vl[7] = {0.1, -0.05, -0.3, 0.1, -0.1, 0.3, -2};
        memcpy(tr->qd, vl, sizeof vl);
        tr->q[7] = 1.0;
    }
    tu_replay(m, theta, tr, NULL);
    return tr;
}

/* Inertial, ground, sphere and joint parameters. */
static int free_columns(const sid_model *m, int *idx)
{
    int mask[1024] = {0}, n = 0;
    const char *pat[] = {"*.mass", "*.com", "*.inertia", "contact.ground.friction", "contact.ground.height",
                         "contact.spheres.*", "joints.*.friction.*", "joints.*.origin.*", "joints.*.motor.*"};
    for (size_t k = 0; k < sizeof pat / sizeof *pat; k++) sid_model_param_match(m, pat[k], mask);
    for (int i = 0; i < m->nparam; i++)
        if (mask[i] && n < 48) idx[n++] = i;
    return n;
}

typedef struct {
    sid_model *m;
    double *theta, *x0;
    sid_traj *log;
    sid_problem *p;
    int nw, nx, nfree, idx[64];
} scene;

/* The scene's model, a log from masses 5 % heavier (so the residuals are not zero), and a
 * problem of 0.05 s windows with start states estimated. */
static void scene_make(scene *s, int which)
{
    s->m = tu_box_robot(which == LEG, SID_CONTACT_HARD, which == LEG ? 1.0 : 0.6, &s->theta);
    ck_assert_ptr_nonnull(s->m);
    const sid_model *m = s->m;
    s->nx = m->nq + m->nv;
    int mmask[1024] = {0};
    sid_model_param_match(m, "*.mass", mmask);
    double *truth = malloc(sizeof(double) * (size_t)m->nparam);
    for (int i = 0; i < m->nparam; i++) truth[i] = s->theta[i] * (mmask[i] ? 1.05 : 1);
    s->log = make_log(m, which, truth, 51);
    free(truth);
    sid_loss_opts o;
    sid_loss_opts_defaults(&o);
    o.window = 0.05;
    o.estimate_start = 1;
    o.threads = 1;
    sid_error err = {0};
    ck_assert_msg(sid_problem_create(&s->p, m, (const sid_traj *const *)&s->log, 1, &o, &err) == SID_OK, "%s", err.msg);
    s->nw = sid_problem_nwindows(s->p);
    s->x0 = malloc(sizeof(double) * (size_t)(s->nw * s->nx));
    sid_problem_start_states(s->p, s->theta, s->x0);
    s->nfree = free_columns(m, s->idx);
}

static void scene_free(scene *s)
{
    free(s->x0);
    sid_problem_free(s->p);
    sid_traj_free(s->log);
    sid_model_free(s->m);
    sid_free(s->theta);
}

/* The contacts the log's simulation met: solves with a sliding, a sticking contact; steps
 * whose contact set or modes changed. */
static void contact_census(const scene *s, int *nslide, int *nstick, int *changes)
{
    const sid_model *m = s->m;
    sid_workspace *ws = sid_workspace_create(m);
    const int nq = m->nq, nv = m->nv, n = s->log->n;
    double q[16], v[16], q1[16], v1[16], u[16] = {0};
    int prev[16], now[16];
    memcpy(q, s->log->q, sizeof(double) * (size_t)nq);
    memcpy(v, s->log->qd, sizeof(double) * (size_t)nv);
    for (int i = 0; i < m->nsphere; i++) prev[i] = -1;
    *nslide = *nstick = *changes = 0;
    sid_error err = {0};
    for (int k = 0; k + 1 < n; k++) {
        memcpy(u, s->log->u + (size_t)k * (size_t)nv, sizeof(double) * (size_t)nv);
        for (int j = 0; j < 2; j++) {   /* ~ the problem's step (2 ms samples) */
            ck_assert_msg(sid_step(m, s->theta, ws, SID_EULER, 1e-3, q, v, u, q1, v1, &err) == SID_OK, "%s", err.msg);
            memcpy(q, q1, sizeof(double) * (size_t)nq);
            memcpy(v, v1, sizeof(double) * (size_t)nv);
        }
        int sph[16], mode[16];
        const int nc = sid_hard_last(ws, sph, mode, NULL, NULL);
        for (int i = 0; i < m->nsphere; i++) now[i] = -1;
        for (int i = 0; i < nc; i++) {
            now[sph[i]] = mode[i];
            *nslide += mode[i] == SID_HARD_SLIDE, *nstick += mode[i] == SID_HARD_STICK;
        }
        *changes += memcmp(now, prev, sizeof(int) * (size_t)m->nsphere) != 0;
        memcpy(prev, now, sizeof now);
    }
    sid_workspace_free(ws);
}

/* Window 1's Jacobian (forward mode) against central differences of its residuals, column by
 * column, the best of steps 1e-3 .. 1e-10 of the variable's size: the residuals carry the
 * contact solve's noise (it stops at a relative residual of 1e-13, which the near-singular
 * Delassus matrix of redundant contacts amplifies: errors ~1e-9 / step seen), so most columns
 * need large steps; but a box on four coplanar corners moves its redundant impulses by
 * (beta / h) / r per metre of a sphere's offset (test_hard_contact.c), so the spheres'
 * columns are curved on a scale of ~1e-8 m and need tiny ones. A wrong or missing tangent
 * term fails every step (O(1)); tolerance 1e-4 of the column's largest entry (worst seen
 * 5e-6). */
static void window_check(int which)
{
    scene s;
    scene_make(&s, which);
    const sid_model *m = s.m;
    int nslide, nstick, changes;
    contact_census(&s, &nslide, &nstick, &changes);
    ck_assert_msg(nslide > 0 && nstick > 0 && changes > 2, "the log does not exercise the contacts: %d sliding, %d "
                  "sticking, %d changes", nslide, nstick, changes);
    ck_assert_ptr_null(sid_step_tangent_missing(sid_step_variant_find(m, SID_EULER, NULL), m, 0));
    const int w = s.nw > 1 ? 1 : 0, ncol = s.nfree + s.nx, rows = sid_problem_window_rows(s.p, w);
    double *x0w = s.x0 + (size_t)w * (size_t)s.nx;
    double *r = malloc(sizeof(double) * (size_t)rows), *J = malloc(sizeof(double) * (size_t)rows * (size_t)ncol);
    double *rp = malloc(sizeof(double) * (size_t)rows), *rm = malloc(sizeof(double) * (size_t)rows);
    double *Jd = malloc(sizeof(double) * (size_t)rows * (size_t)ncol);
    sid_error err = {0};
    ck_assert_msg(sid_problem_window_jacobian(s.p, s.theta, x0w, w, s.nfree, s.idx, r, J, &err) == SID_OK, "%s", err.msg);
    double jmax = 0, worst = 0;
    char where[200] = "none";
    for (int c = 0; c < ncol; c++)
        for (int i = 0; i < rows; i++)
            jmax = fmax(jmax, fabs(J[(size_t)i * (size_t)ncol + (size_t)c]) *
                                  pscale(c < s.nfree ? s.theta[s.idx[c]] : x0w[c - s.nfree]));
    for (int c = 0; c < ncol; c++) {
        double *z = c < s.nfree ? &s.theta[s.idx[c]] : &x0w[c - s.nfree];
        const double z0 = *z;
        double err_c = INFINITY;
        for (int t = 0; t < 8 && !(err_c < 1e-6); t++) {
            const double e = pow(10, -3 - t) * pscale(z0);
            *z = z0 + e;
            ck_assert_msg(sid_problem_window_jacobian(s.p, s.theta, x0w, w, 0, s.idx, rp, Jd, &err) == SID_OK, "%s", err.msg);
            *z = z0 - e;
            ck_assert_msg(sid_problem_window_jacobian(s.p, s.theta, x0w, w, 0, s.idx, rm, Jd, &err) == SID_OK, "%s", err.msg);
            *z = z0;
            /* a column whose effect is below 1e-7 of the largest column's counts as zero */
            double big = 1e-7 * jmax / pscale(z0), diff = 0;
            for (int i = 0; i < rows; i++) {
                const double an = J[(size_t)i * (size_t)ncol + (size_t)c], num = (rp[i] - rm[i]) / (2 * e);
                big = fmax(big, fmax(fabs(an), fabs(num)));
                diff = fmax(diff, fabs(an - num));
            }
            err_c = fmin(err_c, diff / big);
        }
        if (err_c > worst) {
            worst = err_c;
            if (c < s.nfree) snprintf(where, sizeof where, "%s", m->param[s.idx[c]].name);
            else snprintf(where, sizeof where, "start state [%d]", c - s.nfree);
        }
    }
    fprintf(stderr, "hard forward: %s (%d sliding, %d sticking contact-steps, %d changes): window Jacobian (%d x %d) "
            "vs central differences %.2e at %s\n", scene_name[which], nslide, nstick, changes, rows, ncol, worst, where);
    ck_assert_msg(worst < 1e-4, "window Jacobian vs central differences: %g at %s", worst, where);
    free(r), free(J), free(rp), free(rm), free(Jd);
    scene_free(&s);
}

START_TEST(window_jacobian) { window_check(_i); }
END_TEST

/* <J v, r> = <v, J^T r> at window scale: the loss's gradient by the adjoint (sid_problem_loss)
 * is sum_w J_w^T r_w / nres for the parameter columns and J_w^T r_w / nres for window w's start
 * state; both from forward mode, to 1e-9 of the gradient's largest entry. */
static void dot_check(int which)
{
    scene s;
    scene_make(&s, which);
    const sid_model *m = s.m;
    const int np = m->nparam, nx = s.nx, ncol = s.nfree + nx;
    const double nres = (double)sid_problem_nresiduals(s.p);
    double L, *g = calloc((size_t)np, sizeof(double)), *gx = calloc((size_t)(s.nw * nx), sizeof(double));
    double *gf = calloc((size_t)ncol, sizeof(double));
    sid_error err = {0};
    ck_assert_msg(sid_problem_loss(s.p, s.theta, s.x0, &L, g, gx, &err) == SID_OK, "%s", err.msg);
    double gmax = 0, worst = 0;
    for (int j = 0; j < np; j++) gmax = fmax(gmax, fabs(g[j]));
    for (int i = 0; i < s.nw * nx; i++) gmax = fmax(gmax, fabs(gx[i]));
    double *pf = calloc((size_t)s.nfree, sizeof(double));
    for (int w = 0; w < s.nw; w++) {
        const int rows = sid_problem_window_rows(s.p, w);
        double *r = malloc(sizeof(double) * (size_t)rows), *J = malloc(sizeof(double) * (size_t)rows * (size_t)ncol);
        ck_assert_msg(sid_problem_window_jacobian(s.p, s.theta, s.x0 + (size_t)w * (size_t)nx, w, s.nfree, s.idx, r, J,
                                                  &err) == SID_OK, "%s", err.msg);
        memset(gf, 0, sizeof(double) * (size_t)ncol);
        for (int i = 0; i < rows; i++)
            for (int c = 0; c < ncol; c++) gf[c] += J[(size_t)i * (size_t)ncol + (size_t)c] * r[i] / nres;
        for (int c = 0; c < s.nfree; c++) pf[c] += gf[c];
        for (int c = 0; c < nx; c++) worst = fmax(worst, fabs(gf[s.nfree + c] - gx[(size_t)w * (size_t)nx + (size_t)c]));
        free(r), free(J);
    }
    for (int c = 0; c < s.nfree; c++) worst = fmax(worst, fabs(pf[c] - g[s.idx[c]]));
    fprintf(stderr, "hard forward: %s, %d windows: sum J^T r / nres vs the adjoint's gradient %.2e of max |g| %.3g\n",
            scene_name[which], s.nw, worst / gmax, gmax);
    ck_assert_msg(gmax > 0 && worst < 1e-9 * gmax, "J^T r vs the adjoint: %g of %g", worst, gmax);
    free(g), free(gx), free(gf), free(pf);
    scene_free(&s);
}

START_TEST(window_dot_product) { dot_check(_i); }
END_TEST

Suite *hard_forward_suite(void)
{
    Suite *s = suite_create("hard_forward");
    TCase *tc = tcase_create("hard_forward");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, window_dot_product, 0, NSCENE);
    suite_add_tcase(s, tc);
    /* hundreds of window evaluations: `make test` runs them, the sanitizer pass leaves them out */
    TCase *win = tcase_create("hard_forward_window");
    tcase_set_timeout(win, 120);
    tcase_set_tags(win, "slow");
    tcase_add_loop_test(win, window_jacobian, 0, NSCENE);
    suite_add_tcase(s, win);
    return s;
}
