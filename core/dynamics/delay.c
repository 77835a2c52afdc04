/* delay.c — the delayed command and its derivative (delay.h). */
#include "delay.h"

#include <string.h>

int sid_delay_any(const sid_model *m)
{
    for (int b = 1; b < m->nbody; b++)
        if (m->body[b].p_delay >= 0) return 1;
    return 0;
}

/* The command of joint column i at t_k - d, and its slope in d. */
static double delayed(const sid_traj *tr, int k, int i, double d, double *slope)
{
    const int nv = tr->nv;
    const double s = tr->t[k] - d;
    *slope = 0;
    if (s <= tr->t[0] && d > 0) return tr->u[i];
    if (k == 0) return tr->u[i];   /* the first command, before the log and at its start */
    int a = k - 1;   /* d < 0 (a central difference at 0) extrapolates the last interval */
    while (a > 0 && tr->t[a] >= s) a--;   /* t_a < s <= t_{a+1} */
    const double ua = tr->u[(size_t)a * (size_t)nv + (size_t)i], ub = tr->u[(size_t)(a + 1) * (size_t)nv + (size_t)i];
    const double dt = tr->t[a + 1] - tr->t[a], f = (s - tr->t[a]) / dt;
    *slope = -(ub - ua) / dt;
    /* d = 0 is today's hold exactly (f = 1 up to rounding) */
    return d == 0 || f == 1 ? ub : ua + f * (ub - ua);
}

/* The samples the command at t_k - d reads, as delayed() does: weight 1 - *fb on *ia and *fb
 * on *ib. */
static void reads(const sid_traj *tr, int k, double d, int *ia, int *ib, double *fb)
{
    const double s = tr->t[k] - d;
    *ia = *ib = 0, *fb = 1;
    if ((s <= tr->t[0] && d > 0) || k == 0) return;
    int a = k - 1;
    while (a > 0 && tr->t[a] >= s) a--;
    const double f = (s - tr->t[a]) / (tr->t[a + 1] - tr->t[a]);
    *ia = a, *ib = a + 1;
    *fb = d == 0 || f == 1 ? 1 : f;
}

/* dF_i/du_i of the joint's motor (delay.h) */
static double gain(const sid_body *bd, const double *theta)
{
    const double *pm = theta + bd->p_motor, G = pm[P_GEAR];
    if (bd->p_servo >= 0) {
        const double *ps = theta + bd->p_servo;
        return G * (bd->motor == SID_MOTOR_POSITION ? ps[P_KP] : ps[P_KD]);
    }
    return bd->motor == SID_MOTOR_VOLTAGE ? G * pm[P_KT] / pm[P_RESISTANCE] : G * pm[P_KT];
}

const double *sid_delay_u(const sid_model *m, const double *theta, const sid_traj *tr, int k, sid_workspace *ws)
{
    const int nv = m->nvo;   /* commands: the logged coordinates' */
    const double *u = tr->u + (size_t)k * (size_t)nv;
    if (!sid_delay_any(m)) return u;
    memcpy(ws->ud, u, sizeof(double) * (size_t)nv);
    for (int b = 1; b < m->nbody; b++) {
        const sid_body *bd = &m->body[b];
        double slope;
        if (bd->p_delay >= 0) ws->ud[bd->vadr] = delayed(tr, k, bd->vadr, theta[bd->p_delay], &slope);
    }
    return ws->ud;
}

void sid_delay_vjp_begin(const sid_model *m, double *thetabar, sid_workspace *ws)
{
    for (int b = 1; b < m->nbody; b++) {
        const sid_body *bd = &m->body[b];
        if (bd->p_delay < 0) continue;
        ws->dsave[bd->vadr] = thetabar[bd->p_dof + P_TORQUE_BIAS];
        thetabar[bd->p_dof + P_TORQUE_BIAS] = 0;
    }
}

void sid_delay_vjp_end(const sid_model *m, const double *theta, const sid_traj *tr, int k, double *thetabar,
                       sid_workspace *ws)
{
    for (int b = 1; b < m->nbody; b++) {
        const sid_body *bd = &m->body[b];
        if (bd->p_delay < 0) continue;
        double slope;
        (void)delayed(tr, k, bd->vadr, theta[bd->p_delay], &slope);
        double *tb = thetabar + bd->p_dof + P_TORQUE_BIAS;
        const double share = *tb;
        thetabar[bd->p_delay] += share * gain(bd, theta) * slope;
        *tb = ws->dsave[bd->vadr] + share;
    }
}

/* col added to cols[0..n) unless there already: the rows' products count each entry once */
static int add_col(int *cols, int n, int col)
{
    for (int c = 0; c < n; c++)
        if (cols[c] == col) return n;
    cols[n] = col;
    return n + 1;
}

int sid_delay_jvp_cols(const sid_model *m, int nfree, const int *idx, int *cols)
{
    int n = 0;
    for (int d = 0; d < nfree; d++) n = add_col(cols, n, idx[d]);
    for (int b = 1; b < m->nbody; b++)
        if (m->body[b].p_delay >= 0) n = add_col(cols, n, m->body[b].p_dof + P_TORQUE_BIAS);
    return n;
}

void sid_delay_jvp_seed(const sid_model *m, const double *theta, const sid_traj *tr, int k, int ndir, int nfree,
                        const int *idx, double *thetadot)
{
    const size_t np = (size_t)m->nparam;
    for (int b = 1; b < m->nbody; b++) {
        const sid_body *bd = &m->body[b];
        if (bd->p_delay < 0) continue;
        const int ib = bd->p_dof + P_TORQUE_BIAS;
        double slope = 0;
        if (tr) (void)delayed(tr, k, bd->vadr, theta[bd->p_delay], &slope);
        const double gs = tr ? gain(bd, theta) * slope : 0;
        for (int d = 0; d < ndir; d++) {
            double *td = thetadot + (size_t)d * np;
            td[ib] = (d < nfree && idx[d] == ib ? 1 : 0) + td[bd->p_delay] * gs;
        }
    }
}

void sid_delay_u_vjp(const sid_model *m, const double *theta, const sid_traj *tr, int k, const double *ubk,
                     double *ubar, int k_base)
{
    const int nv = m->nvo;
    double *row = ubar + (size_t)(k - k_base) * (size_t)nv;
    for (int i = 0; i < nv; i++) {
        int b = 1;
        while (b < m->nbody && !(m->body[b].p_delay >= 0 && m->body[b].vadr == i)) b++;
        if (b == m->nbody) {   /* held: sample k's own command */
            row[i] += ubk[i];
            continue;
        }
        int ia, ib;
        double fb;
        reads(tr, k, theta[m->body[b].p_delay], &ia, &ib, &fb);
        if (fb != 1) ubar[(size_t)(ia - k_base) * (size_t)nv + (size_t)i] += (1 - fb) * ubk[i];
        ubar[(size_t)(ib - k_base) * (size_t)nv + (size_t)i] += fb * ubk[i];
    }
}

int sid_delay_first_sample(const sid_model *m, const double *theta, const sid_traj *tr, int k)
{
    int first = k;
    for (int b = 1; b < m->nbody; b++) {
        const sid_body *bd = &m->body[b];
        if (bd->p_delay < 0) continue;
        int ia, ib;
        double fb;
        reads(tr, k, theta[bd->p_delay], &ia, &ib, &fb);
        if (ia < first) first = ia;
    }
    return first;
}
