/* fd.c — forward dynamics and its derivatives.
 *   (M + B + hd D) a = F - c - D v + J^T fext
 * with M the mass matrix, B the armature, D the viscous damping (hd = h: MuJoCo's implicit
 * damping for Euler; hd = 0: the plain forward dynamics; with implicit_act, D has the
 * actuators' damping too, actuator_damping.h, which F holds explicitly), F the motor, friction and joint limit
 * forces and servo torques (the limit's and the servo's depend on q, so their adjoints add to qbar), c
 * the bias forces, and fext the forces of a contact model and the logged pushes (push.h) on the bodies.
 * The adjoint uses the implicit function theorem on the residual
 * R(a; q, v, theta) = F - D v - ID(q, v, a) - B a - hd D a = 0 (ID with fext): with
 * w = A^-1 abar, every input z gets zbar += (dR/dz)^T w, so no derivative of M or of its factor
 * is needed (docs/adjoint.md). */
#include "fd.h"

#include "actuator_damping.h"
#include "backlash.h"
#include "push.h"

#include <string.h>

/* RNEA at (v, a) with the forces of fx: motion pass, forces, force pass. */
static void rnea_fext(const sid_fd_point *p, const double *a, double *tau)
{
    const sid_model *m = p->m;
    const double *theta = p->theta, *v = p->v;
    sid_workspace *ws = p->ws;
    const sid_fext_source *fx = p->fx;
    sid_rnea_motion(m, theta, ws, v, a);
    if (fx) fx->forces(m, theta, ws, fx->ctx, ws->fext);
    else if (ws->push)
        for (int b = 0; b < m->nbody; b++) ws->fext[b] = sid_sv_zero();
    if (ws->push) sid_push_forces(m, ws, ws->fext);
    sid_rnea_forces(m, ws, fx || ws->push ? ws->fext : NULL, tau);
    sid_backlash_zero_hidden(m, tau);
}

/* Reverse of rnea_fext: the forces' adjoint goes back through the contact model's geometry and
 * the world poses before the motion pass is reversed. */
static void rnea_fext_vjp(const sid_fd_point *p, const double *taubar, const sid_state_bar *bar)
{
    const sid_model *m = p->m;
    sid_workspace *ws = p->ws;
    const sid_fext_source *fx = p->fx;
    sid_rnea_vjp_forces(m, ws, taubar, fx || ws->push ? ws->fextbar : NULL);
    if (fx) fx->forces_vjp(m, p->theta, ws, fx->ctx, ws->fextbar, bar->thetabar);
    if (ws->push) sid_push_forces_vjp(m, ws, ws->fextbar);
    if (fx || ws->push) sid_world_pose_vjp(m, ws);
    sid_rnea_vjp_motion(m, ws, p->q, bar->qbar, bar->vbar, bar->thetabar);
}

sid_status sid_fd(const sid_fd_point *p, double *a, sid_error *err)
{
    const sid_model *m = p->m;
    const double *theta = p->theta, *q = p->q, *v = p->v, *u = p->u, hd = p->hd;
    sid_workspace *ws = p->ws;
    const int nv = m->nv;
    sid_kinematics(m, theta, ws, q);
    rnea_fext(p, NULL, ws->c);
    sid_crba(m, ws, ws->M);
    sid_joint_force(m, theta, v, u, ws->F);
    sid_joint_limit_force(m, theta, q, v, ws->F);
    sid_servo_force(m, theta, q, v, u, ws->F);
    sid_backlash_force(m, theta, q, v, ws->F);
    sid_backlash_inertia(m, theta, ws->M);
    for (int i = 0; i < nv; i++) a[i] = ws->F[i] - ws->c[i];
    for (int b = 1; b < m->nbody; b++) {
        const sid_body *bd = &m->body[b];
        if (bd->p_dof < 0) continue;
        const int i = bd->vadr, j = sid_drive_vadr(bd);   /* viscous damping on the motor side */
        const double *pd = theta + bd->p_dof;
        if (i == j) ws->M[i * nv + i] += pd[P_ARMATURE] + hd * pd[P_VISCOUS];   /* one sum: bit for bit as before */
        else ws->M[i * nv + i] += pd[P_ARMATURE], ws->M[j * nv + j] += hd * pd[P_VISCOUS];
        a[j] -= pd[P_VISCOUS] * v[j];
        const int k = p->implicit_act ? sid_actuator_damping_dof(bd) : -1;
        if (k >= 0) ws->M[k * nv + k] += hd * sid_actuator_damping(bd, theta);
    }
    if (sid_factor(m, ws->M))
        return sid_error_set(err, SID_ERR_SINGULAR,
                             "mass matrix is not positive definite (a massless link at the end of a chain?)");
    sid_factor_solve(m, ws->M, a);
    return SID_OK;
}


/* How fd_vjp finds the RNEA state at (q, v, a): computes it, or finds it in ws
 * (sid_fd_jvp_prepare's), and then may reverse it by sid_rnea_vjp_rows. */
enum { VJP_FORWARD, VJP_AT, VJP_AT_ROWS };

