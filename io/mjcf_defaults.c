/* mjcf_defaults.c — where an MJCF attribute comes from: the files (with <include> expanded),
 * the default classes, numbers, orientations, and messages that name file:line and element.
 *
 * An attribute of an element is looked up on the element, then on the element of the same
 * tag in its class, then in each enclosing class up to main: the element's `class`, else the
 * nearest enclosing body's `childclass`, else main. The node that held the value is returned,
 * so that export can write a fitted value where it came from. <include> is expanded wherever
 * it stands (mjcf_kids), its file read relative to the including file.
 */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "warn.h"
#include "mjcf_internal.h"
#include "readfile.h"
#include "xml_text.h"

/* ---- files and messages ------------------------------------------------------------------ */

const mjcf_file *mjcf_file_of(const mjcf_doc *d, const xmlNode *node)
{
    for (int i = 0; i < d->nfile; i++)
        if (d->file[i].doc == node->doc) return &d->file[i];
    return &d->file[0];
}

void mjcf_attr_str(const xmlNode *n, const char *a, char *buf, size_t len)
{
    buf[0] = 0;
    xmlChar *v = xmlGetProp(n, (const xmlChar *)a);
    if (v) snprintf(buf, len, "%s", (const char *)v);
    xmlFree(v);
}

int mjcf_has_attr(const xmlNode *n, const char *a)
{
    return n && xmlHasProp(n, (const xmlChar *)a) != NULL;
}

/* "file:LINE: <tag name=\"x\">" */
static void where(const mjcf_doc *d, const xmlNode *n, char *buf, size_t len)
{
    char name[80];
    mjcf_attr_str(n, "name", name, sizeof name);
    if (!name[0] && strcmp((const char *)n->name, "default") == 0) mjcf_attr_str(n, "class", name, sizeof name);
    if (name[0])
        snprintf(buf, len, "%s:%ld: <%s %s=\"%s\">", mjcf_file_of(d, n)->path, xmlGetLineNo(n),
                 (const char *)n->name, strcmp((const char *)n->name, "default") == 0 ? "class" : "name", name);
    else
        snprintf(buf, len, "%s:%ld: <%s>", mjcf_file_of(d, n)->path, xmlGetLineNo(n), (const char *)n->name);
}

int mjcf_fail(mjcf_doc *d, const xmlNode *n, const char *fmt, ...)
{
    char w[256], msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    where(d, n, w, sizeof w);
    sid_error_set(d->err, SID_ERR_INPUT, "%s: %s", w, msg);
    return -1;
}

void mjcf_warn(const mjcf_doc *d, const xmlNode *n, const char *fmt, ...)
{
    if (d->quiet) return;
    char w[256], msg[1600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    where(d, n, w, sizeof w);
    sid_io_warn("%s: %s", w, msg);
}

int mjcf_is(const xmlNode *n, const char *tag)
{
    return n->type == XML_ELEMENT_NODE && strcmp((const char *)n->name, tag) == 0;
}

/* Parse one file's text; on failure "path:LINE: what libxml2 said". */
int mjcf_add_file(mjcf_doc *d, const char *path, const char *text, size_t len, int own)
{
    mjcf_file *f = realloc(d->file, sizeof *f * (size_t)(d->nfile + 1));
    if (!f) return sid_error_set(d->err, SID_ERR_NOMEM, "out of memory"), -1;
    d->file = f;
    f = &d->file[d->nfile];
    memset(f, 0, sizeof *f);
    f->path = strdup(path);
    f->text = text, f->len = len, f->own_text = own;
    d->nfile++;
    if (!f->path) return sid_error_set(d->err, SID_ERR_NOMEM, "out of memory"), -1;
    if (!(f->doc = xml_text_parse(path, text, len, d->err))) return -1;
    return 0;
}

/* ---- children, with <include> expanded ------------------------------------------------------ */


static int push(mjcf_doc *d, mjcf_nodes *l, xmlNode *n)
{
    if (l->count == l->cap) {
        int cap = l->cap ? 2 * l->cap : 16;
        xmlNode **p = realloc(l->n, sizeof *p * (size_t)cap);
        if (!p) return sid_error_set(d->err, SID_ERR_NOMEM, "out of memory"), -1;
        l->n = p, l->cap = cap;
    }
    l->n[l->count++] = n;
    return 0;
}

static int include_root(mjcf_doc *d, xmlNode *inc, xmlNode **root);

static int collect(mjcf_doc *d, xmlNode *parent, mjcf_nodes *l, int depth)
{
    for (xmlNode *c = parent->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE) continue;
        if (!mjcf_is(c, "include")) {
            if (push(d, l, c)) return -1;
            continue;
        }
        xmlNode *root;
        if (depth > 16) return mjcf_fail(d, c, "includes nested more than 16 deep (a cycle?)");
        if (include_root(d, c, &root) || collect(d, root, l, depth + 1)) return -1;
    }
    return 0;
}

