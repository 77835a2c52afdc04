/* test_shard.c — core's shard hook (sid_problem_set_shard), what sysid-mpi is built on, without
 * MPI: 1, 2 and 3 "ranks" as threads of this process, each with its own problem computing only
 * its block of the chunks, their gather a copy through shared memory between two barriers.
 * Every rank must end with the bits of one unsharded problem: loss, gradient, start-state
 * gradient, RMSE, L-BFGS and LM fits with fitted start states, and the covariance with its
 * robust interval and diagnostics; and a chunk that fails on one rank fails every rank with
 * its error, naming that rank if it ran out of memory. (tests/cli_mpi.sh runs the same through MPI; this one also runs under the
 * sanitizers, which leave MPI out.) */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "normal.h"
#include "problem.h"
#include "test_util.h"

Suite *shard_suite(void);

#define MAX_RANKS 3

/* The "ranks" of one run: their buffers at the current gather, met at two barriers. */
typedef struct {
    pthread_barrier_t bar;
    int size;
    void *buf[MAX_RANKS];
} world;

typedef struct {
    world *wd;
    int rank;
} rank_ctx;

/* The gather (sid_shard_gather_fn): post this rank's buffer, copy the others' parts of theirs. */
static sid_status copy_gather(void *ctx, void *buf, const size_t *off, sid_error *err)
{
    rank_ctx *c = ctx;
    world *wd = c->wd;
    (void)err;
    wd->buf[c->rank] = buf;
    pthread_barrier_wait(&wd->bar);
    for (int r = 0; r < wd->size; r++)
        if (r != c->rank)
            memcpy((char *)buf + off[r], (const char *)wd->buf[r] + off[r], off[r + 1] - off[r]);
    pthread_barrier_wait(&wd->bar);
    return SID_OK;
}

/* What a run computes, compared to the bit. */
typedef struct {
    double loss, rmse_q[8], rmse_qd[8];
    double *grad, *gx0;                     /* (np), (nwin nx) */
    double *theta_lm, *x0_lm, *theta_bfgs, *x0_bfgs;
    sid_fit_result r_lm, r_bfgs;
    sid_covariance_result *cov;
    sid_status bad;                         /* loss at a diverging theta */
    sid_error bad_err;
} results;

/* The shared inputs. */
typedef struct {
    sid_model *m;
    const double *theta;
    sid_traj *log[3];
    int nlog;
    sid_loss_opts o;
    int nf, idx[16];
    double lo[16], hi[16];
} setup;

typedef struct {
    const setup *s;
    world *wd;
    int rank;          /* size 0 in wd: unsharded */
    results *out;
    int ok;
    char msg[600];
    sid_problem *p;    /* made already (with this rank's stubs), else NULL */
} job;

