/* actuator_damping.c — an actuator's damping and its derivatives in theta (actuator_damping.h). */
#include "actuator_damping.h"

/* Which actuator body bd has, for its damping. */
enum { NONE, SERVO, VOLTAGE };

static int kind(const sid_body *bd)
{
    if (bd->p_servo >= 0) return SERVO;
    return bd->p_motor >= 0 && bd->motor == SID_MOTOR_VOLTAGE ? VOLTAGE : NONE;
}

int sid_actuator_damping_dof(const sid_body *bd)
{
    const int k = kind(bd);
    return k == SERVO ? bd->vadr : k == VOLTAGE ? sid_drive_vadr(bd) : -1;
}

double sid_actuator_damping(const sid_body *bd, const double *theta)
{
    const int k = kind(bd);
    if (k == NONE) return 0;
    const double *pm = theta + bd->p_motor, G = pm[P_GEAR];
    if (k == SERVO) return G * G * theta[bd->p_servo + P_KD];
    return G * G * pm[P_KT] * pm[P_KE] / pm[P_RESISTANCE];
}

void sid_actuator_damping_vjp(const sid_body *bd, const double *theta, double w, double *thetabar)
{
    const int k = kind(bd);
    if (k == NONE) return;
    const double *pm = theta + bd->p_motor, G = pm[P_GEAR];
    double *tm = thetabar + bd->p_motor;
    if (k == SERVO) {
        const double kd = theta[bd->p_servo + P_KD];
        tm[P_GEAR] += w * 2 * G * kd;
        thetabar[bd->p_servo + P_KD] += w * G * G;
        return;
    }
    const double kt = pm[P_KT], ke = pm[P_KE], R = pm[P_RESISTANCE];
    tm[P_GEAR] += w * 2 * G * kt * ke / R;
    tm[P_KT] += w * G * G * ke / R;
    tm[P_KE] += w * G * G * kt / R;
    tm[P_RESISTANCE] -= w * G * G * kt * ke / (R * R);
}

double sid_actuator_damping_jvp(const sid_body *bd, const double *theta, const double *thetadot)
{
    const int k = kind(bd);
    if (k == NONE) return 0;
    const double *pm = theta + bd->p_motor, *tm = thetadot + bd->p_motor, G = pm[P_GEAR];
    if (k == SERVO) {
        const double kd = theta[bd->p_servo + P_KD];
        return 2 * G * kd * tm[P_GEAR] + G * G * thetadot[bd->p_servo + P_KD];
    }
    const double kt = pm[P_KT], ke = pm[P_KE], R = pm[P_RESISTANCE];
    return (2 * G * kt * ke * tm[P_GEAR] + G * G * ke * tm[P_KT] + G * G * kt * tm[P_KE]) / R -
           G * G * kt * ke * tm[P_RESISTANCE] / (R * R);
}
