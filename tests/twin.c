/* twin.c — see twin.h. */
#include "twin.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dynamics.h"
#include "kinematics.h"
#include "sid_internal.h"

typedef struct {
    const sid_model *m;
    mjModel *mm;
    mjData *md;
    int nv, nq;
    int *vmap, *qmap;       /* our v / q index -> MuJoCo's */
    int *jbody;             /* our dof joint k -> its body */
    int *mjjnt;             /* our dof joint k -> MuJoCo joint */
    sid_m3 *Rw;
    sid_v3 *pw;
} pair;

/* World poses of our bodies from the transforms of sid_kinematics. */
static void world_poses(pair *p, const sid_workspace *ws)
{
    const sid_model *m = p->m;
    p->Rw[0] = sid_m3_identity();
    p->pw[0] = sid_v3_make(0, 0, 0);
    for (int b = 1; b < m->nbody; b++) {
        const int pa = m->body[b].parent;
        const sid_m3 Et = sid_m3_transpose(&ws->X[b].E);
        p->Rw[b] = sid_m3_mul(&p->Rw[pa], &Et);
        p->pw[b] = sid_v3_add(p->pw[pa], sid_m3_mul_v3(&p->Rw[pa], ws->X[b].r));
    }
}

static double absmax(double a, double b)
{
    return !(fabs(b) <= a) ? fabs(b) : a;   /* NaN wins */
}

static unsigned long long twin_rng = 0x9e3779b97f4a7c15ull;
static double uni(double lo, double hi)
{
    twin_rng ^= twin_rng << 13;
    twin_rng ^= twin_rng >> 7;
    twin_rng ^= twin_rng << 17;
    return lo + (hi - lo) * (double)(twin_rng >> 11) / 9007199254740992.0;
}

/* A random state of our model: one-dof joints within +-1 rad (+-0.2 m), free joints anywhere
 * near the origin with a random orientation. */
static void random_state(const pair *p, double *q, double *v)
{
    const sid_model *m = p->m;
    for (int k = 0; k < m->ndofj; k++) {
        const sid_body *bd = &m->body[p->jbody[k]];
        if (bd->type == SID_JOINT_FREE) {
            double *x = q + bd->qadr, n = 0;
            for (int i = 0; i < 3; i++) x[i] = uni(-0.5, 0.5);
            for (int i = 3; i < 7; i++) x[i] = uni(-1, 1), n += x[i] * x[i];
            for (int i = 3; i < 7; i++) x[i] /= sqrt(n);
            for (int i = 0; i < 6; i++) v[bd->vadr + i] = uni(-1, 1);
        } else {
            double s = bd->type == SID_JOINT_PRISMATIC ? 0.2 : 1.0;
            q[bd->qadr] = s * uni(-1, 1);
            v[bd->vadr] = s * uni(-1, 1);
        }
    }
}

static void mj_put(pair *p, const double *q, const double *v)
{
    for (int i = 0; i < p->nq; i++) p->md->qpos[p->qmap[i]] = q[i];
    for (int i = 0; i < p->nv; i++) p->md->qvel[p->vmap[i]] = v[i];
    mj_forward(p->mm, p->md);
}

/* Subtree mass and COM (world) of body b on our side. */
static double our_subtree(const pair *p, const double *theta, int b, sid_v3 *com)
{
    const sid_model *m = p->m;
    double mass = 0;
    sid_v3 mc = sid_v3_make(0, 0, 0);
    for (int d = 0; d < m->nbody; d++) {
        int a = d;
        while (a > b) a = m->body[a].parent;
        if (a != b || m->body[d].p_inertial < 0) continue;
        const double *in = theta + m->body[d].p_inertial;
        sid_v3 c = sid_v3_add(p->pw[d], sid_m3_mul_v3(&p->Rw[d], sid_v3_load(in + P_COM)));
        mass += in[P_MASS];
        mc = sid_v3_add(mc, sid_v3_scale(in[P_MASS], c));
    }
    *com = mass > 0 ? sid_v3_scale(1 / mass, mc) : p->pw[b];
    return mass;
}

/* MuJoCo's subtree mass of body b from body_mass (body_subtreemass is compiled once: a test
 * that changes body_mass would not see it). */