static void *run(void *arg)
{
    job *j = arg;
    const setup *s = j->s;
    sid_error err = {0};
    sid_problem *p = j->p;
    results *o = j->out;
    if (!p && sid_problem_create(&p, s->m, (const sid_traj *const *)s->log, s->nlog, &s->o, &err)) {
        snprintf(j->msg, sizeof j->msg, "create: %s", err.msg);
        return NULL;
    }
    rank_ctx ctx = { j->wd, j->rank };
    if (j->wd->size && !j->p) {
        const sid_shard sh = { j->rank, j->wd->size, copy_gather, &ctx };
        sid_problem_set_shard(p, &sh);
    }
    const int np = sid_model_nparam(s->m), nx = sid_model_nq(s->m) + sid_model_nv(s->m), nwin = sid_problem_nwindows(p);
    const size_t nw = (size_t)nwin * (size_t)nx;
    o->grad = malloc(sizeof(double) * (size_t)np);
    o->gx0 = malloc(sizeof(double) * nw);
    o->theta_lm = malloc(sizeof(double) * (size_t)np);
    o->theta_bfgs = malloc(sizeof(double) * (size_t)np);
    o->x0_lm = malloc(sizeof(double) * nw);
    o->x0_bfgs = malloc(sizeof(double) * nw);
    o->cov = calloc(1, sizeof *o->cov);
    double *x0 = malloc(sizeof(double) * nw);
    sid_problem_start_states(p, s->theta, x0);
    for (size_t k = 0; k < nw; k++) x0[k] += 1e-3 * sin((double)k + 1.0);   /* not the logged ones exactly */
    sid_fit_opts fo;
    sid_fit_opts_defaults(&fo);
    fo.nfree = s->nf, fo.idx = s->idx, fo.lo = s->lo, fo.hi = s->hi;
    sid_status st = sid_problem_loss(p, s->theta, x0, &o->loss, o->grad, o->gx0, &err);
    if (!st) st = sid_problem_rmse(p, s->theta, x0, o->rmse_q, o->rmse_qd, &err);
    memcpy(o->theta_bfgs, s->theta, sizeof(double) * (size_t)np);
    memcpy(o->x0_bfgs, x0, sizeof(double) * nw);
    fo.max_iter = 6;
    if (!st) st = sid_fit(p, o->theta_bfgs, o->x0_bfgs, &fo, &o->r_bfgs, &err);
    memcpy(o->theta_lm, s->theta, sizeof(double) * (size_t)np);
    memcpy(o->x0_lm, x0, sizeof(double) * nw);
    fo.optimizer = SID_OPT_LM, fo.max_iter = 3;
    if (!st) st = sid_fit(p, o->theta_lm, o->x0_lm, &fo, &o->r_lm, &err);
    if (!st) st = sid_problem_covariance(p, o->theta_lm, o->x0_lm, s->nf, s->idx, NULL, o->cov, &err);
    /* a point whose simulation blows up: every rank must return the same failure */
    double *wild = malloc(sizeof(double) * (size_t)np);
    memcpy(wild, s->theta, sizeof(double) * (size_t)np);
    for (int k = 0; k < s->nf; k++) wild[s->idx[k]] = -1e6;
    double l;
    o->bad = st ? SID_OK : sid_problem_loss(p, wild, x0, &l, NULL, NULL, &o->bad_err);
    free(wild);
    free(x0);
    sid_problem_free(p);
    if (st) snprintf(j->msg, sizeof j->msg, "rank %d: %s", j->rank, err.msg);
    else j->ok = 1;
    return NULL;
}

static void results_free(results *o)
{
    free(o->grad), free(o->gx0), free(o->theta_lm), free(o->x0_lm), free(o->theta_bfgs), free(o->x0_bfgs);
    free(o->cov);
}

/* The bits of a against the reference b. */
static void same(const results *a, const results *b, int np, size_t nw, int nf, int rank, int size)
{
#define SAME(x, n) ck_assert_msg(!memcmp(a->x, b->x, sizeof(*a->x) * (size_t)(n)), "rank %d of %d: " #x " differs", rank, size)
    ck_assert_msg(!memcmp(&a->loss, &b->loss, sizeof a->loss), "rank %d of %d: loss differs", rank, size);
    SAME(grad, np);
    SAME(gx0, nw);
    SAME(rmse_q, 8);
    SAME(rmse_qd, 8);
    SAME(theta_bfgs, np);
    SAME(x0_bfgs, nw);
    SAME(theta_lm, np);
    SAME(x0_lm, nw);
    ck_assert_int_eq(a->r_bfgs.evaluations, b->r_bfgs.evaluations);
    ck_assert_int_eq(a->r_lm.evaluations, b->r_lm.evaluations);
    ck_assert_int_eq(a->r_lm.iterations, b->r_lm.iterations);
    SAME(cov->cov, nf * nf);
    SAME(cov->stderr_, nf);
    SAME(cov->stderr_robust, nf);
    SAME(cov->lag1, a->cov->nchan);
    SAME(cov->rms, a->cov->nchan);
    SAME(cov->noise, a->cov->nchan);
    ck_assert_msg(!memcmp(&a->cov->sigma2, &b->cov->sigma2, sizeof(double)), "rank %d: sigma2 differs", rank);
    ck_assert_int_eq(a->bad, b->bad);
    ck_assert_str_eq(a->bad_err.msg, b->bad_err.msg);
#undef SAME
}

