/* traj_csv.c — reading logs with libcsv, writing simulated trajectories.
 *
 * The file is fed to libcsv one physical line at a time, so that the callbacks know the
 * line they are on (libcsv counts records, not lines). The header row decides, once, what
 * each column feeds: a slot of the sample row [t, q(nq), qd(nv), u(nv)] or nothing.
 * Columns are named by coordinate (sid_model_q_name, sid_model_v_name): a one-dof joint's
 * own name, "base.qw" or "base.vx" for the coordinates of a free joint "base".
 * The first mistake stops the reading; its message is kept in err.
 */
#include "traj_csv.h"

#include <csv.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "coords.h"
#include "diag.h"
#include "numfmt.h"
#include "readfile.h"

/* ---- column maps ------------------------------------------------------------------------ */

void traj_colmap_init(traj_colmap *map)
{
    map->n = 0;
    map->col = NULL;
}

void traj_colmap_free(traj_colmap *map)
{
    free(map->col);
    traj_colmap_init(map);
}

traj_column *traj_colmap_get(traj_colmap *map, const char *name)
{
    for (int i = 0; i < map->n; i++)
        if (strcmp(map->col[i].name, name) == 0)
            return &map->col[i];
    if (strlen(name) >= sizeof map->col->name)
        return NULL;
    traj_column *grown = realloc(map->col, (size_t)(map->n + 1) * sizeof *grown);
    if (!grown)
        return NULL;
    map->col = grown;
    traj_column *c = &map->col[map->n++];
    memset(c, 0, sizeof *c);
    strcpy(c->name, name);
    c->scale = 1.0;
    return c;
}

int traj_colmap_merge(traj_colmap *dst, const traj_colmap *src)
{
    for (int i = 0; i < src->n; i++) {
        traj_column *c = traj_colmap_get(dst, src->col[i].name);
        if (!c)
            return -1;
        /* An entry sets what it gives: a --scale alone keeps the file's source. */
        if (src->col[i].source[0])
            strcpy(c->source, src->col[i].source);
        if (src->col[i].scale != 1.0)
            c->scale = src->col[i].scale;
        strcpy(c->origin, src->col[i].origin);
    }
    return 0;
}

/* ---- reading ---------------------------------------------------------------------------- */

typedef struct {
    int slot;             /* index in the sample row, or -1: not read */
    double scale;
    char logical[SID_MAX_NAME + 8];   /* its logical name; "" for unused columns */
} column;

typedef struct {
    const char *path;
    const sid_model *m;
    const traj_colmap *map;
    sid_error *err;
    int failed;
    int line;             /* physical line being parsed, from 1 */
    int nd, nq, nv, width;   /* moving joints, coordinates; slots per sample: 1 + nq + 2 nv */
    int has_qd;
    /* header */
    int in_header;        /* still reading the first row */
    int ncol, tcol;       /* columns; the one that holds t */
    int hline;            /* line of the header */
    char **header;
    column *col;
    /* samples */
    int field;            /* field index within the current row */
    int nrow, cap;
    double *val;          /* (nrow x width) */
    int prev_line;        /* line of the previous sample, for time errors */
} reader;

