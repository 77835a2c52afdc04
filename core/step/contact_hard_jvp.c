/* contact_hard_jvp.c — forward mode (the step's tangent, step.h) of the hard contact step
 * (contact_hard.c), by implicit differentiation of the same equations the adjoint transposes.
 *
 * With the active set of the solve fixed, the unknowns (a+, lambda) satisfy (contact_hard.c)
 *   R1 = F - D v - ID(q, v, a+) - B a+ - h D a+ + J^T lambda / h = 0,
 *   R2 = E(lambda, zeta, mu) = 0,   zeta = J v+ + r lambda + (beta / h) phi e_n,  v+ = v + h a+.
 * Along a direction (qdot, vdot, thetadot):
 *  1. ad = A^-1 dR1 with a+ and lambda held: the Euler step's own tangent (sid_fd_jvp_dir) with
 *     the impulses as fixed world forces lambda / h at the contact points, whose points move
 *     (impulse_forces_jvp); then v+ = v*' + A^-1 J^T lambdadot with v*' = vdot + h ad.
 *  2. zeta' = zeta0' + (G + r) lambdadot, zeta0' = (J v+)' at v+ held + J v*' + r' lambda +
 *     (beta / h) phi': one tangent of RNEA's motion pass at (q, v+) with velocity tangent v*',
 *     read at the contact points (contact_velocity_jvp).
 *  3. E' = 0: K lambdadot = -(dE/dzeta zeta0' + dE/dmu mudot), K = dE/dlambda + dE/dzeta (G + r)
 *     the adjoint's matrix, factored once per step for all directions.
 * Cost per step: one solve (sid_hard_forward), one more forward dynamics (the RNEA state that
 * sid_fd_jvp_dir needs), one 3 nc factorisation; per direction two tangent RNEA passes and a
 * 3 nc back-substitution. At a mode change (a contact separating, sticking, starting to slide)
 * the step is not differentiable; the tangent is the current active set's one-sided derivative,
 * as the adjoint's. */
#include "dry_friction.h"
#include "contact_hard.h"
#include "fd.h"
#include "step.h"

#include <string.h>

/* Tangent of sid_hard_impulse_forces with the world forces H->seed held: the contact points
 * cp = cen - r R^T ez and the rotation R move (R's tangent in ws->Rwbar, sid_rnea_jvp_motion). */
static sid_v3 contact_point_jvp(const sid_model *m, const sid_workspace *ws, const double *theta,
                                const double *thetadot, int sp)
{
    const int b = m->sphere[sp].body;
    const double *psd = thetadot + m->sphere[sp].p;
    const double r = theta[m->sphere[sp].p + P_SPHERE_RADIUS], rd = psd[P_SPHERE_RADIUS];
    const sid_v3 ez = {0, 0, 1};
    return sid_v3_sub(sid_v3_load(psd + P_SPHERE_XYZ),
                      sid_v3_add(sid_v3_scale(rd, sid_m3_tmul_v3(&ws->Rw[b], ez)),
                                 sid_v3_scale(r, sid_m3_tmul_v3(&ws->Rwbar[b], ez))));
}

static void impulse_forces_jvp(const sid_model *m, const double *theta, sid_workspace *ws, const void *ctx,
                               const double *thetadot, sid_sv *fextdot)
{
    const struct sid_hard *H = ctx;
    for (int i = 0; i < H->nc; i++) {
        const int b = m->sphere[H->sph[i]].body;
        const sid_v3 F = H->seed[i], Fb = sid_m3_tmul_v3(&ws->Rw[b], F), Fbd = sid_m3_tmul_v3(&ws->Rwbar[b], F);
        const sid_v3 cpd = contact_point_jvp(m, ws, theta, thetadot, H->sph[i]);
        sid_sv_acc(&fextdot[b], sid_sv_make(sid_v3_add(sid_v3_cross(cpd, Fb), sid_v3_cross(H->cp[i], Fbd)), Fbd));
    }
}

/* zeta0' (3 nc, into zd) after sid_rnea_motion at (q, v+) and its tangent (sid_rnea_jvp_motion):
 * the contact velocities u = R (nu.l + nu.w x cp) and gaps phi = (p + R cen).z - r - height
 * differentiated, plus r' lambda. */
