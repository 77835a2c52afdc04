/* hard_solver.c — the contact problem of one hard-contact step (contact_hard.h): impulses lambda
 * that meet the non-penetration and Coulomb conditions on zeta = b + (G + r) lambda + c phi e_n.
 * Solved by projected Gauss-Seidel to find the active set (separated / sticking / sliding per
 * contact), run only until the modes it implies stop changing (PGS finds the active set long
 * before it converges: a few sweeps), then a damped Newton on that set's equations to machine
 * precision (modes corrected and retried when the Newton solution violates them; more PGS, to
 * tighter and tighter residuals, if that does not settle). Cold start every step, so a step
 * is a function of its inputs. With friction the conditions can have more than one solution
 * (several contacts, large mu: Coulomb friction's known non-uniqueness); the solver returns
 * one that meets them to 1e-13, and which one may depend on its path (a 0.8 s tumble of the
 * box met one such step, where an earlier version of this solver chose the other solution).
 * No allocation: scratch carved with the workspace (sid_hard_carve).
 */
#include "hard_solver.h"
#include "linalg.h"

#include <float.h>
#include <string.h>


/* zeta_k = b_k + (G lambda)_k + r lambda_k (+ beta / h phi on normal rows). */
static double zeta_row(const sid_hard_problem *P, const double *lam, int k)
{
    const double *g = P->G + (size_t)k * (size_t)P->n3;
    double z = P->b[k] + P->r * lam[k];
    for (int l = 0; l < P->n3; l++) z += g[l] * lam[l];
    if (k % 3 == 2) z += P->c * P->phi[k / 3];
    return z;
}

void sid_hard_zeta(const sid_hard_problem *P, const double *lam, double *zeta)
{
    for (int k = 0; k < P->n3; k++) zeta[k] = zeta_row(P, lam, k);
}

/* Scalar step of the tangential projection: the largest eigenvalue of contact i's 2 x 2 block. */
static double tangent_step(const sid_hard_problem *P, int i)
{
    const int n3 = P->n3, t = 3 * i;
    const double a = P->G[t * n3 + t] + P->r, d = P->G[(t + 1) * n3 + t + 1] + P->r, o = P->G[t * n3 + t + 1];
    return 0.5 * (a + d) + sqrt(0.25 * (a - d) * (a - d) + o * o);
}

/* Project (x, y) onto the disc of radius rad. */
static void disc(double *x, double *y, double rad)
{
    const double n = sqrt(*x * *x + *y * *y);
    if (n > rad) {
        const double s = n > 0 ? rad / n : 0;
        *x *= s, *y *= s;
    }
}

static void pgs_sweep(const sid_hard_problem *P, double *lam)
{
    const int n3 = P->n3;
    for (int i = 0; i < n3 / 3; i++) {
        const int n = 3 * i + 2, t = 3 * i;
        const double zn = zeta_row(P, lam, n);
        lam[n] = fmax(0, lam[n] - zn / (P->G[n * n3 + n] + P->r));
        const double g = tangent_step(P, i);
        double x = lam[t] - zeta_row(P, lam, t) / g, y = lam[t + 1] - zeta_row(P, lam, t + 1) / g;
        disc(&x, &y, P->mu * lam[n]);
        lam[t] = x, lam[t + 1] = y;
    }
}

/* The fixed-point map's residual |lambda - Phi(lambda)| in velocity units (0 at a solution), and
 * the modes it implies. */
static double fixed_point(const sid_hard_problem *P, const double *lam, double *zeta, int *mode)
{
    const int n3 = P->n3;
    double res = 0;
    sid_hard_zeta(P, lam, zeta);
    for (int i = 0; i < n3 / 3; i++) {
        const int n = 3 * i + 2, t = 3 * i;
        const double gn = P->G[n * n3 + n] + P->r, gt = tangent_step(P, i);
        const double ln = fmax(0, lam[n] - zeta[n] / gn);
        double x = lam[t] - zeta[t] / gt, y = lam[t + 1] - zeta[t + 1] / gt;
        const double nx = sqrt(x * x + y * y);
        if (mode) mode[i] = ln <= 0 ? SID_HARD_SEP : nx <= P->mu * ln ? SID_HARD_STICK : SID_HARD_SLIDE;
        disc(&x, &y, P->mu * ln);
        res = fmax(res, fabs(lam[n] - ln) * gn);
        res = fmax(res, sqrt((lam[t] - x) * (lam[t] - x) + (lam[t + 1] - y) * (lam[t + 1] - y)) * gt);
    }
    return res;
}

