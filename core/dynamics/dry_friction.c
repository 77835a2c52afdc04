/* dry_friction.c — the dry friction rows of one step (dry_friction.h): invweight0 and its
 * gradient, the box QP solved exactly (projected Gauss-Seidel for the active set, then the
 * active set's linear system, corrected until the KKT conditions hold), and the solution's
 * adjoint and tangent by the implicit function theorem on the free rows' equations
 *   (A + R)_SS f_S + A_SC f_C + g_S = 0,  f_C = state_C coulomb_C,  g = E^T a0 + b v. */
#include "dry_friction.h"

#include "dynamics.h"
#include "joint_force.h"
#include "linalg.h"

#include <math.h>
#include <string.h>

struct sid_dry *sid_dry_carve(const sid_model *m, sid_carve *c)
{
    if (m->ndry + m->nclim <= 0) return NULL;
    struct sid_dry *D = sid_carve_take(c, 1, sizeof *D);
    const size_t nf = (size_t)(m->ndry + m->nclim), nv = (size_t)m->nv, nq = (size_t)m->nq, np = (size_t)m->nparam;
    struct sid_dry d = {0};
    d.nf = (int)nf, d.nfric = m->ndry, d.nv = m->nv, d.nq = m->nq, d.np = m->nparam;
    d.dof = sid_carve_take(c, nf, sizeof *d.dof);
    d.qadr = sid_carve_take(c, nf, sizeof *d.qadr);
    d.pcoul = sid_carve_take(c, nf, sizeof *d.pcoul);
    d.pneg = sid_carve_take(c, nf, sizeof *d.pneg);
    d.pload = sid_carve_take(c, nf, sizeof *d.pload);
    d.body = sid_carve_take(c, nf, sizeof *d.body);
    d.sgn = sid_carve_take(c, nf, sizeof *d.sgn);
    d.state = sid_carve_take(c, nf, sizeof *d.state);
    d.piv = sid_carve_take(c, nf, sizeof *d.piv);
    d.free_of = sid_carve_take(c, nf, sizeof *d.free_of);
    d.A = sid_carve_take(c, nf * nf, sizeof *d.A);
    d.K = sid_carve_take(c, nf * nf, sizeof *d.K);
    d.g = sid_carve_take(c, 13 * nf, sizeof *d.g);
    d.Lp = sid_carve_take(c, nv * nv, sizeof *d.Lp);
    d.Lh = sid_carve_take(c, nv * nv, sizeof *d.Lh);
    d.a0 = sid_carve_take(c, 5 * nv, sizeof *d.a0);
    d.theta_seen = sid_carve_take(c, np, sizeof *d.theta_seen);
    d.thg = sid_carve_take(c, np, sizeof *d.thg);
    d.invw = sid_carve_take(c, nf, sizeof *d.invw);
    d.dinvw = sid_carve_take(c, nf * np, sizeof *d.dinvw);
    d.Z = sid_carve_take(c, nf * nv, sizeof *d.Z);
    d.q0 = sid_carve_take(c, 2 * nq, sizeof *d.q0);
    d.vb = sid_carve_take(c, nv, sizeof *d.vb);
    if (!D) return NULL;   /* only counting */
    d.f = d.g + nf, d.l = d.f + nf, d.R = d.l + nf, d.y = d.R + nf, d.t = d.y + nf;
    d.dist = d.t + nf, d.imp = d.dist + nf, d.impp = d.imp + nf, d.ln = d.impp + nf;
    d.taum = d.ln + nf, d.vm = d.taum + nf, d.um = d.vm + nf;
    d.a = d.a0 + nv, d.ac = d.a + nv, d.e = d.ac + nv, d.abar = d.e + nv;
    d.qb = d.q0 + nq;
    int k = 0;
    for (int b = 1; b < m->nbody; b++)
        if (m->body[b].dry) {
            d.dof[k] = m->body[b].vadr, d.qadr[k] = m->body[b].qadr, d.sgn[k] = 1;
            d.pcoul[k] = m->body[b].p_dof + P_COULOMB;
            d.pload[k] = m->body[b].p_fload, d.body[k] = b;
            d.pneg[k++] = m->body[b].p_coulneg >= 0 ? m->body[b].p_coulneg : m->body[b].p_dof + P_COULOMB;
        }
    for (int b = 1; b < m->nbody; b++) {
        const sid_body *bd = &m->body[b];
        if (!bd->climit) continue;
        if (bd->p_limit_lower >= 0)
            d.dof[k] = bd->vadr, d.qadr[k] = bd->qadr, d.sgn[k] = 1, d.pneg[k] = d.pcoul[k] = bd->p_limit_lower,
            d.pload[k] = -1, d.body[k++] = b;
        if (bd->p_limit_upper >= 0)
            d.dof[k] = bd->vadr, d.qadr[k] = bd->qadr, d.sgn[k] = -1, d.pneg[k] = d.pcoul[k] = bd->p_limit_upper,
            d.pload[k] = -1, d.body[k++] = b;
    }
    *D = d;
    return D;
}

