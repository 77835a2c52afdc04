/* bench_main.c — `make bench`: one markdown table of sysid's speed against MuJoCo 2.2.2.
 *
 * Rows (tests/bench/README.md says what each measures and why):
 *   1  forward simulation, µs/step: sid_step vs mj_step on the same robot (MuJoCo twin), euler and rk4
 *   2  loss + full gradient, µs/step, against the loss alone (the same simulation, no gradient)
 *   3  one gradient, ms: our adjoint vs MuJoCo forward differences (one rollout per parameter + 1)
 *   4  loss + gradient vs log length (window 0.5 s and one window) and vs joint count
 *   5  peak tape memory and time of one gradient over a single 100 000-step window
 *   6  end-to-end fit: sid_fit vs the same L-BFGS on MuJoCo rollouts with forward differences
 * Run from the repository root. BENCH_QUICK=1 runs a short version (fewer, shorter repetitions,
 * a 2 s log for rows 2-3 and 6, single runs for the 100 s logs, 6 free parameters in row 6).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nlopt.h>

#include "bench.h"

static int quick;

/* ---- output -------------------------------------------------------------------------------- */

static void print_header(void)
{
    char cpu[256] = "unknown";
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[512];
        while (fgets(line, sizeof line, f)) {
            if (strncmp(line, "model name", 10) != 0) continue;
            const char *c = strchr(line, ':');
            if (!c) break;
            for (c++; *c == ' ' || *c == '\t'; c++) {}
            snprintf(cpu, sizeof cpu, "%s", c);
            cpu[strcspn(cpu, "\n")] = 0;
            break;
        }
        fclose(f);
    }
    printf("# sysid %s benchmark%s\n\n", SID_VERSION, quick ? " (BENCH_QUICK: indicative only)" : "");
    const int mv = mj_version();
    printf("CPU: %s, %ld cores online; compiler: %s; MuJoCo %d.%d.%d\n", cpu, sysconf(_SC_NPROCESSORS_ONLN),
           __VERSION__, mv / 100, mv / 10 % 10, mv % 10);
    printf("Each cell: median of %d repetitions of >= %.2f s, ours and MuJoCo's interleaved; single thread; "
           "h = 1 ms; contact off except in row 8.\n\n",
           bench_reps, bench_min_time);
    printf("| row | measure | case | ours | reference | ratio |\n");
    printf("|---|---|---|---:|---:|---:|\n");
    fflush(stdout);
}

static void row(int n, const char *measure, const char *cas, const char *ours, const char *ref, const char *ratio)
{
    printf("| %d | %s | %s | %s | %s | %s |\n", n, measure, cas, ours, ref, ratio);
    fflush(stdout);
}

/* ---- row 1: forward simulation ---------------------------------------------------------------- */

#define FWD_STEPS 1000

typedef struct {
    bench_robot *r;
    sid_workspace *ws;
    sid_integrator integ;
    const double *cmd;          /* (FWD_STEPS x nv) */
    const double *q0, *v0;
    double buf[4 * SID_MAX_JOINTS];
} fwd_ctx;

static void run_sid_forward(void *p)
{
    fwd_ctx *c = p;
    const int nv = c->r->nv;
    double *q = c->buf, *v = q + nv, *q1 = v + nv, *v1 = q1 + nv;
    sid_error err = {0};
    memcpy(q, c->q0, sizeof(double) * (size_t)nv);
    memcpy(v, c->v0, sizeof(double) * (size_t)nv);
    for (int s = 0; s < FWD_STEPS; s++) {
        bench_check(sid_step(c->r->m, c->r->theta, c->ws, c->integ, 1e-3, q, v, c->cmd + (size_t)s * (size_t)nv, q1, v1,
                             &err),
                    &err, c->r->name);
        double *t = q;
        q = q1, q1 = t;
        t = v, v = v1, v1 = t;
    }
    bench_sink = q[0];
}

static void mj_set_state(bench_robot *r, const double *q, const double *v)
{
    for (int k = 0; k < r->nv; k++) {
        r->md->qpos[r->qadr[k]] = q[k];
        r->md->qvel[r->dadr[k]] = v[k];
    }
    r->md->time = 0;
}

static void run_mj_forward(void *p)
{
    fwd_ctx *c = p;
    bench_robot *r = c->r;
    mj_set_state(r, c->q0, c->v0);
    for (int s = 0; s < FWD_STEPS; s++) {
        const double *u = c->cmd + (size_t)s * (size_t)r->nv;
        for (int k = 0; k < r->nv; k++)
            if (r->act[k] >= 0) r->md->ctrl[r->act[k]] = u[k];
        mj_step(r->mm, r->md);
    }
    bench_sink = r->md->qpos[0];
}

/* Largest |q_ours - q_MuJoCo| over the last run of each (both ended at the same state). */
static double twin_gap(fwd_ctx *c)
{
    const int nv = c->r->nv;
    run_sid_forward(c);
    run_mj_forward(c);
    /* FWD_STEPS is even, so the final state is back in buf[0..nv) */
    double gap = 0;
    for (int k = 0; k < nv; k++) gap = fmax(gap, fabs(c->buf[k] - c->r->md->qpos[c->r->qadr[k]]));
    return gap;
}

