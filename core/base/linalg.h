/* linalg.h — small dense linear algebra shared by the core's modules: LU with partial pivoting
 * (the contact problem's Newton steps and their transposed solves), the cyclic Jacobi
 * eigen-decomposition of a symmetric matrix (covariance), and the tree-sparse L^T L
 * factorisation of a joint-space matrix whose entries lie only where a dof meets its
 * ancestors (the mass matrix), and sorting a vector in place. Matrices are row-major n x n;
 * nothing allocates. */
#ifndef SID_LINALG_H
#define SID_LINALG_H

#include <stddef.h>

/* In place, A = P^T L U (unit lower L below the diagonal, U on and above); -1 if singular. */
int sid_lu_factor(int n, double *A, int *piv);
/* Solve A x = b (trans = 0) or A^T x = b (trans = 1) in place with the factor of sid_lu_factor. */
void sid_lu_solve(int n, const double *LU, const int *piv, int trans, double *x);
/* Eigen-decomposition of the symmetric A (destroyed): eigenvalues in ev, eigenvectors in the
 * columns of V. */
void sid_jacobi_eigen(double *A, int n, double *ev, double *V);
/* The same by LAPACK's divide and conquer (dsyevd): O(n^3) once, for the large normal matrices
 * of the covariance; eigenvalues ascending. 0, or -1 if memory ran out or LAPACK failed. */
int sid_sym_eigen(double *A, int n, double *ev, double *V);
/* In place, the tree-sparse factor A = L^T L, parent[k] the nearest ancestor dof of dof k (-1 at
 * the root); -1 if A is not positive definite. */
int sid_tree_factor(int n, const int *parent, double *A);
/* Solve L^T L x = b in place (x overwrites b) with a factor from sid_tree_factor. */
void sid_tree_solve(int n, const int *parent, const double *L, double *b);
/* x := L^-T x, the first half of sid_tree_solve, with dinv the inverse of L's diagonal. */
void sid_tree_solve_lt(int n, const int *parent, const double *L, const double *dinv, double *x);

/* Sort v[0..n-1] ascending in place (NaN-free input). */
void sid_sort_doubles(double *v, size_t n);

#endif
