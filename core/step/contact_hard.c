/* contact_hard.c — the `hard` contact model (SID_CONTACT_HARD) and its adjoint by implicit
 * differentiation.
 *
 * Semantics (Euler only; RK4 with hard contact is SID_ERR_INPUT):
 *  - a = fd(q, v, u) without contact (A a = F - c - D v, A = M + B + h D: sid_fd with no
 *    external forces), v* = v + h a.
 *  - A sphere of radius r, centre c on body b touches the plane z = height at its lowest point;
 *    its gap is phi = z_centre - r - height. Every sphere with phi below a margin (its radius
 *    plus 2 h |u*| / beta, u* its lowest point's velocity at v*, so that a contact enters the
 *    problem while its constraint is still inactive: no jump) is a contact i with an impulse
 *    lambda_i = (lx, ly, ln) in world axes at that point.
 *  - v+ = v* + A^-1 J^T lambda, J (3 nc x nv) the world velocities of the contact points, so the
 *    contact velocity is u = J v+ = b + G lambda with b = J v*, G = J A^-1 J^T (Delassus).
 *  - Conditions, with zeta = u + r lambda + (beta / h) phi e_n (r = SID_HARD_REG / total mass, a
 *    tiny regularisation that makes lambda unique when contacts are redundant, e.g. a box resting
 *    on four corners; beta = SID_HARD_BETA, Baumgarte-style stabilisation: u_n >= -beta phi / h,
 *    no penetration velocity; a gap closes at rate beta phi / h at most, so a sphere approaching
 *    at speed s starts to slow down at a gap of h s / beta, and settles over ~h / beta):
 *      ln >= 0, zeta_n >= 0, ln zeta_n = 0;
 *      Coulomb friction |l_t| <= mu ln with maximum dissipation: zeta_t = 0 while sticking
 *      (|l_t| < mu ln), l_t = -mu ln zeta_t / |zeta_t| while sliding; mu = ground friction.
 *    Solved in hard_solver.c.
 *  - q+ = q (+) h v+ (sid_integrate_q).
 * Stiffness, damping, width and smoothing of the ground are not used by this model.
 *
 * Adjoint (implicit function theorem, never unrolled solver iterations). With the active set
 * fixed at the solution, the unknowns x = (a+, lambda), a+ = (v+ - v) / h, satisfy
 *   R1 = F - D v - ID(q, v, a+) - B a+ - h D a+ + J^T lambda / h = 0
 *   R2 = E(lambda, zeta, mu) = 0,  zeta = J (v + h a+) + r lambda + (beta / h) phi e_n,
 * E per contact: separated lambda_i; sticking zeta_i; sliding (|l_t| - mu ln, l_x zeta_y - l_y zeta_x,
 * zeta_n): on the cone's edge and parallel to the slip (anti-parallel is checked by the solver).
 * For the adjoint abar of a+, solve the transposed system by its Schur complement on lambda:
 *   K^T z = J A^-1 abar / h,  K = dE/dlambda + dE/dzeta (G + r),  zetabar = -(dE/dzeta)^T z,
 *   w = A^-1 (abar + h J^T zetabar),
 * then every input gets (dR1/dp)^T w (the Euler step's own adjoint, sid_fd_vjp_factored, with
 * the impulses handed to the RNEA as external forces lambda / h at the contact points, held fixed) plus
 * (dzeta/dp)^T zetabar (one more reverse RNEA, at v+, seeded with the contact velocities' and
 * gaps' adjoints) plus mubar = sum ln z_edge over sliding contacts. The regularisation r depends on
 * the masses (rbar = zetabar . lambda). Cost: one dense 3 nc solve and two reverse RNEAs. */
#include "contact_hard.h"
#include "dry_friction.h"
#include "fd.h"
#include "step.h"

#include <string.h>

void sid_hard_set_frozen(sid_workspace *ws, int frozen)
{
    if (ws->hard) ws->hard->frozen = frozen;
}

