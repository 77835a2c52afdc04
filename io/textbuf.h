/* textbuf.h — the growing text of a page: appends that remember the first failed allocation,
 * so a page is built without checking every call and fails once, at the end. */
#ifndef CLI_TEXTBUF_H
#define CLI_TEXTBUF_H

#include <stddef.h>

typedef struct {
    char *s;       /* NUL-terminated text so far */
    size_t len, cap;
    int bad;       /* an allocation failed: the text is incomplete */
} textbuf;

void tb_printf(textbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tb_puts(textbuf *b, const char *s);
/* s with &, <, >, " and ' as entities (for text and attribute values). */
void tb_esc(textbuf *b, const char *s);
/* A number as the shortest text that reads back to it (numfmt); "null" if not finite. */
void tb_exact(textbuf *b, double x);
void tb_free(textbuf *b);

#endif
