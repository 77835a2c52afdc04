/* excite.c — an excitation command optimised for what a fit learns (excite.h says what and why).
 *
 * One evaluation of a coefficient vector c: build the command shape, find the largest amplitude
 * whose simulation stays within the limits (feasible by construction, so no penalty weight to
 * tune), then sum the noise-scaled J^T J over the fit's windows with each start state
 * eliminated, and score it. The optimiser (BOBYQA) sees only that score. */
#include "excite.h"
#include "measure.h"

#include <math.h>
#include <nlopt.h>
#include <string.h>

#include "linalg.h"
#include "model.h"
#include "normal.h"
#include "problem.h"

static const double PI = 3.14159265358979323846;

/* Everything one design evaluation needs, allocated once per sid_excite_run. */
typedef struct {
    const sid_model *m;
    const double *theta;
    const sid_excite_opts *o;
    int n, nq, nv, nc;         /* samples, coordinates, coefficients */
    int *body;                 /* (nv) body of velocity coordinate i's joint */
    double *u_hold;            /* (nv) */
    double *gain, *amp;        /* (nv) command per unit of the series, its amplitude A_i */
    double *basis;             /* (n x 2H) e(t) sin, e(t) cos of each harmonic at each sample */
    double *shape;             /* (n x nv) the series at the current coefficients */
    sid_traj *tr;              /* the current design */
    double *qs, *vs;           /* (n x nq), (n x nv) its simulation */
    double *F, *W;             /* (nfree x nfree) information and scratch (4 nfree^2 + 2 nfree) */
    double use0;               /* the limits the hold alone uses (s = 0) */
    double s_prev;             /* the last feasible amplitude, where the next search starts */
    double best_f;
    double *best_c;
    int evals;
    sid_status status;         /* first hard error (not a diverged candidate) */
    sid_error err;
    sid_error sim_err;         /* why the last simulation failed (simulate_at) */
} design;

/* splitmix64: a reproducible stream of uniform numbers in [0, 1) on every platform. */
static double uniform(unsigned long long *s)
{
    unsigned long long z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-53;
}

static double envelope(double t, double T, double ramp)
{
    if (ramp <= 0) return 1;
    if (t < ramp) return pow(sin(PI * t / (2 * ramp)), 2);
    if (t > T - ramp) return pow(sin(PI * fmax(T - t, 0) / (2 * ramp)), 2);
    return 1;
}

static sid_status check_model(const sid_model *m, const sid_excite_opts *o, int *body, sid_error *err)
{
    if (m->nfree || m->nbacklash)
        return sid_error_set(err, SID_ERR_INPUT, "excite: %s are not supported (one-dof joints only)",
                             m->nfree ? "free joints" : "backlash joints");
    if (!(o->duration > 0) || !(o->dt > 0) || o->dt > o->duration / 4)
        return sid_error_set(err, SID_ERR_INPUT, "excite: duration %g s and interval %g s (need duration >= 4 intervals)",
                             o->duration, o->dt);
    if (o->harmonics < 1 || !(o->f0 > 0)) return sid_error_set(err, SID_ERR_INPUT, "excite: need harmonics >= 1 and f0 > 0");
    if (!(o->noise_q > 0) || !(o->noise_qd >= 0)) return sid_error_set(err, SID_ERR_INPUT, "excite: noise levels must be positive");
    if (o->nfree < 1 || o->nfree > SID_MAX_FREE) return sid_error_set(err, SID_ERR_INPUT, "excite: %d free parameters", o->nfree);
    for (int k = 0; k < m->ndofj; k++) {
        const int b = m->dof_body[k], i = m->body[b].vadr;
        const sid_motor_input in = m->body[b].motor;
        if (in != SID_MOTOR_TORQUE && in != SID_MOTOR_CURRENT && in != SID_MOTOR_POSITION)
            return sid_error_set(err, SID_ERR_INPUT, "excite: joint '%s' %s; every moving joint needs a torque, current "
                                 "or position-servo motor", m->dof_name[k], in == SID_MOTOR_NONE ? "has no motor" :
                                 "has a voltage motor or velocity servo, which excite does not drive yet");
        body[i] = b;
        const int iq = m->body[b].qadr;
        if (!(o->q_lo[iq] < o->q0[iq] && o->q0[iq] < o->q_hi[iq]))
            return sid_error_set(err, SID_ERR_INPUT, "excite: joint '%s': start %g is not inside its limits [%g, %g]",
                                 m->dof_name[k], o->q0[iq], o->q_lo[iq], o->q_hi[iq]);
        if (!(o->qd_max[i] > 0) || !(o->tau_max[i] > 0))
            return sid_error_set(err, SID_ERR_INPUT, "excite: joint '%s': velocity and torque limits must be positive",
                                 m->dof_name[k]);
    }
    return SID_OK;
}

