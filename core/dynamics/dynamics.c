/* dynamics.c — rigid-body dynamics of the kinematic tree on the kinematics in the workspace:
 * recursive Newton-Euler inverse dynamics with external body forces (and its reverse- and
 * forward-mode twins) and the composite-rigid-body mass matrix.
 * Featherstone, "Rigid Body Dynamics Algorithms" (2008), ch. 5-6, in body coordinates.
 * Gravity enters as a fictitious base acceleration a0 = (0, -g). External forces (contact)
 * come in as an argument and their adjoint goes out as one: the dynamics does not know who
 * computes them. */
#include "dynamics.h"

#include <string.h>

/* v_b = X_b v_p + S qd;  a_b = X_b a_p + S qdd + v_b x S qd;  f_b = I a_b + v_b x* I v_b */
void sid_rnea_motion(const sid_model *m, const double *theta, sid_workspace *ws, const double *v, const double *a)
{
    const double *g = theta + m->p_gravity;
    ws->jv_valid = 0;
    ws->v[0] = sid_sv_zero();
    ws->a[0] = sid_sv_make(sid_v3_make(0, 0, 0), sid_v3_make(-g[0], -g[1], -g[2]));
    ws->f[0] = sid_sv_zero();
    for (int b = 1; b < m->nbody; b++) {
        const sid_body *bd = &m->body[b];
        const int p = bd->parent;
        sid_sv vJ = sid_sv_zero(), aJ = sid_sv_zero();
        for (int k = 0; k < sid_joint_ndof(bd); k++) {
            const sid_sv S = sid_joint_col(bd, &ws->X[b], k);
            sid_sv_acc(&vJ, sid_sv_scale(v ? v[bd->vadr + k] : 0, S));
            sid_sv_acc(&aJ, sid_sv_scale(a ? a[bd->vadr + k] : 0, S));
        }
        /* a free joint's S moves with the body: dS/dt qd = (0, -w x E v_lin) */
        if (bd->type == SID_JOINT_FREE) sid_v3_acc(&aJ.l, sid_v3_cross(vJ.l, vJ.w));
        ws->vJ[b] = vJ;
        ws->aJ[b] = aJ;
        ws->v[b] = sid_sv_add(sid_xform_motion(&ws->X[b], ws->v[p]), vJ);
        ws->a[b] = sid_sv_add(sid_sv_add(sid_xform_motion(&ws->X[b], ws->a[p]), aJ), sid_sv_crossm(ws->v[b], vJ));
        ws->h[b] = sid_inertia_mul(&ws->I[b], ws->v[b]);
        ws->f[b] = sid_sv_add(sid_inertia_mul(&ws->I[b], ws->a[b]), sid_sv_crossf(ws->v[b], ws->h[b]));
    }
}

/* f_b -= fext_b (external forces push on the links: the joints need that much less force);
 * then, leaves to root, tau_b = S^T f_b and f_p += X_b^T f_b. */
void sid_rnea_forces(const sid_model *m, sid_workspace *ws, const sid_sv *fext, double *tau)
{
    ws->jv_valid = 0;
    if (fext)
        for (int b = 1; b < m->nbody; b++) ws->f[b] = sid_sv_add(ws->f[b], sid_sv_scale(-1, fext[b]));
    for (int b = m->nbody - 1; b >= 1; b--) {
        const sid_body *bd = &m->body[b];
        for (int k = 0; k < sid_joint_ndof(bd); k++) tau[bd->vadr + k] = sid_sv_dot(sid_joint_col(bd, &ws->X[b], k), ws->f[b]);
        sid_sv_acc(&ws->f[bd->parent], sid_xform_force_inv(&ws->X[b], ws->f[b]));
    }
}

void sid_rnea(const sid_model *m, const double *theta, sid_workspace *ws, const double *v, const double *a,
              const sid_sv *fext, double *tau)
{
    sid_rnea_motion(m, theta, ws, v, a);
    sid_rnea_forces(m, ws, fext, tau);
}

