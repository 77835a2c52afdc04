/* model.h — the model's internal layout, shared by the core's own files only.
 * Bodies are in topological order (parent < child); body 0 is the root. Each field of a body
 * that is a parameter lives in theta at the index stored here (-1 when absent). */
#ifndef SID_MODEL_H
#define SID_MODEL_H

#include "sid.h"

/* Offsets inside a body's parameter blocks. */
enum { P_MASS = 0, P_COM = 1, P_INERTIA = 4, P_NINERTIAL = 10 };      /* p_inertial block */
enum { P_XYZ = 0, P_RPY = 3, P_NORIGIN = 6 };                          /* p_origin block */
enum { P_ARMATURE = 0, P_VISCOUS, P_COULOMB, P_SMOOTHING, P_OFFSET, P_NDOF };   /* p_dof block */
enum { P_STRIBECK_TORQUE = 0, P_STRIBECK_VELOCITY };                   /* p_stribeck block */
enum { P_GEAR = 0, P_KT, P_KE, P_RESISTANCE };                         /* p_motor block */

typedef struct {
    int parent, link, joint;
    sid_joint_type type;
    double axis[3];           /* unit, in the joint (= child body) frame */
    int qadr, vadr;           /* -1 for fixed joints and the root */
    int p_inertial;           /* mass, com[3], inertia[6]; -1 for a massless link */
    int p_origin;             /* xyz[3], rpy[3]; -1 for the root */
    int p_dof;                /* armature, viscous, coulomb, smoothing, offset; -1 if fixed */
    int p_stribeck;           /* torque, velocity; -1 if absent */
    int p_motor;              /* gear, kt [, ke, resistance]; -1 if no motor */
    sid_motor_input motor;
} sid_body;

struct sid_model {
    int nbody, nq, nv, nparam;
    int p_gravity;
    sid_body *body;
    sid_param_info *param;
    int ndofj;                /* moving joints, in q order */
    int *dof_body;            /* (ndofj) body of each moving joint */
    int *dof_parent;          /* (nv) velocity index of the nearest moving ancestor, -1 at the root */
    char (*dof_name)[SID_MAX_NAME];
};

#endif
