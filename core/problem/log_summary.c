/* log_summary.c — what a problem needs from every log (its noise, its residual sums), and a
 * log a process does not hold (sharded reading, mpi/): its times and that summary.
 *
 * With sysid-mpi each rank parses only the logs its chunks of windows touch. The others are
 * stubs: their time column (the windows, the tape's size and the step's work limits come from
 * it) and a summary of what a problem needs from every log (sid_log_summarize): the sample
 * count, which columns the log has, its per-column partial sums for the residual scales, and
 * its velocity noise (fitspec's start-velocity choice). A stub has no positions and no
 * commands (q and u NULL, which no loaded log has); nothing may simulate its windows. */
#include "linalg.h"
#include "problem.h"

#include <math.h>
#include <string.h>

typedef struct {
    sid_traj tr;         /* first: a stub is its sid_traj */
    double summary[];    /* sid_log_summary_size doubles */
} traj_stub;

size_t sid_log_summary_size(const sid_model *m)
{
    return SID_SUM_Q + 3 * (size_t)m->nqo + 5 * (size_t)m->nvo;   /* the last nqo: this log's position noise */
}

int sid_traj_is_stub(const sid_traj *tr) { return tr && !tr->q && !tr->u; }

const double *sid_traj_summary_of(const sid_traj *tr)
{
    return sid_traj_is_stub(tr) ? ((const traj_stub *)tr)->summary : NULL;
}

int sid_traj_has_velocities(const sid_traj *tr)
{
    const double *s = sid_traj_summary_of(tr);
    return s ? s[SID_SUM_HAS_QD] != 0 : tr->qd != NULL;
}

/* Continue the running sums *s1, *s2 over the samples of column i (stride apart) of x, in order. */
static void column_sums(const double *x, int n, int stride, int i, double *s1, double *s2)
{
    double a = *s1, b = *s2;
    for (int k = 0; k < n; k++) {
        const double y = x[(size_t)k * (size_t)stride + (size_t)i];
        a += y;
        b += y * y;
    }
    *s1 = a, *s2 = b;
}

void sid_log_sums(const sid_model *m, const sid_traj *tr, const double *prev, double *s)
{
    const size_t ns = sid_log_summary_size(m);
    const double *stub = sid_traj_summary_of(tr);
    if (stub) {
        memcpy(s, stub, sizeof(double) * ns);
        return;
    }
    const int nq = m->nqo, nv = m->nvo;
    if (prev) memcpy(s, prev, sizeof(double) * ns);
    else memset(s, 0, sizeof(double) * ns);
    s[SID_SUM_N] = tr->n;
    s[SID_SUM_HAS_QD] = tr->qd != NULL;
    s[SID_SUM_HAS_TAU] = tr->tau != NULL;
    s[SID_SUM_HAS_PUSH] = tr->push != NULL;
    s[SID_SUM_VEL_NOISE] = 0;
    s[SID_SUM_POS] = prev ? prev[SID_SUM_POS] + 1 : 0;
    s[SID_SUM_TAU_COLS] = 0;
    for (int i = 0; tr->tau && i < nv; i++) s[SID_SUM_TAU_COLS] += tr->tau_has[i] != 0;
    s[SID_SUM_RUN_N] += tr->n;
    s[SID_SUM_RUN_NQD] += tr->qd ? tr->n : 0;
    if (tr->tau) s[SID_SUM_RUN_TAU] = 1;
    if (tr->tau && tr->push) s[SID_SUM_RUN_TAU_PUSH] = 1;
    double *q1 = s + SID_SUM_Q, *q2 = q1 + nq, *v1 = q2 + nq, *v2 = v1 + nv, *th = v2 + nv, *t2 = th + nv,
           *tn = t2 + nv;
    for (int i = 0; i < nq; i++) column_sums(tr->q, tr->n, tr->nq, i, &q1[i], &q2[i]);
    for (int i = 0; tr->qd && i < nv; i++) column_sums(tr->qd, tr->n, tr->nv, i, &v1[i], &v2[i]);
    for (int i = 0; tr->tau && i < nv; i++) {
        if (!tr->tau_has[i]) continue;
        double dummy = 0;
        th[i] = 1;
        column_sums(tr->tau, tr->n, tr->nv, i, &dummy, &t2[i]);
        tn[i] += tr->n;
    }
    memset(s + ns - nq, 0, sizeof(double) * (size_t)nq);   /* this log's, not running: sid_log_summarize */
}

