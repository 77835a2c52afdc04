/* mesh.c — see mesh.h.
 *
 * Reading: the whole file is read once (readfile), its kind found from its bytes, and the
 * vertices and triangles appended to arrays that double as they fill. Mass properties: the
 * exact integrals of 1, x and x x^T over one simplex per triangle (derived at integrate) — for a
 * solid the signed tetrahedron from a reference point, which the divergence theorem makes exact
 * for a closed surface (the integrals Mirtich 1996 and Eberly's "Polyhedral Mass Properties"
 * reach by projecting the faces; the tetrahedron's terms as Tonon 2004 writes them).
 */
#include "mesh.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "readfile.h"

void mesh_free(mesh *m)
{
    if (!m) return;
    free(m->vert);
    free(m->tri);
    free(m->name);
    memset(m, 0, sizeof *m);
}

static const char *mesh_name(const mesh *m)
{
    return m->name ? m->name : "mesh";
}

/* ---- building a mesh ------------------------------------------------------------------------- */

typedef struct {
    mesh *m;
    const char *path;
    double scale[3];
    int capv, capt;
    const char *s;   /* text formats: the next byte to read, and its line (0: no lines) */
    int line;
    sid_error *err;
} builder;

/* "PATH:LINE: message" (text formats) or "PATH: message"; returns -1. */
__attribute__((format(printf, 2, 3))) static int fail(builder *b, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (b->line > 0)
        sid_error_set(b->err, SID_ERR_INPUT, "%s:%d: %s", b->path, b->line, msg);
    else
        sid_error_set(b->err, SID_ERR_INPUT, "%s: %s", b->path, msg);
    return -1;
}

static int out_of_memory(builder *b)
{
    return sid_error_set(b->err, SID_ERR_NOMEM, "%s: out of memory", b->path), -1;
}

/* Room for n rows of 3 items of size each in *p (capacity *cap rows, doubled as needed). At
 * most INT_MAX / 3 rows, so that an int indexes every item. */
static int grow(builder *b, void **p, int *cap, int n, size_t size)
{
    if (n <= *cap) return 0;
    int c = *cap ? *cap : 256;
    while (c < n) {
        if (c > INT_MAX / 6) return fail(b, "more than %d vertices or triangles", INT_MAX / 3);
        c *= 2;
    }
    void *q = realloc(*p, (size_t)c * 3 * size);
    if (!q) return out_of_memory(b);
    *p = q;
    *cap = c;
    return 0;
}

/* x as read (finite), scaled. */
static int add_vertex(builder *b, const double x[3])
{
    if (grow(b, (void **)&b->m->vert, &b->capv, b->m->nvert + 1, sizeof(double))) return -1;
    double *v = b->m->vert + 3 * b->m->nvert++;
    for (int i = 0; i < 3; i++) v[i] = x[i] * b->scale[i];
    if (!isfinite(v[0]) || !isfinite(v[1]) || !isfinite(v[2]))
        return fail(b, "vertex %d: a coordinate overflows when scaled", b->m->nvert);
    return 0;
}

static int add_triangle(builder *b, int i, int j, int k)
{
    if (grow(b, (void **)&b->m->tri, &b->capt, b->m->ntri + 1, sizeof(int))) return -1;
    int *t = b->m->tri + 3 * b->m->ntri++;
    t[0] = i, t[1] = j, t[2] = k;
    return 0;
}

/* STL writes each triangle's own copy of its corners: equal points become one vertex (exactly
 * equal: a gap between triangles stays a gap, and mesh_solid calls the mesh open). Sorting the
 * points puts equal ones next to each other. */
typedef struct {
    double p[3];
    int i;
} corner;

static int point_cmp(const double a[3], const double b[3])
{
    for (int k = 0; k < 3; k++)
        if (a[k] != b[k]) return a[k] < b[k] ? -1 : 1;
    return 0;
}

static int corner_cmp(const void *pa, const void *pb)
{
    const corner *a = pa, *b = pb;
    int c = point_cmp(a->p, b->p);
    return c ? c : (a->i > b->i) - (a->i < b->i);
}

static int merge_equal_vertices(builder *b)
{
    mesh *m = b->m;
    corner *c = malloc((size_t)m->nvert * sizeof *c);
    int *id = malloc((size_t)m->nvert * sizeof *id);
    if (!c || !id) {
        free(c), free(id);
        return out_of_memory(b);
    }
    for (int i = 0; i < m->nvert; i++) {
        memcpy(c[i].p, m->vert + 3 * i, sizeof c[i].p);
        c[i].i = i;
    }
    qsort(c, (size_t)m->nvert, sizeof *c, corner_cmp);
    int n = 0;
    for (int k = 0; k < m->nvert; k++) {
        if (k == 0 || point_cmp(c[k - 1].p, c[k].p) != 0) memcpy(m->vert + 3 * n++, c[k].p, sizeof c[k].p);
        id[c[k].i] = n - 1;
    }
    for (int t = 0; t < 3 * m->ntri; t++) m->tri[t] = id[m->tri[t]];
    m->nvert = n;
    free(c), free(id);
    return 0;
}