int sid_hard_last(const sid_workspace *ws, int *sphere, int *mode, double *lambda, double *residual)
{
    const struct sid_hard *H = ws->hard;
    if (!H) return 0;
    for (int i = 0; i < H->nc; i++) {
        if (sphere) sphere[i] = H->sph[i];
        if (mode) mode[i] = H->mode[i];
        if (lambda) memcpy(lambda + 3 * i, H->lam + 3 * i, 3 * sizeof(double));
    }
    if (residual) *residual = H->residual;
    return H->nc;
}

/* ---- geometry ------------------------------------------------------------------------- */


/* Contact point (lowest point of sphere s) in its body's frame, and the gap phi. */
static sid_v3 contact_point(const sid_model *m, const double *theta, const sid_workspace *ws, int s, double *phi)
{
    const int b = m->sphere[s].body;
    const double *ps = theta + m->sphere[s].p;
    const sid_m3 *R = &ws->Rw[b];
    const sid_v3 cen = sid_v3_load(ps + P_SPHERE_XYZ), ez = {0, 0, 1};
    const double r = ps[P_SPHERE_RADIUS];
    if (phi) *phi = ws->pw[b].z + sid_v3_dot(sid_v3_make(R->m[2][0], R->m[2][1], R->m[2][2]), cen) - r -
                    theta[m->p_ground + P_GROUND_HEIGHT];
    return sid_v3_sub(cen, sid_v3_scale(r, sid_m3_tmul_v3(R, ez)));
}

/* Row d of J for a point cp on body b: the generalised force of a unit world force e_d there. */
static void jacobian_rows(const sid_model *m, const sid_workspace *ws, int b, sid_v3 cp, double *J3)
{
    const int nv = m->nv;
    memset(J3, 0, sizeof(double) * 3 * (size_t)nv);
    for (int d = 0; d < 3; d++) {
        double *row = J3 + d * nv;
        const sid_v3 Fb = sid_v3_make(ws->Rw[b].m[d][0], ws->Rw[b].m[d][1], ws->Rw[b].m[d][2]);   /* R^T e_d */
        sid_sv f = sid_sv_make(sid_v3_cross(cp, Fb), Fb);
        for (int j = b; j > 0; j = m->body[j].parent) {
            const sid_body *bd = &m->body[j];
            for (int k = 0; k < sid_joint_ndof(bd); k++) row[bd->vadr + k] += sid_sv_dot(sid_joint_col(bd, &ws->X[j], k), f);
            f = sid_xform_force_inv(&ws->X[j], f);
        }
    }
}

double sid_hard_total_mass(const sid_model *m, const double *theta)
{
    double mt = 0;
    for (int b = 1; b < m->nbody; b++)
        if (m->body[b].p_inertial >= 0) mt += theta[m->body[b].p_inertial + P_MASS];
    return mt;
}
/* ---- the step ----------------------------------------------------------------------------- */

/* Spatial velocities of the bodies (body coordinates) at joint velocities v, as sid_rnea's. */
static void body_velocities(const sid_model *m, const sid_workspace *ws, const double *v, sid_sv *vb)
{
    vb[0] = sid_sv_zero();
    for (int b = 1; b < m->nbody; b++) {
        const sid_body *bd = &m->body[b];
        vb[b] = sid_xform_motion(&ws->X[b], vb[bd->parent]);
        for (int k = 0; k < sid_joint_ndof(bd); k++)
            sid_sv_acc(&vb[b], sid_sv_scale(v[bd->vadr + k], sid_joint_col(bd, &ws->X[b], k)));
    }
}

/* Collect the contacts (spheres within the margin) with their rows of J and b = J v*. A sphere
 * is first screened with its contact point's speed |u*| from the body velocities (the margin is
 * at most radius + 2 h sqrt(2) |u*| / beta; 3 h leaves room for roundoff), so that J is built
 * only for spheres near the ground. Returns the number of contacts. */
