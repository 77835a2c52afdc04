/* contact.c — compliant contact of spheres fixed to links against the ground plane
 * z = height, and its adjoint (sid.h, sid_contact_model; docs/formats.md).
 * Each sphere touches at its lowest point; the material point there moves with velocity u
 * (world frame). With penetration d = height + radius - z_centre and S(d) = w softplus(d / w),
 *   f_n = S(d) (stiffness - damping u_z)                       (Hunt-Crossley: no pull while
 *   f_t = -friction f_n u_t / sqrt(|u_t|^2 + smoothing^2)       separating slower than k / D)
 * The force enters the dynamics as an external force on the link (contact.h), so RNEA's own
 * reverse sweep carries its adjoint to q, v and the inertial parameters; this file adds the
 * contact's own part: to the link's velocity, its world pose and the contact parameters. */
#include "contact.h"

#include "dynamics.h"

/* softplus(x) = log(1 + e^x) and the logistic function, without overflow. */
static double softplus(double x) { return (x > 0 ? x : 0) + log1p(exp(-fabs(x))); }
static double logistic(double x) { return x >= 0 ? 1 / (1 + exp(-x)) : exp(x) / (1 + exp(x)); }

/* What one sphere's force depends on, kept for its adjoint and tangent. */
typedef struct sid_sphere_state {
    sid_v3 cp;        /* contact point in the body frame */
    sid_v3 vb, u;     /* its velocity in the body frame and in the world */
    double d, S, sig, fn, nrm;
    sid_v3 F;         /* force in the world frame */
} sphere_state;

struct sid_sphere_state *sid_contact_carve(const sid_model *m, sid_carve *c)
{
    return m->nsphere ? sid_carve_take(c, (size_t)m->nsphere, sizeof(sphere_state)) : NULL;
}

static sphere_state sphere_force(const sid_model *m, const double *theta, const sid_workspace *ws, int c)
{
    const int b = m->sphere[c].body;
    const double *ps = theta + m->sphere[c].p, *g = theta + m->p_ground;
    const sid_m3 *R = &ws->Rw[b];
    const sid_v3 cen = sid_v3_load(ps + P_SPHERE_XYZ), ez = {0, 0, 1};
    const double r = ps[P_SPHERE_RADIUS], w = g[P_GROUND_WIDTH];
    sphere_state st;
    st.cp = sid_v3_sub(cen, sid_v3_scale(r, sid_m3_tmul_v3(R, ez)));
    const sid_v3 x = sid_v3_add(ws->pw[b], sid_m3_mul_v3(R, cen));
    st.d = g[P_GROUND_HEIGHT] + r - x.z;
    st.S = w * softplus(st.d / w);
    st.sig = logistic(st.d / w);
    st.vb = sid_v3_add(ws->v[b].l, sid_v3_cross(ws->v[b].w, st.cp));
    st.u = sid_m3_mul_v3(R, st.vb);
    st.fn = st.S * (g[P_GROUND_STIFFNESS] - g[P_GROUND_DAMPING] * st.u.z);
    st.nrm = sqrt(st.u.x * st.u.x + st.u.y * st.u.y + g[P_GROUND_SMOOTHING] * g[P_GROUND_SMOOTHING]);
    const double ft = -g[P_GROUND_FRICTION] * st.fn / st.nrm;
    st.F = sid_v3_make(ft * st.u.x, ft * st.u.y, st.fn);
    return st;
}

static void contact_forces(const sid_model *m, const double *theta, sid_workspace *ws, const void *ctx, sid_sv *fext)
{
    (void)ctx;
    for (int b = 0; b < m->nbody; b++) fext[b] = sid_sv_zero();
    for (int c = 0; c < m->nsphere; c++) {
        const int b = m->sphere[c].body;
        const sphere_state st = sphere_force(m, theta, ws, c);
        const sid_v3 Fb = sid_m3_tmul_v3(&ws->Rw[b], st.F);
        sid_sv_acc(&fext[b], sid_sv_make(sid_v3_cross(st.cp, Fb), Fb));
        ws->sphere[c] = st;   /* for the tangent's directions (contact_forces_jvp) */
    }
}