/* ---- binary STL: 80-byte header, uint32 count, then per triangle a normal, three corners
 * (float32 x 3 each, little-endian) and a 2-byte attribute ---------------------------------- */

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static double le_float(const unsigned char *p)
{
    uint32_t u = le32(p);
    float f;
    _Static_assert(sizeof f == 4, "float is IEEE single precision");
    memcpy(&f, &u, 4);
    return f;
}

static int read_binary_stl(builder *b, const unsigned char *data, uint32_t n)
{
    for (uint32_t t = 0; t < n; t++) {
        const unsigned char *corners = data + 84 + 50 * (size_t)t + 12;   /* after the normal */
        for (int k = 0; k < 3; k++) {
            double x[3] = { le_float(corners + 12 * k), le_float(corners + 12 * k + 4), le_float(corners + 12 * k + 8) };
            if (!isfinite(x[0]) || !isfinite(x[1]) || !isfinite(x[2]))
                return fail(b, "triangle %lu: a coordinate is not a finite number", (unsigned long)t + 1);
            if (add_vertex(b, x)) return -1;
        }
        if (add_triangle(b, 3 * (int)t, 3 * (int)t + 1, 3 * (int)t + 2)) return -1;
    }
    return 0;
}

/* ---- text: words and numbers ----------------------------------------------------------------- */

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* The next word (its length; 0 at the end of the text). in_line: stop at the end of the line
 * instead, where a '#' also ends it (OBJ's comments). b->line is the word's line; at the end of
 * the text, the last word's. */
static int next_word(builder *b, const char **w, int in_line)
{
    const char *s = b->s;
    int line = b->line;
    for (; is_blank(*s) || *s == '\n'; s++) {
        if (*s != '\n') continue;
        if (in_line) break;
        b->line++;
    }
    if (!*s) b->line = line;
    if (in_line && *s == '#')
        while (*s && *s != '\n') s++;
    *w = s;
    while (*s && !is_blank(*s) && *s != '\n' && !(in_line && *s == '#')) s++;
    b->s = s;
    return (int)(s - *w);
}

static void skip_line(builder *b)
{
    while (*b->s && *b->s != '\n') b->s++;
}

static int is_word(const char *w, int n, const char *kw)
{
    return (size_t)n == strlen(kw) && memcmp(w, kw, (size_t)n) == 0;
}

/* The next word must be kw. */
static int expect(builder *b, const char *kw)
{
    const char *w;
    int n = next_word(b, &w, 0);
    if (is_word(w, n, kw)) return 0;
    if (!n) return fail(b, "expected '%s', got the end of the file", kw);
    return fail(b, "expected '%s', got '%.*s'", kw, n < 40 ? n : 40, w);
}

/* Three numbers, the coordinates of what (in messages). */
static int read_point(builder *b, const char *what, int in_line, double x[3])
{
    for (int i = 0; i < 3; i++) {
        const char *w;
        int n = next_word(b, &w, in_line);
        char *end;
        x[i] = n ? strtod(w, &end) : 0;
        if (!n) return fail(b, "%s: expected 3 coordinates, got %d", what, i);
        if (end != w + n) return fail(b, "%s: expected a number, got '%.*s'", what, n < 40 ? n : 40, w);
        if (!isfinite(x[i])) return fail(b, "%s: %.*s is not a finite number", what, n < 40 ? n : 40, w);
    }
    return 0;
}

/* ---- ASCII STL: solid NAME / facet normal n n n / outer loop / vertex x y z (x3) / endloop /
 * endfacet ... / endsolid NAME; several solids may follow each other --------------------------- */

static int read_ascii_stl(builder *b)
{
    if (expect(b, "solid")) return -1;
    skip_line(b);   /* the solid's name */
    for (;;) {
        const char *w;
        int n = next_word(b, &w, 0);
        if (is_word(w, n, "endsolid")) {
            skip_line(b);
            n = next_word(b, &w, 0);
            if (!n) return 0;
            if (!is_word(w, n, "solid"))
                return fail(b, "expected 'solid' or the end of the file, got '%.*s'", n < 40 ? n : 40, w);
            skip_line(b);
            continue;
        }
        if (!is_word(w, n, "facet"))
            return n ? fail(b, "expected 'facet' or 'endsolid', got '%.*s'", n < 40 ? n : 40, w)
                     : fail(b, "expected 'facet' or 'endsolid', got the end of the file");
        if (expect(b, "normal")) return -1;
        for (int i = 0; i < 3; i++) next_word(b, &w, 0);   /* unused: the corners' order gives the side */
        if (expect(b, "outer") || expect(b, "loop")) return -1;
        for (int k = 0; k < 3; k++) {
            double x[3];
            if (expect(b, "vertex") || read_point(b, "vertex", 0, x) || add_vertex(b, x)) return -1;
        }
        int v = b->m->nvert;
        if (expect(b, "endloop") || expect(b, "endfacet") || add_triangle(b, v - 3, v - 2, v - 1)) return -1;
    }
}

/* ---- Wavefront OBJ: "v x y z" and "f a b c ..." with a, a/t, a/t/n or a//n; indices from 1,
 * negative ones counted back from the last vertex read; every other record is not geometry ---- */

static int read_obj_face(builder *b)
{
    int first = -1, prev = -1, count = 0;
    for (;;) {
        const char *w;
        int n = next_word(b, &w, 1);
        if (!n) break;
        char *end;
        long k = strtol(w, &end, 10);
        if (end == w || (end != w + n && *end != '/'))
            return fail(b, "f: expected a vertex index, got '%.*s'", n < 40 ? n : 40, w);
        long nv = b->m->nvert, i = k < 0 ? nv + k : k - 1;
        if (k == 0 || i < 0 || i >= nv) {
            if (!nv) return fail(b, "f: vertex %ld before any 'v' record", k);
            return k > 0 ? fail(b, "f: expected vertex indices 1..%ld, got %ld", nv, k)
                         : fail(b, "f: expected vertex indices 1..%ld or -%ld..-1, got %ld", nv, nv, k);
        }
        if (count == 0) first = (int)i;
        else if (count >= 2 && add_triangle(b, first, prev, (int)i)) return -1;
        prev = (int)i;
        count++;
    }
    if (count < 3) return fail(b, "f: expected at least 3 vertices, got %d", count);
    return 0;
}

static int read_obj(builder *b)
{
    b->line = 1;
    for (;;) {
        const char *w;
        int n = next_word(b, &w, 1);
        double x[3];
        if (is_word(w, n, "v") && (read_point(b, "v", 1, x) || add_vertex(b, x))) return -1;
        if (is_word(w, n, "f") && read_obj_face(b)) return -1;
        skip_line(b);   /* what follows: a vertex's w or colour, or a record that is not geometry */
        if (!*b->s) return 0;
        b->s++;
        b->line++;
    }
}

/* ---- recognising the file -------------------------------------------------------------------- */

/* Text has no control bytes but whitespace; a binary STL's floats and counts have many. */
static int looks_binary(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((p[i] < 0x20 && !is_blank((char)p[i]) && p[i] != '\n') || p[i] == 0x7f) return 1;
    return 0;
}

int mesh_load(const char *path, const double scale[3], mesh *out, sid_error *err)
{
    memset(out, 0, sizeof *out);
    builder b = { .m = out, .path = path, .scale = { 1, 1, 1 }, .err = err };
    if (scale) memcpy(b.scale, scale, sizeof b.scale);
    if (!isfinite(b.scale[0]) || !isfinite(b.scale[1]) || !isfinite(b.scale[2]))
        return fail(&b, "the scale is not finite");
    size_t len;
    char *text = readfile(path, &len, err);
    if (!text) return -1;
    const unsigned char *bytes = (const unsigned char *)text;
    if (!(out->name = malloc(strlen(path) + 1))) {
        free(text);
        return out_of_memory(&b);
    }
    strcpy(out->name, path);
    int stl = 1, rc;
    if (len >= 84 && (len - 84) % 50 == 0 && (len - 84) / 50 == le32(bytes + 80)) {
        rc = read_binary_stl(&b, bytes, le32(bytes + 80));
    } else if (looks_binary(bytes, len)) {
        if (len < 84)
            rc = fail(&b, "not a mesh: %zu bytes of binary data, too short for a binary STL (84 bytes or more)", len);
        else
            rc = fail(&b, "%s binary STL: its header counts %lu triangles, %.0f bytes, and the file has %zu",
                      len < 84 + 50 * (double)le32(bytes + 80) ? "truncated" : "not a", (unsigned long)le32(bytes + 80),
                      84 + 50 * (double)le32(bytes + 80), len);
    } else {
        b.s = text;
        if (len >= 3 && !memcmp(b.s, "\xEF\xBB\xBF", 3)) b.s += 3;   /* a UTF-8 byte order mark */
        const char *w, *start = b.s;
        b.line = 1;
        const int n = next_word(&b, &w, 0);   /* before is_word reads w: argument order is unspecified */
        stl = is_word(w, n, "solid");
        b.s = start;
        rc = stl ? read_ascii_stl(&b) : read_obj(&b);
    }
    free(text);
    b.line = 0;
    if (!rc && out->ntri == 0)
        rc = fail(&b, stl ? "no triangles" : "no triangles (no 'f' record: not an OBJ or STL mesh?)");
    if (!rc && stl) rc = merge_equal_vertices(&b);
    if (rc) mesh_free(out);
    return rc;
}

/* ---- mass properties ------------------------------------------------------------------------- */

/* An edge of a triangle, as its two vertices in increasing order and the way the triangle runs. */
typedef struct {
    int lo, hi, up;
} edge;

static int edge_cmp(const void *pa, const void *pb)
{
    const edge *a = pa, *b = pb;
    if (a->lo != b->lo) return a->lo < b->lo ? -1 : 1;
    return (a->hi > b->hi) - (a->hi < b->hi);
}

/* A closed, consistently oriented surface: every edge in exactly two triangles, which run along
 * it in opposite directions. Then the tetrahedra of integrate cancel everywhere outside the
 * body. Triangles with a repeated vertex have no area and bound nothing: left out. */
static int check_closed(const mesh *m, sid_error *err)
{
    edge *e = malloc(((size_t)m->ntri * 3 + 1) * sizeof *e);
    if (!e) return sid_error_set(err, SID_ERR_NOMEM, "%s: out of memory", mesh_name(m)), -1;
    int n = 0;
    for (int t = 0; t < m->ntri; t++) {
        const int *v = m->tri + 3 * t;
        if (v[0] == v[1] || v[1] == v[2] || v[2] == v[0]) continue;
        for (int k = 0; k < 3; k++) {
            int a = v[k], c = v[(k + 1) % 3];
            e[n++] = (edge){ a < c ? a : c, a < c ? c : a, a < c };
        }
    }
    qsort(e, (size_t)n, sizeof *e, edge_cmp);
    int open = 0, shared = 0, same_way = 0, nedge = 0;
    for (int i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && edge_cmp(&e[i], &e[j]) == 0; j++) {}
        nedge++;
        if (j - i == 1) open++;
        else if (j - i > 2) shared++;
        else if (e[i].up == e[i + 1].up) same_way++;
    }
    free(e);
    if (!open && !shared && !same_way) return 0;
    /* the counts that are not zero, the open edges first */
    char what[300] = "";
    const int count[3] = { open, shared, same_way };
    const char *const kind[3] = { "open edge%s (in one triangle only)", "edge%s in more than two triangles",
                                  "edge%s that both triangles run the same way" };
    for (int k = 0, len = 0; k < 3; k++) {
        if (!count[k]) continue;
        char one[80];
        snprintf(one, sizeof one, kind[k], count[k] == 1 ? "" : "s");
        len += snprintf(what + len, sizeof what - (size_t)len, "%s%d %s", len ? ", " : "", count[k], one);
    }
    return sid_error_set(err, SID_ERR_INPUT,
                         "%s: the mesh is %s: %s, of %d edges; the inertia of a solid needs a closed surface, "
                         "each edge in two triangles that run along it in opposite directions",
                         mesh_name(m), open ? "open" : "not a closed surface", what, nedge), -1;
}