void sid_rnea_vjp_forces(const sid_model *m, sid_workspace *ws, const double *taubar, sid_sv *fextbar)
{
    const int nb = m->nbody;
    for (int b = 0; b < nb; b++) {
        ws->vbar[b] = ws->abar[b] = ws->fbar[b] = sid_sv_zero();
        ws->Ebar[b] = sid_m3_zero();
        ws->rbar[b] = sid_v3_make(0, 0, 0);
        ws->Rwbar[b] = sid_m3_zero();
        ws->pwbar[b] = sid_v3_make(0, 0, 0);
        memset(&ws->Ibar[b], 0, sizeof ws->Ibar[b]);
    }
    /* Reverse of the leaves-to-root force pass, root to leaves: fbar_b = S taubar_b + X_b fbar_p. */
    for (int b = 1; b < nb; b++) {
        const sid_body *bd = &m->body[b];
        for (int k = 0; k < sid_joint_ndof(bd); k++)
            sid_sv_acc(&ws->fbar[b], sid_sv_scale(taubar[bd->vadr + k], sid_joint_col(bd, &ws->X[b], k)));
        if (bd->type == SID_JOINT_FREE)   /* tau_lin = E^T f_l */
            sid_m3_acc_outer(&ws->Ebar[b], ws->f[b].l, sid_v3_load(taubar + bd->vadr));
        sid_xform_force_inv_vjp(&ws->X[b], ws->f[b], ws->fbar[bd->parent], &ws->fbar[b], &ws->Ebar[b], &ws->rbar[b]);
    }
    /* the net body force is f - fext */
    if (fextbar)
        for (int b = 0; b < nb; b++) fextbar[b] = sid_sv_make(sid_v3_neg(ws->fbar[b].w), sid_v3_neg(ws->fbar[b].l));
}

/* The reverse motion pass's parameter adjoints: the inertias' (Ibar) and gravity's (a0 = (0, -g)). */
static void rnea_vjp_theta(const sid_model *m, const sid_workspace *ws, double *thetabar)
{
    if (!thetabar) return;
    for (int b = 1; b < m->nbody; b++) {
        const sid_body *bd = &m->body[b];
        if (bd->p_inertial < 0) continue;
        double *tb = thetabar + bd->p_inertial;
        const sid_inertia *Ib = &ws->Ibar[b];
        tb[P_MASS] += Ib->m;
        tb[P_COM + 0] += Ib->c.x;
        tb[P_COM + 1] += Ib->c.y;
        tb[P_COM + 2] += Ib->c.z;
        tb[P_INERTIA + 0] += Ib->Ic.m[0][0];
        tb[P_INERTIA + 1] += Ib->Ic.m[1][1];
        tb[P_INERTIA + 2] += Ib->Ic.m[2][2];
        tb[P_INERTIA + 3] += Ib->Ic.m[0][1] + Ib->Ic.m[1][0];
        tb[P_INERTIA + 4] += Ib->Ic.m[0][2] + Ib->Ic.m[2][0];
        tb[P_INERTIA + 5] += Ib->Ic.m[1][2] + Ib->Ic.m[2][1];
    }
    thetabar[m->p_gravity + 0] -= ws->abar[0].l.x;
    thetabar[m->p_gravity + 1] -= ws->abar[0].l.y;
    thetabar[m->p_gravity + 2] -= ws->abar[0].l.z;
}

void sid_rnea_vjp_motion(const sid_model *m, sid_workspace *ws, const double *q, double *qbar, double *vbar,
                         double *thetabar)
{
    const int nb = m->nbody;
    /* Reverse of the root-to-leaves pass, leaves to root. */
    for (int b = nb - 1; b >= 1; b--) {
        const sid_body *bd = &m->body[b];
        const int p = bd->parent;
        sid_sv hbar = sid_sv_zero(), vJbar = sid_sv_zero();
        sid_inertia_mul_vjp(&ws->I[b], ws->a[b], ws->fbar[b], &ws->abar[b], &ws->Ibar[b]);
        sid_sv_crossf_vjp(ws->v[b], ws->h[b], ws->fbar[b], &ws->vbar[b], &hbar);
        sid_inertia_mul_vjp(&ws->I[b], ws->v[b], hbar, &ws->vbar[b], &ws->Ibar[b]);
        sid_xform_motion_vjp(&ws->X[b], ws->a[p], ws->abar[b], &ws->abar[p], &ws->Ebar[b], &ws->rbar[b]);
        sid_sv_crossm_vjp(ws->v[b], ws->vJ[b], ws->abar[b], &ws->vbar[b], &vJbar);
        sid_xform_motion_vjp(&ws->X[b], ws->v[p], ws->vbar[b], &ws->vbar[p], &ws->Ebar[b], &ws->rbar[b]);
        sid_sv_acc(&vJbar, ws->vbar[b]);
        if (bd->type == SID_JOINT_FREE) {
            /* aJ = (alpha, E a_lin + vJ.l x vJ.w), vJ = (w, E v_lin) */
            const sid_v3 cb = ws->abar[b].l;
            const sid_v3 alin = sid_m3_tmul_v3(&ws->X[b].E, sid_v3_sub(ws->aJ[b].l, sid_v3_cross(ws->vJ[b].l, ws->vJ[b].w)));
            const sid_v3 vlin = sid_m3_tmul_v3(&ws->X[b].E, ws->vJ[b].l);
            sid_v3_acc(&vJbar.l, sid_v3_cross(ws->vJ[b].w, cb));
            sid_v3_acc(&vJbar.w, sid_v3_cross(cb, ws->vJ[b].l));
            sid_m3_acc_outer(&ws->Ebar[b], cb, alin);
            sid_m3_acc_outer(&ws->Ebar[b], vJbar.l, vlin);
        }
        for (int k = 0; k < sid_joint_ndof(bd) && vbar; k++) vbar[bd->vadr + k] += sid_sv_dot(sid_joint_col(bd, &ws->X[b], k), vJbar);
    }
    rnea_vjp_theta(m, ws, thetabar);
    sid_kinematics_vjp(m, ws, q, qbar, thetabar);
}

