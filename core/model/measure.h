/* measure.h — what an encoder reads: a logged position is the model's coordinate plus the
 * joint's encoder offset (theta's joints.NAME.offset); velocities are read as they are.
 * Written once here, with its adjoint and tangent, for every caller: the loss and its rows,
 * a window's start and prediction, simulate, servos (their setpoint is in encoder terms),
 * excite, and the report page (through sid_model_q_from_measured, sid.h). Internal to core/. */
#ifndef SID_MEASURE_H
#define SID_MEASURE_H

#include "model.h"

/* theta's index of a body's encoder offset, or -1 (no offset: a fixed, free or root body). */
static inline int sid_body_offset_param(const sid_body *bd) { return bd->p_dof >= 0 ? bd->p_dof + P_OFFSET : -1; }
static inline int sid_measure_offset_param(const sid_model *m, int b) { return sid_body_offset_param(&m->body[b]); }

/* Body b's encoder offset at theta (0 without one). */
static inline double sid_measure_offset(const sid_model *m, const double *theta, int b)
{
    const int i = sid_measure_offset_param(m, b);
    return i >= 0 ? theta[i] : 0;
}

/* In place, on the logged coordinates (nqo): q becomes what the encoders read, q + offset.
 * Affine, so it also turns a model-minus-logged difference into measured-minus-logged. */
void sid_measure_q(const sid_model *m, const double *theta, double *q);
/* In place: measured positions become the model's, q - offset. */
void sid_unmeasure_q(const sid_model *m, const double *theta, double *q);
/* Adjoints of the two: with the output's adjoint qbar (which is also the input's), thetabar
 * gets the offsets' share: += qbar for sid_measure_q, -= qbar for sid_unmeasure_q. */
void sid_measure_q_vjp(const sid_model *m, const double *qbar, double *thetabar);
void sid_unmeasure_q_vjp(const sid_model *m, const double *qbar, double *thetabar);
/* Tangent of sid_unmeasure_q in theta: qdot -= the offsets' thetadot (a motor side of a
 * backlash joint, which starts at its link's, too). */
void sid_unmeasure_q_jvp(const sid_model *m, const double *thetadot, double *qdot);

#endif