/* Integrals over the triangles' simplices, coordinates relative to r. Each simplex has n + 1
 * vertices v_k: solid (n = 3), the tetrahedron (r, a, b, c) of signed volume a . (b x c) / 6;
 * shell (n = 2), the triangle (a, b, c) of area |(b - a) x (c - a)| / 2. On a simplex of size
 * S, x = sum_k l_k v_k with barycentric coordinates l uniform on the simplex (Dirichlet(1..1)),
 * whose moments are E[l_i] = 1 / (n + 1), E[l_i l_j] = (1 + [i = j]) / ((n + 1)(n + 2)); so,
 * with s = sum_k v_k,
 *     int x dV = S s / (n + 1),     int x x^T dV = S (sum_k v_k v_k^T + s s^T) / ((n + 1)(n + 2)),
 * where the vertex r, at 0, drops out of both sums. For the solid the signed tetrahedra of a closed surface
 * add up to the body (the divergence theorem), whatever r: r near the body keeps the terms that
 * cancel small. second: xx yy zz xy xz yz. */
typedef struct {
    double size, area, first[3], second[6];
} sums;

static const int pair[6][2] = { { 0, 0 }, { 1, 1 }, { 2, 2 }, { 0, 1 }, { 0, 2 }, { 1, 2 } };