static void contact_forces_vjp(const sid_model *m, const double *theta, sid_workspace *ws, const void *ctx,
                               const sid_sv *fextbar, double *thetabar)
{
    (void)ctx;
    const double *g = theta + m->p_ground;
    for (int c = 0; c < m->nsphere; c++) {
        const int b = m->sphere[c].body;
        const double *ps = theta + m->sphere[c].p;
        const sid_m3 *R = &ws->Rw[b];
        sid_m3 *Rb = &ws->Rwbar[b];
        const sid_v3 cen = sid_v3_load(ps + P_SPHERE_XYZ), ez = {0, 0, 1};
        const double r = ps[P_SPHERE_RADIUS], w = g[P_GROUND_WIDTH];
        const sphere_state st = sphere_force(m, theta, ws, c);
        const sid_v3 Fb = sid_m3_tmul_v3(R, st.F);
        /* fext = (cp x Fb, Fb) */
        const sid_v3 tb = fextbar[b].w;
        const sid_v3 Fbb = sid_v3_add(fextbar[b].l, sid_v3_cross(tb, st.cp));
        sid_v3 cpb = sid_v3_cross(Fb, tb);
        /* Fb = R^T F */
        const sid_v3 Fbar = sid_m3_mul_v3(R, Fbb);
        sid_m3_acc_outer(Rb, st.F, Fbb);
        /* F = (ft u_x, ft u_y, fn) with ft = -mu fn / nrm */
        const double mu = g[P_GROUND_FRICTION], s = g[P_GROUND_SMOOTHING], n = st.nrm;
        const double utf = st.u.x * Fbar.x + st.u.y * Fbar.y;   /* u_t . ftbar */
        double fnb = Fbar.z - mu * utf / n;
        sid_v3 ub = sid_v3_make(-mu * st.fn * (Fbar.x / n - st.u.x * utf / (n * n * n)),
                                -mu * st.fn * (Fbar.y / n - st.u.y * utf / (n * n * n)), 0);
        /* fn = S (k - D u_z) */
        const double Sb = fnb * (g[P_GROUND_STIFFNESS] - g[P_GROUND_DAMPING] * st.u.z);
        ub.z -= fnb * st.S * g[P_GROUND_DAMPING];
        const double db = Sb * st.sig;
        /* u = R vb, vb = nu + w x cp */
        const sid_v3 vbb = sid_m3_tmul_v3(R, ub);
        sid_m3_acc_outer(Rb, ub, st.vb);
        sid_v3_acc(&ws->vbar[b].l, vbb);
        sid_v3_acc(&ws->vbar[b].w, sid_v3_cross(st.cp, vbb));
        sid_v3_acc(&cpb, sid_v3_cross(vbb, ws->v[b].w));
        /* d = height + r - (p + R c).z */
        ws->pwbar[b].z -= db;
        sid_m3_acc_outer(Rb, sid_v3_make(0, 0, -db), cen);
        /* cp = c - r R^T ez */
        sid_m3_acc_outer(Rb, sid_v3_scale(-r, ez), cpb);
        if (!thetabar) continue;
        double *tg = thetabar + m->p_ground, *tsp = thetabar + m->sphere[c].p;
        const sid_v3 cb = sid_v3_add(cpb, sid_m3_tmul_v3(R, sid_v3_make(0, 0, -db)));
        tsp[P_SPHERE_XYZ + 0] += cb.x;
        tsp[P_SPHERE_XYZ + 1] += cb.y;
        tsp[P_SPHERE_XYZ + 2] += cb.z;
        tsp[P_SPHERE_RADIUS] += db - sid_v3_dot(sid_m3_tmul_v3(R, ez), cpb);
        tg[P_GROUND_HEIGHT] += db;
        tg[P_GROUND_STIFFNESS] += fnb * st.S;
        tg[P_GROUND_DAMPING] -= fnb * st.S * st.u.z;
        tg[P_GROUND_FRICTION] -= (st.u.x * Fbar.x + st.u.y * Fbar.y) * st.fn / n;
        tg[P_GROUND_SMOOTHING] += mu * st.fn * utf * s / (n * n * n);
        tg[P_GROUND_WIDTH] += Sb * (softplus(st.d / w) - st.d / w * st.sig);
    }
}

/* sphere_force differentiated forwards, line by line (R, p, nu the link's world rotation,
 * origin and body velocity; their tangents from sid_rnea_jvp_motion), at the sphere states of
 * the last contact_forces: sid_fd_jvp_prepare's, at the same kinematics and velocities. */