static int gather_contacts(const sid_model *m, const double *theta, sid_workspace *ws, double h)
{
    struct sid_hard *H = ws->hard;
    const int nv = m->nv;
    int nc = 0;
    body_velocities(m, ws, H->vstar, H->vb);
    for (int sp = 0; sp < m->nsphere; sp++) {
        const int b = m->sphere[sp].body;
        const double rad = theta[m->sphere[sp].p + P_SPHERE_RADIUS];
        double phi;
        const sid_v3 cp = contact_point(m, theta, ws, sp, &phi);
        const double speed = sid_v3_norm(sid_v3_add(H->vb[b].l, sid_v3_cross(H->vb[b].w, cp)));
        if (!(phi < rad + 3 * h * speed / SID_HARD_BETA)) continue;
        double *J3 = H->J + (size_t)(3 * nc) * (size_t)nv, *b3 = H->b + 3 * nc;
        jacobian_rows(m, ws, b, cp, J3);
        for (int d = 0; d < 3; d++) {
            double x = 0;
            for (int i = 0; i < nv; i++) x += J3[d * nv + i] * H->vstar[i];
            b3[d] = x;
        }
        const double margin = rad + 2 * h * (fmax(0, -b3[2]) + sqrt(b3[0] * b3[0] + b3[1] * b3[1])) / SID_HARD_BETA;
        if (!(phi < margin)) continue;
        H->sph[nc] = sp, H->cp[nc] = cp, H->phi[nc] = phi;
        nc++;
    }
    return nc;
}

/* The Delassus matrix G = J A^-1 J^T = W W^T, W = J L^-1 (rows L^-T J_k): half the solves of
 * A^-1 J^T, and symmetric positive semidefinite by construction. Also sets H->dinv. */
static void delassus(const sid_model *m, const sid_workspace *ws, int n3)
{
    struct sid_hard *H = ws->hard;
    const int nv = m->nv;
    for (int i = 0; i < nv; i++) H->dinv[i] = 1 / ws->M[i * nv + i];
    for (int k = 0; k < n3; k++) {
        double *Wk = H->W + (size_t)k * (size_t)nv;
        memcpy(Wk, H->J + (size_t)k * (size_t)nv, sizeof(double) * (size_t)nv);
        sid_tree_solve_lt(m->nv, m->dof_parent, ws->M, H->dinv, Wk);
    }
    for (int k = 0; k < n3; k++)
        for (int l = 0; l <= k; l++) {
            double x = 0;
            const double *Wk = H->W + (size_t)k * (size_t)nv, *Wl = H->W + (size_t)l * (size_t)nv;
            for (int i = 0; i < nv; i++) x += Wk[i] * Wl[i];
            H->G[k * n3 + l] = H->G[l * n3 + k] = x;
        }
}

/* ---- what the contacts hand the dynamics, and their geometry's adjoint -------------------- */

/* cp = cen - r R^T ez: the contact point's adjoint cpb (and the centre's own, cenb) into the
 * world rotation's adjoint and the sphere's parameters. */
static void contact_point_vjp(const sid_model *m, sid_workspace *ws, int i, const double *theta, sid_v3 cpb,
                              sid_v3 cenb, double *thetabar)
{
    const struct sid_hard *H = ws->hard;
    const int sp = H->sph[i], b = m->sphere[sp].body;
    const double r = theta[m->sphere[sp].p + P_SPHERE_RADIUS];
    const sid_v3 ez = {0, 0, 1};
    sid_m3_acc_outer(&ws->Rwbar[b], sid_v3_scale(-r, ez), cpb);
    if (!thetabar) return;
    double *tsp = thetabar + m->sphere[sp].p;
    tsp[P_SPHERE_XYZ + 0] += cpb.x + cenb.x;
    tsp[P_SPHERE_XYZ + 1] += cpb.y + cenb.y;
    tsp[P_SPHERE_XYZ + 2] += cpb.z + cenb.z;
    tsp[P_SPHERE_RADIUS] -= sid_v3_dot(sid_m3_tmul_v3(&ws->Rw[b], ez), cpb);
}

/* fext = (cp x Fb, Fb), Fb = R^T F for F = H->seed at each contact point (contact_hard.h). */
void sid_hard_impulse_forces(const sid_model *m, const double *theta, sid_workspace *ws, const void *ctx, sid_sv *fext)
{
    const struct sid_hard *H = ctx;
    (void)theta;
    for (int b = 0; b < m->nbody; b++) fext[b] = sid_sv_zero();
    for (int i = 0; i < H->nc; i++) {
        const int b = m->sphere[H->sph[i]].body;
        const sid_v3 Fb = sid_m3_tmul_v3(&ws->Rw[b], H->seed[i]);
        sid_sv_acc(&fext[b], sid_sv_make(sid_v3_cross(H->cp[i], Fb), Fb));
    }
}