static sums integrate(const mesh *m, const double r[3], int solid)
{
    const double k1 = solid ? 1.0 / 4 : 1.0 / 3, k2 = solid ? 1.0 / 20 : 1.0 / 12;
    sums z = { 0 };
    for (int t = 0; t < m->ntri; t++) {
        double v[3][3], s[3], ab[3], ac[3];
        for (int k = 0; k < 3; k++)
            for (int i = 0; i < 3; i++) v[k][i] = m->vert[3 * m->tri[3 * t + k] + i] - r[i];
        for (int i = 0; i < 3; i++) {
            s[i] = v[0][i] + v[1][i] + v[2][i];
            ab[i] = v[1][i] - v[0][i];
            ac[i] = v[2][i] - v[0][i];
        }
        double n[3] = { ab[1] * ac[2] - ab[2] * ac[1], ab[2] * ac[0] - ab[0] * ac[2], ab[0] * ac[1] - ab[1] * ac[0] };
        double area = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]) / 2;
        /* a . (b x c) = a . ((b - a) x (c - a)) */
        double w = solid ? (v[0][0] * n[0] + v[0][1] * n[1] + v[0][2] * n[2]) / 6 : area;
        z.size += w;
        z.area += area;
        for (int i = 0; i < 3; i++) z.first[i] += w * k1 * s[i];
        for (int p = 0; p < 6; p++) {
            int i = pair[p][0], j = pair[p][1];
            z.second[p] += w * k2 * (v[0][i] * v[0][j] + v[1][i] * v[1][j] + v[2][i] * v[2][j] + s[i] * s[j]);
        }
    }
    return z;
}