void sid_hard_mode_system(const sid_hard_problem *P, const int *mode, const double *lam, const double *zeta, double *E, double *K)
{
    const int n3 = P->n3;
    if (K) memset(K, 0, sizeof(double) * (size_t)n3 * (size_t)n3);
    for (int i = 0; i < n3 / 3; i++) {
        const int n = 3 * i + 2, t = 3 * i;
        if (mode[i] == SID_HARD_SEP) {
            for (int d = 0; d < 3; d++) {
                E[t + d] = lam[t + d];
                if (K) K[(t + d) * n3 + t + d] = 1;
            }
            continue;
        }
        E[n] = zeta[n];
        if (K)
            for (int l = 0; l < n3; l++) K[n * n3 + l] = P->G[n * n3 + l] + (l == n ? P->r : 0);
        if (mode[i] == SID_HARD_STICK) {
            E[t] = zeta[t], E[t + 1] = zeta[t + 1];
            if (K)
                for (int d = 0; d < 2; d++)
                    for (int l = 0; l < n3; l++) K[(t + d) * n3 + l] = P->G[(t + d) * n3 + l] + (l == t + d ? P->r : 0);
            continue;
        }
        /* sliding: on the cone's edge, |l_t| - mu ln = 0, and l_t parallel to zeta_t,
         * l_x zeta_y - l_y zeta_x = 0 (anti-parallel is checked by modes_hold) */
        const double lt = sqrt(lam[t] * lam[t] + lam[t + 1] * lam[t + 1]), nl = lt > 0 ? lt : DBL_MIN;
        E[t] = lt - P->mu * lam[n];
        E[t + 1] = lam[t] * zeta[t + 1] - lam[t + 1] * zeta[t];
        if (!K) continue;
        double *ra = K + (size_t)t * (size_t)n3, *rb = K + (size_t)(t + 1) * (size_t)n3;
        ra[t] = lam[t] / nl, ra[t + 1] = lam[t + 1] / nl, ra[n] = -P->mu;
        for (int l = 0; l < n3; l++)
            rb[l] = -lam[t + 1] * (P->G[t * n3 + l] + (l == t ? P->r : 0)) + lam[t] * (P->G[(t + 1) * n3 + l] + (l == t + 1 ? P->r : 0));
        rb[t] += zeta[t + 1];
        rb[t + 1] -= zeta[t];
    }
}

/* Row weights that put every equation of mode_system in velocity units (for the line search). */
static void row_weights(const sid_hard_problem *P, const int *mode, const double *lam, double *wt)
{
    const int n3 = P->n3;
    for (int i = 0; i < n3 / 3; i++) {
        const int n = 3 * i + 2, t = 3 * i;
        const double gn = P->G[n * n3 + n] + P->r, lt = sqrt(lam[t] * lam[t] + lam[t + 1] * lam[t + 1]);
        wt[t] = wt[t + 1] = wt[n] = 1;
        if (mode[i] == SID_HARD_SEP) wt[t] = wt[t + 1] = wt[n] = gn;
        if (mode[i] == SID_HARD_SLIDE) wt[t] = gn, wt[t + 1] = 1 / (lt > 0 ? lt : DBL_MIN);
    }
}

static double merit(int n3, const double *E, const double *wt)
{
    double s = 0;
    for (int k = 0; k < n3; k++) s += (wt[k] * E[k]) * (wt[k] * E[k]);
    return s;
}

/* Newton with backtracking on the active set's equations from lam; 0 when it converged (to
 * roundoff), 1 when it stalled, -1 on a singular Jacobian. Uses H->zeta, E, K, dl, piv, keep. */
