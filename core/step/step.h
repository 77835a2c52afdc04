/* step.h — one simulation step x[k+1] = f(x[k], u[k], theta), chosen from a table of variants:
 * integrator (euler, rk4, implicitfast) x contact model (none, compliant, hard) x joint friction
 * (smooth, dry) (step.c). Each variant gives its step, its adjoint from the tape record the step
 * wrote, its adjoint recomputing what it needs, its forward-mode twin (NULL: not implemented) and
 * the size of its record, each taking the step's context and its state (sid_step_io). A new
 * integrator is its enum value (sid.h) and its row in step.c (name, order, variants), plus a
 * file with its functions and their declarations below when it has verbs of its own
 * (implicitfast has none: Euler's, with the actuators' damping implicit); every name a user
 * sees, in files, flags, help and messages, comes from the row. */
#ifndef SID_STEP_H
#define SID_STEP_H

#include "contact.h"
#include "fd.h"
#include "free_joint.h"

typedef struct sid_stage_dynamics sid_stage_dynamics;

/* What every step of a variant needs besides its state. */
typedef struct {
    const sid_model *m;
    const double *theta;
    sid_workspace *ws;
    double h;                     /* step length [s] */
    const sid_fext_source *fx;    /* external forces of the variant's contact model, or NULL */
    /* forward mode: the entries of theta where a direction's thetadot may be nonzero (a
     * Jacobian pass's free parameters, jacobian.c), which lets a step with many directions form
     * its acceleration's Jacobian rows instead (fd.h); NULL: not known */
    const int *cols;
    int ncols;
    const sid_stage_dynamics *stage;   /* an explicit integrator's stage acceleration (rk4.c), or NULL */
    int implicit_act;             /* the actuators' damping is implicit (implicitfast, actuator_damping.h) */
} sid_step_ctx;

/* The acceleration a stage of an explicit integrator (rk4.c) takes at (q, v), with its adjoint
 * and tangent (stage.c): the plain forward dynamics (hd = 0), or with joint dry friction and
 * constraint limits solved as MuJoCo's forward pass solves them (dry_friction.h's rows on M + B,
 * their time constant from the whole step c->h). A stage's record keeps what its adjoint needs. */
/* Where a stage is evaluated: its state (q, v), the command u held and, once known, its
 * acceleration a. */
typedef struct {
    const double *q, *v, *u, *a;
} sid_stage_at;

struct sid_stage_dynamics {
    int (*record_size)(const sid_model *m);
    /* a at (at->q, at->v); with rec, the stage's record */
    sid_status (*accel)(const sid_step_ctx *c, const sid_stage_at *at, double *a, double *rec, sid_error *err);
    /* bar += (da/d.)^T abar at the stage whose acceleration is at->a, from its record (NULL:
     * recomputed) */
    sid_status (*vjp)(const sid_step_ctx *c, const sid_stage_at *at, const double *rec, const double *abar,
                      const sid_state_bar *bar, sid_error *err);
    /* a at (at->q, at->v) and what jvp_dir needs for any direction; rows: also the acceleration's
     * Jacobian rows for c->cols (fd.h), which jvp_dir then uses */
    sid_status (*jvp_prepare)(const sid_step_ctx *c, const sid_stage_at *at, double *a, int rows, sid_error *err);
    /* ad, the tangent of at->a along dir, after jvp_prepare at the same stage */
    void (*jvp_dir)(const sid_step_ctx *c, const sid_stage_at *at, int rows, const sid_state_dir *dir, double *ad);
};

/* stage.c */
extern const sid_stage_dynamics sid_stage_smooth, sid_stage_dry;

/* One step's state: from (q, v) with the command u held to (q1, v1); rec: where the step writes
 * its tape record (NULL: none). Verbs that only read it leave q1, v1 and rec alone. */
typedef struct {
    const double *q, *v, *u;
    double *q1, *v1;
    double *rec;
} sid_step_io;

/* A step's adjoint: given q1bar and v1bar, qbar += (dq1/dq)^T q1bar + (dv1/dq)^T v1bar, likewise
 * vbar and thetabar (nparam). */
typedef struct {
    const double *q1bar, *v1bar;
    sid_state_bar bar;   /* qbar, vbar, thetabar */
} sid_step_adj;

/* A step's tangents for ndir directions: on entry qdot (ndir x nq) and vdot (ndir x nv) hold
 * those of (q, v), thetadot (ndir x nparam) those of theta; on return qdot and vdot hold those
 * of (q1, v1). scratch: ndir x 9 nv doubles. */
typedef struct {
    int ndir;
    const double *thetadot;
    double *qdot, *vdot, *scratch;
} sid_step_dirs;

/* The forward dynamics' point of a step's state, with implicit damping hd (fd.h). */
static inline sid_fd_point sid_step_point(const sid_step_ctx *c, const sid_step_io *io, double hd)
{
    return (sid_fd_point){c->m, c->theta, c->ws, c->fx, io->q, io->v, io->u, hd, c->implicit_act};
}