/* Adjoint of sid_hard_impulse_forces with the forces held: only the contact points move. */
void sid_hard_impulse_forces_vjp(const sid_model *m, const double *theta, sid_workspace *ws, const void *ctx,
                                 const sid_sv *fextbar, double *thetabar)
{
    const struct sid_hard *H = ctx;
    for (int i = 0; i < H->nc; i++) {
        const int b = m->sphere[H->sph[i]].body;
        const sid_m3 *R = &ws->Rw[b];
        const sid_v3 cp = H->cp[i], cenb = {0, 0, 0};
        const sid_v3 F = H->seed[i], Fb = sid_m3_tmul_v3(R, F);
        const sid_v3 tb = fextbar[b].w;
        const sid_v3 Fbb = sid_v3_add(fextbar[b].l, sid_v3_cross(tb, cp));
        const sid_v3 cpb = sid_v3_cross(Fb, tb);
        sid_m3_acc_outer(&ws->Rwbar[b], F, Fbb);
        contact_point_vjp(m, ws, i, theta, cpb, cenb, thetabar);
    }
}

/* Adjoint of the contact velocities u = R (v.l + v.w x cp) (body velocities of the last
 * sid_rnea_motion) and gaps phi = (p + R cen).z - r - height, seeded with H->seed (u's adjoint)
 * and H->phibar: into the body velocity and world pose adjoints of ws, and thetabar. */
static void contact_velocity_vjp(const sid_model *m, const double *theta, sid_workspace *ws,
                                 const struct sid_hard *H, double *thetabar)
{
    for (int i = 0; i < H->nc; i++) {
        const int sp = H->sph[i], b = m->sphere[sp].body;
        const double *ps = theta + m->sphere[sp].p;
        const sid_m3 *R = &ws->Rw[b];
        sid_m3 *Rb = &ws->Rwbar[b];
        const sid_v3 cp = H->cp[i];
        const sid_v3 ub = H->seed[i], vb = sid_v3_add(ws->v[b].l, sid_v3_cross(ws->v[b].w, cp));
        const sid_v3 vbb = sid_m3_tmul_v3(R, ub);
        sid_m3_acc_outer(Rb, ub, vb);
        sid_v3_acc(&ws->vbar[b].l, vbb);
        sid_v3_acc(&ws->vbar[b].w, sid_v3_cross(cp, vbb));
        const sid_v3 cpb = sid_v3_cross(vbb, ws->v[b].w);
        const double pb = H->phibar[i];
        const sid_v3 cen = sid_v3_load(ps + P_SPHERE_XYZ);
        ws->pwbar[b].z += pb;
        sid_m3_acc_outer(Rb, sid_v3_make(0, 0, pb), cen);
        const sid_v3 cenb = sid_m3_tmul_v3(R, sid_v3_make(0, 0, pb));
        if (thetabar) {
            thetabar[m->sphere[sp].p + P_SPHERE_RADIUS] -= pb;
            thetabar[m->p_ground + P_GROUND_HEIGHT] -= pb;
        }
        contact_point_vjp(m, ws, i, theta, cpb, cenb, thetabar);
    }
}

