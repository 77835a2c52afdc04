/* linalg.c — small dense factorisations and solves (linalg.h). */
#include "linalg.h"
#include "sid.h"

#include <math.h>
#include <stdlib.h>

/* Doolittle elimination with row pivoting; a zero multiplier skips its row update. */
int sid_lu_factor(int n, double *A, int *piv)
{
    for (int k = 0; k < n; k++) {
        int p = k;
        for (int i = k + 1; i < n; i++)
            if (fabs(A[i * n + k]) > fabs(A[p * n + k])) p = i;
        piv[k] = p;
        if (!(fabs(A[p * n + k]) > 0)) return -1;
        if (p != k)
            for (int j = 0; j < n; j++) {
                const double t = A[k * n + j];
                A[k * n + j] = A[p * n + j], A[p * n + j] = t;
            }
        for (int i = k + 1; i < n; i++) {
            const double l = A[i * n + k] /= A[k * n + k];
            if (l != 0)
                for (int j = k + 1; j < n; j++) A[i * n + j] -= l * A[k * n + j];
        }
    }
    return 0;
}

void sid_lu_solve(int n, const double *LU, const int *piv, int trans, double *x)
{
    if (!trans) {
        for (int k = 0; k < n; k++) {
            const double t = x[k];
            x[k] = x[piv[k]], x[piv[k]] = t;
        }
        for (int i = 0; i < n; i++)
            for (int j = 0; j < i; j++) x[i] -= LU[i * n + j] * x[j];
        for (int i = n - 1; i >= 0; i--) {
            for (int j = i + 1; j < n; j++) x[i] -= LU[i * n + j] * x[j];
            x[i] /= LU[i * n + i];
        }
        return;
    }
    /* A = P^T L U: A^T x = U^T L^T P x = b */
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < i; j++) x[i] -= LU[j * n + i] * x[j];
        x[i] /= LU[i * n + i];
    }
    for (int i = n - 1; i >= 0; i--)
        for (int j = i + 1; j < n; j++) x[i] -= LU[j * n + i] * x[j];
    for (int k = n - 1; k >= 0; k--) {
        const double t = x[k];
        x[k] = x[piv[k]], x[piv[k]] = t;
    }
}

/* LAPACK's Fortran interface (Debian's liblapack-dev ships no C header for it). */
void dsyevd_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda, double *w, double *work,
             const int *lwork, int *iwork, const int *liwork, int *info);

int sid_sym_eigen(double *A, int n, double *ev, double *V)
{
    /* A is symmetric, so row-major is column-major: LAPACK's eigenvector columns land in the
     * rows of the array; V gets them back as columns. */
    int lwork = -1, liwork = -1, info = 0, iw = 0;
    double w = 0;
    dsyevd_("V", "U", &n, A, &n, ev, &w, &lwork, &iw, &liwork, &info);
    if (info) return -1;
    lwork = (int)w;
    liwork = iw;
    double *work = sid_alloc(sizeof(double) * (size_t)lwork);
    int *iwork = sid_alloc(sizeof(int) * (size_t)liwork);
    if (work && iwork) dsyevd_("V", "U", &n, A, &n, ev, work, &lwork, iwork, &liwork, &info);
    sid_free(work);
    sid_free(iwork);
    if (!work || !iwork || info) return -1;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) V[i * n + j] = A[j * n + i];
    return 0;
}

/* Cyclic Jacobi eigen-decomposition of the symmetric n x n A (destroyed): eigenvalues in ev,
 * eigenvectors in the columns of V. Robust and accurate for the small matrices here. */
void sid_jacobi_eigen(double *A, int n, double *ev, double *V)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) V[i * n + j] = i == j;
    for (int sweep = 0; sweep < 100; sweep++) {
        double off = 0, diag = 0;
        for (int i = 0; i < n; i++) {
            diag += A[i * n + i] * A[i * n + i];
            for (int j = i + 1; j < n; j++) off += A[i * n + j] * A[i * n + j];
        }
        if (off <= 1e-30 * diag) break;
        for (int p = 0; p < n; p++)
            for (int q = p + 1; q < n; q++) {
                const double apq = A[p * n + q];
                if (apq == 0) continue;
                const double tau = (A[q * n + q] - A[p * n + p]) / (2 * apq);
                const double t = (tau >= 0 ? 1 : -1) / (fabs(tau) + sqrt(1 + tau * tau));
                const double c = 1 / sqrt(1 + t * t), s = t * c;
                for (int k = 0; k < n; k++) {
                    const double akp = A[k * n + p], akq = A[k * n + q];
                    A[k * n + p] = c * akp - s * akq;
                    A[k * n + q] = s * akp + c * akq;
                }
                for (int k = 0; k < n; k++) {
                    const double apk = A[p * n + k], aqk = A[q * n + k];
                    A[p * n + k] = c * apk - s * aqk;
                    A[q * n + k] = s * apk + c * aqk;
                }
                for (int k = 0; k < n; k++) {
                    const double vkp = V[k * n + p], vkq = V[k * n + q];
                    V[k * n + p] = c * vkp - s * vkq;
                    V[k * n + q] = s * vkp + c * vkq;
                }
            }
    }
    for (int i = 0; i < n; i++) ev[i] = A[i * n + i];
}

/* M = L^T L with L lower triangular and non-zero only where a dof meets its ancestors
 * (Featherstone, "Efficient factorization of the joint-space inertia matrix for branched
 * kinematic trees", IJRR 2005): O(n d^2) for depth d instead of O(n^3). */
int sid_tree_factor(int n, const int *lambda, double *A)
{
    for (int k = n - 1; k >= 0; k--) {
        if (!(A[k * n + k] > 0)) return -1;
        const double l = sqrt(A[k * n + k]);
        A[k * n + k] = l;
        for (int i = lambda[k]; i >= 0; i = lambda[i]) A[k * n + i] /= l;
        for (int i = lambda[k]; i >= 0; i = lambda[i])
            for (int j = i; j >= 0; j = lambda[j]) A[i * n + j] -= A[k * n + i] * A[k * n + j];
    }
    return 0;
}

void sid_tree_solve(int n, const int *lambda, const double *L, double *b)
{
    /* L^T y = b, leaves first */
    for (int k = n - 1; k >= 0; k--) {
        b[k] /= L[k * n + k];
        for (int i = lambda[k]; i >= 0; i = lambda[i]) b[i] -= L[k * n + i] * b[k];
    }
    /* L x = y, root first */
    for (int k = 0; k < n; k++) {
        for (int i = lambda[k]; i >= 0; i = lambda[i]) b[k] -= L[k * n + i] * b[i];
        b[k] /= L[k * n + k];
    }
}

void sid_tree_solve_lt(int n, const int *parent, const double *L, const double *dinv, double *x)
{
    for (int k = n - 1; k >= 0; k--) {
        x[k] *= dinv[k];
        for (int i = parent[k]; i >= 0; i = parent[i]) x[i] -= L[k * n + i] * x[k];
    }
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void sid_sort_doubles(double *v, size_t n) { qsort(v, n, sizeof(double), cmp_double); }