static int fail(reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(reader *r, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (!r->failed)
        sid_error_set(r->err, SID_ERR_INPUT, "%s: %s", r->path, msg);
    r->failed = 1;
    return -1;
}

/* "q.elbow", or "pos2 (q.elbow)" when the map renamed it. */
static void column_label(const reader *r, int c, char *buf, size_t n)
{
    const char *h = r->header[c], *l = r->col[c].logical;
    if (l[0] && strcmp(l, h) != 0)
        snprintf(buf, n, "%s (%s)", h, l);
    else
        snprintf(buf, n, "%s", h);
}

/* "column q.elbow", or "column pos2 (q.elbow)". */
static void column_name(const reader *r, int c, char *buf, size_t n)
{
    char label[300];
    column_label(r, c, label, sizeof label);
    snprintf(buf, n, "column %s", label);
}

static const traj_column *mapped(const reader *r, const char *logical)
{
    for (int i = 0; r->map && i < r->map->n; i++)
        if (strcmp(r->map->col[i].name, logical) == 0)
            return &r->map->col[i];
    return NULL;
}

static int find_header(const reader *r, const char *name)
{
    for (int c = 0; c < r->ncol; c++)
        if (strcmp(r->header[c], name) == 0)
            return c;
    return -1;
}

/* The q.* columns the log has, as a hint when the joints do not match. */
static void log_joints(const reader *r, char *buf, size_t n)
{
    size_t k = 0;
    buf[0] = '\0';
    for (int c = 0; c < r->ncol && k + 1 < n; c++)
        if (strncmp(r->header[c], "q.", 2) == 0)
            k += (size_t)snprintf(buf + k, n - k, "%s%s", k ? ", " : "", r->header[c]);
}

/* Connect logical column `logical` to its header; required: a missing one is an error. */
static int bind(reader *r, const char *logical, int slot, int required, const char *why)
{
    const traj_column *mc = mapped(r, logical);
    const char *src = mc && mc->source[0] ? mc->source : logical;
    int c = find_header(r, src);
    if (c < 0) {
        /* A column the map names explicitly must be there, even an optional one. */
        if (mc && mc->source[0])
            return fail(r, "line %d: missing column %s (mapped to %s by %s)", r->hline, src,
                        logical, mc->origin);
        if (!required)
            return 0;
        char joints[200];
        log_joints(r, joints, sizeof joints);
        return fail(r, "line %d: missing column %s (%s%s%s)", r->hline, src, why,
                    joints[0] ? "; the log has " : "", joints);
    }
    if (r->col[c].logical[0])
        return fail(r, "line %d: column %s is mapped to both %s and %s", r->hline, src,
                    r->col[c].logical, logical);
    r->col[c].slot = slot;
    r->col[c].scale = mc ? mc->scale : 1.0;
    snprintf(r->col[c].logical, sizeof r->col[c].logical, "%s", logical);
    return 1;
}

/* Does logical name `s` name a column of this model's logs? */
static int known_logical(const reader *r, const char *s)
{
    static const char *const prefix[] = { "q.", "qd.", "u.", "tau." };
    if (strcmp(s, "t") == 0)
        return 1;
    for (int p = 0; p < 4; p++) {
        size_t n = strlen(prefix[p]);
        if (strncmp(s, prefix[p], n) != 0)
            continue;
        for (int k = 0; k < r->nd; k++) {
            int q0, nq, v0, nv;
            coords_joint(r->m, k, &q0, &nq, &v0, &nv);
            for (int i = 0; p == 0 && i < nq; i++)
                if (strcmp(s + n, sid_model_q_name(r->m, q0 + i)) == 0)
                    return 1;
            for (int i = 0; p > 0 && i < nv; i++)
                if (strcmp(s + n, sid_model_v_name(r->m, v0 + i)) == 0)
                    return p != 2 || sid_model_dof_joint_has_motor(r->m, k);
        }
    }
    return 0;
}

/* Bind the columns of moving joint k; returns the number of qd.* columns found, or -1. */
static int bind_joint(reader *r, int k)
{
    const char *j = sid_model_dof_joint_name(r->m, k);
    const int motor = sid_model_dof_joint_has_motor(r->m, k);
    char name[SID_MAX_NAME + 16], why[SID_MAX_NAME + 40];
    int q0, nq, v0, nv, nqd = 0;
    coords_joint(r->m, k, &q0, &nq, &v0, &nv);
    for (int i = q0; i < q0 + nq; i++) {
        snprintf(name, sizeof name, "q.%s", sid_model_q_name(r->m, i));
        snprintf(why, sizeof why, "position of joint %s", j);
        if (bind(r, name, 1 + i, 1, why) < 0)
            return -1;
    }
    for (int i = v0; i < v0 + nv; i++) {
        const char *c = sid_model_v_name(r->m, i);
        snprintf(name, sizeof name, "qd.%s", c);
        int got = bind(r, name, 1 + r->nq + i, 0, "");
        if (got < 0)
            return -1;
        nqd += got;
        snprintf(name, sizeof name, "u.%s", c);
        snprintf(why, sizeof why, "command of joint %s, which has a motor", j);
        if (motor && bind(r, name, 1 + r->nq + r->nv + i, 1, why) < 0)
            return -1;
        snprintf(name, sizeof name, "tau.%s", c);
        if (bind(r, name, -1, 0, "") < 0)
            return -1;
    }
    return nqd;
}

/* Velocities are logged for every coordinate or for none: name the first one missing. */
static int check_all_qd(reader *r)
{
    char name[SID_MAX_NAME + 16];
    const char *given = NULL;
    for (int i = 0; i < r->nv && !given; i++) {
        snprintf(name, sizeof name, "qd.%s", sid_model_v_name(r->m, i));
        for (int c = 0; c < r->ncol && !given; c++)
            if (strcmp(r->col[c].logical, name) == 0)
                given = sid_model_v_name(r->m, i);
    }
    for (int i = 0; i < r->nv; i++) {
        snprintf(name, sizeof name, "qd.%s", sid_model_v_name(r->m, i));
        const traj_column *mc = mapped(r, name);
        if (find_header(r, mc && mc->source[0] ? mc->source : name) < 0)
            return fail(r, "line %d: missing column %s (velocities are given for all "
                        "joints or none, and qd.%s is given)", r->hline, name, given);
    }
    return 0;
}

static int on_header(reader *r)
{
    r->col = calloc((size_t)r->ncol, sizeof *r->col);
    if (!r->col)
        return fail(r, "out of memory");
    for (int c = 0; c < r->ncol; c++) {
        r->col[c].slot = -1;
        if (!r->header[c][0])
            return fail(r, "line %d, column %d: empty column name", r->hline, c + 1);
        int d = find_header(r, r->header[c]);
        if (d != c)
            return fail(r, "line %d: column %s appears twice (columns %d and %d)", r->hline,
                        r->header[c], d + 1, c + 1);
    }
    int has_free = 0;
    for (int k = 0; k < r->nd; k++)
        has_free |= sid_model_dof_joint_type(r->m, k) == SID_JOINT_FREE;
    for (int i = 0; r->map && i < r->map->n; i++)
        if (!known_logical(r, r->map->col[i].name)) {
            /* A mistake of the map, not of the log: name where the map came from. */
            sid_error_set(r->err, SID_ERR_INPUT, "%s: %s is not a log column of this robot "
                          "(t, q.JOINT, qd.JOINT, u.JOINT for a joint with a motor, "
                          "tau.JOINT%s)", r->map->col[i].origin, r->map->col[i].name,
                          has_free ? "; a free joint's are q.JOINT.x .. q.JOINT.qz and "
                                     "qd.JOINT.vx .. qd.JOINT.wz" : "");
            r->failed = 1;
            return -1;
        }
    if (bind(r, "t", 0, 1, "the sample times") < 0)
        return -1;
    for (int c = 0; c < r->ncol; c++)
        if (r->col[c].slot == 0)
            r->tcol = c;
    int nqd = 0;
    for (int k = 0; k < r->nd; k++) {
        int got = bind_joint(r, k);
        if (got < 0)
            return -1;
        nqd += got;
    }
    if (nqd > 0 && nqd < r->nv && check_all_qd(r))
        return -1;
    if (r->failed)
        return -1;
    r->has_qd = nqd > 0;

    char unknown[300];
    size_t k = 0;
    int nunknown = 0;
    for (int c = 0; c < r->ncol; c++)
        if (!r->col[c].logical[0]) {
            if (k + 1 < sizeof unknown)
                k += (size_t)snprintf(unknown + k, sizeof unknown - k, "%s%s", nunknown ? ", " : "",
                                      r->header[c]);
            nunknown++;
        }
    if (nunknown)
        cli_warn("%s: ignoring %d unknown column%s: %s", r->path, nunknown, nunknown > 1 ? "s" : "",
                 unknown);
    return 0;
}

static int grow(reader *r)
{
    if (r->nrow < r->cap)
        return 0;
    int cap = r->cap ? 2 * r->cap : 1024;
    double *v = realloc(r->val, (size_t)cap * (size_t)r->width * sizeof *v);
    if (!v)
        return fail(r, "out of memory");
    r->val = v;
    r->cap = cap;
    return 0;
}

static void on_field(void *s, size_t len, void *data)
{
    reader *r = data;
    int c = r->field++;
    const char *text = s ? s : "";
    if (r->failed)
        return;
    if (r->in_header) {
        char **h = realloc(r->header, (size_t)(c + 1) * sizeof *h);
        char *name = malloc(len + 1);
        if (h)
            r->header = h;
        if (!h || !name) {
            free(name);
            fail(r, "out of memory");
            return;
        }
        memcpy(name, text, len);
        name[len] = '\0';
        r->header[c] = name;
        r->ncol = c + 1;
        return;
    }
    if (c == 0 && grow(r))
        return;
    if (c >= r->ncol || r->col[c].slot < 0)
        return; /* the field count is checked at the end of the row */
    /* the column's name is formatted only for a message: most cells never need it */
    char cname[320];
    if (len == 0) {
        column_name(r, c, cname, sizeof cname);
        fail(r, "line %d, %s: empty cell; expected a number", r->line, cname);
        return;
    }
    char *end;
    double x = strtod(text, &end);
    /* the whole cell, up to its length: a NUL byte inside must not cut it short */
    if (end == text || end != text + len) {
        column_name(r, c, cname, sizeof cname);
        if (memchr(text, '\0', len))
            fail(r, "line %d, %s: expected a number, got a cell with a NUL byte", r->line, cname);
        else
            fail(r, "line %d, %s: expected a number, got '%.40s'", r->line, cname, text);
        return;
    }
    x *= r->col[c].scale;
    if (!isfinite(x)) {
        column_name(r, c, cname, sizeof cname);
        fail(r, "line %d, %s: expected a finite number, got '%.40s'", r->line, cname, text);
        return;
    }
    r->val[(size_t)r->nrow * (size_t)r->width + (size_t)r->col[c].slot] = x;
}

/* The column that feeds sample slot `slot`, or -1. */
static int slot_column(const reader *r, int slot)
{
    for (int c = 0; c < r->ncol; c++)
        if (r->col[c].slot == slot)
            return c;
    return -1;
}

/* A free joint's logged orientation must be a rotation. Logs round and filter, so a norm
 * near 1 is accepted as it is; one far from 1 is a wrong column or a wrong unit. */
static int check_quaternions(reader *r, const double *row)
{
    for (int k = 0; k < r->nd; k++) {
        if (sid_model_dof_joint_type(r->m, k) != SID_JOINT_FREE)
            continue;
        const int s0 = 1 + sid_model_dof_joint_qadr(r->m, k) + 3;   /* qw after x, y, z */
        const double n = sqrt(row[s0] * row[s0] + row[s0 + 1] * row[s0 + 1] +
                              row[s0 + 2] * row[s0 + 2] + row[s0 + 3] * row[s0 + 3]);
        if (n >= 0.5 && n <= 1.5)
            continue;
        char names[4 * 310];
        size_t len = 0;
        for (int i = 0; i < 4; i++) {
            char label[300];
            column_label(r, slot_column(r, s0 + i), label, sizeof label);
            len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", i ? ", " : "columns ", label);
        }
        return fail(r, "line %d, %s: quaternion of norm %.6g; expected a unit quaternion (norm "
                    "between 0.5 and 1.5)", r->line, names, n);
    }
    return 0;
}

static void on_row(int term, void *data)
{
    reader *r = data;
    int nfield = r->field;
    (void)term;
    r->field = 0;
    if (r->failed)
        return;
    if (r->in_header) {
        r->in_header = 0;
        r->hline = r->line;
        on_header(r);
        return;
    }
    if (nfield != r->ncol) {
        fail(r, "line %d: expected %d fields (as in the header), got %d", r->line, r->ncol,
             nfield);
        return;
    }
    const double *row = r->val + (size_t)r->nrow * (size_t)r->width;
    if (check_quaternions(r, row))
        return;
    if (r->nrow > 0) {
        double t0 = row[-r->width], t = row[0];
        char a[NUMFMT_LEN], b[NUMFMT_LEN], cname[320];
        numfmt(a, t);
        numfmt(b, t0);
        column_name(r, r->tcol, cname, sizeof cname);
        if (t == t0) {
            fail(r, "line %d, %s: repeated time %s (also on line %d); expected increasing "
                 "times", r->line, cname, a, r->prev_line);
            return;
        }
        if (t < t0) {
            fail(r, "line %d, %s: decreasing time %s after %s on line %d; expected "
                 "increasing times", r->line, cname, a, b, r->prev_line);
            return;
        }
    }
    r->prev_line = r->line;
    r->nrow++;
}

/* Feed text to libcsv line by line, counting lines for the callbacks. */
static void parse(reader *r, const char *text, size_t len)
{
    struct csv_parser p;
    if (csv_init(&p, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL) != 0) {
        fail(r, "out of memory");
        return;
    }
    /* A UTF-8 byte order mark (spreadsheets write one) is not part of the first name. */
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
        text += 3;
        len -= 3;
    }
    size_t at = 0;
    r->line = 0;
    while (at < len && !r->failed) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t n = nl ? (size_t)(nl - (text + at)) + 1 : len - at;
        r->line++;
        if (csv_parse(&p, text + at, n, on_field, on_row, r) != n) {
            fail(r, "line %d: %s", r->line, csv_error(&p) == CSV_EPARSE
                     ? "malformed quoting; expected a quote only around a whole field"
                     : csv_strerror(csv_error(&p)));
            break;
        }
        at += n;
    }
    if (!r->failed && csv_fini(&p, on_field, on_row, r) != 0)
        fail(r, "line %d: %s", r->line, csv_error(&p) == CSV_EPARSE
             ? "unterminated quote at the end of the file"
             : csv_strerror(csv_error(&p)));
    csv_free(&p);
}

