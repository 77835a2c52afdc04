/* html_svg.h — inline SVG charts for the HTML report: time series drawn with min/max
 * envelopes per pixel column, vertical window boundaries, histograms, a heat map and
 * intervals as error bars. Every chart is a fixed-size <svg> with a viewBox (it scales with
 * the page and prints), styled by class names the page's CSS defines; no scripts, no fonts.
 *
 * Long series: samples falling in one pixel column are reduced to that column's minimum and
 * maximum, in the order they occur, so a one-sample spike stays visible while a 60 s log at
 * 1 kHz costs at most two points per column. */
#ifndef CLI_HTML_SVG_H
#define CLI_HTML_SVG_H

#include "textbuf.h"

#define SVG_W 720          /* chart width [px] */
#define SVG_H 190          /* time-series chart height [px] */
#define SVG_LEFT 64        /* margins around the plotting area [px] */
#define SVG_RIGHT 12
#define SVG_TOP 22
#define SVG_BOTTOM 30

/* A chart's data range and plotting box. */
typedef struct {
    double x0, x1, y0, y1;   /* data range (y of a log chart: log10 of the values) */
    int logy;
    double px0, px1, py0, py1;   /* plotting box [px]: left, right, top, bottom */
} svg_axes;

/* A data range that holds every finite value (a log range: every positive one). */
typedef struct {
    double lo, hi;
} svg_range;
void svg_range_init(svg_range *r);
void svg_range_add(svg_range *r, const double *y, int stride, int n, const int *seg, int logy);

/* Open an <svg> chart of height h: frame, grid, ticks, labels, title; data-* attributes give
 * the ranges (for the hover script). Ranges are padded and never empty. */
void svg_begin(textbuf *b, svg_axes *ax, const char *id, int h, double x0, double x1, svg_range yr, int logy,
               const char *title, const char *xlabel, const char *ylabel);
/* A series y[k * stride] at x[k], k < n, as one <path> of class cls. seg (may be NULL): a
 * sample with seg[k] < 0 is not drawn and a change of seg starts a new piece of line. */
void svg_line(textbuf *b, const svg_axes *ax, const double *x, const double *y, int stride, int n, const int *seg,
              const char *cls);
/* Vertical lines at x[0..n-1] (window boundaries) as one <path> of class cls. */
void svg_vlines(textbuf *b, const svg_axes *ax, const double *x, int n, const char *cls);
/* A legend row at the top right: n entries, each a short line of class cls[i] and its label. */
void svg_legend(textbuf *b, const svg_axes *ax, int n, const char *const *label, const char *const *cls);
void svg_end(textbuf *b);

/* Histograms of nset value sets on common bins (the range of all, 40 bins), as outlined steps
 * of class cls[s]; v[s] has n[s] values. */
void svg_histogram(textbuf *b, const char *id, const char *title, const char *xlabel, int nset,
                   const double *const *v, const int *n, const char *const *label, const char *const *cls);
/* An n x n heat map of c (row-major, NaN: undetermined, drawn hatched grey), -1 blue .. +1 red,
 * rows and columns named; each cell carries data-value and a <title> for hover. */
void svg_heatmap(textbuf *b, const char *id, int n, const double *c, const char *const *name);
/* One row per item: a dot at value[i] and a bar from lo[i] to hi[i] (NaN: no bar), on a
 * common axis with a zero line, labelled name[i]; flag[i] non-zero draws it in the flag class. */
void svg_errorbars(textbuf *b, const char *id, const char *title, const char *xlabel, int n, const char *const *name,
                   const double *value, const double *lo, const double *hi, const int *flag);

#endif
