/* hard_solver.h — the contact problem of one hard-contact step (hard_solver.c) and the hard
 * contact's scratch in the workspace; the step that poses it: contact_hard.h. Internal to core/. */
#ifndef SID_HARD_SOLVER_H
#define SID_HARD_SOLVER_H

#include "workspace.h"

#define SID_HARD_BETA 0.2   /* Baumgarte factor: u_n >= -beta phi / h */
#define SID_HARD_REG 1e-3   /* regularisation r = SID_HARD_REG / total mass of the Delassus matrix */

/* Mode of a contact: separated, sticking, sliding. */
enum { SID_HARD_SEP = 0, SID_HARD_STICK = 1, SID_HARD_SLIDE = 2 };

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

/* One step's contact problem: find lambda (3 per contact, world axes) with the contact
 * conditions on zeta = b + (G + r) lambda + c phi e_n (contact_hard.c states them). */
typedef struct {
    int n3;
    const double *G, *b, *phi;
    double r, c, mu;        /* regularisation, beta / h, friction */
} sid_hard_problem;

/* Solve the contact problem into H->lam and H->mode; H->residual gets the relative residual. */
void sid_hard_solve(const sid_hard_problem *P, struct sid_hard *H);
/* zeta of every row at lam. */
void sid_hard_zeta(const sid_hard_problem *P, const double *lam, double *zeta);
/* Residual E of the active set's equations at lam (zeta given) and, if K, its Jacobian
 * K = dE/dlambda + dE/dzeta (G + r). */
void sid_hard_mode_system(const sid_hard_problem *P, const int *mode, const double *lam, const double *zeta, double *E,
                          double *K);

/* Hard contact's scratch for model m carved from c (hard_solver.c; workspace_layout.c lays it out); NULL without spheres or
 * while c only counts. */
struct sid_hard *sid_hard_carve(const sid_model *m, sid_carve *c);

#endif