/* The element children of node; free l.n. */
int mjcf_kids(mjcf_doc *d, xmlNode *node, mjcf_nodes *l)
{
    memset(l, 0, sizeof *l);
    if (collect(d, node, l, 0)) {
        free(l->n);
        l->n = NULL;
        return -1;
    }
    return 0;
}

/* Read the file an <include> names (once per distinct path) and give its root. */
static int include_root(mjcf_doc *d, xmlNode *inc, xmlNode **root)
{
    char file[512], path[1200];
    mjcf_attr_str(inc, "file", file, sizeof file);
    if (!file[0]) return mjcf_fail(d, inc, "expected a file attribute");
    const char *from = mjcf_file_of(d, inc)->path, *slash = strrchr(from, '/');
    if (file[0] == '/' || !slash)
        snprintf(path, sizeof path, "%s", file);
    else
        snprintf(path, sizeof path, "%.*s/%s", (int)(slash - from), from, file);
    for (int i = 0; i < d->nfile; i++)
        if (strcmp(d->file[i].path, path) == 0) {
            *root = xmlDocGetRootElement(d->file[i].doc);
            return 0;
        }
    size_t len;
    sid_error e = { 0 };
    char *text = readfile(path, &len, &e);
    if (!text) return mjcf_fail(d, inc, "cannot read the included file '%s'", path);
    if (mjcf_add_file(d, path, text, len, 1)) return -1;
    *root = xmlDocGetRootElement(d->file[d->nfile - 1].doc);
    if (!*root || (!mjcf_is(*root, "mujoco") && !mjcf_is(*root, "mujocoinclude")))
        return mjcf_fail(d, inc, "'%s': expected a <mujoco> or <mujocoinclude> root element", path);
    return 0;
}

/* ---- numbers and defaults ------------------------------------------------------------------- */

/* Attribute a of n as min..max numbers: their count, 0 when absent, -1 (err) when malformed. */
int mjcf_nums(mjcf_doc *d, const xmlNode *n, const char *a, int min, int max, double *out)
{
    return xml_attr_numbers(mjcf_file_of(d, n)->path, n, a, min, max, out, d->err);
}

int mjcf_find_class(const mjcf_doc *d, const char *name)
{
    for (int i = 0; i < d->ncls; i++)
        if (strcmp(d->cls[i].name, name) == 0) return i;
    return -1;
}

/* The <tag> element directly in class c's <default> (tags: a NULL-terminated list). */
xmlNode *mjcf_class_elem(mjcf_doc *d, int c, const char *const *tags, const char *attr)
{
    mjcf_nodes l;
    if (mjcf_kids(d, d->cls[c].node, &l)) return NULL;
    xmlNode *found = NULL;
    for (int i = 0; i < l.count; i++)
        for (int t = 0; tags[t]; t++)
            if (mjcf_is(l.n[i], tags[t]) && (!attr || mjcf_has_attr(l.n[i], attr))) found = l.n[i];
    free(l.n);
    return found;
}

/* The node that gives attribute a to element n of class c: n itself, its class's element, or an
 * enclosing class's; NULL when none does (MuJoCo's built-in default). */
xmlNode *mjcf_source(mjcf_doc *d, xmlNode *n, int c, const char *const *tags, const char *a)
{
    if (mjcf_has_attr(n, a)) return n;
    for (; c >= 0; c = d->cls[c].parent) {
        xmlNode *e = mjcf_class_elem(d, c, tags, a);
        if (e) return e;
    }
    return NULL;
}

/* Numbers of a through the classes; dflt (n values) when no one gives them. */
int mjcf_get(mjcf_doc *d, xmlNode *n, int c, const char *const *tags, const char *a, int min, int max,
               double *out, xmlNode **src)
{
    xmlNode *s = mjcf_source(d, n, c, tags, a);
    if (src) *src = s;
    if (!s) return 0;
    return mjcf_nums(d, s, a, min, max, out);
}

void mjcf_get_str(mjcf_doc *d, xmlNode *n, int c, const char *const *tags, const char *a, char *buf,
                    size_t len, const char *dflt)
{
    xmlNode *s = mjcf_source(d, n, c, tags, a);
    if (s)
        mjcf_attr_str(s, a, buf, len);
    else
        snprintf(buf, len, "%s", dflt);
}

/* The class an element uses: its class attribute, else inherited (childclass). */
int mjcf_elem_class(mjcf_doc *d, xmlNode *n, int inherited, int *c)
{
    char name[SID_MAX_NAME];
    *c = inherited;
    if (!mjcf_has_attr(n, "class")) return 0;
    mjcf_attr_str(n, "class", name, sizeof name);
    if ((*c = mjcf_find_class(d, name)) < 0) return mjcf_fail(d, n, "unknown class '%s'", name);
    return 0;
}

