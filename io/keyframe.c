/* keyframe.c — a robot file's named states (keyframe.h). */
#include "keyframe.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "jsonfile.h"

static const char *const VECTORS[3] = { "q", "qd", "u" };

/* The joint of d named name, or -1. */
static int joint_named(const sid_robot_desc *d, const char *name)
{
    for (int j = 0; j < d->njoint; j++)
        if (strcmp(d->joint[j].name, name) == 0) return j;
    return -1;
}

/* A joint's value in vector w (0 q, 1 qd, 2 u): its count of numbers, 0 where it has none. */
static int width(const sid_joint_desc *j, int w)
{
    if (j->type == SID_JOINT_FIXED) return 0;
    if (w == 2) return j->type != SID_JOINT_FREE && j->motor != SID_MOTOR_NONE;
    return j->type != SID_JOINT_FREE ? 1 : w == 0 ? 7 : 6;
}

static int check_value(const char *file, const char *path, const cJSON *v, int n, sid_error *err)
{
    if (n == 1) return cJSON_IsNumber(v) && isfinite(v->valuedouble) ? 0 : jsonfile_expected(err, file, path, "a number", v);
    char what[64];
    snprintf(what, sizeof what, "an array of %d numbers", n);
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != n) return jsonfile_expected(err, file, path, what, v);
    for (const cJSON *x = v->child; x; x = x->next)
        if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble)) return jsonfile_expected(err, file, path, what, v);
    return 0;
}

int keyframes_check(const char *file, const cJSON *root, const sid_robot_desc *d, sid_error *err)
{
    const cJSON *ks = cJSON_GetObjectItemCaseSensitive(root, "keyframes");
    if (!ks) return 0;
    if (!cJSON_IsArray(ks)) return jsonfile_expected(err, file, "keyframes", "an array of keyframes", ks);
    char p[256];
    int i = 0;
    for (const cJSON *k = ks->child; k; k = k->next, i++) {
        snprintf(p, sizeof p, "keyframes[%d]", i);
        if (!cJSON_IsObject(k)) return jsonfile_expected(err, file, p, "an object { \"name\", \"q\", \"qd\", \"u\" }", k);
        for (const cJSON *m = k->child; m; m = m->next)
            if (strcmp(m->string, "name") && strcmp(m->string, "q") && strcmp(m->string, "qd") && strcmp(m->string, "u")) {
                snprintf(p, sizeof p, "keyframes[%d].%s", i, m->string);
                return jsonfile_expected(err, file, p, "one of name, q, qd and u", m);
            }
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(k, "name");
        snprintf(p, sizeof p, "keyframes[%d].name", i);
        if (!cJSON_IsString(name) || !name->valuestring[0]) return jsonfile_expected(err, file, p, "a non-empty name", name);
        int o = 0;
        for (const cJSON *e = ks->child; e != k; e = e->next, o++)
            if (strcmp(cJSON_GetObjectItemCaseSensitive(e, "name")->valuestring, name->valuestring) == 0)
                return sid_error_set(err, SID_ERR_INPUT, "%s: %s: '%s' names keyframes[%d] too", file, p, name->valuestring, o),
                       -1;
        for (int w = 0; w < 3; w++) {
            const cJSON *vec = cJSON_GetObjectItemCaseSensitive(k, VECTORS[w]);
            if (!vec) continue;
            snprintf(p, sizeof p, "keyframes[%d].%s", i, VECTORS[w]);
            if (!cJSON_IsObject(vec)) return jsonfile_expected(err, file, p, "an object { \"JOINT\": value }", vec);
            for (const cJSON *v = vec->child; v; v = v->next) {
                snprintf(p, sizeof p, "keyframes[%d].%s.%s", i, VECTORS[w], v->string);
                const int j = joint_named(d, v->string);
                if (j < 0 || !width(&d->joint[j], w))
                    return sid_error_set(err, SID_ERR_INPUT, "%s: %s: expected the name of a %s, got '%s'", file, p,
                                         w == 2 ? "joint with a motor" : "moving joint", v->string),
                           -1;
                if (check_value(file, p, v, width(&d->joint[j], w), err)) return -1;
            }
        }
    }
    return 0;
}

const char *keyframe_first(const cJSON *root)
{
    const cJSON *ks = cJSON_GetObjectItemCaseSensitive(root, "keyframes");
    const cJSON *name = ks && ks->child ? cJSON_GetObjectItemCaseSensitive(ks->child, "name") : NULL;
    return cJSON_IsString(name) ? name->valuestring : NULL;
}

int keyframe_state(const char *file, const cJSON *root, const sid_model *m, const char *name, double *q, double *v,
                   double *u, sid_error *err)
{
    const int nq = sid_model_nq(m), nv = sid_model_nv(m);
    const cJSON *ks = cJSON_GetObjectItemCaseSensitive(root, "keyframes"), *key = NULL;
    char names[512] = "";
    size_t len = 0;
    for (const cJSON *k = ks ? ks->child : NULL; k; k = k->next) {
        const char *kn = cJSON_GetObjectItemCaseSensitive(k, "name")->valuestring;
        if (strcmp(kn, name) == 0) key = k;
        if (len < sizeof names) len += (size_t)snprintf(names + len, sizeof names - len, "%s'%s'", len ? ", " : "", kn);
    }
    if (!key)
        return sid_error_set(err, SID_ERR_INPUT, "%s: no keyframe '%s' (%s%s)", file, name, names[0] ? "it has " : "it has none",
                             names),
               -1;
    memset(q, 0, sizeof(double) * (size_t)nq);
    memset(v, 0, sizeof(double) * (size_t)nv);
    memset(u, 0, sizeof(double) * (size_t)nv);
    for (int k = 0; k < sid_model_ndof_joints(m); k++) {
        const int free = sid_model_dof_joint_type(m, k) == SID_JOINT_FREE;
        const int qa = sid_model_dof_joint_qadr(m, k), va = sid_model_dof_joint_vadr(m, k);
        if (free) q[qa + 3] = 1;   /* unrotated */
        double *dst[3] = { q + qa, v + va, u + va };
        for (int w = 0; w < 3; w++) {
            const cJSON *vec = cJSON_GetObjectItemCaseSensitive(key, VECTORS[w]);
            const cJSON *x = vec ? cJSON_GetObjectItemCaseSensitive(vec, sid_model_dof_joint_name(m, k)) : NULL;
            if (!x) continue;
            if (cJSON_IsNumber(x)) dst[w][0] = x->valuedouble;
            else {
                int i = 0;
                for (const cJSON *e = x->child; e; e = e->next) dst[w][i++] = e->valuedouble;
            }
        }
        if (free) {   /* a unit quaternion, as MuJoCo's compiler makes a key's (mju_normalize4) */
            double *qt = q + qa + 3;
            const double norm = sqrt(qt[0] * qt[0] + qt[1] * qt[1] + qt[2] * qt[2] + qt[3] * qt[3]);
            if (norm < 1e-15) qt[0] = 1, qt[1] = qt[2] = qt[3] = 0;
            else if (fabs(norm - 1) > 1e-15)
                for (int c = 0; c < 4; c++) qt[c] *= 1 / norm;
        }
    }
    return 0;
}