/* Free s's viscous friction (and with armature its armature) where nominal is positive, within
 * [0.1, 10] x nominal; the truth (returned, malloc'd) has them 30 % higher. */
static double *free_and_truth(setup *s, int armature)
{
    const int np = sid_model_nparam(s->m);
    int mask[1024] = {0};
    sid_model_param_match(s->m, "joints.*.friction.viscous", mask);
    if (armature) sid_model_param_match(s->m, "joints.*.armature", mask);
    double *truth = malloc(sizeof(double) * (size_t)np);
    ck_assert_ptr_nonnull(truth);
    memcpy(truth, s->theta, sizeof(double) * (size_t)np);
    for (int i = 0; i < np && s->nf < 16; i++)
        if (mask[i] && s->theta[i] > 0) {
            truth[i] *= 1.3;
            s->lo[s->nf] = 0.1 * s->theta[i], s->hi[s->nf] = 10 * s->theta[i];
            s->idx[s->nf++] = i;
        }
    return truth;
}

START_TEST(ranks_give_the_bits_of_one_process)
{
    /* 3 joints with friction and motors; two logs (0.4 s and 0.3 s at 1 kHz) in 0.05 s windows:
     * 14 windows, 14 chunks, split 14 / 7+7 / 4+5+5 over the ranks */
    setup s = {0};
    sid_robot_desc *desc = tu_random_robot(43, 3, TU_FRICTION | TU_MOTORS);
    double *theta;
    sid_error err = {0};
    ck_assert_msg(sid_model_create(&s.m, &theta, desc, &err) == SID_OK, "%s", err.msg);
    tu_desc_free(desc);
    s.theta = theta;
    const int np = sid_model_nparam(s.m), nx = sid_model_nq(s.m) + sid_model_nv(s.m);
    ck_assert_int_le(nx, 8);
    double *truth = free_and_truth(&s, 1);
    ck_assert_int_ge(s.nf, 4);
    s.nlog = 2;
    s.log[0] = tu_synth_log(s.m, truth, 401, 1e-3, 0.4, 3);
    s.log[1] = tu_synth_log(s.m, truth, 301, 1e-3, 0.4, 4);
    tu_add_noise(s.log[0], 1e-3, 1e-2, 5);
    tu_add_noise(s.log[1], 1e-3, 1e-2, 6);
    sid_loss_opts_defaults(&s.o);
    s.o.window = 0.05;
    s.o.estimate_start = 1;
    s.o.threads = 1;

    world none = { .size = 0 };
    results ref = {0};
    job j0 = { &s, &none, 0, &ref, 0, "", NULL };
    run(&j0);
    ck_assert_msg(j0.ok, "%s", j0.msg);
    ck_assert_int_ge(ref.r_lm.iterations, 1);
    ck_assert_int_ne(ref.bad, SID_OK);   /* the failure case does fail */
    sid_problem *p;
    ck_assert(sid_problem_create(&p, s.m, (const sid_traj *const *)s.log, 2, &s.o, &err) == SID_OK);
    const int nwin = sid_problem_nwindows(p);
    sid_problem_free(p);
    ck_assert_int_ge(nwin, 12);

    for (int size = 1; size <= MAX_RANKS; size++) {
        world wd = { .size = size };
        pthread_barrier_init(&wd.bar, NULL, (unsigned)size);
        results out[MAX_RANKS];
        job jobs[MAX_RANKS];
        pthread_t th[MAX_RANKS];
        memset(out, 0, sizeof out);
        for (int r = 0; r < size; r++) {
            jobs[r] = (job){ &s, &wd, r, &out[r], 0, "", NULL };
            ck_assert_int_eq(pthread_create(&th[r], NULL, run, &jobs[r]), 0);
        }
        for (int r = 0; r < size; r++) pthread_join(th[r], NULL);
        pthread_barrier_destroy(&wd.bar);
        for (int r = 0; r < size; r++) {
            ck_assert_msg(jobs[r].ok, "%s", jobs[r].msg);
            same(&out[r], &ref, np, (size_t)nwin * (size_t)nx, s.nf, r, size);
            results_free(&out[r]);
        }
    }
    results_free(&ref);
    sid_traj_free(s.log[0]);
    sid_traj_free(s.log[1]);
    free(truth);
    sid_free(theta);
    sid_model_free(s.m);
}
END_TEST

