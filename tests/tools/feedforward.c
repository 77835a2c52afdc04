/* feedforward.c — joint torques that make a robot follow a smooth excitation, by inverse
 * dynamics with its nominal parameters (computed-torque feed-forward, no feedback).
 *
 *   feedforward ROBOT T HZ Q0... > commands.csv
 *
 * Every moving one-dof joint k follows q_k(t) = q0_k + a_k (1 - cos(w_k t)) (at rest at t = 0),
 * with a_k 0.3 rad (the environment's FF_AMP if set; 0.01 m prismatic) and w_k = 2 pi (0.3 + 0.11 k) rad/s; the command is
 * tau = M(q) qdd + c(q, qd) + armature qdd + viscous qd + coulomb tanh(qd / smoothing), divided
 * by gear * kt. The CSV has t, q.*, qd.* (the desired motion) and u.* columns. A robot whose
 * parameters differ from the nominal ones drifts away from the desired motion: that drift is
 * what a fit explains. Used by tests/tools/mkpanda.sh. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "dynamics.h"
#include "kinematics.h"
#include "robot_load.h"

/* The desired motion at t (see the header). */
static void desired(const sid_model *m, char **q0, double t, double *q, double *qd, double *qdd)
{
    const double pi = 3.14159265358979323846;
    for (int k = 0; k < sid_model_ndof_joints(m); k++) {
        const int v = sid_model_dof_joint_vadr(m, k);
        const double amp = getenv("FF_AMP") ? atof(getenv("FF_AMP")) : 0.3;   /* rad; FF_AMP overrides */
        const double a = sid_model_dof_joint_is_prismatic(m, k) ? 0.01 : amp, w = 2 * pi * (0.3 + 0.11 * k);
        q[v] = atof(q0[k]) + a * (1 - cos(w * t));
        qd[v] = a * w * sin(w * t);
        qdd[v] = a * w * w * cos(w * t);
    }
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: feedforward ROBOT T HZ Q0...\n");
        return 2;
    }
    sid_model *m;
    double *theta;
    sid_error err = { 0 };
    if (robot_model(argv[1], &m, &theta, NULL, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 2;
    }
    const double T = atof(argv[2]), hz = atof(argv[3]);
    const int nd = sid_model_ndof_joints(m), nv = sid_model_nv(m);
    if (sid_model_nq(m) != nv || argc != 4 + nd) {
        fprintf(stderr, "feedforward: one-dof joints only, and one Q0 per moving joint (%d)\n", nd);
        return 2;
    }
    double q[64], qd[64], qdd[64], tau[64];
    sid_workspace *ws = sid_workspace_create(m);
    printf("t");
    for (int pass = 0; pass < 3; pass++)
        for (int k = 0; k < nd; k++) printf(",%s.%s", pass == 0 ? "q" : pass == 1 ? "qd" : "u", sid_model_dof_joint_name(m, k));
    printf("\n");
    for (long i = 0; i <= lround(T * hz); i++) {
        const double t = (double)i / hz;
        desired(m, argv + 4, t, q, qd, qdd);
        printf("%.6f", t);
        for (int k = 0; k < nd; k++) printf(",%.12g", q[sid_model_dof_joint_vadr(m, k)]);
        for (int k = 0; k < nd; k++) printf(",%.12g", qd[sid_model_dof_joint_vadr(m, k)]);
        /* a log's command is held until the next row: the torque of the interval's midpoint
         * makes the held command's error second order in the interval */
        desired(m, argv + 4, t + 0.5 / hz, q, qd, qdd);
        sid_kinematics(m, theta, ws, q);
        sid_rnea(m, theta, ws, qd, qdd, NULL, tau);
        for (int k = 0; k < nd; k++) {
            const sid_body *bd = &m->body[m->dof_body[k]];
            const int v = bd->vadr;
            const double *pd = theta + bd->p_dof;
            double F = tau[v] + pd[P_ARMATURE] * qdd[v] + pd[P_VISCOUS] * qd[v] + pd[P_COULOMB] * tanh(qd[v] / pd[P_SMOOTHING]);
            const double gain = bd->p_motor >= 0 ? theta[bd->p_motor + P_GEAR] * theta[bd->p_motor + P_KT] : 0;
            printf(",%.12g", gain != 0 ? F / gain : 0.0);
        }
        printf("\n");
    }
    sid_workspace_free(ws);
    sid_free(theta);
    sid_model_free(m);
    return 0;
}
