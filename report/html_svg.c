/* html_svg.c — inline SVG charts (html_svg.h). Coordinates are written with one decimal
 * (a tenth of a pixel), which is all a screen or printer resolves and keeps pages small. */
#include "html_svg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void svg_range_init(svg_range *r)
{
    r->lo = HUGE_VAL;
    r->hi = -HUGE_VAL;
}

void svg_range_add(svg_range *r, const double *y, int stride, int n, const int *seg, int logy)
{
    for (int k = 0; k < n; k++) {
        double v = y[(size_t)k * (size_t)stride];
        if ((seg && seg[k] < 0) || !isfinite(v) || (logy && !(v > 0)))
            continue;
        v = logy ? log10(v) : v;
        r->lo = fmin(r->lo, v);
        r->hi = fmax(r->hi, v);
    }
}

static double px_x(const svg_axes *ax, double x)
{
    return ax->px0 + (x - ax->x0) / (ax->x1 - ax->x0) * (ax->px1 - ax->px0);
}

static double px_y(const svg_axes *ax, double y)
{
    if (ax->logy)
        y = y > 0 ? log10(y) : ax->y0;
    return ax->py1 - (y - ax->y0) / (ax->y1 - ax->y0) * (ax->py1 - ax->py0);
}

/* A tick spacing of 1, 2 or 5 times a power of ten giving about `want` ticks over span. */
static double nice_step(double span, int want)
{
    const double raw = span / want, p = pow(10, floor(log10(raw))), f = raw / p;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
}

/* A padded range that is never empty. */
static void pad(double *lo, double *hi)
{
    if (!(*lo <= *hi)) {
        *lo = 0;
        *hi = 1;
    }
    double span = *hi - *lo;
    if (span <= 1e-12 * fmax(1, fabs(*hi))) {
        const double d = fmax(fabs(*hi) * 0.05, 1e-9);
        *lo -= d;
        *hi += d;
        return;
    }
    *lo -= 0.04 * span;
    *hi += 0.04 * span;
}

void svg_begin(textbuf *b, svg_axes *ax, const char *id, int h, double x0, double x1, svg_range yr, int logy,
               const char *title, const char *xlabel, const char *ylabel)
{
    if (!(x1 > x0))
        x1 = x0 + 1;
    pad(&yr.lo, &yr.hi);
    *ax = (svg_axes){ x0, x1, yr.lo, yr.hi, logy, SVG_LEFT, SVG_W - SVG_RIGHT, SVG_TOP, h - SVG_BOTTOM };
    tb_printf(b, "<svg class=\"chart\" id=\"");
    tb_esc(b, id);
    tb_printf(b, "\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" data-x0=\"%.9g\" data-x1=\"%.9g\" "
                 "data-y0=\"%.9g\" data-y1=\"%.9g\" data-logy=\"%d\" data-box=\"%g %g %g %g\">",
              SVG_W, h, SVG_W, h, ax->x0, ax->x1, ax->y0, ax->y1, logy, ax->px0, ax->py0, ax->px1, ax->py1);
    tb_printf(b, "<rect class=\"frame\" x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\"/>", ax->px0, ax->py0,
              ax->px1 - ax->px0, ax->py1 - ax->py0);
    /* grid and tick labels */
    double st = nice_step(ax->x1 - ax->x0, 8);
    tb_puts(b, "<path class=\"grid\" d=\"");
    for (double t = ceil(ax->x0 / st) * st; t <= ax->x1; t += st)
        tb_printf(b, "M%.1f %gV%g", px_x(ax, t), ax->py0, ax->py1);
    const double sy = logy ? fmax(1, round(nice_step(ax->y1 - ax->y0, 4))) : nice_step(ax->y1 - ax->y0, 4);
    for (double y = ceil(ax->y0 / sy) * sy; y <= ax->y1; y += sy)
        tb_printf(b, "M%g %.1fH%g", ax->px0, ax->py1 - (y - ax->y0) / (ax->y1 - ax->y0) * (ax->py1 - ax->py0),
                  ax->px1);
    tb_puts(b, "\"/>");
    for (double t = ceil(ax->x0 / st) * st; t <= ax->x1; t += st)
        tb_printf(b, "<text class=\"tick\" x=\"%.1f\" y=\"%g\" text-anchor=\"middle\">%.4g</text>", px_x(ax, t),
                  ax->py1 + 13, fabs(t) < 1e-12 * st ? 0.0 : t);
    for (double y = ceil(ax->y0 / sy) * sy; y <= ax->y1; y += sy) {
        const double py = ax->py1 - (y - ax->y0) / (ax->y1 - ax->y0) * (ax->py1 - ax->py0);
        if (logy)
            tb_printf(b, "<text class=\"tick\" x=\"%g\" y=\"%.1f\" text-anchor=\"end\">1e%g</text>", ax->px0 - 4,
                      py + 4, y);
        else
            tb_printf(b, "<text class=\"tick\" x=\"%g\" y=\"%.1f\" text-anchor=\"end\">%.4g</text>", ax->px0 - 4,
                      py + 4, fabs(y) < 1e-12 * sy ? 0.0 : y);
    }
    tb_printf(b, "<text class=\"title\" x=\"%g\" y=\"14\">", ax->px0);
    tb_esc(b, title);
    tb_printf(b, "</text><text class=\"label\" x=\"%g\" y=\"%d\" text-anchor=\"end\">", ax->px1, h - 2);
    tb_esc(b, xlabel);
    tb_printf(b, "</text><text class=\"label\" x=\"10\" y=\"%g\" transform=\"rotate(-90 10 %g)\" "
                 "text-anchor=\"middle\">", (ax->py0 + ax->py1) / 2, (ax->py0 + ax->py1) / 2);
    tb_esc(b, ylabel);
    tb_puts(b, "</text>");
}

