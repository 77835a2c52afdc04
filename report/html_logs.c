/* html_logs.c — the log sections of the report page (html_logs.h).
 *
 * Charts per coordinate (a one-dof joint has one q and one qd; a free joint's base has its
 * position x, y, z, its orientation quaternion and its six velocities, each charted): the log,
 * what the nominal and the fitted parameters predict on the windows the fit scores, and the
 * windows' starts as thin vertical lines. Below, the residual (predicted minus logged) over time
 * and its histogram, nominal against fitted. Element ids are "q-SET-LOG-COORD", "qd-...",
 * "res-..." and "hist-...", so a test can find every joint's charts. */
#include "html_logs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "coords.h"
#include "html_svg.h"

static const char *const series_cls[3] = { "log", "nom", "fit" };
static const char *const series_label[3] = { "logged", "nominal", "fitted" };

/* One chart of coordinate i: position (vel 0) or velocity (vel 1). */
static void chart(textbuf *b, const sid_model *m, const html_predset *s, const html_logpred *lp, const char *id,
                  int vel, int i)
{
    const sid_traj *tr = lp->tr;
    const int stride = vel ? tr->nv : tr->nq;
    const double *logged = vel ? tr->qd : tr->q;
    const char *name = vel ? sid_model_v_name(m, i) : sid_model_q_name(m, i);
    const int ang = vel ? sid_model_v_is_angular(m, i) : sid_model_q_is_angular(m, i);
    svg_range yr;
    svg_range_init(&yr);
    if (logged)
        svg_range_add(&yr, logged + i, stride, tr->n, NULL, 0);
    for (int p = 0; p < 2; p++)
        if (s->ok[p])
            svg_range_add(&yr, (vel ? lp->v[p] : lp->q[p]) + i, stride, tr->n, lp->win, 0);
    char title[160], ylabel[32];
    snprintf(title, sizeof title, "%s %s", vel ? "qd" : "q", name);
    snprintf(ylabel, sizeof ylabel, "%s", vel ? (ang ? "rad/s" : "m/s") : (ang ? "rad" : "m"));
    svg_axes ax;
    svg_begin(b, &ax, id, SVG_H, tr->t[0], tr->t[tr->n - 1], yr, 0, title, "t [s]", ylabel);
    svg_vlines(b, &ax, lp->bound, lp->nbound, "win");
    if (logged)
        svg_line(b, &ax, tr->t, logged + i, stride, tr->n, NULL, "log");
    for (int p = 0; p < 2; p++)
        if (s->ok[p])
            svg_line(b, &ax, tr->t, (vel ? lp->v[p] : lp->q[p]) + i, stride, tr->n, lp->win, series_cls[1 + p]);
    svg_legend(b, &ax, 3, series_label, series_cls);
    svg_end(b);
}

/* Predicted minus logged position i at the scored samples (NaN elsewhere), into d (n). */
static void residual(const html_logpred *lp, int p, int i, double *d)
{
    const sid_traj *tr = lp->tr;
    for (int k = 0; k < tr->n; k++)
        d[k] = lp->win[k] >= 0 ? lp->q[p][(size_t)k * (size_t)tr->nq + (size_t)i] - tr->q[(size_t)k * (size_t)tr->nq + (size_t)i]
                               : NAN;
}

