/* html_predict.c — the windowed predictions a report plots (html_predict.h). Each window is
 * simulated by core (sid_problem_window_predict) as the loss simulates it; the samples it scores
 * are kept in one array per log, so consecutive windows join into one series broken at their
 * boundaries. The RMSE over the scored samples is recomputed here from what is plotted, so the
 * page can show (and the tests compare with report.json) that the plot is what the fit scored. */
#include "html_predict.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int alloc_log(html_logpred *lp, const sid_traj *tr, int nq, int nv)
{
    const size_t n = (size_t)tr->n;
    for (int s = 0; s < 2; s++) {
        lp->q[s] = calloc(n * (size_t)(nq ? nq : 1), sizeof(double));
        lp->v[s] = calloc(n * (size_t)(nv ? nv : 1), sizeof(double));
        if (!lp->q[s] || !lp->v[s])
            return -1;
    }
    lp->win = malloc(n * sizeof(int));
    lp->bound = malloc(n * sizeof(double));
    if (!lp->win || !lp->bound)
        return -1;
    for (size_t k = 0; k < n; k++)
        lp->win[k] = -1;
    return 0;
}

/* Total normal contact force at every sample of every log (html_logpred.fn). */
static int contact_forces(const sid_model *m, const double *theta0, const double *theta, html_predset *out)
{
    const int nq = sid_model_nq(m), nv = sid_model_nv(m);
    sid_workspace *ws = sid_workspace_create(m);
    const int ns = sid_contact_normal_forces(m, theta, NULL, NULL, NULL, NULL);
    double *q = malloc((size_t)(nq + 1) * sizeof *q), *fn = malloc((size_t)(ns + 1) * sizeof *fn);
    int rc = ws && q && fn ? 0 : -1;
    for (int l = 0; !rc && l < out->nlog; l++) {
        html_logpred *lp = &out->log[l];
        const sid_traj *tr = lp->tr;
        for (int s = 0; s < 3 && !rc; s++) {
            if (s == 2 && !tr->qd)
                continue;
            if (!(lp->fn[s] = malloc((size_t)tr->n * sizeof(double)))) {
                rc = -1;
                break;
            }
            const double *th = s == 0 ? theta0 : theta;
            for (int k = 0; k < tr->n; k++) {
                lp->fn[s][k] = NAN;
                if (s < 2 && (lp->win[k] < 0 || !out->ok[s]))
                    continue;
                const double *qm = s < 2 ? lp->q[s] + (size_t)k * (size_t)nq : tr->q + (size_t)k * (size_t)nq;
                const double *v = s < 2 ? lp->v[s] + (size_t)k * (size_t)nv : tr->qd + (size_t)k * (size_t)nv;
                sid_model_q_from_measured(m, th, qm, q);
                const int n = sid_contact_normal_forces(m, th, ws, q, v, fn);
                double sum = 0;
                for (int c = 0; c < n; c++)
                    sum += fn[c];
                lp->fn[s][k] = sum;
            }
        }
    }
    sid_workspace_free(ws);
    free(q);
    free(fn);
    return rc;
}

