/* mjfit — MuJoCo's own finite-difference fit of a log, the reference column of docs/recovery.md's
 * recovery tables: the way system identification is done with MuJoCo (perturb a model field,
 * re-simulate, difference), on the same data and loss sysid fits.
 *
 *   mjfit NOMINAL.xml LOG.csv --free KIND:NAME,... [--truth TRUTH.xml] [--window S]
 *
 * LOG.csv is a sysid log of 1-dof joints (`t,q.J...,qd.J...,u.J...`, as tests/tools/mjlog.c
 * writes it): u.J is the ctrl of the actuator driving joint J. The loss is sysid's default
 * (docs/formats.md "fit"): the log cut into windows of S seconds (default 0.5), each restarted from
 * its logged state; residuals of q and qd divided by each column's standard deviation (floored
 * at 1e-3), weights 1 and 0.1, half the mean square. Free parameters, each a MuJoCo number:
 *   mass:BODY          body_mass
 *   damping:JOINT      dof_damping         armature:JOINT  dof_armature
 *   frictionloss:JOINT dof_frictionloss
 *   kp:JOINT           the joint's position actuator: gainprm[0] = kp, biasprm[1] = -kp
 *   kd:JOINT           its damping: biasprm[2] = -kd (a velocity actuator: also gainprm[0] = kd)
 * The optimizer is the one `sysid fit` uses (core/fit/optimize.c): NLopt L-BFGS on
 * x = log(value / nominal), bounds [0.1, 10] x nominal, objective scaled to 1 at the start,
 * ftol_rel 1e-10, xtol_rel 1e-12, at most 200 improvements; its gradient by forward
 * differences of relative step 1e-6 (one more rollout of every window per parameter).
 * Prints JSON: per parameter its nominal, fitted and (with --truth, where the same number of
 * TRUTH.xml is the truth) true value and relative error, then the loss, evaluations and seconds.
 * A tool for the recovery tables: it links MuJoCo and is not part of sysid. Exit 2 on bad
 * input. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mujoco/mujoco.h>
#include <nlopt.h>

#define MAXP 64
#define MAXJ 64
#define MAX_ITER 200

static void die(const char *fmt, const char *a)
{
    fprintf(stderr, "mjfit: error: ");
    fprintf(stderr, fmt, a);
    fputc('\n', stderr);
    exit(2);
}

static mjModel *load(const char *path)
{
    char msg[1000] = "";
    mjModel *m = mj_loadXML(path, NULL, msg, sizeof msg);
    if (!m) die("%s", msg);
    return m;
}

/* ---- the log ------------------------------------------------------------------------------- */

typedef struct {
    int n, nj;                 /* samples, joints */
    double *t, *q, *qd, *u;    /* (n), (n x nj) each; u NaN where a joint has no command */
    int jid[MAXJ];             /* MuJoCo joint of log joint i */
} mlog;

static int column(char **names, int ncol, const char *prefix, const char *joint)
{
    char want[300];
    snprintf(want, sizeof want, "%s%s", prefix, joint);
    for (int c = 0; c < ncol; c++)
        if (strcmp(names[c], want) == 0) return c;
    return -1;
}

static void read_log(const char *path, const mjModel *m, mlog *L)
{
    FILE *f = fopen(path, "r");
    if (!f) die("cannot open %s", path);
    static char line[1 << 16];
    if (!fgets(line, sizeof line, f)) die("%s: empty", path);
    char *names[3 * MAXJ + 1];
    int ncol = 0;
    for (char *tok = strtok(line, ",\r\n"); tok && ncol < 3 * MAXJ + 1; tok = strtok(NULL, ",\r\n"))
        names[ncol++] = strdup(tok);
    L->nj = 0;
    int cq[MAXJ], cqd[MAXJ], cu[MAXJ];
    for (int c = 0; c < ncol; c++) {
        if (strncmp(names[c], "q.", 2) != 0) continue;
        const int j = mj_name2id(m, mjOBJ_JOINT, names[c] + 2);
        if (j < 0 || L->nj == MAXJ) die("%s: a q column names no hinge or slide joint of the model", path);
        L->jid[L->nj] = j;
        cq[L->nj] = c;
        cqd[L->nj] = column(names, ncol, "qd.", names[c] + 2);
        cu[L->nj] = column(names, ncol, "u.", names[c] + 2);
        if (cqd[L->nj] < 0) die("%s: a q column has no qd column", path);
        L->nj++;
    }
    if (L->nj != m->nv) die("%s: the log must have one q column per dof of the model", path);
    int cap = 1024;
    L->n = 0;
    L->t = malloc(sizeof(double) * (size_t)cap);
    L->q = malloc(sizeof(double) * (size_t)cap * (size_t)L->nj);
    L->qd = malloc(sizeof(double) * (size_t)cap * (size_t)L->nj);
    L->u = malloc(sizeof(double) * (size_t)cap * (size_t)L->nj);
    double v[3 * MAXJ + 1];
    while (fgets(line, sizeof line, f)) {
        int c = 0;
        for (char *tok = strtok(line, ",\r\n"); tok && c < ncol; tok = strtok(NULL, ",\r\n")) v[c++] = atof(tok);
        if (c != ncol) die("%s: a row has fewer fields than the header", path);
        if (L->n == cap) {
            cap *= 2;
            L->t = realloc(L->t, sizeof(double) * (size_t)cap);
            L->q = realloc(L->q, sizeof(double) * (size_t)cap * (size_t)L->nj);
            L->qd = realloc(L->qd, sizeof(double) * (size_t)cap * (size_t)L->nj);
            L->u = realloc(L->u, sizeof(double) * (size_t)cap * (size_t)L->nj);
        }
        L->t[L->n] = v[0];
        for (int i = 0; i < L->nj; i++) {
            const size_t k = (size_t)L->n * (size_t)L->nj + (size_t)i;
            L->q[k] = v[cq[i]], L->qd[k] = v[cqd[i]], L->u[k] = cu[i] >= 0 ? v[cu[i]] : NAN;
        }
        L->n++;
    }
    fclose(f);
    if (L->n < 2) die("%s: fewer than two samples", path);
}