sid_status sid_hard_forward(const sid_step_ctx *c, const sid_step_io *io, sid_hard_problem *P, sid_error *err)
{
    const sid_model *m = c->m;
    const double *theta = c->theta, *v = io->v, h = c->h;
    sid_workspace *ws = c->ws;
    const sid_fd_point p = {m, theta, ws, NULL, io->q, v, io->u, h, c->implicit_act};   /* the dynamics without contact */
    struct sid_hard *H = ws->hard;
    const int nv = m->nv;
    double *a = ws->rk;
    /* joint dry friction and constraint limits first, their rows on M + B without the contacts
     * (euler_dry.c; MuJoCo solves both in one problem): the impulses act on the step's a */
    sid_status s = ws->dry ? sid_dry_accel(&p, 1, 1, err) : sid_fd(&p, a, err);
    if (s) return s;
    if (ws->dry) memcpy(a, ws->dry->a, sizeof(double) * (size_t)nv);
    for (int i = 0; i < nv; i++) H->vstar[i] = v[i] + h * a[i];
    const int nc = H->nc = gather_contacts(m, theta, ws, h), n3 = 3 * nc;
    delassus(m, ws, n3);
    const double mt = sid_hard_total_mass(m, theta);
    H->r = SID_HARD_REG / (mt > 0 ? mt : 1);
    P->n3 = n3, P->G = H->G, P->b = H->b, P->phi = H->phi, P->r = H->r, P->c = SID_HARD_BETA / h;
    P->mu = theta[m->p_ground + P_GROUND_FRICTION];
    if (nc) sid_hard_solve(P, H);
    else H->residual = 0;
    /* v+ = v* + A^-1 J^T lambda */
    double *dv = H->tau;
    memset(dv, 0, sizeof(double) * (size_t)nv);
    for (int k = 0; k < n3; k++) {
        const double *Jk = H->J + (size_t)k * (size_t)nv;
        for (int i = 0; i < nv; i++) dv[i] += Jk[i] * H->lam[k];
    }
    sid_factor_solve(m, ws->M, dv);
    for (int i = 0; i < nv; i++) {
        H->vplus[i] = H->vstar[i] + dv[i];
        H->aplus[i] = (H->vplus[i] - v[i]) / h;
    }
    return SID_OK;
}

int sid_hard_record_size(const sid_model *m)
{
    (void)m;
    return 0;
}

sid_status sid_hard_step(const sid_step_ctx *c, const sid_step_io *io, sid_error *err)
{
    const double *q = io->q;
    double *q1 = io->q1, *v1 = io->v1;   /* no record: the adjoint solves the step again */
    const sid_model *m = c->m;
    sid_workspace *ws = c->ws;
    const double h = c->h;
    if (!ws->hard) return sid_error_set(err, SID_ERR_INPUT, "hard contact: the workspace has no contact scratch");
    sid_hard_problem P;
    sid_status s = sid_hard_forward(c, io, &P, err);
    if (s) return s;
    memcpy(v1, ws->hard->vplus, sizeof(double) * (size_t)m->nv);
    sid_integrate_q(m, q, v1, h, q1);
    return SID_OK;
}

/* The tape cannot replay a contact solve: the adjoint solves the step again. */
sid_status sid_hard_vjp_taped(const sid_step_ctx *c, const sid_step_io *io, const double *rec, const sid_step_adj *adj, sid_error *err)
{
    (void)rec;
    return sid_hard_vjp(c, io, adj, err);
}