static int newton(const sid_hard_problem *P, struct sid_hard *H, double *lam, double vscale)
{
    const int n3 = P->n3;
    double *wt = H->keep, *trial = wt + n3;
    sid_hard_zeta(P, lam, H->zeta);
    sid_hard_mode_system(P, H->mode, lam, H->zeta, H->E, NULL);
    row_weights(P, H->mode, lam, wt);
    double f = merit(n3, H->E, wt);
    for (int it = 0; it < 60; it++) {
        if (f <= 1e-30 * vscale * vscale) return 0;
        sid_hard_mode_system(P, H->mode, lam, H->zeta, H->E, H->K);
        if (sid_lu_factor(n3, H->K, H->piv)) return -1;
        double step = 0, size = 0;
        for (int k = 0; k < n3; k++) H->dl[k] = -H->E[k];
        sid_lu_solve(n3, H->K, H->piv, 0, H->dl);
        for (int k = 0; k < n3; k++) {
            if (!isfinite(H->dl[k])) return -1;
            step = fmax(step, fabs(H->dl[k]));
            size = fmax(size, fabs(lam[k]));
        }
        double alpha = 1, ft = HUGE_VAL;
        for (int ls = 0; ls < 40; ls++, alpha *= 0.5) {
            for (int k = 0; k < n3; k++) trial[k] = lam[k] + alpha * H->dl[k];
            sid_hard_zeta(P, trial, H->zeta);
            sid_hard_mode_system(P, H->mode, trial, H->zeta, H->E, NULL);
            ft = merit(n3, H->E, wt);
            if (ft < (1 - 1e-4 * alpha) * f) break;
        }
        if (!(ft < f)) {   /* no decrease: at roundoff, or stalled */
            sid_hard_zeta(P, lam, H->zeta);
            return step <= 1e-10 * size ? 0 : 1;
        }
        memcpy(lam, trial, sizeof(double) * (size_t)n3);
        row_weights(P, H->mode, lam, wt);
        sid_hard_mode_system(P, H->mode, lam, H->zeta, H->E, NULL);
        f = merit(n3, H->E, wt);
        if (alpha == 1 && step <= 1e-15 * size) return 0;
    }
    return 1;
}

/* Does the Newton solution respect its modes? Corrects the modes that it violates; 1 if all hold. */
static int modes_hold(const sid_hard_problem *P, int *mode, const double *lam, const double *zeta, double vscale, double lscale)
{
    int ok = 1;
    for (int i = 0; i < P->n3 / 3; i++) {
        const int n = 3 * i + 2, t = 3 * i;
        const double lt = sqrt(lam[t] * lam[t] + lam[t + 1] * lam[t + 1]);
        const double zt = sqrt(zeta[t] * zeta[t] + zeta[t + 1] * zeta[t + 1]);
        if (mode[i] == SID_HARD_SEP && zeta[n] < -1e-12 * vscale) mode[i] = SID_HARD_STICK, ok = 0;
        else if (mode[i] != SID_HARD_SEP && lam[n] < -1e-12 * lscale) mode[i] = SID_HARD_SEP, ok = 0;
        else if (mode[i] == SID_HARD_STICK && lt > P->mu * lam[n] + 1e-12 * lscale) mode[i] = SID_HARD_SLIDE, ok = 0;
        else if (mode[i] == SID_HARD_SLIDE && !(zt > 1e-12 * vscale && lam[t] * zeta[t] + lam[t + 1] * zeta[t + 1] < 0))
            mode[i] = SID_HARD_STICK, ok = 0;
    }
    return ok;
}

/* Newton from the point lam with the modes H->mode, the modes corrected and Newton rerun while
 * its solution violates them; the result in out (may be lam), its fixed-point residual returned. */
static double polish(const sid_hard_problem *P, struct sid_hard *H, const double *lam, double *out, double vscale)
{
    const int n3 = P->n3;
    if (out != lam) memcpy(out, lam, sizeof(double) * (size_t)n3);
    for (int rep = 0; rep < 2 * (n3 / 3) + 2; rep++) {
        if (newton(P, H, out, vscale) < 0) break;
        double lscale = DBL_MIN;
        for (int k = 0; k < n3; k++) lscale = fmax(lscale, fabs(out[k]));
        sid_hard_zeta(P, out, H->zeta);
        if (modes_hold(P, H->mode, out, H->zeta, vscale, lscale)) break;
    }
    return fixed_point(P, out, H->zeta, NULL);
}

/* PGS from lam until the modes it implies (into H->mode) are the same at two checks `every`
 * sweeps apart, or at most STABLE_MAX sweeps. PGS finds the active set long before it converges
 * (the Delassus matrix of redundant contacts is near singular, and its rate is slow), and
 * Newton needs only the active set. */
enum { STABLE_MAX = 100, FAST_TRIES = 3 };
static void pgs_until_stable(const sid_hard_problem *P, struct sid_hard *H, double *lam, int every)
{
    const int nc = P->n3 / 3;
    for (int i = 0; i < nc; i++) H->prev[i] = -1;
    for (int k = 0; k < STABLE_MAX; k++) {
        pgs_sweep(P, lam);
        if (k % every != every - 1) continue;
        fixed_point(P, lam, H->zeta, H->mode);
        if (!memcmp(H->mode, H->prev, sizeof(int) * (size_t)nc)) return;
        memcpy(H->prev, H->mode, sizeof(int) * (size_t)nc);
    }
    fixed_point(P, lam, H->zeta, H->mode);
}

