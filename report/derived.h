/* derived.h — the combinations of parameters that motion determines, shown next to them.
 *
 * From the motion of one joint the data determine its child link's first moment m·c and its
 * inertia about the joint axis (with the rotor's armature), not the mass, COM and inertia
 * tensor apart: a pendulum's m·l and J. When a fit frees two or more of the numbers one of
 * these depends on, the summary and the report show it, nominal and fitted, with standard
 * errors by the delta method (gᵀ C g with g its gradient in the free parameters, C the classic
 * covariance and the sandwich over windows), or none when a null direction of the fit touches
 * its parameters.
 */
#ifndef CLI_DERIVED_H
#define CLI_DERIVED_H

#include <cjson/cJSON.h>

#include "fitspec.h"
#include "sid.h"

#define DERIVED_MAX 64

typedef struct {
    char name[2 * SID_MAX_NAME + 48];   /* "links.pole.mass*com[2]", "joints.hinge.inertia_about_axis" */
    const char *unit;
    double nominal, fitted;
    double stderr_;                     /* HUGE_VAL: not determined or unknown */
    double stderr_robust;               /* the same from the sandwich over windows (the report's robust intervals) */
    double t95_robust;                  /* its 95 % interval's Student t: its parameters' widest */
} derived_value;

typedef struct {
    int n;
    derived_value v[DERIVED_MAX];
} derived_set;

/* The derived quantities of the model (doc: its robot.json, for the joint axes) that depend on
 * at least two free parameters; cov may be NULL (no standard errors). */
void derived_compute(const sid_model *m, const cJSON *doc, const double *theta0, const double *theta,
                     const fitspec_selection *sel, const sid_covariance_result *cov, derived_set *out);

#endif
