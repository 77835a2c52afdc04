/* step.c — the table of step variants: integrator x contact model (step.h), and the public
 * entry points sid_step, sid_step_vjp and sid_step_jvp that call through it. */
#include "contact_hard.h"
#include "fd.h"
#include "step.h"

#include <string.h>

enum { CONTACT_NONE, CONTACT_COMPLIANT, CONTACT_HARD, NCONTACT };

/* a row per variant; fx: the contact force source of compliant contact (NULL: none); imp: the
 * actuators' damping is implicit (implicitfast) */
#define EULER(fx, imp) {sid_euler_step, sid_euler_vjp_taped, sid_euler_vjp, sid_euler_jvp, sid_euler_record_size, fx, \
                        NULL, sid_euler_after_jvp, NULL, imp}
#define EULER_DRY(fx, imp) {sid_dry_step, sid_dry_vjp_taped, sid_dry_vjp, sid_dry_jvp, sid_dry_record_size, fx, NULL, \
                            NULL, NULL, imp}
/* hard contact solves joint dry friction and limits first when the model has them (contact_hard.c) */
#define HARD(imp) {sid_hard_step, sid_hard_vjp_taped, sid_hard_vjp, sid_hard_jvp, sid_hard_record_size, NULL, NULL, \
                   NULL, NULL, imp}
#define RK4(stage, size, fx) {sid_rk4_step, sid_rk4_vjp_taped, sid_rk4_vjp, sid_rk4_jvp, size, fx, NULL, NULL, &stage, 0}
#define RK4_HARD {NULL, NULL, NULL, NULL, NULL, NULL, "the hard contact model needs the euler or implicitfast " \
                  "integrator, not rk4", NULL, NULL, 0}
#define COMPLIANT (&sid_contact_compliant)

/* An integrator: its name (the one place files and flags spell it), its order of accuracy (the
 * automatic step's error estimate), and its variants by contact model, without and with joints
 * of the dry friction model or constraint limits (dry_friction.h). */
typedef struct {
    const char *name;
    int order;
    sid_step_variant smooth[NCONTACT], dry[NCONTACT];
} integrator_row;

static const integrator_row integrators[SID_NINTEGRATOR] = {
    [SID_EULER] = {"euler", 1, {EULER(NULL, 0), EULER(COMPLIANT, 0), HARD(0)},
                   {EULER_DRY(NULL, 0), EULER_DRY(COMPLIANT, 0), HARD(0)}},
    [SID_RK4] = {"rk4", 4,
                 {RK4(sid_stage_smooth, sid_rk4_record_size, NULL), RK4(sid_stage_smooth, sid_rk4_record_size, COMPLIANT),
                  RK4_HARD},
                 {RK4(sid_stage_dry, sid_rk4_dry_record_size, NULL),
                  RK4(sid_stage_dry, sid_rk4_dry_record_size, COMPLIANT), RK4_HARD}},
    /* MuJoCo 3's implicitfast: Euler implicit in the joints' and the actuators' damping */
    [SID_IMPLICITFAST] = {"implicitfast", 1, {EULER(NULL, 1), EULER(COMPLIANT, 1), HARD(1)},
                          {EULER_DRY(NULL, 1), EULER_DRY(COMPLIANT, 1), HARD(1)}},
};

/* The names files and flags use for the contact models: the one place they are spelled. */
static const char *const contact_model_names[SID_NCONTACT_MODEL] = {[SID_CONTACT_COMPLIANT] = "compliant",
                                                                    [SID_CONTACT_HARD] = "hard"};

const sid_step_variant *sid_step_variant_find(const sid_model *m, sid_integrator integ, sid_error *err)
{
    if ((int)integ < 0 || integ >= SID_NINTEGRATOR) {
        sid_error_set(err, SID_ERR_INPUT, "no such integrator (%d)", (int)integ);
        return NULL;
    }
    const int contact = !m->nsphere ? CONTACT_NONE : m->contact == SID_CONTACT_HARD ? CONTACT_HARD : CONTACT_COMPLIANT;
    if (m->nbacklash && (m->ndry || m->nclim || contact == CONTACT_HARD)) {
        sid_error_set(err, SID_ERR_INPUT, "backlash (backlash.h) with %s is not implemented: use the smooth friction "
                      "model, the \"spring\" limit model and compliant contact",
                      m->ndry ? "dry joint friction (friction.model \"dry\")"
                      : m->nclim ? "a constraint joint limit (limit.model \"constraint\")" : "the hard contact model");
        return NULL;
    }
    const integrator_row *in = &integrators[integ];
    const sid_step_variant *sv = &(m->ndry || m->nclim ? in->dry : in->smooth)[contact];
    if (sv->unsupported) {
        sid_error_set(err, SID_ERR_INPUT, "%s", sv->unsupported);
        return NULL;
    }
    return sv;
}

const char *sid_integrator_name(int i) { return i >= 0 && i < SID_NINTEGRATOR ? integrators[i].name : NULL; }
int sid_integrator_order(sid_integrator i) { return integrators[i].order; }
const char *sid_contact_model_name(int c) { return c >= 0 && c < SID_NCONTACT_MODEL ? contact_model_names[c] : NULL; }

