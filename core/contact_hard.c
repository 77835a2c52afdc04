/* contact_hard.c — the `hard` contact model (SID_CONTACT_HARD) and its adjoint by implicit
 * differentiation.
 *
 * Semantics (Euler only; RK4 with hard contact is SID_ERR_INPUT):
 *  - a = fd(q, v, u) without contact (A a = F - c - D v, A = M + B + h D; the RNEA skips the
 *    compliant forces when the model is hard), v* = v + h a.
 *  - A sphere of radius r, centre c on body b touches the plane z = height at its lowest point;
 *    its gap is phi = z_centre - r - height. Every sphere with phi below a margin (its radius
 *    plus 2 h |u*| / beta, u* its lowest point's velocity at v*, so that a contact enters the
 *    problem while its constraint is still inactive: no jump) is a contact i with an impulse
 *    lambda_i = (lx, ly, ln) in world axes at that point.
 *  - v+ = v* + A^-1 J^T lambda, J (3 nc x nv) the world velocities of the contact points, so the
 *    contact velocity is u = J v+ = b + G lambda with b = J v*, G = J A^-1 J^T (Delassus).
 *  - Conditions, with zeta = u + r lambda + (beta / h) phi e_n (r = SID_HARD_REG / total mass, a
 *    tiny regularisation that makes lambda unique when contacts are redundant, e.g. a box resting
 *    on four corners; beta = SID_HARD_BETA, Baumgarte-style stabilisation: u_n >= -beta phi / h,
 *    no penetration velocity; a gap closes at rate beta phi / h at most, so a sphere approaching
 *    at speed s starts to slow down at a gap of h s / beta, and settles over ~h / beta):
 *      ln >= 0, zeta_n >= 0, ln zeta_n = 0;
 *      Coulomb friction |l_t| <= mu ln with maximum dissipation: zeta_t = 0 while sticking
 *      (|l_t| < mu ln), l_t = -mu ln zeta_t / |zeta_t| while sliding; mu = ground friction.
 *    Solved by projected Gauss-Seidel to find the active set (separated / sticking / sliding per
 *    contact), run only until the modes it implies stop changing (PGS finds the active set long
 *    before it converges: a few sweeps), then a damped Newton on that set's equations to machine
 *    precision (modes corrected and retried when the Newton solution violates them; more PGS, to
 *    tighter and tighter residuals, if that does not settle). Cold start every step, so a step
 *    is a function of its inputs. With friction the conditions can have more than one solution
 *    (several contacts, large mu: Coulomb friction's known non-uniqueness); the solver returns
 *    one that meets them to 1e-13, and which one may depend on its path (a 0.8 s tumble of the
 *    box met one such step, where an earlier version of this solver chose the other solution).
 *    No allocation: scratch sized at creation (sid_workspace_create).
 *  - q+ = q (+) h v+ (sid_integrate_q).
 * Stiffness, damping, width and smoothing of the ground are not used by this model.
 *
 * Adjoint (implicit function theorem, never unrolled solver iterations). With the active set
 * fixed at the solution, the unknowns x = (a+, lambda), a+ = (v+ - v) / h, satisfy
 *   R1 = F - D v - ID(q, v, a+) - B a+ - h D a+ + J^T lambda / h = 0
 *   R2 = E(lambda, zeta, mu) = 0,  zeta = J (v + h a+) + r lambda + (beta / h) phi e_n,
 * E per contact: separated lambda_i; sticking zeta_i; sliding (|l_t| - mu ln, l_x zeta_y - l_y zeta_x,
 * zeta_n): on the cone's edge and parallel to the slip (anti-parallel is checked by the solver).
 * For the adjoint abar of a+, solve the transposed system by its Schur complement on lambda:
 *   K^T z = J A^-1 abar / h,  K = dE/dlambda + dE/dzeta (G + r),  zetabar = -(dE/dzeta)^T z,
 *   w = A^-1 (abar + h J^T zetabar),
 * then every input gets (dR1/dp)^T w (the Euler step's own adjoint, fd_vjp, with the impulses
 * entering the RNEA as external forces lambda / h at the contact points, held fixed) plus
 * (dzeta/dp)^T zetabar (one more reverse RNEA, at v+, seeded with the contact velocities' and
 * gaps' adjoints) plus mubar = sum ln z_edge over sliding contacts. The regularisation r depends on
 * the masses (rbar = zetabar . lambda). Cost: one dense 3 nc solve and two reverse RNEAs. */
#include "workspace.h"

#include <float.h>
#include <string.h>

enum { SEP = 0, STICK = 1, SLIDE = 2 };