/* Joint torque of coordinate i's motor at sample k of the simulation (servo: its PD law). */
static double motor_torque(const design *d, int k, int i)
{
    const sid_body *bd = &d->m->body[d->body[i]];
    const double *th = d->theta, u = d->tr->u[(size_t)k * d->nv + i];
    const double G = th[bd->p_motor + P_GEAR];
    if (bd->motor != SID_MOTOR_POSITION) return G * th[bd->p_motor + P_KT] * u;
    const double q = d->qs[(size_t)k * d->nq + bd->qadr], v = d->vs[(size_t)k * d->nv + i];   /* q as measured */
    double f = th[bd->p_servo + P_KP] * (u - G * q) - th[bd->p_servo + P_KD] * G * v;
    if (bd->p_servo_limit >= 0) f = th[bd->p_servo_limit] * tanh(f / th[bd->p_servo_limit]);
    return G * f;
}

static double offset_of(const design *d, int i) { return sid_measure_offset(d->m, d->theta, d->body[i]); }

/* How much of each kind of limit a simulation used (position, velocity, torque), and the
 * motor (index into d->body) that used the most of it. */
typedef struct {
    double use[3];
    int at[3];
} limit_use;

/* Fill the design's commands at amplitude s from d->shape and simulate; the largest fraction
 * of a limit used (HUGE_VAL if the simulation diverged), per kind into lu (may be NULL). */
static double simulate_at(design *d, double s, limit_use *lu)
{
    const sid_excite_opts *o = d->o;
    for (int k = 0; k < d->n; k++)
        for (int i = 0; i < d->nv; i++)
            d->tr->u[(size_t)k * d->nv + i] = d->u_hold[i] + s * d->gain[i] * d->amp[i] * d->shape[(size_t)k * d->nv + i];
    d->sim_err = (sid_error){0};
    if (sid_simulate(d->m, d->theta, d->tr, &o->loss.sim, d->qs, d->vs, &d->sim_err) != SID_OK) return HUGE_VAL;
    limit_use u = {{0, 0, 0}, {0, 0, 0}};
    for (int k = 0; k < d->n; k++)
        for (int i = 0; i < d->nv; i++) {
            const int iq = d->m->body[d->body[i]].qadr;
            const double q = d->qs[(size_t)k * d->nq + iq] - offset_of(d, i), q0 = o->q0[iq];
            const double x[3] = {q >= q0 ? (q - q0) / (o->q_hi[iq] - q0) : (q0 - q) / (q0 - o->q_lo[iq]),
                                 fabs(d->vs[(size_t)k * d->nv + i]) / o->qd_max[i],
                                 fabs(motor_torque(d, k, i)) / o->tau_max[i]};
            for (int c = 0; c < 3; c++)
                if (x[c] > u.use[c]) u.use[c] = x[c], u.at[c] = i;
        }
    if (lu) *lu = u;
    const double use = fmax(u.use[0], fmax(u.use[1], u.use[2]));
    return isfinite(use) ? use : HUGE_VAL;
}

/* The largest amplitude within the margin, the design left simulated at it. The use of the
 * limits grows about linearly with s (exactly for the torque of a torque motor), so a few steps
 * of regula falsi on use(s) = margin find it to a percent; a diverged simulation halves s. */
