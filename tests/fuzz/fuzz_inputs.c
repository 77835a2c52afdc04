/* fuzz_inputs.c — libFuzzer harness for everything sysid reads from users: robot.json (with
 * model validation), log CSVs against a fixed robot (a double pendulum, or a floating box whose
 * free joint has quaternion columns), and fit specifications. Bad input must
 * give an error, never a crash, a leak or undefined behaviour.
 * Build and run: make fuzz (clang, -fsanitize=fuzzer,address,undefined). The first byte of
 * each input picks the reader (its value mod 4) and how long the file's path is (its value / 4). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fitspec.h"
#include "fuzz_util.h"
#include "robot_json.h"
#include "robot_load.h"
#include "traj_csv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static sid_model *arm, *box;
    static double *arm_theta, *box_theta;
    fuzz_models(&arm, &arm_theta, &box, &box_theta);
    sid_error err = {0};
    if (size < 1) return 0;
    const char *path = fuzz_temp(0, data[0] / 4, data + 1, size - 1);
    if (!path) return 0;
    switch (data[0] % 4) {
    case 0: {
        sid_model *m = NULL;
        double *theta = NULL;
        cJSON *doc = NULL;
        if (robot_model(path, &m, &theta, &doc, &err) == 0) {
            sid_model_free(m);
            sid_free(theta);
            cJSON_Delete(doc);
        }
        break;
    }
    case 1:
    case 3: {
        traj_colmap map;
        traj_colmap_init(&map);
        sid_traj *tr = NULL;
        if (traj_csv_load(path, data[0] % 4 == 1 ? arm : box, &map, &tr, &err) == 0) sid_traj_free(tr);
        traj_colmap_free(&map);
        break;
    }
    default: {
        fitspec s;
        fitspec_init(&s);
        if (fitspec_load(&s, path, &err) == 0) {
            fitspec_selection sel = {0};
            if (fitspec_select(&s, arm, arm_theta, &sel, &err) == 0) fitspec_selection_free(&sel);
        }
        fitspec_free(&s);
    }
    }
    return 0;
}