static void contact_velocity_jvp(const sid_model *m, const double *theta, const sid_workspace *ws,
                                 const struct sid_hard *H, const double *thetadot, double rd, double c, double *zd)
{
    for (int i = 0; i < H->nc; i++) {
        const int sp = H->sph[i], b = m->sphere[sp].body;
        const double *ps = theta + m->sphere[sp].p, *psd = thetadot + m->sphere[sp].p;
        const sid_m3 *R = &ws->Rw[b], *Rd = &ws->Rwbar[b];
        const sid_sv nu = ws->v[b], nud = ws->vbar[b];
        const sid_v3 cp = H->cp[i], cpd = contact_point_jvp(m, ws, theta, thetadot, sp);
        const sid_v3 vb = sid_v3_add(nu.l, sid_v3_cross(nu.w, cp));
        const sid_v3 vbd = sid_v3_add(nud.l, sid_v3_add(sid_v3_cross(nud.w, cp), sid_v3_cross(nu.w, cpd)));
        const sid_v3 ud = sid_v3_add(sid_m3_mul_v3(Rd, vb), sid_m3_mul_v3(R, vbd));
        const sid_v3 cen = sid_v3_load(ps + P_SPHERE_XYZ), cend = sid_v3_load(psd + P_SPHERE_XYZ);
        const double phid = ws->pwbar[b].z + sid_m3_mul_v3(Rd, cen).z + sid_m3_mul_v3(R, cend).z - psd[P_SPHERE_RADIUS] -
                            thetadot[m->p_ground + P_GROUND_HEIGHT];
        const double *lam = H->lam + 3 * i;
        zd[3 * i + 0] = ud.x + rd * lam[0];
        zd[3 * i + 1] = ud.y + rd * lam[1];
        zd[3 * i + 2] = ud.z + rd * lam[2] + c * phid;
    }
}

/* The right-hand side -(dE/dzeta zeta0' + dE/dmu mudot) of K lambdadot, in place of zd. */
static void mode_rhs(const struct sid_hard *H, double mud, double *zd)
{
    for (int i = 0; i < H->nc; i++) {
        const int t = 3 * i, n = t + 2;
        const double *lam = H->lam + t;
        if (H->mode[i] == SID_HARD_SEP) {   /* E = lambda */
            zd[t] = zd[t + 1] = zd[n] = 0;
            continue;
        }
        zd[n] = -zd[n];
        if (H->mode[i] == SID_HARD_STICK) {   /* E = zeta */
            zd[t] = -zd[t], zd[t + 1] = -zd[t + 1];
            continue;
        }
        /* sliding: |l_t| - mu ln, l_x zeta_y - l_y zeta_x */
        const double zx = zd[t], zy = zd[t + 1];
        zd[t] = mud * lam[2];
        zd[t + 1] = -(lam[0] * zy - lam[1] * zx);
    }
}