void sid_log_summarize(const sid_model *m, const sid_traj *tr, const double *prev, double *s)
{
    sid_log_sums(m, tr, prev, s);
    if (sid_traj_is_stub(tr)) return;
    double *v = sid_alloc(sizeof(double) * (size_t)(m->nv + 1));
    s[SID_SUM_VEL_NOISE] = v ? sid_traj_velocity_noise(m, tr, v) : 0;
    sid_free(v);
    sid_traj_position_noise(m, tr, s + sid_log_summary_size(m) - (size_t)m->nqo);
}

/* rms(logged qd - qd from positions) / rms(qd from positions) over the one-dof joints: near 0
 * for a velocity column that is the derivative of the positions, a sizeable fraction for one
 * that is noise (a motor's own velocity estimate). Free joints are left out: their logged
 * velocities follow a frame convention and impacts a difference of positions cannot. */
double sid_traj_velocity_noise(const sid_model *m, const sid_traj *tr, double *v)
{
    const double *stub = sid_traj_summary_of(tr);
    if (stub) return stub[SID_SUM_VEL_NOISE];   /* computed where the log was read */
    if (!tr->qd || tr->n < 5) return 0;
    double num = 0, den = 0;
    for (int k = 0; k < tr->n; k++) {
        sid_traj_velocity_from_q(m, tr, k, v);
        for (int b = 1; b < m->nbody; b++) {
            const sid_body *bd = &m->body[b];
            if (bd->vadr < 0 || bd->type == SID_JOINT_FREE) continue;
            const double d = tr->qd[(size_t)k * (size_t)tr->nv + (size_t)bd->vadr] - v[bd->vadr];
            num += d * d;
            den += v[bd->vadr] * v[bd->vadr];
        }
    }
    return den > 0 ? sqrt(num / den) : 0;
}

#define NOISE_SAMPLES 8192

void sid_traj_position_noise(const sid_model *m, const sid_traj *tr, double *noise)
{
    const int nq = m->nqo;
    const double *stub = sid_traj_summary_of(tr);
    if (stub) {
        memcpy(noise, stub + sid_log_summary_size(m) - (size_t)nq, sizeof(double) * (size_t)nq);
        return;
    }
    for (int i = 0; i < nq; i++) noise[i] = 0;
    if (!tr->q || tr->n < 9) return;
    const int span = tr->n - 4, stride = span > NOISE_SAMPLES ? span / NOISE_SAMPLES : 1, nd = (span + stride - 1) / stride;
    double *d = sid_alloc(sizeof(double) * (size_t)nd);
    if (!d) return;
    static const double binom[3] = {6, 20, 70};   /* C(2k, k), k = 2, 3, 4 */
    for (int i = 0; i < nq; i++) {
        double best = HUGE_VAL;
        for (int o = 0; o < 3; o++) {
            for (int j = 0; j < nd; j++) {
                const double *y = tr->q + (size_t)(j * stride) * (size_t)tr->nq + (size_t)i;
                const size_t st = (size_t)tr->nq;
                double x;
                if (o == 0) x = y[2 * st] - 2 * y[st] + y[0];
                else if (o == 1) x = y[3 * st] - 3 * y[2 * st] + 3 * y[st] - y[0];
                else x = y[4 * st] - 4 * y[3 * st] + 6 * y[2 * st] - 4 * y[st] + y[0];
                d[j] = fabs(x);
            }
            sid_sort_doubles(d, (size_t)nd);
            const double med = nd % 2 ? d[nd / 2] : 0.5 * (d[nd / 2 - 1] + d[nd / 2]);
            best = fmin(best, med / (0.6744897501960817 * sqrt(binom[o])));
        }
        noise[i] = best;
    }
    sid_free(d);
}

sid_traj *sid_traj_stub(const sid_model *m, int n, const double *t, const double *summary)
{
    const size_t ns = sid_log_summary_size(m);
    traj_stub *st = sid_alloc(sizeof *st + sizeof(double) * ns);
    if (!st) return NULL;
    memset(&st->tr, 0, sizeof st->tr);
    st->tr.n = n;
    st->tr.nq = m->nqo;
    st->tr.nv = m->nvo;
    if (!(st->tr.t = sid_alloc(sizeof(double) * (size_t)(n > 0 ? n : 1)))) {
        sid_free(st);
        return NULL;
    }
    memcpy(st->tr.t, t, sizeof(double) * (size_t)n);
    memcpy(st->summary, summary, sizeof(double) * ns);
    return &st->tr;
}