struct sid_hard {
    int ns, nv;             /* capacity (spheres), velocity size */
    int nc;                 /* contacts of the last solve */
    int frozen;             /* tests only: adjoint with the impulses held fixed (the naive gradient) */
    int *sph, *mode, *piv;  /* (ns) sphere and mode of contact i; (3 ns) pivots */
    int *prev;              /* (ns) modes at the previous check of the PGS */
    sid_v3 *cp;             /* (ns) contact point in the body frame */
    double *phi;            /* (ns) gap */
    sid_v3 *seed;           /* (ns) world force (forces pass) or contact velocity adjoint (velocity pass) */
    double *phibar;         /* (ns) gap adjoint (velocity pass) */
    double *J, *W;          /* (3 ns x nv) rows of J and of W = (L^-T J^T)^T, A = L^T L */
    sid_sv *vb;             /* (nbody) body velocities at v*, for the margin test */
    double *G, *K;          /* (3 ns x 3 ns) */
    double *lam, *b, *zeta, *E, *dl, *best, *z, *keep;   /* (3 ns; keep 2 x 3 ns) */
    double *vstar, *vplus, *aplus, *abar, *zero, *tau;   /* (nv) */
    double *dinv;           /* (nv) inverse diagonal of the factor L of A */
    double r, residual;     /* regularisation; fixed-point residual of the last solve / velocity scale */
};

struct sid_hard *sid_hard_create(const sid_model *m)
{
    if (m->nsphere <= 0) return NULL;
    struct sid_hard *H = sid_alloc(sizeof *H);
    if (!H) return NULL;
    const size_t ns = (size_t)m->nsphere, n3 = 3 * ns, nv = (size_t)(m->nv > 0 ? m->nv : 1);
    H->ns = m->nsphere;
    H->nv = m->nv;
    H->sph = sid_alloc(ns * sizeof *H->sph);
    H->mode = sid_alloc(2 * ns * sizeof *H->mode);
    H->piv = sid_alloc(n3 * sizeof *H->piv);
    H->cp = sid_alloc(ns * sizeof *H->cp);
    H->phi = sid_alloc(ns * sizeof *H->phi);
    H->seed = sid_alloc(ns * sizeof *H->seed);
    H->phibar = sid_alloc(ns * sizeof *H->phibar);
    H->J = sid_alloc(n3 * nv * sizeof *H->J);
    H->W = sid_alloc(n3 * nv * sizeof *H->W);
    H->vb = sid_alloc((size_t)m->nbody * sizeof *H->vb);
    H->G = sid_alloc(n3 * n3 * sizeof *H->G);
    H->K = sid_alloc(n3 * n3 * sizeof *H->K);
    H->lam = sid_alloc(9 * n3 * sizeof *H->lam);
    H->vstar = sid_alloc(7 * nv * sizeof *H->vstar);
    if (!H->sph || !H->mode || !H->piv || !H->cp || !H->phi || !H->seed || !H->phibar || !H->J || !H->W || !H->vb ||
        !H->G || !H->K || !H->lam || !H->vstar) {
        sid_hard_free(H);
        return NULL;
    }
    H->prev = H->mode + ns;
    H->b = H->lam + n3, H->zeta = H->b + n3, H->E = H->zeta + n3, H->dl = H->E + n3, H->best = H->dl + n3;
    H->z = H->best + n3, H->keep = H->z + n3;
    H->vplus = H->vstar + nv, H->aplus = H->vplus + nv, H->abar = H->aplus + nv, H->zero = H->abar + nv;
    H->tau = H->zero + nv, H->dinv = H->tau + nv;
    return H;
}

void sid_hard_free(struct sid_hard *H)
{
    if (!H) return;
    void *p[] = {H->sph, H->mode, H->piv, H->cp, H->phi, H->seed, H->phibar, H->J, H->W, H->vb, H->G, H->K, H->lam,
                 H->vstar};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) sid_free(p[i]);
    sid_free(H);
}

void sid_hard_set_frozen(sid_workspace *ws, int frozen)
{
    if (ws->hard) ws->hard->frozen = frozen;
}

int sid_hard_last(const sid_workspace *ws, int *sphere, int *mode, double *lambda, double *residual)
{
    const struct sid_hard *H = ws->hard;
    if (!H) return 0;
    for (int i = 0; i < H->nc; i++) {
        if (sphere) sphere[i] = H->sph[i];
        if (mode) mode[i] = H->mode[i];
        if (lambda) memcpy(lambda + 3 * i, H->lam + 3 * i, 3 * sizeof(double));
    }
    if (residual) *residual = H->residual;
    return H->nc;
}

/* ---- geometry ------------------------------------------------------------------------- */