void sid_rnea_vjp(const sid_model *m, sid_workspace *ws, const double *q, const double *taubar, const sid_state_bar *bar)
{
    sid_rnea_vjp_forces(m, ws, taubar, NULL);
    sid_rnea_vjp_motion(m, ws, q, bar->qbar, bar->vbar, bar->thetabar);
}

/* Composite rigid-body algorithm with each composite kept as (mass, first moment h, inertia
 * about the body origin), which add directly: moving a composite to the parent rotates h and
 * the inertia and shifts them by r (parallel-axis theorem with first moment). */
void sid_crba(const sid_model *m, sid_workspace *ws, double *M)
{
    const int nb = m->nbody, nv = m->nv;
    for (int b = 0; b < nb; b++) {
        const sid_inertia *I = &ws->I[b];
        const double cc = sid_v3_dot(I->c, I->c);
        ws->cm[b] = I->m;
        ws->ch[b] = sid_v3_scale(I->m, I->c);
        ws->cI[b] = I->Ic;   /* Io = Ic + m ((c.c) 1 - c c^T) */
        sid_m3_acc_outer(&ws->cI[b], sid_v3_scale(-I->m, I->c), I->c);
        for (int k = 0; k < 3; k++) ws->cI[b].m[k][k] += I->m * cc;
    }
    for (int b = nb - 1; b >= 1; b--) {
        const int p = m->body[b].parent;
        const sid_xform *X = &ws->X[b];
        const double mb = ws->cm[b];
        const sid_v3 h = sid_m3_tmul_v3(&X->E, ws->ch[b]), r = X->r;
        const sid_m3 Et = sid_m3_transpose(&X->E), IE = sid_m3_mul(&ws->cI[b], &X->E);
        sid_m3 Io = sid_m3_mul(&Et, &IE);
        /* I_p = I_b + (2 r.h + m r.r) 1 - (r h^T + h r^T) - m r r^T */
        const double s = 2 * sid_v3_dot(r, h) + mb * sid_v3_dot(r, r);
        for (int k = 0; k < 3; k++) Io.m[k][k] += s;
        sid_m3_acc_outer(&Io, sid_v3_neg(r), h);
        sid_m3_acc_outer(&Io, sid_v3_neg(h), r);
        sid_m3_acc_outer(&Io, sid_v3_scale(-mb, r), r);
        ws->cm[p] += mb;
        sid_v3_acc(&ws->ch[p], sid_v3_add(h, sid_v3_scale(mb, r)));
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) ws->cI[p].m[i][j] += Io.m[i][j];
    }
    memset(M, 0, sizeof(double) * (size_t)nv * (size_t)nv);
    for (int b = 1; b < nb; b++) {
        const sid_body *bd = &m->body[b];
        for (int c = 0; c < sid_joint_ndof(bd); c++) {
            const sid_sv S = sid_joint_col(bd, &ws->X[b], c);
            /* F = Ic S = (Io w + h x l, m l - h x w) */
            sid_sv F = sid_sv_make(sid_v3_add(sid_m3_mul_v3(&ws->cI[b], S.w), sid_v3_cross(ws->ch[b], S.l)),
                                   sid_v3_sub(sid_v3_scale(ws->cm[b], S.l), sid_v3_cross(ws->ch[b], S.w)));
            const int i = bd->vadr + c;
            for (int c2 = 0; c2 <= c; c2++)
                M[i * nv + bd->vadr + c2] = M[(bd->vadr + c2) * nv + i] = sid_sv_dot(sid_joint_col(bd, &ws->X[b], c2), F);
            for (int j = b; m->body[j].parent > 0;) {
                F = sid_xform_force_inv(&ws->X[j], F);
                j = m->body[j].parent;
                const sid_body *bj = &m->body[j];
                for (int c2 = 0; c2 < sid_joint_ndof(bj); c2++) {
                    const int k = bj->vadr + c2;
                    M[i * nv + k] = M[k * nv + i] = sid_sv_dot(sid_joint_col(bj, &ws->X[j], c2), F);
                }
            }
        }
    }
}

