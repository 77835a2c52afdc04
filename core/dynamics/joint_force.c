/* joint_force.c — generalised forces of motors and joint friction (everything at a joint
 * except viscous damping, which the integrator treats implicitly), and their adjoint.
 *   motor, torque or current input: tau_m = gear kt u
 *   motor, voltage input:           tau_m = gear kt (u - ke gear v) / R
 *   friction: tau_f = (coulomb + s(v)) tanh(v / smoothing),  s(v) = st exp(-(v / sv)^2)
 *   F = tau_m + torque_bias - tau_f                                       (docs/formats.md)
 * Direction and load (where given): coulomb becomes
 *   c(v) = c+ (1 + t) / 2 + c- (1 - t) / 2 + mu_L |tau_m|,  t = tanh(v / smoothing),
 * a level >= 0 times t, whose sign is v's, so tau_f v >= 0: never injects energy. |tau_m| is
 * exact (its derivative sign(tau_m), 0 at tau_m = 0: a kink of measure zero).
 * A servo's torque depends on q too: servo.c adds it. On a backlash joint all of it acts on the
 * motor side, at the motor's velocity (backlash.h). */
#include "joint_force.h"

#include <math.h>

void sid_joint_force(const sid_model *m, const double *theta, const double *v, const double *u, double *F)
{
    if (m->nfree)   /* a free joint has neither motor nor friction */
        for (int i = 0; i < m->nv; i++) F[i] = 0;
    for (int b = 1; b < m->nbody; b++) {
        const sid_body *bd = &m->body[b];
        if (bd->p_dof < 0) continue;
        const int i = sid_drive_vadr(bd), iu = bd->vadr;   /* backlash: forces on the motor side */
        const double *pd = theta + bd->p_dof;
        double tau = 0;
        if (bd->p_motor >= 0 && bd->p_servo < 0) {   /* a servo's torque is servo.c's */
            const double *pm = theta + bd->p_motor;
            tau = bd->motor == SID_MOTOR_VOLTAGE
                      ? pm[P_GEAR] * pm[P_KT] * (u[iu] - pm[P_KE] * pm[P_GEAR] * v[i]) / pm[P_RESISTANCE]
                      : pm[P_GEAR] * pm[P_KT] * u[iu];
        }
        double amp = pd[P_COULOMB];
        const double th = tanh(v[i] / pd[P_SMOOTHING]);
        if (bd->p_coulneg >= 0) amp = amp * (1 + th) / 2 + theta[bd->p_coulneg] * (1 - th) / 2;
        if (bd->p_fload >= 0) amp += theta[bd->p_fload] * fabs(tau);
        if (bd->p_stribeck >= 0) {
            const double *ps = theta + bd->p_stribeck, x = v[i] / ps[P_STRIBECK_VELOCITY];
            amp += ps[P_STRIBECK_TORQUE] * exp(-x * x);
        }
        /* dry friction is a constraint of the step instead (dry_friction.h) */
        if (bd->bl_v >= 0) F[bd->vadr] = 0;
        F[i] = tau + pd[P_TORQUE_BIAS] - (bd->dry ? 0 : amp * th);
    }
}

