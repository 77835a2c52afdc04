/* simulate.c — replay a log's commands from its first logged state (sysid simulate).
 * Each log interval is simulated with its own length, split into equal substeps; the command
 * of the interval's first sample is held over it. */
#include "simulate.h"
#include "backlash.h"
#include "delay.h"
#include "measure.h"
#include "push.h"

#include <math.h>
#include <string.h>

void sid_sim_opts_defaults(sid_sim_opts *o)
{
    o->integrator = SID_EULER;
    o->substeps = 0;   /* not given: sid_step_choose chooses; one until then */
    o->max_dt = 0;
}

sid_status sid_sim_check(const sid_sim_opts *o, const sid_traj *tr, sid_error *err)
{
    /* in double: the counts a bad unit or option implies overflow an int */
    const double per = o->substeps > 0 ? o->substeps : 1;
    double total = 0;
    for (int k = 0; k + 1 < tr->n; k++) {
        const double dt = tr->t[k + 1] - tr->t[k];
        const double n = o->max_dt > 0 ? fmax(per, ceil(dt / o->max_dt - 1e-9)) : per;
        if (!(n <= SID_MAX_SUBSTEPS))
            return sid_error_set(err, SID_ERR_INPUT,
                                 "the log interval at t = %.17g s (sample %d, %g s long) needs %.3g simulation steps "
                                 "(--substeps %d, --max-dt %g), more than %g: give fewer --substeps or a larger "
                                 "--max-dt, or check the unit of the time column (seconds expected)",
                                 tr->t[k], k + 1, dt, n, (int)per, o->max_dt, SID_MAX_SUBSTEPS);
        total += n;
    }
    if (!(total <= SID_MAX_LOG_STEPS))
        return sid_error_set(err, SID_ERR_INPUT,
                             "the log needs %.3g simulation steps (--substeps %d, --max-dt %g), more than %g: give fewer "
                             "--substeps or a larger --max-dt, or check the unit of the time column (seconds expected)",
                             total, (int)per, o->max_dt, SID_MAX_LOG_STEPS);
    return SID_OK;
}

int sid_substeps(const sid_sim_opts *o, double dt)
{
    int n = o->substeps > 0 ? o->substeps : 1;
    if (o->max_dt > 0) {
        const double k = ceil(dt / o->max_dt - 1e-9);
        if (k > n) n = (int)k;
    }
    return n;
}

/* Logged (measured) q at sample k minus the encoder offsets: the simulator's q. */
void sid_traj_state_q(const sid_model *m, const double *theta, const sid_traj *tr, int k, double *q)
{
    memcpy(q, tr->q + (size_t)k * (size_t)m->nqo, sizeof(double) * (size_t)m->nqo);
    sid_unmeasure_q(m, theta, q);
}

sid_status sid_simulate(const sid_model *m, const double *theta, const sid_traj *tr, const sid_sim_opts *o,
                        double *q_out, double *v_out, sid_error *err)
{
    return sid_simulate_from(m, theta, tr, o, NULL, NULL, q_out, v_out, err);
}

sid_status sid_simulate_from(const sid_model *m, const double *theta, const sid_traj *tr, const sid_sim_opts *o,
                             const double *q0, const double *v0, double *q_out, double *v_out, sid_error *err)
{
    /* the state (nq, nv) holds the hidden motor sides of backlash joints after the logged (nqo, nvo) */
    const int nq = m->nq, nv = m->nv, nqo = m->nqo, nvo = m->nvo;
    if (tr->nq != nqo || tr->nv != nvo)
        return sid_error_set(err, SID_ERR_INPUT, "log has %d positions and %d velocities, the robot %d and %d",
                             tr->nq, tr->nv, nqo, nvo);
    if (tr->n < 1) return sid_error_set(err, SID_ERR_INPUT, "log has no samples");
    sid_status c = sid_sim_check(o, tr, err);
    if (c) return c;
    sid_workspace *ws = sid_workspace_create(m);
    double *buf = sid_alloc(sizeof(double) * (size_t)(2 * nq + 2 * nv + 1));
    sid_status s = SID_OK;
    if (!ws || !buf) {
        s = sid_error_set(err, SID_ERR_NOMEM, "out of memory");
        goto done;
    }
    double *q = buf, *v = q + nq, *q1 = v + nv, *v1 = q1 + nq;
    if (q0) memcpy(q, q0, sizeof(double) * (size_t)nqo);
    else sid_traj_state_q(m, theta, tr, 0, q);
    if (v0) memcpy(v, v0, sizeof(double) * (size_t)nvo);
    else sid_traj_velocity(m, tr, 0, v);
    sid_backlash_start(m, buf);
    for (int k = 0;; k++) {
        memcpy(q_out + (size_t)k * (size_t)nqo, q, sizeof(double) * (size_t)nqo);
        sid_measure_q(m, theta, q_out + (size_t)k * (size_t)nqo);
        memcpy(v_out + (size_t)k * (size_t)nvo, v, sizeof(double) * (size_t)nvo);
        if (k == tr->n - 1) break;
        double h;
        const int nsub = sid_interval_substeps(o, tr, k, &h);
        const double *u = sid_delay_u(m, theta, tr, k, ws);
        ws->push = sid_push_at(tr, m->nbody, k);
        for (int j = 0; j < nsub; j++) {
            if ((s = sid_step(m, theta, ws, o->integrator, h, q, v, u, q1, v1, err))) {
                sid_error_prefix(err, "t = %g s (sample %d)", tr->t[k], k);
                goto done;
            }
            memcpy(q, q1, sizeof(double) * (size_t)nq);
            memcpy(v, v1, sizeof(double) * (size_t)nv);
        }
    }
done:
    sid_free(buf);
    sid_workspace_free(ws);
    return s;
}
