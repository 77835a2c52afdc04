/* contact_hard.h — the hard contact model (contact_hard.c: the step and its adjoint;
 * contact_hard_jvp.c: its forward mode; hard_solver.c: the contact problem). Internal to core/. */
#ifndef SID_CONTACT_HARD_H
#define SID_CONTACT_HARD_H

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

/* contact_hard.c's step up to v+ (H->vplus; a+ in H->aplus): the dynamics without contact
 * (a in ws->rk, the factor of A = M + B + h D in ws->M), the contacts (H->nc, sph, cp, phi, J,
 * b), W and the Delassus matrix, and the solve (H->lam, mode); P gets the contact problem. */
sid_status sid_hard_forward(const sid_model *m, const double *theta, sid_workspace *ws, double h, const double *q,
                            const double *v, const double *u, sid_hard_problem *P, sid_error *err);
/* The external forces of a sid_fext_source whose ctx is the struct sid_hard: the world forces
 * H->seed at the contact points H->cp of the last sid_hard_forward, held fixed (the impulses
 * over h in the step's residual R1), and their adjoint. */
void sid_hard_impulse_forces(const sid_model *m, const double *theta, sid_workspace *ws, const void *ctx, sid_sv *fext);
void sid_hard_impulse_forces_vjp(const sid_model *m, const double *theta, sid_workspace *ws, const void *ctx,
                                 const sid_sv *fextbar, double *thetabar);
/* Sum of the link masses (the regularisation's scale). */
double sid_hard_total_mass(const sid_model *m, const double *theta);

/* Hard contact's scratch for model m carved from c (workspace_layout.c); NULL without spheres or
 * while c only counts. */
struct sid_hard *sid_hard_carve(const sid_model *m, sid_carve *c);
/* The step and its adjoint are a row of the step table (step.h). */
/* Tests: the last solve's contacts (sphere, mode SID_HARD_SEP / STICK / SLIDE, impulse (3 per
 * contact), relative residual); returns their number. Arrays may be NULL. */
int sid_hard_last(const sid_workspace *ws, int *sphere, int *mode, double *lambda, double *residual);
/* Tests: frozen = 1 makes the adjoint hold the impulses fixed (the naive gradient). */
void sid_hard_set_frozen(sid_workspace *ws, int frozen);

#endif