/* (q, v) -> (q1, v1); with io->rec, writes the step's tape record. */
typedef sid_status (*sid_step_fn)(const sid_step_ctx *c, const sid_step_io *io, sid_error *err);
/* The adjoint from the record rec the step wrote. */
typedef sid_status (*sid_step_vjp_taped_fn)(const sid_step_ctx *c, const sid_step_io *io, const double *rec,
                                            const sid_step_adj *adj, sid_error *err);
/* The same, recomputing what the step's adjoint needs. */
typedef sid_status (*sid_step_vjp_fn)(const sid_step_ctx *c, const sid_step_io *io, const sid_step_adj *adj,
                                      sid_error *err);
/* The tangents (sid_step_dirs). */
typedef sid_status (*sid_step_jvp_fn)(const sid_step_ctx *c, const sid_step_io *io, const sid_step_dirs *dirs,
                                      sid_error *err);

/* The step's result (io->q1, io->v1) from what its jvp just left in the workspace, so that forward
 * mode need not run the step's dynamics a second time; bit for bit the step's own. */
typedef void (*sid_step_after_jvp_fn)(const sid_step_ctx *c, const sid_step_io *io);

typedef struct {
    sid_step_fn step;
    sid_step_vjp_taped_fn vjp_taped;
    sid_step_vjp_fn vjp;
    sid_step_jvp_fn jvp;                 /* NULL: forward mode not implemented */
    int (*record_size)(const sid_model *m);   /* doubles of the tape record */
    const sid_fext_source *fx;           /* external forces the dynamics includes */
    const char *unsupported;             /* non-NULL: this combination is an input error, and why */
    sid_step_after_jvp_fn after_jvp;     /* NULL: the step is taken again after its jvp */
    const sid_stage_dynamics *stage;     /* an explicit integrator's stage acceleration (rk4.c), or NULL */
    int implicit_act;                    /* 1: the actuators' damping is implicit (implicitfast) */
} sid_step_variant;

/* An integrator's order of accuracy (euler 1, rk4 4): the automatic step's error estimate. */
int sid_integrator_order(sid_integrator integ);

/* The variant for model m's contact model and integrator integ; NULL (with the reason in err)
 * for a combination that does not exist. */
const sid_step_variant *sid_step_variant_find(const sid_model *m, sid_integrator integ, sid_error *err);
/* The context of a step of length h of variant sv. */
sid_step_ctx sid_step_context(const sid_step_variant *sv, const sid_model *m, const double *theta, sid_workspace *ws,
                              double h);
/* sv->step, then a check that (q1, v1) are finite. */
sid_status sid_step_take(const sid_step_variant *sv, const sid_step_ctx *c, const sid_step_io *io, sid_error *err);
/* Why variant sv has no forward mode for model m (pushed: its log has pushes), or NULL if it
 * has; every tangent written takes free joints and pushes, so today only the variant decides. */
const char *sid_step_tangent_missing(const sid_step_variant *sv, const sid_model *m, int pushed);
/* sv->jvp, or the error that forward mode is not implemented for the model. */
sid_status sid_step_tangent(const sid_step_variant *sv, const sid_step_ctx *c, const sid_step_io *io,
                            const sid_step_dirs *dirs, sid_error *err);

/* sid_step_tangent, then the step itself into (io->q1, io->v1) (as sid_step_take, without a
 * record): from what the tangent left where the variant can (after_jvp), else by taking it again. */
sid_status sid_step_tangent_take(const sid_step_variant *sv, const sid_step_ctx *c, const sid_step_io *io,
                                 const sid_step_dirs *dirs, sid_error *err);

/* Adjoint of sid_step: given the adjoints q1bar, v1bar of its outputs, accumulate
 * qbar += (dq1/dq)^T q1bar + (dv1/dq)^T v1bar, likewise vbar and thetabar (nparam). */
sid_status sid_step_vjp(const sid_model *m, const double *theta, sid_workspace *ws, sid_integrator integ,
                        double h, const double *q, const double *v, const double *u, const double *q1bar,
                        const double *v1bar, double *qbar, double *vbar, double *thetabar, sid_error *err);

/* Forward-mode twin of sid_step for ndir directions at once: on entry qdot (ndir x nq) and
 * vdot (ndir x nv) hold tangents of (q, v), thetadot (ndir x nparam) of theta; on return
 * qdot, vdot hold the tangents of (q1, v1). scratch: ndir x 9 nv doubles (RK4 stages).
 * Written for every step variant: every joint, dry friction, free joints, compliant and hard
 * contact, and pushes. */
sid_status sid_step_jvp(const sid_model *m, const double *theta, sid_workspace *ws, sid_integrator integ, double h,
                        const double *q, const double *v, const double *u, int ndir, const double *thetadot,
                        double *qdot, double *vdot, double *scratch, sid_error *err);

