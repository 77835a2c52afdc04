/* constraint_rig.c — see constraint_rig.h. */
#include "constraint_rig.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

void rig_chain_link(rig_chain *c, int k, unsigned *s)
{
    c->xyz[k][2] = k ? -0.3 : 0;
    c->axis[k][k % 2 ? 0 : 1] = 1;
    c->mass[k] = tu_uniform(s, 0.5, 1.5);
    c->com[k][0] = tu_uniform(s, -0.02, 0.02);
    c->com[k][2] = tu_uniform(s, -0.2, -0.1);
    for (int i = 0; i < 3; i++) c->inertia[k][i] = tu_uniform(s, 0.004, 0.008);
    c->armature[k] = tu_uniform(s, 0.001, 0.01);
    c->damping[k] = tu_uniform(s, 0.01, 0.05);
}

int rig_json(const rig_chain *c, char *buf, size_t len, const char *friction, const char *limit)
{
    int o = snprintf(buf, len, "{\"name\": \"chain\", \"gravity\": [0, 0, -9.81], \"links\": [{\"name\": \"l0\"}");
    for (int k = 0; k < c->n; k++)
        o += snprintf(buf + o, len - (size_t)o,
                      ", {\"name\": \"l%d\", \"mass\": %.17g, \"com\": [%.17g, %.17g, %.17g], \"inertia\": "
                      "{\"ixx\": %.17g, \"iyy\": %.17g, \"izz\": %.17g}}",
                      k + 1, c->mass[k], c->com[k][0], c->com[k][1], c->com[k][2], c->inertia[k][0], c->inertia[k][1],
                      c->inertia[k][2]);
    o += snprintf(buf + o, len - (size_t)o, "], \"joints\": [");
    for (int k = 0; k < c->n; k++) {
        o += snprintf(buf + o, len - (size_t)o,
                      "%s{\"name\": \"j%d\", \"type\": \"revolute\", \"parent\": \"l%d\", \"child\": \"l%d\", "
                      "\"origin\": {\"xyz\": [%.17g, %.17g, %.17g]}, \"axis\": [%.17g, %.17g, %.17g], "
                      "\"armature\": %.17g, \"friction\": {\"viscous\": %.17g, \"coulomb\": %.17g%s%s%s}, ",
                      k ? ", " : "", k, k, k + 1, c->xyz[k][0], c->xyz[k][1], c->xyz[k][2], c->axis[k][0],
                      c->axis[k][1], c->axis[k][2], c->armature[k], c->damping[k], c->floss[k],
                      friction ? ", \"model\": \"" : "", friction ? friction : "", friction ? "\"" : "");
        if (limit)
            o += snprintf(buf + o, len - (size_t)o, "\"limit\": {\"lower\": %.17g, \"upper\": %.17g, \"model\": \"%s\"}, ",
                          c->lo[k], c->hi[k], limit);
        o += snprintf(buf + o, len - (size_t)o, "\"motor\": {\"input\": \"torque\"}}");
    }
    o += snprintf(buf + o, len - (size_t)o, "]}");
    return o;
}

int rig_mjcf(const rig_chain *c, char *buf, size_t len, int limited)
{
    return rig_mjcf_integrator(c, buf, len, limited, "Euler");
}

int rig_mjcf_integrator(const rig_chain *c, char *buf, size_t len, int limited, const char *integrator)
{
    int o = snprintf(buf, len,
                     "<mujoco><compiler angle=\"radian\" inertiafromgeom=\"false\"/>"
                     "<option timestep=\"0.001\" gravity=\"0 0 -9.81\" integrator=\"%s\" tolerance=\"1e-12\" "
                     "iterations=\"1000\"><flag contact=\"disable\" warmstart=\"disable\"/></option><worldbody>",
                     integrator);
    for (int k = 0; k < c->n; k++) {
        o += snprintf(buf + o, len - (size_t)o,
                      "<body name=\"l%d\" pos=\"%.17g %.17g %.17g\"><inertial pos=\"%.17g %.17g %.17g\" mass=\"%.17g\" "
                      "diaginertia=\"%.17g %.17g %.17g\"/><joint name=\"j%d\" type=\"hinge\" axis=\"%.17g %.17g %.17g\" "
                      "armature=\"%.17g\" damping=\"%.17g\" frictionloss=\"%.17g\"",
                      k + 1, c->xyz[k][0], c->xyz[k][1], c->xyz[k][2], c->com[k][0], c->com[k][1], c->com[k][2],
                      c->mass[k], c->inertia[k][0], c->inertia[k][1], c->inertia[k][2], k, c->axis[k][0],
                      c->axis[k][1], c->axis[k][2], c->armature[k], c->damping[k], c->floss[k]);
        if (limited)
            o += snprintf(buf + o, len - (size_t)o, " limited=\"true\" range=\"%.17g %.17g\"", c->lo[k], c->hi[k]);
        o += snprintf(buf + o, len - (size_t)o, "/>");
    }
    for (int k = 0; k < c->n; k++) o += snprintf(buf + o, len - (size_t)o, "</body>");
    o += snprintf(buf + o, len - (size_t)o, "</worldbody></mujoco>");
    return o;
}