/* Copy the samples into a new sid_traj. Commands of joints without a motor stay 0 (their
 * slots of the sample rows were never filled). */
static sid_traj *build(reader *r)
{
    const int nq = r->nq, nv = r->nv;
    int *mc = malloc((size_t)(nv ? nv : 1) * sizeof *mc);
    sid_traj *tr = mc ? sid_traj_create(r->nrow, nq, nv, r->has_qd) : NULL;
    if (!tr) {
        free(mc);
        sid_error_set(r->err, SID_ERR_NOMEM, "%s: out of memory", r->path);
        return NULL;
    }
    const int nm = coords_motor(r->m, mc);
    for (int i = 0; i < r->nrow; i++) {
        const double *row = r->val + (size_t)i * (size_t)r->width;
        tr->t[i] = row[0];
        memcpy(tr->q + (size_t)i * (size_t)nq, row + 1, (size_t)nq * sizeof *row);
        if (tr->qd)
            memcpy(tr->qd + (size_t)i * (size_t)nv, row + 1 + nq, (size_t)nv * sizeof *row);
        for (int c = 0; c < nm; c++)
            tr->u[(size_t)i * (size_t)nv + (size_t)mc[c]] = row[1 + nq + nv + mc[c]];
    }
    free(mc);
    return tr;
}

