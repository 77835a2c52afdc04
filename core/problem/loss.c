/* loss.c — the trajectory error of one sample and its seeds: the residuals simulated minus
 * logged q and qd, each joint's signal divided by its scale and weighted,
 *     loss = 1/2 sum_r w_r (delta_r / scale_r)^2 / nres,
 * with the seed d(loss)/dx that the backward pass adds at each sample (adjoint.c), and the
 * same residuals as rows r = sqrt(w) delta / scale with their tangents (jacobian.c). */
#include "problem.h"

/* Error of the simulated q against the logged one at a sample, as the encoders read it
 * (measure.h: q + offset - q_log); for a free joint's quaternion, against the logged sign nearer
 * the simulated one (q and -q are the same orientation), so the error is smooth where it is small. */
static void q_error(const sid_model *m, const double *theta, const double *x, const double *ql, double *d)
{
    for (int i = 0; i < m->nqo; i++) d[i] = x[i] - ql[i];   /* the logged coordinates only */
    sid_measure_q(m, theta, d);
    for (int b = 1; b < m->nbody; b++) {
        const sid_body *bd = &m->body[b];
        if (bd->type != SID_JOINT_FREE) continue;
        const double *qs = x + bd->qadr + 3, *qm = ql + bd->qadr + 3;
        if (qs[0] * qm[0] + qs[1] * qm[1] + qs[2] * qm[2] + qs[3] * qm[3] < 0)
            for (int j = 0; j < 4; j++) d[bd->qadr + 3 + j] = qs[j] + qm[j];
    }
}

void sid_loss_residual(const sid_sample *smp, const double *x, const sid_loss_sums *sums, double *xbar,
                       double *thetabar)
{
    const sid_problem *p = smp->p;
    const sid_traj *tr = smp->tr;
    const double *theta = smp->theta;
    const int k = smp->k;
    double *sum = sums->sum, *sse_q = sums->sse_q, *sse_qd = sums->sse_qd;
    const sid_model *m = p->m;
    const int nq = m->nqo, nv = m->nvo;   /* logged; the state's v starts at x + m->nq */
    const double *v = x + m->nq;
    double d[7 * SID_MAX_JOINTS], dbar[7 * SID_MAX_JOINTS];
    q_error(m, theta, x, tr->q + (size_t)k * (size_t)nq, d);
    for (int i = 0; i < nq; i++) {
        if (sse_q) sse_q[i] += d[i] * d[i];
        if (p->o.weight_q <= 0) continue;
        const double g = p->o.weight_q / (p->sq[i] * p->sq[i]);
        *sum += 0.5 * g * d[i] * d[i];
        dbar[i] = g * d[i];
        if (xbar) xbar[i] += dbar[i];
    }
    if (xbar && p->o.weight_q > 0) sid_measure_q_vjp(m, dbar, thetabar);
    if (!tr->qd) return;
    const double *vl = tr->qd + (size_t)k * (size_t)nv;
    for (int i = 0; i < nv; i++) {
        const double dv = v[i] - vl[i];
        if (sse_qd) sse_qd[i] += dv * dv;
        if (p->o.weight_qd <= 0) continue;
        const double g = p->o.weight_qd / (p->sqd[i] * p->sqd[i]);
        *sum += 0.5 * g * dv * dv;
        if (xbar) xbar[m->nq + i] += g * dv;
    }
}


void sid_loss_residual_rows(const sid_sample *smp, const double *x, const sid_sample_dirs *dirs, sid_rows *out)
{
    const sid_problem *p = smp->p;
    const sid_traj *tr = smp->tr;
    const double *theta = smp->theta, *qdot = dirs->qdot, *vdot = dirs->vdot;
    const int k = smp->k, ndir = dirs->ndir, nfree = dirs->nfree, *idx = dirs->idx;
    double *r = out->r, *J = out->J;
    const sid_model *m = p->m;
    const int nq = m->nq, nv = m->nv, nqo = m->nqo, nvo = m->nvo;   /* tangents: the state's; logs: logged */
    int n = 0;
    if (p->o.weight_q > 0) {
        double d[7 * SID_MAX_JOINTS];
        q_error(m, theta, x, tr->q + (size_t)k * (size_t)nqo, d);
        for (int b = 1; b < m->nbody; b++) {
            const sid_body *bd = &m->body[b];
            if (bd->qadr < 0) continue;
            const int po = sid_measure_offset_param(m, b);   /* d q_error / d offset = 1 */
            for (int i = bd->qadr; i < bd->qadr + (bd->type == SID_JOINT_FREE ? 7 : 1); i++) {
                const double g = sqrt(p->o.weight_q) / p->sq[i];
                r[n] = g * d[i];
                for (int dd = 0; dd < ndir; dd++)
                    J[(size_t)n * (size_t)ndir + (size_t)dd] =
                        g * (qdot[(size_t)dd * (size_t)nq + (size_t)i] + (dd < nfree && idx[dd] == po));
                n++;
            }
        }
    }
    if (p->o.weight_qd > 0 && tr->qd)
        for (int i = 0; i < nvo; i++) {
            const double g = sqrt(p->o.weight_qd) / p->sqd[i];
            r[n] = g * (x[nq + i] - tr->qd[(size_t)k * (size_t)nvo + (size_t)i]);
            for (int d = 0; d < ndir; d++)
                J[(size_t)n * (size_t)ndir + (size_t)d] = g * vdot[(size_t)d * (size_t)nv + (size_t)i];
            n++;
        }
    out->n = n;
}
