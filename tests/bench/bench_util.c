/* bench_util.c — timing, robots and logs for `make bench` (bench.h). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "robot_json.h"

int bench_reps = 5;
double bench_min_time = 0.3;
volatile double bench_sink;

void bench_die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("bench: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

void bench_check(sid_status s, const sid_error *err, const char *what)
{
    if (s != SID_OK) bench_die("%s: %s", what, err ? err->msg : sid_status_str(s));
}

/* ---- timing ------------------------------------------------------------------------------ */

int bench_cpu_time(void)
{
    static int cpu = -1;
    if (cpu < 0) {
        const char *e = getenv("BENCH_CPU");
        cpu = e && *e && strcmp(e, "0") != 0;
    }
    return cpu;
}

double bench_now(void)
{
    struct timespec ts;
    clock_gettime(bench_cpu_time() ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void bench_cell_init(bench_cell *c, void (*run)(void *), void *ctx, double scale)
{
    memset(c, 0, sizeof *c);
    c->run = run;
    c->ctx = ctx;
    c->scale = scale;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void bench_measure(bench_cell *const *cells, int n)
{
    /* Warm-up run (caches, page faults, branch predictors) that also sizes each repetition. */
    for (int i = 0; i < n; i++) {
        bench_cell *c = cells[i];
        c->nrep = 0;
        if (c->once) {
            c->iters = 1;
            continue;
        }
        double t0 = bench_now();
        c->run(c->ctx);
        double t1 = bench_now() - t0;
        c->iters = t1 >= bench_min_time ? 1 : (long)ceil(bench_min_time / (t1 > 1e-9 ? t1 : 1e-9));
    }
    for (int r = 0; r < bench_reps; r++) {
        for (int i = 0; i < n; i++) {
            bench_cell *c = cells[i];
            if (c->once && r > 0) continue;
            double t0 = bench_now();
            for (long it = 0; it < c->iters; it++) c->run(c->ctx);
            c->rep[c->nrep++] = (bench_now() - t0) / (double)c->iters * c->scale;
        }
    }
    for (int i = 0; i < n; i++) {
        bench_cell *c = cells[i];
        double tmp[BENCH_MAXREP];
        memcpy(tmp, c->rep, sizeof(double) * (size_t)c->nrep);
        qsort(tmp, (size_t)c->nrep, sizeof(double), cmp_double);
        c->median = c->nrep % 2 ? tmp[c->nrep / 2] : 0.5 * (tmp[c->nrep / 2 - 1] + tmp[c->nrep / 2]);
    }
}

/* ---- robots ------------------------------------------------------------------------------- */

void bench_robot_load(bench_robot *r, const char *name, const char *json, const char *xml)
{
    sid_error err = {0};
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", name);
    if (robot_json_load(json, &r->desc, NULL, &err)) bench_die("%s: %s (run from the repository root)", json, err.msg);
    bench_check(sid_model_create(&r->m, &r->theta, &r->desc, &err), &err, json);
    r->nv = sid_model_nv(r->m);
    if (sid_model_nq(r->m) != r->nv || sid_model_ndof_joints(r->m) != r->nv)
        bench_die("%s: expected one coordinate per moving joint", json);
    for (int k = 0; k < r->nv; k++) {
        const sid_joint_desc *jd = &r->desc.joint[sid_model_dof_joint_desc(r->m, k)];
        r->gain[k] = sid_model_dof_joint_has_motor(r->m, k) ? jd->gear * jd->kt : 0.0;
        r->prismatic[k] = sid_model_dof_joint_is_prismatic(r->m, k);
        r->act[k] = -1;
    }
    if (!xml) return;
    char errstr[1000] = "";
    r->mm = mj_loadXML(xml, NULL, errstr, sizeof errstr);
    if (!r->mm) bench_die("%s: %s", xml, errstr);
    r->md = mj_makeData(r->mm);
    if (r->mm->nq != r->nv || r->mm->nv != r->nv) bench_die("%s: not the twin of %s (nq %d)", xml, json, r->mm->nq);
    for (int k = 0; k < r->nv; k++) {
        const char *jname = sid_model_dof_joint_name(r->m, k);
        const int jid = mj_name2id(r->mm, mjOBJ_JOINT, jname);
        if (jid < 0) bench_die("%s: joint %s missing", xml, jname);
        r->qadr[k] = r->mm->jnt_qposadr[jid];
        r->dadr[k] = r->mm->jnt_dofadr[jid];
        for (int a = 0; a < r->mm->nu; a++)
            if (r->mm->actuator_trntype[a] == mjTRN_JOINT && r->mm->actuator_trnid[2 * a] == jid) r->act[k] = a;
        if ((r->act[k] >= 0) != (r->gain[k] != 0)) bench_die("%s: joint %s: motors differ", xml, jname);
    }
}

void bench_robot_free(bench_robot *r)
{
    if (r->md) mj_deleteData(r->md);
    if (r->mm) mj_deleteModel(r->mm);
    sid_free(r->theta);
    sid_model_free(r->m);
    robot_desc_free(&r->desc);
}

/* ---- commands and logs -------------------------------------------------------------------- */

#define NTONE 10

static double phase(int k, int j)
{
    /* a fixed pseudo-random phase per dof and tone (xorshift of the pair) */
    unsigned long long x = 88172645463325252ull ^ ((unsigned long long)(k * NTONE + j + 1) * 0x9E3779B97F4A7C15ull);
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return 2 * 3.14159265358979323846 * (double)(x >> 11) * (1.0 / 9007199254740992.0);
}

void bench_command(const bench_robot *r, const double *amp, double t, double *u)
{
    for (int k = 0; k < r->nv; k++) {
        u[k] = 0;
        if (r->gain[k] == 0) continue;
        for (int j = 1; j <= NTONE; j++) u[k] += sin(2 * 3.14159265358979323846 * 0.2 * j * t + phase(k, j));
        u[k] *= amp[k] / sqrt((double)NTONE);
    }
}

sid_traj *bench_log_make(const bench_robot *r, const double *theta, const double *q0, const double *amp, double T)
{
    const int nv = r->nv, n = (int)lround(T * 1000) + 1;
    sid_traj *tr = sid_traj_create(n, nv, nv, 1);
    double *q = malloc(sizeof(double) * (size_t)n * (size_t)nv), *v = malloc(sizeof(double) * (size_t)n * (size_t)nv);
    if (!tr || !q || !v) bench_die("out of memory");
    for (int k = 0; k < n; k++) {
        tr->t[k] = k * 1e-3;
        bench_command(r, amp, tr->t[k], tr->u + (size_t)k * (size_t)nv);
    }
    memcpy(tr->q, q0, sizeof(double) * (size_t)nv);
    memset(tr->qd, 0, sizeof(double) * (size_t)nv);
    sid_sim_opts o;
    sid_sim_opts_defaults(&o);
    sid_error err = {0};
    bench_check(sid_simulate(r->m, theta ? theta : r->theta, tr, &o, q, v, &err), &err, r->name);
    memcpy(tr->q, q, sizeof(double) * (size_t)n * (size_t)nv);
    memcpy(tr->qd, v, sizeof(double) * (size_t)n * (size_t)nv);
    free(q);
    free(v);
    return tr;
}
