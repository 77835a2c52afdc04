/* model_absent.c — what robot.json leaves out that the model itself determines, and the model
 * made whole with it: a joint limit's stiffness and damping come from the joint's inertia at
 * q = 0 (MuJoCo's default soft limit), which needs the mass matrix. model.c builds the model
 * without them; this file, above the dynamics, fills them in (sid_model_create). */
#include "backlash.h"
#include "dynamics.h"
#include "joint_limit.h"
#include "workspace.h"

/* k = I k_a, b = I b_a with I = 1 / (M^-1)_jj at q = 0 (armature included; a free joint at the
 * identity rotation). Allocates: called when a model is made or written, never in a step. */
static sid_status limit_default_gains(const sid_model *m, const double *theta, double *x, sid_error *err)
{
    const double tc = SID_LIMIT_TIMECONST, dr = SID_LIMIT_DAMPRATIO, dmax = SID_LIMIT_DMAX;
    const double ka = 1 / (dmax * dmax * tc * tc * dr * dr), ba = 2 / (dmax * tc);
    const int nq = m->nq, nv = m->nv;
    sid_workspace *ws = sid_workspace_create(m);
    double *q0 = sid_alloc(sizeof(double) * (size_t)(nq + nv)), *e = q0 + nq;
    sid_status s = SID_OK;
    if (!ws || !q0) {
        s = sid_error_set(err, SID_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (int b = 1; b < m->nbody; b++)
        if (m->body[b].type == SID_JOINT_FREE) q0[m->body[b].qadr + 3] = 1;
    sid_kinematics(m, theta, ws, q0);
    sid_crba(m, ws, ws->M);
    for (int b = 1; b < m->nbody; b++)
        if (m->body[b].p_dof >= 0) ws->M[m->body[b].vadr * (nv + 1)] += theta[m->body[b].p_dof + P_ARMATURE];
    sid_backlash_inertia(m, theta, ws->M);   /* the rotors' rows (the link's inertia is the limit's) */
    int singular = sid_factor(m, ws->M);
    for (int b = 1; b < m->nbody; b++) {
        const sid_body *bd = &m->body[b];
        if (bd->p_limit < 0) continue;
        for (int i = 0; i < nv; i++) e[i] = i == bd->vadr;
        if (!singular) sid_factor_solve(m, ws->M, e);
        if (singular || !(e[bd->vadr] > 0)) {
            s = sid_error_set(err, SID_ERR_INPUT,
                              "joints[%d].limit: the default stiffness and damping need the joint's inertia at q = 0, "
                              "but the mass matrix there is singular: give limit.stiffness and limit.damping",
                              bd->joint);
            goto done;
        }
        const double I = 1 / e[bd->vadr];
        x[bd->p_limit + P_LIMIT_STIFFNESS] = I * ka;
        x[bd->p_limit + P_LIMIT_DAMPING] = I * ba;
    }
done:
    sid_free(q0);
    sid_workspace_free(ws);
    return s;
}

/* A limit's stiffness and damping that robot.json leaves out: computed from the model at the
 * nominal theta (joint_limit.h), so that a MuJoCo range behaves as MuJoCo's default limit. */
static sid_status limit_gains_where_absent(const sid_model *m, double *theta, const sid_robot_desc *d, sid_error *err)
{
    double *x = sid_alloc(sizeof(double) * (size_t)m->nparam);
    if (!x) return sid_error_set(err, SID_ERR_NOMEM, "out of memory");
    sid_status s = sid_model_absent_values(m, theta, x, err);
    for (int b = 1; !s && b < m->nbody; b++) {
        const sid_body *bd = &m->body[b];
        if (bd->p_limit < 0) continue;
        const sid_joint_desc *jd = &d->joint[bd->joint];
        if (!jd->has_limit_stiffness) theta[bd->p_limit + P_LIMIT_STIFFNESS] = x[bd->p_limit + P_LIMIT_STIFFNESS];
        if (!jd->has_limit_damping) theta[bd->p_limit + P_LIMIT_DAMPING] = x[bd->p_limit + P_LIMIT_DAMPING];
    }
    sid_free(x);
    return s;
}

sid_status sid_model_absent_values(const sid_model *m, const double *theta, double *x, sid_error *err)
{
    for (int i = 0; i < m->nparam; i++) x[i] = m->param[i].row->dflt[m->param[i].comp - m->param[i].row->comp0];
    return m->nlimit ? limit_default_gains(m, theta, x, err) : SID_OK;
}

sid_status sid_model_create(sid_model **out, double **theta_out, const sid_robot_desc *d, sid_error *err)
{
    sid_status s = sid_model_build(out, theta_out, d, err);
    if (s || !(*out)->nlimit) return s;
    if ((s = limit_gains_where_absent(*out, *theta_out, d, err))) {
        sid_model_free(*out);
        sid_free(*theta_out);
        *out = NULL;
        *theta_out = NULL;
    }
    return s;
}