void sid_mass_matrix(const sid_model *m, const double *theta, sid_workspace *ws, const double *q, double *M)
{
    sid_kinematics(m, theta, ws, q);
    sid_crba(m, ws, M);
}

double sid_energy(const sid_model *m, const double *theta, sid_workspace *ws, const double *q, const double *v)
{
    const int nv = m->nv;
    sid_kinematics(m, theta, ws, q);
    sid_crba(m, ws, ws->M);
    double T = 0;
    for (int i = 0; i < nv; i++)
        for (int j = 0; j < nv; j++) T += 0.5 * v[i] * ws->M[i * nv + j] * v[j];
    for (int b = 1; b < m->nbody; b++)
        if (m->body[b].p_dof >= 0) T += 0.5 * theta[m->body[b].p_dof + P_ARMATURE] * v[m->body[b].vadr] * v[m->body[b].vadr];
    /* V = -sum m g . p_com, with world poses composed root to leaves (body 0 is the world). */
    const sid_v3 g = sid_v3_load(theta + m->p_gravity);
    double V = 0;
    sid_m3 *Rw = (sid_m3 *)ws->cI;   /* borrow scratch: world rotation (body -> world) */
    sid_v3 *pw = ws->ch;             /* world position of the body origin */
    Rw[0] = sid_m3_identity();
    pw[0] = sid_v3_make(0, 0, 0);
    for (int b = 1; b < m->nbody; b++) {
        const int p = m->body[b].parent;
        const sid_m3 Et = sid_m3_transpose(&ws->X[b].E);
        Rw[b] = sid_m3_mul(&Rw[p], &Et);
        pw[b] = sid_v3_add(pw[p], sid_m3_mul_v3(&Rw[p], ws->X[b].r));
        const sid_v3 com = sid_v3_add(pw[b], sid_m3_mul_v3(&Rw[b], ws->I[b].c));
        V -= ws->I[b].m * sid_v3_dot(g, com);
    }
    return T + V;
}

/* Tangent of a transform: Xdot m = (Edot w, Edot (l - r x w) - E (rdot x w)). */
static sid_sv xform_motion_dot(const sid_xform *X, const sid_m3 *Ed, sid_v3 rd, sid_sv m)
{
    return sid_sv_make(sid_m3_mul_v3(Ed, m.w),
                       sid_v3_sub(sid_m3_mul_v3(Ed, sid_v3_sub(m.l, sid_v3_cross(X->r, m.w))),
                                  sid_m3_mul_v3(&X->E, sid_v3_cross(rd, m.w))));
}

/* Tangent of X^T f in the transform: (Edot^T n + rdot x E^T fl + r x Edot^T fl, Edot^T fl). */
static sid_sv xform_force_inv_dot(const sid_xform *X, const sid_m3 *Ed, sid_v3 rd, sid_sv f)
{
    const sid_v3 ud = sid_m3_tmul_v3(Ed, f.l), u = sid_m3_tmul_v3(&X->E, f.l);
    return sid_sv_make(sid_v3_add(sid_v3_add(sid_m3_tmul_v3(Ed, f.w), sid_v3_cross(rd, u)), sid_v3_cross(X->r, ud)), ud);
}

/* Tangent of h = I v in the inertia: p = m (l + w x c), n = Ic w + c x p. */
static sid_sv inertia_dot_mul(const sid_inertia *I, const sid_inertia *Id, sid_sv v)
{
    const sid_v3 vc = sid_v3_add(v.l, sid_v3_cross(v.w, I->c));
    const sid_v3 p = sid_v3_scale(I->m, vc);
    const sid_v3 pd = sid_v3_add(sid_v3_scale(Id->m, vc), sid_v3_scale(I->m, sid_v3_cross(v.w, Id->c)));
    return sid_sv_make(sid_v3_add(sid_v3_add(sid_m3_mul_v3(&Id->Ic, v.w), sid_v3_cross(Id->c, p)), sid_v3_cross(I->c, pd)),
                       pd);
}

