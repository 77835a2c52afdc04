/* contact_hard.h — the hard contact step (contact_hard.c: the step and its adjoint;
 * contact_hard_jvp.c: its forward mode; the contact problem and its scratch: hard_solver.h).
 * Internal to core/. */
#ifndef SID_CONTACT_HARD_H
#define SID_CONTACT_HARD_H

#include "hard_solver.h"
#include "step.h"

/* contact_hard.c's step up to v+ (H->vplus; a+ in H->aplus): the dynamics without contact
 * (a in ws->rk, the factor of A = M + B + h D in ws->M), the contacts (H->nc, sph, cp, phi, J,
 * b), W and the Delassus matrix, and the solve (H->lam, mode); P gets the contact problem. */
sid_status sid_hard_forward(const sid_step_ctx *c, const sid_step_io *io, sid_hard_problem *P, sid_error *err);
/* The external forces of a sid_fext_source whose ctx is the struct sid_hard: the world forces
 * H->seed at the contact points H->cp of the last sid_hard_forward, held fixed (the impulses
 * over h in the step's residual R1), and their adjoint. */
void sid_hard_impulse_forces(const sid_model *m, const double *theta, sid_workspace *ws, const void *ctx, sid_sv *fext);
void sid_hard_impulse_forces_vjp(const sid_model *m, const double *theta, sid_workspace *ws, const void *ctx,
                                 const sid_sv *fextbar, double *thetabar);
/* Sum of the link masses (the regularisation's scale). */
double sid_hard_total_mass(const sid_model *m, const double *theta);

/* The step and its adjoint are a row of the step table (step.h). */
/* Tests: the last solve's contacts (sphere, mode SID_HARD_SEP / STICK / SLIDE, impulse (3 per
 * contact), relative residual); returns their number. Arrays may be NULL. */
int sid_hard_last(const sid_workspace *ws, int *sphere, int *mode, double *lambda, double *residual);
/* Tests: frozen = 1 makes the adjoint hold the impulses fixed (the naive gradient). */
void sid_hard_set_frozen(sid_workspace *ws, int frozen);

#endif
