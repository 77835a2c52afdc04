/* html_buf.h — the growing text of a page: appends that remember the first failed allocation,
 * so a page is built without checking every call and fails once, at the end. */
#ifndef CLI_HTML_BUF_H
#define CLI_HTML_BUF_H

#include <stddef.h>

typedef struct {
    char *s;       /* NUL-terminated text so far */
    size_t len, cap;
    int bad;       /* an allocation failed: the text is incomplete */
} html_buf;

void hb_printf(html_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void hb_puts(html_buf *b, const char *s);
/* s with &, <, >, " and ' as entities (for text and attribute values). */
void hb_esc(html_buf *b, const char *s);
/* A number as the shortest text that reads back to it (numfmt), for data-* attributes. */
void hb_exact(html_buf *b, double x);
void hb_free(html_buf *b);

#endif
