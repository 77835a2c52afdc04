/* dry_friction.c — the dry friction rows of one step (dry_friction.h): invweight0 and its
 * gradient, the box QP solved exactly (projected Gauss-Seidel for the active set, then the
 * active set's linear system, corrected until the KKT conditions hold), and the solution's
 * adjoint and tangent by the implicit function theorem on the free rows' equations
 *   (A + R)_SS f_S + A_SC f_C + g_S = 0,  f_C = state_C coulomb_C,  g = E^T a0 + b v. */
#include "dry_friction.h"

#include "dynamics.h"
#include "linalg.h"

#include <math.h>
#include <string.h>

struct sid_dry *sid_dry_carve(const sid_model *m, sid_carve *c)
{
    if (m->ndry <= 0) return NULL;
    struct sid_dry *D = sid_carve_take(c, 1, sizeof *D);
    const size_t nf = (size_t)m->ndry, nv = (size_t)m->nv, nq = (size_t)m->nq, np = (size_t)m->nparam;
    struct sid_dry d = {0};
    d.nf = m->ndry, d.nv = m->nv, d.nq = m->nq, d.np = m->nparam;
    d.dof = sid_carve_take(c, nf, sizeof *d.dof);
    d.pcoul = sid_carve_take(c, nf, sizeof *d.pcoul);
    d.state = sid_carve_take(c, nf, sizeof *d.state);
    d.piv = sid_carve_take(c, nf, sizeof *d.piv);
    d.free_of = sid_carve_take(c, nf, sizeof *d.free_of);
    d.A = sid_carve_take(c, nf * nf, sizeof *d.A);
    d.K = sid_carve_take(c, nf * nf, sizeof *d.K);
    d.g = sid_carve_take(c, 6 * nf, sizeof *d.g);
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
    d.a = d.a0 + nv, d.ac = d.a + nv, d.e = d.ac + nv, d.abar = d.e + nv;
    d.qb = d.q0 + nq;
    int k = 0;
    for (int b = 1; b < m->nbody; b++)
        if (m->body[b].dry) {
            d.dof[k] = m->body[b].vadr;
            d.pcoul[k++] = m->body[b].p_dof + P_COULOMB;
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
        sid_rnea_vjp(m, ws, D->q0, z, D->qb, D->vb, row);
        for (int b = 1; b < m->nbody; b++)
            if (m->body[b].p_dof >= 0) row[m->body[b].p_dof + P_ARMATURE] += z[m->body[b].vadr] * z[m->body[b].vadr];
        for (int k = 0; k < np; k++) row[k] = -row[k];
        if (m->p_gravity >= 0) row[m->p_gravity] = row[m->p_gravity + 1] = row[m->p_gravity + 2] = 0;
    }
    memcpy(D->theta_seen, theta, sizeof(double) * (size_t)np);
    D->valid = 1;
    return SID_OK;
}

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

