/* traj.c — a logged trajectory in memory: sample times, measured q and qd, commands u. */
#include "linalg.h"
#include "model.h"

#include <math.h>

#include <string.h>

sid_traj *sid_traj_create(int n, int nq, int nv, int has_qd)
{
    sid_traj *tr = sid_alloc(sizeof *tr);
    if (!tr) return NULL;
    tr->n = n;
    tr->nq = nq;
    tr->nv = nv;
    const size_t N = (size_t)(n > 0 ? n : 1);
    tr->t = sid_alloc(N * sizeof(double));
    tr->q = sid_alloc(N * (size_t)(nq > 0 ? nq : 1) * sizeof(double));
    tr->u = sid_alloc(N * (size_t)(nv > 0 ? nv : 1) * sizeof(double));
    tr->qd = has_qd ? sid_alloc(N * (size_t)(nv > 0 ? nv : 1) * sizeof(double)) : NULL;
    if (!tr->t || !tr->q || !tr->u || (has_qd && !tr->qd)) {
        sid_traj_free(tr);
        return NULL;
    }
    return tr;
}

void sid_traj_free(sid_traj *tr)
{
    if (!tr) return;
    sid_free(tr->t);
    sid_free(tr->q);
    sid_free(tr->qd);
    sid_free(tr->u);
    sid_free(tr->push);
    sid_free(tr->tau);
    sid_free(tr->tau_has);
    sid_free(tr);
}

void sid_traj_velocity(const sid_model *m, const sid_traj *tr, int k, double *v)
{
    if (tr->qd) memcpy(v, tr->qd + (size_t)k * (size_t)tr->nv, sizeof(double) * (size_t)tr->nv);
    else sid_traj_velocity_from_q(m, tr, k, v);
}

/* Body angular velocity that turns unit quaternion a into b in time dt: the rotation
 * conj(a) b as axis * angle / dt (the shorter way round). */
static void quat_rate(const double *a, const double *b, double dt, double *w)
{
    double r[4] = {a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3],
                   a[0] * b[1] - a[1] * b[0] - a[2] * b[3] + a[3] * b[2],
                   a[0] * b[2] + a[1] * b[3] - a[2] * b[0] - a[3] * b[1],
                   a[0] * b[3] - a[1] * b[2] + a[2] * b[1] - a[3] * b[0]};
    if (r[0] < 0)
        for (int k = 0; k < 4; k++) r[k] = -r[k];
    const double s = sqrt(r[1] * r[1] + r[2] * r[2] + r[3] * r[3]);
    const double f = s > 1e-12 ? 2 * atan2(s, r[0]) / s : 2 / (r[0] > 0 ? r[0] : 1);
    for (int k = 0; k < 3; k++) w[k] = f * r[1 + k] / dt;
}

/* A difference over +-2 samples (one-sided at the ends) smooths encoder quantisation while
 * staying centred on the sample. */
void sid_traj_velocity_from_q(const sid_model *m, const sid_traj *tr, int k, double *v)
{
    if (tr->n < 2) {
        memset(v, 0, sizeof(double) * (size_t)tr->nv);
        return;
    }
    int lo = k - 2, hi = k + 2;
    if (lo < 0) lo = 0;
    if (hi > tr->n - 1) hi = tr->n - 1;
    const double dt = tr->t[hi] - tr->t[lo];
    const double *qlo = tr->q + (size_t)lo * (size_t)tr->nq, *qhi = tr->q + (size_t)hi * (size_t)tr->nq;
    for (int b = 1; b < m->nbody; b++) {
        const sid_body *bd = &m->body[b];
        if (bd->qadr < 0) continue;
        const int iq = bd->qadr, iv = bd->vadr;
        if (bd->type != SID_JOINT_FREE) {
            v[iv] = (qhi[iq] - qlo[iq]) / dt;
            continue;
        }
        for (int j = 0; j < 3; j++) v[iv + j] = (qhi[iq + j] - qlo[iq + j]) / dt;
        double a[4], c[4], na = 0, nc = 0;
        for (int j = 0; j < 4; j++) na += qlo[iq + 3 + j] * qlo[iq + 3 + j], nc += qhi[iq + 3 + j] * qhi[iq + 3 + j];
        for (int j = 0; j < 4; j++) a[j] = qlo[iq + 3 + j] / sqrt(na), c[j] = qhi[iq + 3 + j] / sqrt(nc);
        quat_rate(a, c, dt, v + iv + 3);
    }
}
