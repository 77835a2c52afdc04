/* rk4.c — the classic Runge-Kutta step on (q, v) with the stage acceleration of the variant's
 * row (step.h, sid_stage_dynamics: the plain forward dynamics with hd = 0, or with dry friction
 * and constraint limits solved):
 *   a_s = fd(q_s, v_s, u) at (q, v), (q (+) h/2 v, v + h/2 a1), (q (+) h/2 v2, v + h/2 a2),
 *   (q (+) h v3, v + h a3);  v1 = v + h/6 (a1 + 2 a2 + 2 a3 + a4);
 *   q1 = q (+) h (v + 2 v2 + 2 v3 + v4) / 6.
 * Its tape record is the stage states and accelerations and the four stages' records; the
 * adjoint reverses the stages in order (docs/adjoint.md, "One step"). */
#include "fd.h"
#include "step.h"

#include <string.h>

/* Doubles of an RK4 step's stages: three stage states and four accelerations. */
static int rk_size(const sid_model *m) { return 3 * m->nq + 7 * m->nv; }

int sid_rk4_record_size(const sid_model *m) { return rk_size(m) + 4 * sid_stage_smooth.record_size(m); }
int sid_rk4_dry_record_size(const sid_model *m) { return rk_size(m) + 4 * sid_stage_dry.record_size(m); }

/* The RK4 stages of a step into ws->rk = (q2, v2, q3, v3, q4, v4, a1, a2, a3, a4): the stage
 * states, and the accelerations of the first nstage stages. */
static sid_status rk4_stages(const sid_step_ctx *c, const double *q, const double *v, const double *u, int nstage,
                             sid_error *err)
{
    const sid_model *m = c->m;
    sid_workspace *ws = c->ws;
    const sid_stage_dynamics *sd = c->stage;
    const double h = c->h;
    const int nq = m->nq, nv = m->nv;
    double *q2 = ws->rk, *v2 = q2 + nq, *q3 = v2 + nv, *v3 = q3 + nq, *q4 = v3 + nv, *v4 = q4 + nq;
    double *a1 = v4 + nv, *a2 = a1 + nv, *a3 = a2 + nv, *a4 = a3 + nv;
    const size_t rs = (size_t)sd->record_size(m);
    sid_status s;
    /* each stage's record is kept in ws->Lst, so that a tape can hold it for the adjoint */
    if ((s = sd->accel(c, &(sid_stage_at){q, v, u, NULL}, a1, ws->Lst, err))) return s;
    sid_integrate_q(m, q, v, 0.5 * h, q2);
    for (int i = 0; i < nv; i++) v2[i] = v[i] + 0.5 * h * a1[i];
    if ((s = sd->accel(c, &(sid_stage_at){q2, v2, u, NULL}, a2, ws->Lst + rs, err))) return s;
    sid_integrate_q(m, q, v2, 0.5 * h, q3);
    for (int i = 0; i < nv; i++) v3[i] = v[i] + 0.5 * h * a2[i];
    if ((s = sd->accel(c, &(sid_stage_at){q3, v3, u, NULL}, a3, ws->Lst + 2 * rs, err))) return s;
    sid_integrate_q(m, q, v3, h, q4);
    for (int i = 0; i < nv; i++) v4[i] = v[i] + h * a3[i];
    if (nstage == 4 && (s = sd->accel(c, &(sid_stage_at){q4, v4, u, NULL}, a4, ws->Lst + 3 * rs, err))) return s;
    return SID_OK;
}

sid_status sid_rk4_step(const sid_step_ctx *c, const sid_step_io *io, sid_error *err)
{
    const double *q = io->q, *v = io->v, *u = io->u;
    double *q1 = io->q1, *v1 = io->v1, *rec = io->rec;
    const sid_model *m = c->m;
    sid_workspace *ws = c->ws;
    const double h = c->h;
    const int nq = m->nq, nv = m->nv;
    sid_status s;
    if ((s = rk4_stages(c, q, v, u, 4, err))) return s;
    const double *v2 = ws->rk + nq, *v3 = v2 + nv + nq, *v4 = v3 + nv + nq;
    const double *a1 = v4 + nv, *a2 = a1 + nv, *a3 = a2 + nv, *a4 = a3 + nv;
    double *vc = ws->rkbar;   /* the combined velocity of the position update */
    for (int i = 0; i < nv; i++) {
        vc[i] = (v[i] + 2 * v2[i] + 2 * v3[i] + v4[i]) / 6;
        v1[i] = v[i] + h / 6 * (a1[i] + 2 * a2[i] + 2 * a3[i] + a4[i]);
    }
    sid_integrate_q(m, q, vc, h, q1);
    if (rec) {
        memcpy(rec, ws->rk, sizeof(double) * (size_t)rk_size(m));
        memcpy(rec + rk_size(m), ws->Lst, sizeof(double) * 4 * (size_t)c->stage->record_size(m));
    }
    return SID_OK;
}