/* ---- the rows' functions ---- */

/* euler.c: MuJoCo's semi-implicit Euler with implicit joint damping; record (a, L). */
sid_status sid_euler_step(const sid_step_ctx *c, const sid_step_io *io, sid_error *err);
sid_status sid_euler_vjp_taped(const sid_step_ctx *c, const sid_step_io *io, const double *rec, const sid_step_adj *adj,
                          sid_error *err);
sid_status sid_euler_vjp(const sid_step_ctx *c, const sid_step_io *io, const sid_step_adj *adj, sid_error *err);
sid_status sid_euler_jvp(const sid_step_ctx *c, const sid_step_io *io, const sid_step_dirs *dirs, sid_error *err);
int sid_euler_record_size(const sid_model *m);
/* The Euler step from the acceleration sid_euler_jvp left in ws->rk. */
void sid_euler_after_jvp(const sid_step_ctx *c, const sid_step_io *io);

/* rk4.c: classic Runge-Kutta; record (stage states and accelerations, four stage factors). */
sid_status sid_rk4_step(const sid_step_ctx *c, const sid_step_io *io, sid_error *err);
sid_status sid_rk4_vjp_taped(const sid_step_ctx *c, const sid_step_io *io, const double *rec, const sid_step_adj *adj,
                          sid_error *err);
sid_status sid_rk4_vjp(const sid_step_ctx *c, const sid_step_io *io, const sid_step_adj *adj, sid_error *err);
sid_status sid_rk4_jvp(const sid_step_ctx *c, const sid_step_io *io, const sid_step_dirs *dirs, sid_error *err);
int sid_rk4_record_size(const sid_model *m);
int sid_rk4_dry_record_size(const sid_model *m);   /* the same with the dry stage's records */

/* euler.c's adjoint of a step whose acceleration is a and the factor of M + B + h D is L; it
 * leaves w = (M + B + h D)^-1 (h abar) in ws->w (euler_dry.c reuses it). */
void sid_euler_reverse(const sid_step_ctx *c, const sid_step_io *io, const double *a, const double *L,
                       const sid_step_adj *adj);

/* euler_dry.c: the accelerations of a step of length p->hd with the dry rows solved: a0, f, a
 * (with M + B + h D) into ws->dry and ac with want_ac (the stage acceleration, with M + B); the
 * factors of M + B and M + B + h D in D->Lp and D->Lh, ws->M holding the latter too. Without
 * want_a, a stage's: a0, f, ac and D->Lp only (ws->M holds D->Lp's factor). The Euler,
 * hard-contact and RK4 (stage.c) steps with dry friction take theirs from it. */
sid_status sid_dry_accel(const sid_fd_point *p, int want_ac, int want_a, sid_error *err);
/* euler_dry.c: the dry rows' share of a step's adjoint at p (hd = 0; p's forces those of the
 * step's dynamics without the rows), after the step's own adjoint left w in ws->w: the rows'
 * torques f enter as a joint force held, so their adjoint is E^T w; then the rows' solution's
 * own adjoint, whose a0 and A part is a forward-dynamics adjoint at ac with M + B. Used by
 * Euler with dry friction and by hard contact. */
void sid_dry_rows_vjp(const sid_fd_point *p, const sid_state_bar *bar);

/* euler_dry.c: Euler with joint dry friction (dry_friction.h); record (a, ac, both factors, f, states). */
sid_status sid_dry_step(const sid_step_ctx *c, const sid_step_io *io, sid_error *err);
sid_status sid_dry_vjp_taped(const sid_step_ctx *c, const sid_step_io *io, const double *rec, const sid_step_adj *adj,
                          sid_error *err);
sid_status sid_dry_vjp(const sid_step_ctx *c, const sid_step_io *io, const sid_step_adj *adj, sid_error *err);
sid_status sid_dry_jvp(const sid_step_ctx *c, const sid_step_io *io, const sid_step_dirs *dirs, sid_error *err);
int sid_dry_record_size(const sid_model *m);

/* contact_hard.c: Euler with hard contact; no record (the adjoint re-solves the contacts). */
sid_status sid_hard_step(const sid_step_ctx *c, const sid_step_io *io, sid_error *err);
sid_status sid_hard_vjp_taped(const sid_step_ctx *c, const sid_step_io *io, const double *rec, const sid_step_adj *adj,
                          sid_error *err);
sid_status sid_hard_vjp(const sid_step_ctx *c, const sid_step_io *io, const sid_step_adj *adj, sid_error *err);
int sid_hard_record_size(const sid_model *m);
/* contact_hard_jvp.c: its tangent, the adjoint's contact system solved forwards. */
sid_status sid_hard_jvp(const sid_step_ctx *c, const sid_step_io *io, const sid_step_dirs *dirs, sid_error *err);

#endif
