/* integrator.h — the taped adjoints of the Euler and RK4 steps (integrator.c). */
#ifndef SID_INTEGRATOR_H
#define SID_INTEGRATOR_H

#include "workspace.h"

/* Doubles of an RK4 step's stages: three stage states and four accelerations. */
static inline int sid_rk_size(const sid_model *m) { return 3 * m->nq + 7 * m->nv; }

/* Adjoint of one Euler step whose acceleration a and factor L (sid_factor of M + B + hD) were
 * kept from the forward pass (after sid_step they are in ws->rk and ws->M): no mass matrix
 * is recomputed. Same accumulation as sid_step_vjp. */
void sid_euler_vjp_taped(const sid_model *m, const double *theta, sid_workspace *ws, double h, const double *q,
                         const double *v, const double *u, const double *a, const double *L, const double *q1bar,
                         const double *v1bar, double *qbar, double *vbar, double *thetabar);
/* Adjoint of one RK4 step whose stages (q2, v2, q3, v3, q4, v4, a1..a4; after sid_step in
 * ws->rk) and stage factors (ws->Lst) were kept from the forward pass. */
void sid_rk4_vjp_taped(const sid_model *m, const double *theta, sid_workspace *ws, double h, const double *q,
                       const double *v, const double *u, const double *stages, const double *L, const double *q1bar,
                       const double *v1bar, double *qbar, double *vbar, double *thetabar);

#endif