static void bench_forward(bench_robot *r, const double *q0, const double *amp, char *notes, size_t nnotes)
{
    double *cmd = malloc(sizeof(double) * FWD_STEPS * (size_t)r->nv), v0[SID_MAX_JOINTS] = {0};
    sid_workspace *ws = sid_workspace_create(r->m);
    if (!cmd || !ws) bench_die("out of memory");
    for (int s = 0; s < FWD_STEPS; s++) bench_command(r, amp, s * 1e-3, cmd + (size_t)s * (size_t)r->nv);
    fwd_ctx c[2];
    bench_cell cells[4];
    for (int i = 0; i < 2; i++) {
        c[i] = (fwd_ctx){.r = r, .ws = ws, .integ = i ? SID_RK4 : SID_EULER, .cmd = cmd, .q0 = q0, .v0 = v0};
        bench_cell_init(&cells[2 * i], run_sid_forward, &c[i], 1e6 / FWD_STEPS);
        bench_cell_init(&cells[2 * i + 1], run_mj_forward, &c[i], 1e6 / FWD_STEPS);
    }
    /* MuJoCo's integrator is a model option: each MuJoCo cell sets its own before running */
    for (int i = 0; i < 2; i++) {
        r->mm->opt.timestep = 1e-3;
        r->mm->opt.integrator = i ? mjINT_RK4 : mjINT_EULER;
        bench_cell *g[2] = {&cells[2 * i], &cells[2 * i + 1]};
        bench_measure(g, 2);
        const double gap = twin_gap(&c[i]);
        char cas[128], ours[64], ref[64], ratio[64];
        snprintf(cas, sizeof cas, "%s (%d dof), %s", r->name, r->nv, i ? "rk4" : "euler");
        snprintf(ours, sizeof ours, "%.2f", cells[2 * i].median);
        snprintf(ref, sizeof ref, "mj_step %.2f", cells[2 * i + 1].median);
        snprintf(ratio, sizeof ratio, "**%.2f×** ours/MuJoCo", cells[2 * i].median / cells[2 * i + 1].median);
        row(1, "forward µs/step", cas, ours, ref, ratio);
        size_t len = strlen(notes);
        snprintf(notes + len, nnotes - len, "%s%s %s %.0e", len ? ", " : "", r->name, i ? "rk4" : "euler", gap);
    }
    sid_workspace_free(ws);
    free(cmd);
}

/* ---- rows 2-5: loss and gradient ------------------------------------------------------------- */

typedef struct {
    sid_problem *p;
    const double *theta;
    double *grad;       /* NULL: loss only */
    const int *idx;     /* the k free parameters whose gradient entries are read */
    int k;
} loss_ctx;

static void run_loss(void *p)
{
    loss_ctx *c = p;
    sid_error err = {0};
    double loss, s = 0;
    bench_check(sid_problem_loss(c->p, c->theta, NULL, &loss, c->grad, NULL, &err), &err, "sid_problem_loss");
    for (int i = 0; i < c->k; i++) s += c->grad[c->idx[i]];
    bench_sink = loss + s;
}

/* *log must outlive the problem (sid_problem_create borrows the array of log pointers). */
static sid_problem *problem_make(const bench_robot *r, const sid_traj *const *log, double window)
{
    sid_loss_opts o;
    sid_loss_opts_defaults(&o);
    o.window = window;
    o.threads = 1;   /* the table is single-threaded, as the MuJoCo cells are */
    sid_problem *p = NULL;
    sid_error err = {0};
    bench_check(sid_problem_create(&p, r->m, log, 1, &o, &err), &err, "sid_problem_create");
    return p;
}

/* The parameters at which gradients are taken: nominal with every mass 10% high, so the
 * residuals and the gradient are not zero (the cost does not depend on it). */
static double *theta_eval(const bench_robot *r)
{
    const int np = sid_model_nparam(r->m);
    double *th = malloc(sizeof(double) * (size_t)np);
    if (!th) bench_die("out of memory");
    memcpy(th, r->theta, sizeof(double) * (size_t)np);
    for (int i = 0; i < np; i++)
        if (sid_model_param(r->m, i)->kind == SID_P_MASS) th[i] *= 1.1;
    sid_error err = {0};
    bench_check(sid_model_check_theta(r->m, th, &err), &err, "theta");
    return th;
}

/* Free parameters in a representative order: masses, viscous damping, armature, motor kt,
 * COMs, inertias, then everything else. */
static int *free_order(const bench_robot *r)
{
    static const sid_param_kind pri[] = {SID_P_MASS, SID_P_VISCOUS, SID_P_ARMATURE, SID_P_KT, SID_P_COM, SID_P_INERTIA};
    const int np = sid_model_nparam(r->m), npri = (int)(sizeof pri / sizeof pri[0]);
    int *idx = malloc(sizeof(int) * (size_t)np), n = 0;
    char *used = calloc((size_t)np, 1);
    if (!idx || !used) bench_die("out of memory");
    for (int j = 0; j <= npri; j++)
        for (int i = 0; i < np; i++)
            if (!used[i] && (j == npri || sid_model_param(r->m, i)->kind == pri[j])) idx[n++] = i, used[i] = 1;
    free(used);
    return idx;
}

/* ---- MuJoCo forward differences -------------------------------------------------------------- */

typedef struct {
    bench_robot *r;
    const sid_traj *tr;
    int nwin, *k0, *k1;     /* the same windows as our problem */
    const double *sq, *sqd; /* the same residual scales */
    double wq, wqd;
    double **field;         /* (k) the MuJoCo number each free parameter perturbs */
    int k;
    double dummy;           /* for parameters MuJoCo has no field for: still one rollout each */
} fd_ctx;

/* Our loss, computed from MuJoCo rollouts of every window. */
static double mj_loss(fd_ctx *c)
{
    bench_robot *r = c->r;
    const sid_traj *tr = c->tr;
    const int nv = r->nv;
    double sum = 0;
    long nres = 0;
    for (int w = 0; w < c->nwin; w++) {
        mj_set_state(r, tr->q + (size_t)c->k0[w] * (size_t)nv, tr->qd + (size_t)c->k0[w] * (size_t)nv);
        for (int k = c->k0[w]; k < c->k1[w]; k++) {
            const double *u = tr->u + (size_t)k * (size_t)nv;
            for (int i = 0; i < nv; i++)
                if (r->act[i] >= 0) r->md->ctrl[r->act[i]] = u[i];
            mj_step(r->mm, r->md);
            const double *ql = tr->q + (size_t)(k + 1) * (size_t)nv, *vl = tr->qd + (size_t)(k + 1) * (size_t)nv;
            for (int i = 0; i < nv; i++) {
                const double dq = (r->md->qpos[r->qadr[i]] - ql[i]) / c->sq[i];
                const double dv = (r->md->qvel[r->dadr[i]] - vl[i]) / c->sqd[i];
                sum += 0.5 * (c->wq * dq * dq + c->wqd * dv * dv);
            }
            nres += 2 * nv;
        }
    }
    return sum / (double)nres;
}

