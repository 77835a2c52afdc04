/* mjcf_inertia.c — rotations and primitive inertias as MuJoCo's compiler computes them.
 *
 * Quaternions are MuJoCo's (w, x, y, z), rotation matrices row-major, R v maps a vector of
 * the child frame into the parent. A primitive geom's inertia is that of a solid of uniform
 * density about its centre in the geom frame (z the axis of capsules and cylinders), the
 * formulas of MuJoCo's mjCGeom (user_objects.cc); a capsule is a cylinder of height 2*size[1]
 * plus two hemispheres, each moved to its end by the parallel-axis theorem.
 */
#include <math.h>
#include <string.h>

#include "mjcf_internal.h"

void mjcf_quat_normalize(double q[4])
{
    double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    if (n < 1e-15) {   /* MuJoCo's mju_normalize4 makes a zero quaternion the identity */
        q[0] = 1, q[1] = q[2] = q[3] = 0;
        return;
    }
    for (int i = 0; i < 4; i++) q[i] /= n;
}

void mjcf_quat_mul(double r[4], const double a[4], const double b[4])
{
    double t[4] = {
        a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
        a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
        a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
        a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0],
    };
    memcpy(r, t, sizeof t);
}

void mjcf_quat_mat(double R[9], const double q[4])
{
    double w = q[0], x = q[1], y = q[2], z = q[3];
    R[0] = w * w + x * x - y * y - z * z;
    R[1] = 2 * (x * y - w * z);
    R[2] = 2 * (x * z + w * y);
    R[3] = 2 * (x * y + w * z);
    R[4] = w * w - x * x + y * y - z * z;
    R[5] = 2 * (y * z - w * x);
    R[6] = 2 * (x * z - w * y);
    R[7] = 2 * (y * z + w * x);
    R[8] = w * w - x * x - y * y + z * z;
}

/* The rotation taking (0, 0, 1) to v about their common normal (identity for a zero v,
 * half a turn about x for v along -z), as mju_quatZ2Vec. */
void mjcf_quat_z2vec(double q[4], const double v[3])
{
    q[0] = 1, q[1] = q[2] = q[3] = 0;
    double n = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    if (n < 1e-15) return;
    double u[3] = { v[0] / n, v[1] / n, v[2] / n };
    double ax[3] = { -u[1], u[0], 0 };   /* z x u */
    double s = sqrt(ax[0] * ax[0] + ax[1] * ax[1]);
    if (s < 1e-15) {
        if (u[2] < 0) q[0] = 0, q[1] = 1;
        return;
    }
    double a = atan2(s, u[2]);
    q[0] = cos(a / 2);
    for (int i = 0; i < 3; i++) q[i + 1] = sin(a / 2) * ax[i] / s;
}

/* Shepperd's method: the largest of w, x, y, z is found first, so no division is small. */
void mjcf_mat_quat(double q[4], const double R[9])
{
    double tr = R[0] + R[4] + R[8];
    if (tr > R[0] && tr > R[4] && tr > R[8]) {
        double s = 2 * sqrt(1 + tr);
        q[0] = s / 4, q[1] = (R[7] - R[5]) / s, q[2] = (R[2] - R[6]) / s, q[3] = (R[3] - R[1]) / s;
    } else if (R[0] > R[4] && R[0] > R[8]) {
        double s = 2 * sqrt(1 + R[0] - R[4] - R[8]);
        q[0] = (R[7] - R[5]) / s, q[1] = s / 4, q[2] = (R[1] + R[3]) / s, q[3] = (R[2] + R[6]) / s;
    } else if (R[4] > R[8]) {
        double s = 2 * sqrt(1 + R[4] - R[0] - R[8]);
        q[0] = (R[2] - R[6]) / s, q[1] = (R[1] + R[3]) / s, q[2] = s / 4, q[3] = (R[5] + R[7]) / s;
    } else {
        double s = 2 * sqrt(1 + R[8] - R[0] - R[4]);
        q[0] = (R[3] - R[1]) / s, q[1] = (R[2] + R[6]) / s, q[2] = (R[5] + R[7]) / s, q[3] = s / 4;
    }
    mjcf_quat_normalize(q);
}

/* R = Rz(y) Ry(p) Rx(r): R[6] = -sin p, R[7] = cos p sin r, R[8] = cos p cos r,
 * R[3] = cos p sin y, R[0] = cos p cos y. At cos p = 0 only r - y (or r + y) is defined: r = 0. */
void mjcf_mat_rpy(double rpy[3], const double R[9])
{
    double cp = hypot(R[0], R[3]);
    rpy[1] = atan2(-R[6], cp);
    if (cp > 1e-12) {
        rpy[0] = atan2(R[7], R[8]);
        rpy[2] = atan2(R[3], R[0]);
    } else {
        rpy[0] = 0;
        rpy[2] = atan2(-R[1], R[4]);
    }
}

void mjcf_inertia_rotate(double I[6], const double R[9], const double diag[3])
{
    double M[3][3];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double s = 0;
            for (int k = 0; k < 3; k++) s += R[3 * i + k] * diag[k] * R[3 * j + k];
            M[i][j] = s;
        }
    I[0] = M[0][0], I[1] = M[1][1], I[2] = M[2][2];
    I[3] = M[0][1], I[4] = M[0][2], I[5] = M[1][2];
}

int mjcf_geom_inertia(const char *type, const double s[3], double *vol, double Iu[3])
{
    const double pi = 3.14159265358979323846;
    if (strcmp(type, "sphere") == 0) {
        *vol = 4 * pi * s[0] * s[0] * s[0] / 3;
        Iu[0] = Iu[1] = Iu[2] = 2 * s[0] * s[0] / 5;
    } else if (strcmp(type, "capsule") == 0) {
        double r = s[0], h = 2 * s[1];
        *vol = pi * r * r * (4 * r / 3 + h);
        double ms = 4 * r / (4 * r + 3 * h), mc = 1 - ms;   /* mass fractions: spheres, cylinder */
        /* each hemisphere: 83/320 m r^2 about its own COM, which is 3r/8 from the flat face */
        Iu[0] = Iu[1] = mc * (3 * r * r + h * h) / 12 + ms * (2 * r * r / 5 + h * h / 4 + 3 * h * r / 8);
        Iu[2] = mc * r * r / 2 + ms * 2 * r * r / 5;
    } else if (strcmp(type, "cylinder") == 0) {
        double r = s[0], h = 2 * s[1];
        *vol = pi * r * r * h;
        Iu[0] = Iu[1] = (3 * r * r + h * h) / 12;
        Iu[2] = r * r / 2;
    } else if (strcmp(type, "ellipsoid") == 0) {
        *vol = 4 * pi * s[0] * s[1] * s[2] / 3;
        Iu[0] = (s[1] * s[1] + s[2] * s[2]) / 5;
        Iu[1] = (s[0] * s[0] + s[2] * s[2]) / 5;
        Iu[2] = (s[0] * s[0] + s[1] * s[1]) / 5;
    } else if (strcmp(type, "box") == 0) {
        *vol = 8 * s[0] * s[1] * s[2];
        Iu[0] = (s[1] * s[1] + s[2] * s[2]) / 3;
        Iu[1] = (s[0] * s[0] + s[2] * s[2]) / 3;
        Iu[2] = (s[0] * s[0] + s[1] * s[1]) / 3;
    } else {
        return -1;
    }
    return 0;
}
