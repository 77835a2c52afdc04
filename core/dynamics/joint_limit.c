/* joint_limit.c — the soft position limit of a joint (joint_limit.h): its generalised force, the
 * force's adjoint and tangent (the default gains: model_absent.c).
 *   tau_lim = -(k S(d_u) + b sigma(d_u) qd) + (k S(d_l) - b sigma(d_l) qd),
 *   d_u = q - upper, d_l = lower - q, S(d) = w log(1 + exp(d / w)), sigma = S'. */
#include "joint_limit.h"

#include <math.h>

/* S(d), sigma(d) = S'(d) and sigma'(d), without overflow: for d > 0, S = d + w log(1 + exp(-d / w)). */
static void softplus(double d, double *S, double *sig, double *dsig)
{
    const double w = SID_LIMIT_WIDTH, x = d / w;
    const double e = exp(-fabs(x));
    *S = (x > 0 ? d : 0) + w * log1p(e);
    *sig = x > 0 ? 1 / (1 + e) : e / (1 + e);
    *dsig = *sig * (1 - *sig) / w;
}

void sid_joint_limit_force(const sid_model *m, const double *theta, const double *q, const double *v, double *F)
{
    if (!m->nlimit) return;
    for (int b = 1; b < m->nbody; b++) {
        const sid_body *bd = &m->body[b];
        if (bd->p_limit < 0) continue;
        const double k = theta[bd->p_limit + P_LIMIT_STIFFNESS], c = theta[bd->p_limit + P_LIMIT_DAMPING];
        const double qi = q[bd->qadr], vi = v[bd->vadr];
        double S, sig, dsig, tau = 0;
        if (bd->p_limit_upper >= 0) {
            softplus(qi - theta[bd->p_limit_upper], &S, &sig, &dsig);
            tau -= k * S + c * sig * vi;
        }
        if (bd->p_limit_lower >= 0) {
            softplus(theta[bd->p_limit_lower] - qi, &S, &sig, &dsig);
            tau += k * S - c * sig * vi;
        }
        F[bd->vadr] += tau;
    }
}

void sid_joint_limit_force_vjp(const sid_fd_point *p, const double *Fbar, const sid_state_bar *bar)
{
    const sid_model *m = p->m;
    const double *theta = p->theta, *q = p->q, *v = p->v;
    double *qbar = bar->qbar, *vbar = bar->vbar, *thetabar = bar->thetabar;
    if (!m->nlimit) return;
    for (int b = 1; b < m->nbody; b++) {
        const sid_body *bd = &m->body[b];
        if (bd->p_limit < 0) continue;
        const double k = theta[bd->p_limit + P_LIMIT_STIFFNESS], c = theta[bd->p_limit + P_LIMIT_DAMPING];
        const double qi = q[bd->qadr], vi = v[bd->vadr], w = Fbar[bd->vadr];
        double *tl = thetabar + bd->p_limit, S, sig, dsig;
        if (bd->p_limit_upper >= 0) {
            /* d(tau)/d(d_u) = -(k sigma + c sigma' qd); d_u = q - upper */
            softplus(qi - theta[bd->p_limit_upper], &S, &sig, &dsig);
            const double g = -(k * sig + c * dsig * vi);
            qbar[bd->qadr] += w * g;
            thetabar[bd->p_limit_upper] -= w * g;
            vbar[bd->vadr] -= w * c * sig;
            tl[P_LIMIT_STIFFNESS] -= w * S;
            tl[P_LIMIT_DAMPING] -= w * sig * vi;
        }
        if (bd->p_limit_lower >= 0) {
            /* d(tau)/d(d_l) = k sigma - c sigma' qd; d_l = lower - q */
            softplus(theta[bd->p_limit_lower] - qi, &S, &sig, &dsig);
            const double g = k * sig - c * dsig * vi;
            qbar[bd->qadr] -= w * g;
            thetabar[bd->p_limit_lower] += w * g;
            vbar[bd->vadr] -= w * c * sig;
            tl[P_LIMIT_STIFFNESS] += w * S;
            tl[P_LIMIT_DAMPING] -= w * sig * vi;
        }
    }
}

void sid_joint_limit_force_jvp(const sid_fd_point *p, const sid_state_dir *dir, double *Fdot)
{
    const sid_model *m = p->m;
    const double *theta = p->theta, *q = p->q, *v = p->v, *qdot = dir->qd, *vdot = dir->vd, *thetadot = dir->thd;
    if (!m->nlimit) return;
    for (int b = 1; b < m->nbody; b++) {
        const sid_body *bd = &m->body[b];
        if (bd->p_limit < 0) continue;
        const double k = theta[bd->p_limit + P_LIMIT_STIFFNESS], c = theta[bd->p_limit + P_LIMIT_DAMPING];
        const double kd = thetadot[bd->p_limit + P_LIMIT_STIFFNESS], cd = thetadot[bd->p_limit + P_LIMIT_DAMPING];
        const double qi = q[bd->qadr], vi = v[bd->vadr], qd = qdot[bd->qadr], vd = vdot[bd->vadr];
        double S, sig, dsig, d = 0;
        if (bd->p_limit_upper >= 0) {
            softplus(qi - theta[bd->p_limit_upper], &S, &sig, &dsig);
            const double dd = qd - thetadot[bd->p_limit_upper];
            d -= kd * S + k * sig * dd + cd * sig * vi + c * dsig * dd * vi + c * sig * vd;
        }
        if (bd->p_limit_lower >= 0) {
            softplus(theta[bd->p_limit_lower] - qi, &S, &sig, &dsig);
            const double dd = thetadot[bd->p_limit_lower] - qd;
            d += kd * S + k * sig * dd - cd * sig * vi - c * dsig * dd * vi - c * sig * vd;
        }
        Fdot[bd->vadr] += d;
    }
}