void sid_joint_force_vjp(const sid_fd_point *p, const double *Fbar, const sid_state_bar *bar)
{
    const sid_model *m = p->m;
    const double *theta = p->theta, *v = p->v, *u = p->u;
    double *vbar = bar->vbar, *thetabar = bar->thetabar;
    for (int b = 1; b < m->nbody; b++) {
        const sid_body *bd = &m->body[b];
        if (bd->p_dof < 0) continue;
        const int i = sid_drive_vadr(bd), iu = bd->vadr;   /* backlash: forces on the motor side */
        double w = Fbar[i];
        const double *pd = theta + bd->p_dof;
        double *td = thetabar + bd->p_dof;
        td[P_TORQUE_BIAS] += w;
        const double sigma = pd[P_SMOOTHING], th = tanh(v[i] / sigma), sech2 = 1 - th * th;
        double tau = 0;   /* the motor's torque, which the friction's load term scales */
        if (bd->p_fload >= 0 && bd->p_motor >= 0 && bd->p_servo < 0) {
            const double *pm = theta + bd->p_motor;
            tau = bd->motor == SID_MOTOR_VOLTAGE
                      ? pm[P_GEAR] * pm[P_KT] * (u[iu] - pm[P_KE] * pm[P_GEAR] * v[i]) / pm[P_RESISTANCE]
                      : pm[P_GEAR] * pm[P_KT] * u[iu];
        }
        const double wf = w;   /* the friction's output adjoint */
        if (bd->p_fload >= 0 && !bd->dry) {   /* F -= mu_L |tau| th: tau's adjoint (dry: the QP's bounds) */
            thetabar[bd->p_fload] -= wf * fabs(tau) * th;
            w -= wf * theta[bd->p_fload] * (tau > 0 ? 1 : tau < 0 ? -1 : 0) * th;
        }
        if (bd->p_motor >= 0 && bd->p_servo < 0) {
            const double *pm = theta + bd->p_motor;
            double *tm = thetabar + bd->p_motor;
            const double G = pm[P_GEAR], kt = pm[P_KT];
            if (bd->motor == SID_MOTOR_VOLTAGE) {
                const double ke = pm[P_KE], R = pm[P_RESISTANCE], e = u[iu] - ke * G * v[i];
                tm[P_GEAR] += w * (kt * e - G * kt * ke * v[i]) / R;
                tm[P_KT] += w * G * e / R;
                tm[P_KE] -= w * G * G * kt * v[i] / R;
                tm[P_RESISTANCE] -= w * G * kt * e / (R * R);
                if (vbar) vbar[i] -= w * G * G * kt * ke / R;
            } else {
                tm[P_GEAR] += w * kt * u[iu];
                tm[P_KT] += w * G * u[iu];
            }
        }
        if (bd->dry) continue;   /* no smooth friction term (Stribeck needs the smooth model) */
        w = wf;
        /* F -= amp tanh(v / sigma); ampt = d(amp th) / d th */
        double amp = pd[P_COULOMB], damp_dv = 0, ampt;
        if (bd->p_coulneg >= 0) {
            const double cp = pd[P_COULOMB], cn = theta[bd->p_coulneg];
            amp = cp * (1 + th) / 2 + cn * (1 - th) / 2;
            td[P_COULOMB] -= w * (1 + th) / 2 * th;
            thetabar[bd->p_coulneg] -= w * (1 - th) / 2 * th;
        } else {
            td[P_COULOMB] -= w * th;
        }
        if (bd->p_fload >= 0) amp += theta[bd->p_fload] * fabs(tau);
        if (bd->p_stribeck >= 0) {
            const double *ps = theta + bd->p_stribeck;
            double *ts = thetabar + bd->p_stribeck;
            const double sv = ps[P_STRIBECK_VELOCITY], x = v[i] / sv, e = exp(-x * x);
            amp += ps[P_STRIBECK_TORQUE] * e;
            damp_dv = ps[P_STRIBECK_TORQUE] * e * (-2 * x / sv);
            ts[P_STRIBECK_TORQUE] -= w * e * th;
            ts[P_STRIBECK_VELOCITY] -= w * ps[P_STRIBECK_TORQUE] * e * (2 * x * x / sv) * th;
        }
        ampt = bd->p_coulneg >= 0 ? amp + th * (pd[P_COULOMB] - theta[bd->p_coulneg]) / 2 : amp;
        td[P_SMOOTHING] -= w * ampt * sech2 * (-v[i] / (sigma * sigma));
        if (vbar) vbar[i] -= w * (damp_dv * th + ampt * sech2 / sigma);
    }
}

void sid_joint_force_ubar(const sid_model *m, const double *theta, const double *v, const double *u,
                          const double *Fbar, double *ubar)
{
    for (int b = 1; b < m->nbody; b++) {
        const sid_body *bd = &m->body[b];
        if (bd->p_dof < 0 || bd->p_motor < 0 || bd->p_servo >= 0) continue;
        const int i = sid_drive_vadr(bd), iu = bd->vadr;
        double w = Fbar[i];
        if (bd->p_fload >= 0 && !bd->dry) {   /* F -= mu_L |tau| th: the load term also moves with u */
            const double tau = sid_motor_torque(bd, theta, v[i], u[iu]), th = tanh(v[i] / theta[bd->p_dof + P_SMOOTHING]);
            w -= Fbar[i] * theta[bd->p_fload] * (tau > 0 ? 1 : tau < 0 ? -1 : 0) * th;
        }
        ubar[iu] += w * sid_motor_torque_du(bd, theta);
    }
}