/* invweight0_j = e_j^T (M + B)^-1 e_j at q0; with z_j = (M + B)^-1 e_j,
 * d invweight0_j = -z_j^T d(M + B) z_j, and z^T M z = z^T ID(q0, 0, z) without gravity, so its
 * gradient is one reverse RNEA with taubar = z (z held fixed), plus z_i^2 for armature i. */
sid_status sid_dry_prepare(const sid_model *m, const double *theta, sid_workspace *ws, sid_error *err)
{
    struct sid_dry *D = ws->dry;
    const int nf = D->nf, nv = D->nv, np = D->np;
    if (D->valid && !memcmp(D->theta_seen, theta, sizeof(double) * (size_t)np)) return SID_OK;
    memcpy(D->thg, theta, sizeof(double) * (size_t)np);
    if (m->p_gravity >= 0) D->thg[m->p_gravity] = D->thg[m->p_gravity + 1] = D->thg[m->p_gravity + 2] = 0;
    memset(D->q0, 0, sizeof(double) * (size_t)D->nq);
    for (int b = 1; b < m->nbody; b++)
        if (m->body[b].type == SID_JOINT_FREE) D->q0[m->body[b].qadr + 3] = 1;
    sid_kinematics(m, D->thg, ws, D->q0);
    sid_crba(m, ws, ws->M);
    for (int b = 1; b < m->nbody; b++)
        if (m->body[b].p_dof >= 0) ws->M[m->body[b].vadr * (nv + 1)] += theta[m->body[b].p_dof + P_ARMATURE];
    if (sid_factor(m, ws->M))
        return sid_error_set(err, SID_ERR_SINGULAR,
                             "dry friction needs the joints' inertia at q = 0, but the mass matrix there is singular");
    for (int j = 0; j < nf; j++) {
        double *z = D->Z + (size_t)j * (size_t)nv;
        for (int i = 0; i < nv; i++) z[i] = i == D->dof[j];
        sid_factor_solve(m, ws->M, z);
        D->invw[j] = z[D->dof[j]];
    }
    memset(D->dinvw, 0, sizeof(double) * (size_t)nf * (size_t)np);
    for (int j = 0; j < nf; j++) {
        const double *z = D->Z + (size_t)j * (size_t)nv;
        double *row = D->dinvw + (size_t)j * (size_t)np;
        sid_rnea(m, D->thg, ws, NULL, z, NULL, ws->tmp);
        sid_rnea_vjp(m, ws, D->q0, z, &(sid_state_bar){D->qb, D->vb, row});
        for (int b = 1; b < m->nbody; b++)
            if (m->body[b].p_dof >= 0) row[m->body[b].p_dof + P_ARMATURE] += z[m->body[b].vadr] * z[m->body[b].vadr];
        for (int k = 0; k < np; k++) row[k] = -row[k];
        if (m->p_gravity >= 0) row[m->p_gravity] = row[m->p_gravity + 1] = row[m->p_gravity + 2] = 0;
    }
    memcpy(D->theta_seen, theta, sizeof(double) * (size_t)np);
    D->valid = 1;
    return SID_OK;
}