static void run_mj_fd(void *p)
{
    fd_ctx *c = p;
    const double L0 = mj_loss(c);
    double s = 0;
    for (int i = 0; i < c->k; i++) {
        double *f = c->field[i];
        const double x = *f, h = 1e-6 * fmax(1.0, fabs(x));
        *f = x + h;
        s += (mj_loss(c) - L0) / h;
        *f = x;
    }
    bench_sink = L0 + s;
}

/* The MuJoCo number that plays our parameter i (json2mjcf.py's mapping; MuJoCo keeps the
 * inertia diagonal in principal axes and has no Coulomb smoothing or encoder offset: those
 * perturb a field of the same kind or a dummy, which costs the same rollout). */
static double *mj_field(fd_ctx *c, int i)
{
    bench_robot *r = c->r;
    mjModel *mm = r->mm;
    const sid_param_info *pi = sid_model_param(r->m, i);
    int body = -1, jid = -1;
    if (pi->row->block == SID_BLOCK_INERTIAL)
        body = mj_name2id(mm, mjOBJ_BODY, r->desc.link[pi->owner].name);
    else if (pi->kind != SID_P_GRAVITY) {
        jid = mj_name2id(mm, mjOBJ_JOINT, r->desc.joint[pi->owner].name);
        body = mj_name2id(mm, mjOBJ_BODY, r->desc.link[r->desc.joint[pi->owner].child].name);
    }
    int act = -1;
    for (int a = 0; jid >= 0 && a < mm->nu; a++)
        if (mm->actuator_trnid[2 * a] == jid) act = a;
    switch (pi->kind) {
    case SID_P_GRAVITY: return &mm->opt.gravity[pi->comp];
    case SID_P_MASS: return body >= 0 ? &mm->body_mass[body] : &c->dummy;
    case SID_P_COM: return body >= 0 ? &mm->body_ipos[3 * body + pi->comp] : &c->dummy;
    case SID_P_INERTIA: return body >= 0 ? &mm->body_inertia[3 * body + pi->comp % 3] : &c->dummy;
    case SID_P_XYZ: return body >= 0 ? &mm->body_pos[3 * body + pi->comp] : &c->dummy;
    case SID_P_RPY: return body >= 0 ? &mm->body_quat[4 * body + 1 + pi->comp] : &c->dummy;
    case SID_P_ARMATURE: return jid >= 0 ? &mm->dof_armature[mm->jnt_dofadr[jid]] : &c->dummy;
    case SID_P_VISCOUS: return jid >= 0 ? &mm->dof_damping[mm->jnt_dofadr[jid]] : &c->dummy;
    case SID_P_GEAR:
    case SID_P_KT: return act >= 0 ? &mm->actuator_gear[6 * act] : &c->dummy;
    default: return &c->dummy;
    }
}

static void fd_init(fd_ctx *c, bench_robot *r, const sid_traj *tr, double window, const sid_problem *p, const int *idx,
                    int k)
{
    memset(c, 0, sizeof *c);
    c->r = r;
    c->tr = tr;
    c->k0 = malloc(sizeof(int) * (size_t)tr->n);
    c->k1 = malloc(sizeof(int) * (size_t)tr->n);
    c->field = malloc(sizeof(double *) * (size_t)k);
    if (!c->k0 || !c->k1 || !c->field) bench_die("out of memory");
    /* windows as core/problem/loss.c cuts them */
    for (int k0 = 0; k0 < tr->n - 1;) {
        int k1 = k0 + 1;
        while (k1 < tr->n - 1 && tr->t[k1 + 1] - tr->t[k0] <= window * (1 + 1e-9)) k1++;
        c->k0[c->nwin] = k0;
        c->k1[c->nwin++] = k1;
        k0 = k1;
    }
    if (c->nwin != sid_problem_nwindows(p)) bench_die("MuJoCo FD: %d windows, ours %d", c->nwin, sid_problem_nwindows(p));
    c->sq = sid_problem_scale_q(p);
    c->sqd = sid_problem_scale_qd(p);
    sid_loss_opts o;
    sid_loss_opts_defaults(&o);
    c->wq = o.weight_q;
    c->wqd = o.weight_qd;
    c->k = k;
    for (int i = 0; i < k; i++) c->field[i] = mj_field(c, idx[i]);
}

static void fd_free(fd_ctx *c)
{
    free(c->k0);
    free(c->k1);
    free(c->field);
}

/* Rows 2 and 3: arm7, one log, window 0.5 s; k = 8, 32 and all parameters free. */
static void bench_gradient(bench_robot *r, const sid_traj *tr)
{
    const int np = sid_model_nparam(r->m);
    const int ks[3] = {8, 32, np};
    const double T = tr->t[tr->n - 1] - tr->t[0], nstep = tr->n - 1;
    double *th = theta_eval(r), *grad = malloc(sizeof(double) * (size_t)np);
    int *idx = free_order(r);
    const sid_traj *log[1] = {tr};
    sid_problem *p = problem_make(r, log, 0.5);
    loss_ctx lf = {p, th, NULL, idx, 0}, lg[3];
    fd_ctx fd[3];
    bench_cell fwd, g[3], f[3];
    bench_cell_init(&fwd, run_loss, &lf, 1e6 / nstep);
    for (int i = 0; i < 3; i++) {
        lg[i] = (loss_ctx){p, th, grad, idx, ks[i]};
        bench_cell_init(&g[i], run_loss, &lg[i], 1e3);
        fd_init(&fd[i], r, tr, 0.5, p, idx, ks[i]);
        bench_cell_init(&f[i], run_mj_fd, &fd[i], 1e3);
        if (quick && i == 2) f[i].once = 1;
    }
    r->mm->opt.integrator = mjINT_EULER;
    r->mm->opt.timestep = 1e-3;
    bench_cell *all[7] = {&fwd, &g[0], &f[0], &g[1], &f[1], &g[2], &f[2]};
    bench_measure(all, 7);
    char cas[160], ours[64], ref[96], ratio[64];
    for (int i = 0; i < 3; i++) {
        const double us = g[i].median * 1e3 / nstep;
        snprintf(cas, sizeof cas, "%s, %.0f s log at 1 kHz, window 0.5 s, %d of %d params free", r->name, T, ks[i], np);
        snprintf(ours, sizeof ours, "%.2f", us);
        snprintf(ref, sizeof ref, "loss only %.2f", fwd.median);
        snprintf(ratio, sizeof ratio, "**%.2f×** grad/forward", us / fwd.median);
        row(2, "loss+grad µs/step", cas, ours, ref, ratio);
    }
    for (int i = 0; i < 3; i++) {
        snprintf(cas, sizeof cas, "%s, %.0f s log, window 0.5 s, %d params", r->name, T, ks[i]);
        snprintf(ours, sizeof ours, "%.1f", g[i].median);
        snprintf(ref, sizeof ref, "MuJoCo FD (%d rollouts) %.1f", ks[i] + 1, f[i].median);
        snprintf(ratio, sizeof ratio, "**%.1f×** faster", f[i].median / g[i].median);
        row(3, "gradient ms", cas, ours, ref, ratio);
    }
    for (int i = 0; i < 3; i++) fd_free(&fd[i]);
    sid_problem_free(p);
    free(idx);
    free(grad);
    free(th);
}

