/* inertia_param.c — the log-Cholesky map of inertia_param.h, its Jacobian and its inverse. */
#include "inertia_param.h"

#include <math.h>

/* Sigma = 1/2 tr(I) 1 - I as a full 3 x 3. */
static void sigma_of(double S[3][3], const double I[6])
{
    const double h = 0.5 * (I[0] + I[1] + I[2]);
    S[0][0] = h - I[0], S[1][1] = h - I[1], S[2][2] = h - I[2];
    S[0][1] = S[1][0] = -I[3], S[0][2] = S[2][0] = -I[4], S[1][2] = S[2][1] = -I[5];
}

/* I = tr(Sigma) 1 - Sigma from a full 3 x 3. */
static void inertia_of(double I[6], double S[3][3])
{
    const double t = S[0][0] + S[1][1] + S[2][2];
    I[0] = t - S[0][0], I[1] = t - S[1][1], I[2] = t - S[2][2];
    I[3] = -S[0][1], I[4] = -S[0][2], I[5] = -S[1][2];
}

/* Lower-triangular Cholesky factor of S; -1 unless positive definite. */
static int chol3(double L[3][3], double S[3][3])
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) L[i][j] = 0;
    for (int j = 0; j < 3; j++) {
        double d = S[j][j];
        for (int k = 0; k < j; k++) d -= L[j][k] * L[j][k];
        if (!(d > 0) || !isfinite(d)) return -1;
        L[j][j] = sqrt(d);
        for (int i = j + 1; i < 3; i++) {
            double s = S[i][j];
            for (int k = 0; k < j; k++) s -= L[i][k] * L[j][k];
            L[i][j] = s / L[j][j];
        }
    }
    return 0;
}

static void unpack_l(double L[3][3], const double v[6])
{
    L[0][0] = v[0], L[1][1] = v[1], L[2][2] = v[2];
    L[1][0] = v[3], L[2][0] = v[4], L[2][1] = v[5];
    L[0][1] = L[0][2] = L[1][2] = 0;
}

int sid_inertia_factor(double L0[6], const double I0[6])
{
    double S[3][3], L[3][3];
    sigma_of(S, I0);
    if (chol3(L, S)) return -1;
    L0[0] = L[0][0], L0[1] = L[1][1], L0[2] = L[2][2];
    L0[3] = L[1][0], L0[4] = L[2][0], L0[5] = L[2][1];
    return 0;
}

/* C = A B for 3 x 3. */
static void mul3(double C[3][3], double A[3][3], double B[3][3])
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) C[i][j] = A[i][0] * B[0][j] + A[i][1] * B[1][j] + A[i][2] * B[2][j];
}

void sid_inertia_from_x(double I[6], double *G, const double L0[6], const double x[6])
{
    const double lx[6] = {exp(x[0]), exp(x[1]), exp(x[2]), x[3], x[4], x[5]};
    double A[3][3], Lx[3][3], M[3][3], S[3][3];
    unpack_l(A, L0);
    unpack_l(Lx, lx);
    mul3(M, A, Lx);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) S[i][j] = M[i][0] * M[j][0] + M[i][1] * M[j][1] + M[i][2] * M[j][2];
    inertia_of(I, S);
    if (!G) return;
    /* d Lx / d x_j is one entry (e^x on the diagonal, 1 below it): d M = L0 E,
     * d Sigma = dM M^T + M dM^T, and I is linear in Sigma */
    static const int row[6] = {0, 1, 2, 1, 2, 2}, col[6] = {0, 1, 2, 0, 0, 1};
    for (int j = 0; j < 6; j++) {
        const double e = j < 3 ? lx[j] : 1;
        double dM[3][3] = {{0}}, dS[3][3], dI[6];
        for (int i = 0; i < 3; i++) dM[i][col[j]] = A[i][row[j]] * e;
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++) {
                double s = 0;
                for (int k = 0; k < 3; k++) s += dM[a][k] * M[b][k] + M[a][k] * dM[b][k];
                dS[a][b] = s;
            }
        inertia_of(dI, dS);
        for (int i = 0; i < 6; i++) G[6 * i + j] = dI[i];
    }
}

int sid_inertia_to_x(double x[6], const double L0[6], const double I[6])
{
    double S[3][3], L[3][3], A[3][3];
    sigma_of(S, I);
    if (chol3(L, S)) return -1;
    unpack_l(A, L0);
    /* Lx = L0^-1 L, lower triangular: forward substitution column by column */
    double X[3][3] = {{0}};
    for (int j = 0; j < 3; j++)
        for (int i = j; i < 3; i++) {
            double s = L[i][j];
            for (int k = j; k < i; k++) s -= A[i][k] * X[k][j];
            X[i][j] = s / A[i][i];
        }
    x[0] = log(X[0][0]), x[1] = log(X[1][1]), x[2] = log(X[2][2]);
    x[3] = X[1][0], x[4] = X[2][0], x[5] = X[2][1];
    return 0;
}
