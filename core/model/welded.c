/* welded.c — a link on a fixed joint is welded to its parent and moves as one rigid body with
 * it, as MuJoCo's fusestatic and Pinocchio merge them. A welded link whose own inertia is no
 * rigid body's (a placeholder: a CAD export's sensor frame, ANYmal C's hatch) is accepted when
 * the body it is welded into, merged with it, is physical; every other link's inertia is checked
 * on its own, as before, so a fit never moves a real link's inertia out of what a body can have. */
#include "model.h"

#include <math.h>
#include <stdio.h>

#include "spatial.h"

/* Principal moments of a symmetric 3x3 matrix (closed form, Smith 1961), ascending. */
static void sym3_eigenvalues(const double A[3][3], double ev[3])
{
    const double p1 = A[0][1] * A[0][1] + A[0][2] * A[0][2] + A[1][2] * A[1][2];
    const double q = (A[0][0] + A[1][1] + A[2][2]) / 3;
    const double p2 = (A[0][0] - q) * (A[0][0] - q) + (A[1][1] - q) * (A[1][1] - q) + (A[2][2] - q) * (A[2][2] - q) + 2 * p1;
    const double p = sqrt(p2 / 6);
    if (p < 1e-300) { ev[0] = ev[1] = ev[2] = q; return; }
    double B[3][3];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) B[i][j] = (A[i][j] - (i == j ? q : 0)) / p;
    double r = (B[0][0] * (B[1][1] * B[2][2] - B[1][2] * B[2][1]) - B[0][1] * (B[1][0] * B[2][2] - B[1][2] * B[2][0]) +
                B[0][2] * (B[1][0] * B[2][1] - B[1][1] * B[2][0])) / 2;
    r = r < -1 ? -1 : r > 1 ? 1 : r;
    const double phi = acos(r) / 3;
    ev[2] = q + 2 * p * cos(phi);
    ev[0] = q + 2 * p * cos(phi + 2.0943951023931954923);
    ev[1] = 3 * q - ev[0] - ev[2];
}

/* The check of a tensor A (about its centre of mass): NULL, or what is wrong, with its principal
 * moments in ev. */
static const char *inertia_fault(const double A[3][3], double ev[3])
{
    sym3_eigenvalues(A, ev);
    if (!(ev[0] > 0)) return "positive definite";
    if (ev[0] + ev[1] < ev[2] * (1 - 1e-9)) return "triangle";
    return NULL;
}

static void tensor(const double *I, double A[3][3])
{
    const double T[3][3] = {{I[0], I[3], I[4]}, {I[3], I[1], I[5]}, {I[4], I[5], I[2]}};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) A[i][j] = T[i][j];
}

static sid_status fault_error(const char *fault, const char *path, const double ev[3], sid_error *err)
{
    if (fault[0] == 'p')
        return sid_error_set(err, SID_ERR_INPUT,
                             "%s: expected a positive definite inertia tensor, got principal moments %g, %g, %g", path,
                             ev[0], ev[1], ev[2]);
    return sid_error_set(err, SID_ERR_INPUT, "%s: principal moments %g, %g, %g break the triangle inequality (a + b >= c)",
                         path, ev[0], ev[1], ev[2]);
}

void sid_model_mark_placeholders(sid_model *m, const double *theta)
{
    for (int b = 1; b < m->nbody; b++) {
        sid_body *bd = &m->body[b];
        double A[3][3], ev[3];
        if (bd->type != SID_JOINT_FIXED || bd->p_inertial < 0) continue;
        tensor(theta + bd->p_inertial + P_INERTIA, A);
        bd->placeholder = inertia_fault((const double (*)[3])A, ev) != NULL;
    }
}

/* A moving body merged with the placeholders welded to it (through welded links): mass, first
 * moment and rotational inertia about the body's origin in its frame. */
typedef struct {
    double mass;
    sid_v3 h;
    sid_m3 I;
} merged;

