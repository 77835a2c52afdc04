/* html_logs.h — the report page's log sections: per joint, logged against predicted q and qd
 * (nominal and fitted, on the fit's windows, boundaries drawn), the residuals over time and
 * their histogram, and the RMSE recomputed from what is plotted. */
#ifndef CLI_HTML_LOGS_H
#define CLI_HTML_LOGS_H

#include "textbuf.h"
#include "html_predict.h"
#include "sid.h"

/* One <section id="ID"> titled title over the predictions s of model m. */
void html_logs_section(textbuf *b, const sid_model *m, const html_predset *s, const char *id, const char *title,
                       const char *note);

#endif
