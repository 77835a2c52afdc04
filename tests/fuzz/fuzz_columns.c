/* fuzz_columns.c — libFuzzer harness for column maps: a fit spec's "columns" and "scale"
 * (any JSON), then the --columns and --scale flag values over it (JSON or k=v,k=v), and a
 * double pendulum's log read through the resulting map. The input is a byte (how long the
 * spec's path is: messages quote it), then four NUL-separated pieces: the spec file, the --columns value, the --scale value, the log's header line (a
 * fixed log body follows it; an empty piece: no such flag, or the log's own header). Bad maps
 * must give an error naming the flag or file, never a crash, a leak or undefined behaviour;
 * a log read through a map, written (logical names, scaled values) and read again without
 * one must give the same samples to the bit. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fitspec.h"
#include "fuzz_util.h"
#include "robot_json.h"
#include "robot_load.h"
#include "traj_csv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char body[] =
    "0,0.4,-0.3,0,0,-1.5,1.7\n"
    "0.01,0.41,-0.31,0.5,-0.4,-1.4,1.6\n"
    "0.02,0.43,-0.33,0.6,-0.5,-1.3,1.5\n";

/* tr written with its logical columns and read back without a map: the same samples. */
static void reread(const sid_traj *tr, const sid_model *m)
{
    char out[64];
    snprintf(out, sizeof out, "/tmp/sysid_fuzz_%d_out.csv", (int)getpid());
    FILE *f = fopen(out, "w");
    if (!f) abort();
    const int wrc = traj_csv_write(f, m, tr, NULL, NULL);
    if (fclose(f) || wrc) abort();
    sid_traj *tr2 = NULL;
    sid_error err = {0};
    if (traj_csv_load(out, m, NULL, &tr2, &err)) {
        /* what a mapped read accepts (times and values after scaling), a plain read must */
        fprintf(stderr, "mapped log written and read again: %s\n", err.msg);
        abort();
    }
    const size_t n = (size_t)tr->n, nq = (size_t)tr->nq, nv = (size_t)tr->nv;
    if (tr2->n != tr->n || !fuzz_same(tr->t, tr2->t, n) || !fuzz_same(tr->q, tr2->q, n * nq) || !fuzz_same(tr->u, tr2->u, n * nv) ||
        !tr->qd != !tr2->qd || (tr->qd && !fuzz_same(tr->qd, tr2->qd, n * nv))) {
        fprintf(stderr, "mapped log written and read again: the samples changed\n");
        abort();
    }
    sid_traj_free(tr2);
    remove(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static sid_model *arm;
    static double *theta;
    sid_error err = {0};
    if (!arm && robot_model("data/double_pendulum/robot.json", &arm, &theta, NULL, &err)) abort();
    static char spec[4096], columns[2048], scale[2048], header[2048], log[4096];
    if (size < 1) return 0;
    const uint8_t *p = data + 1, *end = data + size;
    spec[0] = columns[0] = scale[0] = header[0] = 0;
    fuzz_piece(&p, end, spec, sizeof spec);
    fuzz_piece(&p, end, columns, sizeof columns);
    fuzz_piece(&p, end, scale, sizeof scale);
    fuzz_piece(&p, end, header, sizeof header);
    fitspec s;
    fitspec_init(&s);
    const char *path = spec[0] ? fuzz_temp(0, data[0], spec, strlen(spec)) : NULL;
    if ((!path || fitspec_load(&s, path, &err) == 0) &&
        (!columns[0] || fitspec_apply_flag(&s, "--columns", columns, &err) == 0) &&
        (!scale[0] || fitspec_apply_flag(&s, "--scale", scale, &err) == 0)) {
        snprintf(log, sizeof log, "%s\n%s", header[0] ? header : "t,q.shoulder,q.elbow,qd.shoulder,qd.elbow,u.shoulder,u.elbow",
                 body);
        const char *lp = fuzz_temp(1, 0, log, strlen(log));
        sid_traj *tr = NULL;
        if (lp && traj_csv_load(lp, arm, &s.columns, &tr, &err) == 0) {
            reread(tr, arm);
            sid_traj_free(tr);
        }
    }
    fitspec_free(&s);
    return 0;
}