/* One point of a path: "M" starts a piece, else the implicit lineto of the previous command. */
static void point(textbuf *b, int *started, double x, double y)
{
    tb_printf(b, *started ? " %.1f %.1f" : "M%.1f %.1f", x, y);
    *started = 1;
}

void svg_line(textbuf *b, const svg_axes *ax, const double *x, const double *y, int stride, int n, const int *seg,
              const char *cls)
{
    tb_printf(b, "<path class=\"%s\" d=\"", cls);
    const double w = ax->px1 - ax->px0;
    int started = 0, col = -1, piece = -2;
    /* the current column's extremes, in sample order */
    int kmin = -1, kmax = -1;
    for (int k = 0; k <= n; k++) {
        const int s = k < n ? (seg ? seg[k] : 0) : -3;
        const double v = k < n ? y[(size_t)k * (size_t)stride] : 0;
        const int skip = k < n && (s < 0 || !isfinite(v));
        const int c = k < n && !skip ? (int)floor((x[k] - ax->x0) / (ax->x1 - ax->x0) * w) : -1;
        if (kmin >= 0 && (k == n || skip || c != col || s != piece)) {
            const int a = kmin < kmax ? kmin : kmax, z = kmin < kmax ? kmax : kmin;
            point(b, &started, px_x(ax, x[a]), px_y(ax, y[(size_t)a * (size_t)stride]));
            if (z != a)
                point(b, &started, px_x(ax, x[z]), px_y(ax, y[(size_t)z * (size_t)stride]));
            kmin = kmax = -1;
        }
        if (k == n)
            break;
        if (skip) {
            started = 0;
            piece = -2;
            continue;
        }
        if (s != piece)
            started = 0;   /* a new window: a new piece of line */
        piece = s;
        col = c;
        if (kmin < 0) {
            kmin = kmax = k;
        } else {
            if (v < y[(size_t)kmin * (size_t)stride])
                kmin = k;
            if (v > y[(size_t)kmax * (size_t)stride])
                kmax = k;
        }
    }
    tb_puts(b, "\"/>");
}

void svg_vlines(textbuf *b, const svg_axes *ax, const double *x, int n, const char *cls)
{
    tb_printf(b, "<path class=\"%s\" d=\"", cls);
    for (int k = 0; k < n; k++)
        if (x[k] >= ax->x0 && x[k] <= ax->x1)
            tb_printf(b, "M%.1f %gV%g", px_x(ax, x[k]), ax->py0, ax->py1);
    tb_puts(b, "\"/>");
}

