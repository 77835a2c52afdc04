/* dry_friction.h — joint dry friction that sticks: MuJoCo's frictionloss, a soft constraint
 * with one row per joint of the dry model, solved exactly each step (dry_friction.c), with its
 * adjoint and tangent by implicit differentiation of the solution's active set. The step that
 * uses it is euler_dry.c. Internal to core/.
 *
 * With a0 = (M + B)^-1 (F - c - D v) the acceleration without the constraint (M the mass
 * matrix, B the armature, D the viscous damping, F the other joint forces, c the bias and
 * contact forces), E the unit columns of the frictional dofs, A = E^T (M + B)^-1 E, and per row
 *   aref_j = -b v_j,  b = 2 / (dmax tc),  tc = max(SID_DRY_TIMECONST, 2 h)
 *   R_j = (1 - d) invweight0_j / d,  d = SID_DRY_DMIN,
 *   invweight0_j = ((M + B)^-1)_jj at q = 0 (free joints at the identity), from theta,
 * the friction torques f solve the box QP
 *   min 1/2 f^T (A + R) f + f^T (E^T a0 - aref)   subject to -coulomb_j <= f_j <= coulomb_negative_j
 * (coulomb_negative_j = coulomb_j unless given: friction.coulomb_negative; with friction.load mu,
 * both levels grow by mu |tau_m|, tau_m the joint's motor torque at (v, u)),
 * and the step is MuJoCo's Euler: (M + B + h D) a = F - c - D v + E f, v1 = v + h a,
 * q1 = q + h v1. This is MuJoCo 2.2.2's frictionloss row with the default solreffriction
 * (0.02 1) and solimpfriction (0.9 0.95 ...), including its timeconst >= 2 h safety.
 *
 * The same QP holds MuJoCo's joint limit (limit.model "constraint"): per bound, while it is
 * crossed (dist = q - lower or upper - q < 0, MuJoCo's margin 0), a row with J = +1 (lower) or
 * -1 (upper) at the dof, bounds [0, inf) (it pushes, never pulls), and
 *   aref_j = -b J v - k imp(dist) dist,  k = 1 / (dmax^2 tc^2 dr^2),  dr = 1 (solreflimit),
 *   R_j = (1 - imp) invweight0_j / imp,
 * imp(dist) MuJoCo's impedance for solimp (0.9 0.95 0.001 0.5 2): from 0.9 at dist = 0 to 0.95
 * at |dist| >= 1 mm along two quadratic pieces; its slope enters the adjoint and the tangent.
 * The row set changes only where a bound is crossed, so the solution's derivative there is
 * the fixed set's (as for the active set). Friction rows come first, then each constraint
 * limit's lower and upper rows, in body order. */
#ifndef SID_DRY_FRICTION_H
#define SID_DRY_FRICTION_H

#include "fd_point.h"

#define SID_DRY_TIMECONST 0.02   /* MuJoCo's default solref[0] [s] */
#define SID_DRY_DMIN 0.9         /* solimp[0]: the impedance at zero distance, where friction rows sit */
#define SID_DRY_DMAX 0.95        /* solimp[1]: enters the damping b */
#define SID_LIM_WIDTH 0.001      /* solimp[2]: the distance over which a limit's impedance rises */
#define SID_LIM_MID 0.5          /* solimp[3], solimp[4] = 2: the two quadratic pieces' junction */
#define SID_ROW_ABSENT 2         /* a limit row's state while its bound is not crossed */

struct sid_dry {
    int nf, nv, nq, np;
    int nfric;              /* rows 0 .. nfric - 1 are friction rows, the rest limit rows */
    int *dof;               /* (nf) velocity index of row j */
    int *qadr;              /* (nf) its position index */
    int *pcoul;             /* (nf) theta index of its coulomb (friction) or of its bound (limit) */
    int *pneg;              /* (nf) a friction row's coulomb_negative (its coulomb where absent); as pcoul */
    int *pload;             /* (nf) a friction row's friction.load, -1 where absent (and on limit rows) */
    int *body;              /* (nf) the row's body */
    const double *theta;    /* the last build's parameters (the load term's adjoint reads them) */
    int *sgn;               /* (nf) J's entry at dof: +1, or -1 for an upper bound */
    int *state;             /* (nf) the last solve: -1 / +1 at the lower / upper bound, 0 free,
                             * SID_ROW_ABSENT a limit row whose bound is not crossed */
    int *piv, *free_of;     /* (nf) LU pivots of the free rows' matrix; free row k -> row */
    int nfree;
    double b, k;            /* aref = -b J v (- k imp dist) of the last solve */
    double *dist, *imp, *impp;       /* (nf) a limit row's distance, impedance, d imp / d dist */
    double *ln;             /* (nf) a friction row's upper bound (coulomb_negative), l its lower's size */
    double *taum, *vm, *um; /* (nf) a load row's motor torque and the dof's v and u it came from */
    double *A, *K;          /* (nf x nf) E^T (M + B)^-1 E; LU of (A + R) on the free rows */
    double *g, *f, *l, *R, *y, *t;   /* (nf) */
    double *Lp, *Lh;        /* (nv x nv) factors of M + B and of M + B + h D */
    double *a0, *a, *ac, *e, *abar;  /* (nv) a0; a; a0 + (M + B)^-1 E f; scratch */
    /* invweight0 and its gradient, for the theta they were computed at */
    int valid;
    double *theta_seen, *thg;        /* (np) */
    double *invw, *dinvw;            /* (nf), (nf x np) */
    double *Z, *q0, *qb, *vb;        /* (nf x nv), (nq), (nq), (nv) */
    double residual;        /* KKT residual of the last solve, relative */
};

/* The scratch for model m carved from c (workspace_layout.c); NULL without dry joints or while
 * counting. */
struct sid_dry *sid_dry_carve(const sid_model *m, sid_carve *c);
/* invweight0 and d invweight0 / d theta at theta, unless theta is the one they were computed
 * at. Overwrites the workspace's kinematics and mass matrix: call before a step's dynamics. */
sid_status sid_dry_prepare(const sid_model *m, const double *theta, sid_workspace *ws, sid_error *err);
/* With D->Lp the factor of M + B and D->a0: A, g, and the exact solution f, its active set. */
void sid_dry_solve(const sid_fd_point *p);
/* The last solve's rows again from D->Lp, D->f and D->state (a tape record's): A, R, b and the
 * free rows' factor, for the adjoint and tangent, without solving. */
void sid_dry_restore(const sid_fd_point *p);
/* Adjoint of the solution: given fbar (nf), accumulates qbar, vbar and thetabar through aref, R
 * and the bounds, and leaves in D->abar (nv) the adjoint that a0 and A pass on: the caller feeds it
 * to sid_fd_vjp_factored at acceleration D->ac with the factor D->Lp and hd = 0. */
void sid_dry_vjp_solution(const sid_model *m, sid_workspace *ws, const double *fbar, const sid_state_bar *bar);
/* Tangent of the solution: fdot (nf) from t (nv) = (M + B)^-1 (rdot - (M + B)dot ac) (what
 * sid_fd_jvp_dir gives at ac with hd = 0), qdot, vdot and thetadot. */
void sid_dry_jvp_solution(const sid_model *m, sid_workspace *ws, const double *t, const sid_state_dir *dir, double *fdot);
/* Tests: the last solve's torques and states (either may be NULL); returns the rows' number. */
int sid_dry_last(const sid_workspace *ws, double *f, int *state, double *residual);

#endif