mjModel *rig_mujoco(const char *xml)
{
    mjVFS vfs;
    char err[1000] = "";
    mj_defaultVFS(&vfs);
    ck_assert_int_eq(mj_makeEmptyFileVFS(&vfs, "chain.xml", (int)strlen(xml)), 0);
    memcpy(vfs.filedata[mj_findFileVFS(&vfs, "chain.xml")], xml, strlen(xml));
    mjModel *mm = mj_loadXML("chain.xml", &vfs, err, sizeof err);
    mj_deleteVFS(&vfs);
    ck_assert_msg(mm != NULL, "%s", err);
    return mm;
}

double rig_torque(const rig_chain *c, int k, double t) { return c->bias[k] + c->amp[k] * sin(c->w[k] * t + c->ph[k]); }

void rig_model_make(rig_model *p, const rig_chain *c, const char *friction, const char *limit)
{
    static char buf[16384];
    sid_error err = {0};
    const int n = rig_json(c, buf, sizeof buf, friction, limit);
    ck_assert_int_lt(n, (int)sizeof buf);
    ck_assert_msg(robot_json_parse("chain.json", buf, (size_t)n, &p->desc, NULL, &err) == 0, "%s", err.msg);
    ck_assert_msg(sid_model_create(&p->m, &p->theta, &p->desc, &err) == SID_OK, "%s", err.msg);
    p->ws = sid_workspace_create(p->m);
    ck_assert_ptr_nonnull(p->ws);
}

void rig_model_free(rig_model *p)
{
    sid_workspace_free(p->ws);
    sid_model_free(p->m);
    sid_free(p->theta);
    robot_desc_free(&p->desc);
}

/* ---- the window ---------------------------------------------------------------------------- */

void rig_win_start(rig_window *w, unsigned seed, double qspan)
{
    const int n = w->c.n;
    unsigned s = seed + 50;
    for (int i = 0; i < n; i++) w->q0[i] = tu_uniform(&s, -qspan, qspan), w->v0[i] = tu_uniform(&s, -0.5, 0.5);
    for (int k = 0; k <= RIG_NSTEP; k++)
        for (int i = 0; i < n; i++) w->wq[k][i] = tu_uniform(&s, -1, 1), w->wv[k][i] = tu_uniform(&s, -0.1, 0.1);
}

double rig_win_loss(rig_window *w)
{
    const int n = w->c.n;
    double L = 0, u[RIG_MAXJ];
    sid_error err = {0};
    memcpy(w->Q[0], w->q0, sizeof w->q0);
    memcpy(w->V[0], w->v0, sizeof w->v0);
    for (int k = 0; k < RIG_NSTEP; k++) {
        for (int i = 0; i < n; i++) u[i] = rig_torque(&w->c, i, k * 1e-3);
        ck_assert_msg(sid_step(w->p.m, w->p.theta, w->p.ws, w->integ, 1e-3, w->Q[k], w->V[k], u, w->Q[k + 1],
                               w->V[k + 1], &err) == SID_OK, "%s", err.msg);
    }
    for (int k = 0; k <= RIG_NSTEP; k++)
        for (int i = 0; i < n; i++) L += w->wq[k][i] * w->Q[k][i] + w->wv[k][i] * w->V[k][i];
    return L;
}

void rig_win_adjoint(rig_window *w, double *q0bar, double *v0bar, double *thetabar)
{
    const int n = w->c.n;
    double qb[RIG_MAXJ], vb[RIG_MAXJ], u[RIG_MAXJ];
    sid_error err = {0};
    rig_win_loss(w);
    for (int i = 0; i < n; i++) qb[i] = w->wq[RIG_NSTEP][i], vb[i] = w->wv[RIG_NSTEP][i];
    for (int k = RIG_NSTEP - 1; k >= 0; k--) {
        double nq[RIG_MAXJ], nvb[RIG_MAXJ];
        for (int i = 0; i < n; i++) nq[i] = w->wq[k][i], nvb[i] = w->wv[k][i], u[i] = rig_torque(&w->c, i, k * 1e-3);
        ck_assert_int_eq(sid_step_vjp(w->p.m, w->p.theta, w->p.ws, w->integ, 1e-3, w->Q[k], w->V[k], u, qb, vb, nq,
                                      nvb, thetabar, &err), SID_OK);
        memcpy(qb, nq, sizeof qb);
        memcpy(vb, nvb, sizeof vb);
    }
    memcpy(q0bar, qb, sizeof qb);
    memcpy(v0bar, vb, sizeof vb);
}