int traj_csv_load(const char *path, const sid_model *m, const traj_colmap *map, sid_traj **tr,
                  sid_error *err)
{
    reader r;
    memset(&r, 0, sizeof r);
    r.path = path;
    r.m = m;
    r.map = map;
    r.err = err;
    r.in_header = 1;
    r.nd = sid_model_ndof_joints(m);
    r.nq = sid_model_nq(m);
    r.nv = sid_model_nv(m);
    r.width = 1 + r.nq + 2 * r.nv;
    *tr = NULL;

    size_t len;
    char *text = readfile(path, &len, err);
    if (!text)
        return -1;
    parse(&r, text, len);
    free(text);
    if (!r.failed && r.in_header)
        fail(&r, "no header row; expected a line of column names");
    else if (!r.failed && r.nrow == 0)
        fail(&r, "no samples after the header (line %d); expected at least 2 rows", r.hline);
    else if (!r.failed && r.nrow < 2)
        fail(&r, "line %d: only one sample; expected at least 2", r.prev_line);
    if (!r.failed)
        *tr = build(&r);
    for (int c = 0; c < r.ncol; c++)
        free(r.header[c]);
    free(r.header);
    free(r.col);
    free(r.val);
    return *tr ? 0 : -1;
}

/* ---- writing ------------------------------------------------------------------------------ */