/* Contact point (lowest point of sphere s) in its body's frame, and the gap phi. */
static sid_v3 contact_point(const sid_model *m, const double *theta, const sid_workspace *ws, int s, double *phi)
{
    const int b = m->sphere[s].body;
    const double *ps = theta + m->sphere[s].p;
    const sid_m3 *R = &ws->Rw[b];
    const sid_v3 cen = sid_v3_load(ps + P_SPHERE_XYZ), ez = {0, 0, 1};
    const double r = ps[P_SPHERE_RADIUS];
    if (phi) *phi = ws->pw[b].z + sid_v3_dot(sid_v3_make(R->m[2][0], R->m[2][1], R->m[2][2]), cen) - r -
                    theta[m->p_ground + P_HEIGHT];
    return sid_v3_sub(cen, sid_v3_scale(r, sid_m3_tmul_v3(R, ez)));
}

/* Row d of J for a point cp on body b: the generalised force of a unit world force e_d there. */
static void jacobian_rows(const sid_model *m, const sid_workspace *ws, int b, sid_v3 cp, double *J3)
{
    const int nv = m->nv;
    memset(J3, 0, sizeof(double) * 3 * (size_t)nv);
    for (int d = 0; d < 3; d++) {
        double *row = J3 + d * nv;
        const sid_v3 Fb = sid_v3_make(ws->Rw[b].m[d][0], ws->Rw[b].m[d][1], ws->Rw[b].m[d][2]);   /* R^T e_d */
        sid_sv f = sid_sv_make(sid_v3_cross(cp, Fb), Fb);
        for (int j = b; j > 0; j = m->body[j].parent) {
            const sid_body *bd = &m->body[j];
            for (int k = 0; k < sid_joint_ndof(bd); k++) row[bd->vadr + k] += sid_sv_dot(sid_joint_col(bd, &ws->X[j], k), f);
            f = sid_xform_force_inv(&ws->X[j], f);
        }
    }
}

static double total_mass(const sid_model *m, const double *theta)
{
    double mt = 0;
    for (int b = 1; b < m->nbody; b++)
        if (m->body[b].p_inertial >= 0) mt += theta[m->body[b].p_inertial + P_MASS];
    return mt;
}

/* ---- dense LU with partial pivoting ------------------------------------------------------ */

static int lu_factor(int n, double *A, int *piv)
{
    for (int k = 0; k < n; k++) {
        int p = k;
        for (int i = k + 1; i < n; i++)
            if (fabs(A[i * n + k]) > fabs(A[p * n + k])) p = i;
        piv[k] = p;
        if (!(fabs(A[p * n + k]) > 0)) return -1;
        if (p != k)
            for (int j = 0; j < n; j++) {
                const double t = A[k * n + j];
                A[k * n + j] = A[p * n + j], A[p * n + j] = t;
            }
        for (int i = k + 1; i < n; i++) {
            const double l = A[i * n + k] /= A[k * n + k];
            if (l != 0)
                for (int j = k + 1; j < n; j++) A[i * n + j] -= l * A[k * n + j];
        }
    }
    return 0;
}

/* Solve A x = b (trans = 0) or A^T x = b (trans = 1) in place with the factor of lu_factor. */
static void lu_solve(int n, const double *LU, const int *piv, int trans, double *x)
{
    if (!trans) {
        for (int k = 0; k < n; k++) {
            const double t = x[k];
            x[k] = x[piv[k]], x[piv[k]] = t;
        }
        for (int i = 0; i < n; i++)
            for (int j = 0; j < i; j++) x[i] -= LU[i * n + j] * x[j];
        for (int i = n - 1; i >= 0; i--) {
            for (int j = i + 1; j < n; j++) x[i] -= LU[i * n + j] * x[j];
            x[i] /= LU[i * n + i];
        }
        return;
    }
    /* A = P^T L U: A^T x = U^T L^T P x = b */
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < i; j++) x[i] -= LU[j * n + i] * x[j];
        x[i] /= LU[i * n + i];
    }
    for (int i = n - 1; i >= 0; i--)
        for (int j = i + 1; j < n; j++) x[i] -= LU[j * n + i] * x[j];
    for (int k = n - 1; k >= 0; k--) {
        const double t = x[k];
        x[k] = x[piv[k]], x[piv[k]] = t;
    }
}

/* ---- the contact problem ------------------------------------------------------------------ */

typedef struct {
    int n3;
    const double *G, *b, *phi;
    double r, c, mu;        /* regularisation, beta / h, friction */
} problem;

/* zeta_k = b_k + (G lambda)_k + r lambda_k (+ beta / h phi on normal rows). */
static double zeta_row(const problem *P, const double *lam, int k)
{
    const double *g = P->G + (size_t)k * (size_t)P->n3;
    double z = P->b[k] + P->r * lam[k];
    for (int l = 0; l < P->n3; l++) z += g[l] * lam[l];
    if (k % 3 == 2) z += P->c * P->phi[k / 3];
    return z;
}

