/* traj.c — a logged trajectory in memory: sample times, measured q and qd, commands u. */
#include "sid.h"

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
    sid_free(tr);
}

void sid_traj_velocity(const sid_traj *tr, int k, double *v)
{
    if (tr->qd) memcpy(v, tr->qd + (size_t)k * (size_t)tr->nv, sizeof(double) * (size_t)tr->nv);
    else sid_traj_velocity_from_q(tr, k, v);
}

/* A difference over +-2 samples (one-sided at the ends) smooths encoder quantisation while
 * staying centred on the sample. Assumes nq == nv (no free joints). */
void sid_traj_velocity_from_q(const sid_traj *tr, int k, double *v)
{
    if (tr->n < 2) {
        memset(v, 0, sizeof(double) * (size_t)tr->nv);
        return;
    }
    int lo = k - 2, hi = k + 2;
    if (lo < 0) lo = 0;
    if (hi > tr->n - 1) hi = tr->n - 1;
    const double dt = tr->t[hi] - tr->t[lo];
    for (int i = 0; i < tr->nv; i++)
        v[i] = (tr->q[(size_t)hi * (size_t)tr->nq + (size_t)i] - tr->q[(size_t)lo * (size_t)tr->nq + (size_t)i]) / dt;
}