static double feasible_scale(design *d)
{
    const double M = SID_EXCITE_MARGIN;
    /* g = use - M: lo feasible (glo <= 0), hi not (ghi > 0); Illinois: a side kept twice has its g
     * halved. s = 0 is the hold (d->use0, feasible); the search starts from the last design's s. */
    double lo = 0, glo = d->use0 - M, hi = 0, ghi = 0, s = d->s_prev, last = -1;
    int side = 0;
    for (int it = 0; it < 16; it++) {
        const double g = simulate_at(d, s, NULL) - M;
        last = s;
        if (g <= 0) {
            lo = s, glo = g;
            if (side == -1 && hi > 0) ghi *= 0.5;
            side = -1;
        } else {
            hi = s, ghi = g;
            if (side == 1) glo *= 0.5;
            side = 1;
        }
        if (lo > 0 && glo > -0.01 * M && side == -1) break;
        if (hi == 0) s = lo * fmin((M - d->use0) / fmax(glo + M - d->use0, 1e-12), 8);   /* not bracketed: proportional */
        else if (!(ghi < 1e300)) s = lo > 0 ? 0.5 * (lo + hi) : 0.1 * hi;   /* diverged: back off fast */
        else s = lo - glo * (hi - lo) / (ghi - glo);
        if (hi > 0 && !(s > lo && s < hi)) s = 0.5 * (lo + hi);
    }
    if (last != lo) simulate_at(d, lo, NULL);
    if (lo > 0) d->s_prev = lo;
    return lo;
}

static void shape_from(design *d, const double *c)
{
    const int H = d->o->harmonics;
    for (int k = 0; k < d->n; k++)
        for (int i = 0; i < d->nv; i++) {
            const double *b = d->basis + (size_t)k * 2 * H, *ci = c + (size_t)i * 2 * H;
            double v = 0;
            for (int j = 0; j < 2 * H; j++) v += ci[j] * b[j];
            d->shape[(size_t)k * d->nv + i] = v / H;
        }
}

/* After window w's rows: eliminate its start state (normal.h). */
static sid_status eliminate(void *ctx, sid_normal_sums *S, int w, sid_error *err)
{
    (void)ctx, (void)w, (void)err;
    if (S->ns) sid_normal_eliminate_start(S);
    return SID_OK;
}

/* The noise-scaled information of tr into F (nfree x nfree), start states eliminated. */
static sid_status information(const sid_model *m, const double *theta, const sid_traj *tr, const sid_excite_opts *o,
                              double *F, sid_error *err)
{
    sid_loss_opts lo = o->loss;
    lo.estimate_start = 1;
    lo.weight_q = 1;
    lo.weight_qd = o->noise_qd > 0 ? 1 : 0;
    lo.weight_tau = 0;
    lo.start_velocity_from_q = 0;
    sid_problem *p = NULL;
    const sid_traj *logs[1] = { tr };
    sid_status s = sid_problem_create(&p, m, logs, 1, &lo, err);
    if (s) return s;
    /* residual = delta / noise: J^T J is then the Fisher information of Gaussian noise */
    for (int i = 0; i < m->nqo; i++) p->sq[i] = o->noise_q;
    for (int i = 0; i < m->nvo; i++) p->sqd[i] = o->noise_qd > 0 ? o->noise_qd : 1;
    double rr = 0;
    const sid_normal_pass np = {p, theta, NULL, o->nfree, o->idx, o->interrupt, 0, eliminate, NULL};
    s = sid_normal_run(&np, &(sid_normal_out){F, NULL, &rr, NULL}, err);
    sid_problem_free(p);
    return s;
}

/* Score F: standard errors, condition, log det and worst relative error into r; W scratch
 * (4 n^2 + 2 n). Returns the objective to minimise. */