/* The direction-independent parts of the tangent of a revolute or fixed joint's body, at the
 * current X, v, a and f. E = Q^T RT^T with dQ/dq = [ax]x Q gives dE/dq = -[ax]x E, so with
 * S = (ax, 0) (Featherstone 2008, 2.x)
 *   dX/dq m = -S x (X m) = (X m) x S,   d(X^T f)/dq = X^T (S x* f),
 * per unit qdot at v_p, a_p and f_b; the joint velocity tangent's v x (vdot S) = vdot (v x S);
 * and the bias force's tangent v' x* I v + v x* I v' = B v' as a 6 x 6 matrix B (columns: unit
 * v'). Computed once for all directions. */
static void jvp_shared(const sid_model *m, sid_workspace *ws)
{
    for (int b = 1; b < m->nbody; b++) {
        const sid_body *bd = &m->body[b];
        if (bd->type == SID_JOINT_FREE || bd->type == SID_JOINT_PRISMATIC) continue;
        const sid_xform *X = &ws->X[b];
        if (bd->type == SID_JOINT_REVOLUTE) {
            const sid_v3 ax = sid_v3_load(bd->axis);
            const sid_sv xv = sid_xform_motion(X, ws->v[bd->parent]), xa = sid_xform_motion(X, ws->a[bd->parent]);
            const sid_sv f = ws->f[b], v = ws->v[b];
            ws->jv_v[b] = sid_sv_make(sid_v3_cross(xv.w, ax), sid_v3_cross(xv.l, ax));
            ws->jv_a[b] = sid_sv_make(sid_v3_cross(xa.w, ax), sid_v3_cross(xa.l, ax));
            ws->jv_f[b] = sid_xform_force_inv(X, sid_sv_make(sid_v3_cross(ax, f.w), sid_v3_cross(ax, f.l)));
            ws->jv_vS[b] = sid_sv_make(sid_v3_cross(v.w, ax), sid_v3_cross(v.l, ax));
        } else {
            ws->jv_v[b] = ws->jv_a[b] = ws->jv_f[b] = ws->jv_vS[b] = sid_sv_zero();
        }
        double *B = ws->jv_B + 36 * (size_t)b;
        for (int k = 0; k < 6; k++) {
            double e[6] = {0, 0, 0, 0, 0, 0};
            e[k] = 1;
            const sid_sv u = sid_sv_make(sid_v3_load(e), sid_v3_load(e + 3));
            const sid_sv c = sid_sv_add(sid_sv_crossf(u, ws->h[b]), sid_sv_crossf(ws->v[b], sid_inertia_mul(&ws->I[b], u)));
            const double col[6] = {c.w.x, c.w.y, c.w.z, c.l.x, c.l.y, c.l.z};
            for (int i = 0; i < 6; i++) B[6 * i + k] = col[i];
        }
    }
    ws->jv_valid = 1;
}

/* B x for a row-major 6 x 6 B. */
static sid_sv mat6_mul(const double *B, sid_sv x)
{
    const double xv[6] = {x.w.x, x.w.y, x.w.z, x.l.x, x.l.y, x.l.z};
    double y[6];
    for (int i = 0; i < 6; i++) {
        const double *r = B + 6 * i;
        y[i] = r[0] * xv[0] + r[1] * xv[1] + r[2] * xv[2] + r[3] * xv[3] + r[4] * xv[4] + r[5] * xv[5];
    }
    return sid_sv_make(sid_v3_load(y), sid_v3_load(y + 3));
}

static int all_zero(const double *x, int n)
{
    for (int i = 0; i < n; i++)
        if (x[i] != 0) return 0;
    return 1;
}

/* The motion pass's tangent; the tangents live in the adjoint arrays, which a JVP does not
 * need: body velocity, acceleration and net force in vbar, abar, fbar, the transform's in
 * Ebar, rbar (where the general form below computes it) and, with world poses (spheres or
 * pushes), theirs in Rwbar, pwbar; the transform's term of the parent force
 * in jv_fx, for sid_rnea_jvp_forces. The acceleration a is held fixed. A revolute or fixed
 * joint whose origin does not move in this direction (no origin parameter in it, no world
 * poses) scales jvp_shared's terms by its qdot instead of forming Edot: the common case of a
 * Jacobian's many directions, which then share everything that does not depend on them. */
