/* servo.c — the servo's generalised force and its derivatives (the model: servo.h). */
#include "servo.h"
#include "measure.h"

#include <math.h>

/* The servo of body bd at (q, v, u): its force f before saturation and the partial derivatives
 * of f with respect to q, v, gear, kp, kd and offset. */
typedef struct {
    double f, df_dq, df_dv, df_dgear, df_dkp, df_dkd, df_doffset;
} servo_pd;

static servo_pd servo_eval(const sid_body *bd, const double *theta, double q, double v, double u)
{
    const double G = theta[bd->p_motor + P_GEAR], *ps = theta + bd->p_servo, kd = ps[P_KD];
    servo_pd s = {0};
    if (bd->motor == SID_MOTOR_POSITION) {
        const double kp = ps[P_KP], off = theta[sid_body_offset_param(bd)], e = u - G * (q + off);   /* the encoder's q (measure.h) */
        s.f = kp * e - kd * G * v;
        s.df_dq = s.df_doffset = -kp * G;
        s.df_dv = -kd * G;
        s.df_dgear = -kp * (q + off) - kd * v;
        s.df_dkp = e;
        s.df_dkd = -G * v;
    } else {
        s.f = kd * (u - G * v);
        s.df_dv = -kd * G;
        s.df_dgear = -kd * v;
        s.df_dkd = u - G * v;
    }
    return s;
}

/* f_s = L tanh(f / L) (or f without a limit): its value, slope in f, and derivative in L. */
static double saturate(const sid_body *bd, const double *theta, double f, double *ds_df, double *ds_dL)
{
    *ds_df = 1, *ds_dL = 0;
    if (bd->p_servo_limit < 0) return f;
    const double L = theta[bd->p_servo_limit], x = f / L, t = tanh(x), sech2 = 1 - t * t;
    *ds_df = sech2;
    *ds_dL = t - x * sech2;
    return L * t;
}

void sid_servo_force(const sid_model *m, const double *theta, const double *q, const double *v, const double *u,
                     double *F)
{
    for (int b = 1; b < m->nbody; b++) {
        const sid_body *bd = &m->body[b];
        if (bd->p_servo < 0) continue;
        const servo_pd s = servo_eval(bd, theta, q[bd->qadr], v[bd->vadr], u[bd->vadr]);
        double ds, dL;
        F[bd->vadr] += theta[bd->p_motor + P_GEAR] * saturate(bd, theta, s.f, &ds, &dL);
    }
}

void sid_servo_force_vjp(const sid_fd_point *p, const double *Fbar, const sid_state_bar *bar)
{
    const sid_model *m = p->m;
    const double *theta = p->theta, *q = p->q, *v = p->v, *u = p->u;
    double *qbar = bar->qbar, *vbar = bar->vbar, *thetabar = bar->thetabar;
    for (int b = 1; b < m->nbody; b++) {
        const sid_body *bd = &m->body[b];
        if (bd->p_servo < 0) continue;
        const int i = bd->vadr;
        const double G = theta[bd->p_motor + P_GEAR];
        const servo_pd s = servo_eval(bd, theta, q[bd->qadr], v[i], u[i]);
        double ds, dL;
        const double fs = saturate(bd, theta, s.f, &ds, &dL);
        const double w = Fbar[i], wf = w * G * ds;   /* the adjoint of f */
        double *ts = thetabar + bd->p_servo;
        thetabar[bd->p_motor + P_GEAR] += w * fs + wf * s.df_dgear;
        ts[P_KD] += wf * s.df_dkd;
        if (bd->motor == SID_MOTOR_POSITION) {
            ts[P_KP] += wf * s.df_dkp;
            thetabar[sid_body_offset_param(bd)] += wf * s.df_doffset;
        }
        if (bd->p_servo_limit >= 0) thetabar[bd->p_servo_limit] += w * G * dL;
        if (qbar) qbar[bd->qadr] += wf * s.df_dq;
        if (vbar) vbar[i] += wf * s.df_dv;
    }
}

void sid_servo_force_ubar(const sid_fd_point *p, const double *Fbar, double *ubar)
{
    const sid_model *m = p->m;
    const double *theta = p->theta, *q = p->q, *v = p->v, *u = p->u;
    for (int b = 1; b < m->nbody; b++) {
        const sid_body *bd = &m->body[b];
        if (bd->p_servo < 0) continue;
        const int i = bd->vadr;
        const servo_pd s = servo_eval(bd, theta, q[bd->qadr], v[i], u[i]);
        double ds, dL;
        (void)saturate(bd, theta, s.f, &ds, &dL);
        /* f is kp u + ... (position) or kd u + ... (velocity) */
        const double df_du = bd->motor == SID_MOTOR_POSITION ? theta[bd->p_servo + P_KP] : theta[bd->p_servo + P_KD];
        ubar[i] += Fbar[i] * theta[bd->p_motor + P_GEAR] * ds * df_du;
    }
}

void sid_servo_force_jvp(const sid_fd_point *p, const sid_state_dir *dir, double *Fdot)
{
    const sid_model *m = p->m;
    const double *theta = p->theta, *q = p->q, *v = p->v, *u = p->u, *qdot = dir->qd, *vdot = dir->vd,
                 *thetadot = dir->thd;
    for (int b = 1; b < m->nbody; b++) {
        const sid_body *bd = &m->body[b];
        if (bd->p_servo < 0) continue;
        const int i = bd->vadr;
        const double G = theta[bd->p_motor + P_GEAR], Gd = thetadot[bd->p_motor + P_GEAR];
        const double *tsd = thetadot + bd->p_servo;
        const servo_pd s = servo_eval(bd, theta, q[bd->qadr], v[i], u[i]);
        double ds, dL;
        const double fs = saturate(bd, theta, s.f, &ds, &dL);
        double fd = s.df_dv * vdot[i] + s.df_dgear * Gd + s.df_dkd * tsd[P_KD];
        if (bd->motor == SID_MOTOR_POSITION) {
            fd += s.df_dkp * tsd[P_KP] + s.df_doffset * thetadot[sid_body_offset_param(bd)];
            if (qdot) fd += s.df_dq * qdot[bd->qadr];
        }
        double fsd = ds * fd;
        if (bd->p_servo_limit >= 0) fsd += dL * thetadot[bd->p_servo_limit];
        Fdot[i] += Gd * fs + G * fsd;
    }
}