/* Row 2b: the same gradient with the RK4 integrator. */
static void bench_rk4(bench_robot *r, const sid_traj *tr)
{
    const int np = sid_model_nparam(r->m);
    const double nstep = tr->n - 1, T = tr->t[tr->n - 1] - tr->t[0];
    double *th = theta_eval(r), *grad = malloc(sizeof(double) * (size_t)np);
    int *idx = free_order(r);
    const sid_traj *log[1] = {tr};
    sid_loss_opts o;
    sid_loss_opts_defaults(&o);
    o.window = 0.5;
    o.threads = 1;
    o.sim.integrator = SID_RK4;
    sid_problem *p = NULL;
    sid_error err = {0};
    bench_check(sid_problem_create(&p, r->m, log, 1, &o, &err), &err, "sid_problem_create");
    loss_ctx lf = {p, th, NULL, idx, 0}, lg = {p, th, grad, idx, np};
    bench_cell f, g;
    bench_cell_init(&f, run_loss, &lf, 1e6 / nstep);
    bench_cell_init(&g, run_loss, &lg, 1e6 / nstep);
    bench_cell *all[2] = {&f, &g};
    bench_measure(all, 2);
    char cas[160], ours[64], ref[96], ratio[64];
    snprintf(cas, sizeof cas, "%s, %.0f s log, window 0.5 s, rk4, all %d params", r->name, T, np);
    snprintf(ours, sizeof ours, "%.2f", g.median);
    snprintf(ref, sizeof ref, "loss only %.2f", f.median);
    snprintf(ratio, sizeof ratio, "**%.2f×** grad/forward", g.median / f.median);
    row(2, "loss+grad µs/step", cas, ours, ref, ratio);
    sid_problem_free(p);
    free(idx);
    free(grad);
    free(th);
}

/* Row 7: windows on all cores against one thread, same problem (results are bit-identical). */
static void bench_threads(bench_robot *r, const sid_traj *tr)
{
    const int np = sid_model_nparam(r->m), ncore = sid_problem_default_threads();
    const double nstep = tr->n - 1, T = tr->t[tr->n - 1] - tr->t[0];
    double *th = theta_eval(r), *grad = malloc(sizeof(double) * (size_t)np);
    int *idx = free_order(r);
    const sid_traj *log[1] = {tr};
    sid_problem *p1 = problem_make(r, log, 0.5), *pn = NULL;
    sid_loss_opts o;
    sid_loss_opts_defaults(&o);
    o.window = 0.5;
    o.threads = ncore;
    sid_error err = {0};
    bench_check(sid_problem_create(&pn, r->m, log, 1, &o, &err), &err, "sid_problem_create");
    loss_ctx l1 = {p1, th, grad, idx, np}, ln = {pn, th, grad, idx, np};
    bench_cell c1, cn;
    bench_cell_init(&c1, run_loss, &l1, 1e6 / nstep);
    bench_cell_init(&cn, run_loss, &ln, 1e6 / nstep);
    bench_cell *all[2] = {&c1, &cn};
    bench_measure(all, 2);
    char cas[160], ours[64], ref[96], ratio[64];
    snprintf(cas, sizeof cas, "%s, %.0f s log, window 0.5 s, all %d params; %d threads vs 1", r->name, T, np, ncore);
    snprintf(ours, sizeof ours, "%.2f", cn.median);
    snprintf(ref, sizeof ref, "1 thread %.2f", c1.median);
    snprintf(ratio, sizeof ratio, "**%.2f×** speed-up", c1.median / cn.median);
    row(7, "loss+grad µs/step", cas, ours, ref, ratio);
    sid_problem_free(p1);
    sid_problem_free(pn);
    free(idx);
    free(grad);
    free(th);
}

/* Row 9: the gradient with respect to every logged command (sid_problem_grad_commands) against
 * the parameter gradient and the loss alone, same problem, one thread. */
typedef struct {
    sid_problem *p;
    const double *theta;
    double *ubar[1];
} ucmd_ctx;

static void run_grad_commands(void *p)
{
    ucmd_ctx *c = p;
    sid_error err = {0};
    double loss;
    bench_check(sid_problem_grad_commands(c->p, c->theta, NULL, &loss, c->ubar, &err), &err,
                "sid_problem_grad_commands");
    bench_sink = loss + c->ubar[0][0];
}

