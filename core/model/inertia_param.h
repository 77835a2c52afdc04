/* inertia_param.h — a smooth bijection from R^6 onto the rigid bodies' inertia tensors about
 * the COM (positive definite, triangle inequality), for fits that free a link's inertia.
 *
 * The second moment about the COM, Sigma = 1/2 tr(I) 1 - I (= integral of r r^T dm), is
 * positive definite exactly when I is a rigid body's inertia (I's principal moments are
 * s - sigma_i, s = sum sigma_j, so a + b - c = 2 sigma_c > 0). It is written
 *     Sigma = M M^T,  M = L0 Lx,  Lx = [[e^x0, 0, 0], [x3, e^x1, 0], [x4, x5, e^x2]]
 * with L0 the Cholesky factor of the nominal Sigma0: M is lower triangular with a positive
 * diagonal, every x gives a positive definite Sigma and every such Sigma has exactly one x;
 * x = 0 is the nominal tensor and x is dimensionless (log of the diagonal's relative change,
 * off-diagonal entries relative to L0). Since theta holds the inertia about the COM, mass
 * (log scale) and COM (affine) move independently of it: the pseudo-inertia
 * [[Sigma + m c c^T, m c], [m c^T, m]] is positive definite exactly when m > 0 and Sigma is
 * (its Schur complement), so this is the log-Cholesky of the pseudo-inertia (Rucker &
 * Wensing 2022) reparameterised block by block, and it works for any subset of the ten.
 *
 * I (6) is theta's order: ixx, iyy, izz, ixy, ixz, iyz (tensor entries, not negated);
 * L0 (6): its entries 00, 11, 22, 10, 20, 21; x (6): as Lx's above. */
#ifndef SID_INERTIA_PARAM_H
#define SID_INERTIA_PARAM_H

/* The box the fit keeps x in: every x is a rigid body in exact arithmetic, but in floating
 * point a tensor whose moments differ by ~1e16 loses its smallest (an optimizer's first
 * trial steps can be that wild). Within the box, L's diagonal moves at most 1e3-fold and its
 * off-diagonal by 1e3 of L0's scale: moments stay within ~1e6 of the nominal's, far beyond
 * any fit's reach, and the tensor's condition within ~1e12 cond(Sigma0), where rounding
 * cannot break positive definiteness. */
#define SID_INERTIA_XMAX_DIAG 6.907755278982137   /* ln 1e3 */
#define SID_INERTIA_XMAX_OFF 1e3

/* L0 from the nominal I0; -1 if Sigma0 is not positive definite (I0 on or past the edge). */
int sid_inertia_factor(double L0[6], const double I0[6]);
/* I at x and, with G, its Jacobian G[6 * i + j] = d I_i / d x_j. */
void sid_inertia_from_x(double I[6], double *G, const double L0[6], const double x[6]);
/* The x of I (the inverse map); -1 if I is not a rigid body's inertia. */
int sid_inertia_to_x(double x[6], const double L0[6], const double I[6]);

#endif
