/* bench_contact.c — row 8 of `make bench`: the box of data/box (free joint, eight corner
 * spheres on the ground). Forward step time against MuJoCo on its twin with contact on
 * (MuJoCo's soft-constraint solver, ours the compliant model), and the cost of a gradient
 * relative to the loss alone, per contact gradient mode: compliant (exact adjoint), randomized
 * smoothing (2 N loss evaluations, N antithetic pairs) and hard contact (implicit gradient; its
 * backward pass re-solves each step's contact problem); and one window's residual Jacobian,
 * compliant and hard, forward mode against the 2 ncol + 1 window simulations of the central
 * differences it replaced. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "robot_json.h"
#include "robot_load.h"
#include "traj_csv.h"

typedef struct {
    const sid_model *m;
    const double *theta;
    sid_workspace *ws;
    mjModel *mm;
    mjData *md;
    double q0[7], v0[6];
} box_ctx;

enum { BOX_STEPS = 1000 };

static void run_sid_box(void *p)
{
    box_ctx *c = p;
    double q[7], v[6], q1[7], v1[6], u[6] = {0};
    sid_error err = {0};
    memcpy(q, c->q0, sizeof q);
    memcpy(v, c->v0, sizeof v);
    for (int s = 0; s < BOX_STEPS; s++) {
        bench_check(sid_step(c->m, c->theta, c->ws, SID_EULER, 1e-3, q, v, u, q1, v1, &err), &err, "box");
        memcpy(q, q1, sizeof q);
        memcpy(v, v1, sizeof v);
    }
    bench_sink = q[2];
}

static void run_mj_box(void *p)
{
    box_ctx *c = p;
    mj_resetData(c->mm, c->md);
    memcpy(c->md->qpos, c->q0, sizeof c->q0);
    memcpy(c->md->qvel, c->v0, sizeof c->v0);
    for (int s = 0; s < BOX_STEPS; s++) mj_step(c->mm, c->md);
    bench_sink = c->md->qpos[2];
}

typedef struct {
    sid_problem *p;
    const double *theta;
    double *grad;
    int nloss;   /* loss evaluations per run (smoothing: 2 N) */
} box_loss_ctx;

static void run_box_loss(void *p)
{
    box_loss_ctx *c = p;
    sid_error err = {0};
    double loss = 0, s = 0;
    for (int k = 0; k < c->nloss; k++) {
        bench_check(sid_problem_loss(c->p, c->theta, NULL, &loss, c->grad, NULL, &err), &err, "box loss");
        s += loss;
    }
    bench_sink = s + (c->grad ? c->grad[0] : 0);
}

typedef struct {
    sid_problem *p;
    const double *theta;
    double *x0;                     /* the window's start state */
    int w, nsim, nfree;
    const int *idx;
    double *r, *J, *q, *v;
} jac_ctx;

static void run_jacobian(void *p)
{
    jac_ctx *c = p;
    sid_error err = {0};
    bench_check(sid_problem_window_jacobian(c->p, c->theta, c->x0, c->w, c->nfree, c->idx, c->r, c->J, &err), &err,
                "box Jacobian");
    bench_sink = c->J[0];
}

/* What central differences cost: 2 ncol + 1 simulations of the window. */
static void run_fd_sims(void *p)
{
    jac_ctx *c = p;
    sid_error err = {0};
    for (int k = 0; k < c->nsim; k++)
        bench_check(sid_problem_window_predict(c->p, c->theta, c->x0, c->w, c->q, c->v, &err), &err, "box window");
    bench_sink = c->q[0];
}

/* One window's residual Jacobian (w, its start state estimated, nfree parameters idx free):
 * forward mode against the 2 ncol + 1 simulations of the window central differences need. */