sid_status sid_hard_jvp(const sid_step_ctx *c, const sid_step_io *io, const sid_step_dirs *dirs, sid_error *err)
{
    const double *q = io->q, *v = io->v, *u = io->u;
    int ndir = dirs->ndir;
    const double *thetadot = dirs->thetadot;
    double *qdot = dirs->qdot, *vdot = dirs->vdot, *scratch = dirs->scratch;
    const sid_model *m = c->m;
    const double *theta = c->theta;
    sid_workspace *ws = c->ws;
    const double h = c->h;
    struct sid_hard *H = ws->hard;
    const int nq = m->nq, nv = m->nv, np = m->nparam;
    if (!H) return sid_error_set(err, SID_ERR_INPUT, "hard contact: the workspace has no contact scratch");
    sid_hard_problem P;
    sid_status s = sid_hard_forward(c, io, &P, err);
    if (s) return s;
    /* dry rows: each direction's fdot (in its scratch, after nv of t) from the forward dynamics'
     * tangent at ac with M + B, f held (euler_dry.c) */
    struct sid_dry *D = ws->dry;
    if (D) {
        memcpy(ws->M, D->Lp, sizeof(double) * (size_t)nv * (size_t)nv);
        sid_kinematics(m, theta, ws, q);
        const sid_fd_point p0 = {m, theta, ws, NULL, q, v, u, 0, 0};   /* the rows' dynamics: no contact */
        sid_fd_jvp_at(&p0, D->ac);
        for (int d = 0; d < ndir; d++) {
            double *t = scratch + (size_t)d * 9 * (size_t)nv;
            const sid_state_dir dir = {qdot + (size_t)d * (size_t)nq, vdot + (size_t)d * (size_t)nv,
                                       thetadot + (size_t)d * (size_t)np};
            sid_fd_jvp_dir(&p0, D->ac, &dir, t);
            sid_dry_jvp_solution(m, ws, t, &dir, t + nv);
        }
    }
    const int nc = H->nc, n3 = 3 * nc, solve = nc && !H->frozen;
    /* ws->rk holds a (without contact) from the solve; the tangent's a+ and ad follow it */
    double *ap = ws->rk + nv, *ad = ap + nv, *zd = H->dl, *jl = H->zero;
    if (solve) {
        sid_hard_zeta(&P, H->lam, H->zeta);
        sid_hard_mode_system(&P, H->mode, H->lam, H->zeta, H->E, H->K);
        if (sid_lu_factor(n3, H->K, H->piv))
            return sid_error_set(err, SID_ERR_NUMERIC, "hard contact: the contact problem's Jacobian is singular");
    }
    /* 1: the Euler step's tangent with the impulses lambda / h as fixed forces (a+ again, and
     * the RNEA state at (q, v, a+) that sid_fd_jvp_dir differentiates) */
    for (int i = 0; i < nc; i++) H->seed[i] = sid_v3_scale(1 / h, sid_v3_load(H->lam + 3 * i));
    const sid_fext_source impulses = {sid_hard_impulse_forces, sid_hard_impulse_forces_vjp, H, impulse_forces_jvp};
    const sid_fd_point ph = {m, theta, ws, nc ? &impulses : NULL, q, v, u, h, c->implicit_act};
    if ((s = sid_fd_jvp_prepare(&ph, ap, err))) return s;
    if (D) {   /* a+ has the rows' E f too: the RNEA state at the step's own a+ */
        memcpy(ap, H->aplus, sizeof(double) * (size_t)nv);
        sid_fd_jvp_at(&ph, ap);
    }
    for (int d = 0; d < ndir; d++) {
        double *qd = qdot + (size_t)d * (size_t)nq, *vd = vdot + (size_t)d * (size_t)nv;
        sid_fd_jvp_dir(&ph, ap, &(sid_state_dir){qd, vd, thetadot + (size_t)d * (size_t)np}, ad);
        if (D) {   /* + (M + B + h D)^-1 E fdot */
            const double *fdot = scratch + (size_t)d * 9 * (size_t)nv + nv;
            memset(D->e, 0, sizeof(double) * (size_t)nv);
            for (int j = 0; j < D->nf; j++) D->e[D->dof[j]] += D->sgn[j] * fdot[j];
            sid_factor_solve(m, ws->M, D->e);
            for (int i = 0; i < nv; i++) ad[i] += D->e[i];
        }
        for (int i = 0; i < nv; i++) vd[i] += h * ad[i];   /* v*' */
    }
    if (solve) {
        /* 2, 3: the impulses' tangent from the contact velocities at v+ */
        const double mt = sid_hard_total_mass(m, theta);
        sid_rnea_motion(m, theta, ws, H->vplus, NULL);
        for (int d = 0; d < ndir; d++) {
            const double *thd = thetadot + (size_t)d * (size_t)np;
            double *qd = qdot + (size_t)d * (size_t)nq, *vd = vdot + (size_t)d * (size_t)nv;
            double mtd = 0;
            if (mt > 0)
                for (int b = 1; b < m->nbody; b++)
                    if (m->body[b].p_inertial >= 0) mtd += thd[m->body[b].p_inertial + P_MASS];
            const double rd = mt > 0 ? -H->r * mtd / mt : 0;
            sid_rnea_jvp_motion(m, theta, ws, q, &(sid_state_dir){qd, vd, thd});
            contact_velocity_jvp(m, theta, ws, H, thd, rd, P.c, zd);
            mode_rhs(H, thd[m->p_ground + P_GROUND_FRICTION], zd);
            sid_lu_solve(n3, H->K, H->piv, 0, zd);
            /* v+' = v*' + A^-1 J^T lambdadot */
            memset(jl, 0, sizeof(double) * (size_t)nv);
            for (int k = 0; k < n3; k++) {
                const double *Jk = H->J + (size_t)k * (size_t)nv;
                for (int i = 0; i < nv; i++) jl[i] += Jk[i] * zd[k];
            }
            sid_factor_solve(m, ws->M, jl);
            for (int i = 0; i < nv; i++) vd[i] += jl[i];
        }
    }
    for (int d = 0; d < ndir; d++)
        sid_integrate_q_jvp(m, q, H->vplus, h, qdot + (size_t)d * (size_t)nq, vdot + (size_t)d * (size_t)nv);
    return SID_OK;
}