static void bench_commands(bench_robot *r, const sid_traj *tr)
{
    const int np = sid_model_nparam(r->m);
    const double nstep = tr->n - 1, T = tr->t[tr->n - 1] - tr->t[0];
    double *th = theta_eval(r), *grad = malloc(sizeof(double) * (size_t)np);
    int *idx = free_order(r);
    const sid_traj *log[1] = {tr};
    sid_problem *p = problem_make(r, log, 0.5);
    loss_ctx lf = {p, th, NULL, idx, 0}, lg = {p, th, grad, idx, np};
    ucmd_ctx uc = {p, th, {malloc(sizeof(double) * (size_t)tr->n * (size_t)tr->nv)}};
    bench_cell f, g, u;
    bench_cell_init(&f, run_loss, &lf, 1e6 / nstep);
    bench_cell_init(&g, run_loss, &lg, 1e6 / nstep);
    bench_cell_init(&u, run_grad_commands, &uc, 1e6 / nstep);
    bench_cell *all[3] = {&f, &g, &u};
    bench_measure(all, 3);
    char cas[160], ours[64], ref[96], ratio[64];
    snprintf(cas, sizeof cas, "%s, %.0f s log, window 0.5 s: dL/du of all %d x %d commands", r->name, T, tr->n, tr->nv);
    snprintf(ours, sizeof ours, "%.2f", u.median);
    snprintf(ref, sizeof ref, "params' %.2f, loss only %.2f", g.median, f.median);
    snprintf(ratio, sizeof ratio, "**%.2f×** params' grad, %.2f× forward", u.median / g.median, u.median / f.median);
    row(9, "loss+grad µs/step", cas, ours, ref, ratio);
    sid_problem_free(p);
    free(uc.ubar[0]);
    free(idx);
    free(grad);
    free(th);
}

typedef struct { char cas[160], ours[64], ref[96], ratio[64]; } row_text;

/* Row 4a and row 5: arm7, log length 1, 10, 100 s; window 0.5 s and one window per log.
 * Row 5 is the 100 s single window; it is printed last (row5). */
static void bench_length(bench_robot *r, const sid_traj *tr100, row_text *row5)
{
    const int np = sid_model_nparam(r->m);
    const double lens[3] = {1, 10, 100};
    double *th = theta_eval(r), *grad = malloc(sizeof(double) * (size_t)np);
    int *idx = free_order(r);
    char cas[160], ours[64], ref[96], ratio[64];
    for (int l = 0; l < 3; l++) {
        sid_traj sub = *tr100;
        sub.n = (int)lround(lens[l] * 1000) + 1;
        const double nstep = sub.n - 1;
        const sid_traj *log[1] = {&sub};
        sid_problem *p[2] = {problem_make(r, log, 0.5), problem_make(r, log, 0)};
        loss_ctx lc[4];
        bench_cell c[4], *all[4];
        for (int i = 0; i < 4; i++) {
            lc[i] = (loss_ctx){p[i / 2], th, i % 2 ? grad : NULL, idx, i % 2 ? np : 0};
            bench_cell_init(&c[i], run_loss, &lc[i], 1e6 / nstep);
            c[i].once = quick && l == 2;
            all[i] = &c[i];
        }
        bench_measure(all, 4);
        for (int w = 0; w < 2; w++) {
            if (w == 0) snprintf(cas, sizeof cas, "%s, %.0f s log, window 0.5 s (%d windows)", r->name, lens[l],
                                 sid_problem_nwindows(p[0]));
            else snprintf(cas, sizeof cas, "%s, %.0f s log, one window (checkpoints)", r->name, lens[l]);
            snprintf(ours, sizeof ours, "%.2f", c[2 * w + 1].median);
            snprintf(ref, sizeof ref, "loss only %.2f", c[2 * w].median);
            snprintf(ratio, sizeof ratio, "%.2f× grad/forward", c[2 * w + 1].median / c[2 * w].median);
            row(4, "loss+grad µs/step", cas, ours, ref, ratio);
        }
        if (l == 2) {
            const size_t tape = sid_problem_tape_bytes(p[1]);
            const double full = sizeof(double) * 2.0 * r->nv * (nstep + 1);
            snprintf(row5->cas, sizeof row5->cas, "%s, one window of %.0f steps (checkpoints)", r->name, nstep);
            snprintf(row5->ours, sizeof row5->ours, "%.3f MB; %.2f s/gradient", tape / 1e6, c[3].median * nstep * 1e-6);
            snprintf(row5->ref, sizeof row5->ref, "full tape %.1f MB", full / 1e6);
            snprintf(row5->ratio, sizeof row5->ratio, "%.4f× of full tape", tape / full);
        }
        sid_problem_free(p[0]);
        sid_problem_free(p[1]);
    }
    free(idx);
    free(grad);
    free(th);
}

/* Row 4b: generated trees of 2, 7, 15 and 30 joints, 10 s log, window 0.5 s. */
static void bench_joints(double T)
{
    static const int nj[4] = {2, 7, 15, 30};
    char cas[160], ours[64], ref[96], ratio[64], path[64], name[32];
    for (int j = 0; j < 4; j++) {
        bench_robot r;
        snprintf(path, sizeof path, "tests/bench/tree%d.json", nj[j]);
        snprintf(name, sizeof name, "tree%d", nj[j]);
        bench_robot_load(&r, name, path, NULL);
        double q0[SID_MAX_JOINTS], amp[SID_MAX_JOINTS];
        for (int k = 0; k < r.nv; k++) q0[k] = 0.3 * sin(1.3 * k + 0.7), amp[k] = 0.5;
        sid_traj *tr = bench_log_make(&r, NULL, q0, amp, T);
        const int np = sid_model_nparam(r.m);
        double *th = theta_eval(&r), *grad = malloc(sizeof(double) * (size_t)np);
        int *idx = free_order(&r);
        const sid_traj *log[1] = {tr};
        sid_problem *p = problem_make(&r, log, 0.5);
        loss_ctx lc[2] = {{p, th, NULL, idx, 0}, {p, th, grad, idx, np}};
        bench_cell c[2], *all[2] = {&c[0], &c[1]};
        for (int i = 0; i < 2; i++) bench_cell_init(&c[i], run_loss, &lc[i], 1e6 / (tr->n - 1));
        bench_measure(all, 2);
        snprintf(cas, sizeof cas, "%s (%d joints, %d params), %.0f s log, window 0.5 s", name, r.nv, np, T);
        snprintf(ours, sizeof ours, "%.2f", c[1].median);
        snprintf(ref, sizeof ref, "loss only %.2f", c[0].median);
        snprintf(ratio, sizeof ratio, "%.2f× grad/forward", c[1].median / c[0].median);
        row(4, "loss+grad µs/step", cas, ours, ref, ratio);
        sid_problem_free(p);
        free(idx);
        free(grad);
        free(th);
        sid_traj_free(tr);
        bench_robot_free(&r);
    }
}