static void merge(merged *G, const double *x, const sid_m3 *R, sid_v3 p)
{
    const double mass = x[P_MASS], *I = x + P_INERTIA;
    const sid_m3 Ic = {{{I[0], I[3], I[4]}, {I[3], I[1], I[5]}, {I[4], I[5], I[2]}}};
    const sid_m3 RI = sid_m3_mul(R, &Ic), Rt = sid_m3_transpose(R), Iw = sid_m3_mul(&RI, &Rt);
    const sid_v3 c = sid_v3_add(p, sid_m3_mul_v3(R, sid_v3_load(x + P_COM)));
    const double cv[3] = {c.x, c.y, c.z};
    G->mass += mass;
    sid_v3_acc(&G->h, sid_v3_scale(mass, c));
    for (int i = 0; i < 3; i++)   /* about the origin: Ic + m (|c|^2 1 - c c^T) */
        for (int j = 0; j < 3; j++) G->I.m[i][j] += Iw.m[i][j] + mass * ((i == j ? sid_v3_dot(c, c) : 0) - cv[i] * cv[j]);
}

/* Body g merged with every link welded to it (placeholders and real links, as the body moves),
 * about the merged centre of mass, into A; how many placeholders it holds in *nph and the first
 * in *first. */
static void merged_tensor(const sid_model *m, const double *theta, int g, double A[3][3], int *nph, int *first)
{
    merged G = {0, {0, 0, 0}, sid_m3_zero()};
    const sid_m3 I3 = sid_m3_identity();
    if (m->body[g].p_inertial >= 0) merge(&G, theta + m->body[g].p_inertial, &I3, sid_v3_make(0, 0, 0));
    *nph = 0, *first = -1;
    /* the links below g through fixed joints: each one's frame in g's, down the chain */
    for (int b = g + 1; b < m->nbody; b++) {
        const sid_body *bd = &m->body[b];
        if (bd->type != SID_JOINT_FIXED || bd->p_inertial < 0) continue;
        sid_m3 R = sid_m3_identity();
        sid_v3 p = sid_v3_make(0, 0, 0);
        int c = b;
        for (; c != g && m->body[c].type == SID_JOINT_FIXED && c > 0; c = m->body[c].parent) {
            const sid_body *cb = &m->body[c];   /* child frame in its parent: x_p = Ro x_c + xyz */
            const sid_m3 Ro = sid_rpy_matrix(theta + cb->p_origin + P_RPY, NULL), RR = sid_m3_mul(&Ro, &R);
            p = sid_v3_add(sid_m3_mul_v3(&Ro, p), sid_v3_load(theta + cb->p_origin + P_XYZ));
            R = RR;
        }
        if (c != g) continue;   /* welded to another body */
        merge(&G, theta + bd->p_inertial, &R, p);
        if (bd->placeholder && (*nph)++ == 0) *first = b;
    }
    const sid_v3 C = sid_v3_scale(1 / G.mass, G.h);
    const double cv[3] = {C.x, C.y, C.z};
    for (int i = 0; i < 3; i++)   /* about the merged centre of mass */
        for (int j = 0; j < 3; j++) A[i][j] = G.I.m[i][j] - G.mass * ((i == j ? sid_v3_dot(C, C) : 0) - cv[i] * cv[j]);
}

sid_status sid_model_check_inertia(const sid_model *m, const double *theta, sid_error *err)
{
    char path[200];
    double A[3][3], ev[3];
    for (int b = 0; b < m->nbody; b++) {   /* a link of its own */
        const sid_body *bd = &m->body[b];
        if (bd->p_inertial < 0 || bd->placeholder) continue;
        tensor(theta + bd->p_inertial + P_INERTIA, A);
        const char *fault = inertia_fault((const double (*)[3])A, ev);
        snprintf(path, sizeof path, "links[%d].inertia", m->param[bd->p_inertial].owner);
        if (fault) return fault_error(fault, path, ev, err);
    }
    for (int g = 0; g < m->nbody; g++) {   /* a moving body with a placeholder welded to it, merged */
        const sid_body *gd = &m->body[g];
        if (g == 0 || gd->type == SID_JOINT_FIXED) continue;   /* the root never moves; a welded link merges up */
        int nph, first;
        merged_tensor(m, theta, g, A, &nph, &first);
        if (!nph) continue;
        const char *fault = inertia_fault((const double (*)[3])A, ev);
        snprintf(path, sizeof path, "links[%d] merged with the placeholder inertia%s welded to it (links[%d]%s)",
                 m->body[g].link, nph == 1 ? "" : "s", m->body[first].link, nph > 1 ? ", ..." : "");
        if (fault) return fault_error(fault, path, ev, err);
    }
    return SID_OK;
}