static double mj_subtree_mass(const mjModel *mm, int b)
{
    double mass = 0;
    for (int d = 0; d < mm->nbody; d++) {
        int a = d;
        while (a > b) a = mm->body_parentid[a];
        if (a == b) mass += mm->body_mass[d];
    }
    return mass;
}

/* Frames, subtree masses and COMs, bodies by name, at the state in p->md and our ws. */
static void compare_frames(pair *p, const double *theta, sid_workspace *ws, const double *q, twin_figures *f)
{
    const sid_model *m = p->m;
    const mjModel *mm = p->mm;
    const mjData *md = p->md;
    sid_kinematics(m, theta, ws, q);
    world_poses(p, ws);
    for (int k = 0; k < m->ndofj; k++) {
        const int b = p->jbody[k], j = p->mjjnt[k];
        const sid_body *bd = &m->body[b];
        sid_v3 anchor = p->pw[b];
        if (bd->type != SID_JOINT_FREE) {
            sid_v3 ax = sid_m3_mul_v3(&p->Rw[b], sid_v3_load(bd->axis));
            for (int i = 0; i < 3; i++) f->frame = absmax(f->frame, (&ax.x)[i] - md->xaxis[3 * j + i]);
            /* MuJoCo's anchor of a slide joint is where the body was before it slid */
            if (bd->type == SID_JOINT_PRISMATIC) anchor = sid_v3_sub(anchor, sid_v3_scale(q[bd->qadr], ax));
        }
        for (int i = 0; i < 3; i++) f->frame = absmax(f->frame, (&anchor.x)[i] - md->xanchor[3 * j + i]);
        sid_v3 com;
        const double mass = our_subtree(p, theta, b, &com);
        const int mb = mm->jnt_bodyid[j];
        const double mjmass = mj_subtree_mass(mm, mb);
        f->mass = absmax(f->mass, (mass - mjmass) / fmax(mjmass, 1e-300));
        for (int i = 0; i < 3; i++) f->com = absmax(f->com, (&com.x)[i] - md->subtree_com[3 * mb + i]);
    }
    sid_v3 com;
    const double total = our_subtree(p, theta, 0, &com);
    const double mjtotal = mj_subtree_mass(mm, 0);
    f->mass = absmax(f->mass, (total - mjtotal) / fmax(mjtotal, 1e-300));
    for (int i = 0; i < 3; i++) f->com = absmax(f->com, (&com.x)[i] - md->subtree_com[i]);

    f->nbody = 0;
    for (int i = 0; i < m->nparam; i++) {
        const sid_param_info *pi = &m->param[i];
        if (pi->kind != SID_P_MASS) continue;
        char name[SID_MAX_NAME + 8];
        snprintf(name, sizeof name, "%s", pi->name + strlen("links."));
        name[strlen(name) - strlen(".mass")] = 0;
        const int mb = mj_name2id(mm, mjOBJ_BODY, name);
        int b = 0;
        while (b < m->nbody && m->body[b].p_inertial != i) b++;
        if (mb < 0 || b == m->nbody) continue;
        f->nbody++;
        const double *in = theta + m->body[b].p_inertial, *J = in + P_INERTIA;
        f->inertia = absmax(f->inertia, in[P_MASS] - mm->body_mass[mb]);
        const sid_m3 Ic = {{{J[0], J[3], J[4]}, {J[3], J[1], J[5]}, {J[4], J[5], J[2]}}};
        const sid_m3 RI = sid_m3_mul(&p->Rw[b], &Ic), RT = sid_m3_transpose(&p->Rw[b]);
        const sid_m3 Iw = sid_m3_mul(&RI, &RT);
        const double *R = md->ximat + 9 * mb, *d = mm->body_inertia + 3 * mb;
        sid_v3 c = sid_v3_add(p->pw[b], sid_m3_mul_v3(&p->Rw[b], sid_v3_load(in + P_COM)));
        for (int r = 0; r < 3; r++) {
            f->com = absmax(f->com, (&c.x)[r] - md->xipos[3 * mb + r]);
            for (int s = 0; s < 3; s++) {
                double w = 0;
                for (int t = 0; t < 3; t++) w += R[3 * r + t] * d[t] * R[3 * s + t];
                f->inertia = absmax(f->inertia, Iw.m[r][s] - w);
            }
        }
    }
}