/* ---- the loss (core/problem/problem.c, core/problem/loss.c) ----------------------------------------------- */

typedef struct {
    mjModel *m;
    mjData *d;
    const mlog *L;
    int nwin, *k0, *k1, act[MAXJ], substeps;
    double sq[MAXJ], sqd[MAXJ];
} loss_ctx;

static double column_sd(const double *x, int n, int stride)
{
    double s1 = 0, s2 = 0;
    for (int k = 0; k < n; k++) s1 += x[(size_t)k * (size_t)stride], s2 += x[(size_t)k * (size_t)stride] * x[(size_t)k * (size_t)stride];
    const double mean = s1 / n, var = s2 / n - mean * mean, sd = var > 0 ? sqrt(var) : 0;
    return sd > 1e-3 ? sd : 1e-3;
}

static void loss_init(loss_ctx *c, mjModel *m, const mlog *L, double window)
{
    c->m = m, c->d = mj_makeData(m), c->L = L;
    c->k0 = malloc(sizeof(int) * (size_t)L->n), c->k1 = malloc(sizeof(int) * (size_t)L->n);
    c->nwin = 0;
    for (int k0 = 0; k0 < L->n - 1;) {
        int k1 = k0 + 1;
        while (window > 0 && k1 < L->n - 1 && L->t[k1 + 1] - L->t[k0] <= window * (1 + 1e-9)) k1++;
        if (window <= 0) k1 = L->n - 1;
        c->k0[c->nwin] = k0, c->k1[c->nwin++] = k1;
        k0 = k1;
    }
    for (int i = 0; i < L->nj; i++) {
        c->sq[i] = column_sd(L->q + i, L->n, L->nj);
        c->sqd[i] = column_sd(L->qd + i, L->n, L->nj);
        c->act[i] = -1;
        for (int a = 0; a < m->nu; a++)
            if (m->actuator_trntype[a] == mjTRN_JOINT && m->actuator_trnid[2 * a] == L->jid[i]) c->act[i] = a;
    }
    const double dt = L->t[1] - L->t[0];
    c->substeps = (int)lround(dt / m->opt.timestep);
    if (c->substeps < 1 || fabs(c->substeps * m->opt.timestep - dt) > 1e-9 * dt)
        die("%s", "the log's sample interval must be a whole number of the model's timesteps");
}

static double loss(loss_ctx *c)
{
    const mlog *L = c->L;
    const int nj = L->nj;
    double sum = 0;
    long nres = 0;
    const int bad = c->d->warning[mjWARN_BADQACC].number;
    for (int w = 0; w < c->nwin; w++) {
        mj_resetData(c->m, c->d);
        for (int i = 0; i < nj; i++) {
            c->d->qpos[c->m->jnt_qposadr[L->jid[i]]] = L->q[(size_t)c->k0[w] * (size_t)nj + (size_t)i];
            c->d->qvel[c->m->jnt_dofadr[L->jid[i]]] = L->qd[(size_t)c->k0[w] * (size_t)nj + (size_t)i];
        }
        for (int k = c->k0[w]; k < c->k1[w]; k++) {
            for (int i = 0; i < nj; i++)
                if (c->act[i] >= 0) c->d->ctrl[c->act[i]] = L->u[(size_t)k * (size_t)nj + (size_t)i];
            for (int s = 0; s < c->substeps; s++) mj_step(c->m, c->d);
            for (int i = 0; i < nj; i++) {
                const size_t r = (size_t)(k + 1) * (size_t)nj + (size_t)i;
                const double dq = (c->d->qpos[c->m->jnt_qposadr[L->jid[i]]] - L->q[r]) / c->sq[i];
                const double dv = (c->d->qvel[c->m->jnt_dofadr[L->jid[i]]] - L->qd[r]) / c->sqd[i];
                sum += 0.5 * (dq * dq + 0.1 * dv * dv);
            }
            nres += 2 * nj;
        }
    }
    const double f = sum / (double)nres;
    return c->d->warning[mjWARN_BADQACC].number == bad && isfinite(f) ? f : HUGE_VAL;
}