static void fd_vjp(const sid_fd_point *p, const double *a, const double *L, const double *abar,
                   const sid_state_bar *bar, int mode)
{
    const sid_model *m = p->m;
    const double *theta = p->theta, *q = p->q, *v = p->v, *u = p->u, hd = p->hd;
    sid_workspace *ws = p->ws;
    double *qbar = bar->qbar, *vbar = bar->vbar, *thetabar = bar->thetabar;
    const int nv = m->nv;
    double *w = ws->w;
    memcpy(w, abar, sizeof(double) * (size_t)nv);
    sid_factor_solve(m, L, w);
    sid_joint_force_vjp(p, w, bar);
    if (ws->ubar) {   /* the commands' adjoint, when asked for (command_grad.c) */
        sid_joint_force_ubar(m, theta, v, u, w, ws->ubar);
        sid_servo_force_ubar(p, w, ws->ubar);
    }
    sid_joint_limit_force_vjp(p, w, bar);
    sid_servo_force_vjp(p, w, bar);
    sid_backlash_force_vjp(p, w, bar);
    sid_backlash_inertia_vjp(m, a, w, thetabar);
    for (int i = 0; i < nv; i++) ws->rhs[i] = -w[i];
    for (int b = 1; b < m->nbody; b++) {
        const sid_body *bd = &m->body[b];
        if (bd->p_dof < 0) continue;
        const int i = bd->vadr, j = sid_drive_vadr(bd);
        const double *pd = theta + bd->p_dof;
        double *td = thetabar + bd->p_dof;
        vbar[j] -= pd[P_VISCOUS] * w[j];
        td[P_VISCOUS] -= (v[j] + hd * a[j]) * w[j];
        td[P_ARMATURE] -= a[i] * w[i];
        const int k = p->implicit_act ? sid_actuator_damping_dof(bd) : -1;
        if (k >= 0) sid_actuator_damping_vjp(bd, theta, -hd * a[k] * w[k], thetabar);
    }
    if (mode == VJP_FORWARD) {
        sid_kinematics(m, theta, ws, q);
        rnea_fext(p, a, ws->c);
    }
    if (mode == VJP_AT_ROWS) sid_rnea_vjp_rows(m, ws, ws->rhs, qbar, vbar, thetabar);
    else rnea_fext_vjp(p, ws->rhs, bar);
}

void sid_fd_vjp_factored(const sid_fd_point *p, const double *a, const double *L, const double *abar,
                         const sid_state_bar *bar)
{
    fd_vjp(p, a, L, abar, bar, VJP_FORWARD);
}

sid_status sid_fd_vjp(const sid_fd_point *p, const double *abar, const sid_state_bar *bar, sid_error *err)
{
    double *a = p->ws->tmp;
    sid_status s = sid_fd(p, a, err);
    if (s) return s;
    sid_fd_vjp_factored(p, a, p->ws->M, abar, bar);
    return SID_OK;
}

/* A adot = Rdot with a held fixed, Rdot = Fdot - Ddot v - D vd - IDdot - Bdot a - hd Ddot a,
 * IDdot with the tangent of the external forces of fx and of the pushes. */
void sid_fd_jvp_dir(const sid_fd_point *p, const double *a, const sid_state_dir *dir, double *ad)
{
    const sid_model *m = p->m;
    const double *theta = p->theta, *q = p->q, *v = p->v, hd = p->hd;
    const double *vd = dir->vd, *thd = dir->thd;
    sid_workspace *ws = p->ws;
    const sid_fext_source *fx = p->fx;
    double *tau = ws->rhs;
    memset(ad, 0, sizeof(double) * (size_t)m->nv);   /* a free joint's entries have no joint force */
    sid_joint_force_jvp(p, dir, ad);
    sid_joint_limit_force_jvp(p, dir, ad);
    sid_servo_force_jvp(p, dir, ad);
    sid_backlash_force_jvp(p, dir, ad);
    sid_backlash_inertia_jvp(m, thd, a, ad);
    sid_rnea_jvp_motion(m, theta, ws, q, dir);
    const int ext = (fx && fx->forces_jvp) || ws->push;
    if (ext) {
        for (int b = 0; b < m->nbody; b++) ws->fextbar[b] = sid_sv_zero();
        if (fx && fx->forces_jvp) fx->forces_jvp(m, theta, ws, fx->ctx, thd, ws->fextbar);
        if (ws->push) sid_push_forces_jvp(m, ws, ws->fextbar);
    }
    sid_rnea_jvp_forces(m, ws, ext ? ws->fextbar : NULL, tau);
    for (int b = 1; b < m->nbody; b++) {
        const sid_body *bd = &m->body[b];
        if (bd->vadr < 0) continue;
        const int i = bd->vadr, j = sid_drive_vadr(bd);
        if (bd->p_dof < 0) {   /* a free joint: no friction or armature */
            for (int k = 0; k < sid_joint_ndof(bd); k++) ad[i + k] -= tau[i + k];
            continue;
        }
        const double *pd = theta + bd->p_dof, *tp = thd + bd->p_dof;
        const int k = p->implicit_act ? sid_actuator_damping_dof(bd) : -1;
        if (k >= 0) ad[k] -= hd * sid_actuator_damping_jvp(bd, theta, thd) * a[k];
        if (i == j) {   /* one sum, in the order it always had */
            ad[i] -= tp[P_VISCOUS] * (v[i] + hd * a[i]) + pd[P_VISCOUS] * vd[i] + tau[i] + tp[P_ARMATURE] * a[i];
            continue;
        }
        ad[i] -= tau[i] + tp[P_ARMATURE] * a[i];
        ad[j] -= tp[P_VISCOUS] * (v[j] + hd * a[j]) + pd[P_VISCOUS] * vd[j];
    }
    sid_factor_solve(m, ws->M, ad);
}