sid_status sid_hard_vjp(const sid_step_ctx *c, const sid_step_io *io, const sid_step_adj *adj, sid_error *err)
{
    const double *q = io->q, *v = io->v, *u = io->u;
    const double *q1bar = adj->q1bar, *v1bar = adj->v1bar;
    double *qbar = adj->bar.qbar, *vbar = adj->bar.vbar, *thetabar = adj->bar.thetabar;
    const sid_model *m = c->m;
    const double *theta = c->theta;
    sid_workspace *ws = c->ws;
    const double h = c->h;
    struct sid_hard *H = ws->hard;
    if (!H) return sid_error_set(err, SID_ERR_INPUT, "hard contact: the workspace has no contact scratch");
    sid_hard_problem P;
    sid_status s = sid_hard_forward(c, io, &P, err);
    if (s) return s;
    const int nv = m->nv, nc = H->nc, n3 = 3 * nc;
    double *abar = H->abar;
    /* q1 = q (+) h v+, v+ = v + h a+ */
    memcpy(abar, v1bar, sizeof(double) * (size_t)nv);
    sid_integrate_q_vjp(m, q, H->vplus, h, q1bar, qbar, abar);
    for (int i = 0; i < nv; i++) {
        vbar[i] += abar[i];
        abar[i] *= h;
    }
    /* the impulses' own adjoint: K^T z = J A^-1 abar / h, zetabar = -(dE/dzeta)^T z */
    double *z = H->z, *zb = H->dl;
    memset(zb, 0, sizeof(double) * (size_t)(n3 > 0 ? n3 : 1));
    double mubar = 0;
    if (nc && !H->frozen) {
        sid_hard_zeta(&P, H->lam, H->zeta);
        sid_hard_mode_system(&P, H->mode, H->lam, H->zeta, H->E, H->K);
        if (sid_lu_factor(n3, H->K, H->piv))
            return sid_error_set(err, SID_ERR_NUMERIC, "hard contact: the contact problem's Jacobian is singular");
        /* J A^-1 abar = W (L^-T abar) */
        double *w = H->tau;
        memcpy(w, abar, sizeof(double) * (size_t)nv);
        sid_tree_solve_lt(m->nv, m->dof_parent, ws->M, H->dinv, w);
        for (int k = 0; k < n3; k++) {
            const double *Wk = H->W + (size_t)k * (size_t)nv;
            double x = 0;
            for (int i = 0; i < nv; i++) x += Wk[i] * w[i];
            z[k] = x / h;
        }
        sid_lu_solve(n3, H->K, H->piv, 1, z);
        for (int i = 0; i < nc; i++) {
            const int n = 3 * i + 2, t = 3 * i;
            if (H->mode[i] == SID_HARD_SEP) continue;
            zb[n] = -z[n];
            if (H->mode[i] == SID_HARD_STICK) {
                zb[t] = -z[t], zb[t + 1] = -z[t + 1];
                continue;
            }
            /* rows |l_t| - mu ln (no zeta; d/dmu = -ln) and l_x zeta_y - l_y zeta_x */
            zb[t] = z[t + 1] * H->lam[t + 1];
            zb[t + 1] = -z[t + 1] * H->lam[t];
            mubar += z[t] * H->lam[n];
        }
        /* abar += h J^T zetabar */
        for (int k = 0; k < n3; k++) {
            if (zb[k] == 0) continue;
            const double *Jk = H->J + (size_t)k * (size_t)nv;
            for (int i = 0; i < nv; i++) abar[i] += h * Jk[i] * zb[k];
        }
    }
    /* R1's adjoint: the Euler step's, with the impulses as fixed external forces lambda / h */
    for (int i = 0; i < nc; i++) H->seed[i] = sid_v3_scale(1 / h, sid_v3_load(H->lam + 3 * i));
    const sid_fext_source impulses = {sid_hard_impulse_forces, sid_hard_impulse_forces_vjp, H, NULL};
    sid_fd_point at = {m, theta, ws, nc ? &impulses : NULL, q, v, u, h, c->implicit_act};
    sid_fd_vjp_factored(&at, H->aplus, ws->M, abar, &adj->bar);
    at.fx = NULL, at.hd = 0;   /* the dry rows were solved without the contacts (sid_hard_forward) */
    if (ws->dry) sid_dry_rows_vjp(&at, &adj->bar);
    if (!nc || H->frozen) return SID_OK;
    /* zeta's adjoint: contact velocities J v+ and gaps through the kinematics at q, and v */
    double rbar = 0;
    for (int i = 0; i < nc; i++) {
        H->seed[i] = sid_v3_load(zb + 3 * i);
        H->phibar[i] = P.c * zb[3 * i + 2];
        for (int d = 0; d < 3; d++) rbar += zb[3 * i + d] * H->lam[3 * i + d];
    }
    memset(H->zero, 0, sizeof(double) * (size_t)nv);
    sid_kinematics(m, theta, ws, q);
    sid_rnea(m, theta, ws, H->vplus, NULL, NULL, H->tau);
    sid_rnea_vjp_forces(m, ws, H->zero, NULL);
    contact_velocity_vjp(m, theta, ws, H, thetabar);
    sid_world_pose_vjp(m, ws);
    sid_rnea_vjp_motion(m, ws, q, qbar, vbar, thetabar);
    /* r = reg / total mass; mu */
    const double mt = sid_hard_total_mass(m, theta);
    if (mt > 0)
        for (int b = 1; b < m->nbody; b++)
            if (m->body[b].p_inertial >= 0) thetabar[m->body[b].p_inertial + P_MASS] -= rbar * H->r / mt;
    thetabar[m->p_ground + P_GROUND_FRICTION] += mubar;
    return SID_OK;
}