/* A row's bounds: friction [-coulomb, coulomb_negative] (f opposes motion: moving positive
 * it sits at -coulomb, moving negative at +coulomb_negative; coulomb_negative = coulomb where
 * absent), a limit [0, inf). */
static double lo_of(const struct sid_dry *D, int j) { return j < D->nfric ? -D->l[j] : 0; }
static double hi_of(const struct sid_dry *D, int j) { return j < D->nfric ? D->ln[j] : INFINITY; }
static double bound_of(const struct sid_dry *D, int j, int state) { return state > 0 ? hi_of(D, j) : lo_of(D, j); }
/* a row clamped with both bounds equal (friction with both levels 0) is never pulled off */
static int pinned(const struct sid_dry *D, int j) { return j < D->nfric && D->l[j] <= 0 && D->ln[j] <= 0; }

/* (A + R) f + g, row j. */
static double grad_row(const struct sid_dry *D, int j)
{
    const int nf = D->nf;
    double s = D->g[j] + D->R[j] * D->f[j];
    for (int k = 0; k < nf; k++) s += D->A[j * nf + k] * D->f[k];
    return s;
}

/* The free rows of the active set in D->state and the LU of (A + R)_SS in D->K; -1 if that
 * matrix is singular (it is positive definite). */
static int factor_free(struct sid_dry *D)
{
    const int nf = D->nf;
    int n = 0;
    for (int j = 0; j < nf; j++)
        if (!D->state[j]) D->free_of[n++] = j;
    D->nfree = n;
    for (int r = 0; r < n; r++)
        for (int c = 0; c < n; c++)
            D->K[r * n + c] = D->A[D->free_of[r] * nf + D->free_of[c]] + (r == c ? D->R[D->free_of[r]] : 0);
    return n && sid_lu_factor(n, D->K, D->piv) ? -1 : 0;
}

/* f_S from the free rows' system with the clamped rows held at their bounds (absent rows 0). */
static int solve_free(struct sid_dry *D)
{
    const int nf = D->nf;
    for (int j = 0; j < nf; j++)
        if (D->state[j]) D->f[j] = D->state[j] == SID_ROW_ABSENT ? 0 : bound_of(D, j, D->state[j]);
    if (factor_free(D)) return -1;
    const int n = D->nfree;
    for (int r = 0; r < n; r++) {
        const int j = D->free_of[r];
        double s = -D->g[j];
        for (int k = 0; k < nf; k++)
            if (D->state[k]) s -= D->A[j * nf + k] * D->f[k];
        D->y[r] = s;
    }
    if (n) sid_lu_solve(n, D->K, D->piv, 0, D->y);
    for (int r = 0; r < n; r++) D->f[D->free_of[r]] = D->y[r];
    return 0;
}

/* MuJoCo's impedance of a limit row at distance x <= 0 (solimp 0.9 0.95 0.001 0.5 2) and its
 * slope d imp / d dist. */
static void impedance(double dist, double *imp, double *impp)
{
    const double x = fabs(dist) / SID_LIM_WIDTH, sgn = dist < 0 ? -1 : 1, span = SID_DRY_DMAX - SID_DRY_DMIN;
    if (x >= 1 || x <= 0) {
        *imp = x >= 1 ? SID_DRY_DMAX : SID_DRY_DMIN;
        *impp = 0;
        return;
    }
    double y, yp;   /* power 2: a = 1 / mid, b = 1 / (1 - mid) */
    if (x <= SID_LIM_MID) y = x * x / SID_LIM_MID, yp = 2 * x / SID_LIM_MID;
    else y = 1 - (1 - x) * (1 - x) / (1 - SID_LIM_MID), yp = 2 * (1 - x) / (1 - SID_LIM_MID);
    *imp = SID_DRY_DMIN + y * span;
    *impp = yp * sgn * span / SID_LIM_WIDTH;
}

/* At p (its hd the step): A from the factor D->Lp, the bounds l (a load row's at the motor
 * torque of p's v and u), the limit rows' dist and imp at q, R, b and k; with v, also
 * g = J a0 - aref. */