/* Our joint names against MuJoCo's; every moving MuJoCo joint must be one of ours. */
static int match(pair *p, char *msg, size_t len)
{
    const sid_model *m = p->m;
    const mjModel *mm = p->mm;
    int nmatched = 0;
    for (int k = 0; k < m->ndofj; k++) {
        const char *name = sid_model_dof_joint_name(m, k);
        const int j = mj_name2id(mm, mjOBJ_JOINT, name);
        const int b = m->dof_body[k];
        const sid_body *bd = &m->body[b];
        if (j < 0) {
            snprintf(msg, len, "joint '%s' is not in MuJoCo's model", name);
            return -1;
        }
        const int want = bd->type == SID_JOINT_FREE ? mjJNT_FREE : bd->type == SID_JOINT_PRISMATIC ? mjJNT_SLIDE : mjJNT_HINGE;
        if (mm->jnt_type[j] != want) {
            snprintf(msg, len, "joint '%s': MuJoCo's type %d, ours %d", name, mm->jnt_type[j], (int)bd->type);
            return -1;
        }
        p->jbody[k] = b;
        p->mjjnt[k] = j;
        const int nqj = bd->type == SID_JOINT_FREE ? 7 : 1, nvj = bd->type == SID_JOINT_FREE ? 6 : 1;
        for (int i = 0; i < nqj; i++) p->qmap[bd->qadr + i] = mm->jnt_qposadr[j] + i;
        for (int i = 0; i < nvj; i++) p->vmap[bd->vadr + i] = mm->jnt_dofadr[j] + i;
        nmatched++;
    }
    if (mm->nq != m->nq || mm->nv != m->nv) {
        snprintf(msg, len, "MuJoCo's model has nq %d nv %d, ours nq %d nv %d (a joint only one side has)", mm->nq,
                 mm->nv, m->nq, m->nv);
        return -1;
    }
    return nmatched;
}