double rig_win_fd(rig_window *w, double *x)
{
    const double x0 = *x, e = 1e-6 * fmax(1, fabs(x0));
    *x = x0 + e;
    const double Lp = rig_win_loss(w);
    *x = x0 - e;
    const double Lm = rig_win_loss(w);
    *x = x0;
    return (Lp - Lm) / (2 * e);
}

double rig_win_gradient_err(rig_window *w, const double *q0bar, const double *v0bar, const double *thetabar,
                            char *where, size_t wlen, int *checked, int *bounds)
{
    const int n = w->c.n, np = sid_model_nparam(w->p.m);
    /* what rounding leaves in a central difference: the loss summed over 300 steps (RK4's four
     * stages each) is good to a few 1e-15 of itself, divided by the step 2e-6 (measured: 1.6e-9
     * on a derivative that is 0, the loss 1.28) */
    const double atol = 2e-9 * fmax(1, fabs(rig_win_loss(w)));
    double worst = 0;
    snprintf(where, wlen, "none");
    for (int i = 0; i < n; i++) {
        const double eq = tu_rel_err(q0bar[i], rig_win_fd(w, &w->q0[i]), atol);
        const double ev = tu_rel_err(v0bar[i], rig_win_fd(w, &w->v0[i]), atol);
        if (eq > worst) worst = eq, snprintf(where, wlen, "q0[%d]", i);
        if (ev > worst) worst = ev, snprintf(where, wlen, "v0[%d]", i);
    }
    *checked = *bounds = 0;
    for (int j = 0; j < np; j++) {
        const double num = rig_win_fd(w, &w->p.theta[j]), e = tu_rel_err(thetabar[j], num, atol);
        const char *name = sid_model_param(w->p.m, j)->name;
        *checked += fabs(num) > 1e-6;
        *bounds += fabs(num) > 1e-6 && strstr(name, "limit.") != NULL;
        if (e > worst) worst = e, snprintf(where, wlen, "%s: adjoint %.10g, fd %.10g", name, thetabar[j], num);
    }
    return worst;
}

void rig_win_forward_mode(rig_window *w, const char *label)
{
    const int n = w->c.n, np = sid_model_nparam(w->p.m);
    double q0bar[RIG_MAXJ], v0bar[RIG_MAXJ], *thetabar = calloc((size_t)np, sizeof(double));
    double *thd = calloc((size_t)np, sizeof(double)), qd[RIG_MAXJ], vd[RIG_MAXJ], scratch[9 * RIG_MAXJ], u[RIG_MAXJ];
    rig_win_adjoint(w, q0bar, v0bar, thetabar);
    unsigned s = 5;
    double rev = 0, fwd = 0;
    for (int i = 0; i < n; i++) {
        qd[i] = tu_uniform(&s, -1, 1), vd[i] = tu_uniform(&s, -1, 1);
        rev += q0bar[i] * qd[i] + v0bar[i] * vd[i];
        fwd += w->wq[0][i] * qd[i] + w->wv[0][i] * vd[i];
    }
    for (int j = 0; j < np; j++) {
        thd[j] = tu_uniform(&s, -1, 1) * fmax(0.01, fabs(w->p.theta[j]));
        rev += thetabar[j] * thd[j];
    }
    sid_error err = {0};
    for (int k = 0; k < RIG_NSTEP; k++) {
        for (int i = 0; i < n; i++) u[i] = rig_torque(&w->c, i, k * 1e-3);
        ck_assert_msg(sid_step_jvp(w->p.m, w->p.theta, w->p.ws, w->integ, 1e-3, w->Q[k], w->V[k], u, 1, thd, qd, vd,
                                   scratch, &err) == SID_OK, "%s", err.msg);
        for (int i = 0; i < n; i++) fwd += w->wq[k + 1][i] * qd[i] + w->wv[k + 1][i] * vd[i];
    }
    fprintf(stderr, "%s forward mode: w.(J xdot) %.15g, (J^T w).xdot %.15g, relative difference %.2e\n", label, fwd,
            rev, fabs(fwd - rev) / fabs(rev));
    ck_assert_msg(fabs(fwd - rev) <= 1e-10 * fabs(rev), "forward %.15g, reverse %.15g", fwd, rev);
    free(thd);
    free(thetabar);
}

