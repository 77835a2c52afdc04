/* spatial.h — 3-vectors, rotations and 6-D spatial algebra (Featherstone).
 *
 * Frames and order, fixed here once for the whole library:
 *  - A spatial motion (velocity, acceleration) or force is a pair [angular; linear] of
 *    3-vectors, expressed in one body frame, about that frame's origin.
 *  - A transform X from frame A to frame B is (E, r): E rotates A-coordinates into
 *    B-coordinates and r is B's origin in A-coordinates. Motion: X m = (E w, E (l - r x w));
 *    force: X* f = (E (n - r x f), E f). The transposes map back from B to A.
 *  - Rotations from URDF rpy: R = Rz(yaw) Ry(pitch) Rx(roll) maps child to parent, E = R^T.
 * Every function here is a value-typed static inline, so the compiler can keep it in
 * registers; the reverse-mode twins (_vjp) accumulate adjoints into their pointer arguments.
 */
#ifndef SID_SPATIAL_H
#define SID_SPATIAL_H

#include <math.h>

typedef struct { double x, y, z; } sid_v3;
typedef struct { double m[3][3]; } sid_m3;       /* row-major */
typedef struct { sid_v3 w, l; } sid_sv;          /* spatial vector [angular; linear] */
typedef struct { sid_m3 E; sid_v3 r; } sid_xform;