void sid_rnea_jvp_motion(const sid_model *m, const double *theta, sid_workspace *ws, const double *q,
                         const sid_state_dir *dir)
{
    const double *qdot = dir->qd, *vdot = dir->vd, *thetadot = dir->thd;
    const int nb = m->nbody, poses = m->nsphere || ws->push;
    (void)theta;   /* ws is bound to theta by the sid_kinematics before sid_rnea */
    sid_sv *vd = ws->vbar, *ad = ws->abar, *fd = ws->fbar;
    const double *gd = thetadot + m->p_gravity;
    if (!ws->jv_valid) jvp_shared(m, ws);
    vd[0] = sid_sv_zero();
    ad[0] = sid_sv_make(sid_v3_make(0, 0, 0), sid_v3_make(-gd[0], -gd[1], -gd[2]));
    fd[0] = sid_sv_zero();
    ws->Rwbar[0] = sid_m3_zero();
    ws->pwbar[0] = sid_v3_make(0, 0, 0);
    for (int b = 1; b < nb; b++) {
        const sid_body *bd = &m->body[b];
        const int p = bd->parent, isfree = bd->type == SID_JOINT_FREE;
        const sid_xform *X = &ws->X[b];
        const double *od = isfree ? NULL : thetadot + bd->p_origin;
        /* the inertia's tangent, where this direction moves it */
        sid_inertia Id = {0, {0, 0, 0}, {{{0}}}};
        const int inertial = bd->p_inertial >= 0 && !all_zero(thetadot + bd->p_inertial, P_INERTIA + 6);
        if (inertial) {
            const double *pi = thetadot + bd->p_inertial, *J = pi + P_INERTIA;
            const sid_m3 Icd = {{{J[0], J[3], J[4]}, {J[3], J[1], J[5]}, {J[4], J[5], J[2]}}};
            Id.m = pi[P_MASS];
            Id.c = sid_v3_load(pi + P_COM);
            Id.Ic = Icd;
        }
        if (!poses && od && bd->type != SID_JOINT_PRISMATIC && all_zero(od, 6)) {
            /* vJ = vq S, aJ = qdd S: vd = qd (X v_p x S) + X vd_p + vdq S,
             * ad = qd (X a_p x S) + X ad_p + vd x vJ + vdq (v x S), fd = I ad + B vd (+ Idot terms) */
            const int rev = bd->type == SID_JOINT_REVOLUTE;
            const double qd = rev ? qdot[bd->qadr] : 0, vdq = rev ? vdot[bd->vadr] : 0;
            const sid_v3 wJ = ws->vJ[b].w;
            vd[b] = sid_sv_add(sid_sv_add(sid_sv_scale(qd, ws->jv_v[b]), sid_xform_motion(X, vd[p])),
                               rev ? sid_sv_scale(vdq, sid_joint_col(bd, X, 0)) : sid_sv_zero());
            ad[b] = sid_sv_add(sid_sv_add(sid_sv_scale(qd, ws->jv_a[b]), sid_xform_motion(X, ad[p])),
                               sid_sv_add(sid_sv_make(sid_v3_cross(vd[b].w, wJ), sid_v3_cross(vd[b].l, wJ)),
                                          sid_sv_scale(vdq, ws->jv_vS[b])));
            fd[b] = sid_sv_add(sid_inertia_mul(&ws->I[b], ad[b]), mat6_mul(ws->jv_B + 36 * (size_t)b, vd[b]));
            if (inertial)
                fd[b] = sid_sv_add(fd[b], sid_sv_add(inertia_dot_mul(&ws->I[b], &Id, ws->a[b]),
                                                     sid_sv_crossf(ws->v[b], inertia_dot_mul(&ws->I[b], &Id, ws->v[b]))));
            ws->jv_fx[b] = sid_sv_scale(qd, ws->jv_f[b]);
            continue;
        }
        /* the general form: the transform's tangent Edot, rdot */
        sid_m3 Ed;
        sid_v3 rd;
        if (isfree) {
            sid_free_xform_jvp(bd, q, qdot, &Ed, &rd);
        } else {
            const sid_m3 *dR = ws->dRT + 3 * b;
            sid_m3 RTd = sid_m3_zero();
            if (!all_zero(od + P_RPY, 3))
                for (int k = 0; k < 3; k++)
                    for (int i = 0; i < 3; i++)
                        for (int j = 0; j < 3; j++) RTd.m[i][j] += dR[k].m[i][j] * od[P_RPY + k];
            const sid_v3 ax = sid_v3_load(bd->axis);
            const double qd = bd->qadr >= 0 ? qdot[bd->qadr] : 0;
            /* E = (RT Q)^T:  Edot = (RTd Q + RT [ax]x Q qd)^T */
            sid_m3 RQd = sid_m3_mul(&RTd, &ws->Q[b]);
            rd = sid_v3_load(od + P_XYZ);
            if (bd->type == SID_JOINT_REVOLUTE) {
                const sid_m3 K = sid_m3_skew(sid_v3_scale(qd, ax)), KQ = sid_m3_mul(&K, &ws->Q[b]),
                             RKQ = sid_m3_mul(&ws->RT[b], &KQ);
                for (int i = 0; i < 3; i++)
                    for (int j = 0; j < 3; j++) RQd.m[i][j] += RKQ.m[i][j];
            }
            if (bd->type == SID_JOINT_PRISMATIC) {
                rd = sid_v3_add(rd, sid_m3_mul_v3(&RTd, sid_v3_scale(q[bd->qadr], ax)));
                rd = sid_v3_add(rd, sid_m3_mul_v3(&ws->RT[b], sid_v3_scale(qd, ax)));
            }
            Ed = sid_m3_transpose(&RQd);
        }
        ws->Ebar[b] = Ed;
        ws->rbar[b] = rd;
        if (poses) {
            /* R_b = R_p E^T, p_b = p_p + R_p r */
            const sid_m3 Et = sid_m3_transpose(&X->E), Edt = sid_m3_transpose(&Ed);
            const sid_m3 A = sid_m3_mul(&ws->Rwbar[p], &Et), B = sid_m3_mul(&ws->Rw[p], &Edt);
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++) ws->Rwbar[b].m[i][j] = A.m[i][j] + B.m[i][j];
            ws->pwbar[b] = sid_v3_add(sid_v3_add(ws->pwbar[p], sid_m3_mul_v3(&ws->Rwbar[p], X->r)),
                                      sid_m3_mul_v3(&ws->Rw[p], rd));
        }
        const sid_sv Xvd = xform_motion_dot(X, &Ed, rd, ws->v[p]), Xad = xform_motion_dot(X, &Ed, rd, ws->a[p]);
        ws->jv_fx[b] = xform_force_inv_dot(X, &Ed, rd, ws->f[b]);
        sid_sv vJd = sid_sv_zero(), aJd = sid_sv_zero();
        if (isfree) {
            /* vJ = (w, E v_lin), aJ = (alpha, E a_lin + vJ.l x vJ.w) with a held fixed */
            const sid_v3 vlin = sid_m3_tmul_v3(&X->E, ws->vJ[b].l);
            const sid_v3 alin = sid_m3_tmul_v3(&X->E, sid_v3_sub(ws->aJ[b].l, sid_v3_cross(ws->vJ[b].l, ws->vJ[b].w)));
            const double *vv = vdot + bd->vadr;
            vJd = sid_sv_make(sid_v3_load(vv + 3), sid_v3_add(sid_m3_mul_v3(&Ed, vlin), sid_m3_mul_v3(&X->E, sid_v3_load(vv))));
            aJd.l = sid_v3_add(sid_m3_mul_v3(&Ed, alin),
                               sid_v3_add(sid_v3_cross(vJd.l, ws->vJ[b].w), sid_v3_cross(ws->vJ[b].l, vJd.w)));
        } else if (bd->vadr >= 0) {
            vJd = sid_sv_scale(vdot[bd->vadr], sid_joint_col(bd, X, 0));
        }
        vd[b] = sid_sv_add(sid_sv_add(Xvd, sid_xform_motion(X, vd[p])), vJd);
        ad[b] = sid_sv_add(sid_sv_add(sid_sv_add(Xad, sid_xform_motion(X, ad[p])), aJd),
                           sid_sv_add(sid_sv_crossm(vd[b], ws->vJ[b]), sid_sv_crossm(ws->v[b], vJd)));
        sid_sv hd = sid_inertia_mul(&ws->I[b], vd[b]), Ia = sid_inertia_mul(&ws->I[b], ad[b]);
        if (inertial) {
            hd = sid_sv_add(hd, inertia_dot_mul(&ws->I[b], &Id, ws->v[b]));
            Ia = sid_sv_add(Ia, inertia_dot_mul(&ws->I[b], &Id, ws->a[b]));
        }
        fd[b] = sid_sv_add(Ia, sid_sv_add(sid_sv_crossf(vd[b], ws->h[b]), sid_sv_crossf(ws->v[b], hd)));
    }
}

