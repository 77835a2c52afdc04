/* html_page.h — the fit's report as one self-contained HTML page: inline CSS and SVG, a small
 * inline script for a hover read-out, nothing fetched (no links to scripts, styles, fonts or
 * images), readable printed. Numbers shown from report.json carry data-key="PATH" and their
 * exact data-value; numbers recomputed from the plotted predictions carry data-check="PATH" of
 * the report value they must equal, PATH being report.json's path with "|" between keys. */
#ifndef CLI_HTML_PAGE_H
#define CLI_HTML_PAGE_H

#include <cjson/cJSON.h>

#include "atomic.h"
#include "textbuf.h"
#include "sid.h"

typedef struct {
    const cJSON *report;              /* the report as written (report_json) or read back */
    const sid_model *m;
    const double *theta0, *theta;     /* nominal and fitted (nparam) */
    sid_problem *fit, *val;           /* logged-start problems on the fitted and validation logs (val: NULL) */
    const sid_traj *const *fit_logs, *const *val_logs;
    const char *const *fit_names, *const *val_names;
    int nfit, nval;
} html_input;

/* The page into b; SID_ERR_NOMEM. */
sid_status html_page(textbuf *b, const html_input *in, sid_error *err);
/* The page written to path's temporary file and finished (atomic_finish): the caller publishes
 * it (atomic_publish) with its other outputs, or aborts. */
sid_status html_page_prepare(atomic_file *af, const char *path, const html_input *in, sid_error *err);

#endif