sid_status html_predict(sid_problem *p, const double *theta0, const double *theta, const sid_traj *const *tr,
                        const char *const *name, int nlog, html_predset *out, sid_error *err)
{
    const sid_model *m = sid_problem_model(p);
    const int nq = sid_model_nq(m), nv = sid_model_nv(m), nwin = sid_problem_nwindows(p);
    memset(out, 0, sizeof *out);
    out->nlog = nlog;
    out->log = calloc((size_t)nlog, sizeof *out->log);
    int longest = 1;
    for (int w = 0; w < nwin; w++) {
        int l, k0, ra, rb;
        sid_problem_window_samples(p, w, &l, &k0, &ra, &rb);
        longest = rb - k0 + 1 > longest ? rb - k0 + 1 : longest;
    }
    double *wq = malloc((size_t)longest * (size_t)(nq ? nq : 1) * sizeof(double));
    double *wv = malloc((size_t)longest * (size_t)(nv ? nv : 1) * sizeof(double));
    double *sse = calloc((size_t)(nq + nv + 1), sizeof(double));
    if (!out->log || !wq || !wv || !sse)
        goto nomem;
    for (int l = 0; l < nlog; l++) {
        out->log[l].tr = tr[l];
        out->log[l].name = name[l];
        if (alloc_log(&out->log[l], tr[l], nq, nv))
            goto nomem;
        out->has_qd |= tr[l]->qd != NULL;
    }
    for (int s = 0; s < 2; s++) {
        out->rmse_q[s] = calloc((size_t)(nq ? nq : 1), sizeof(double));
        out->rmse_qd[s] = calloc((size_t)(nv ? nv : 1), sizeof(double));
        if (!out->rmse_q[s] || !out->rmse_qd[s])
            goto nomem;
    }
    for (int w = 0; w < nwin; w++) {
        int l, k0, ra, rb;
        sid_problem_window_samples(p, w, &l, &k0, &ra, &rb);
        html_logpred *lp = &out->log[l];
        lp->bound[lp->nbound++] = tr[l]->t[k0];
        for (int k = ra; k <= rb; k++)
            lp->win[k] = w;
    }
    long nsamp = 0, nsamp_qd = 0;
    for (int s = 0; s < 2; s++) {
        const double *th = s ? theta : theta0;
        sid_error e = { 0 };
        out->ok[s] = 1;
        memset(sse, 0, (size_t)(nq + nv) * sizeof(double));
        nsamp = nsamp_qd = 0;
        for (int w = 0; w < nwin && out->ok[s]; w++) {
            int l, k0, ra, rb;
            sid_problem_window_samples(p, w, &l, &k0, &ra, &rb);
            if (sid_problem_window_predict(p, th, NULL, w, wq, wv, &e) != SID_OK) {
                out->ok[s] = 0;
                snprintf(out->why[s], sizeof out->why[s], "%s", e.msg);
                break;
            }
            html_logpred *lp = &out->log[l];
            const sid_traj *t = tr[l];
            for (int k = ra; k <= rb; k++) {
                const double *q = wq + (size_t)(k - k0) * (size_t)nq, *v = wv + (size_t)(k - k0) * (size_t)nv;
                memcpy(lp->q[s] + (size_t)k * (size_t)nq, q, (size_t)nq * sizeof(double));
                memcpy(lp->v[s] + (size_t)k * (size_t)nv, v, (size_t)nv * sizeof(double));
                for (int i = 0; i < nq; i++) {
                    const double d = q[i] - t->q[(size_t)k * (size_t)nq + (size_t)i];
                    sse[i] += d * d;
                }
                for (int i = 0; t->qd && i < nv; i++) {
                    const double d = v[i] - t->qd[(size_t)k * (size_t)nv + (size_t)i];
                    sse[nq + i] += d * d;
                }
                nsamp++;
                nsamp_qd += t->qd != NULL;
            }
        }
        for (int i = 0; out->ok[s] && i < nq; i++)
            out->rmse_q[s][i] = sqrt(sse[i] / (double)nsamp);
        for (int i = 0; out->ok[s] && i < nv; i++)
            out->rmse_qd[s][i] = nsamp_qd ? sqrt(sse[nq + i] / (double)nsamp_qd) : 0;
    }
    free(wq);
    free(wv);
    free(sse);
    if (sid_contact_normal_forces(m, theta, NULL, NULL, NULL, NULL) > 0 && contact_forces(m, theta0, theta, out)) {
        html_predict_free(out);
        return sid_error_set(err, SID_ERR_NOMEM, "report page: out of memory");
    }
    return SID_OK;
nomem:
    free(wq);
    free(wv);
    free(sse);
    html_predict_free(out);
    return sid_error_set(err, SID_ERR_NOMEM, "report page: out of memory");
}

void html_predict_free(html_predset *s)
{
    for (int l = 0; s->log && l < s->nlog; l++) {
        html_logpred *lp = &s->log[l];
        for (int k = 0; k < 2; k++) {
            free(lp->q[k]);
            free(lp->v[k]);
        }
        free(lp->win);
        free(lp->bound);
        for (int k = 0; k < 3; k++)
            free(lp->fn[k]);
    }
    free(s->log);
    for (int k = 0; k < 2; k++) {
        free(s->rmse_q[k]);
        free(s->rmse_qd[k]);
    }
    memset(s, 0, sizeof *s);
}
