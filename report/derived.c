/* derived.c — first moments and inertias about joint axes from the fitted parameters (derived.h). */
#include "derived.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report.h"

/* The numbers one quantity depends on: parameter indices and d(quantity)/d(parameter). */
typedef struct {
    int n;
    int idx[12];
    double g[12];
} gradient;

static void term(gradient *g, int i, double d)
{
    if (i >= 0 && g->n < 12)
        g->idx[g->n] = i, g->g[g->n++] = d;
}

static int free_slot(const fitspec_selection *sel, int i)
{
    for (int k = 0; k < sel->n; k++)
        if (sel->idx[k] == i)
            return k;
    return -1;
}

/* Standard error of a quantity with gradient g: sqrt(gᵀ C g) over its free parameters, C the
 * classic covariance or (robust) the sandwich over windows, or HUGE_VAL when there is no
 * covariance or a null direction touches one of them. */
static double delta_stderr(const gradient *g, const fitspec_selection *sel, const sid_covariance_result *cov,
                           int robust)
{
    const double *C = !cov ? NULL : robust ? cov->cov_robust : cov->cov;
    if (!cov)
        return HUGE_VAL;
    double var = 0;
    for (int a = 0; a < g->n; a++) {
        const int ka = free_slot(sel, g->idx[a]);
        if (ka < 0)
            continue;
        for (int d = 0; d < cov->nnull; d++)
            if (fabs(cov->null_dir[(size_t)d * (size_t)sel->n + (size_t)ka]) > REPORT_NULL_COEF)
                return HUGE_VAL;
        for (int b = 0; b < g->n; b++) {
            const int kb = free_slot(sel, g->idx[b]);
            if (kb >= 0)
                var += g->g[a] * g->g[b] * C[(size_t)ka * (size_t)sel->n + (size_t)kb];
        }
    }
    return var >= 0 ? sqrt(var) : HUGE_VAL;
}

static int nfree_in(const gradient *g, const fitspec_selection *sel)
{
    int n = 0;
    for (int a = 0; a < g->n; a++)
        n += free_slot(sel, g->idx[a]) >= 0 && g->g[a] != 0;
    return n;
}

static int param(const sid_model *m, const char *fmt, const char *owner, const char *what)
{
    char name[2 * SID_MAX_NAME + 48];
    snprintf(name, sizeof name, fmt, owner, what);
    return sid_model_param_find(m, name);
}

static double at(const double *theta, int i, double dflt) { return i >= 0 ? theta[i] : dflt; }

static void add(derived_set *out, const gradient *g, double nominal, double fitted, const fitspec_selection *sel,
                const sid_covariance_result *cov, const char *unit, const char *fmt, const char *owner,
                const char *what)
{
    if (out->n >= DERIVED_MAX || nfree_in(g, sel) < 2)
        return;   /* one free number: the quantity is that number, shown already */
    derived_value *v = &out->v[out->n++];
    snprintf(v->name, sizeof v->name, fmt, owner, what);
    v->unit = unit;
    v->nominal = nominal;
    v->fitted = fitted;
    v->stderr_ = delta_stderr(g, sel, cov, 0);
    v->stderr_robust = delta_stderr(g, sel, cov, 1);
    /* its Student t: the widest of its free parameters' (the fewest degrees of freedom) */
    v->t95_robust = 1.96;
    for (int a = 0; cov && a < g->n; a++) {
        const int ka = free_slot(sel, g->idx[a]);
        if (ka >= 0 && g->g[a] != 0 && isfinite(cov->t95_robust[ka])) v->t95_robust = fmax(v->t95_robust, cov->t95_robust[ka]);
    }
}