static void contact_forces_jvp(const sid_model *m, const double *theta, sid_workspace *ws, const void *ctx,
                               const double *thetadot, sid_sv *fextdot)
{
    (void)ctx;
    const double *g = theta + m->p_ground, *gd = thetadot + m->p_ground;
    for (int b = 0; b < m->nbody; b++) fextdot[b] = sid_sv_zero();
    for (int c = 0; c < m->nsphere; c++) {
        const int b = m->sphere[c].body;
        const double *ps = theta + m->sphere[c].p, *psd = thetadot + m->sphere[c].p;
        const sid_m3 *R = &ws->Rw[b], *Rd = &ws->Rwbar[b];
        const sid_sv nud = ws->vbar[b];
        const sid_v3 cen = sid_v3_load(ps + P_SPHERE_XYZ), cend = sid_v3_load(psd + P_SPHERE_XYZ), ez = {0, 0, 1};
        const double r = ps[P_SPHERE_RADIUS], rd = psd[P_SPHERE_RADIUS], w = g[P_GROUND_WIDTH], wd = gd[P_GROUND_WIDTH];
        const sphere_state st = ws->sphere[c];
        /* cp = c - r R^T ez;  d = height + r - (p + R c).z */
        const sid_v3 cpd = sid_v3_sub(cend, sid_v3_add(sid_v3_scale(rd, sid_m3_tmul_v3(R, ez)),
                                                       sid_v3_scale(r, sid_m3_tmul_v3(Rd, ez))));
        const sid_v3 xd = sid_v3_add(ws->pwbar[b], sid_v3_add(sid_m3_mul_v3(Rd, cen), sid_m3_mul_v3(R, cend)));
        const double dd = gd[P_GROUND_HEIGHT] + rd - xd.z;
        /* S = w softplus(d / w) */
        const double Sd = st.sig * dd + wd * (st.S / w - st.d / w * st.sig);
        /* vb = nu + w x cp, u = R vb */
        const sid_v3 vbd = sid_v3_add(nud.l, sid_v3_add(sid_v3_cross(nud.w, st.cp), sid_v3_cross(ws->v[b].w, cpd)));
        const sid_v3 ud = sid_v3_add(sid_m3_mul_v3(Rd, st.vb), sid_m3_mul_v3(R, vbd));
        /* fn = S (k - D u_z);  ft = -mu fn / nrm */
        const double k = g[P_GROUND_STIFFNESS], D = g[P_GROUND_DAMPING], mu = g[P_GROUND_FRICTION], sm = g[P_GROUND_SMOOTHING], n = st.nrm;
        const double fnd = Sd * (k - D * st.u.z) + st.S * (gd[P_GROUND_STIFFNESS] - gd[P_GROUND_DAMPING] * st.u.z - D * ud.z);
        const double nd = (st.u.x * ud.x + st.u.y * ud.y + sm * gd[P_GROUND_SMOOTHING]) / n;
        const double ft = -mu * st.fn / n, ftd = -(gd[P_GROUND_FRICTION] * st.fn + mu * fnd) / n + mu * st.fn * nd / (n * n);
        const sid_v3 Fd = sid_v3_make(ftd * st.u.x + ft * ud.x, ftd * st.u.y + ft * ud.y, fnd);
        /* Fb = R^T F;  fext += (cp x Fb, Fb) */
        const sid_v3 Fb = sid_m3_tmul_v3(R, st.F), Fbd = sid_v3_add(sid_m3_tmul_v3(Rd, st.F), sid_m3_tmul_v3(R, Fd));
        sid_sv_acc(&fextdot[b], sid_sv_make(sid_v3_add(sid_v3_cross(cpd, Fb), sid_v3_cross(st.cp, Fbd)), Fbd));
    }
}

const sid_fext_source sid_contact_compliant = {contact_forces, contact_forces_vjp, NULL, contact_forces_jvp};

const sid_fext_source *sid_contact_source(const sid_model *m)
{
    return m->nsphere && m->contact == SID_CONTACT_COMPLIANT ? &sid_contact_compliant : NULL;
}

int sid_contact_normal_forces(const sid_model *m, const double *theta, sid_workspace *ws, const double *q,
                              const double *v, double *fn)
{
    if (!sid_contact_source(m)) return 0;
    if (!fn) return m->nsphere;
    /* the kinematics and body velocities a step's dynamics would see at (q, v) */
    sid_workspace_bind(m, theta, ws);
    sid_kinematics(m, theta, ws, q);
    sid_rnea_motion(m, theta, ws, v, NULL);
    for (int c = 0; c < m->nsphere; c++) fn[c] = sphere_force(m, theta, ws, c).fn;
    return m->nsphere;
}