static double score(const sid_model *m, const double *theta, const sid_excite_opts *o, const double *F, double *W,
                    sid_excite_result *r)
{
    const int n = o->nfree;
    double *C = W, *V = C + n * n, *P = V + n * n, *D = P + n * n, *ev = D + n;
    for (int a = 0; a < n; a++) D[a] = F[a * n + a] > 0 ? 1 / sqrt(F[a * n + a]) : 0;
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) C[a * n + b] = F[a * n + b] * D[a] * D[b];
    if (sid_sym_eigen(C, n, ev, V)) sid_jacobi_eigen(C, n, ev, V);
    double emax = 0;
    for (int i = 0; i < n; i++) emax = fmax(emax, ev[i]);
    memset(P, 0, sizeof(double) * (size_t)(n * n));
    int *ident = (int *)(void *)C;   /* C is free again: n ints fit in n^2 doubles */
    for (int a = 0; a < n; a++) ident[a] = D[a] > 0;
    double emin = emax, logdet = 0;
    r->nnull = 0;
    for (int i = 0; i < n; i++) {
        const double floor_ev = fmax(ev[i], 1e-12 * emax);
        logdet += log(floor_ev > 0 ? floor_ev : 1e-300);
        if (!(ev[i] >= SID_NULL_RATIO * emax) || !(emax > 0)) {
            r->nnull++;
            for (int a = 0; a < n; a++)
                if (fabs(V[a * n + i]) > 0.1) ident[a] = 0;
            continue;
        }
        emin = fmin(emin, ev[i]);
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++) P[a * n + b] += V[a * n + i] * V[b * n + i] / ev[i];
    }
    r->cond = emin > 0 ? emax / emin : HUGE_VAL;
    double worst_ident = 0;
    r->worst_rel = 0;
    r->worst = 0;
    for (int a = 0; a < n; a++) {
        const double v = theta[o->idx[a]], typ = fmax(fabs(v), sid_model_param(m, o->idx[a])->row->typical);
        if (D[a] > 0) logdet += log(typ * typ / (D[a] * D[a]));
        else logdet += log(1e-300);
        r->se[a] = ident[a] ? sqrt(fmax(P[a * n + a], 0)) * D[a] : HUGE_VAL;
        const double rel = r->se[a] / typ;
        if (rel > r->worst_rel || a == 0) r->worst_rel = rel, r->worst = a;
        if (ident[a]) worst_ident = fmax(worst_ident, rel);
    }
    r->logdet = logdet;
    /* over the parameters this design resolves, each unresolved direction costs a factor e^5:
     * directions no design can resolve (a structural null) then cost every design the same */
    if (o->criterion == SID_EXCITE_WORST) return worst_ident > 0 ? log(worst_ident) + 5.0 * r->nnull : 1e300;
    return -logdet / n;
}

sid_status sid_excite_hold(const sid_model *m, const double *theta, const sid_excite_opts *o, double *u_hold,
                           sid_error *err)
{
    const int nq = m->nq, nv = m->nv;
    double *buf = sid_alloc(sizeof(double) * (size_t)(3 * nq + 3 * nv + nv * nv + nv));
    int *piv = sid_alloc(sizeof(int) * (size_t)(nv ? nv : 1));
    sid_workspace *ws = sid_workspace_create(m);
    sid_status s = SID_OK;
    if (!buf || !piv || !ws) {
        s = sid_error_set(err, SID_ERR_NOMEM, "out of memory");
        goto done;
    }
    double *q1 = buf, *v0 = q1 + nq, *v1 = v0 + nv, *vb = v1 + nv, *J = vb + nv, *u = J + nv * nv;
    const double h = 1e-3;
    memset(u_hold, 0, sizeof(double) * (size_t)nv);
    /* a position servo starts at its reference = where it stands (its force 0, not saturated:
     * from u = 0 a stiff servo far from 0 sits in tanh's flat part, where Newton sees no slope) */
    for (int b = 1; b < m->nbody; b++) {
        const sid_body *bd = &m->body[b];
        if (bd->p_servo >= 0 && bd->motor == SID_MOTOR_POSITION)
            u_hold[bd->vadr] = theta[bd->p_motor + P_GEAR] * (o->q0[bd->qadr] + sid_measure_offset(m, theta, b));
    }
    /* v1 = h a(u) is affine in u for torque motors and unsaturated servos: Newton, a few rounds */
    for (int it = 0; it < 4 && !s; it++) {
        memset(v0, 0, sizeof(double) * (size_t)nv);
        s = sid_step(m, theta, ws, o->loss.sim.integrator, h, o->q0, v0, u_hold, q1, vb, err);
        for (int j = 0; j < nv && !s; j++) {
            memcpy(u, u_hold, sizeof(double) * (size_t)nv);
            u[j] += 1e-3;
            s = sid_step(m, theta, ws, o->loss.sim.integrator, h, o->q0, v0, u, q1, v1, err);
            for (int i = 0; i < nv; i++) J[i * nv + j] = (v1[i] - vb[i]) / 1e-3;
        }
        if (s) break;
        if (sid_lu_factor(nv, J, piv)) {
            s = sid_error_set(err, SID_ERR_NUMERIC, "excite: the commands cannot hold the start pose");
            break;
        }
        for (int i = 0; i < nv; i++) vb[i] = -vb[i];
        sid_lu_solve(nv, J, piv, 0, vb);
        for (int i = 0; i < nv; i++) u_hold[i] += vb[i];
    }
done:
    sid_workspace_free(ws);
    sid_free(piv);
    sid_free(buf);
    return s;
}