/* ---- row 6: end-to-end fit ------------------------------------------------------------------- */

/* The optimizer settings of both fits: sysid fit's defaults (io/fitspec.c), bounds [0.1, 10] x
 * nominal, and MuJoCo's forward-difference step, relative to the parameter. */
#define FIT_MAX_ITER 200
#define FIT_FTOL_REL 1e-10
#define FIT_LO 0.1
#define FIT_HI 10.0
#define FIT_FD_STEP 1e-6

typedef struct {
    sid_problem *p;
    int k;
    const int *idx;                 /* (k) free parameters */
    const double *lo, *hi;          /* (k) absolute bounds */
    const double *theta0;           /* (np) nominal */
    sid_optimizer optimizer;
    double *theta;                  /* (np) fitted */
    sid_fit_result res;
} fit_ctx;

static void run_sid_fit(void *p)
{
    fit_ctx *c = p;
    const int np = sid_model_nparam(sid_problem_model(c->p));
    sid_fit_opts o;
    sid_fit_opts_defaults(&o);
    o.nfree = c->k, o.idx = c->idx, o.lo = c->lo, o.hi = c->hi;
    o.optimizer = c->optimizer;
    o.max_iter = FIT_MAX_ITER;
    o.ftol_rel = FIT_FTOL_REL;
    sid_error err = {0};
    memcpy(c->theta, c->theta0, sizeof(double) * (size_t)np);
    bench_check(sid_fit(c->p, c->theta, NULL, &o, &c->res, &err), &err, "sid_fit");
    bench_sink = c->res.loss;
}

/* The same L-BFGS as core/fit/optimize.c (NLopt, x = log(theta / nominal), objective scaled to 1 at
 * the nominal point, a rejected point returns a huge loss, an iteration is a new best point,
 * the same tolerances and limits), with the loss from MuJoCo rollouts and its gradient by
 * forward differences: one more rollout of every window per free parameter. */
typedef struct {
    fd_ctx *fd;
    const double *nominal;          /* (k) the MuJoCo fields' nominal values */
    double *best;                   /* (k) best parameters seen */
    double fscale, loss0, best_loss, reject_loss, seconds;
    int iterations, evaluations, rejected;
    nlopt_opt opt;
    nlopt_result nr;
} mjfit_ctx;

/* MuJoCo's loss at the fields' current values; HUGE_VAL when MuJoCo found a bad acceleration
 * (it then resets the state, which would give a finite but meaningless loss). */
static double mj_loss_checked(fd_ctx *c)
{
    const int bad = c->r->md->warning[mjWARN_BADQACC].number;
    const double L = mj_loss(c);
    return c->r->md->warning[mjWARN_BADQACC].number == bad && isfinite(L) ? L : HUGE_VAL;
}

static double mjfit_objective(unsigned n, const double *x, double *gx, void *data)
{
    mjfit_ctx *c = data;
    fd_ctx *fd = c->fd;
    c->evaluations++;
    for (unsigned i = 0; i < n; i++) *fd->field[i] = c->nominal[i] * exp(x[i]);
    const double L = mj_loss_checked(fd);
    if (L == HUGE_VAL) {
        c->rejected++;
        if (gx)
            for (unsigned i = 0; i < n; i++) gx[i] = 0;
        return c->reject_loss * c->fscale;
    }
    /* dL/dx_i = theta_i dL/dtheta_i ~ (L(theta_i (1 + d)) - L) / d */
    for (unsigned i = 0; gx && i < n; i++) {
        const double th = *fd->field[i];
        *fd->field[i] = th * (1 + FIT_FD_STEP);
        const double Li = mj_loss_checked(fd);
        *fd->field[i] = th;
        gx[i] = Li == HUGE_VAL ? 0 : c->fscale * (Li - L) / FIT_FD_STEP;
    }
    if (L < c->best_loss) {
        c->best_loss = L;
        for (unsigned i = 0; i < n; i++) c->best[i] = *fd->field[i];
        if (c->evaluations > 1 && ++c->iterations >= FIT_MAX_ITER) nlopt_force_stop(c->opt);
    }
    return L * c->fscale;
}

static void run_mj_fit(void *p)
{
    mjfit_ctx *c = p;
    fd_ctx *fd = c->fd;
    const unsigned k = (unsigned)fd->k;
    double x[SID_MAX_FREE], lo[SID_MAX_FREE], hi[SID_MAX_FREE], fmin = 0;
    const double t0 = bench_now();
    for (unsigned i = 0; i < k; i++) {
        x[i] = 0, lo[i] = log(FIT_LO), hi[i] = log(FIT_HI);
        *fd->field[i] = c->best[i] = c->nominal[i];
    }
    c->iterations = c->evaluations = c->rejected = 0;
    c->loss0 = c->best_loss = mj_loss(fd);
    c->fscale = c->loss0 > 0 ? 1 / c->loss0 : 1;
    c->reject_loss = 1e6 * c->loss0 + 1e-300;
    c->opt = nlopt_create(NLOPT_LD_LBFGS, k);
    if (!c->opt) bench_die("out of memory (nlopt_create)");
    nlopt_set_lower_bounds(c->opt, lo);
    nlopt_set_upper_bounds(c->opt, hi);
    nlopt_set_min_objective(c->opt, mjfit_objective, c);
    nlopt_set_ftol_rel(c->opt, FIT_FTOL_REL);
    nlopt_set_xtol_rel(c->opt, 1e-12);
    nlopt_set_maxeval(c->opt, 20 * FIT_MAX_ITER + 20);
    c->nr = nlopt_optimize(c->opt, x, &fmin);
    nlopt_destroy(c->opt);
    c->seconds = bench_now() - t0;
    for (unsigned i = 0; i < k; i++) *fd->field[i] = c->nominal[i];
    bench_sink = c->best_loss;
}