/* Sharded reading (mpi/shard_read.c): each rank's problem made with only the logs its chunks
 * touch and stubs of the others (their times and summaries, sid_traj_stub), three logs of
 * different lengths, one without velocities (so a rank may hold no log that has them): every
 * rank still ends with the bits of one process that holds them all, the noise floor's median
 * (a distributed selection) too; and a problem whose windows need a stub is refused. */
START_TEST(ranks_with_stubs_give_the_bits_of_one_process)
{
    setup s = {0};
    sid_robot_desc *desc = tu_random_robot(45, 2, TU_FRICTION | TU_MOTORS);
    double *theta;
    sid_error err = {0};
    ck_assert_msg(sid_model_create(&s.m, &theta, desc, &err) == SID_OK, "%s", err.msg);
    tu_desc_free(desc);
    s.theta = theta;
    const int np = sid_model_nparam(s.m), nx = sid_model_nq(s.m) + sid_model_nv(s.m);
    double *truth = free_and_truth(&s, 0);
    ck_assert_int_ge(s.nf, 2);
    s.nlog = 3;
    s.log[0] = tu_synth_log(s.m, truth, 251, 1e-3, 0.4, 9);
    s.log[1] = tu_synth_log(s.m, truth, 121, 1e-3, 0.4, 10);
    s.log[2] = tu_synth_log(s.m, truth, 181, 1e-3, 0.4, 11);
    for (int l = 0; l < 3; l++) tu_add_noise(s.log[l], 1e-3, 1e-2, 12 + (unsigned)l);
    sid_free(s.log[1]->qd);   /* positions only: its velocities come from differences */
    s.log[1]->qd = NULL;
    sid_loss_opts_defaults(&s.o);
    s.o.window = 0.05;
    s.o.estimate_start = 1;
    s.o.threads = 1;
    const size_t nsum = sid_log_summary_size(s.m);
    double *sum = malloc(sizeof(double) * 3 * nsum);

    world none = { .size = 0 };
    results ref = {0};
    job j0 = { &s, &none, 0, &ref, 0, "", NULL };
    run(&j0);
    ck_assert_msg(j0.ok, "%s", j0.msg);
    sid_problem *p;
    ck_assert(sid_problem_create(&p, s.m, (const sid_traj *const *)s.log, 3, &s.o, &err) == SID_OK);
    const int nwin = sid_problem_nwindows(p);
    sid_problem_free(p);

    for (int size = 2; size <= MAX_RANKS; size++) {
        world wd = { .size = size };
        pthread_barrier_init(&wd.bar, NULL, (unsigned)size);
        results out[MAX_RANKS];
        job jobs[MAX_RANKS];
        pthread_t th[MAX_RANKS];
        rank_ctx ctx[MAX_RANKS];
        sid_traj *held[MAX_RANKS][3];
        int stubs = 0;
        memset(out, 0, sizeof out);
        for (int r = 0; r < size; r++) {
            /* what shard_read.c does: the rank's logs, stubs of the others */
            ctx[r] = (rank_ctx){ &wd, r };
            const sid_shard sh = { r, size, copy_gather, &ctx[r] };
            int need[3];
            sid_shard_logs_needed((const sid_traj *const *)s.log, 3, &s.o, &sh, need);
            for (int l = 0; l < 3; l++) {
                /* the running sums through log l, as the chain of ranks makes them */
                sid_log_summarize(s.m, s.log[l], l ? sum + (size_t)(l - 1) * nsum : NULL, sum + (size_t)l * nsum);
                held[r][l] = need[l] ? s.log[l] : sid_traj_stub(s.m, s.log[l]->n, s.log[l]->t, sum + (size_t)l * nsum);
                ck_assert_ptr_nonnull(held[r][l]);
                ck_assert_int_eq(sid_traj_has_velocities(held[r][l]), l != 1);
                stubs += !need[l];
            }
            /* the rank's problem starts with its shard, as every problem of sysid-mpi does */
            sid_shard_set_default(&sh);
            sid_status st = sid_problem_create(&p, s.m, (const sid_traj *const *)held[r], 3, &s.o, &err);
            sid_shard_set_default(NULL);
            ck_assert_msg(st == SID_OK, "rank %d of %d: %s", r, size, err.msg);
            jobs[r] = (job){ &s, &wd, r, &out[r], 0, "", p };
        }
        ck_assert_int_ge(stubs, 2);   /* some rank holds only some of the logs */
        for (int r = 0; r < size; r++) ck_assert_int_eq(pthread_create(&th[r], NULL, run, &jobs[r]), 0);
        for (int r = 0; r < size; r++) pthread_join(th[r], NULL);
        pthread_barrier_destroy(&wd.bar);
        for (int r = 0; r < size; r++) {
            ck_assert_msg(jobs[r].ok, "%s", jobs[r].msg);
            same(&out[r], &ref, np, (size_t)nwin * (size_t)nx, s.nf, r, size);
            results_free(&out[r]);
        }
        /* a problem of one process holding stubs is refused: its windows need them; and a stub
         * is refused elsewhere than at its place in its list (its sums are of the logs before) */
        ck_assert_int_eq(sid_problem_create(&p, s.m, (const sid_traj *const *)held[0], 3, &s.o, &err), SID_ERR_INPUT);
        ck_assert_msg(strstr(err.msg, "not read by this process"), "%s", err.msg);
        for (int l = 1; l < 3; l++)
            if (held[0][l] != s.log[l]) {
                ck_assert_int_eq(sid_problem_create(&p, s.m, (const sid_traj *const *)&held[0][l], 1, &s.o, &err),
                                 SID_ERR_INPUT);
                ck_assert_msg(strstr(err.msg, "another list of logs"), "%s", err.msg);
            }
        for (int r = 0; r < size; r++)
            for (int l = 0; l < 3; l++)
                if (held[r][l] != s.log[l]) sid_traj_free(held[r][l]);
    }
    results_free(&ref);
    for (int l = 0; l < 3; l++) sid_traj_free(s.log[l]);
    free(sum);
    free(truth);
    sid_free(theta);
    sid_model_free(s.m);
}
END_TEST