/* f_S from the free rows' system with the clamped rows held at their bounds. */
static int solve_free(struct sid_dry *D)
{
    const int nf = D->nf;
    for (int j = 0; j < nf; j++)
        if (D->state[j]) D->f[j] = D->state[j] * D->l[j];
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

/* A from the factor D->Lp, the bounds l, R and b; with v, also g = E^T a0 + b v. */
static void build_rows(const sid_model *m, const double *theta, struct sid_dry *D, const double *v, double h)
{
    const int nf = D->nf, nv = D->nv;
    const double tc = fmax(SID_DRY_TIMECONST, 2 * h), imp = SID_DRY_DMIN;
    D->b = 2 / (SID_DRY_DMAX * tc);
    for (int j = 0; j < nf; j++) {
        double *z = D->e;
        for (int i = 0; i < nv; i++) z[i] = i == D->dof[j];
        sid_factor_solve(m, D->Lp, z);
        for (int k = 0; k < nf; k++) D->A[k * nf + j] = z[D->dof[k]];
        if (v) D->g[j] = D->a0[D->dof[j]] + D->b * v[D->dof[j]];   /* E^T a0 - aref */
        D->l[j] = theta[D->pcoul[j]];
        D->R[j] = fmax(1e-15, (1 - imp) * D->invw[j] / imp);   /* MuJoCo's mjMINVAL floor */
    }
}

void sid_dry_restore(const sid_model *m, const double *theta, sid_workspace *ws, double h)
{
    struct sid_dry *D = ws->dry;
    build_rows(m, theta, D, NULL, h);
    factor_free(D);
}

void sid_dry_solve(const sid_model *m, const double *theta, sid_workspace *ws, const double *v, double h)
{
    struct sid_dry *D = ws->dry;
    const int nf = D->nf;
    build_rows(m, theta, D, v, h);
    for (int j = 0; j < nf; j++) D->f[j] = 0;
    /* projected Gauss-Seidel finds the active set, or nearly */
    double scale = 0;
    for (int j = 0; j < nf; j++) scale = fmax(scale, fmax(D->l[j], fabs(D->g[j]) / (D->A[j * nf + j] + D->R[j])));
    for (int it = 0; it < 200; it++) {
        double change = 0;
        for (int j = 0; j < nf; j++) {
            const double fj = D->f[j], x = fj - grad_row(D, j) / (D->A[j * nf + j] + D->R[j]);
            D->f[j] = x > D->l[j] ? D->l[j] : x < -D->l[j] ? -D->l[j] : x;
            change = fmax(change, fabs(D->f[j] - fj));
        }
        if (change <= 1e-10 * scale) break;
    }
    for (int j = 0; j < nf; j++) {
        const double r = grad_row(D, j);
        D->state[j] = D->l[j] <= 0 ? (r > 0 ? -1 : 1) : D->f[j] >= D->l[j] ? 1 : D->f[j] <= -D->l[j] ? -1 : 0;
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
            if (!D->state[j]) x = fabs(D->f[j]) - D->l[j];
            else if (D->l[j] <= 0) x = 0;
            else x = D->state[j] * grad_row(D, j) / (D->A[j * nf + j] + D->R[j]);   /* > 0: pulled off */
            if (x > viol) viol = x, worst = j;
        }
        if (worst < 0) break;
        if (D->state[worst]) D->state[worst] = 0;
        else D->state[worst] = D->f[worst] > 0 ? 1 : -1;
    }
    double res = 0;
    for (int j = 0; j < nf; j++) {
        const double r = grad_row(D, j);
        res = fmax(res, D->state[j] ? (D->l[j] > 0 ? fmax(0, D->state[j] * r) : 0) : fabs(r));
        if (!D->state[j]) res = fmax(res, fabs(D->f[j]) - D->l[j]);
    }
    D->residual = res / (scale > 0 ? scale : 1);
}

void sid_dry_vjp_solution(const sid_model *m, sid_workspace *ws, const double *fbar, double *vbar, double *thetabar)
{
    struct sid_dry *D = ws->dry;
    const int nf = D->nf, nv = D->nv, np = D->np, n = D->nfree;
    const double imp = SID_DRY_DMIN;
    (void)m;
    /* y_S = (A + R)_SS^-T fbar_S (the matrix is symmetric; its LU is in K) */
    for (int r = 0; r < n; r++) D->y[r] = fbar[D->free_of[r]];
    if (n) sid_lu_solve(n, D->K, D->piv, 1, D->y);
    memset(D->abar, 0, sizeof(double) * (size_t)nv);
    for (int r = 0; r < n; r++) {
        const int j = D->free_of[r], i = D->dof[j];
        /* f_S = -K^-1 (g_S + ...): gbar = -y; g = E^T a0 + b v; R_j f_j */
        D->abar[i] = -D->y[r];
        vbar[i] -= D->b * D->y[r];
        if ((1 - imp) * D->invw[j] / imp > 1e-15) {
            const double wbar = -D->y[r] * D->f[j] * (1 - imp) / imp;
            const double *row = D->dinvw + (size_t)j * (size_t)np;
            for (int k = 0; k < np; k++) thetabar[k] += wbar * row[k];
        }
    }
    /* a clamped row's bound: directly, and through A_SC f_C in the free rows */
    for (int j = 0; j < nf; j++) {
        if (!D->state[j]) continue;
        double s = fbar[j];
        for (int r = 0; r < n; r++) s -= D->A[j * nf + D->free_of[r]] * D->y[r];
        thetabar[D->pcoul[j]] += D->state[j] * s;
    }
}

void sid_dry_jvp_solution(const sid_model *m, sid_workspace *ws, const double *t, const double *vdot,
                          const double *thetadot, double *fdot)
{
    struct sid_dry *D = ws->dry;
    const int nf = D->nf, np = D->np, n = D->nfree;
    const double imp = SID_DRY_DMIN;
    (void)m;
    for (int j = 0; j < nf; j++) fdot[j] = D->state[j] ? D->state[j] * thetadot[D->pcoul[j]] : 0;
    for (int r = 0; r < n; r++) {
        const int j = D->free_of[r], i = D->dof[j];
        double s = t[i] + D->b * vdot[i];   /* gdot + Adot f: E^T t */
        if ((1 - imp) * D->invw[j] / imp > 1e-15) {
            const double *row = D->dinvw + (size_t)j * (size_t)np;
            double wd = 0;
            for (int k = 0; k < np; k++) wd += row[k] * thetadot[k];
            s += (1 - imp) / imp * wd * D->f[j];
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