void derived_compute(const sid_model *m, const cJSON *doc, const double *theta0, const double *theta,
                     const fitspec_selection *sel, const sid_covariance_result *cov, derived_set *out)
{
    out->n = 0;
    const cJSON *joints = cJSON_GetObjectItemCaseSensitive(doc, "joints");
    for (int k = 0; k < sid_model_ndof_joints(m); k++) {
        const sid_joint_type type = sid_model_dof_joint_type(m, k);
        if (type == SID_JOINT_FREE)
            continue;
        const cJSON *jd = cJSON_GetArrayItem(joints, sid_model_dof_joint_desc(m, k));
        const cJSON *child = cJSON_GetObjectItemCaseSensitive(jd, "child");
        const cJSON *ax = cJSON_GetObjectItemCaseSensitive(jd, "axis");
        if (!cJSON_IsString(child))
            continue;
        const char *link = child->valuestring, *joint = sid_model_dof_joint_name(m, k);
        double a[3] = { 1, 0, 0 }, na = 0;
        for (int i = 0; i < 3 && cJSON_GetArraySize(ax) == 3; i++)
            a[i] = cJSON_GetArrayItem(ax, i)->valuedouble;
        for (int i = 0; i < 3; i++)
            na += a[i] * a[i];
        for (int i = 0; i < 3 && na > 0; i++)
            a[i] /= sqrt(na);
        const int im = param(m, "links.%s.%s", link, "mass");
        if (im < 0)
            continue;
        int ic[3], ii[6];
        static const char *const inertia[6] = { "ixx", "iyy", "izz", "ixy", "ixz", "iyz" };
        for (int i = 0; i < 3; i++) {
            char what[32];
            snprintf(what, sizeof what, "com[%d]", i);
            ic[i] = param(m, "links.%s.%s", link, what);
        }
        for (int i = 0; i < 6; i++) {
            char what[32];
            snprintf(what, sizeof what, "inertia.%s", inertia[i]);
            ii[i] = param(m, "links.%s.%s", link, what);
        }
        const int iarm = param(m, "joints.%s.%s", joint, "armature");
        const double *th[2] = { theta0, theta };
        if (type == SID_JOINT_REVOLUTE) {
            /* first moment m c, component by component where the COM has one */
            for (int i = 0; i < 3; i++) {
                if (at(theta0, ic[i], 0) == 0 && at(theta, ic[i], 0) == 0 && free_slot(sel, ic[i]) < 0)
                    continue;
                gradient g = { 0 };
                term(&g, im, at(theta, ic[i], 0));
                term(&g, ic[i], theta[im]);
                char what[32];
                snprintf(what, sizeof what, "mass*com[%d]", i);
                add(out, &g, theta0[im] * at(theta0, ic[i], 0), theta[im] * at(theta, ic[i], 0), sel, cov, "kg*m",
                    "links.%s.%s", link, what);
            }
        }
        /* about the axis through the joint: aᵀ (I_c + m (|c|² 1 − c cᵀ)) a + armature (a revolute
         * joint); a prismatic one moves m + armature */
        double J[2];
        gradient g = { 0 };
        for (int s = 0; s < 2; s++) {
            const double *t = th[s];
            const double mass = t[im];
            double c[3], ac = 0, cc = 0;
            for (int i = 0; i < 3; i++)
                c[i] = at(t, ic[i], 0), ac += a[i] * c[i], cc += c[i] * c[i];
            const double I[6] = { at(t, ii[0], 0), at(t, ii[1], 0), at(t, ii[2], 0),
                                  at(t, ii[3], 0), at(t, ii[4], 0), at(t, ii[5], 0) };
            const double da[6] = { a[0] * a[0], a[1] * a[1], a[2] * a[2], 2 * a[0] * a[1], 2 * a[0] * a[2], 2 * a[1] * a[2] };
            if (type == SID_JOINT_PRISMATIC) {
                J[s] = mass + at(t, iarm, 0);
                if (s) {
                    term(&g, im, 1);
                    term(&g, iarm, 1);
                }
                continue;
            }
            double Ia = 0;
            for (int i = 0; i < 6; i++)
                Ia += da[i] * I[i];
            J[s] = Ia + mass * (cc - ac * ac) + at(t, iarm, 0);
            if (!s)
                continue;
            term(&g, im, cc - ac * ac);
            for (int i = 0; i < 3; i++)
                term(&g, ic[i], mass * (2 * c[i] - 2 * ac * a[i]));
            for (int i = 0; i < 6; i++)
                term(&g, ii[i], da[i]);
            term(&g, iarm, 1);
        }
        add(out, &g, J[0], J[1], sel, cov, type == SID_JOINT_PRISMATIC ? "kg" : "kg*m^2",
            "joints.%s.%s", joint, type == SID_JOINT_PRISMATIC ? "mass_along_axis" : "inertia_about_axis");
    }
}