/* One rank runs out of memory in a chunk of the normal equations (the window callback says
 * so, as an allocation would): every rank returns that error, naming the rank that had it. */
typedef struct {
    const setup *s;
    world *wd;
    int rank, fail_window;
    sid_status st;
    sid_error err;
    int chunk;      /* the failing window's chunk */
} oom_job;

static sid_status oom_at(void *ctx, sid_normal_sums *S, int w, sid_error *err)
{
    (void)S;
    const oom_job *j = ctx;
    return w == j->fail_window ? sid_error_set(err, SID_ERR_NOMEM, "out of memory") : SID_OK;
}

static void *oom_run(void *arg)
{
    oom_job *j = arg;
    const setup *s = j->s;
    sid_problem *p;
    j->st = sid_problem_create(&p, s->m, (const sid_traj *const *)s->log, s->nlog, &s->o, &j->err);
    if (j->st) return NULL;
    rank_ctx ctx = { j->wd, j->rank };
    if (j->wd->size) {
        const sid_shard sh = { j->rank, j->wd->size, copy_gather, &ctx };
        sid_problem_set_shard(p, &sh);
    }
    j->chunk = j->fail_window / p->chunk_windows;
    double A[16 * 16], g[16], rr = 0;
    memset(A, 0, sizeof A), memset(g, 0, sizeof g);
    const sid_normal_pass np = {p, s->theta, NULL, s->nf, s->idx, NULL, 0, oom_at, j};
    j->st = sid_normal_run(&np, &(sid_normal_out){A, g, &rr, NULL}, &j->err);
    sid_problem_free(p);
    return NULL;
}