static void residual_charts(textbuf *b, const sid_model *m, const html_predset *s, const html_logpred *lp,
                            const char *sfx, int i)
{
    const sid_traj *tr = lp->tr;
    double *d[2] = { malloc((size_t)tr->n * sizeof(double)), malloc((size_t)tr->n * sizeof(double)) };
    if (!d[0] || !d[1]) {
        b->bad = 1;
        free(d[0]);
        free(d[1]);
        return;
    }
    svg_range yr;
    svg_range_init(&yr);
    for (int p = 0; p < 2; p++)
        if (s->ok[p]) {
            residual(lp, p, i, d[p]);
            svg_range_add(&yr, d[p], 1, tr->n, NULL, 0);
        }
    const int ang = sid_model_q_is_angular(m, i);
    char id[220], title[160];
    snprintf(id, sizeof id, "res-%s", sfx);
    snprintf(title, sizeof title, "residual q %s (predicted - logged)", sid_model_q_name(m, i));
    svg_axes ax;
    svg_begin(b, &ax, id, SVG_H, tr->t[0], tr->t[tr->n - 1], yr, 0, title, "t [s]", ang ? "rad" : "m");
    svg_vlines(b, &ax, lp->bound, lp->nbound, "win");
    for (int p = 0; p < 2; p++)
        if (s->ok[p])
            svg_line(b, &ax, tr->t, d[p], 1, tr->n, lp->win, series_cls[1 + p]);
    svg_legend(b, &ax, 2, series_label + 1, series_cls + 1);
    svg_end(b);
    /* the histogram of the scored samples only */
    int n[2] = { 0, 0 };
    for (int p = 0; p < 2; p++)
        for (int k = 0; s->ok[p] && k < tr->n; k++)
            if (isfinite(d[p][k]))
                d[p][n[p]++] = d[p][k];
    snprintf(id, sizeof id, "hist-%s", sfx);
    snprintf(title, sizeof title, "residual q %s: histogram", sid_model_q_name(m, i));
    const double *v[2] = { d[0], d[1] };
    svg_histogram(b, id, title, ang ? "rad" : "m", 2, v, n, series_label + 1, series_cls + 1);
    free(d[0]);
    free(d[1]);
}

/* The RMSE table recomputed from the plotted predictions; data-check names the report.json
 * value each must equal (tests/cli_html.sh), "|"-separated. */
static void rmse_table(textbuf *b, const sid_model *m, const html_predset *s, const char *id)
{
    int nrow, w;
    coords_row *rows = coords_table(m, &nrow, &w);
    if (!rows) {
        b->bad = 1;
        return;
    }
    tb_printf(b, "<table class=\"num\" id=\"rmse-%s\"><tr><th>coordinate</th><th>q RMSE nominal</th>"
                 "<th>q RMSE fitted</th>%s</tr>\n", id,
              s->has_qd ? "<th>qd RMSE nominal</th><th>qd RMSE fitted</th>" : "");
    static const char *const when[2] = { "before", "after" };
    for (int r = 0; r < nrow; r++) {
        if (rows[r].q < 0 && !s->has_qd)
            continue;
        tb_puts(b, "<tr><td>");
        tb_esc(b, rows[r].name);
        tb_puts(b, "</td>");
        for (int vel = 0; vel < (s->has_qd ? 2 : 1); vel++)
            for (int p = 0; p < 2; p++) {
                const int i = vel ? rows[r].v : rows[r].q;
                if (i < 0 || !s->ok[p]) {
                    tb_puts(b, i < 0 ? "<td></td>" : "<td>diverged</td>");
                    continue;
                }
                const double x = (vel ? s->rmse_qd[p] : s->rmse_q[p])[i];
                tb_printf(b, "<td data-check=\"prediction|%s|rmse|%s|%s|", id, when[p], vel ? "qd" : "q");
                tb_esc(b, vel ? sid_model_v_name(m, i) : sid_model_q_name(m, i));
                tb_puts(b, "\" data-value=\"");
                tb_exact(b, x);
                tb_printf(b, "\">%.4g</td>", x);
            }
        tb_puts(b, "</tr>\n");
    }
    tb_puts(b, "</table>\n");
    free(rows);
}

/* The total contact normal force over time: the logged states under the fitted parameters and
 * the two predictions. */