/* Volume or area, centre and inertia about it. Two passes: the first, about the middle of the
 * bounding box, finds the centre; the second integrates about the centre, so that the inertia
 * is not the difference of two large numbers when the body is far from the origin. */
static int mass(const mesh *m, int solid, mesh_mass *out, sid_error *err)
{
    double lo[3] = { HUGE_VAL, HUGE_VAL, HUGE_VAL }, hi[3] = { -HUGE_VAL, -HUGE_VAL, -HUGE_VAL }, r[3], ext = 0;
    for (int t = 0; t < 3 * m->ntri; t++)
        for (int i = 0; i < 3; i++) {
            lo[i] = fmin(lo[i], m->vert[3 * m->tri[t] + i]);
            hi[i] = fmax(hi[i], m->vert[3 * m->tri[t] + i]);
        }
    for (int i = 0; i < 3; i++) {
        r[i] = m->ntri ? (lo[i] + hi[i]) / 2 : 0;
        ext = m->ntri ? fmax(ext, hi[i] - lo[i]) : 0;
    }
    sums z = integrate(m, r, solid);
    /* rounding leaves a flat body a volume of order 1e-16 ext^3 */
    if (!(fabs(z.size) > 1e-12 * (solid ? ext * ext * ext : ext * ext)))
        return sid_error_set(err, SID_ERR_INPUT, "%s: the mesh %s", mesh_name(m),
                             m->ntri == 0 ? "has no triangles" : solid ? "encloses no volume (it is flat)" : "has no area"), -1;
    for (int i = 0; i < 3; i++) r[i] += z.first[i] / z.size;
    z = integrate(m, r, solid);
    /* what the centre still misses (rounding), and the sign: inward triangles give all of a
     * solid's integrals negated */
    double c[6], sign = z.size < 0 ? -1 : 1;
    for (int p = 0; p < 6; p++) c[p] = sign * (z.second[p] - z.first[pair[p][0]] * z.first[pair[p][1]] / z.size);
    *out = (mesh_mass){ .volume = solid ? fabs(z.size) : 0, .area = z.area };
    for (int i = 0; i < 3; i++) out->com[i] = r[i] + z.first[i] / z.size;
    /* I = tr(C) E - C for C = int x x^T about the centre */
    double inertia[6] = { c[1] + c[2], c[0] + c[2], c[0] + c[1], -c[3], -c[4], -c[5] };
    memcpy(out->inertia, inertia, sizeof inertia);
    return 0;
}

int mesh_solid(const mesh *m, mesh_mass *out, sid_error *err)
{
    if (check_closed(m, err)) return -1;
    return mass(m, 1, out, err);
}

int mesh_shell(const mesh *m, mesh_mass *out, sid_error *err)
{
    return mass(m, 0, out, err);
}