static void zeta_all(const problem *P, const double *lam, double *zeta)
{
    for (int k = 0; k < P->n3; k++) zeta[k] = zeta_row(P, lam, k);
}

/* Scalar step of the tangential projection: the largest eigenvalue of contact i's 2 x 2 block. */
static double tangent_step(const problem *P, int i)
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

static void pgs_sweep(const problem *P, double *lam)
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
static double fixed_point(const problem *P, const double *lam, double *zeta, int *mode)
{
    const int n3 = P->n3;
    double res = 0;
    zeta_all(P, lam, zeta);
    for (int i = 0; i < n3 / 3; i++) {
        const int n = 3 * i + 2, t = 3 * i;
        const double gn = P->G[n * n3 + n] + P->r, gt = tangent_step(P, i);
        const double ln = fmax(0, lam[n] - zeta[n] / gn);
        double x = lam[t] - zeta[t] / gt, y = lam[t + 1] - zeta[t + 1] / gt;
        const double nx = sqrt(x * x + y * y);
        if (mode) mode[i] = ln <= 0 ? SEP : nx <= P->mu * ln ? STICK : SLIDE;
        disc(&x, &y, P->mu * ln);
        res = fmax(res, fabs(lam[n] - ln) * gn);
        res = fmax(res, sqrt((lam[t] - x) * (lam[t] - x) + (lam[t + 1] - y) * (lam[t + 1] - y)) * gt);
    }
    return res;
}

/* Residual E of the active set's equations at lam (zeta given) and, if K, its Jacobian
 * K = dE/dlambda + dE/dzeta (G + r). */
