/* xml_text.c — see xml_text.h. */
#include "xml_text.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/xmlerror.h>

#include "numfmt.h"

/* libxml2 reports each error to a handler; the first one says what went wrong (later ones
 * follow from it, "Premature end of data" at the end of the file). */
typedef struct {
    int line;
    char msg[300];
} first_error;

static void keep_first(void *ctx, xmlErrorPtr e)
{
    first_error *f = ctx;
    if (f->msg[0] || !e || e->level < XML_ERR_ERROR) return;
    snprintf(f->msg, sizeof f->msg, "%s", e->message ? e->message : "not well-formed XML");
    size_t n = strlen(f->msg);
    while (n && (f->msg[n - 1] == '\n' || f->msg[n - 1] == ' ')) f->msg[--n] = 0;
    f->line = e->line;
}

xmlDoc *xml_text_parse(const char *path, const char *text, size_t len, sid_error *err)
{
    if (len > (size_t)0x7fffffff) {
        sid_error_set(err, SID_ERR_INPUT, "%s: too large for an XML robot file", path);
        return NULL;
    }
    first_error f = { 0, "" };
    xmlSetStructuredErrorFunc(&f, keep_first);
    xmlDoc *doc = xmlReadMemory(text, (int)len, path, NULL,
                                XML_PARSE_NONET | XML_PARSE_BIG_LINES | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    xmlSetStructuredErrorFunc(NULL, NULL);
    if (!doc || !xmlDocGetRootElement(doc) || f.msg[0]) {
        if (!f.msg[0]) snprintf(f.msg, sizeof f.msg, "no XML element in the file");
        if (f.line > 0)
            sid_error_set(err, SID_ERR_INPUT, "%s:%d: %s", path, f.line, f.msg);
        else
            sid_error_set(err, SID_ERR_INPUT, "%s: %s", path, f.msg);
        xmlFreeDoc(doc);
        return NULL;
    }
    return doc;
}

long xml_line(const xmlNode *node)
{
    return xmlGetLineNo(node);
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* "<tag name="x">" for messages. */
static void describe(const xmlNode *node, char *buf, size_t n)
{
    xmlChar *name = xmlGetProp(node, (const xmlChar *)"name");
    if (name)
        snprintf(buf, n, "<%s name=\"%.60s\">", (const char *)node->name, (const char *)name);
    else
        snprintf(buf, n, "<%s>", (const char *)node->name);
    xmlFree(name);
}

int xml_attr_numbers(const char *path, const xmlNode *node, const char *attr, int min, int max,
                     double *out, sid_error *err)
{
    xmlChar *val = xmlGetProp(node, (const xmlChar *)attr);
    if (!val) return 0;
    int n = 0, bad = 0;
    const char *s = (const char *)val;
    for (;;) {
        while (is_space(*s)) s++;
        if (!*s) break;
        char *end;
        double x = strtod(s, &end);
        if (end == s || !isfinite(x) || (*end && !is_space(*end)) || n == max) {
            bad = 1;
            break;
        }
        out[n++] = x;
        s = end;
    }
    if (bad || n < min) {
        char what[100], count[40];
        describe(node, what, sizeof what);
        if (min == max)
            snprintf(count, sizeof count, "%d number%s", min, min == 1 ? "" : "s");
        else
            snprintf(count, sizeof count, "%d to %d numbers", min, max);
        sid_error_set(err, SID_ERR_INPUT, "%s:%ld: %s %s=\"%.80s\": expected %s", path, xml_line(node), what, attr,
                      (const char *)val, count);
        xmlFree(val);
        return -1;
    }
    xmlFree(val);
    return n;
}

/* ---- finding an element's bytes ------------------------------------------------------------- */

/* Index of node among the document's elements in document order (= the order of start tags). */
static long element_ordinal(const xmlNode *node)
{
    const xmlNode *root = xmlDocGetRootElement(node->doc), *x = root;
    long k = 0;
    while (x) {
        if (x == node) return k;
        k++;
        /* pre-order: first element child, else the next element sibling of x or of an ancestor */
        const xmlNode *next = NULL;
        for (const xmlNode *c = x->children; c && !next; c = c->next)
            if (c->type == XML_ELEMENT_NODE) next = c;
        while (!next && x && x != root) {
            for (const xmlNode *sib = x->next; sib && !next; sib = sib->next)
                if (sib->type == XML_ELEMENT_NODE) next = sib;
            if (!next) x = x->parent;
        }
        x = next;
    }
    return -1;
}

/* Skip from text[i] == '<' over a comment, CDATA section, processing instruction or
 * declaration; returns the offset after it, or i when text[i] starts a tag. */
static size_t skip_markup(const char *text, size_t len, size_t i)
{
    const char *end = NULL, *s = text + i;
    size_t rest = len - i;
    if (rest >= 4 && !memcmp(s, "<!--", 4)) end = strstr(s + 4, "-->"), rest = 3;
    else if (rest >= 9 && !memcmp(s, "<![CDATA[", 9)) end = strstr(s + 9, "]]>"), rest = 3;
    else if (rest >= 2 && s[1] == '?') end = strstr(s + 2, "?>"), rest = 2;
    else if (rest >= 2 && s[1] == '!') {
        /* <!DOCTYPE ...> with an optional [internal subset] */
        int depth = 0;
        for (size_t k = i + 2; k < len; k++) {
            if (text[k] == '[') depth++;
            else if (text[k] == ']') depth--;
            else if (text[k] == '>' && depth <= 0) return k + 1;
        }
        return len;
    } else return i;
    return end ? (size_t)(end - text) + rest : len;
}

/* Offset after the start tag that begins at text[i] ('<'), quotes respected; *selfclose set. */
static size_t tag_end(const char *text, size_t len, size_t i, int *selfclose)
{
    char q = 0;
    for (size_t k = i + 1; k < len; k++) {
        char c = text[k];
        if (q) {
            if (c == q) q = 0;
        } else if (c == '"' || c == '\'') q = c;
        else if (c == '>') {
            *selfclose = text[k - 1] == '/';
            return k + 1;
        }
    }
    *selfclose = 1;
    return len;
}

/* Offset of the start tag of the element with the given ordinal, or -1. */
static long find_start_tag(const char *text, size_t len, long ordinal)
{
    long k = 0;
    size_t i = 0;
    while (i < len) {
        if (text[i] != '<') {
            i++;
            continue;
        }
        size_t j = skip_markup(text, len, i);
        if (j != i) {
            i = j;
            continue;
        }
        if (i + 1 < len && text[i + 1] == '/') {   /* an end tag */
            i++;
            continue;
        }
        if (k == ordinal) return (long)i;
        k++;
        int sc;
        i = tag_end(text, len, i, &sc);
    }
    return -1;
}

static long locate(const char *text, size_t len, const xmlNode *node)
{
    long ord = element_ordinal(node);
    return ord < 0 ? -1 : find_start_tag(text, len, ord);
}

/* In the start tag at text[t]: attribute attr's name start, value start and end (inside the
 * quotes) and the end of the last attribute (for appending). 1 found, 0 absent. */
static int scan_attrs(const char *text, size_t len, size_t t, const char *attr, size_t *name_at,
                      size_t *vstart, size_t *vend, size_t *last_end)
{
    size_t i = t + 1, alen = strlen(attr);
    while (i < len && !is_space(text[i]) && text[i] != '>' && text[i] != '/') i++;   /* the tag name */
    *last_end = i;
    for (;;) {
        size_t ws = i;
        while (i < len && is_space(text[i])) i++;
        if (i >= len || text[i] == '>' || text[i] == '/') return 0;
        size_t n0 = i;
        while (i < len && !is_space(text[i]) && text[i] != '=' && text[i] != '>') i++;
        size_t n1 = i;
        while (i < len && is_space(text[i])) i++;
        if (i >= len || text[i] != '=') return 0;   /* not well-formed: libxml2 would have refused */
        i++;
        while (i < len && is_space(text[i])) i++;
        if (i >= len || (text[i] != '"' && text[i] != '\'')) return 0;
        char q = text[i++];
        size_t v0 = i;
        while (i < len && text[i] != q) i++;
        size_t v1 = i;
        if (i < len) i++;
        *last_end = i;
        if (n1 - n0 == alen && !memcmp(text + n0, attr, alen)) {
            *name_at = ws;
            *vstart = v0;
            *vend = v1;
            return 1;
        }
    }
}

int xml_attr_span(const char *text, size_t len, const xmlNode *node, const char *attr,
                  size_t *start, size_t *end)
{
    long t = locate(text, len, node);
    if (t < 0) return -1;
    size_t name_at, last;
    return scan_attrs(text, len, (size_t)t, attr, &name_at, start, end, &last);
}

int xml_element_span(const char *text, size_t len, const xmlNode *node, size_t *start, size_t *end)
{
    long t = locate(text, len, node);
    if (t < 0) return -1;
    int sc;
    size_t i = tag_end(text, len, (size_t)t, &sc);
    int depth = sc ? 0 : 1;
    while (depth > 0 && i < len) {
        if (text[i] != '<') {
            i++;
            continue;
        }
        size_t j = skip_markup(text, len, i);
        if (j != i) {
            i = j;
            continue;
        }
        int closing = i + 1 < len && text[i + 1] == '/';
        i = tag_end(text, len, i, &sc);
        if (closing) depth--;
        else if (!sc) depth++;
    }
    if (depth > 0) return -1;
    *start = (size_t)t;
    *end = i;
    return 0;
}

/* ---- edits ------------------------------------------------------------------------------------ */

typedef struct {
    size_t start, end, seq;
    char *with;
} edit;

struct xml_edits {
    edit *e;
    size_t n, cap;
};

xml_edits *xml_edits_new(void)
{
    return calloc(1, sizeof(xml_edits));
}

void xml_edits_free(xml_edits *e)
{
    if (!e) return;
    for (size_t k = 0; k < e->n; k++) free(e->e[k].with);
    free(e->e);
    free(e);
}

static int add(xml_edits *e, size_t start, size_t end, const char *with, size_t wlen)
{
    if (e->n == e->cap) {
        size_t cap = e->cap ? 2 * e->cap : 16;
        edit *ne = realloc(e->e, cap * sizeof *ne);
        if (!ne) return -1;
        e->e = ne;
        e->cap = cap;
    }
    char *w = malloc(wlen + 1);
    if (!w) return -1;
    memcpy(w, with, wlen);
    w[wlen] = 0;
    e->e[e->n] = (edit){ start, end, e->n, w };
    e->n++;
    return 0;
}

int xml_edits_insert(xml_edits *e, size_t at, const char *raw)
{
    return add(e, at, at, raw, strlen(raw));
}

int xml_edits_set_attr(xml_edits *e, const char *text, size_t len, const xmlNode *node,
                       const char *attr, const char *value)
{
    long t = locate(text, len, node);
    if (t < 0) return -1;
    size_t name_at, v0, v1, last;
    if (scan_attrs(text, len, (size_t)t, attr, &name_at, &v0, &v1, &last))
        return add(e, v0, v1, value, strlen(value));
    size_t n = strlen(attr) + strlen(value) + 5;
    char *s = malloc(n);
    if (!s) return -1;
    snprintf(s, n, " %s=\"%s\"", attr, value);
    int rc = add(e, last, last, s, strlen(s));
    free(s);
    return rc;
}

int xml_edits_remove_attr(xml_edits *e, const char *text, size_t len, const xmlNode *node,
                          const char *attr)
{
    long t = locate(text, len, node);
    if (t < 0) return -1;
    size_t name_at, v0, v1, last;
    if (!scan_attrs(text, len, (size_t)t, attr, &name_at, &v0, &v1, &last)) return 0;
    return add(e, name_at, v1 + 1, "", 0);
}

int xml_edits_set_numbers(xml_edits *e, const char *text, size_t len, const xmlNode *node,
                          const char *attr, int n, const double *v, const unsigned char *changed)
{
    size_t v0, v1;
    if (xml_attr_span(text, len, node, attr, &v0, &v1) != 1) return -1;
    size_t tok0[64], tok1[64];
    int k = 0;
    for (size_t i = v0; i < v1;) {
        while (i < v1 && is_space(text[i])) i++;
        if (i >= v1) break;
        if (k == n || k == 64) return -1;
        tok0[k] = i;
        while (i < v1 && !is_space(text[i])) i++;
        tok1[k++] = i;
    }
    if (k != n) return -1;
    for (k = 0; k < n; k++) {
        if (!changed[k]) continue;
        char buf[NUMFMT_LEN];
        numfmt(buf, v[k]);
        if (add(e, tok0[k], tok1[k], buf, strlen(buf))) return -1;
    }
    return 0;
}

static int by_position(const void *a, const void *b)
{
    const edit *x = a, *y = b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int xml_edits_apply(const xml_edits *e, const char *text, size_t len, char **out, size_t *outlen)
{
    *out = NULL;
    edit *s = malloc((e->n ? e->n : 1) * sizeof *s);
    if (!s) return -1;
    if (e->n) {   /* no edits: e->e is NULL, which memcpy and qsort may not be given */
        memcpy(s, e->e, e->n * sizeof *s);
        qsort(s, e->n, sizeof *s, by_position);
    }
    size_t total = len;
    for (size_t k = 0; k < e->n; k++) {
        if (s[k].end > len || (k && s[k].start < s[k - 1].end)) {
            free(s);
            return -1;
        }
        total += strlen(s[k].with) - (s[k].end - s[k].start);
    }
    char *o = malloc(total + 1);
    if (!o) {
        free(s);
        return -1;
    }
    size_t at = 0, w = 0;
    for (size_t k = 0; k < e->n; k++) {
        memcpy(o + w, text + at, s[k].start - at);
        w += s[k].start - at;
        size_t n = strlen(s[k].with);
        memcpy(o + w, s[k].with, n);
        w += n;
        at = s[k].end;
    }
    memcpy(o + w, text + at, len - at);
    w += len - at;
    o[w] = 0;
    free(s);
    *out = o;
    *outlen = w;
    return 0;
}