static double max_rmse_q(sid_problem *p, const double *theta, int nq)
{
    double rmse[SID_MAX_JOINTS], worst = 0;
    sid_error err = {0};
    bench_check(sid_problem_rmse(p, theta, NULL, rmse, NULL, &err), &err, "sid_problem_rmse");
    for (int i = 0; i < nq; i++) worst = fmax(worst, rmse[i]);
    return worst;
}

static double max_rel_err(const double *theta, const double *truth, const int *idx, int k)
{
    double worst = 0;
    for (int i = 0; i < k; i++) worst = fmax(worst, fabs(theta[idx[i]] / truth[idx[i]] - 1));
    return worst;
}

/* A link that turns about one axis fixed in the world (its joint hangs from the root): its mass
 * only adds m r^2 to that axis's inertia, as the joint's armature does, so the two are one
 * number to the data and fitting both is ill-posed. */
static int mass_is_armature(const bench_robot *r, int link)
{
    for (int j = 0; j < r->desc.njoint; j++)
        if (r->desc.joint[j].child == link)
            return r->desc.joint[j].parent == 0 && r->desc.joint[j].type == SID_JOINT_REVOLUTE;
    return 0;
}

/* Row 6: arm7, its link masses (but the first link's), then (nkind 3) its joints' viscous
 * damping and armature, off by 20 to 50 % in a log our simulator makes, fitted from the nominal
 * values by sid_fit (L-BFGS, then Levenberg-Marquardt) and by the MuJoCo FD L-BFGS. */
static void bench_fit(bench_robot *r, const double *q0, const double *amp, double T, int nkind, char *notes,
                      size_t nnotes)
{
    static const sid_param_kind kinds[] = {SID_P_MASS, SID_P_VISCOUS, SID_P_ARMATURE};
    const int np = sid_model_nparam(r->m);
    int idx[SID_MAX_FREE], k = 0;
    for (int j = 0; j < nkind; j++)
        for (int i = 0; i < np; i++) {
            const sid_param_info *pi = sid_model_param(r->m, i);
            if (pi->kind == kinds[j] && !(pi->kind == SID_P_MASS && mass_is_armature(r, pi->owner))) idx[k++] = i;
        }
    double *truth = malloc(sizeof(double) * (size_t)np), *th_mj = malloc(sizeof(double) * (size_t)np);
    double lo[SID_MAX_FREE], hi[SID_MAX_FREE], nominal[SID_MAX_FREE], best[SID_MAX_FREE];
    if (!truth || !th_mj) bench_die("out of memory");
    memcpy(truth, r->theta, sizeof(double) * (size_t)np);
    for (int i = 0; i < k; i++) {
        /* +20 %, -25 %, +30 %, ... -50 %: alternating signs, magnitudes cycling over 20..50 % */
        const double f = (i % 2 ? -1 : 1) * (0.2 + 0.05 * (i % 7));
        truth[idx[i]] *= 1 + f;
        lo[i] = FIT_LO * r->theta[idx[i]];
        hi[i] = FIT_HI * r->theta[idx[i]];
    }
    sid_error err = {0};
    bench_check(sid_model_check_theta(r->m, truth, &err), &err, "fit: truth");
    sid_traj *tr = bench_log_make(r, truth, q0, amp, T);
    const sid_traj *log[1] = {tr};
    sid_loss_opts o;
    sid_loss_opts_defaults(&o);
    o.threads = 1;
    sid_problem *p = NULL;
    bench_check(sid_problem_create(&p, r->m, log, 1, &o, &err), &err, "sid_problem_create");

    fd_ctx fd;
    fd_init(&fd, r, tr, o.window, p, idx, k);
    for (int i = 0; i < k; i++) {
        if (fd.field[i] == &fd.dummy) bench_die("fit: parameter %s has no MuJoCo field", sid_model_param(r->m, idx[i])->name);
        nominal[i] = *fd.field[i];
    }
    fit_ctx fc = {.p = p, .k = k, .idx = idx, .lo = lo, .hi = hi, .theta0 = r->theta, .optimizer = SID_OPT_LBFGS,
                  .theta = malloc(sizeof(double) * (size_t)np)};
    fit_ctx fl = fc;
    fl.optimizer = SID_OPT_LM, fl.theta = malloc(sizeof(double) * (size_t)np);
    mjfit_ctx mc = {.fd = &fd, .nominal = nominal, .best = best};
    if (!fc.theta || !fl.theta) bench_die("out of memory");
    r->mm->opt.integrator = mjINT_EULER;
    r->mm->opt.timestep = 1e-3;
    bench_cell c[3], *all[3] = {&c[0], &c[1], &c[2]};
    bench_cell_init(&c[0], run_sid_fit, &fc, 1);
    bench_cell_init(&c[1], run_mj_fit, &mc, 1);
    bench_cell_init(&c[2], run_sid_fit, &fl, 1);
    c[1].once = 1;
    bench_measure(all, 3);

    /* both fitted points scored by the same code: our simulator, sid_problem_rmse */
    memcpy(th_mj, r->theta, sizeof(double) * (size_t)np);
    for (int i = 0; i < k; i++) th_mj[idx[i]] = best[i];
    const double rm0 = max_rmse_q(p, r->theta, r->nv), rm_ours = max_rmse_q(p, fc.theta, r->nv),
                 rm_lm = max_rmse_q(p, fl.theta, r->nv), rm_mj = max_rmse_q(p, th_mj, r->nv);
    /* twin check of the objective: MuJoCo's loss at its fitted point against ours there */
    double L_sid;
    bench_check(sid_problem_loss(p, th_mj, NULL, &L_sid, NULL, NULL, &err), &err, "sid_problem_loss");

    char cas[200], ours[96], ref[128], ratio[64];
    snprintf(cas, sizeof cas,
             "%s, %.0f s log, %d windows of 0.5 s, logged starts; %d params (%s) 20-50 %% off; L-BFGS from nominal",
             r->name, T, sid_problem_nwindows(p), k, nkind == 1 ? "masses" : "masses, damping, armature");
    snprintf(ours, sizeof ours, "%.2f s (%d it, %d ev)", c[0].median, fc.res.iterations, fc.res.evaluations);
    snprintf(ref, sizeof ref, "MuJoCo FD %.1f s (%d it, %d ev, %d rollouts)", c[1].median, mc.iterations,
             mc.evaluations, mc.evaluations * (k + 1));
    snprintf(ratio, sizeof ratio, "**%.0f×** faster", c[1].median / c[0].median);
    row(6, bench_cpu_time() ? "fit CPU time" : "fit wall time", cas, ours, ref, ratio);
    snprintf(cas, sizeof cas, "same, Levenberg-Marquardt from nominal (`--optimizer lm`)");
    snprintf(ours, sizeof ours, "%.2f s (%d it, %d ev)", c[2].median, fl.res.iterations, fl.res.evaluations);
    snprintf(ratio, sizeof ratio, "**%.0f×** faster", c[1].median / c[2].median);
    row(6, bench_cpu_time() ? "fit CPU time" : "fit wall time", cas, ours, ref, ratio);
    snprintf(cas, sizeof cas, "same fits, worst joint's q RMSE (nominal: %.2g rad); worst param error vs truth",
             rm0);
    snprintf(ours, sizeof ours, "%.2g rad; %.2g", rm_ours, max_rel_err(fc.theta, truth, idx, k));
    snprintf(ref, sizeof ref, "MuJoCo FD %.2g rad; %.2g", rm_mj, max_rel_err(th_mj, truth, idx, k));
    snprintf(ratio, sizeof ratio, "%.2g× ours/MuJoCo", rm_ours / rm_mj);
    row(6, "fit final RMSE", cas, ours, ref, ratio);
    snprintf(cas, sizeof cas, "same, Levenberg-Marquardt");
    snprintf(ours, sizeof ours, "%.2g rad; %.2g", rm_lm, max_rel_err(fl.theta, truth, idx, k));
    snprintf(ratio, sizeof ratio, "%.2g× ours/MuJoCo", rm_lm / rm_mj);
    row(6, "fit final RMSE", cas, ours, ref, ratio);
    size_t len = strlen(notes);
    snprintf(notes + len, nnotes - len,
             "Fit (row 6): sid_fit stopped: %s; with LM: %s; MuJoCo FD L-BFGS stopped: NLopt %s. At the MuJoCo fit, "
             "MuJoCo's loss %.6g and ours %.6g (relative gap %.0e).",
             fc.res.message, fl.res.message, nlopt_result_to_string(mc.nr), mc.best_loss, L_sid,
             fabs(mc.best_loss / L_sid - 1));

    fd_free(&fd);
    sid_problem_free(p);
    sid_traj_free(tr);
    free(fc.theta);
    free(fl.theta);
    free(th_mj);
    free(truth);
}