/* ---- the parameters ----------------------------------------------------------------------- */

typedef struct {
    char spec[200];
    double *f[2];      /* the MuJoCo numbers the parameter sets: *f[i] = s[i] * value (f[1] may be NULL) */
    double s[2];
    double nominal, truth;
} param;

static int actuator_of(const mjModel *m, int jid)
{
    for (int a = 0; a < m->nu; a++)
        if (m->actuator_trntype[a] == mjTRN_JOINT && m->actuator_trnid[2 * a] == jid) return a;
    return -1;
}

static void field(param *p, double *f0, double s0, double *f1, double s1)
{
    p->f[0] = f0, p->s[0] = s0, p->f[1] = f1, p->s[1] = s1;
}

/* Point p at the numbers spec names in model m; returns 0, or -1 if m has no such number. */
static int bind(mjModel *m, const char *spec, param *p)
{
    char kind[64];
    const char *colon = strchr(spec, ':');
    if (!colon || colon - spec >= (long)sizeof kind) die("--free: expected KIND:NAME, got '%s'", spec);
    memcpy(kind, spec, (size_t)(colon - spec));
    kind[colon - spec] = '\0';
    const char *name = colon + 1;
    if (strcmp(kind, "mass") == 0) {
        const int b = mj_name2id(m, mjOBJ_BODY, name);
        if (b < 0) return -1;
        field(p, &m->body_mass[b], 1, NULL, 0);
        return 0;
    }
    const int j = mj_name2id(m, mjOBJ_JOINT, name);
    if (j < 0) return -1;
    const int dof = m->jnt_dofadr[j], a = actuator_of(m, j);
    double *gain = a >= 0 ? &m->actuator_gainprm[mjNGAIN * a] : NULL, *bias = a >= 0 ? &m->actuator_biasprm[mjNBIAS * a] : NULL;
    if (strcmp(kind, "damping") == 0) field(p, &m->dof_damping[dof], 1, NULL, 0);
    else if (strcmp(kind, "armature") == 0) field(p, &m->dof_armature[dof], 1, NULL, 0);
    else if (strcmp(kind, "frictionloss") == 0) field(p, &m->dof_frictionloss[dof], 1, NULL, 0);
    else if (strcmp(kind, "kp") == 0) {
        if (!bias || bias[1] == 0) return -1;
        field(p, &gain[0], 1, &bias[1], -1);
    } else if (strcmp(kind, "kd") == 0) {
        if (!bias) return -1;
        if (bias[1] == 0) field(p, &gain[0], 1, &bias[2], -1);   /* a velocity actuator */
        else field(p, &bias[2], -1, NULL, 0);
    } else die("--free: unknown kind in '%s' (mass, damping, armature, frictionloss, kp, kd)", spec);
    return 0;
}

static double get(const param *p) { return *p->f[0] / p->s[0]; }
static void set(param *p, double x)
{
    for (int i = 0; i < 2; i++)
        if (p->f[i]) *p->f[i] = p->s[i] * x;
}

/* ---- the fit (core/fit/optimize.c's L-BFGS, bench_main.c's MuJoCo driver) ---------------------- */

typedef struct {
    loss_ctx *lc;
    param *p;
    int k, evaluations, iterations;
    double fscale, reject, best_loss, best[MAXP];
    nlopt_opt opt;
} fit_ctx;