static void build_rows(const sid_fd_point *p, const double *v)
{
    const sid_model *m = p->m;
    const double *theta = p->theta, *q = p->q, *vm = p->v, *u = p->u, h = p->hd;
    struct sid_dry *D = p->ws->dry;
    D->theta = theta;
    const int nf = D->nf, nv = D->nv;
    const double tc = fmax(SID_DRY_TIMECONST, 2 * h);
    D->b = 2 / (SID_DRY_DMAX * tc);
    D->k = 1 / (SID_DRY_DMAX * SID_DRY_DMAX * tc * tc);   /* dampratio 1 */
    for (int j = 0; j < nf; j++) {
        double *z = D->e;
        for (int i = 0; i < nv; i++) z[i] = i == D->dof[j] ? D->sgn[j] : 0;
        sid_factor_solve(m, D->Lp, z);
        for (int k = 0; k < nf; k++) D->A[k * nf + j] = D->sgn[k] * z[D->dof[k]];
        if (j < D->nfric) {
            D->dist[j] = 0, D->imp[j] = SID_DRY_DMIN, D->impp[j] = 0;
            D->l[j] = theta[D->pcoul[j]];
            D->ln[j] = theta[D->pneg[j]];
            if (D->pload[j] >= 0) {   /* both levels + mu |tau_m| */
                const int i = D->dof[j];
                D->vm[j] = vm[i], D->um[j] = u[i];
                D->taum[j] = sid_motor_torque(&m->body[D->body[j]], theta, vm[i], u[i]);
                D->l[j] += theta[D->pload[j]] * fabs(D->taum[j]);
                D->ln[j] += theta[D->pload[j]] * fabs(D->taum[j]);
            }
        } else {
            D->dist[j] = D->sgn[j] * (q[D->qadr[j]] - theta[D->pcoul[j]]);
            impedance(D->dist[j], &D->imp[j], &D->impp[j]);
            D->l[j] = D->ln[j] = 0;
        }
        if (v)
            D->g[j] = D->sgn[j] * (D->a0[D->dof[j]] + D->b * v[D->dof[j]]) +
                      (j < D->nfric ? 0 : D->k * D->imp[j] * D->dist[j]);   /* J a0 - aref */
        D->R[j] = fmax(1e-15, (1 - D->imp[j]) * D->invw[j] / D->imp[j]);   /* MuJoCo's mjMINVAL floor */
    }
}

void sid_dry_restore(const sid_fd_point *p)
{
    struct sid_dry *D = p->ws->dry;
    build_rows(p, NULL);
    factor_free(D);
}