void svg_legend(textbuf *b, const svg_axes *ax, int n, const char *const *label, const char *const *cls)
{
    double x = ax->px1 - 4;
    /* right to left, about 7 px a character */
    for (int i = n - 1; i >= 0; i--) {
        const double wl = 7.0 * (double)strlen(label[i]) + 26;
        x -= wl;
        tb_printf(b, "<path class=\"%s\" d=\"M%.1f 10H%.1f\"/><text class=\"legend\" x=\"%.1f\" y=\"14\">", cls[i],
                  x, x + 16, x + 20);
        tb_esc(b, label[i]);
        tb_puts(b, "</text>");
    }
}

void svg_end(textbuf *b) { tb_puts(b, "</svg>\n"); }

#define HIST_BINS 40

void svg_histogram(textbuf *b, const char *id, const char *title, const char *xlabel, int nset,
                   const double *const *v, const int *n, const char *const *label, const char *const *cls)
{
    svg_range xr;
    svg_range_init(&xr);
    for (int s = 0; s < nset; s++)
        svg_range_add(&xr, v[s], 1, n[s], NULL, 0);
    pad(&xr.lo, &xr.hi);
    int (*count)[HIST_BINS] = calloc((size_t)(nset > 0 ? nset : 1), sizeof *count);
    if (!count) {
        b->bad = 1;
        return;
    }
    int top = 1;
    for (int s = 0; s < nset; s++)
        for (int k = 0; k < n[s]; k++) {
            if (!isfinite(v[s][k]))
                continue;
            int bin = (int)((v[s][k] - xr.lo) / (xr.hi - xr.lo) * HIST_BINS);
            bin = bin < 0 ? 0 : bin >= HIST_BINS ? HIST_BINS - 1 : bin;
            if (++count[s][bin] > top)
                top = count[s][bin];
        }
    svg_axes ax;
    svg_range yr = { 0, top };
    svg_begin(b, &ax, id, 170, xr.lo, xr.hi, yr, 0, title, xlabel, "samples");
    for (int s = 0; s < nset; s++) {
        tb_printf(b, "<path class=\"%s\" d=\"M%g %g", cls[s], ax.px0, px_y(&ax, 0));
        for (int bin = 0; bin < HIST_BINS; bin++) {
            const double xa = xr.lo + (xr.hi - xr.lo) * bin / HIST_BINS, xb = xr.lo + (xr.hi - xr.lo) * (bin + 1) / HIST_BINS;
            tb_printf(b, "H%.1fV%.1fH%.1f", px_x(&ax, xa), px_y(&ax, count[s][bin]), px_x(&ax, xb));
        }
        tb_printf(b, "V%g\"/>", px_y(&ax, 0));
    }
    svg_legend(b, &ax, nset, label, cls);
    svg_end(b);
    free(count);
}

/* -1 blue, 0 white, +1 red. */
static void corr_colour(double c, int rgb[3])
{
    const double a = fmin(1, fabs(c));
    const int hi = 255, lo = (int)lround(255 * (1 - a));
    rgb[0] = c < 0 ? lo : hi;
    rgb[1] = lo;
    rgb[2] = c < 0 ? hi : lo;
}

void svg_heatmap(textbuf *b, const char *id, int n, const double *c, const char *const *name)
{
    const int label = 260, top = 24, cell = n > 0 ? (n <= 12 ? 28 : n <= 32 ? 14 : 8) : 8;
    const int w = label + n * cell + 10, h = top + n * cell + 10;
    tb_printf(b, "<svg class=\"heat\" id=\"%s\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\">", id, w, h, w, h);
    for (int i = 0; i < n; i++) {
        tb_printf(b, "<text class=\"tick\" x=\"%d\" y=\"%d\" text-anchor=\"end\">", label - 4,
                  top + i * cell + cell / 2 + 4);
        tb_esc(b, name[i]);
        tb_puts(b, "</text>");
        if (cell >= 14 || (i + 1) % 5 == 0)   /* narrow columns: every fifth number */
            tb_printf(b, "<text class=\"tick\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">%d</text>",
                      label + i * cell + cell / 2, top - 6, i + 1);
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            const double v = c[(size_t)i * (size_t)n + (size_t)j];
            const int x = label + j * cell, y = top + i * cell;
            if (!isfinite(v)) {
                tb_printf(b, "<rect class=\"undet\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" data-value=\"null\">"
                             "<title>", x, y, cell, cell);
                tb_esc(b, name[i]);
                tb_puts(b, " / ");
                tb_esc(b, name[j]);
                tb_puts(b, ": undetermined</title></rect>");
                continue;
            }
            int rgb[3];
            corr_colour(v, rgb);
            tb_printf(b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#%02x%02x%02x\" data-value=\"", x, y,
                      cell, cell, rgb[0], rgb[1], rgb[2]);
            tb_exact(b, v);
            tb_puts(b, "\"><title>");
            tb_esc(b, name[i]);
            tb_puts(b, " / ");
            tb_esc(b, name[j]);
            tb_printf(b, ": %.3f</title></rect>", v);
        }
    svg_end(b);
}