static inline sid_v3 sid_v3_make(double x, double y, double z) { sid_v3 v = {x, y, z}; return v; }
static inline sid_v3 sid_v3_load(const double *p) { return sid_v3_make(p[0], p[1], p[2]); }
static inline sid_v3 sid_v3_add(sid_v3 a, sid_v3 b) { return sid_v3_make(a.x + b.x, a.y + b.y, a.z + b.z); }
static inline sid_v3 sid_v3_sub(sid_v3 a, sid_v3 b) { return sid_v3_make(a.x - b.x, a.y - b.y, a.z - b.z); }
static inline sid_v3 sid_v3_scale(double s, sid_v3 a) { return sid_v3_make(s * a.x, s * a.y, s * a.z); }
static inline sid_v3 sid_v3_neg(sid_v3 a) { return sid_v3_make(-a.x, -a.y, -a.z); }
static inline double sid_v3_dot(sid_v3 a, sid_v3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static inline double sid_v3_norm(sid_v3 a) { return sqrt(sid_v3_dot(a, a)); }
static inline sid_v3 sid_v3_cross(sid_v3 a, sid_v3 b)
{
    return sid_v3_make(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
static inline void sid_v3_acc(sid_v3 *acc, sid_v3 a) { acc->x += a.x; acc->y += a.y; acc->z += a.z; }

static inline sid_m3 sid_m3_identity(void)
{
    sid_m3 I = {{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};
    return I;
}
static inline sid_m3 sid_m3_zero(void)
{
    sid_m3 Z = {{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}};
    return Z;
}
static inline sid_v3 sid_m3_mul_v3(const sid_m3 *A, sid_v3 v)
{
    return sid_v3_make(A->m[0][0] * v.x + A->m[0][1] * v.y + A->m[0][2] * v.z,
                       A->m[1][0] * v.x + A->m[1][1] * v.y + A->m[1][2] * v.z,
                       A->m[2][0] * v.x + A->m[2][1] * v.y + A->m[2][2] * v.z);
}
static inline sid_v3 sid_m3_tmul_v3(const sid_m3 *A, sid_v3 v)   /* A^T v */
{
    return sid_v3_make(A->m[0][0] * v.x + A->m[1][0] * v.y + A->m[2][0] * v.z,
                       A->m[0][1] * v.x + A->m[1][1] * v.y + A->m[2][1] * v.z,
                       A->m[0][2] * v.x + A->m[1][2] * v.y + A->m[2][2] * v.z);
}
static inline sid_m3 sid_m3_mul(const sid_m3 *A, const sid_m3 *B)
{
    sid_m3 C;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            C.m[i][j] = A->m[i][0] * B->m[0][j] + A->m[i][1] * B->m[1][j] + A->m[i][2] * B->m[2][j];
    return C;
}
static inline sid_m3 sid_m3_transpose(const sid_m3 *A)
{
    sid_m3 T;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) T.m[i][j] = A->m[j][i];
    return T;
}
/* acc += a b^T: the adjoint of a matrix-vector product y = A b with y-adjoint a. */
static inline void sid_m3_acc_outer(sid_m3 *acc, sid_v3 a, sid_v3 b)
{
    const double av[3] = {a.x, a.y, a.z}, bv[3] = {b.x, b.y, b.z};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) acc->m[i][j] += av[i] * bv[j];
}
static inline double sid_m3_inner(const sid_m3 *A, const sid_m3 *B)   /* sum A_ij B_ij */
{
    double s = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) s += A->m[i][j] * B->m[i][j];
    return s;
}
/* Skew matrix [a]x, so that [a]x b = a x b. */
static inline sid_m3 sid_m3_skew(sid_v3 a)
{
    sid_m3 S = {{{0, -a.z, a.y}, {a.z, 0, -a.x}, {-a.y, a.x, 0}}};
    return S;
}

/* Rotation by angle q about unit axis a (Rodrigues): maps rotated to original coordinates. */
static inline sid_m3 sid_m3_axis_angle(sid_v3 a, double q)
{
    const double c = cos(q), s = sin(q), t = 1 - c;
    sid_m3 R = {{{t * a.x * a.x + c, t * a.x * a.y - s * a.z, t * a.x * a.z + s * a.y},
                 {t * a.x * a.y + s * a.z, t * a.y * a.y + c, t * a.y * a.z - s * a.x},
                 {t * a.x * a.z - s * a.y, t * a.y * a.z + s * a.x, t * a.z * a.z + c}}};
    return R;
}

/* ---- spatial vectors ----------------------------------------------------------------- */

static inline sid_sv sid_sv_make(sid_v3 w, sid_v3 l) { sid_sv s = {w, l}; return s; }
static inline sid_sv sid_sv_zero(void) { sid_sv s = {{0, 0, 0}, {0, 0, 0}}; return s; }
static inline sid_sv sid_sv_add(sid_sv a, sid_sv b) { return sid_sv_make(sid_v3_add(a.w, b.w), sid_v3_add(a.l, b.l)); }
static inline sid_sv sid_sv_scale(double s, sid_sv a) { return sid_sv_make(sid_v3_scale(s, a.w), sid_v3_scale(s, a.l)); }
static inline double sid_sv_dot(sid_sv a, sid_sv b) { return sid_v3_dot(a.w, b.w) + sid_v3_dot(a.l, b.l); }
static inline void sid_sv_acc(sid_sv *acc, sid_sv a) { sid_v3_acc(&acc->w, a.w); sid_v3_acc(&acc->l, a.l); }

/* Motion cross product v x m = (w x mw, w x ml + l x mw). */
static inline sid_sv sid_sv_crossm(sid_sv v, sid_sv m)
{
    return sid_sv_make(sid_v3_cross(v.w, m.w),
                       sid_v3_add(sid_v3_cross(v.w, m.l), sid_v3_cross(v.l, m.w)));
}
/* Force cross product v x* f = (w x n + l x f, w x f). */
static inline sid_sv sid_sv_crossf(sid_sv v, sid_sv f)
{
    return sid_sv_make(sid_v3_add(sid_v3_cross(v.w, f.w), sid_v3_cross(v.l, f.l)),
                       sid_v3_cross(v.w, f.l));
}
/* Adjoint of y = v x m: given ybar, accumulate vbar and mbar. */
static inline void sid_sv_crossm_vjp(sid_sv v, sid_sv m, sid_sv ybar, sid_sv *vbar, sid_sv *mbar)
{
    /* yw = w x mw; yl = w x ml + l x mw;  d(a.(b x c)) = b.(c x a) db + c.(a x b) dc */
    sid_v3_acc(&vbar->w, sid_v3_add(sid_v3_cross(m.w, ybar.w), sid_v3_cross(m.l, ybar.l)));
    sid_v3_acc(&vbar->l, sid_v3_cross(m.w, ybar.l));
    sid_v3_acc(&mbar->w, sid_v3_add(sid_v3_cross(ybar.w, v.w), sid_v3_cross(ybar.l, v.l)));
    sid_v3_acc(&mbar->l, sid_v3_cross(ybar.l, v.w));
}
/* Adjoint of y = v x* f. */
static inline void sid_sv_crossf_vjp(sid_sv v, sid_sv f, sid_sv ybar, sid_sv *vbar, sid_sv *fbar)
{
    /* yw = w x n + l x f; yl = w x f */
    sid_v3_acc(&vbar->w, sid_v3_add(sid_v3_cross(f.w, ybar.w), sid_v3_cross(f.l, ybar.l)));
    sid_v3_acc(&vbar->l, sid_v3_cross(f.l, ybar.w));
    sid_v3_acc(&fbar->w, sid_v3_cross(ybar.w, v.w));
    sid_v3_acc(&fbar->l, sid_v3_add(sid_v3_cross(ybar.w, v.l), sid_v3_cross(ybar.l, v.w)));
}

/* ---- transforms ----------------------------------------------------------------------- */

/* X m = (E w, E (l - r x w)) */
static inline sid_sv sid_xform_motion(const sid_xform *X, sid_sv m)
{
    return sid_sv_make(sid_m3_mul_v3(&X->E, m.w),
                       sid_m3_mul_v3(&X->E, sid_v3_sub(m.l, sid_v3_cross(X->r, m.w))));
}
/* X^T f for a force f in B: (E^T n + r x E^T f, E^T f), the force in A. */
static inline sid_sv sid_xform_force_inv(const sid_xform *X, sid_sv f)
{
    const sid_v3 u = sid_m3_tmul_v3(&X->E, f.l);
    return sid_sv_make(sid_v3_add(sid_m3_tmul_v3(&X->E, f.w), sid_v3_cross(X->r, u)), u);
}
/* Adjoint of y = X m: accumulate mbar, Ebar, rbar. */
static inline void sid_xform_motion_vjp(const sid_xform *X, sid_sv m, sid_sv ybar, sid_sv *mbar,
                                        sid_m3 *Ebar, sid_v3 *rbar)
{
    const sid_v3 z = sid_m3_tmul_v3(&X->E, ybar.l);          /* E^T yl_bar */
    sid_v3_acc(&mbar->l, z);
    sid_v3_acc(&mbar->w, sid_v3_add(sid_m3_tmul_v3(&X->E, ybar.w), sid_v3_cross(X->r, z)));
    sid_v3_acc(rbar, sid_v3_cross(z, m.w));
    sid_m3_acc_outer(Ebar, ybar.w, m.w);
    sid_m3_acc_outer(Ebar, ybar.l, sid_v3_sub(m.l, sid_v3_cross(X->r, m.w)));
}
/* Adjoint of y = X^T f (force): accumulate fbar, Ebar, rbar. */
static inline void sid_xform_force_inv_vjp(const sid_xform *X, sid_sv f, sid_sv ybar, sid_sv *fbar,
                                           sid_m3 *Ebar, sid_v3 *rbar)
{
    const sid_v3 u = sid_m3_tmul_v3(&X->E, f.l);
    const sid_v3 ubar = sid_v3_add(sid_v3_cross(ybar.w, X->r), ybar.l);
    sid_v3_acc(&fbar->w, sid_m3_mul_v3(&X->E, ybar.w));
    sid_v3_acc(&fbar->l, sid_m3_mul_v3(&X->E, ubar));
    sid_v3_acc(rbar, sid_v3_cross(u, ybar.w));
    sid_m3_acc_outer(Ebar, f.w, ybar.w);
    sid_m3_acc_outer(Ebar, f.l, ubar);
}

/* ---- rigid-body inertia ------------------------------------------------------------------
 * Mass m, centre of mass c and rotational inertia Ic about c, in the body frame. Applied to
 * a motion v = (w, l): p = m (l + w x c), h = (Ic w + c x p, p). */
typedef struct { double m; sid_v3 c; sid_m3 Ic; } sid_inertia;

static inline sid_sv sid_inertia_mul(const sid_inertia *I, sid_sv v)
{
    const sid_v3 p = sid_v3_scale(I->m, sid_v3_add(v.l, sid_v3_cross(v.w, I->c)));
    return sid_sv_make(sid_v3_add(sid_m3_mul_v3(&I->Ic, v.w), sid_v3_cross(I->c, p)), p);
}
/* Adjoint of h = I v: accumulate vbar and the adjoint of the inertia (m, c, Ic). */
static inline void sid_inertia_mul_vjp(const sid_inertia *I, sid_sv v, sid_sv hbar, sid_sv *vbar,
                                       sid_inertia *Ibar)
{
    const sid_v3 vc = sid_v3_add(v.l, sid_v3_cross(v.w, I->c));
    const sid_v3 p = sid_v3_scale(I->m, vc);
    sid_m3_acc_outer(&Ibar->Ic, hbar.w, v.w);
    sid_v3_acc(&vbar->w, sid_m3_tmul_v3(&I->Ic, hbar.w));
    sid_v3_acc(&Ibar->c, sid_v3_cross(p, hbar.w));
    const sid_v3 pbar = sid_v3_add(hbar.l, sid_v3_cross(hbar.w, I->c));
    Ibar->m += sid_v3_dot(pbar, vc);
    sid_v3_acc(&vbar->l, sid_v3_scale(I->m, pbar));
    sid_v3_acc(&vbar->w, sid_v3_scale(I->m, sid_v3_cross(I->c, pbar)));
    sid_v3_acc(&Ibar->c, sid_v3_scale(I->m, sid_v3_cross(pbar, v.w)));
}

/* R = Rz(yaw) Ry(pitch) Rx(roll) (URDF fixed-axis rpy, child -> parent); dR[k] = dR/drpy[k]
 * when dR != NULL (rotation.c). The one rotation of an rpy triple: kinematics, the model's check
 * of a welded body and the importers use it. */
sid_m3 sid_rpy_matrix(const double *rpy, sid_m3 *dR);

#endif