static double objective(unsigned n, const double *x, double *g, void *data)
{
    fit_ctx *c = data;
    c->evaluations++;
    for (unsigned i = 0; i < n; i++) set(&c->p[i], c->p[i].nominal * exp(x[i]));
    const double L = loss(c->lc);
    if (L == HUGE_VAL) {
        for (unsigned i = 0; g && i < n; i++) g[i] = 0;
        return c->reject * c->fscale;
    }
    for (unsigned i = 0; g && i < n; i++) {   /* dL/dx_i = v_i dL/dv_i */
        const double v = get(&c->p[i]);
        set(&c->p[i], v * (1 + 1e-6));
        const double Li = loss(c->lc);
        set(&c->p[i], v);
        g[i] = Li == HUGE_VAL ? 0 : c->fscale * (Li - L) / 1e-6;
    }
    if (L < c->best_loss) {
        c->best_loss = L;
        for (unsigned i = 0; i < n; i++) c->best[i] = get(&c->p[i]);
        if (c->evaluations > 1 && ++c->iterations >= MAX_ITER) nlopt_force_stop(c->opt);
    }
    return L * c->fscale;
}

int main(int argc, char **argv)
{
    const char *model = NULL, *logp = NULL, *free_list = NULL, *truthp = NULL;
    double window = 0.5;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--free") == 0 && i + 1 < argc) free_list = argv[++i];
        else if (strcmp(argv[i], "--truth") == 0 && i + 1 < argc) truthp = argv[++i];
        else if (strcmp(argv[i], "--window") == 0 && i + 1 < argc) window = atof(argv[++i]);
        else if (!model) model = argv[i];
        else if (!logp) logp = argv[i];
        else die("unexpected argument '%s'", argv[i]);
    }
    if (!model || !logp || !free_list)
        die("%s", "usage: mjfit NOMINAL.xml LOG.csv --free KIND:NAME,... [--truth TRUTH.xml] [--window S]");
    mj_activate(NULL);
    mjModel *m = load(model), *mt = truthp ? load(truthp) : NULL;
    mlog L;
    read_log(logp, m, &L);
    loss_ctx lc;
    loss_init(&lc, m, &L, window);

    param p[MAXP];
    int k = 0;
    char *list = strdup(free_list);
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        if (k == MAXP) die("%s", "--free: too many parameters");
        snprintf(p[k].spec, sizeof p[k].spec, "%s", tok);
        if (bind(m, tok, &p[k]) != 0) die("--free: the nominal model has no '%s'", tok);
        p[k].nominal = get(&p[k]);
        if (!(p[k].nominal > 0)) die("--free: '%s' must be positive in the nominal model (the fit is on its log)", tok);
        p[k].truth = NAN;
        param pt;
        if (mt && bind(mt, tok, &pt) == 0) p[k].truth = get(&pt);
        k++;
    }

    fit_ctx c = {.lc = &lc, .p = p, .k = k};
    double x[MAXP], lo[MAXP], hi[MAXP], fmin = 0;
    for (int i = 0; i < k; i++) x[i] = 0, lo[i] = log(0.1), hi[i] = log(10), c.best[i] = p[i].nominal;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    const double L0 = loss(&lc);
    if (L0 == HUGE_VAL) die("%s: MuJoCo's loss at the nominal model is not finite", model);
    c.best_loss = L0, c.fscale = L0 > 0 ? 1 / L0 : 1, c.reject = 1e6 * L0 + 1e-300;
    c.opt = nlopt_create(NLOPT_LD_LBFGS, (unsigned)k);
    nlopt_set_lower_bounds(c.opt, lo);
    nlopt_set_upper_bounds(c.opt, hi);
    nlopt_set_min_objective(c.opt, objective, &c);
    nlopt_set_ftol_rel(c.opt, 1e-10);
    nlopt_set_xtol_rel(c.opt, 1e-12);
    nlopt_set_maxeval(c.opt, 20 * MAX_ITER + 20);
    const nlopt_result nr = nlopt_optimize(c.opt, x, &fmin);
    nlopt_destroy(c.opt);
    clock_gettime(CLOCK_MONOTONIC, &t1);

    printf("{\n  \"parameters\": {\n");
    double worst = 0;
    for (int i = 0; i < k; i++) {
        printf("    \"%s\": {\"nominal\": %.10g, \"fitted\": %.10g", p[i].spec, p[i].nominal, c.best[i]);
        if (isfinite(p[i].truth)) {
            const double e = c.best[i] / p[i].truth - 1;
            worst = fmax(worst, fabs(e));
            printf(", \"truth\": %.10g, \"error\": %.3e", p[i].truth, e);
        }
        printf("}%s\n", i + 1 < k ? "," : "");
    }
    printf("  },\n  \"loss0\": %.6e, \"loss\": %.6e,", L0, c.best_loss);
    if (mt) printf(" \"worst_error\": %.3e,", worst);
    printf(" \"nlopt\": %d, \"iterations\": %d, \"evaluations\": %d, \"seconds\": %.2f\n}\n", (int)nr, c.iterations,
           c.evaluations, (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
    mj_deleteData(lc.d);
    mj_deleteModel(m);
    if (mt) mj_deleteModel(mt);
    return 0;
}