int sid_rnea_vjp_rows_ok(const sid_model *m, const sid_workspace *ws, int ncols, const int *cols)
{
    if (m->nsphere || ws->push) return 0;
    for (int b = 1; b < m->nbody; b++) {
        const sid_body *bd = &m->body[b];
        if (bd->type != SID_JOINT_REVOLUTE && bd->type != SID_JOINT_FIXED) return 0;
        for (int c = 0; c < ncols; c++)
            if (cols[c] >= bd->p_origin && cols[c] < bd->p_origin + 6) return 0;
    }
    return 1;
}

/* The transpose of sid_rnea_jvp_motion's fast path, forces then motion: the joint angles'
 * adjoints are jvp_shared's per-unit-qdot terms dotted with the adjoints they meet, where the
 * general sweep accumulates Ebar, rbar and reduces them in sid_kinematics_vjp. */
void sid_rnea_vjp_rows(const sid_model *m, sid_workspace *ws, const double *taubar, double *qbar, double *vbar,
                       double *thetabar)
{
    const int nb = m->nbody;
    sid_sv *vb = ws->vbar, *ab = ws->abar, *fb = ws->fbar;
    if (!ws->jv_valid) jvp_shared(m, ws);
    for (int b = 0; b < nb; b++) {
        vb[b] = ab[b] = fb[b] = sid_sv_zero();
        memset(&ws->Ibar[b], 0, sizeof ws->Ibar[b]);
    }
    /* the force pass, root to leaves: fbar_b = S taubar_b + X_b fbar_p */
    for (int b = 1; b < nb; b++) {
        const sid_body *bd = &m->body[b];
        const sid_xform *X = &ws->X[b];
        const sid_sv fp = fb[bd->parent];
        if (bd->type == SID_JOINT_REVOLUTE) {
            sid_sv_acc(&fb[b], sid_sv_scale(taubar[bd->vadr], sid_joint_col(bd, X, 0)));
            qbar[bd->qadr] += sid_sv_dot(ws->jv_f[b], fp);
        }
        sid_sv_acc(&fb[b], sid_xform_motion(X, fp));
    }
    /* the motion pass, leaves to root */
    for (int b = nb - 1; b >= 1; b--) {
        const sid_body *bd = &m->body[b];
        const int p = bd->parent, rev = bd->type == SID_JOINT_REVOLUTE;
        const sid_xform *X = &ws->X[b];
        sid_sv hbar = sid_sv_zero(), vJbar = sid_sv_zero();
        sid_inertia_mul_vjp(&ws->I[b], ws->a[b], fb[b], &ab[b], &ws->Ibar[b]);
        sid_sv_crossf_vjp(ws->v[b], ws->h[b], fb[b], &vb[b], &hbar);
        sid_inertia_mul_vjp(&ws->I[b], ws->v[b], hbar, &vb[b], &ws->Ibar[b]);
        sid_sv_acc(&ab[p], sid_xform_force_inv(X, ab[b]));   /* X^T, the motion transform's transpose */
        sid_sv_crossm_vjp(ws->v[b], ws->vJ[b], ab[b], &vb[b], &vJbar);
        sid_sv_acc(&vb[p], sid_xform_force_inv(X, vb[b]));
        if (!rev) continue;
        qbar[bd->qadr] += sid_sv_dot(ws->jv_a[b], ab[b]) + sid_sv_dot(ws->jv_v[b], vb[b]);
        sid_sv_acc(&vJbar, vb[b]);
        vbar[bd->vadr] += sid_sv_dot(sid_joint_col(bd, X, 0), vJbar);
    }
    rnea_vjp_theta(m, ws, thetabar);
}