void sid_joint_force_jvp(const sid_fd_point *p, const sid_state_dir *dir, double *Fdot)
{
    const sid_model *m = p->m;
    const double *theta = p->theta, *v = p->v, *u = p->u, *vdot = dir->vd, *thetadot = dir->thd;
    for (int b = 1; b < m->nbody; b++) {
        const sid_body *bd = &m->body[b];
        if (bd->p_dof < 0) continue;   /* fixed and free joints: no joint force */
        const int i = sid_drive_vadr(bd), iu = bd->vadr;   /* backlash: forces on the motor side */
        const double *pd = theta + bd->p_dof, *td = thetadot + bd->p_dof;
        double d = td[P_TORQUE_BIAS], tau = 0, taud = 0;
        if (bd->p_motor >= 0 && bd->p_servo < 0) {
            const double *pm = theta + bd->p_motor, *tm = thetadot + bd->p_motor;
            const double G = pm[P_GEAR], kt = pm[P_KT];
            if (bd->motor == SID_MOTOR_VOLTAGE) {
                const double ke = pm[P_KE], R = pm[P_RESISTANCE], e = u[iu] - ke * G * v[i];
                tau = G * kt * e / R;
                taud = tm[P_GEAR] * (kt * e - G * kt * ke * v[i]) / R + tm[P_KT] * G * e / R -
                       tm[P_KE] * G * G * kt * v[i] / R - tm[P_RESISTANCE] * G * kt * e / (R * R) -
                       vdot[i] * G * G * kt * ke / R;
            } else {
                tau = G * kt * u[iu];
                taud = tm[P_GEAR] * kt * u[iu] + tm[P_KT] * G * u[iu];
            }
            d += taud;
        }
        if (bd->bl_v >= 0) Fdot[bd->vadr] = 0;
        if (bd->dry) {   /* no smooth friction term */
            Fdot[i] = d;
            continue;
        }
        const double sigma = pd[P_SMOOTHING], th = tanh(v[i] / sigma), sech2 = 1 - th * th;
        double amp = pd[P_COULOMB], ampd = td[P_COULOMB], damp_dv = 0, ampt;
        if (bd->p_coulneg >= 0) {
            const double cp = pd[P_COULOMB], cn = theta[bd->p_coulneg];
            amp = cp * (1 + th) / 2 + cn * (1 - th) / 2;
            ampd = td[P_COULOMB] * (1 + th) / 2 + thetadot[bd->p_coulneg] * (1 - th) / 2;
        }
        if (bd->p_fload >= 0) {
            const double mu = theta[bd->p_fload];
            amp += mu * fabs(tau);
            ampd += thetadot[bd->p_fload] * fabs(tau) + mu * (tau > 0 ? 1 : tau < 0 ? -1 : 0) * taud;
        }
        if (bd->p_stribeck >= 0) {
            const double *ps = theta + bd->p_stribeck, *ts = thetadot + bd->p_stribeck;
            const double sv = ps[P_STRIBECK_VELOCITY], x = v[i] / sv, e = exp(-x * x);
            amp += ps[P_STRIBECK_TORQUE] * e;
            damp_dv = ps[P_STRIBECK_TORQUE] * e * (-2 * x / sv);
            ampd += ts[P_STRIBECK_TORQUE] * e + ts[P_STRIBECK_VELOCITY] * ps[P_STRIBECK_TORQUE] * e * (2 * x * x / sv);
        }
        ampt = bd->p_coulneg >= 0 ? amp + th * (pd[P_COULOMB] - theta[bd->p_coulneg]) / 2 : amp;
        /* d(tanh(v / sigma)) = sech2 (vdot / sigma - v sigmadot / sigma^2) */
        const double thd = sech2 * (vdot[i] / sigma - v[i] * td[P_SMOOTHING] / (sigma * sigma));
        d -= ampd * th + damp_dv * vdot[i] * th + ampt * thd;
        Fdot[i] = d;
    }
}

double sid_motor_torque(const sid_body *bd, const double *theta, double v, double u)
{
    if (bd->p_motor < 0 || bd->p_servo >= 0) return 0;
    const double *pm = theta + bd->p_motor;
    return bd->motor == SID_MOTOR_VOLTAGE ? pm[P_GEAR] * pm[P_KT] * (u - pm[P_KE] * pm[P_GEAR] * v) / pm[P_RESISTANCE]
                                          : pm[P_GEAR] * pm[P_KT] * u;
}

double sid_motor_torque_vjp(const sid_body *bd, const double *theta, double v, double u, double w, double *thetabar)
{
    if (bd->p_motor < 0 || bd->p_servo >= 0) return 0;
    const double *pm = theta + bd->p_motor;
    double *tm = thetabar + bd->p_motor;
    const double G = pm[P_GEAR], kt = pm[P_KT];
    if (bd->motor == SID_MOTOR_VOLTAGE) {
        const double ke = pm[P_KE], R = pm[P_RESISTANCE], e = u - ke * G * v;
        tm[P_GEAR] += w * (kt * e - G * kt * ke * v) / R;
        tm[P_KT] += w * G * e / R;
        tm[P_KE] -= w * G * G * kt * v / R;
        tm[P_RESISTANCE] -= w * G * kt * e / (R * R);
        return -w * G * G * kt * ke / R;
    }
    tm[P_GEAR] += w * kt * u;
    tm[P_KT] += w * G * u;
    return 0;
}

double sid_motor_torque_du(const sid_body *bd, const double *theta)
{
    if (bd->p_motor < 0 || bd->p_servo >= 0) return 0;
    const double *pm = theta + bd->p_motor;
    return bd->motor == SID_MOTOR_VOLTAGE ? pm[P_GEAR] * pm[P_KT] / pm[P_RESISTANCE] : pm[P_GEAR] * pm[P_KT];
}

double sid_motor_torque_jvp(const sid_body *bd, const double *theta, double v, double u, double vdot,
                            const double *thetadot)
{
    if (bd->p_motor < 0 || bd->p_servo >= 0) return 0;
    const double *pm = theta + bd->p_motor, *tm = thetadot + bd->p_motor;
    const double G = pm[P_GEAR], kt = pm[P_KT];
    if (bd->motor != SID_MOTOR_VOLTAGE) return tm[P_GEAR] * kt * u + tm[P_KT] * G * u;
    const double ke = pm[P_KE], R = pm[P_RESISTANCE], e = u - ke * G * v;
    return tm[P_GEAR] * (kt * e - G * kt * ke * v) / R + tm[P_KT] * G * e / R - tm[P_KE] * G * G * kt * v / R -
           tm[P_RESISTANCE] * G * kt * e / (R * R) - vdot * G * G * kt * ke / R;
}
