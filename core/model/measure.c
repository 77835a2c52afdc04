/* measure.c — the encoder's reading of a position and its inverse (measure.h). */
#include "measure.h"

void sid_measure_q(const sid_model *m, const double *theta, double *q)
{
    for (int b = 1; b < m->nbody; b++)
        if (m->body[b].p_dof >= 0) q[m->body[b].qadr] += theta[m->body[b].p_dof + P_OFFSET];
}

void sid_unmeasure_q(const sid_model *m, const double *theta, double *q)
{
    for (int b = 1; b < m->nbody; b++)
        if (m->body[b].p_dof >= 0) q[m->body[b].qadr] -= theta[m->body[b].p_dof + P_OFFSET];
}

void sid_measure_q_vjp(const sid_model *m, const double *qbar, double *thetabar)
{
    for (int b = 1; b < m->nbody; b++)
        if (m->body[b].p_dof >= 0) thetabar[m->body[b].p_dof + P_OFFSET] += qbar[m->body[b].qadr];
}

void sid_unmeasure_q_vjp(const sid_model *m, const double *qbar, double *thetabar)
{
    for (int b = 1; b < m->nbody; b++)
        if (m->body[b].p_dof >= 0) thetabar[m->body[b].p_dof + P_OFFSET] -= qbar[m->body[b].qadr];
}

void sid_unmeasure_q_jvp(const sid_model *m, const double *thetadot, double *qdot)
{
    for (int b = 1; b < m->nbody; b++) {
        const sid_body *bd = &m->body[b];
        if (bd->p_dof < 0) continue;
        qdot[bd->qadr] -= thetadot[bd->p_dof + P_OFFSET];
        if (bd->bl_q >= 0) qdot[bd->bl_q] -= thetadot[bd->p_dof + P_OFFSET];
    }
}

void sid_model_q_from_measured(const sid_model *m, const double *theta, const double *qm, double *q)
{
    for (int i = 0; i < m->nqo; i++) q[i] = qm[i];
    sid_unmeasure_q(m, theta, q);
}