static double objective(unsigned n, const double *c, double *grad, void *ctx)
{
    design *d = ctx;
    (void)grad, (void)n;
    if (d->status || (d->o->interrupt && *d->o->interrupt)) return HUGE_VAL;
    shape_from(d, c);
    sid_excite_result r = { 0 };
    double se[SID_MAX_FREE];
    r.se = se;
    d->evals++;
    const double s = feasible_scale(d);
    if (!(s > 0)) return 1e300;
    for (int k = 0; k < d->n; k++) {
        memcpy(d->tr->q + (size_t)k * d->nq, d->qs + (size_t)k * d->nq, sizeof(double) * (size_t)d->nq);
        memcpy(d->tr->qd + (size_t)k * d->nv, d->vs + (size_t)k * d->nv, sizeof(double) * (size_t)d->nv);
    }
    sid_error e = { 0 };
    sid_status st = information(d->m, d->theta, d->tr, d->o, d->F, &e);
    if (st == SID_ERR_NOMEM || st == SID_ERR_INTERRUPTED || st == SID_ERR_INPUT) {
        d->status = st;
        d->err = e;
        return HUGE_VAL;
    }
    if (st) return 1e300;   /* a diverged window: a design to avoid */
    /* rest at the end: the speed left when the command is back at the hold, penalised */
    double end = 0;
    for (int i = 0; i < d->nv; i++) end += pow(d->vs[(size_t)(d->n - 1) * d->nv + i] / d->o->qd_max[i], 2);
    const double f = score(d->m, d->theta, d->o, d->F, d->W, &r) + SID_EXCITE_END_WEIGHT * end;
    if (isfinite(f) && f < d->best_f) {
        d->best_f = f;
        memcpy(d->best_c, c, sizeof(double) * (size_t)d->nc);
    }
    return isfinite(f) ? f : 1e300;
}

void sid_excite_result_free(sid_excite_result *r)
{
    if (!r) return;
    sid_traj_free(r->traj);
    sid_free(r->se);
    sid_free(r->info);
    memset(r, 0, sizeof *r);
}

static sid_status result_alloc(sid_excite_result *r, int nfree)
{
    memset(r, 0, sizeof *r);
    r->se = sid_alloc(sizeof(double) * (size_t)nfree);
    r->info = sid_alloc(sizeof(double) * (size_t)nfree * (size_t)nfree);
    return r->se && r->info ? SID_OK : SID_ERR_NOMEM;
}

sid_status sid_excite_score(const sid_model *m, const double *theta, const sid_traj *tr, const sid_excite_opts *o,
                            sid_excite_result *r, sid_error *err)
{
    const int n = o->nfree;
    if (n < 1 || n > SID_MAX_FREE) return sid_error_set(err, SID_ERR_INPUT, "excite: %d free parameters", n);
    if (!(o->noise_q > 0) || !(o->noise_qd >= 0)) return sid_error_set(err, SID_ERR_INPUT, "excite: noise levels must be positive");
    if (result_alloc(r, n)) return sid_error_set(err, SID_ERR_NOMEM, "out of memory");
    double *W = sid_alloc(sizeof(double) * (size_t)(4 * n * n + 2 * n));
    if (!W) return sid_error_set(err, SID_ERR_NOMEM, "out of memory");
    sid_status s = information(m, theta, tr, o, r->info, err);
    if (!s) score(m, theta, o, r->info, W, r);
    sid_free(W);
    return s;
}