static void cell(FILE *f, double x, int first)
{
    char buf[NUMFMT_LEN];
    numfmt(buf, x);
    if (!first)
        fputc(',', f);
    fputs(buf, f);
}

int traj_csv_write(FILE *f, const sid_model *m, const sid_traj *tr, const double *q,
                   const double *v)
{
    const int nq = tr->nq, nv = tr->nv;
    int *mc = malloc((size_t)(nv ? nv : 1) * sizeof *mc);
    if (!mc)
        return -1;
    const int nm = coords_motor(m, mc);
    if (!q)
        q = tr->q;
    if (!v)
        v = tr->qd;
    fputs("t", f);
    for (int i = 0; i < nq; i++)
        fprintf(f, ",q.%s", sid_model_q_name(m, i));
    for (int i = 0; v && i < nv; i++)
        fprintf(f, ",qd.%s", sid_model_v_name(m, i));
    for (int c = 0; c < nm; c++)
        fprintf(f, ",u.%s", sid_model_v_name(m, mc[c]));
    fputc('\n', f);
    for (int i = 0; i < tr->n && !ferror(f); i++) {
        cell(f, tr->t[i], 1);
        for (int k = 0; k < nq; k++)
            cell(f, q[i * nq + k], 0);
        for (int k = 0; v && k < nv; k++)
            cell(f, v[i * nv + k], 0);
        for (int c = 0; c < nm; c++)
            cell(f, tr->u[i * nv + mc[c]], 0);
        fputc('\n', f);
    }
    free(mc);
    return ferror(f) ? -1 : 0;
}
