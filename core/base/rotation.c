/* rotation.c — a rotation from URDF's roll, pitch, yaw (spatial.h). */
#include "spatial.h"

sid_m3 sid_rpy_matrix(const double *rpy, sid_m3 *dR)
{
    const double cr = cos(rpy[0]), sr = sin(rpy[0]), cp = cos(rpy[1]), sp = sin(rpy[1]);
    const double cy = cos(rpy[2]), sy = sin(rpy[2]);
    const sid_m3 Rx = {{{1, 0, 0}, {0, cr, -sr}, {0, sr, cr}}};
    const sid_m3 Ry = {{{cp, 0, sp}, {0, 1, 0}, {-sp, 0, cp}}};
    const sid_m3 Rz = {{{cy, -sy, 0}, {sy, cy, 0}, {0, 0, 1}}};
    const sid_m3 RzRy = sid_m3_mul(&Rz, &Ry);
    if (dR) {
        const sid_m3 dRx = {{{0, 0, 0}, {0, -sr, -cr}, {0, cr, -sr}}};
        const sid_m3 dRy = {{{-sp, 0, cp}, {0, 0, 0}, {-cp, 0, -sp}}};
        const sid_m3 dRz = {{{-sy, -cy, 0}, {cy, -sy, 0}, {0, 0, 0}}};
        const sid_m3 RyRx = sid_m3_mul(&Ry, &Rx), dRyRx = sid_m3_mul(&dRy, &Rx);
        dR[0] = sid_m3_mul(&RzRy, &dRx);
        dR[1] = sid_m3_mul(&Rz, &dRyRx);
        dR[2] = sid_m3_mul(&dRz, &RyRx);
    }
    return sid_m3_mul(&RzRy, &Rx);
}
