/* html_page.c — the report page (html_page.h): head with CSS and script, the verdict, the
 * parameter table with its intervals, the log sections (html_logs.c), then the optimizer's trace,
 * what the data do not determine (correlations, null directions), inputs and settings. */
#include "html_page.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html_logs.h"
#include "html_predict.h"
#include "html_svg.h"

/* Colours: logged black, nominal orange, fitted blue (distinguishable in grey print too by weight). */
static const char css[] =
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0 auto;max-width:1000px;padding:0 16px 40px;"
    "color:#222;background:#fff}"
    "h1{font-size:22px;margin:18px 0 4px}h2{font-size:18px;border-bottom:2px solid #ddd;margin-top:30px}"
    "h3{font-size:15px;margin:18px 0 6px}h4{font-size:14px;margin:14px 0 2px}"
    ".verdict{font-size:16px;padding:10px 14px;border-radius:6px;background:#eef6ee;border:1px solid #9c9}"
    ".verdict.warn{background:#fdf5e6;border-color:#e0b060}.verdict.bad{background:#fbeaea;border-color:#d88}"
    ".note{color:#666;font-size:12px}.bad{color:#b00}.good{color:#070}"
    "table{border-collapse:collapse;margin:6px 0;font-size:13px}td,th{border:1px solid #ddd;padding:2px 7px;"
    "text-align:left}th{background:#f4f4f4}table.num td{font-variant-numeric:tabular-nums;white-space:nowrap}"
    "td.flag{color:#b00;font-weight:600}tr.flag td:first-child{color:#b00}"
    "code{font-size:12px}nav a{margin-right:12px}"
    "svg{display:block;max-width:100%;height:auto;margin:4px 0}"
    "svg text{font-family:system-ui,sans-serif}svg .tick{font-size:10px;fill:#555}"
    "svg .title{font-size:12px;font-weight:600;fill:#222}svg .label,svg .legend{font-size:11px;fill:#444}"
    "svg .frame{fill:none;stroke:#bbb}svg .grid{stroke:#eee;fill:none}svg .zero{stroke:#888;fill:none}"
    "svg .win{stroke:#c8c8c8;stroke-dasharray:2 3;fill:none}"
    "svg path.log{stroke:#111;stroke-width:1.6;fill:none}svg path.nom{stroke:#e08a00;stroke-width:1.1;fill:none}"
    "svg path.fit{stroke:#1f5fd0;stroke-width:1.1;fill:none}"
    "svg path.loss{stroke:#1f5fd0;stroke-width:1.4;fill:none}svg path.gnorm{stroke:#8a2be2;stroke-width:1.4;fill:none}"
    "svg .bar{stroke:#1f5fd0;stroke-width:1.5;fill:none}svg .bar.flag{stroke:#c00}"
    "svg .dot{fill:#1f5fd0}svg .dot.flag{fill:#c00}svg rect.undet{fill:#ccc}"
    "#tip{position:fixed;display:none;background:#fffffa;border:1px solid #999;padding:2px 6px;font-size:12px;"
    "pointer-events:none}"
    "@media print{body{max-width:none;font-size:11px}nav,#tip{display:none}h2{break-before:auto}"
    "svg,table,.joint h4{break-inside:avoid}.verdict{border:1px solid #000}a{color:inherit;text-decoration:none}}";

/* Hover read-out of a chart's time and value, from its data-* ranges. No network, no libraries. */
static const char script[] =
    "(function(){var tip=document.getElementById('tip');"
    "document.querySelectorAll('svg.chart[data-x0]').forEach(function(s){"
    "s.addEventListener('mousemove',function(e){var r=s.getBoundingClientRect(),d=s.dataset,"
    "b=d.box.split(' ').map(Number),k=r.width/s.viewBox.baseVal.width,"
    "px=(e.clientX-r.left)/k,py=(e.clientY-r.top)/k;"
    "if(px<b[0]||px>b[2]||py<b[1]||py>b[3]){tip.style.display='none';return;}"
    "var x=+d.x0+(px-b[0])/(b[2]-b[0])*(d.x1-d.x0),y=+d.y0+(b[3]-py)/(b[3]-b[1])*(d.y1-d.y0);"
    "if(d.logy==='1')y=Math.pow(10,y);"
    "tip.textContent=x.toPrecision(5)+', '+y.toPrecision(4);tip.style.display='block';"
    "tip.style.left=(e.clientX+12)+'px';tip.style.top=(e.clientY+12)+'px';});"
    "s.addEventListener('mouseleave',function(){tip.style.display='none';});});})();";