static void contact_chart(textbuf *b, const html_predset *s, const html_logpred *lp, const char *id)
{
    const sid_traj *tr = lp->tr;
    svg_range yr;
    svg_range_init(&yr);
    for (int p = 0; p < 3; p++)
        if (lp->fn[p])
            svg_range_add(&yr, lp->fn[p], 1, tr->n, NULL, 0);
    svg_axes ax;
    svg_begin(b, &ax, id, SVG_H, tr->t[0], tr->t[tr->n - 1], yr, 0, "contact normal force (all spheres)", "t [s]",
              "N");
    svg_vlines(b, &ax, lp->bound, lp->nbound, "win");
    static const char *const label[3] = { "logged states, fitted model", "nominal", "fitted" };
    if (lp->fn[2])
        svg_line(b, &ax, tr->t, lp->fn[2], 1, tr->n, NULL, "log");
    for (int p = 0; p < 2; p++)
        if (lp->fn[p] && s->ok[p])
            svg_line(b, &ax, tr->t, lp->fn[p], 1, tr->n, lp->win, series_cls[1 + p]);
    svg_legend(b, &ax, 3, label, series_cls);
    svg_end(b);
}

void html_logs_section(textbuf *b, const sid_model *m, const html_predset *s, const char *id, const char *title,
                       const char *note)
{
    tb_printf(b, "<section id=\"%s\"><h2>", id);
    tb_esc(b, title);
    tb_puts(b, "</h2>\n<p class=\"note\">");
    tb_esc(b, note);
    tb_puts(b, "</p>\n");
    for (int p = 0; p < 2; p++)
        if (!s->ok[p]) {
            tb_printf(b, "<p class=\"bad\">The %s prediction diverged: ", p ? "fitted" : "nominal");
            tb_esc(b, s->why[p]);
            tb_puts(b, "</p>\n");
        }
    tb_puts(b, "<h3>RMSE over the scored samples (from the plotted predictions)</h3>\n");
    rmse_table(b, m, s, id);
    for (int l = 0; l < s->nlog; l++) {
        const html_logpred *lp = &s->log[l];
        tb_printf(b, "<h3 class=\"log\">log %d: ", l + 1);
        tb_esc(b, lp->name);
        tb_printf(b, " <span class=\"note\">(%d samples, %d windows)</span></h3>\n", lp->tr->n, lp->nbound);
        for (int k = 0; k < sid_model_ndof_joints(m); k++) {
            int q0, nq, v0, nv;
            coords_joint(m, k, &q0, &nq, &v0, &nv);
            const int free_joint = sid_model_dof_joint_type(m, k) == SID_JOINT_FREE;
            tb_printf(b, "<div class=\"joint\" data-joint=\"");
            tb_esc(b, sid_model_dof_joint_name(m, k));
            tb_puts(b, "\"><h4>");
            tb_esc(b, sid_model_dof_joint_name(m, k));
            tb_puts(b, free_joint ? " <span class=\"note\">(floating base: position x, y, z [m], orientation "
                                    "quaternion qw..qz, linear and angular velocity)</span>"
                                  : "");
            tb_puts(b, "</h4>\n");
            char cid[200];
            for (int i = q0; i < q0 + nq; i++) {
                snprintf(cid, sizeof cid, "q-%s-%d-%s", id, l + 1, sid_model_q_name(m, i));
                chart(b, m, s, lp, cid, 0, i);
            }
            for (int i = v0; i < v0 + nv; i++) {
                snprintf(cid, sizeof cid, "qd-%s-%d-%s", id, l + 1, sid_model_v_name(m, i));
                chart(b, m, s, lp, cid, 1, i);
            }
            for (int i = q0; i < q0 + nq; i++) {
                snprintf(cid, sizeof cid, "%s-%d-%s", id, l + 1, sid_model_q_name(m, i));
                residual_charts(b, m, s, lp, cid, i);
            }
            tb_puts(b, "</div>\n");
        }
        if (lp->fn[0] || lp->fn[1]) {
            char cid[200];
            snprintf(cid, sizeof cid, "contact-%s-%d", id, l + 1);
            tb_puts(b, "<div class=\"joint\"><h4>contact</h4>\n");
            contact_chart(b, s, lp, cid);
            tb_puts(b, "<p class=\"note\">The compliant model's normal force summed over the contact spheres, at the "
                       "predicted states and at the logged ones (the latter under the fitted parameters: what the model "
                       "says the logged motion implies).</p></div>\n");
        }
    }
    tb_puts(b, "</section>\n");
}