void sid_dry_solve(const sid_fd_point *p)
{
    struct sid_dry *D = p->ws->dry;
    const int nf = D->nf;
    build_rows(p, p->v);
    for (int j = 0; j < nf; j++) {
        D->f[j] = 0;
        /* a limit row exists while its bound is crossed (MuJoCo: dist < margin = 0) */
        D->state[j] = j >= D->nfric && !(D->dist[j] < 0) ? SID_ROW_ABSENT : 0;
    }
    /* projected Gauss-Seidel finds the active set, or nearly */
    double scale = 0;
    for (int j = 0; j < nf; j++)
        if (D->state[j] != SID_ROW_ABSENT)
            scale = fmax(scale, fmax(fmax(D->l[j], D->ln[j]), fabs(D->g[j]) / (D->A[j * nf + j] + D->R[j])));
    for (int it = 0; it < 200; it++) {
        double change = 0;
        for (int j = 0; j < nf; j++) {
            if (D->state[j] == SID_ROW_ABSENT) continue;
            const double fj = D->f[j], x = fj - grad_row(D, j) / (D->A[j * nf + j] + D->R[j]);
            const double lo = lo_of(D, j), hi = hi_of(D, j);
            D->f[j] = x > hi ? hi : x < lo ? lo : x;
            change = fmax(change, fabs(D->f[j] - fj));
        }
        if (change <= 1e-10 * scale) break;
    }
    for (int j = 0; j < nf; j++) {
        if (D->state[j] == SID_ROW_ABSENT) continue;
        const double r = grad_row(D, j);
        D->state[j] = pinned(D, j) ? (r > 0 ? -1 : 1) : D->f[j] >= hi_of(D, j) ? 1 : D->f[j] <= lo_of(D, j) ? -1 : 0;
    }
    /* the active set's linear system, corrected one row at a time until the KKT conditions
     * hold: a free row within its bounds, a clamped row pushed against its bound */
    const double tol = 1e-13 * (scale > 0 ? scale : 1);
    for (int it = 0; it < 4 * nf + 8; it++) {
        if (solve_free(D)) break;
        int worst = -1;
        double viol = tol;
        for (int j = 0; j < nf; j++) {
            double x;
            if (D->state[j] == SID_ROW_ABSENT || (D->state[j] && pinned(D, j))) x = 0;
            else if (!D->state[j]) x = fmax(lo_of(D, j) - D->f[j], D->f[j] - hi_of(D, j));
            else x = D->state[j] * grad_row(D, j) / (D->A[j * nf + j] + D->R[j]);   /* > 0: pulled off */
            if (x > viol) viol = x, worst = j;
        }
        if (worst < 0) break;
        if (D->state[worst]) D->state[worst] = 0;
        else D->state[worst] = D->f[worst] > hi_of(D, worst) ? 1 : -1;
    }
    double res = 0;
    for (int j = 0; j < nf; j++) {
        if (D->state[j] == SID_ROW_ABSENT) continue;
        const double r = grad_row(D, j);
        res = fmax(res, D->state[j] ? (!pinned(D, j) ? fmax(0, D->state[j] * r) : 0) : fabs(r));
        if (!D->state[j]) res = fmax(res, fmax(lo_of(D, j) - D->f[j], D->f[j] - hi_of(D, j)));
    }
    D->residual = res / (scale > 0 ? scale : 1);
}

/* A free row's R_j = (1 - imp) invweight0 / imp unless floored: its derivative's two parts,
 * d R / d invweight0 and d R / d dist. */
static int r_live(const struct sid_dry *D, int j) { return (1 - D->imp[j]) * D->invw[j] / D->imp[j] > 1e-15; }

void sid_dry_vjp_solution(const sid_model *m, sid_workspace *ws, const double *fbar, const sid_state_bar *bar)
{
    double *qbar = bar->qbar, *vbar = bar->vbar, *thetabar = bar->thetabar;
    struct sid_dry *D = ws->dry;
    const int nf = D->nf, nv = D->nv, np = D->np, n = D->nfree;
    /* y_S = (A + R)_SS^-T fbar_S (the matrix is symmetric; its LU is in K) */
    for (int r = 0; r < n; r++) D->y[r] = fbar[D->free_of[r]];
    if (n) sid_lu_solve(n, D->K, D->piv, 1, D->y);
    memset(D->abar, 0, sizeof(double) * (size_t)nv);
    for (int r = 0; r < n; r++) {
        const int j = D->free_of[r], i = D->dof[j];
        const double imp = D->imp[j], gbar = -D->y[r], Rbar = -D->y[r] * D->f[j];
        /* f_S = -K^-1 (g_S + ...): g = J a0 + b J v (+ k imp dist); R_j f_j */
        D->abar[i] += D->sgn[j] * gbar;
        vbar[i] += D->b * D->sgn[j] * gbar;
        double distbar = j < D->nfric ? 0 : gbar * D->k * (imp + D->impp[j] * D->dist[j]);
        if (r_live(D, j)) {
            const double wbar = Rbar * (1 - imp) / imp;
            const double *row = D->dinvw + (size_t)j * (size_t)np;
            for (int k = 0; k < np; k++) thetabar[k] += wbar * row[k];
            distbar += Rbar * (-D->invw[j] / (imp * imp)) * D->impp[j];
        }
        if (j >= D->nfric) {   /* dist = sgn (q - bound) */
            qbar[D->qadr[j]] += D->sgn[j] * distbar;
            thetabar[D->pcoul[j]] -= D->sgn[j] * distbar;
        }
    }
    /* a clamped friction row's bound: directly, and through A_SC f_C in the free rows (a
     * clamped limit row sits at 0, an absent one is 0) */
    for (int j = 0; j < D->nfric; j++) {
        if (!D->state[j]) continue;
        double s = fbar[j];
        for (int r = 0; r < n; r++) s -= D->A[j * nf + D->free_of[r]] * D->y[r];
        if (D->state[j] > 0) thetabar[D->pneg[j]] += s;   /* f = coulomb_negative */
        else thetabar[D->pcoul[j]] -= s;                   /* f = -coulomb */
        if (D->pload[j] >= 0) {   /* ... + state mu |tau_m| */
            const double mu = D->theta[D->pload[j]], tau = D->taum[j], sg = tau > 0 ? 1 : tau < 0 ? -1 : 0;
            thetabar[D->pload[j]] += D->state[j] * s * fabs(tau);
            const double vb = sid_motor_torque_vjp(&m->body[D->body[j]], D->theta, D->vm[j], D->um[j],
                                                   D->state[j] * s * mu * sg, thetabar);
            if (vbar) vbar[D->dof[j]] += vb;
            if (ws->ubar)   /* the bound's command (command_grad.c) */
                ws->ubar[D->dof[j]] += D->state[j] * s * mu * sg * sid_motor_torque_du(&m->body[D->body[j]], D->theta);
        }
    }
}