void rig_win_taped(rig_window *w, int replay, const char *label, const char *largest)
{
    const int n = w->c.n, np = sid_model_nparam(w->p.m);
    sid_error err = {0};
    const sid_step_variant *sv = sid_step_variant_find(w->p.m, w->integ, &err);
    ck_assert_ptr_nonnull(sv);
    const sid_step_ctx c = sid_step_context(sv, w->p.m, w->p.theta, w->p.ws, 1e-3);
    double *rec = malloc(sizeof(double) * (size_t)sv->record_size(w->p.m));
    double *t1 = calloc((size_t)np, sizeof(double)), *t2 = calloc((size_t)np, sizeof(double));
    double worst = 0, scale = 0;
    rig_win_loss(w);
    for (int k = 0; k < RIG_NSTEP; k++) {
        double u[RIG_MAXJ], q1[RIG_MAXJ], v1[RIG_MAXJ], qb1[RIG_MAXJ] = {0}, vb1[RIG_MAXJ] = {0}, qb2[RIG_MAXJ] = {0},
               vb2[RIG_MAXJ] = {0};
        for (int i = 0; i < n; i++) u[i] = rig_torque(&w->c, i, k * 1e-3);
        const sid_step_io io = {w->Q[k], w->V[k], u, q1, v1, rec};
        ck_assert_int_eq(sid_step_take(sv, &c, &io, &err), SID_OK);
        if (replay)
            for (int i = 0; i < n; i++) ck_assert(q1[i] == w->Q[k + 1][i] && v1[i] == w->V[k + 1][i]);
        memset(t1, 0, sizeof(double) * (size_t)np);
        memset(t2, 0, sizeof(double) * (size_t)np);
        const sid_step_adj adj1 = {w->wq[k + 1], w->wv[k + 1], {qb1, vb1, t1}},
                           adj2 = {w->wq[k + 1], w->wv[k + 1], {qb2, vb2, t2}};
        ck_assert_int_eq(sv->vjp(&c, &io, &adj1, &err), SID_OK);
        ck_assert_int_eq(sv->vjp_taped(&c, &io, rec, &adj2, &err), SID_OK);
        for (int i = 0; i < n; i++) {
            worst = fmax(worst, fmax(fabs(qb1[i] - qb2[i]), fabs(vb1[i] - vb2[i])));
            scale = fmax(scale, fmax(fabs(qb1[i]), fabs(vb1[i])));
        }
        for (int j = 0; j < np; j++) worst = fmax(worst, fabs(t1[j] - t2[j])), scale = fmax(scale, fabs(t1[j]));
    }
    fprintf(stderr, "%s taped adjoint vs re-solving adjoint: max difference %.2e (%s %.2e)\n", label, worst, largest,
            scale);
    ck_assert_msg(worst <= 1e-12 * scale, "taped %g off, scale %g", worst, scale);
    free(t1);
    free(t2);
    free(rec);
}

void rig_win_free(rig_window *w)
{
    rig_model_free(&w->p);
    free(w);
}

double rig_fit_worst(const sid_model *m, double *theta, const double *truth, const sid_traj *log, int n, const int *idx,
                     const double *lo, const double *hi, sid_fit_result *res, int *at)
{
    sid_error err = {0};
    sid_loss_opts o;
    sid_loss_opts_defaults(&o);
    o.window = 0.5;
    o.sim.substeps = 1;
    o.estimate_start = 1;
    sid_problem *pr;
    ck_assert_msg(sid_problem_create(&pr, m, &log, 1, &o, &err) == SID_OK, "%s", err.msg);
    const int nx = sid_model_nq(m) + sid_model_nv(m);
    double *x0 = malloc(sizeof(double) * (size_t)(sid_problem_nwindows(pr) * nx));
    ck_assert_ptr_nonnull(x0);
    sid_problem_start_states(pr, theta, x0);
    sid_fit_opts fo;
    sid_fit_opts_defaults(&fo);
    fo.nfree = n, fo.idx = idx, fo.lo = lo, fo.hi = hi;
    fo.ftol_rel = 1e-15;
    ck_assert_msg(sid_fit(pr, theta, x0, &fo, res, &err) == SID_OK, "%s", err.msg);
    double worst = 0;
    *at = idx[0];
    for (int k = 0; k < n; k++) {
        const double e = fabs(theta[idx[k]] - truth[idx[k]]) / fabs(truth[idx[k]]);
        if (e > worst) worst = e, *at = idx[k];
    }
    free(x0);
    sid_problem_free(pr);
    return worst;
}