sid_status sid_fd_jvp_prepare(const sid_fd_point *p, double *a, sid_error *err)
{
    sid_status s = sid_fd(p, a, err);
    if (!s) rnea_fext(p, a, p->ws->c);
    return s;
}

void sid_fd_jvp_at(const sid_fd_point *p, const double *a) { rnea_fext(p, a, p->ws->c); }

void sid_inverse_dynamics(const sid_fd_point *p, const double *a, double *tau)
{
    sid_kinematics(p->m, p->theta, p->ws, p->q);
    rnea_fext(p, a, tau);
}

void sid_inverse_dynamics_vjp(const sid_fd_point *p, const double *a, const double *taubar, const sid_state_bar *bar)
{
    sid_inverse_dynamics(p, a, p->ws->c);
    rnea_fext_vjp(p, taubar, bar);
}

/* Row i of the Jacobian is the adjoint of a_i: one reverse sweep with abar = e_i. The sweeps
 * leave the RNEA state at (q, v, a) as they found it, so it is computed once, by the prepare.
 * Stored by columns (entry (i, j) at j nv + i), so that a direction adds whole columns. */
void sid_fd_jacobian_rows(const sid_fd_point *p, const double *a, int ncols, const int *cols, double *rows)
{
    const sid_model *m = p->m;
    sid_workspace *ws = p->ws;
    const int nq = m->nq, nv = m->nv;
    double *thbar = ws->jbar, *e = thbar + m->nparam, *row = e + nv;
    const int mode = !p->fx && sid_rnea_vjp_rows_ok(m, ws, ncols, cols) ? VJP_AT_ROWS : VJP_AT;
    double *ubar = ws->ubar;
    ws->ubar = NULL;   /* the rows are no command's adjoint */
    memset(thbar, 0, sizeof(double) * (size_t)m->nparam);
    memset(e, 0, sizeof(double) * (size_t)nv);
    for (int i = 0; i < nv; i++) {
        memset(row, 0, sizeof(double) * (size_t)(nq + nv));
        for (int c = 0; c < ncols; c++) thbar[cols[c]] = 0;   /* the other entries are never read */
        e[i] = 1;
        const sid_state_bar bar = {row, row + nq, thbar};
        fd_vjp(p, a, ws->M, e, &bar, mode);
        e[i] = 0;
        for (int j = 0; j < nq + nv; j++) rows[(size_t)j * (size_t)nv + (size_t)i] = row[j];
        for (int c = 0; c < ncols; c++) rows[(size_t)(nq + nv + c) * (size_t)nv + (size_t)i] = thbar[cols[c]];
    }
    ws->ubar = ubar;
}

/* x times column j of the rows, added to ad; a zero x adds nothing (most of a parameter
 * direction's thd). */
static void add_column(const double *col, double x, int nv, double *ad)
{
    if (x == 0) return;
    for (int i = 0; i < nv; i++) ad[i] += x * col[i];
}

void sid_fd_jvp_rows(const sid_model *m, const double *rows, int ncols, const int *cols, const sid_state_dir *dir,
                     double *ad)
{
    const double *qd = dir->qd, *vd = dir->vd, *thd = dir->thd;
    const int nq = m->nq, nv = m->nv;
    memset(ad, 0, sizeof(double) * (size_t)nv);
    for (int j = 0; j < nq; j++) add_column(rows + (size_t)j * (size_t)nv, qd[j], nv, ad);
    for (int j = 0; j < nv; j++) add_column(rows + (size_t)(nq + j) * (size_t)nv, vd[j], nv, ad);
    for (int c = 0; c < ncols; c++) add_column(rows + (size_t)(nq + nv + c) * (size_t)nv, thd[cols[c]], nv, ad);
}

int sid_fd_rows_force = -1;

/* In tangents of one direction: a reverse sweep costs about 1.4 (1 to 3 us for 7 to 30 joints),
 * a direction's product with the rows about 0.012 nv (nv (nq + nv) multiply-adds, which grow
 * faster with the joints than a tangent does). Measured crossovers: 4, 8, 22 and 64 directions
 * for 2, 7, 15 and 30 joints; this rule says 3, 11, 26 and 66, and never beyond 83 joints. */
int sid_fd_rows_pay(const sid_model *m, int ndir)
{
    if (sid_fd_rows_force >= 0) return sid_fd_rows_force;
    const double nv = m->nv;
    return ndir * (1 - 0.012 * nv) > 1.4 * nv;
}