int mjcf_add_class(mjcf_doc *d, xmlNode *n, int parent)
{
    char name[SID_MAX_NAME];
    mjcf_attr_str(n, "class", name, sizeof name);
    if (parent < 0) snprintf(name, sizeof name, "main");
    else if (!name[0]) return mjcf_fail(d, n, "a nested default needs a class name");
    if (mjcf_find_class(d, name) >= 0) return mjcf_fail(d, n, "class '%s' defined twice", name);
    mjcf_class *p = realloc(d->cls, sizeof *p * (size_t)(d->ncls + 1));
    if (!p) return sid_error_set(d->err, SID_ERR_NOMEM, "out of memory"), -1;
    d->cls = p;
    int me = d->ncls++;
    snprintf(d->cls[me].name, sizeof d->cls[me].name, "%s", name);
    d->cls[me].node = n, d->cls[me].parent = parent;
    mjcf_nodes l;
    if (mjcf_kids(d, n, &l)) return -1;
    int rc = 0;
    for (int i = 0; i < l.count && !rc; i++)
        if (mjcf_is(l.n[i], "default")) rc = mjcf_add_class(d, l.n[i], me);
    free(l.n);
    return rc;
}

/* ---- orientation ----------------------------------------------------------------------------- */

const char *const MJCF_ORIENT[5] = { "quat", "axisangle", "euler", "xyaxes", "zaxis" };

static int orient_from(mjcf_doc *d, xmlNode *n, int which, double q[4])
{
    double v[6];
    double s = d->degree ? 3.14159265358979323846 / 180 : 1;
    switch (which) {
    case 0:
        if (mjcf_nums(d, n, "quat", 4, 4, v) < 0) return -1;
        memcpy(q, v, 4 * sizeof *v);
        mjcf_quat_normalize(q);
        return 0;
    case 1: {
        if (mjcf_nums(d, n, "axisangle", 4, 4, v) < 0) return -1;
        double a = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        if (a < 1e-15) return mjcf_fail(d, n, "axisangle: the axis is zero");
        double h = v[3] * s / 2;
        q[0] = cos(h);
        for (int i = 0; i < 3; i++) q[i + 1] = sin(h) * v[i] / a;
        return 0;
    }
    case 2: {
        if (mjcf_nums(d, n, "euler", 3, 3, v) < 0) return -1;
        q[0] = 1, q[1] = q[2] = q[3] = 0;
        /* lowercase: rotating axes (post-multiply); uppercase: fixed axes (pre-multiply) */
        for (int i = 0; i < 3; i++) {
            char c = d->eulerseq[i];
            double h = v[i] * s / 2, t[4] = { cos(h), 0, 0, 0 };
            t[1 + (tolower((unsigned char)c) - 'x')] = sin(h);
            if (islower((unsigned char)c))
                mjcf_quat_mul(q, q, t);
            else
                mjcf_quat_mul(q, t, q);
        }
        mjcf_quat_normalize(q);
        return 0;
    }
    case 3: {
        if (mjcf_nums(d, n, "xyaxes", 6, 6, v) < 0) return -1;
        double *x = v, *y = v + 3, z[3];
        double nx = sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
        if (nx < 1e-15) return mjcf_fail(d, n, "xyaxes: the x axis is zero");
        for (int i = 0; i < 3; i++) x[i] /= nx;
        double dp = x[0] * y[0] + x[1] * y[1] + x[2] * y[2];
        for (int i = 0; i < 3; i++) y[i] -= dp * x[i];
        double ny = sqrt(y[0] * y[0] + y[1] * y[1] + y[2] * y[2]);
        if (ny < 1e-15) return mjcf_fail(d, n, "xyaxes: the y axis is parallel to the x axis");
        for (int i = 0; i < 3; i++) y[i] /= ny;
        z[0] = x[1] * y[2] - x[2] * y[1], z[1] = x[2] * y[0] - x[0] * y[2], z[2] = x[0] * y[1] - x[1] * y[0];
        double R[9] = { x[0], y[0], z[0], x[1], y[1], z[1], x[2], y[2], z[2] };
        mjcf_mat_quat(q, R);
        return 0;
    }
    default:
        if (mjcf_nums(d, n, "zaxis", 3, 3, v) < 0) return -1;
        mjcf_quat_z2vec(q, v);
        return 0;
    }
}

/* The one orientation of n (or, for geoms, of its class); identity when none is given. */
int mjcf_orientation(mjcf_doc *d, xmlNode *n, int c, const char *const *tags, double q[4])
{
    q[0] = 1, q[1] = q[2] = q[3] = 0;
    for (xmlNode *s = n;;) {
        int first = -1;
        for (int i = 0; i < 5; i++) {
            if (!mjcf_has_attr(s, MJCF_ORIENT[i])) continue;
            if (first >= 0) return mjcf_fail(d, s, "two orientations (%s and %s): give one", MJCF_ORIENT[first], MJCF_ORIENT[i]);
            first = i;
        }
        if (first >= 0) return orient_from(d, s, first, q);
        for (s = NULL; c >= 0 && tags && !s; c = d->cls[c].parent)
            for (int i = 0; i < 5 && !s; i++) s = mjcf_class_elem(d, c, tags, MJCF_ORIENT[i]);
        if (!s) return 0;
    }
}

