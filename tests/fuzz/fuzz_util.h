/* fuzz_util.h — what the libFuzzer harnesses share: the fuzz bytes as a temporary file for the
 * readers that take a path, and as NUL-separated pieces; bitwise comparison; the example models. */
#ifndef FUZZ_UTIL_H
#define FUZZ_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "robot_json.h"
#include "robot_load.h"

/* data into /tmp/sysid_fuzz_<pid>_<slot>_ and pad (< 200) more characters: messages quote
 * paths, and real ones are long; its path, or NULL. */
static inline const char *fuzz_temp(int slot, int pad, const void *data, size_t size)
{
    static char path[4][256];
    int n = snprintf(path[slot], sizeof path[slot], "/tmp/sysid_fuzz_%d_%d_", (int)getpid(), slot);
    for (; pad > 0 && n < (int)sizeof path[slot] - 1; pad--) path[slot][n++] = 'x';
    path[slot][n] = 0;
    FILE *f = fopen(path[slot], "wb");
    if (!f) return NULL;
    if (size) fwrite(data, 1, size, f);
    fclose(f);
    return path[slot];
}

/* The next NUL-terminated piece of [*p, end) copied into buf (cap bytes, truncated); 0 when
 * nothing is left. */
static inline int fuzz_piece(const uint8_t **p, const uint8_t *end, char *buf, size_t cap)
{
    if (*p >= end) return 0;
    const uint8_t *z = memchr(*p, 0, (size_t)(end - *p));
    size_t n = (size_t)((z ? z : end) - *p);
    if (n >= cap) n = cap - 1;
    memcpy(buf, *p, n);
    buf[n] = 0;
    *p = z ? z + 1 : end;
    return 1;
}

/* a and b hold the same n doubles, bit for bit (n == 0: nothing to compare) */
static inline int fuzz_same(const double *a, const double *b, size_t n)
{
    return n == 0 || (a && b && memcmp(a, b, sizeof(double) * n) == 0);
}

/* The double pendulum and the floating box, loaded once per process (abort if they fail: the
 * harness runs from the repository root). */
static inline void fuzz_models(sid_model **arm, double **arm_theta, sid_model **box, double **box_theta)
{
    sid_error err = {0};
    if (!*arm && robot_model("data/double_pendulum/robot.json", arm, arm_theta, NULL, &err)) abort();
    if (!*box && robot_model("data/box/robot.json", box, box_theta, NULL, &err)) abort();
}

#endif
