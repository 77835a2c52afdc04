/* fuzz_roundtrip.c — libFuzzer harness for what sysid writes and reads back. The first byte
 * picks (mod 3; divided by 3, how long the file's path is): a robot.json that loads, written (robot_json_write) and read again, must give the
 * same parameters to the bit, also after its parameters were moved a little (so that fields
 * absent from the file must be written); a log that loads (a double pendulum's, or a free
 * box's with quaternion columns), written (traj_csv_write) and read again, must give the same
 * samples to the bit. A difference aborts. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "robot_json.h"
#include "robot_load.h"
#include "traj_csv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void robot_roundtrip(const char *path, uint8_t how)
{
    sid_model *m = NULL, *m2 = NULL;
    double *theta = NULL, *theta2 = NULL;
    cJSON *doc = NULL;
    sid_error err = {0};
    if (robot_model(path, &m, &theta, &doc, &err)) return;
    const int np = sid_model_nparam(m);
    /* move every k-th parameter by a relative 2^-(how % 32 + 8): a valid robot stays valid,
     * but for values near a bound, and the moved values differ from any default */
    const int every = how / 32 + 1;
    if (how)
        for (int i = 0; i < np; i += every) theta[i] *= 1 + ldexp(1, -(how % 32 + 8));
    char out[300];
    snprintf(out, sizeof out, "%s.out.json", path);
    if (robot_json_write(out, doc, m, theta, &err) == 0) {
        if (robot_model(out, &m2, &theta2, NULL, &err) == 0) {
            if (sid_model_nparam(m2) != np || !fuzz_same(theta, theta2, (size_t)np)) {
                fprintf(stderr, "robot.json round trip changed the parameters\n");
                abort();
            }
        } else if (!how) {
            /* the file as read must read back */
            fprintf(stderr, "robot.json round trip: %s\n", err.msg);
            abort();
        }
    } else if (!how) {
        fprintf(stderr, "robot.json write: %s\n", err.msg);
        abort();
    }
    remove(out);
    sid_model_free(m);
    sid_model_free(m2);
    sid_free(theta);
    sid_free(theta2);
    cJSON_Delete(doc);
}

static void log_roundtrip(const char *path, const sid_model *m)
{
    sid_traj *tr = NULL, *tr2 = NULL;
    sid_error err = {0};
    if (traj_csv_load(path, m, NULL, &tr, &err)) return;
    char out[300];
    snprintf(out, sizeof out, "%s.out.csv", path);
    FILE *f = fopen(out, "w");
    if (!f) abort();
    const int wrc = traj_csv_write(f, m, tr, NULL, NULL);
    if (fclose(f) || wrc) abort();
    if (traj_csv_load(out, m, NULL, &tr2, &err)) {
        fprintf(stderr, "log round trip: %s\n", err.msg);
        abort();
    }
    const size_t n = (size_t)tr->n, nq = (size_t)tr->nq, nv = (size_t)tr->nv;
    if (tr2->n != tr->n || tr2->nq != tr->nq || tr2->nv != tr->nv || !fuzz_same(tr->t, tr2->t, n) ||
        !fuzz_same(tr->q, tr2->q, n * nq) || !fuzz_same(tr->u, tr2->u, n * nv) || !tr->qd != !tr2->qd ||
        (tr->qd && !fuzz_same(tr->qd, tr2->qd, n * nv))) {
        fprintf(stderr, "log round trip changed the samples\n");
        abort();
    }
    remove(out);
    sid_traj_free(tr);
    sid_traj_free(tr2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static sid_model *arm, *box;
    static double *arm_theta, *box_theta;
    fuzz_models(&arm, &arm_theta, &box, &box_theta);
    if (size < 2) return 0;
    const char *path = fuzz_temp(0, data[0] / 3, data + 2, size - 2);
    if (!path) return 0;
    switch (data[0] % 3) {
    case 0: robot_roundtrip(path, data[1]); break;
    case 1: log_roundtrip(path, arm); break;
    default: log_roundtrip(path, box);
    }
    return 0;
}