START_TEST(out_of_memory_names_the_rank)
{
    setup s = {0};
    sid_robot_desc *desc = tu_random_robot(44, 2, TU_FRICTION);
    double *theta;
    sid_error err = {0};
    ck_assert_msg(sid_model_create(&s.m, &theta, desc, &err) == SID_OK, "%s", err.msg);
    tu_desc_free(desc);
    s.theta = theta;
    int mask[1024] = {0};
    sid_model_param_match(s.m, "joints.*.friction.viscous", mask);
    for (int i = 0; i < sid_model_nparam(s.m) && s.nf < 16; i++)
        if (mask[i]) s.idx[s.nf++] = i;
    ck_assert_int_ge(s.nf, 1);
    s.nlog = 2;
    s.log[0] = tu_synth_log(s.m, theta, 201, 1e-3, 0.4, 7);
    s.log[1] = tu_synth_log(s.m, theta, 151, 1e-3, 0.4, 8);
    sid_loss_opts_defaults(&s.o);
    s.o.window = 0.05;
    s.o.threads = 1;
    /* unsharded: the error as it was */
    world none = { .size = 0 };
    oom_job ref = { &s, &none, 0, 5, 0, {0}, 0 };
    oom_run(&ref);
    ck_assert_int_eq(ref.st, SID_ERR_NOMEM);
    ck_assert_str_eq(ref.err.msg, "out of memory");
    for (int size = 2; size <= MAX_RANKS; size++) {
        world wd = { .size = size };
        pthread_barrier_init(&wd.bar, NULL, (unsigned)size);
        oom_job jobs[MAX_RANKS];
        pthread_t th[MAX_RANKS];
        for (int r = 0; r < size; r++) {
            jobs[r] = (oom_job){ &s, &wd, r, 5, 0, {0}, 0 };
            ck_assert_int_eq(pthread_create(&th[r], NULL, oom_run, &jobs[r]), 0);
        }
        for (int r = 0; r < size; r++) pthread_join(th[r], NULL);
        pthread_barrier_destroy(&wd.bar);
        /* the rank whose block of chunks holds the failing one, as sid_problem_set_shard splits them */
        sid_problem *p;
        ck_assert(sid_problem_create(&p, s.m, (const sid_traj *const *)s.log, 2, &s.o, &err) == SID_OK);
        const int nchunk = p->nchunk, c = jobs[0].chunk;
        sid_problem_free(p);
        int owner = -1;
        for (int r = 0; r < size; r++)
            if ((long)nchunk * r / size <= c && c < (long)nchunk * (r + 1) / size) owner = r;
        ck_assert_int_ge(owner, 1);   /* not rank 0: the others' failures are the point */
        char want[128];
        snprintf(want, sizeof want, "rank %d of %d, chunk %d: out of memory", owner, size, c);
        for (int r = 0; r < size; r++) {
            ck_assert_int_eq(jobs[r].st, SID_ERR_NOMEM);
            ck_assert_str_eq(jobs[r].err.msg, want);
        }
    }
    sid_traj_free(s.log[0]);
    sid_traj_free(s.log[1]);
    sid_free(theta);
    sid_model_free(s.m);
}
END_TEST

Suite *shard_suite(void)
{
    Suite *s = suite_create("shard");
    TCase *tc = tcase_create("ranks");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, ranks_give_the_bits_of_one_process);
    tcase_add_test(tc, out_of_memory_names_the_rank);
    tcase_add_test(tc, ranks_with_stubs_give_the_bits_of_one_process);
    suite_add_tcase(s, tc);
    return s;
}