static void mode_system(const problem *P, const int *mode, const double *lam, const double *zeta, double *E, double *K)
{
    const int n3 = P->n3;
    if (K) memset(K, 0, sizeof(double) * (size_t)n3 * (size_t)n3);
    for (int i = 0; i < n3 / 3; i++) {
        const int n = 3 * i + 2, t = 3 * i;
        if (mode[i] == SEP) {
            for (int d = 0; d < 3; d++) {
                E[t + d] = lam[t + d];
                if (K) K[(t + d) * n3 + t + d] = 1;
            }
            continue;
        }
        E[n] = zeta[n];
        if (K)
            for (int l = 0; l < n3; l++) K[n * n3 + l] = P->G[n * n3 + l] + (l == n ? P->r : 0);
        if (mode[i] == STICK) {
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
static void row_weights(const problem *P, const int *mode, const double *lam, double *wt)
{
    const int n3 = P->n3;
    for (int i = 0; i < n3 / 3; i++) {
        const int n = 3 * i + 2, t = 3 * i;
        const double gn = P->G[n * n3 + n] + P->r, lt = sqrt(lam[t] * lam[t] + lam[t + 1] * lam[t + 1]);
        wt[t] = wt[t + 1] = wt[n] = 1;
        if (mode[i] == SEP) wt[t] = wt[t + 1] = wt[n] = gn;
        if (mode[i] == SLIDE) wt[t] = gn, wt[t + 1] = 1 / (lt > 0 ? lt : DBL_MIN);
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
static int newton(const problem *P, struct sid_hard *H, double *lam, double vscale)
{
    const int n3 = P->n3;
    double *wt = H->keep, *trial = wt + n3;
    zeta_all(P, lam, H->zeta);
    mode_system(P, H->mode, lam, H->zeta, H->E, NULL);
    row_weights(P, H->mode, lam, wt);
    double f = merit(n3, H->E, wt);
    for (int it = 0; it < 60; it++) {
        if (f <= 1e-30 * vscale * vscale) return 0;
        mode_system(P, H->mode, lam, H->zeta, H->E, H->K);
        if (lu_factor(n3, H->K, H->piv)) return -1;
        double step = 0, size = 0;
        for (int k = 0; k < n3; k++) H->dl[k] = -H->E[k];
        lu_solve(n3, H->K, H->piv, 0, H->dl);
        for (int k = 0; k < n3; k++) {
            if (!isfinite(H->dl[k])) return -1;
            step = fmax(step, fabs(H->dl[k]));
            size = fmax(size, fabs(lam[k]));
        }
        double alpha = 1, ft = HUGE_VAL;
        for (int ls = 0; ls < 40; ls++, alpha *= 0.5) {
            for (int k = 0; k < n3; k++) trial[k] = lam[k] + alpha * H->dl[k];
            zeta_all(P, trial, H->zeta);
            mode_system(P, H->mode, trial, H->zeta, H->E, NULL);
            ft = merit(n3, H->E, wt);
            if (ft < (1 - 1e-4 * alpha) * f) break;
        }
        if (!(ft < f)) {   /* no decrease: at roundoff, or stalled */
            zeta_all(P, lam, H->zeta);
            return step <= 1e-10 * size ? 0 : 1;
        }
        memcpy(lam, trial, sizeof(double) * (size_t)n3);
        row_weights(P, H->mode, lam, wt);
        mode_system(P, H->mode, lam, H->zeta, H->E, NULL);
        f = merit(n3, H->E, wt);
        if (alpha == 1 && step <= 1e-15 * size) return 0;
    }
    return 1;
}

/* Does the Newton solution respect its modes? Corrects the modes that it violates; 1 if all hold. */
static int modes_hold(const problem *P, int *mode, const double *lam, const double *zeta, double vscale, double lscale)
{
    int ok = 1;
    for (int i = 0; i < P->n3 / 3; i++) {
        const int n = 3 * i + 2, t = 3 * i;
        const double lt = sqrt(lam[t] * lam[t] + lam[t + 1] * lam[t + 1]);
        const double zt = sqrt(zeta[t] * zeta[t] + zeta[t + 1] * zeta[t + 1]);
        if (mode[i] == SEP && zeta[n] < -1e-12 * vscale) mode[i] = STICK, ok = 0;
        else if (mode[i] != SEP && lam[n] < -1e-12 * lscale) mode[i] = SEP, ok = 0;
        else if (mode[i] == STICK && lt > P->mu * lam[n] + 1e-12 * lscale) mode[i] = SLIDE, ok = 0;
        else if (mode[i] == SLIDE && !(zt > 1e-12 * vscale && lam[t] * zeta[t] + lam[t + 1] * zeta[t + 1] < 0))
            mode[i] = STICK, ok = 0;
    }
    return ok;
}

/* Newton from the point lam with the modes H->mode, the modes corrected and Newton rerun while
 * its solution violates them; the result in out (may be lam), its fixed-point residual returned. */
static double polish(const problem *P, struct sid_hard *H, const double *lam, double *out, double vscale)
{
    const int n3 = P->n3;
    if (out != lam) memcpy(out, lam, sizeof(double) * (size_t)n3);
    for (int rep = 0; rep < 2 * (n3 / 3) + 2; rep++) {
        if (newton(P, H, out, vscale) < 0) break;
        double lscale = DBL_MIN;
        for (int k = 0; k < n3; k++) lscale = fmax(lscale, fabs(out[k]));
        zeta_all(P, out, H->zeta);
        if (modes_hold(P, H->mode, out, H->zeta, vscale, lscale)) break;
    }
    return fixed_point(P, out, H->zeta, NULL);
}

/* PGS from lam until the modes it implies (into H->mode) are the same at two checks `every`
 * sweeps apart, or at most STABLE_MAX sweeps. PGS finds the active set long before it converges
 * (the Delassus matrix of redundant contacts is near singular, and its rate is slow), and
 * Newton needs only the active set. */
enum { STABLE_MAX = 100, FAST_TRIES = 3 };
static void pgs_until_stable(const problem *P, struct sid_hard *H, double *lam, int every)
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

/* Solve the contact problem into H->lam and H->mode; H->residual gets the relative residual. */
static void solve(const problem *P, struct sid_hard *H)
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

/* ---- the step ----------------------------------------------------------------------------- */

/* Spatial velocities of the bodies (body coordinates) at joint velocities v, as sid_rnea's. */
static void body_velocities(const sid_model *m, const sid_workspace *ws, const double *v, sid_sv *vb)
{
    vb[0] = sid_sv_zero();
    for (int b = 1; b < m->nbody; b++) {
        const sid_body *bd = &m->body[b];
        vb[b] = sid_xform_motion(&ws->X[b], vb[bd->parent]);
        for (int k = 0; k < sid_joint_ndof(bd); k++)
            sid_sv_acc(&vb[b], sid_sv_scale(v[bd->vadr + k], sid_joint_col(bd, &ws->X[b], k)));
    }
}

/* Collect the contacts (spheres within the margin) with their rows of J and b = J v*. A sphere
 * is first screened with its contact point's speed |u*| from the body velocities (the margin is
 * at most radius + 2 h sqrt(2) |u*| / beta; 3 h leaves room for roundoff), so that J is built
 * only for spheres near the ground. Returns the number of contacts. */
static int gather_contacts(const sid_model *m, const double *theta, sid_workspace *ws, double h)
{
    struct sid_hard *H = ws->hard;
    const int nv = m->nv;
    int nc = 0;
    body_velocities(m, ws, H->vstar, H->vb);
    for (int sp = 0; sp < m->nsphere; sp++) {
        const int b = m->sphere[sp].body;
        const double rad = theta[m->sphere[sp].p + P_SPHERE_RADIUS];
        double phi;
        const sid_v3 cp = contact_point(m, theta, ws, sp, &phi);
        const double speed = sid_v3_norm(sid_v3_add(H->vb[b].l, sid_v3_cross(H->vb[b].w, cp)));
        if (!(phi < rad + 3 * h * speed / SID_HARD_BETA)) continue;
        double *J3 = H->J + (size_t)(3 * nc) * (size_t)nv, *b3 = H->b + 3 * nc;
        jacobian_rows(m, ws, b, cp, J3);
        for (int d = 0; d < 3; d++) {
            double x = 0;
            for (int i = 0; i < nv; i++) x += J3[d * nv + i] * H->vstar[i];
            b3[d] = x;
        }
        const double margin = rad + 2 * h * (fmax(0, -b3[2]) + sqrt(b3[0] * b3[0] + b3[1] * b3[1])) / SID_HARD_BETA;
        if (!(phi < margin)) continue;
        H->sph[nc] = sp, H->cp[nc] = cp, H->phi[nc] = phi;
        nc++;
    }
    return nc;
}

/* x := L^-T x, the first half of sid_factor_solve (dynamics.c) for the factor A = L^T L, with
 * dinv the inverse of L's diagonal. */
static void half_solve(const sid_model *m, const double *L, const double *dinv, double *x)
{
    const int n = m->nv, *parent = m->dof_parent;
    for (int k = n - 1; k >= 0; k--) {
        x[k] *= dinv[k];
        for (int i = parent[k]; i >= 0; i = parent[i]) x[i] -= L[k * n + i] * x[k];
    }
}

/* The Delassus matrix G = J A^-1 J^T = W W^T, W = J L^-1 (rows L^-T J_k): half the solves of
 * A^-1 J^T, and symmetric positive semidefinite by construction. Also sets H->dinv. */
static void delassus(const sid_model *m, const sid_workspace *ws, int n3)
{
    struct sid_hard *H = ws->hard;
    const int nv = m->nv;
    for (int i = 0; i < nv; i++) H->dinv[i] = 1 / ws->M[i * nv + i];
    for (int k = 0; k < n3; k++) {
        double *Wk = H->W + (size_t)k * (size_t)nv;
        memcpy(Wk, H->J + (size_t)k * (size_t)nv, sizeof(double) * (size_t)nv);
        half_solve(m, ws->M, H->dinv, Wk);
    }
    for (int k = 0; k < n3; k++)
        for (int l = 0; l <= k; l++) {
            double x = 0;
            const double *Wk = H->W + (size_t)k * (size_t)nv, *Wl = H->W + (size_t)l * (size_t)nv;
            for (int i = 0; i < nv; i++) x += Wk[i] * Wl[i];
            H->G[k * n3 + l] = H->G[l * n3 + k] = x;
        }
}

/* Everything up to v+ (in H->vplus; a+ in H->aplus); ws->rk holds a, ws->M the factor of A. */
static sid_status hard_forward(const sid_model *m, const double *theta, sid_workspace *ws, double h, const double *q,
                               const double *v, const double *u, problem *P, sid_error *err)
{
    struct sid_hard *H = ws->hard;
    const int nv = m->nv;
    double *a = ws->rk;
    ws->hard_mode = SID_HARD_OFF;
    sid_status s = sid_forward_dynamics(m, theta, ws, q, v, u, h, a, err);
    if (s) return s;
    for (int i = 0; i < nv; i++) H->vstar[i] = v[i] + h * a[i];
    const int nc = H->nc = gather_contacts(m, theta, ws, h), n3 = 3 * nc;
    delassus(m, ws, n3);
    const double mt = total_mass(m, theta);
    H->r = SID_HARD_REG / (mt > 0 ? mt : 1);
    P->n3 = n3, P->G = H->G, P->b = H->b, P->phi = H->phi, P->r = H->r, P->c = SID_HARD_BETA / h;
    P->mu = theta[m->p_ground + P_FRICTION];
    if (nc) solve(P, H);
    else H->residual = 0;
    /* v+ = v* + A^-1 J^T lambda */
    double *dv = H->tau;
    memset(dv, 0, sizeof(double) * (size_t)nv);
    for (int k = 0; k < n3; k++) {
        const double *Jk = H->J + (size_t)k * (size_t)nv;
        for (int i = 0; i < nv; i++) dv[i] += Jk[i] * H->lam[k];
    }
    sid_factor_solve(m, ws->M, dv);
    for (int i = 0; i < nv; i++) {
        H->vplus[i] = H->vstar[i] + dv[i];
        H->aplus[i] = (H->vplus[i] - v[i]) / h;
    }
    return SID_OK;
}

sid_status sid_hard_step(const sid_model *m, const double *theta, sid_workspace *ws, double h, const double *q,
                         const double *v, const double *u, double *q1, double *v1, sid_error *err)
{
    if (!ws->hard) return sid_error_set(err, SID_ERR_INPUT, "hard contact: the workspace has no contact scratch");
    problem P;
    sid_status s = hard_forward(m, theta, ws, h, q, v, u, &P, err);
    if (s) return s;
    memcpy(v1, ws->hard->vplus, sizeof(double) * (size_t)m->nv);
    sid_integrate_q(m, q, v1, h, q1);
    return SID_OK;
}

sid_status sid_hard_step_vjp(const sid_model *m, const double *theta, sid_workspace *ws, double h, const double *q,
                             const double *v, const double *u, const double *q1bar, const double *v1bar, double *qbar,
                             double *vbar, double *thetabar, sid_error *err)
{
    struct sid_hard *H = ws->hard;
    if (!H) return sid_error_set(err, SID_ERR_INPUT, "hard contact: the workspace has no contact scratch");
    problem P;
    sid_status s = hard_forward(m, theta, ws, h, q, v, u, &P, err);
    if (s) return s;
    const int nv = m->nv, nc = H->nc, n3 = 3 * nc;
    double *abar = H->abar;
    /* q1 = q (+) h v+, v+ = v + h a+ */
    memcpy(abar, v1bar, sizeof(double) * (size_t)nv);
    sid_integrate_q_vjp(m, q, H->vplus, h, q1bar, qbar, abar);
    for (int i = 0; i < nv; i++) {
        vbar[i] += abar[i];
        abar[i] *= h;
    }
    /* the impulses' own adjoint: K^T z = J A^-1 abar / h, zetabar = -(dE/dzeta)^T z */
    double *z = H->z, *zb = H->dl;
    memset(zb, 0, sizeof(double) * (size_t)(n3 > 0 ? n3 : 1));
    double mubar = 0;
    if (nc && !H->frozen) {
        zeta_all(&P, H->lam, H->zeta);
        mode_system(&P, H->mode, H->lam, H->zeta, H->E, H->K);
        if (lu_factor(n3, H->K, H->piv))
            return sid_error_set(err, SID_ERR_NUMERIC, "hard contact: the contact problem's Jacobian is singular");
        /* J A^-1 abar = W (L^-T abar) */
        double *w = H->tau;
        memcpy(w, abar, sizeof(double) * (size_t)nv);
        half_solve(m, ws->M, H->dinv, w);
        for (int k = 0; k < n3; k++) {
            const double *Wk = H->W + (size_t)k * (size_t)nv;
            double x = 0;
            for (int i = 0; i < nv; i++) x += Wk[i] * w[i];
            z[k] = x / h;
        }
        lu_solve(n3, H->K, H->piv, 1, z);
        for (int i = 0; i < nc; i++) {
            const int n = 3 * i + 2, t = 3 * i;
            if (H->mode[i] == SEP) continue;
            zb[n] = -z[n];
            if (H->mode[i] == STICK) {
                zb[t] = -z[t], zb[t + 1] = -z[t + 1];
                continue;
            }
            /* rows |l_t| - mu ln (no zeta; d/dmu = -ln) and l_x zeta_y - l_y zeta_x */
            zb[t] = z[t + 1] * H->lam[t + 1];
            zb[t + 1] = -z[t + 1] * H->lam[t];
            mubar += z[t] * H->lam[n];
        }
        /* abar += h J^T zetabar */
        for (int k = 0; k < n3; k++) {
            if (zb[k] == 0) continue;
            const double *Jk = H->J + (size_t)k * (size_t)nv;
            for (int i = 0; i < nv; i++) abar[i] += h * Jk[i] * zb[k];
        }
    }
    /* R1's adjoint: the Euler step's, with the impulses as fixed external forces lambda / h */
    for (int i = 0; i < nc; i++) H->seed[i] = sid_v3_scale(1 / h, sid_v3_load(H->lam + 3 * i));
    ws->hard_mode = nc ? SID_HARD_FORCES : SID_HARD_OFF;
    sid_fd_vjp_factored(m, theta, ws, q, v, u, h, H->aplus, ws->M, abar, qbar, vbar, thetabar);
    ws->hard_mode = SID_HARD_OFF;
    if (!nc || H->frozen) return SID_OK;
    /* zeta's adjoint: contact velocities J v+ and gaps through the kinematics at q, and v */
    double rbar = 0;
    for (int i = 0; i < nc; i++) {
        H->seed[i] = sid_v3_load(zb + 3 * i);
        H->phibar[i] = P.c * zb[3 * i + 2];
        for (int d = 0; d < 3; d++) rbar += zb[3 * i + d] * H->lam[3 * i + d];
    }
    memset(H->zero, 0, sizeof(double) * (size_t)nv);
    ws->hard_mode = SID_HARD_VELOCITY;
    sid_kinematics(m, theta, ws, q);
    sid_rnea(m, theta, ws, H->vplus, NULL, H->tau);
    sid_rnea_vjp(m, theta, ws, q, H->zero, qbar, vbar, thetabar);
    ws->hard_mode = SID_HARD_OFF;
    /* r = reg / total mass; mu */
    const double mt = total_mass(m, theta);
    if (mt > 0)
        for (int b = 1; b < m->nbody; b++)
            if (m->body[b].p_inertial >= 0) thetabar[m->body[b].p_inertial + P_MASS] -= rbar * H->r / mt;
    thetabar[m->p_ground + P_FRICTION] += mubar;
    return SID_OK;
}

/* ---- hooks of the RNEA ---------------------------------------------------------------------- */

void sid_hard_fext(const sid_model *m, sid_workspace *ws)
{
    const struct sid_hard *H = ws->hard;
    for (int b = 0; b < m->nbody; b++) ws->fext[b] = sid_sv_zero();
    for (int i = 0; i < H->nc; i++) {
        const int b = m->sphere[H->sph[i]].body;
        const sid_v3 Fb = sid_m3_tmul_v3(&ws->Rw[b], H->seed[i]);
        sid_sv_acc(&ws->fext[b], sid_sv_make(sid_v3_cross(H->cp[i], Fb), Fb));
    }
}

void sid_hard_rnea_vjp(const sid_model *m, const double *theta, sid_workspace *ws, double *thetabar)
{
    const struct sid_hard *H = ws->hard;
    const sid_v3 ez = {0, 0, 1};
    for (int i = 0; i < H->nc; i++) {
        const int sp = H->sph[i], b = m->sphere[sp].body;
        const double *ps = theta + m->sphere[sp].p;
        const double r = ps[P_SPHERE_RADIUS];
        const sid_m3 *R = &ws->Rw[b];
        sid_m3 *Rb = &ws->Rwbar[b];
        const sid_v3 cp = H->cp[i];
        sid_v3 cpb, cenb = {0, 0, 0};
        if (ws->hard_mode == SID_HARD_FORCES) {
            /* fext = (cp x Fb, Fb), Fb = R^T F; fext's adjoint is -fbar */
            const sid_v3 F = H->seed[i], Fb = sid_m3_tmul_v3(R, F);
            const sid_v3 tb = sid_v3_neg(ws->fbar[b].w);
            const sid_v3 Fbb = sid_v3_add(sid_v3_neg(ws->fbar[b].l), sid_v3_cross(tb, cp));
            cpb = sid_v3_cross(Fb, tb);
            sid_m3_acc_outer(Rb, F, Fbb);
        } else {
            /* u = R (v.l + v.w x cp) with adjoint seed; phi = (p + R cen).z - r - height */
            const sid_v3 ub = H->seed[i], vb = sid_v3_add(ws->v[b].l, sid_v3_cross(ws->v[b].w, cp));
            const sid_v3 vbb = sid_m3_tmul_v3(R, ub);
            sid_m3_acc_outer(Rb, ub, vb);
            sid_v3_acc(&ws->vbar[b].l, vbb);
            sid_v3_acc(&ws->vbar[b].w, sid_v3_cross(cp, vbb));
            cpb = sid_v3_cross(vbb, ws->v[b].w);
            const double pb = H->phibar[i];
            const sid_v3 cen = sid_v3_load(ps + P_SPHERE_XYZ);
            ws->pwbar[b].z += pb;
            sid_m3_acc_outer(Rb, sid_v3_make(0, 0, pb), cen);
            cenb = sid_m3_tmul_v3(R, sid_v3_make(0, 0, pb));
            if (thetabar) {
                thetabar[m->sphere[sp].p + P_SPHERE_RADIUS] -= pb;
                thetabar[m->p_ground + P_HEIGHT] -= pb;
            }
        }
        /* cp = cen - r R^T ez */
        sid_m3_acc_outer(Rb, sid_v3_scale(-r, ez), cpb);
        if (!thetabar) continue;
        double *tsp = thetabar + m->sphere[sp].p;
        tsp[P_SPHERE_XYZ + 0] += cpb.x + cenb.x;
        tsp[P_SPHERE_XYZ + 1] += cpb.y + cenb.y;
        tsp[P_SPHERE_XYZ + 2] += cpb.z + cenb.z;
        tsp[P_SPHERE_RADIUS] -= sid_v3_dot(sid_m3_tmul_v3(R, ez), cpb);
    }
}
