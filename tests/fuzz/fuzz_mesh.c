/* fuzz_mesh.c — libFuzzer harness for mesh files (io/mesh.c): any bytes as a binary or ASCII
 * STL or an OBJ. A mesh that loads must have its triangles' indices inside its vertices, and
 * its solid (when closed) and its shell finite mass properties; anything else must be an error
 * naming the file, never a crash, a leak or undefined behaviour. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_util.h"
#include "mesh.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_finite(const mesh_mass *mm)
{
    const double x[] = { mm->volume, mm->area, mm->com[0], mm->com[1], mm->com[2], mm->inertia[0], mm->inertia[1],
                         mm->inertia[2], mm->inertia[3], mm->inertia[4], mm->inertia[5] };
    for (size_t i = 0; i < sizeof x / sizeof x[0]; i++)
        if (!isfinite(x[i])) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_temp(0, 0, data, size);
    if (!path) return 0;
    mesh m;
    sid_error err = { 0 };
    if (mesh_load(path, NULL, &m, &err) == 0) {
        for (int i = 0; i < 3 * m.ntri; i++)
            if (m.tri[i] < 0 || m.tri[i] >= m.nvert) abort();
        mesh_mass mm;
        if (mesh_solid(&m, &mm, &err) == 0) check_finite(&mm);
        else if (!err.msg[0]) abort();
        err.msg[0] = 0;
        if (mesh_shell(&m, &mm, &err) == 0) check_finite(&mm);
        else if (!err.msg[0]) abort();
        mesh_free(&m);
    } else if (!strstr(err.msg, path) && err.status != SID_ERR_NOMEM) {
        abort();   /* an error names the file */
    }
    unlink(path);
    return 0;
}