/* Reverse an RK4 step whose stages st = (q2, v2, q3, v3, q4, v4, a1, a2, a3, a4) are known;
 * L holds the four stages' records, or is NULL to recompute them. */
static sid_status rk4_reverse(const sid_step_ctx *c, const sid_step_io *io, const double *st, const double *L,
                              const sid_step_adj *adj, sid_error *err)
{
    const double *q = io->q, *v = io->v, *u = io->u, *q1bar = adj->q1bar, *v1bar = adj->v1bar;
    double *qbar = adj->bar.qbar, *vbar = adj->bar.vbar, *thetabar = adj->bar.thetabar;
    const sid_model *m = c->m;
    sid_workspace *ws = c->ws;
    const double h = c->h;
    const int nq = m->nq, nv = m->nv;
    const size_t nn = (size_t)c->stage->record_size(m);
    const double *q2 = st, *v2 = q2 + nq, *q3 = v2 + nv, *v3 = q3 + nq, *q4 = v3 + nv, *v4 = q4 + nq;
    const double *a1 = v4 + nv, *a2 = a1 + nv, *a3 = a2 + nv, *a4 = a3 + nv;
    const double *L1 = L, *L2 = L ? L + nn : NULL, *L3 = L ? L + 2 * nn : NULL, *L4 = L ? L + 3 * nn : NULL;
    double *ab1 = ws->rkbar, *ab2 = ab1 + nv, *ab3 = ab2 + nv, *ab4 = ab3 + nv;
    double *vs = ab4 + nv, *vb2 = vs + nv, *vb3 = vb2 + nv, *vc = vb3 + nv, *vcb = vc + nv, *qs = vcb + nv;
    sid_status s;
    /* q1 = q (+) h vc, vc = (v + 2 v2 + 2 v3 + v4) / 6;  v1 = v + h/6 (a1 + 2 a2 + 2 a3 + a4) */
    for (int i = 0; i < nv; i++) vc[i] = (v[i] + 2 * v2[i] + 2 * v3[i] + v4[i]) / 6, vcb[i] = 0;
    sid_integrate_q_vjp(m, q, vc, h, q1bar, qbar, vcb);
    for (int i = 0; i < nv; i++) {
        vbar[i] += v1bar[i] + vcb[i] / 6;
        vb2[i] = vcb[i] / 3;
        vb3[i] = vcb[i] / 3;
        vs[i] = vcb[i] / 6;
        ab1[i] = h / 6 * v1bar[i];
        ab2[i] = h / 3 * v1bar[i];
        ab3[i] = h / 3 * v1bar[i];
        ab4[i] = h / 6 * v1bar[i];
    }
    /* stage 4 at (q4, v4) = (q (+) h v3, v + h a3) */
    memset(qs, 0, sizeof(double) * (size_t)nq);
    if ((s = c->stage->vjp(c, &(sid_stage_at){q4, v4, u, a4}, L4, ab4, &(sid_state_bar){qs, vs, thetabar}, err))) return s;
    sid_integrate_q_vjp(m, q, v3, h, qs, qbar, vb3);
    for (int i = 0; i < nv; i++) vbar[i] += vs[i], ab3[i] += h * vs[i];
    /* stage 3 at (q (+) h/2 v2, v + h/2 a2) */
    memset(qs, 0, sizeof(double) * (size_t)nq);
    memcpy(vs, vb3, sizeof(double) * (size_t)nv);
    if ((s = c->stage->vjp(c, &(sid_stage_at){q3, v3, u, a3}, L3, ab3, &(sid_state_bar){qs, vs, thetabar}, err))) return s;
    sid_integrate_q_vjp(m, q, v2, 0.5 * h, qs, qbar, vb2);
    for (int i = 0; i < nv; i++) vbar[i] += vs[i], ab2[i] += 0.5 * h * vs[i];
    /* stage 2 at (q (+) h/2 v, v + h/2 a1) */
    memset(qs, 0, sizeof(double) * (size_t)nq);
    memcpy(vs, vb2, sizeof(double) * (size_t)nv);
    if ((s = c->stage->vjp(c, &(sid_stage_at){q2, v2, u, a2}, L2, ab2, &(sid_state_bar){qs, vs, thetabar}, err))) return s;
    sid_integrate_q_vjp(m, q, v, 0.5 * h, qs, qbar, vbar);
    for (int i = 0; i < nv; i++) vbar[i] += vs[i], ab1[i] += 0.5 * h * vs[i];
    /* stage 1 at (q, v) */
    return c->stage->vjp(c, &(sid_stage_at){q, v, u, a1}, L1, ab1, &(sid_state_bar){qbar, vbar, thetabar}, err);
}

sid_status sid_rk4_vjp(const sid_step_ctx *c, const sid_step_io *io, const sid_step_adj *adj, sid_error *err)
{
    sid_status s;
    /* Recompute the stage states (the fourth's acceleration is not needed), then reverse. */
    if ((s = rk4_stages(c, io->q, io->v, io->u, 3, err))) return s;
    return rk4_reverse(c, io, c->ws->rk, NULL, adj, err);
}