sid_status sid_excite_run(const sid_model *m, const double *theta, const sid_excite_opts *o, sid_excite_result *r,
                          sid_error *err)
{
    memset(r, 0, sizeof *r);
    design d = { .m = m, .theta = theta, .o = o, .nq = m->nq, .nv = m->nv, .best_f = HUGE_VAL, .s_prev = 1 };
    const int H = o->harmonics, nv = m->nv, nq = m->nq, nf = o->nfree;
    d.body = sid_alloc(sizeof(int) * (size_t)(nv ? nv : 1));
    if (!d.body) return sid_error_set(err, SID_ERR_NOMEM, "out of memory");
    sid_status s = check_model(m, o, d.body, err);
    if (s) {
        sid_free(d.body);
        return s;
    }
    d.n = (int)floor(o->duration / o->dt + 0.5) + 1;
    d.nc = nv * 2 * H;
    double *buf = sid_alloc(sizeof(double) * ((size_t)4 * nv + (size_t)d.n * 2 * H + (size_t)d.n * (nv + nq + nv) +
                                              (size_t)(5 * nf * nf + 2 * nf) + 2 * (size_t)d.nc));
    d.tr = sid_traj_create(d.n, nq, nv, 1);
    if (!buf || !d.tr || result_alloc(r, nf)) {
        s = sid_error_set(err, SID_ERR_NOMEM, "out of memory");
        goto done;
    }
    d.u_hold = buf;
    d.gain = d.u_hold + nv;
    d.amp = d.gain + nv;
    double *c = d.amp + nv;   /* (nc) coefficients, then the best */
    d.basis = c + 2 * d.nc;
    d.shape = d.basis + (size_t)d.n * 2 * H;
    d.qs = d.shape + (size_t)d.n * nv;
    d.vs = d.qs + (size_t)d.n * nq;
    d.F = d.vs + (size_t)d.n * nv;
    d.W = d.F + nf * nf;
    d.best_c = c + d.nc;
    if ((s = sid_excite_hold(m, theta, o, d.u_hold, err))) goto done;
    for (int i = 0; i < nv; i++) {
        const sid_body *bd = &m->body[d.body[i]];
        const double G = theta[bd->p_motor + P_GEAR];
        if (bd->motor == SID_MOTOR_POSITION) {
            const int iq = bd->qadr;
            d.gain[i] = G;
            d.amp[i] = fmin(o->q0[iq] - o->q_lo[iq], o->q_hi[iq] - o->q0[iq]);
        } else {
            d.gain[i] = 1 / (G * theta[bd->p_motor + P_KT]);
            d.amp[i] = o->tau_max[i];
        }
    }
    for (int k = 0; k < d.n; k++) {
        const double t = k * o->dt, e = envelope(t, o->duration, fmin(o->ramp, o->duration / 4));
        d.tr->t[k] = t;
        for (int h = 0; h < H; h++) {
            const double w = 2 * PI * (h + 1) * o->f0 * t;
            d.basis[(size_t)k * 2 * H + 2 * h] = e * sin(w);
            d.basis[(size_t)k * 2 * H + 2 * h + 1] = e * cos(w);
        }
    }
    /* the start state: q0 as measured (offsets added), at rest */
    for (int i = 0; i < nq; i++) d.tr->q[i] = o->q0[i];
    for (int i = 0; i < nv; i++) {
        d.tr->q[m->body[d.body[i]].qadr] += offset_of(&d, i);
        d.tr->qd[i] = 0;
    }
    if ((s = sid_sim_check(&o->loss.sim, d.tr, err))) goto done;
    memset(d.shape, 0, sizeof(double) * (size_t)d.n * (size_t)nv);
    limit_use hold;
    d.use0 = simulate_at(&d, 0, &hold);
    if (d.use0 == HUGE_VAL) {   /* say why: the simulation's own message */
        s = sid_error_set(err, SID_ERR_NUMERIC, "excite: holding the start pose, the simulation diverges (%s) under "
                          "the %s integrator: stiff servos at this step need implicitfast (--integrator "
                          "implicitfast) or a finer step (--max-dt)",
                          d.sim_err.msg[0] ? d.sim_err.msg : "its limits' use is not finite",
                          sid_integrator_name(o->loss.sim.integrator));
        goto done;
    }
    if (!(d.use0 < SID_EXCITE_MARGIN)) {
        static const char *const kind[3] = {"position", "velocity", "torque"};
        int worst = 0, k = 0;
        for (int x = 1; x < 3; x++) worst = hold.use[x] > hold.use[worst] ? x : worst;
        while (k < m->ndofj - 1 && m->dof_body[k] != d.body[hold.at[worst]]) k++;
        s = sid_error_set(err, SID_ERR_INPUT, "excite: holding the start pose alone uses %.3g of joint '%s''s %s limit "
                          "(more than %g): raise that limit or choose another start (--pose, --keyframe)", d.use0,
                          m->dof_name[k], kind[worst], SID_EXCITE_MARGIN);
        goto done;
    }
    /* the random multi-sine: unit amplitude, a random phase per harmonic and joint */
    unsigned long long rs = 0x5EED0000ULL ^ (unsigned long long)o->seed;
    for (int j = 0; j < nv * H; j++) {
        const double ph = 2 * PI * uniform(&rs);
        c[2 * j] = cos(ph);
        c[2 * j + 1] = sin(ph);
    }
    memcpy(d.best_c, c, sizeof(double) * (size_t)d.nc);
    if (o->optimise) {
        nlopt_opt opt = nlopt_create(NLOPT_LN_BOBYQA, (unsigned)d.nc);
        if (!opt) {
            s = sid_error_set(err, SID_ERR_NOMEM, "out of memory (nlopt_create)");
            goto done;
        }
        nlopt_set_lower_bounds1(opt, -1);
        nlopt_set_upper_bounds1(opt, 1);
        nlopt_set_min_objective(opt, objective, &d);
        nlopt_set_maxeval(opt, o->max_evals > 0 ? o->max_evals : 1);
        nlopt_set_xtol_rel(opt, 1e-4);
        nlopt_set_initial_step1(opt, 0.3);
        double fmin_ = 0;
        nlopt_optimize(opt, c, &fmin_);   /* the best point is tracked by objective() */
        nlopt_destroy(opt);
        if (d.status) {
            *err = d.err;
            s = d.status;
            goto done;
        }
        if (o->interrupt && *o->interrupt) {
            s = sid_error_set(err, SID_ERR_INTERRUPTED, "excite: interrupted");
            goto done;
        }
    }
    /* the result: the best coefficients, simulated and scored once more */
    shape_from(&d, d.best_c);
    r->scale = feasible_scale(&d);
    if (!(r->scale > 0)) {
        s = sid_error_set(err, SID_ERR_INPUT, "excite: no amplitude keeps the simulation within the limits "
                          "(is the start pose at rest inside them?)");
        goto done;
    }
    limit_use lu;
    simulate_at(&d, r->scale, &lu);
    r->use_q = lu.use[0], r->use_qd = lu.use[1], r->use_tau = lu.use[2];
    for (int k = 0; k < d.n; k++) {
        memcpy(d.tr->q + (size_t)k * nq, d.qs + (size_t)k * nq, sizeof(double) * (size_t)nq);
        memcpy(d.tr->qd + (size_t)k * nv, d.vs + (size_t)k * nv, sizeof(double) * (size_t)nv);
    }
    r->end_qd = 0;
    for (int i = 0; i < nv; i++) r->end_qd = fmax(r->end_qd, fabs(d.vs[(size_t)(d.n - 1) * nv + i]));
    if ((s = information(m, theta, d.tr, o, r->info, err))) goto done;
    score(m, theta, o, r->info, d.W, r);
    r->evaluations = d.evals + 1;
    r->traj = d.tr;
    d.tr = NULL;
done:
    sid_traj_free(d.tr);
    sid_free(buf);
    sid_free(d.body);
    return s;
}