void sid_hard_solve(const sid_hard_problem *P, struct sid_hard *H)
{
    const int n3 = P->n3;
    double *lam = H->lam;
    double vscale = DBL_MIN;
    for (int k = 0; k < n3; k++) vscale = fmax(vscale, fabs(P->b[k] + (k % 3 == 2 ? P->c * P->phi[k / 3] : 0)));
    memset(lam, 0, sizeof(double) * (size_t)n3);
    /* fast path: Newton as soon as the PGS's active set settles (usually after two sweeps, and
     * usually the solution's); if not, PGS on, asking for a longer stable stretch each time */
    double best = HUGE_VAL;
    for (int t = 0, every = 1; t < FAST_TRIES && !(best <= 1e-13 * vscale); t++, every *= 4) {
        pgs_until_stable(P, H, lam, every);
        const double rn = polish(P, H, lam, H->z, vscale);
        if (rn < best) best = rn, memcpy(H->best, H->z, sizeof(double) * (size_t)n3);
    }
    /* otherwise PGS to tighter and tighter residuals, each time Newton on its active set */
    for (int round = 0; round < 8 && !(best <= 1e-13 * vscale); round++) {
        const double target = round == 0 ? 1e-6 : 1e-6 * pow(1e-2, round);
        for (int k = 0; k < 400; k++) {
            pgs_sweep(P, lam);
            if (k % 10 == 9 && fixed_point(P, lam, H->zeta, NULL) <= target * vscale) break;
        }
        const double rp = fixed_point(P, lam, H->zeta, H->mode);
        if (rp < best) best = rp, memcpy(H->best, lam, sizeof(double) * (size_t)n3);
        double *trial = H->z;
        const double rn = polish(P, H, lam, trial, vscale);
        if (rn < best) best = rn, memcpy(H->best, trial, sizeof(double) * (size_t)n3);
        /* not there yet: carry on with PGS from the better of the two points */
        if (rn < rp) memcpy(lam, trial, sizeof(double) * (size_t)n3);
    }
    memcpy(lam, H->best, sizeof(double) * (size_t)n3);
    H->residual = fixed_point(P, lam, H->zeta, H->mode) / vscale;
}

struct sid_hard *sid_hard_carve(const sid_model *m, sid_carve *c)
{
    if (m->nsphere <= 0) return NULL;
    struct sid_hard *H = sid_carve_take(c, 1, sizeof *H);
    const size_t ns = (size_t)m->nsphere, n3 = 3 * ns, nv = (size_t)(m->nv > 0 ? m->nv : 1);
    struct sid_hard h = {0};
    h.ns = m->nsphere;
    h.nv = m->nv;
    h.sph = sid_carve_take(c, ns, sizeof *h.sph);
    h.mode = sid_carve_take(c, 2 * ns, sizeof *h.mode);
    h.piv = sid_carve_take(c, n3, sizeof *h.piv);
    h.cp = sid_carve_take(c, ns, sizeof *h.cp);
    h.phi = sid_carve_take(c, ns, sizeof *h.phi);
    h.seed = sid_carve_take(c, ns, sizeof *h.seed);
    h.phibar = sid_carve_take(c, ns, sizeof *h.phibar);
    h.J = sid_carve_take(c, n3 * nv, sizeof *h.J);
    h.W = sid_carve_take(c, n3 * nv, sizeof *h.W);
    h.vb = sid_carve_take(c, (size_t)m->nbody, sizeof *h.vb);
    h.G = sid_carve_take(c, n3 * n3, sizeof *h.G);
    h.K = sid_carve_take(c, n3 * n3, sizeof *h.K);
    h.lam = sid_carve_take(c, 9 * n3, sizeof *h.lam);
    h.vstar = sid_carve_take(c, 7 * nv, sizeof *h.vstar);
    if (!H) return NULL;   /* only counting */
    h.prev = h.mode + ns;
    h.b = h.lam + n3, h.zeta = h.b + n3, h.E = h.zeta + n3, h.dl = h.E + n3, h.best = h.dl + n3;
    h.z = h.best + n3, h.keep = h.z + n3;
    h.vplus = h.vstar + nv, h.aplus = h.vplus + nv, h.abar = h.aplus + nv, h.zero = h.abar + nv;
    h.tau = h.zero + nv, h.dinv = h.tau + nv;
    *H = h;
    return H;
}