sid_status sid_rk4_vjp_taped(const sid_step_ctx *c, const sid_step_io *io, const double *rec, const sid_step_adj *adj, sid_error *err)
{
    return rk4_reverse(c, io, rec, rec + rk_size(c->m), adj, err);
}

sid_status sid_rk4_jvp(const sid_step_ctx *c, const sid_step_io *io, const sid_step_dirs *dirs, sid_error *err)
{
    const double *q = io->q, *v = io->v, *u = io->u;
    int ndir = dirs->ndir;
    const double *thetadot = dirs->thetadot;
    double *qdot = dirs->qdot, *vdot = dirs->vdot, *scratch = dirs->scratch;
    const sid_model *m = c->m;
    sid_workspace *ws = c->ws;
    const double h = c->h;
    const int nq = m->nq, nv = m->nv, np = m->nparam;
    sid_status s;
    /* Stage by stage, all directions at once. Primal in ws->rk: the stage position qs, the
     * stage velocities V[0..3] = (v, v2, v3, v4), the accelerations A[0..3]; per direction
     * scratch holds the stage tangents adot1..4 and vdot2..4 (7 nv of the 9 nv given); the
     * current stage's (qdot_s, vdot_s) are transient, in ws->rkbar (nq + nv). */
    double *qs = ws->rk, *V = qs + nq, *A = V + 4 * nv;
    double *qd_s = ws->rkbar, *vd_s = qd_s + nq;
    const double cn[4] = {0, 0.5, 0.5, 1};   /* stage nodes */
    const int rows = c->cols && sid_fd_rows_pay(m, ndir);   /* each stage by its Jacobian rows (fd.h) */
    memcpy(V, v, sizeof(double) * (size_t)nv);
    for (int st = 0; st < 4; st++) {
        double *Vs = V + (size_t)st * (size_t)nv, *As = A + (size_t)st * (size_t)nv;
        /* stage st at (q (+) c h V[st-1], v + c h A[st-1]) */
        if (st == 0) memcpy(qs, q, sizeof(double) * (size_t)nq);
        else {
            sid_integrate_q(m, q, Vs - nv, cn[st] * h, qs);
            for (int i = 0; i < nv; i++) Vs[i] = v[i] + cn[st] * h * As[i - nv];
        }
        const sid_stage_at at = {qs, Vs, u, As};
        if ((s = c->stage->jvp_prepare(c, &at, As, rows, err))) return s;
        for (int d = 0; d < ndir; d++) {
            double *sc = scratch + (size_t)d * 9 * (size_t)nv;
            const double *qd = qdot + (size_t)d * (size_t)nq, *vd = vdot + (size_t)d * (size_t)nv;
            memcpy(qd_s, qd, sizeof(double) * (size_t)nq);
            if (st == 0) memcpy(vd_s, vd, sizeof(double) * (size_t)nv);
            else {
                const double *vprev = st == 1 ? vd : sc + (size_t)(4 + st - 2) * (size_t)nv;
                sid_integrate_q_jvp(m, q, Vs - nv, cn[st] * h, qd_s, vprev);
                for (int i = 0; i < nv; i++) vd_s[i] = vd[i] + cn[st] * h * sc[(st - 1) * nv + i];
                memcpy(sc + (size_t)(4 + st - 1) * (size_t)nv, vd_s, sizeof(double) * (size_t)nv);
            }
            const double *thd = thetadot + (size_t)d * (size_t)np;
            c->stage->jvp_dir(c, &at, rows, &(sid_state_dir){qd_s, vd_s, thd}, sc + (size_t)st * (size_t)nv);
        }
    }
    /* q1 = q (+) h/6 vs, vs = v + 2 v2 + 2 v3 + v4;  v1 = v + h/6 (a1 + 2 a2 + 2 a3 + a4)
     * (h/6 times the sum, as the hinge-only tangent before it rounded) */
    double *vsum = A;   /* the accelerations are no longer needed */
    for (int i = 0; i < nv; i++) vsum[i] = V[i] + 2 * V[nv + i] + 2 * V[2 * nv + i] + V[3 * nv + i];
    for (int d = 0; d < ndir; d++) {
        const double *sc = scratch + (size_t)d * 9 * (size_t)nv;
        const double *ad = sc, *v2 = sc + 4 * nv, *v3 = v2 + nv, *v4 = v3 + nv;
        double *qd = qdot + (size_t)d * (size_t)nq, *vd = vdot + (size_t)d * (size_t)nv;
        for (int i = 0; i < nv; i++) vd_s[i] = vd[i] + 2 * v2[i] + 2 * v3[i] + v4[i];
        sid_integrate_q_jvp(m, q, vsum, h / 6, qd, vd_s);
        for (int i = 0; i < nv; i++) vd[i] += h / 6 * (ad[i] + 2 * ad[nv + i] + 2 * ad[2 * nv + i] + ad[3 * nv + i]);
    }
    return SID_OK;
}