static void bench_window_jacobian(void (*row)(int, const char *, const char *, const char *, const char *, const char *),
                                  const char *label, sid_problem *pj, const double *theta, const int *idx, int nfree,
                                  int w, int nsample)
{
    const sid_model *m = sid_problem_model(pj);
    const int nwin = sid_problem_nwindows(pj), nx = sid_model_nq(m) + sid_model_nv(m);
    const int rows = sid_problem_window_rows(pj, w), ncol = nfree + nx;
    double *x0 = malloc(sizeof(double) * (size_t)(nwin * nx));
    sid_problem_start_states(pj, theta, x0);
    jac_ctx jc = {pj, theta, x0 + (size_t)w * (size_t)nx, w, 2 * ncol + 1, nfree, idx, NULL, NULL, NULL, NULL};
    jc.r = malloc(sizeof(double) * (size_t)rows);
    jc.J = malloc(sizeof(double) * (size_t)rows * (size_t)ncol);
    jc.q = malloc(sizeof(double) * (size_t)nsample * (size_t)sid_model_nq(m));   /* a window's samples at most */
    jc.v = malloc(sizeof(double) * (size_t)nsample * (size_t)sid_model_nv(m));
    bench_cell jcells[2];
    bench_cell_init(&jcells[0], run_jacobian, &jc, 1e3);
    bench_cell_init(&jcells[1], run_fd_sims, &jc, 1e3);
    bench_cell *jg[2] = {&jcells[0], &jcells[1]};
    bench_measure(jg, 2);
    char cas[200], ours[64], ref[64], ratio[64];
    snprintf(cas, sizeof cas, "%s, window Jacobian %d x %d (0.2 s, start estimated)", label, rows, ncol);
    snprintf(ours, sizeof ours, "%.2f", jcells[0].median);
    snprintf(ref, sizeof ref, "central differences %.2f", jcells[1].median);
    snprintf(ratio, sizeof ratio, "**%.1f×** faster", jcells[1].median / jcells[0].median);
    row(8, "Jacobian ms", cas, ours, ref, ratio);
    free(x0), free(jc.r), free(jc.J), free(jc.q), free(jc.v);
}