int main(void)
{
    const char *q = getenv("BENCH_QUICK");
    quick = q && *q && strcmp(q, "0") != 0;
    if (quick) {
        bench_reps = 3;
        bench_min_time = 0.05;
    }
    /* BENCH_ROW=N: that row only (rows 2-5 come together), to measure one change quickly */
    const char *only_s = getenv("BENCH_ROW");
    const int only = only_s && *only_s ? atoi(only_s) : 0;
#define WANT(lo, hi) (!only || (only >= (lo) && only <= (hi)))
    print_header();

    /* row 1 */
    char notes[512] = "";
    bench_robot pend, arm, tree;
    bench_robot_load(&pend, "pendulum", "data/pendulum/robot.json", "data/pendulum/model.xml");
    bench_robot_load(&arm, "arm7", "data/arm7/robot.json", "data/arm7/model.xml");
    bench_robot_load(&tree, "tree30", "tests/bench/tree30.json", "tests/bench/tree30.xml");
    /* arm7: initial state and command amplitudes of data/arm7/README.md */
    const double arm_q0[7] = {0.3, -2.9, 2.3, -1.6, 2.1, 2.4, -0.7};
    const double arm_amp[7] = {0.3, 0.6, 1, 0.4, 0.3, 0.2, 0.1};
    double pend_q0[1] = {0.5}, pend_amp[1] = {0.5}, tree_q0[SID_MAX_JOINTS], tree_amp[SID_MAX_JOINTS];
    for (int k = 0; k < tree.nv; k++) tree_q0[k] = 0.3 * sin(1.3 * k + 0.7), tree_amp[k] = 0.5;
    if (WANT(1, 1)) {
        bench_forward(&pend, pend_q0, pend_amp, notes, sizeof notes);
        bench_forward(&arm, arm_q0, arm_amp, notes, sizeof notes);
        bench_forward(&tree, tree_q0, tree_amp, notes, sizeof notes);
    }

    /* rows 2-5 on arm7 logs made by our simulator from the README's start state */
    sid_traj *tr100 = bench_log_make(&arm, NULL, arm_q0, arm_amp, 100);
    sid_traj tr = *tr100;
    tr.n = quick ? 2001 : 10001;
    if (WANT(2, 5)) {
        bench_gradient(&arm, &tr);
        bench_rk4(&arm, &tr);
        row_text r5;
        bench_length(&arm, tr100, &r5);
        bench_joints(quick ? 2 : 10);
        row(5, "peak tape; gradient time", r5.cas, r5.ours, r5.ref, r5.ratio);
    }

    /* row 6: a log our simulator makes from perturbed parameters, fitted both ways */
    char fit_notes[1024] = "";
    if (WANT(6, 6)) bench_fit(&arm, arm_q0, arm_amp, quick ? 2 : 4, quick ? 1 : 3, fit_notes, sizeof fit_notes);

    /* row 7: the same gradient on all cores */
    if (WANT(7, 7)) bench_threads(&arm, &tr);

    /* row 8: contact */
    if (WANT(8, 8)) bench_contact(row);

    /* row 9: the gradient with respect to the commands */
    if (WANT(9, 9)) bench_commands(&arm, &tr);

    printf("\nTwin check, max |q_ours - q_MuJoCo| after %d steps [rad]: %s.\n", FWD_STEPS, notes);
    printf("%s\n", fit_notes);
    sid_traj_free(tr100);
    bench_robot_free(&pend);
    bench_robot_free(&arm);
    bench_robot_free(&tree);
    return fclose(stdout) == 0 ? 0 : 1;
}