static int name_index(const char *const *names, int n, const char *name)
{
    for (int i = 0; name && i < n; i++)
        if (strcmp(names[i], name) == 0) return i;
    return -1;
}

int sid_integrator_parse(const char *name, sid_integrator *out)
{
    for (int i = 0; name && i < SID_NINTEGRATOR; i++)
        if (strcmp(integrators[i].name, name) == 0) return *out = (sid_integrator)i, 0;
    return -1;
}

int sid_contact_model_parse(const char *name, sid_contact_model *out)
{
    const int i = name_index(contact_model_names, SID_NCONTACT_MODEL, name);
    if (i >= 0) *out = (sid_contact_model)i;
    return i >= 0 ? 0 : -1;
}

sid_step_ctx sid_step_context(const sid_step_variant *sv, const sid_model *m, const double *theta, sid_workspace *ws,
                              double h)
{
    return (sid_step_ctx){m, theta, ws, h, sv->fx, NULL, 0, sv->stage, sv->implicit_act};
}

static sid_status check_finite(const double *x, int n, const char *what, sid_error *err)
{
    for (int i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return sid_error_set(err, SID_ERR_NONFINITE, "simulation diverged: %s[%d] is not finite", what, i);
    return SID_OK;
}

sid_status sid_step_take(const sid_step_variant *sv, const sid_step_ctx *c, const sid_step_io *io, sid_error *err)
{
    sid_status s;
    if ((s = sv->step(c, io, err))) return s;
    if ((s = check_finite(io->q1, c->m->nq, "q", err)) || (s = check_finite(io->v1, c->m->nv, "v", err))) return s;
    return SID_OK;
}

const char *sid_step_tangent_missing(const sid_step_variant *sv, const sid_model *m, int pushed)
{
    (void)m, (void)pushed;   /* every row with a tangent takes free joints and pushes */
    return sv->jvp ? NULL : "forward-mode derivatives of this step variant are not implemented";
}

sid_status sid_step_tangent(const sid_step_variant *sv, const sid_step_ctx *c, const sid_step_io *io,
                            const sid_step_dirs *dirs, sid_error *err)
{
    const char *why = sid_step_tangent_missing(sv, c->m, c->ws->push != NULL);
    if (why) return sid_error_set(err, SID_ERR_INPUT, "%s", why);
    return sv->jvp(c, io, dirs, err);
}

sid_status sid_step_tangent_take(const sid_step_variant *sv, const sid_step_ctx *c, const sid_step_io *io,
                                 const sid_step_dirs *dirs, sid_error *err)
{
    sid_status s = sid_step_tangent(sv, c, io, dirs, err);
    if (s) return s;
    if (!sv->after_jvp) {
        const sid_step_io again = {io->q, io->v, io->u, io->q1, io->v1, NULL};
        return sid_step_take(sv, c, &again, err);
    }
    sv->after_jvp(c, io);
    if ((s = check_finite(io->q1, c->m->nq, "q", err)) || (s = check_finite(io->v1, c->m->nv, "v", err))) return s;
    return SID_OK;
}

sid_status sid_step(const sid_model *m, const double *theta, sid_workspace *ws, sid_integrator integ, double h,
                    const double *q, const double *v, const double *u, double *q1, double *v1, sid_error *err)
{
    const sid_step_variant *sv = sid_step_variant_find(m, integ, err);
    if (!sv) return SID_ERR_INPUT;
    const sid_step_ctx c = sid_step_context(sv, m, theta, ws, h);
    const sid_step_io io = {q, v, u, q1, v1, NULL};
    return sid_step_take(sv, &c, &io, err);
}

sid_status sid_step_vjp(const sid_model *m, const double *theta, sid_workspace *ws, sid_integrator integ, double h,
                        const double *q, const double *v, const double *u, const double *q1bar, const double *v1bar,
                        double *qbar, double *vbar, double *thetabar, sid_error *err)
{
    const sid_step_variant *sv = sid_step_variant_find(m, integ, err);
    if (!sv) return SID_ERR_INPUT;
    const sid_step_ctx c = sid_step_context(sv, m, theta, ws, h);
    const sid_step_io io = {q, v, u, NULL, NULL, NULL};
    const sid_step_adj adj = {q1bar, v1bar, {qbar, vbar, thetabar}};
    return sv->vjp(&c, &io, &adj, err);
}

sid_status sid_step_jvp(const sid_model *m, const double *theta, sid_workspace *ws, sid_integrator integ, double h,
                        const double *q, const double *v, const double *u, int ndir, const double *thetadot,
                        double *qdot, double *vdot, double *scratch, sid_error *err)
{
    const sid_step_variant *sv = sid_step_variant_find(m, integ, err);
    if (!sv) return SID_ERR_INPUT;
    const sid_step_ctx c = sid_step_context(sv, m, theta, ws, h);
    const sid_step_io io = {q, v, u, NULL, NULL, NULL};
    const sid_step_dirs dirs = {ndir, thetadot, qdot, vdot, scratch};
    return sid_step_tangent(sv, &c, &io, &dirs, err);
}