/* After sid_rnea_jvp_motion in the same direction (its jv_fx and, for free joints, Ebar). */
void sid_rnea_jvp_forces(const sid_model *m, sid_workspace *ws, const sid_sv *fextdot, double *taudot)
{
    sid_sv *fd = ws->fbar;
    if (fextdot)
        for (int b = 1; b < m->nbody; b++) fd[b] = sid_sv_add(fd[b], sid_sv_scale(-1, fextdot[b]));
    for (int b = m->nbody - 1; b >= 1; b--) {
        const sid_body *bd = &m->body[b];
        for (int k = 0; k < sid_joint_ndof(bd); k++) {
            taudot[bd->vadr + k] = sid_sv_dot(sid_joint_col(bd, &ws->X[b], k), fd[b]);
            /* a free joint's linear columns turn with E */
            if (bd->type == SID_JOINT_FREE && k < 3)
                taudot[bd->vadr + k] += ws->Ebar[b].m[0][k] * ws->f[b].l.x + ws->Ebar[b].m[1][k] * ws->f[b].l.y +
                                        ws->Ebar[b].m[2][k] * ws->f[b].l.z;
        }
        sid_sv_acc(&fd[bd->parent], ws->jv_fx[b]);
        sid_sv_acc(&fd[bd->parent], sid_xform_force_inv(&ws->X[b], fd[b]));
    }
}

void sid_rnea_jvp(const sid_model *m, const double *theta, sid_workspace *ws, const double *q, const sid_state_dir *dir,
                  double *taudot)
{
    sid_rnea_jvp_motion(m, theta, ws, q, dir);
    sid_rnea_jvp_forces(m, ws, NULL, taudot);
}