void bench_contact(void (*row)(int, const char *, const char *, const char *, const char *, const char *))
{
    sid_model *m;
    double *theta;
    sid_error err = {0};
    char errstr[1000] = "";
    if (robot_model("data/box/robot.json", &m, &theta, NULL, &err)) bench_die("data/box/robot.json: %s", err.msg);
    mjModel *mm = mj_loadXML("data/box/model.xml", NULL, errstr, sizeof errstr);
    if (!mm) bench_die("data/box/model.xml: %s", errstr);
    mjData *md = mj_makeData(mm);
    sid_traj *tr = NULL;
    if (traj_csv_load("data/box/tumble.csv", m, NULL, &tr, &err)) bench_die("data/box/tumble.csv: %s", err.msg);
    box_ctx c = {.m = m, .theta = theta, .ws = sid_workspace_create(m), .mm = mm, .md = md};
    memcpy(c.q0, tr->q, sizeof c.q0);
    memcpy(c.v0, tr->qd, sizeof c.v0);
    char ours[64], ref[64], ratio[64];
    for (int hard = 0; hard < 2; hard++) {
        sid_model_set_contact_model(m, hard ? SID_CONTACT_HARD : SID_CONTACT_COMPLIANT);
        bench_cell cells[2];
        bench_cell_init(&cells[0], run_sid_box, &c, 1e6 / BOX_STEPS);
        bench_cell_init(&cells[1], run_mj_box, &c, 1e6 / BOX_STEPS);
        bench_cell *g[2] = {&cells[0], &cells[1]};
        bench_measure(g, 2);
        snprintf(ours, sizeof ours, "%.2f", cells[0].median);
        snprintf(ref, sizeof ref, "mj_step %.2f", cells[1].median);
        snprintf(ratio, sizeof ratio, "**%.2f×** ours/MuJoCo", cells[0].median / cells[1].median);
        row(8, "forward µs/step",
            hard ? "box, 8 contact spheres, tumbling, hard contact (euler)" : "box, 8 contact spheres, tumbling, compliant (euler)",
            ours, ref, ratio);
    }
    sid_model_set_contact_model(m, SID_CONTACT_COMPLIANT);

    /* gradient cost per mode against the loss alone, on the tumble log, window 0.2 s */
    sid_loss_opts o;
    sid_loss_opts_defaults(&o);
    o.window = 0.2;
    o.threads = 1;
    sid_problem *p = NULL;
    bench_check(sid_problem_create(&p, m, (const sid_traj *const *)&tr, 1, &o, &err), &err, "box problem");
    double *grad = malloc(sizeof(double) * (size_t)sid_model_nparam(m));
    enum { PAIRS = 8 };
    box_loss_ctx lc[3] = {{p, theta, NULL, 1}, {p, theta, grad, 1}, {p, theta, NULL, 2 * PAIRS}};
    bench_cell lcells[3];
    const double per_step = 1e6 / (double)(tr->n - 1);
    for (int i = 0; i < 3; i++) bench_cell_init(&lcells[i], run_box_loss, &lc[i], per_step);
    bench_cell *lg[3] = {&lcells[0], &lcells[1], &lcells[2]};
    bench_measure(lg, 3);
    snprintf(ours, sizeof ours, "%.2f", lcells[1].median);
    snprintf(ref, sizeof ref, "loss only %.2f", lcells[0].median);
    snprintf(ratio, sizeof ratio, "**%.2f×** grad/forward", lcells[1].median / lcells[0].median);
    row(8, "loss+grad µs/step", "box, compliant, exact adjoint (all params)", ours, ref, ratio);
    snprintf(ours, sizeof ours, "%.2f", lcells[2].median);
    snprintf(ratio, sizeof ratio, "**%.2f×** grad/forward", lcells[2].median / lcells[0].median);
    row(8, "loss+grad µs/step", "box, randomized smoothing, 8 pairs", ours, ref, ratio);

    /* one window's residual Jacobian, friction, stiffness, damping and mass free, start state
     * estimated (as contact_recovery's Levenberg-Marquardt fit): forward mode against central
     * differences */
    {
        sid_loss_opts oj = o;
        oj.estimate_start = 1;
        sid_problem *pj = NULL;
        bench_check(sid_problem_create(&pj, m, (const sid_traj *const *)&tr, 1, &oj, &err), &err, "box problem, jacobian");
        static const char *const names[] = {"contact.ground.friction", "contact.ground.stiffness",
                                            "contact.ground.damping", "links.box.mass"};
        int idx[4];
        for (int j = 0; j < 4; j++)
            if ((idx[j] = sid_model_param_find(m, names[j])) < 0) bench_die("box: no parameter %s", names[j]);
        bench_window_jacobian(row, "box, compliant (friction, stiffness, damping, mass)", pj, theta, idx, 4,
                              sid_problem_nwindows(pj) / 2, tr->n);
        sid_problem_free(pj);
    }

    /* hard contact: a problem of the model switched (a problem binds its step variant when made) */
    sid_model_set_contact_model(m, SID_CONTACT_HARD);
    sid_problem *ph = NULL;
    bench_check(sid_problem_create(&ph, m, (const sid_traj *const *)&tr, 1, &o, &err), &err, "box problem, hard");
    for (int i = 0; i < 2; i++) {
        lc[i].p = ph;
        bench_cell_init(&lcells[i], run_box_loss, &lc[i], per_step);
    }
    bench_measure(lg, 2);
    snprintf(ours, sizeof ours, "%.2f", lcells[1].median);
    snprintf(ref, sizeof ref, "loss only %.2f", lcells[0].median);
    snprintf(ratio, sizeof ratio, "**%.2f×** grad/forward", lcells[1].median / lcells[0].median);
    row(8, "loss+grad µs/step", "box, hard contact, implicit gradient (all params)", ours, ref, ratio);

    /* hard contact's window Jacobian (covariance, Levenberg-Marquardt): forward mode against
     * the simulations central differences need, on window 0 of a problem estimating its start */
    o.estimate_start = 1;
    sid_problem *pj = NULL;
    bench_check(sid_problem_create(&pj, m, (const sid_traj *const *)&tr, 1, &o, &err), &err, "box problem, hard, start");
    int mask[512] = {0}, idx[512], nfree = 0;
    const char *pat[] = {"links.*", "contact.ground.friction", "contact.ground.height", "contact.spheres.c1.*"};
    for (size_t k = 0; k < sizeof pat / sizeof *pat; k++) sid_model_param_match(m, pat[k], mask);
    for (int i = 0; i < sid_model_nparam(m); i++)
        if (mask[i]) idx[nfree++] = i;
    bench_window_jacobian(row, "box, hard contact", pj, theta, idx, nfree, 0, tr->n);
    sid_model_set_contact_model(m, SID_CONTACT_COMPLIANT);
    sid_problem_free(pj);

    free(grad);
    sid_problem_free(ph);
    sid_problem_free(p);
    sid_traj_free(tr);
    sid_workspace_free(c.ws);
    mj_deleteData(md);
    mj_deleteModel(mm);
    sid_model_free(m);
    sid_free(theta);
}
