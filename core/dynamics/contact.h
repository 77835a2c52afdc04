/* contact.h — how a contact model hands external forces to the dynamics, and the compliant model.
 * A contact model computes forces on the bodies from the kinematics (transforms, world poses)
 * and the body velocities of RNEA's motion pass; the forward dynamics (fd.h) passes them to
 * RNEA's force pass. Its adjoint takes their adjoint fextbar back through the model's own
 * geometry into the body velocity and world pose adjoints of the workspace and theta. */
#ifndef SID_CONTACT_H
#define SID_CONTACT_H

#include "kinematics.h"

typedef struct sid_fext_source {
    /* fext (nbody, body coordinates) at the kinematics and body velocities in ws */
    void (*forces)(const sid_model *m, const double *theta, sid_workspace *ws, const void *ctx, sid_sv *fext);
    /* from fextbar accumulate ws->vbar, ws->Rwbar, ws->pwbar and thetabar (may be NULL) */
    void (*forces_vjp)(const sid_model *m, const double *theta, sid_workspace *ws, const void *ctx,
                       const sid_sv *fextbar, double *thetabar);
    const void *ctx;
    /* fextdot (nbody) along thetadot, from the tangents of the body velocities ws->vbar and of
     * the world poses ws->Rwbar, pwbar (sid_rnea_jvp_motion); NULL: forward mode not written */
    void (*forces_jvp)(const sid_model *m, const double *theta, sid_workspace *ws, const void *ctx,
                       const double *thetadot, sid_sv *fextdot);
} sid_fext_source;

/* Compliant contact of the spheres against the ground (contact.c). */
/* The workspace's per-sphere states of its last forces (ws->sphere), NULL without spheres. */
struct sid_sphere_state *sid_contact_carve(const sid_model *m, sid_carve *c);
extern const sid_fext_source sid_contact_compliant;
/* The forces a model's dynamics always includes: the compliant contact of a compliant model
 * with spheres, else none (NULL; hard contact acts through its own step). */
const sid_fext_source *sid_contact_source(const sid_model *m);

#endif
