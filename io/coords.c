/* coords.c — a model's coordinates as logs and tables show them. */
#include "coords.h"

#include <stdlib.h>
#include <string.h>

void coords_joint(const sid_model *m, int k, int *q0, int *nq, int *v0, int *nv)
{
    /* Moving joints are in q order: a joint's coordinates run up to the next joint's. */
    const int last = k + 1 == sid_model_ndof_joints(m);
    *q0 = sid_model_dof_joint_qadr(m, k);
    *v0 = sid_model_dof_joint_vadr(m, k);
    *nq = (last ? sid_model_nq(m) : sid_model_dof_joint_qadr(m, k + 1)) - *q0;
    *nv = (last ? sid_model_nv(m) : sid_model_dof_joint_vadr(m, k + 1)) - *v0;
}

int coords_motor(const sid_model *m, int *idx)
{
    int n = 0;
    for (int k = 0; k < sid_model_ndof_joints(m); k++) {
        int q0, nq, v0, nv;
        coords_joint(m, k, &q0, &nq, &v0, &nv);
        for (int i = v0; sid_model_dof_joint_has_motor(m, k) && i < v0 + nv; i++)
            idx[n++] = i;
    }
    return n;
}

/* Unit of position coordinate i of a joint of type t whose first one is q0. */
static const char *q_unit(const sid_model *m, sid_joint_type t, int q0, int i)
{
    if (!sid_model_q_is_angular(m, i))
        return "m";
    return t == SID_JOINT_FREE && i - q0 >= 3 ? "1" : "rad";   /* (x, y, z, qw, qx, qy, qz) */
}

int coords_rows(const sid_model *m, coords_row *rows)
{
    int n = 0;
    for (int k = 0; k < sid_model_ndof_joints(m); k++) {
        int q0, nq, v0, nv;
        coords_joint(m, k, &q0, &nq, &v0, &nv);
        if (nq == 1 && nv == 1) {
            const int ang = sid_model_q_is_angular(m, q0);
            rows[n++] = (coords_row){ sid_model_q_name(m, q0), q0, v0, ang ? "rad, rad/s" : "m, m/s" };
            continue;
        }
        const sid_joint_type t = sid_model_dof_joint_type(m, k);
        for (int i = q0; i < q0 + nq; i++)
            rows[n++] = (coords_row){ sid_model_q_name(m, i), i, -1, q_unit(m, t, q0, i) };
        for (int i = v0; i < v0 + nv; i++)
            rows[n++] = (coords_row){ sid_model_v_name(m, i), -1, i,
                                      sid_model_v_is_angular(m, i) ? "rad/s" : "m/s" };
    }
    return n;
}

coords_row *coords_table(const sid_model *m, int *n, int *width)
{
    coords_row *rows = malloc((size_t)(sid_model_nq(m) + sid_model_nv(m) + 1) * sizeof *rows);
    if (!rows)
        return NULL;
    *n = coords_rows(m, rows);
    *width = 5;
    for (int k = 0; k < *n; k++) {
        const int len = (int)strlen(rows[k].name);
        *width = len > *width ? len : *width;
    }
    return rows;
}