void svg_errorbars(textbuf *b, const char *id, const char *title, const char *xlabel, int n, const char *const *name,
                   const double *value, const double *lo, const double *hi, const int *flag)
{
    const int row = 18, label = 300, h = SVG_TOP + n * row + SVG_BOTTOM;
    svg_range xr;
    svg_range_init(&xr);
    svg_range_add(&xr, value, 1, n, NULL, 0);
    svg_range_add(&xr, lo, 1, n, NULL, 0);
    svg_range_add(&xr, hi, 1, n, NULL, 0);
    const double zero = 0;
    svg_range_add(&xr, &zero, 1, 1, NULL, 0);
    pad(&xr.lo, &xr.hi);
    svg_axes ax = { xr.lo, xr.hi, 0, 1, 0, label, SVG_W - SVG_RIGHT, SVG_TOP, h - SVG_BOTTOM };
    tb_printf(b, "<svg class=\"chart\" id=\"%s\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\">", id, SVG_W, h, SVG_W,
              h);
    tb_printf(b, "<rect class=\"frame\" x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\"/>", ax.px0, ax.py0,
              ax.px1 - ax.px0, ax.py1 - ax.py0);
    const double st = nice_step(ax.x1 - ax.x0, 6);
    tb_puts(b, "<path class=\"grid\" d=\"");
    for (double t = ceil(ax.x0 / st) * st; t <= ax.x1; t += st)
        tb_printf(b, "M%.1f %gV%g", px_x(&ax, t), ax.py0, ax.py1);
    tb_printf(b, "\"/><path class=\"zero\" d=\"M%.1f %gV%g\"/>", px_x(&ax, 0), ax.py0, ax.py1);
    for (double t = ceil(ax.x0 / st) * st; t <= ax.x1; t += st)
        tb_printf(b, "<text class=\"tick\" x=\"%.1f\" y=\"%g\" text-anchor=\"middle\">%.4g</text>", px_x(&ax, t),
                  ax.py1 + 13, fabs(t) < 1e-12 * st ? 0.0 : t);
    for (int i = 0; i < n; i++) {
        const double y = SVG_TOP + (i + 0.5) * row;
        tb_printf(b, "<text class=\"tick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">", label - 6, y + 4);
        tb_esc(b, name[i]);
        tb_puts(b, "</text>");
        if (isfinite(lo[i]) && isfinite(hi[i]))
            tb_printf(b, "<path class=\"bar%s\" d=\"M%.1f %.1fH%.1fM%.1f %.1fV%.1fM%.1f %.1fV%.1f\"/>", flag[i] ? " flag" : "",
                      px_x(&ax, lo[i]), y, px_x(&ax, hi[i]), px_x(&ax, lo[i]), y - 4, y + 4, px_x(&ax, hi[i]), y - 4,
                      y + 4);
        if (isfinite(value[i]))
            tb_printf(b, "<circle class=\"dot%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\"/>", flag[i] ? " flag" : "",
                      px_x(&ax, value[i]), y);
    }
    tb_puts(b, "<text class=\"title\" x=\"10\" y=\"14\">");
    tb_esc(b, title);
    tb_printf(b, "</text><text class=\"label\" x=\"%g\" y=\"%d\" text-anchor=\"end\">", ax.px1, h - 2);
    tb_esc(b, xlabel);
    tb_puts(b, "</text>");
    svg_end(b);
}