void sid_dry_jvp_solution(const sid_model *m, sid_workspace *ws, const double *t, const sid_state_dir *dir, double *fdot)
{
    const double *qdot = dir->qd, *vdot = dir->vd, *thetadot = dir->thd;
    struct sid_dry *D = ws->dry;
    const int nf = D->nf, np = D->np, n = D->nfree;
    for (int j = 0; j < nf; j++) {
        fdot[j] = j < D->nfric && D->state[j] ? (D->state[j] > 0 ? thetadot[D->pneg[j]] : -thetadot[D->pcoul[j]]) : 0;
        if (j < D->nfric && D->state[j] && D->pload[j] >= 0) {
            const double mu = D->theta[D->pload[j]], tau = D->taum[j], sg = tau > 0 ? 1 : tau < 0 ? -1 : 0;
            const double taud = sid_motor_torque_jvp(&m->body[D->body[j]], D->theta, D->vm[j], D->um[j],
                                                     vdot[D->dof[j]], thetadot);
            fdot[j] += D->state[j] * (thetadot[D->pload[j]] * fabs(tau) + mu * sg * taud);
        }
    }
    for (int r = 0; r < n; r++) {
        const int j = D->free_of[r], i = D->dof[j];
        const double imp = D->imp[j];
        double s = D->sgn[j] * (t[i] + D->b * vdot[i]);   /* gdot + Adot f: J t */
        const double distdot = j < D->nfric ? 0 : D->sgn[j] * (qdot[D->qadr[j]] - thetadot[D->pcoul[j]]);
        if (j >= D->nfric) s += D->k * (imp + D->impp[j] * D->dist[j]) * distdot;
        if (r_live(D, j)) {
            const double *row = D->dinvw + (size_t)j * (size_t)np;
            double wd = 0;
            for (int k = 0; k < np; k++) wd += row[k] * thetadot[k];
            s += ((1 - imp) / imp * wd - D->invw[j] / (imp * imp) * D->impp[j] * distdot) * D->f[j];
        }
        for (int k = 0; k < nf; k++)
            if (D->state[k]) s += D->A[j * nf + k] * fdot[k];
        D->y[r] = -s;
    }
    if (n) sid_lu_solve(n, D->K, D->piv, 0, D->y);
    for (int r = 0; r < n; r++) fdot[D->free_of[r]] = D->y[r];
}

int sid_dry_last(const sid_workspace *ws, double *f, int *state, double *residual)
{
    const struct sid_dry *D = ws->dry;
    if (!D) return 0;
    for (int j = 0; j < D->nf; j++) {
        if (f) f[j] = D->f[j];
        if (state) state[j] = D->state[j];
    }
    if (residual) *residual = D->residual;
    return D->nf;
}