int twin_compare(const sid_model *m, const double *theta, mjModel *mm, double seconds, int nstate,
                 twin_figures *f, char *msg, size_t len)
{
    memset(f, 0, sizeof *f);
    pair p = { m, mm, NULL, m->nv, m->nq, NULL, NULL, NULL, NULL, NULL, NULL };
    const size_t nq = (size_t)m->nq, nv = (size_t)m->nv;
    p.vmap = calloc(nv, sizeof(int));
    p.qmap = calloc(nq, sizeof(int));
    p.jbody = calloc((size_t)m->ndofj + 1, sizeof(int));
    p.mjjnt = calloc((size_t)m->ndofj + 1, sizeof(int));
    p.Rw = calloc((size_t)m->nbody, sizeof(sid_m3));
    p.pw = calloc((size_t)m->nbody, sizeof(sid_v3));
    double *q = calloc(nq, sizeof(double)), *v = calloc(nv + 1, sizeof(double)), *q1 = calloc(nq, sizeof(double));
    double *v1 = calloc(nv + 1, sizeof(double)), *M = calloc(nv * nv + 1, sizeof(double));
    double *Mj = calloc(nv * nv + 1, sizeof(double)), *tau = calloc(nv + 1, sizeof(double));
    double *u = calloc(nv + 1, sizeof(double)), *th = malloc(sizeof(double) * (size_t)m->nparam);
    sid_workspace *ws = sid_workspace_create(m);
    int rc = -1;
    if (!p.vmap || !p.qmap || !p.jbody || !p.mjjnt || !p.Rw || !p.pw || !q || !v || !q1 || !v1 || !M || !Mj ||
        !tau || !u || !th || !ws) {
        snprintf(msg, len, "out of memory");
        goto done;
    }
    if ((f->ndof = match(&p, msg, len)) < 0) goto done;
    mm->opt.disableflags |= mjDSBL_CONSTRAINT | mjDSBL_ACTUATION;
    for (int j = 0; j < mm->njnt; j++) mm->jnt_stiffness[j] = 0;
    p.md = mj_makeData(mm);

    /* qpos0: our q = MuJoCo's qpos0 (both are the file's reference pose) */
    for (size_t i = 0; i < nq; i++) q[i] = mm->qpos0[p.qmap[i]];
    mj_put(&p, q, v);
    compare_frames(&p, theta, ws, q, f);

    for (int s = 0; s < nstate; s++) {
        random_state(&p, q, v);
        mj_put(&p, q, v);
        compare_frames(&p, theta, ws, q, f);
        sid_mass_matrix(m, theta, ws, q, M);
        for (int k = 0; k < m->ndofj; k++) {
            const sid_body *bd = &m->body[p.jbody[k]];
            if (bd->p_dof >= 0) M[(size_t)bd->vadr * nv + (size_t)bd->vadr] += theta[bd->p_dof + P_ARMATURE];
        }
        mj_fullM(mm, Mj, p.md->qM);
        for (size_t r = 0; r < nv; r++)
            for (size_t c = 0; c < nv; c++) f->M = absmax(f->M, M[r * nv + c] - Mj[(size_t)p.vmap[r] * nv + (size_t)p.vmap[c]]);
        sid_kinematics(m, theta, ws, q);
        sid_rnea(m, theta, ws, v, NULL, NULL, tau);
        for (size_t r = 0; r < nv; r++) f->bias = absmax(f->bias, tau[r] - p.md->qfrc_bias[p.vmap[r]]);
    }

    /* replay: the tree only (see the header) */
    memcpy(th, theta, sizeof(double) * (size_t)m->nparam);
    for (int i = 0; i < m->nparam; i++) {
        const sid_param_info *pi = &m->param[i];
        const char *n = pi->name;
        size_t ln = strlen(n);
        if (pi->kind == SID_P_COULOMB || pi->kind == SID_P_STRIBECK_TORQUE || pi->kind == SID_P_KP ||
            pi->kind == SID_P_KD ||   /* a servo is an actuator: off, like MuJoCo's */
            (ln > 16 && (!strcmp(n + ln - 16, ".limit.stiffness") || !strcmp(n + ln - 14, ".limit.damping"))))
            th[i] = 0;
        if (pi->kind == SID_P_GROUND_HEIGHT) th[i] = -1e6;
    }
    for (int j = 0; j < mm->njnt; j++) mm->dof_frictionloss[mm->jnt_dofadr[j]] = 0;
    int *bias_at = calloc(nv + 1, sizeof(int));
    if (!bias_at) goto done;
    for (size_t i = 0; i < nv; i++) bias_at[i] = -1;
    for (int k = 0; k < m->ndofj; k++) {
        const sid_body *bd = &m->body[p.jbody[k]];
        if (bd->p_dof >= 0) bias_at[bd->vadr] = bd->p_dof + P_TORQUE_BIAS;
    }
    const double h = 1e-3;
    const int nstep = (int)lround(seconds / h);
    random_state(&p, q, v);
    mm->opt.timestep = h;
    mm->opt.integrator = mjINT_EULER;
    mj_resetData(mm, p.md);
    mj_put(&p, q, v);
    for (int it = 0; it < nstep; it++) {
        const double t = it * h;
        for (size_t i = 0; i < nv; i++) {
            double F = bias_at[i] >= 0 ? 0.5 * sin(2 * 3.14159265358979323846 * (0.6 + 0.31 * (double)i) * t + (double)i) : 0;
            if (bias_at[i] >= 0) th[bias_at[i]] = F;
            p.md->qfrc_applied[p.vmap[i]] = F;
        }
        sid_error err = { 0 };
        if (sid_step(m, th, ws, SID_EULER, h, q, v, u, q1, v1, &err) != SID_OK) {
            snprintf(msg, len, "our step %d failed: %s", it, err.msg);
            free(bias_at);
            goto done;
        }
        mj_step(mm, p.md);
        for (size_t i = 0; i < nq; i++) f->replay = absmax(f->replay, q1[i] - p.md->qpos[p.qmap[i]]);
        memcpy(q, q1, nq * sizeof(double));
        memcpy(v, v1, nv * sizeof(double));
    }
    free(bias_at);
    rc = 0;
done:
    if (p.md) mj_deleteData(p.md);
    sid_workspace_free(ws);
    free(p.vmap), free(p.qmap), free(p.jbody), free(p.mjjnt), free(p.Rw), free(p.pw);
    free(q), free(v), free(q1), free(v1), free(M), free(Mj), free(tau), free(u), free(th);
    return rc;
}

void twin_print(const char *name, const twin_figures *f)
{
    fprintf(stderr,
            "twin: %-28s dofs %2d bodies %2d  mass %.1e  com %.1e  inertia %.1e  frame %.1e  M %.1e  bias %.1e  "
            "replay %.1e\n",
            name, f->ndof, f->nbody, f->mass, f->com, f->inertia, f->frame, f->M, f->bias, f->replay);
}