/* ---- the report's values ------------------------------------------------------------------ */

/* The item at a "|"-separated path ("parameters|2|fitted"); NULL if absent. */
static const cJSON *at(const cJSON *o, const char *path)
{
    char key[256];
    while (o && *path) {
        size_t n = strcspn(path, "|");
        if (n >= sizeof key)
            return NULL;
        memcpy(key, path, n);
        key[n] = '\0';
        path += n + (path[n] == '|');
        if (cJSON_IsArray(o)) {
            char *end;
            long i = strtol(key, &end, 10);
            o = *end ? NULL : cJSON_GetArrayItem(o, (int)i);
        } else {
            o = cJSON_GetObjectItemCaseSensitive(o, key);
        }
    }
    return o;
}

/* A number of the report: parsed, or a raw item of the fit's own (numfmt_json) written exactly. */
static double value(const cJSON *v)
{
    if (cJSON_IsNumber(v))
        return v->valuedouble;
    if (cJSON_IsRaw(v) && v->valuestring) {
        char *end;
        const double x = strtod(v->valuestring, &end);
        return end != v->valuestring && *end == '\0' ? x : NAN;
    }
    return NAN;
}

static double num_at(const cJSON *o, const char *path) { return value(at(o, path)); }

static const char *str_at(const cJSON *o, const char *path)
{
    const cJSON *v = at(o, path);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* A table cell with the report's number at path (display format fmt), or "-" when null. */
static void cell(textbuf *b, const cJSON *rep, const char *path, const char *fmt)
{
    const double x = num_at(rep, path);
    if (!isfinite(x)) {
        tb_puts(b, "<td>-</td>");
        return;
    }
    tb_puts(b, "<td data-key=\"");
    tb_esc(b, path);
    tb_puts(b, "\" data-value=\"");
    tb_exact(b, x);
    tb_puts(b, "\">");
    tb_printf(b, fmt, x);
    tb_puts(b, "</td>");
}

/* An inline number with its key (for sentences). */
static void inline_num(textbuf *b, const cJSON *rep, const char *path)
{
    const double x = num_at(rep, path);
    tb_puts(b, "<b data-key=\"");
    tb_esc(b, path);
    tb_puts(b, "\" data-value=\"");
    tb_exact(b, x);
    tb_printf(b, "\">%.4g</b>", x);
}

/* ---- sections ----------------------------------------------------------------------------- */

/* The largest q RMSE over coordinates of a prediction set, before (0) or after (1); NaN if none. */
static double worst(const cJSON *rep, const char *set, int after)
{
    char path[64];
    snprintf(path, sizeof path, "prediction|%s|rmse|%s|q", set, after ? "after" : "before");
    const cJSON *o = at(rep, path), *c;
    double w = NAN;
    cJSON_ArrayForEach(c, o)
        if (isfinite(value(c)))
            w = isnan(w) ? value(c) : fmax(w, value(c));
    return w;
}

static void verdict(textbuf *b, const cJSON *rep)
{
    const char *stop = str_at(rep, "stop");
    const cJSON *gp = at(rep, "gates|passed");
    const int converged = stop && !strcmp(stop, "converged"), gates_ok = !gp || cJSON_IsTrue(gp);
    const double l0 = num_at(rep, "loss|before"), l1 = num_at(rep, "loss|after");
    tb_printf(b, "<p class=\"verdict%s\" id=\"verdict\">", !gates_ok ? " bad" : converged && l1 <= l0 ? "" : " warn");
    tb_puts(b, converged ? "<b>Converged</b>" : "<b>Stopped: ");
    if (!converged) {
        tb_esc(b, stop ? stop : "?");
        tb_puts(b, "</b>");
    }
    /* the message repeats the stop reason more often than not: "converged (FTOL_REACHED)" */
    const char *msg = str_at(rep, "message") ? str_at(rep, "message") : "";
    if (stop && !strncmp(msg, stop, strlen(stop)) && !strncmp(msg + strlen(stop), " (", 2))
        msg += strlen(stop) + 1;
    tb_puts(b, " ");
    tb_esc(b, msg);
    tb_puts(b, " after ");
    inline_num(b, rep, "iterations");
    tb_puts(b, " iterations. Loss ");
    inline_num(b, rep, "loss|before");
    tb_puts(b, " &rarr; ");
    inline_num(b, rep, "loss|after");
    if (l0 > 0 && isfinite(l1))
        tb_printf(b, " (%+.1f %%)", 100 * (l1 - l0) / l0);
    tb_puts(b, ".");
    const double v0 = worst(rep, "validation", 0), v1 = worst(rep, "validation", 1);
    if (isfinite(v0) && isfinite(v1))
        tb_printf(b, " Held out: largest q RMSE %.4g &rarr; %.4g (<span class=\"%s\">%s</span>).", v0, v1,
                  v1 < v0 ? "good" : "bad", v1 < v0 ? "better" : "not better");
    else if (at(rep, "prediction|validation") && !cJSON_IsNull(at(rep, "prediction|validation")))
        tb_puts(b, " Held out: <span class=\"bad\">a prediction diverged</span>.");
    static const char *const gate[2] = { "max_rmse", "max_loss" };
    for (int g = 0; g < 2; g++) {
        char path[64];
        snprintf(path, sizeof path, "gates|%s", gate[g]);
        if (!at(rep, path))
            continue;
        snprintf(path, sizeof path, "gates|%s|passed", gate[g]);
        const int ok = cJSON_IsTrue(at(rep, path));
        tb_printf(b, " Gate --%s ", g ? "max-loss" : "max-rmse");
        snprintf(path, sizeof path, "gates|%s|limit", gate[g]);
        inline_num(b, rep, path);
        tb_printf(b, ": <span class=\"%s\">%s</span>", ok ? "good" : "bad", ok ? "passed" : "FAILED");
        snprintf(path, sizeof path, "gates|%s|value", gate[g]);
        tb_printf(b, " (%.4g).", num_at(rep, path));
    }
    tb_puts(b, "</p>\n");
}

static void input_row(textbuf *b, const char *what, const cJSON *in)
{
    tb_puts(b, "<tr><td>");
    tb_esc(b, what);
    tb_puts(b, "</td><td><code>");
    tb_esc(b, str_at(in, "path") ? str_at(in, "path") : "-");
    tb_puts(b, "</code></td><td><code>");
    const char *h = str_at(in, "sha256");
    tb_printf(b, "%.16s", h ? h : "-");
    tb_puts(b, "</code></td><td>");
    const double n = num_at(in, "samples");
    if (isfinite(n))
        tb_printf(b, "%.0f", n);
    tb_puts(b, "</td></tr>\n");
}

static void inputs(textbuf *b, const cJSON *rep)
{
    tb_puts(b, "<section id=\"inputs\"><h2>Inputs and settings</h2>\n<table><tr><th>input</th><th>path</th>"
               "<th>sha256 (first 16)</th><th>samples</th></tr>\n");
    input_row(b, "robot", at(rep, "robot"));
    if (cJSON_IsObject(at(rep, "config")))
        input_row(b, "fit spec", at(rep, "config"));
    const cJSON *l;
    cJSON_ArrayForEach(l, at(rep, "logs"))
        input_row(b, "fitted log", l);
    cJSON_ArrayForEach(l, at(rep, "validation_logs"))
        input_row(b, "validation log", l);
    tb_puts(b, "</table>\n<p>");
    tb_printf(b, "Windows: %.0f of %g s, start states %s, start velocities %s; integrator %s, step %.4g ms (%s); "
                 "weights q %g, qd %g; gradient %s.",
              num_at(rep, "settings|windows"), num_at(rep, "settings|window"),
              str_at(rep, "settings|start") ? str_at(rep, "settings|start") : "?",
              str_at(rep, "settings|start_velocity") ? str_at(rep, "settings|start_velocity") : "?",
              str_at(rep, "settings|integrator") ? str_at(rep, "settings|integrator") : "?",
              1e3 * num_at(rep, "settings|step|seconds"),
              cJSON_IsTrue(at(rep, "settings|step|automatic")) ? "chosen" : "as given",
              num_at(rep, "settings|weights|q"), num_at(rep, "settings|weights|qd"),
              str_at(rep, "gradient") ? str_at(rep, "gradient") : "smoothed");
    if (str_at(rep, "contact_model"))
        tb_printf(b, " Contact: %s.", str_at(rep, "contact_model"));
    /* which optimizer ran and why (a hand-over runs two), as stderr says it */
    const cJSON *ran = at(rep, "optimizer|ran"), *o;
    if (cJSON_GetArraySize(ran) > 0) {
        tb_puts(b, " Optimizer: ");
        int k = 0;
        cJSON_ArrayForEach(o, ran)
            if (cJSON_IsString(o)) {
                tb_puts(b, k++ ? " then " : "");
                tb_esc(b, o->valuestring);
            }
        tb_puts(b, " (");
        tb_esc(b, str_at(rep, "optimizer|why") ? str_at(rep, "optimizer|why") : "");
        tb_puts(b, ").");
    }
    tb_puts(b, "</p></section>\n");
}

static void trace(textbuf *b, const cJSON *rep)
{
    const cJSON *tl = at(rep, "trace|loss"), *tg = at(rep, "trace|grad_norm");
    const int n = cJSON_GetArraySize(tl);
    tb_puts(b, "<section id=\"trace\"><h2>Optimizer trace</h2>\n");
    if (n < 1 || cJSON_GetArraySize(tg) != n) {
        tb_puts(b, "<p class=\"note\">No iterations recorded.</p></section>\n");
        return;
    }
    double *x = malloc((size_t)n * 3 * sizeof(double));
    if (!x) {
        b->bad = 1;
        return;
    }
    for (int k = 0; k < n; k++) {
        const cJSON *a = cJSON_GetArrayItem(tl, k), *g = cJSON_GetArrayItem(tg, k);
        x[k] = k + 1;
        x[n + k] = value(a);
        x[2 * n + k] = value(g);
    }
    static const char *const cls[2] = { "loss", "gnorm" };
    static const char *const label[2] = { "loss", "|gradient| (scaled parameters)" };
    for (int s = 0; s < 2; s++) {
        svg_range yr;
        svg_range_init(&yr);
        svg_range_add(&yr, x + (s + 1) * n, 1, n, NULL, 1);
        svg_axes ax;
        svg_begin(b, &ax, s ? "trace-gnorm" : "trace-loss", 170, 1, n > 1 ? n : 2, yr, 1, label[s], "iteration",
                  s ? "|g|" : "loss");
        svg_line(b, &ax, x, x + (s + 1) * n, 1, n, NULL, cls[s]);
        svg_end(b);
    }
    tb_printf(b, "<p class=\"note\">%d accepted iterations; the loss is the fit's own (start states %s).</p>\n", n,
              str_at(rep, "settings|start") ? str_at(rep, "settings|start") : "?");
    free(x);
    tb_puts(b, "</section>\n");
}

static void parameters(textbuf *b, const cJSON *rep)
{
    const cJSON *ps = at(rep, "parameters");
    const int n = cJSON_GetArraySize(ps);
    /* the intervals the terminal shows: robust where the residuals say the model does not fit */
    const int robust = str_at(rep, "diagnostics|interval") && !strcmp(str_at(rep, "diagnostics|interval"), "robust");
    const char *se_key = robust ? "stderr_robust" : "stderr", *ci_key = robust ? "ci95_robust" : "ci95";
    tb_printf(b, "<section id=\"parameters\"><h2>Parameters</h2>\n%s<table class=\"num\" id=\"param-table\"><tr>"
                 "<th>parameter</th><th>unit</th><th>nominal</th><th>fitted</th><th>change</th><th>stderr%s</th>"
                 "<th>95 %% interval</th><th>note</th></tr>\n",
              robust ? "<p class=\"note\">Intervals: robust (sandwich over windows): the residuals say the model does "
                       "not fit the data.</p>\n" : "",
              robust ? " (robust)" : "");
    const char **name = calloc((size_t)(n ? n : 1), sizeof *name);
    double *val = malloc((size_t)(n ? n : 1) * 3 * sizeof(double));
    int *flag = calloc((size_t)(n ? n : 1), sizeof *flag);
    if (!name || !val || !flag) {
        b->bad = 1;
        free(name);
        free(val);
        free(flag);
        return;
    }
    for (int k = 0; k < n; k++) {
        const cJSON *p = cJSON_GetArrayItem(ps, k);
        char path[64];
        name[k] = str_at(p, "name") ? str_at(p, "name") : "?";
        const char *bound = str_at(p, "at_bound");
        const int unident = cJSON_IsFalse(at(p, "identifiable")), poor = cJSON_IsTrue(at(p, "poorly_determined"));
        flag[k] = unident || bound || poor;
        tb_printf(b, "<tr%s data-param=\"", flag[k] ? " class=\"flag\"" : "");
        tb_esc(b, name[k]);
        tb_puts(b, "\"><td>");
        tb_esc(b, name[k]);
        tb_puts(b, "</td><td>");
        tb_esc(b, str_at(p, "unit") ? str_at(p, "unit") : "");
        tb_puts(b, "</td>");
        snprintf(path, sizeof path, "parameters|%d|nominal", k);
        cell(b, rep, path, "%.6g");
        snprintf(path, sizeof path, "parameters|%d|fitted", k);
        cell(b, rep, path, "%.6g");
        const double rel = num_at(p, "relative_change");
        if (isfinite(rel)) {
            snprintf(path, sizeof path, "parameters|%d|relative_change", k);
            const double x = num_at(rep, path);
            tb_printf(b, "<td data-key=\"%s\" data-value=\"", path);
            tb_exact(b, x);
            tb_printf(b, "\">%+.1f %%</td>", 100 * x);
        } else {
            snprintf(path, sizeof path, "parameters|%d|change", k);
            cell(b, rep, path, "%+.3g");
        }
        snprintf(path, sizeof path, "parameters|%d|%s", k, se_key);
        cell(b, rep, path, "%.3g");
        char lo_key[24], hi_key[24];
        snprintf(lo_key, sizeof lo_key, "%s|0", ci_key);
        snprintf(hi_key, sizeof hi_key, "%s|1", ci_key);
        const double lo = num_at(p, lo_key), hi = num_at(p, hi_key);
        if (isfinite(lo) && isfinite(hi)) {
            tb_printf(b, "<td data-key=\"parameters|%d|%s|0\" data-value=\"", k, ci_key);
            tb_exact(b, lo);
            tb_printf(b, "\">[%.5g, ", lo);
            tb_printf(b, "<span data-key=\"parameters|%d|%s|1\" data-value=\"", k, ci_key);
            tb_exact(b, hi);
            tb_printf(b, "\">%.5g</span>]</td>", hi);
        } else {
            tb_puts(b, "<td>-</td>");
        }
        tb_printf(b, "<td class=\"flag\">%s%s%s%s</td></tr>\n", unident ? "not identifiable " : "",
                  bound ? (!strcmp(bound, "lower") ? "at lower bound " : "at upper bound ") : "",
                  poor ? "poorly determined" : "", "");
        /* the chart: change and interval relative to the nominal value, where it is not zero */
        const double x0 = num_at(p, "nominal");
        val[k] = isfinite(rel) ? 100 * rel : NAN;
        /* relative to the signed nominal, as relative_change: a negative one's bounds swap */
        const double rlo = x0 != 0 && isfinite(lo) ? 100 * (lo - x0) / x0 : NAN;
        const double rhi = x0 != 0 && isfinite(hi) ? 100 * (hi - x0) / x0 : NAN;
        val[n + k] = x0 < 0 ? rhi : rlo;
        val[2 * n + k] = x0 < 0 ? rlo : rhi;
    }
    tb_puts(b, "</table>\n");
    svg_errorbars(b, "param-chart", "fitted change and its 95 % interval, relative to the nominal value",
                  "change [% of nominal]", n, name, val, val + n, val + 2 * n, flag);
    tb_puts(b, "<p class=\"note\">Red: not identifiable, at a bound or poorly determined (standard error above 50 % of "
               "the value). A parameter whose nominal value is 0 has no relative change and no bar; a negative one's "
               "change is that of its magnitude. Intervals are fitted &plusmn; 1.96 standard errors (robust: &plusmn; "
               "t on the sandwich's degrees of freedom) and ignore bounds.</p>\n");
    const cJSON *dl = at(rep, "derived");
    if (cJSON_GetArraySize(dl) > 0) {
        tb_printf(b, "<h3>What one joint's motion determines (derived from the parameters above)</h3>\n"
                     "<table class=\"num\" id=\"derived-table\"><tr><th>quantity</th><th>unit</th><th>nominal</th>"
                     "<th>fitted</th><th>stderr%s</th></tr>\n", robust ? " (robust)" : "");
        for (int k = 0; k < cJSON_GetArraySize(dl); k++) {
            char path[64];
            const cJSON *d = cJSON_GetArrayItem(dl, k);
            tb_puts(b, "<tr><td>");
            tb_esc(b, str_at(d, "name") ? str_at(d, "name") : "?");
            tb_puts(b, "</td><td>");
            tb_esc(b, str_at(d, "unit") ? str_at(d, "unit") : "");
            tb_puts(b, "</td>");
            snprintf(path, sizeof path, "derived|%d|nominal", k);
            cell(b, rep, path, "%.6g");
            snprintf(path, sizeof path, "derived|%d|fitted", k);
            cell(b, rep, path, "%.6g");
            snprintf(path, sizeof path, "derived|%d|%s", k, se_key);
            cell(b, rep, path, "%.3g");
            tb_puts(b, "</tr>\n");
        }
        tb_puts(b, "</table>\n");
    }
    tb_puts(b, "</section>\n");
    free(name);
    free(val);
    free(flag);
}

static void name_list(textbuf *b, const cJSON *rep, const char *path, const char *what)
{
    const cJSON *l = at(rep, path), *s;
    if (cJSON_GetArraySize(l) == 0)
        return;
    tb_printf(b, "<p>%s: ", what);
    int first = 1;
    cJSON_ArrayForEach(s, l)
        if (cJSON_IsString(s)) {
            tb_puts(b, first ? "<code>" : ", <code>");
            tb_esc(b, s->valuestring);
            tb_puts(b, "</code>");
            first = 0;
        }
    tb_puts(b, ".</p>\n");
}

static void identifiability(textbuf *b, const cJSON *rep)
{
    const cJSON *id = at(rep, "identifiability");
    tb_puts(b, "<section id=\"identifiability\"><h2>What the data determine</h2>\n");
    if (!cJSON_IsObject(id)) {
        tb_puts(b, "<p class=\"note\">No covariance: none was computed.</p></section>\n");
        return;
    }
    if (str_at(id, "skipped")) {
        tb_puts(b, "<p class=\"bad\">No covariance: ");
        tb_esc(b, str_at(id, "skipped"));
        tb_puts(b, ".</p></section>\n");
        return;
    }
    tb_puts(b, "<p>Condition number of the scaled J<sup>T</sup>J: ");
    inline_num(b, rep, "identifiability|condition");
    tb_puts(b, "; residual variance ");
    inline_num(b, rep, "identifiability|residual_variance");
    tb_puts(b, ".</p>\n");
    const cJSON *nd = at(id, "null_directions");
    tb_printf(b, "<h3>Combinations the data cannot determine (%d)</h3>\n", cJSON_GetArraySize(nd));
    if (cJSON_GetArraySize(nd) == 0)
        tb_puts(b, "<p id=\"null-directions\">None: every free parameter is determined.</p>\n");
    else
        tb_puts(b, "<ol id=\"null-directions\">\n");
    const cJSON *d;
    cJSON_ArrayForEach(d, nd) {
        tb_puts(b, "<li><code>");
        const cJSON *p;
        int first = 1;
        cJSON_ArrayForEach(p, at(d, "parameters")) {
            const double c = num_at(p, "coefficient");
            tb_printf(b, "%s%.3g&middot;", first ? (c < 0 ? "&minus;" : "") : (c < 0 ? " &minus; " : " + "), fabs(c));
            tb_esc(b, str_at(p, "name") ? str_at(p, "name") : "?");
            first = 0;
        }
        tb_printf(b, "</code> <span class=\"note\">(scaled; eigenvalue ratio %.2g): moving along it leaves the fit "
                     "unchanged</span></li>\n", num_at(d, "ratio"));
    }
    if (cJSON_GetArraySize(nd) > 0)
        tb_puts(b, "</ol>\n");
    name_list(b, id, "unidentifiable", "Not identifiable");
    name_list(b, id, "at_bound", "At a bound");
    name_list(b, id, "poorly_determined", "Poorly determined");
    const cJSON *cm = at(id, "correlation");
    const cJSON *ps = at(rep, "parameters");
    const int n = cJSON_GetArraySize(ps);
    tb_puts(b, "<h3>Correlation of the fitted parameters</h3>\n");
    if (!cJSON_IsArray(cm) || cJSON_GetArraySize(cm) != n || n == 0) {
        tb_puts(b, "<p class=\"note\">Not in the report (more free parameters than it keeps a matrix for).</p>\n");
    } else {
        double *c = malloc((size_t)n * (size_t)n * sizeof(double));
        const char **name = calloc((size_t)n, sizeof *name);
        char(*lab)[200] = calloc((size_t)n, sizeof *lab);
        if (!c || !name || !lab) {
            b->bad = 1;
        } else {
            for (int i = 0; i < n; i++) {
                snprintf(lab[i], sizeof lab[i], "%d %s", i + 1, str_at(cJSON_GetArrayItem(ps, i), "name")
                                                               ? str_at(cJSON_GetArrayItem(ps, i), "name") : "?");
                name[i] = lab[i];
                for (int j = 0; j < n; j++) {
                    const cJSON *v = cJSON_GetArrayItem(cJSON_GetArrayItem(cm, i), j);
                    c[(size_t)i * (size_t)n + (size_t)j] = value(v);
                }
            }
            svg_heatmap(b, "correlation", n, c, name);
            tb_puts(b, "<p class=\"note\">Blue &minus;1, white 0, red +1; grey: not determined. Hover a cell for its "
                       "value.</p>\n");
        }
        free(c);
        free(name);
        free(lab);
    }
    tb_puts(b, "</section>\n");
}

sid_status html_page(textbuf *b, const html_input *in, sid_error *err)
{
    const cJSON *rep = in->report;
    html_predset fit = { 0 }, val = { 0 };
    if (html_predict(in->fit, in->theta0, in->theta, in->fit_logs, in->fit_names, in->nfit, &fit, err) ||
        (in->val && html_predict(in->val, in->theta0, in->theta, in->val_logs, in->val_names, in->nval, &val, err))) {
        html_predict_free(&fit);
        return err ? err->status : SID_ERR_NOMEM;
    }
    tb_puts(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
               "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>sysid fit: ");
    tb_esc(b, str_at(rep, "robot|path") ? str_at(rep, "robot|path") : "?");
    tb_printf(b, "</title>\n<style>%s</style></head>\n<body>\n<div id=\"tip\"></div>\n", css);
    tb_puts(b, "<h1>sysid fit: <code>");
    tb_esc(b, str_at(rep, "robot|path") ? str_at(rep, "robot|path") : "?");
    tb_printf(b, "</code></h1>\n<p class=\"note\">sysid %s</p>\n", str_at(rep, "version") ? str_at(rep, "version") : "");
    verdict(b, rep);
    /* what a reader looks for first: did it work, what moved, does it fit the data; then how */
    tb_puts(b, "<nav><a href=\"#parameters\">parameters</a><a href=\"#fit\">fitted logs</a>");
    if (in->val)
        tb_puts(b, "<a href=\"#validation\">validation logs</a>");
    tb_puts(b, "<a href=\"#trace\">trace</a><a href=\"#identifiability\">identifiability</a>"
               "<a href=\"#inputs\">inputs</a></nav>\n");
    parameters(b, rep);
    char note[400];
    snprintf(note, sizeof note, "Predictions on the fit's windows (dotted lines: window starts), each window from its "
             "logged start state (velocities %s), nominal and fitted alike, as the report's prediction RMSE; the "
             "envelope of each pixel column keeps spikes.",
             str_at(rep, "settings|start_velocity") && !strcmp(str_at(rep, "settings|start_velocity"), "positions")
                 ? "from positions" : "as logged");
    html_logs_section(b, in->m, &fit, "fit", "Fitted logs", note);
    if (in->val)
        html_logs_section(b, in->m, &val, "validation", "Validation logs (held out)", note);
    trace(b, rep);
    identifiability(b, rep);
    inputs(b, rep);
    tb_printf(b, "<script>%s</script>\n</body></html>\n", script);
    html_predict_free(&fit);
    html_predict_free(&val);
    if (b->bad)
        return sid_error_set(err, SID_ERR_NOMEM, "report page: out of memory");
    return SID_OK;
}

sid_status html_page_prepare(atomic_file *af, const char *path, const html_input *in, sid_error *err)
{
    textbuf b = { 0 };
    sid_status s = html_page(&b, in, err);
    if (s) {
        tb_free(&b);
        return s;
    }
    if ((s = atomic_open(af, path, err))) {
        tb_free(&b);
        return s;
    }
    if (fwrite(b.s, 1, b.len, af->f) != b.len) {
        atomic_abort(af);
        tb_free(&b);
        return sid_error_set(err, SID_ERR_INPUT, "%s: cannot write", path);
    }
    tb_free(&b);
    return atomic_finish(af, err);
}
