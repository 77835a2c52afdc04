/* traj_csv.c — reading logs with libcsv, writing simulated trajectories.
 *
 * The file is fed to libcsv one physical line at a time, so that the callbacks know the
 * line they are on (libcsv counts records, not lines). The header row decides, once, what
 * each column feeds: a slot of the sample row [t, q(nq), qd(nv), u(nv)] or nothing.
 * Columns are named by coordinate (sid_model_q_name, sid_model_v_name): a one-dof joint's
 * own name, "base.qw" or "base.vx" for the coordinates of a free joint "base"; the map
 * finds each one's header (an entry of its own name, else the first pattern matching it)
 * and conversion (a scale or a unit that must fit the column's quantity) separately.
 * The header line also decides the delimiter. The first mistake stops the reading; its
 * message is kept in err. Messages are formatted only when a row is wrong: a log has
 * millions of cells.
 */
#include "traj_csv.h"

#include <csv.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "colpattern.h"
#include "coords.h"
#include "warn.h"
#include "logtime.h"
#include "numfmt.h"
#include "readfile.h"
#include "units.h"

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

static traj_column *find_entry(const traj_colmap *map, const char *name)
{
    for (int i = 0; i < map->n; i++)
        if (strcmp(map->col[i].name, name) == 0)
            return &map->col[i];
    return NULL;
}

/* A new entry at position at (nothing set); NULL if no memory or name is too long. */
static traj_column *insert_entry(traj_colmap *map, int at, const char *name)
{
    if (strlen(name) >= sizeof map->col->name)
        return NULL;
    traj_column *grown = realloc(map->col, (size_t)(map->n + 1) * sizeof *grown);
    if (!grown)
        return NULL;
    map->col = grown;
    memmove(grown + at + 1, grown + at, (size_t)(map->n - at) * sizeof *grown);
    map->n++;
    traj_column *c = &grown[at];
    memset(c, 0, sizeof *c);
    strcpy(c->name, name);
    c->scale = 1.0;
    return c;
}

traj_column *traj_colmap_get(traj_colmap *map, const char *name)
{
    traj_column *c = find_entry(map, name);
    return c ? c : insert_entry(map, map->n, name);
}

int traj_colmap_merge(traj_colmap *dst, const traj_colmap *src)
{
    int front = 0;   /* where the next new pattern goes: src's, in order, before dst's */
    for (int i = 0; i < src->n; i++) {
        const traj_column *s = &src->col[i];
        traj_column *c = find_entry(dst, s->name);
        if (!c)
            c = insert_entry(dst, colpattern_is_pattern(s->name) ? front++ : dst->n, s->name);
        if (!c)
            return -1;
        /* An entry sets what it gives: a --scale alone keeps the file's source. */
        if (s->set & TRAJ_COL_SOURCE) {
            strcpy(c->source, s->source);
            strcpy(c->origin, s->origin);
        }
        if (s->set & (TRAJ_COL_SCALE | TRAJ_COL_UNIT)) {
            c->set &= ~(TRAJ_COL_SCALE | TRAJ_COL_UNIT);
            c->scale = s->scale;
            strcpy(c->unit, s->unit);
            strcpy(c->conv_origin, s->conv_origin);
        }
        c->set |= s->set;
    }
    return 0;
}

/* ---- reading ---------------------------------------------------------------------------- */

/* What a logical column is, for binding and conversion. */
typedef struct {
    const char *logical;       /* "q.elbow" */
    const char *joint;         /* "elbow"; "" for t */
    const char *coord;         /* "elbow", "base.qw"; "" for t */
    int index;                 /* the joint's place among moving joints; -1 for t */
    unit_kind kind[2];         /* the kinds of unit it accepts */
    int nkind;                 /* 0: it has no unit (a quaternion component) */
    char what[SID_MAX_NAME + 64];   /* "the position of revolute joint elbow" */
    const char *alt;           /* another header that may hold it (a servo's ref.JOINT), or NULL */
} colinfo;

typedef struct {
    int slot;             /* index in the sample row, or -1: not read */
    int conv;             /* 0: as logged; 1: times scale; 2: unit (mul / div, pow10) */
    double scale, mul, div;
    int pow10;            /* a time unit's exact decimal shift */
    char logical[SID_MAX_NAME + 8];   /* its logical name; "" for unused columns */
} column;

typedef struct {
    const char *path;
    const sid_model *m;
    const traj_colmap *map;
    sid_error *err;
    int failed;
    int line;             /* physical line being parsed, from 1 */
    int line_start;       /* the next byte fed starts a new line */
    int nd, nq, nv, width;   /* moving joints, coordinates; slots per sample: 1 + nq + 3 nv (t q qd u tau), pushes */
    int has_qd;
    int has_tau;          /* a tau.* column is bound (slots tau_slot(r, 0 .. nv - 1)) */
    char delim, point;    /* field delimiter; decimal point ('.', or ',' in ';' logs) */
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
    int *rowline;         /* (nrow) the line of each sample */
    int prev_line;        /* line of the previous sample, for time errors */
    /* time: the first sample's, kept exactly; this row's and the previous row's text */
    logtime t0;
    int t0_exact;
    double t0_value;
    char tcell[48], tprev[48];
    /* pushes (f.<link>.fx ..): sample slots push_base + i, each to push_dst[i] of a body's 12 */
    int npush, push_base, *push_dst;
    /* empty command cells, held from the row before */
    long nheld;
    int held_line, held_col;
} reader;

/* The first mistake wins, named by where (the log's path, or where a column map said it). */
static int vfail(reader *r, const char *where, const char *fmt, va_list ap)
{
    char msg[600];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (!r->failed)
        sid_error_set(r->err, SID_ERR_INPUT, "%s: %s", where, msg);
    r->failed = 1;
    return -1;
}

static int fail(reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(reader *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(r, r->path, fmt, ap);
    va_end(ap);
    return -1;
}

/* A mistake of the column map rather than of the log: named by where the map said it. */
static int map_fail(reader *r, const char *origin, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int map_fail(reader *r, const char *origin, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(r, origin, fmt, ap);
    va_end(ap);
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

static int find_header(const reader *r, const char *name)
{
    for (int c = 0; c < r->ncol; c++)
        if (strcmp(r->header[c], name) == 0)
            return c;
    return -1;
}

/* The header's names, "a, b, c" (cut short with "..."), for messages. */
static void header_list(const reader *r, char *buf, size_t n)
{
    size_t k = 0;
    buf[0] = '\0';
    for (int c = 0; c < r->ncol; c++) {
        int w = snprintf(buf + k, n - k, "%s%s", c ? ", " : "", r->header[c]);
        if (w < 0 || (size_t)w >= n - k) {
            if (n > 4)
                strcpy(buf + n - 4, "...");
            return;
        }
        k += (size_t)w;
    }
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

static int is_pattern_entry(const traj_column *e)
{
    return colpattern_is_pattern(e->name);
}

/* The map entry that gives logical's `what` (TRAJ_COL_SOURCE, or a conversion): its own
 * entry, else the first pattern that matches it (never for t), else NULL. */
static const traj_column *entry_for(const reader *r, const char *logical, int what)
{
    if (!r->map)
        return NULL;
    for (int i = 0; i < r->map->n; i++) {
        const traj_column *e = &r->map->col[i];
        if ((e->set & what) && !is_pattern_entry(e) && strcmp(e->name, logical) == 0)
            return e;
    }
    if (strcmp(logical, "t") == 0)
        return NULL;
    for (int i = 0; i < r->map->n; i++) {
        const traj_column *e = &r->map->col[i];
        if ((e->set & what) && is_pattern_entry(e) && sid_glob_match(e->name, logical))
            return e;
    }
    return NULL;
}

/* The header that holds column ci, in src (n bytes); *by the entry that said so, or NULL. */
static int source_of(reader *r, const colinfo *ci, char *src, size_t n, const traj_column **by)
{
    const traj_column *e = entry_for(r, ci->logical, TRAJ_COL_SOURCE);
    *by = e;
    if (!e) {
        /* a servo's reference is u.JOINT or ref.JOINT, never both (which would be meant?) */
        const int has_alt = ci->alt && find_header(r, ci->alt) >= 0;
        if (has_alt && find_header(r, ci->logical) >= 0)
            return fail(r, "line %d: columns %s and %s both give %s; keep one", r->hline,
                        ci->logical, ci->alt, ci->what);
        snprintf(src, n, "%s", has_alt ? ci->alt : ci->logical);
        return 0;
    }
    if (!is_pattern_entry(e)) {
        snprintf(src, n, "%s", e->source);
        return 0;
    }
    if (colpattern_expand(e->source, ci->joint, ci->coord, ci->index, src, n))
        return map_fail(r, e->origin, "the header %s makes for %s is longer than %zu "
                        "characters", e->source, ci->logical, n - 1);
    return 0;
}

/* The kinds of unit column ci accepts, as "an angle (rad, deg, rev)". */
static void kinds_text(const colinfo *ci, char *buf, size_t n)
{
    if (ci->nkind == 0)
        snprintf(buf, n, "no unit: it is a number without one");
    else if (ci->nkind == 1)
        snprintf(buf, n, "%s (%s)", unit_kind_name(ci->kind[0]), unit_kind_list(ci->kind[0]));
    else
        snprintf(buf, n, "%s (%s) or %s (%s)", unit_kind_name(ci->kind[0]),
                 unit_kind_list(ci->kind[0]), unit_kind_name(ci->kind[1]),
                 unit_kind_list(ci->kind[1]));
}

/* Set column c's conversion from the map: a scale, or a unit that must fit ci's quantity. */
static int set_conversion(reader *r, int c, const colinfo *ci)
{
    column *col = &r->col[c];
    const traj_column *e = entry_for(r, ci->logical, TRAJ_COL_SCALE | TRAJ_COL_UNIT);
    col->conv = 0;
    col->scale = col->mul = col->div = 1.0;
    col->pow10 = 0;
    if (!e)
        return 0;
    if (e->set & TRAJ_COL_SCALE) {
        col->conv = 1;
        col->scale = e->scale;
        return 0;
    }
    const unit_def *u = unit_find(e->unit);
    char kinds[200];
    kinds_text(ci, kinds, sizeof kinds);
    if (!u)
        return map_fail(r, e->conv_origin, "unknown unit '%s' for %s; expected %s", e->unit,
                        ci->logical, kinds);
    int ok = 0;
    for (int i = 0; i < ci->nkind; i++)
        ok |= u->kind == ci->kind[i];
    if (!ok)
        return map_fail(r, e->conv_origin, "'%s' is %s unit, but %s is %s; expected %s",
                        e->unit, unit_kind_name(u->kind), ci->logical, ci->what, kinds);
    col->conv = 2;
    col->mul = u->mul;
    col->div = u->div;
    col->pow10 = u->pow10;
    return 0;
}

/* Connect logical column ci to its header; required: a missing one is an error. */
static int bind(reader *r, const colinfo *ci, int slot, int required, const char *why)
{
    char src[256], hdr[400];
    const traj_column *by;
    if (source_of(r, ci, src, sizeof src, &by))
        return -1;
    int c = find_header(r, src);
    if (c < 0) {
        /* A column the map names must be there, even an optional one. */
        if (by) {
            header_list(r, hdr, sizeof hdr);
            return fail(r, "line %d: missing column %s (mapped to %s by %s); the header has: %s",
                        r->hline, src, ci->logical, by->origin, hdr);
        }
        if (!required)
            return 0;
        char joints[200];
        log_joints(r, joints, sizeof joints);
        if (joints[0])
            return fail(r, "line %d: missing column %s (%s; the log has %s)", r->hline, src, why,
                        joints);
        header_list(r, hdr, sizeof hdr);
        return fail(r, "line %d: missing column %s (%s); the header has: %s", r->hline, src, why,
                    hdr);
    }
    if (r->col[c].logical[0])
        return fail(r, "line %d: column %s is mapped to both %s and %s%s%s", r->hline, src,
                    r->col[c].logical, ci->logical, by ? " by " : "", by ? by->origin : "");
    r->col[c].slot = slot;
    snprintf(r->col[c].logical, sizeof r->col[c].logical, "%s", ci->logical);
    if (set_conversion(r, c, ci))
        return -1;
    return 1;
}

/* How many of this robot's logical columns key names (one, or a pattern's matches). */
static int count_logical(const reader *r, const char *key)
{
    static const char *const prefix[] = { "q.", "qd.", "u.", "tau." };
    const int pattern = colpattern_is_pattern(key);
    char name[SID_MAX_NAME + 16];
    int n = !pattern && strcmp(key, "t") == 0;
    for (int c = 0; c < r->ncol; c++)
        if (strncmp(r->header[c], "f.", 2) == 0)
            n += pattern ? sid_glob_match(key, r->header[c]) : strcmp(key, r->header[c]) == 0;
    for (int p = 0; p < 4; p++)
        for (int k = 0; k < r->nd; k++) {
            int q0, nq, v0, nv;
            coords_joint(r->m, k, &q0, &nq, &v0, &nv);
            if (p == 2 && !sid_model_dof_joint_has_motor(r->m, k))
                continue;
            for (int i = 0; i < (p == 0 ? nq : nv); i++) {
                snprintf(name, sizeof name, "%s%s", prefix[p],
                         p == 0 ? sid_model_q_name(r->m, q0 + i) : sid_model_v_name(r->m, v0 + i));
                n += pattern ? sid_glob_match(key, name) : strcmp(key, name) == 0;
            }
        }
    return n;
}

static void info_init(colinfo *ci, const char *logical, const char *joint, const char *coord,
                      int index)
{
    memset(ci, 0, sizeof *ci);
    ci->logical = logical;
    ci->joint = joint;
    ci->coord = coord;
    ci->index = index;
}

static void info_kinds(colinfo *ci, unit_kind a, int n2, unit_kind b)
{
    ci->kind[0] = a;
    ci->kind[1] = b;
    ci->nkind = 1 + n2;
}

static const char *joint_type_name(sid_joint_type t)
{
    return t == SID_JOINT_PRISMATIC ? "prismatic" : t == SID_JOINT_FREE ? "free" : "revolute";
}

/* The sample slot of velocity coordinate i's torque reading (after t, q, qd and u). */
static int tau_slot(const reader *r, int i)
{
    return 1 + r->nq + 2 * r->nv + i;
}

/* A command's slot (u or a push): an empty cell holds the previous row's; a reading's does not. */
static int held_slot(const reader *r, int slot)
{
    return slot > r->nq + r->nv && !(slot >= tau_slot(r, 0) && slot < tau_slot(r, r->nv));
}

/* Bind the columns of moving joint k; returns the number of qd.* columns found, or -1. */
static int bind_joint(reader *r, int k)
{
    const char *j = sid_model_dof_joint_name(r->m, k);
    const int motor = sid_model_dof_joint_has_motor(r->m, k);
    const sid_joint_type type = sid_model_dof_joint_type(r->m, k);
    const int lin = type == SID_JOINT_PRISMATIC;
    const char *tn = joint_type_name(type);
    char name[SID_MAX_NAME + 16], why[2 * SID_MAX_NAME + 80], pname[SID_MAX_NAME + 32];
    char refname[SID_MAX_NAME + 16];
    const sid_motor_input mk = sid_model_dof_joint_motor(r->m, k);
    const sid_motor_input servo = mk == SID_MOTOR_POSITION || mk == SID_MOTOR_VELOCITY ? mk : SID_MOTOR_NONE;
    colinfo ci;
    int q0, nq, v0, nv, nqd = 0;
    snprintf(pname, sizeof pname, "joints.%s.motor.resistance", j);
    const int voltage = motor && sid_model_param_find(r->m, pname) >= 0;
    coords_joint(r->m, k, &q0, &nq, &v0, &nv);
    for (int i = q0; i < q0 + nq; i++) {
        const char *c = sid_model_q_name(r->m, i);
        snprintf(name, sizeof name, "q.%s", c);
        snprintf(why, sizeof why, "position of joint %s", j);
        info_init(&ci, name, j, c, k);
        if (type != SID_JOINT_FREE || i - q0 < 3)
            info_kinds(&ci, lin || type == SID_JOINT_FREE ? UNIT_LENGTH : UNIT_ANGLE, 0, 0);
        snprintf(ci.what, sizeof ci.what, "%s of %s joint %s",
                 type == SID_JOINT_FREE && i - q0 >= 3 ? "a quaternion component"
                 : lin || type == SID_JOINT_FREE ? "a position" : "the angle", tn, j);
        if (bind(r, &ci, 1 + i, 1, why) < 0)
            return -1;
    }
    for (int i = v0; i < v0 + nv; i++) {
        const char *c = sid_model_v_name(r->m, i);
        const int linv = lin || (type == SID_JOINT_FREE && i - v0 < 3);
        snprintf(name, sizeof name, "qd.%s", c);
        info_init(&ci, name, j, c, k);
        info_kinds(&ci, linv ? UNIT_VELOCITY : UNIT_ANGULAR_VELOCITY, 0, 0);
        snprintf(ci.what, sizeof ci.what, "%s velocity of %s joint %s",
                 linv ? "a linear" : "an angular", tn, j);
        int got = bind(r, &ci, 1 + r->nq + i, 0, "");
        if (got < 0)
            return -1;
        nqd += got;
        snprintf(name, sizeof name, "u.%s", c);
        snprintf(why, sizeof why, "command of joint %s, which has a motor", j);
        info_init(&ci, name, j, c, k);
        if (voltage)
            info_kinds(&ci, UNIT_VOLTAGE, 0, 0);
        else
            info_kinds(&ci, lin ? UNIT_FORCE : UNIT_TORQUE, 1, UNIT_CURRENT);
        snprintf(ci.what, sizeof ci.what, "the command of %s joint %s (a %s motor)", tn, j,
                 voltage ? "voltage" : "torque or current");
        if (servo) {
            /* a servo's command is its reference, with q's (or qd's) units */
            snprintf(refname, sizeof refname, "ref.%s", c);
            ci.alt = refname;
            snprintf(why, sizeof why, "reference of joint %s, which has a %s servo; or %s", j,
                     servo == SID_MOTOR_POSITION ? "position" : "velocity", refname);
            if (servo == SID_MOTOR_POSITION)
                info_kinds(&ci, lin ? UNIT_LENGTH : UNIT_ANGLE, 0, 0);
            else
                info_kinds(&ci, lin ? UNIT_VELOCITY : UNIT_ANGULAR_VELOCITY, 0, 0);
            snprintf(ci.what, sizeof ci.what, "the reference of %s joint %s (a %s servo)", tn, j,
                     servo == SID_MOTOR_POSITION ? "position" : "velocity");
        }
        if (motor && bind(r, &ci, 1 + r->nq + r->nv + i, 1, why) < 0)
            return -1;
        snprintf(name, sizeof name, "tau.%s", c);
        info_init(&ci, name, j, c, k);
        info_kinds(&ci, lin ? UNIT_FORCE : UNIT_TORQUE, 1, lin ? UNIT_TORQUE : UNIT_FORCE);
        snprintf(ci.what, sizeof ci.what, "the torque of %s joint %s", tn, j);
        /* a torque sensor's reading (core/problem/torque_sensor.h), scored only with a tau weight */
        if (bind(r, &ci, tau_slot(r, i), 0, "") < 0)
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
        int bound = 0;
        for (int c = 0; c < r->ncol && !bound; c++)
            bound = strcmp(r->col[c].logical, name) == 0;
        if (!bound)
            return fail(r, "line %d: missing column %s (velocities are given for all "
                        "joints or none, and qd.%s is given)", r->hline, name, given);
    }
    return 0;
}

/* Every entry of the map names columns this robot's logs have. */
static int check_map(reader *r)
{
    int has_free = 0;
    for (int k = 0; k < r->nd; k++)
        has_free |= sid_model_dof_joint_type(r->m, k) == SID_JOINT_FREE;
    for (int i = 0; r->map && i < r->map->n; i++) {
        const traj_column *e = &r->map->col[i];
        if (count_logical(r, e->name) > 0)
            continue;
        const char *origin = e->set & TRAJ_COL_SOURCE ? e->origin : e->conv_origin;
        return map_fail(r, origin, "%s %s (t, q.JOINT, qd.JOINT, u.JOINT for a joint "
                        "with a motor, tau.JOINT, or a pattern such as q.*%s)", e->name,
                        colpattern_is_pattern(e->name) ? "matches no log column of this robot"
                                                       : "is not a log column of this robot",
                        has_free ? "; a free joint's are q.JOINT.x .. q.JOINT.qz and "
                                   "qd.JOINT.vx .. qd.JOINT.wz" : "");
    }
    return 0;
}

/* A push column f.<link>.<c> (world frame) or f.<link>@link.<c> (link frame), c one of fx fy fz
 * [N] and tx ty tz [N·m] at the link's origin (core/dynamics/push.h): its place among a body's 12. */
static int push_place(reader *r, int c, int *dst)
{
    const char *h = r->header[c] + 2, *dot = strrchr(h, '.');
    static const char *const comp[6] = {"tx", "ty", "tz", "fx", "fy", "fz"};
    char link[SID_MAX_NAME + 8];
    if (!dot || dot == h || (size_t)(dot - h) >= sizeof link)
        return fail(r, "line %d: column %s: expected f.LINK.fx .. f.LINK.tz (or f.LINK@link.fx for "
                    "the link frame)", r->hline, r->header[c]);
    memcpy(link, h, (size_t)(dot - h));
    link[dot - h] = '\0';
    int frame = SID_PUSH_WORLD, k = -1;
    char *at = strchr(link, '@');
    if (at) {
        if (strcmp(at, "@link") != 0)
            return fail(r, "line %d: column %s: frame '%s'; expected @link (the link frame) or none (the "
                        "world frame)", r->hline, r->header[c], at + 1);
        *at = '\0';
        frame = SID_PUSH_LINK;
    }
    for (int i = 0; i < 6; i++)
        if (strcmp(dot + 1, comp[i]) == 0)
            k = i;
    if (k < 0)
        return fail(r, "line %d: column %s: component '%s'; expected fx, fy, fz [N] or tx, ty, tz [N*m]",
                    r->hline, r->header[c], dot + 1);
    const int b = sid_model_link_body(r->m, link);
    if (b < 0) {
        char names[300];
        size_t n = 0;
        for (int i = 1; i < sid_model_nbody(r->m) && n + 1 < sizeof names; i++)
            n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", i > 1 ? ", " : "", sid_model_link_name(r->m, i));
        return fail(r, "line %d: column %s: the robot has no link '%s' (its moving links: %s)", r->hline,
                    r->header[c], link, names);
    }
    if (b == 0)
        return fail(r, "line %d: column %s: link '%s' is the root, welded to the world; a push on it moves "
                    "nothing", r->hline, r->header[c], link);
    *dst = b * SID_PUSH_STRIDE + frame + k;
    return 0;
}

/* Bind every f.* column as a push (held over its interval, like a command). */
static int bind_pushes(reader *r)
{
    r->push_base = r->width;
    for (int c = 0; c < r->ncol; c++)
        if (!r->col[c].logical[0] && strncmp(r->header[c], "f.", 2) == 0)
            r->npush++;
    if (!r->npush)
        return 0;
    r->push_dst = malloc((size_t)r->npush * sizeof *r->push_dst);
    if (!r->push_dst)
        return fail(r, "out of memory");
    int i = 0;
    for (int c = 0; c < r->ncol; c++) {
        if (r->col[c].logical[0] || strncmp(r->header[c], "f.", 2) != 0)
            continue;
        if (push_place(r, c, &r->push_dst[i]))
            return -1;
        for (int j = 0; j < i; j++)
            if (r->push_dst[j] == r->push_dst[i])
                return fail(r, "line %d: column %s: another column gives the same push", r->hline, r->header[c]);
        const int torque = r->push_dst[i] % 6 < 3;
        colinfo ci;
        info_init(&ci, r->header[c], "", "", -1);
        info_kinds(&ci, torque ? UNIT_TORQUE : UNIT_FORCE, 0, 0);
        snprintf(ci.what, sizeof ci.what, "a push %s", torque ? "torque" : "force");
        r->col[c].slot = r->push_base + i;
        snprintf(r->col[c].logical, sizeof r->col[c].logical, "%s", r->header[c]);
        if (set_conversion(r, c, &ci))
            return -1;
        i++;
    }
    r->width += r->npush;
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
    if (check_map(r))
        return -1;
    colinfo ci;
    info_init(&ci, "t", "", "", -1);
    info_kinds(&ci, UNIT_TIME, 0, 0);
    snprintf(ci.what, sizeof ci.what, "the time");
    if (bind(r, &ci, 0, 1, "the sample times") < 0)
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
    if (bind_pushes(r))
        return -1;
    if (r->failed)
        return -1;
    r->has_qd = nqd > 0;
    /* a torque column of no moving joint is a belief about the robot, not noise to skip */
    for (int c = 0; c < r->ncol; c++) {
        if (r->col[c].slot >= tau_slot(r, 0) && r->col[c].slot < tau_slot(r, r->nv))
            r->has_tau = 1;
        if (!r->col[c].logical[0] && strncmp(r->header[c], "tau.", 4) == 0)
            return fail(r, "line %d: column %s: no revolute or prismatic joint coordinate %s of this robot "
                        "(expected tau.JOINT, a joint torque sensor's reading)", r->hline, r->header[c],
                        r->header[c] + 4);
    }

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
        sid_io_warn("%s: ignoring %d unknown column%s: %s", r->path, nunknown, nunknown > 1 ? "s" : "",
                 unknown);
    return 0;
}

static int grow(reader *r)
{
    if (r->nrow < r->cap)
        return 0;
    int cap = r->cap ? 2 * r->cap : 1024;
    double *v = realloc(r->val, (size_t)cap * (size_t)r->width * sizeof *v);
    if (v)
        r->val = v;
    int *l = v ? realloc(r->rowline, (size_t)cap * sizeof *l) : NULL;
    if (l)
        r->rowline = l;
    if (!v || !l)
        return fail(r, "out of memory");
    r->cap = cap;
    return 0;
}

/* The time of this row in seconds from the first sample: exactly subtracted when both are
 * plain decimals, else as doubles; then converted. x is the cell read as a double. */
static double sample_time(reader *r, const column *col, const char *text, size_t len, double x)
{
    logtime lt;
    int exact = logtime_parse(text, len, '.', &lt) == 0;
    const int shift = col->conv == 2 ? col->pow10 : 0;
    double t;
    if (r->nrow == 0) {
        r->t0_exact = exact;
        if (exact)
            r->t0 = lt;
        r->t0_value = x;
    }
    if (exact && r->t0_exact && logtime_diff(&lt, &r->t0, shift, &t) == 0) {
        if (col->conv == 2 && col->mul != 1.0)
            t = t * col->mul;
    } else {
        t = x - r->t0_value;
        if (col->conv == 2)
            t = t * col->mul / col->div;
    }
    return col->conv == 1 ? t * col->scale : t;
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
    const column *col = &r->col[c];
    double *cellp = &r->val[(size_t)r->nrow * (size_t)r->width + (size_t)col->slot];
    /* the column's name is formatted only for a message: most cells never need it */
    char cname[320];
    if (len == 0) {
        if (held_slot(r, col->slot) && r->nrow > 0) {
            /* a command not logged on this row: the previous one still holds */
            *cellp = cellp[-r->width];
            if (r->nheld++ == 0) {
                r->held_line = r->line;
                r->held_col = c;
            }
            return;
        }
        column_name(r, c, cname, sizeof cname);
        fail(r, "line %d, %s: empty cell; expected a number%s", r->line, cname,
             held_slot(r, col->slot) ? " (an empty command cell holds the previous row's "
                                         "command, and this is the first sample)"
                                       : " (sysid does not interpolate; fill or drop the row)");
        return;
    }
    /* a decimal comma (in a ';' log) becomes a point, in a copy: the cell is short */
    char copy[64];
    if (r->point == ',' && memchr(text, ',', len) && len < sizeof copy) {
        memcpy(copy, text, len);
        copy[len] = '\0';
        char *comma = strchr(copy, ',');
        if (!strchr(copy, '.') && !strchr(comma + 1, ',')) {
            *comma = '.';
            text = copy;
        }
    }
    char *end;
    double x = strtod(text, &end);
    /* the whole cell, up to its length: a NUL byte inside must not cut it short */
    if (end == text || end != text + len) {
        column_name(r, c, cname, sizeof cname);
        if (memchr(text, '\0', len))
            fail(r, "line %d, %s: expected a number, got a cell with a NUL byte", r->line, cname);
        else if (memchr(text, ',', len) && r->delim != ',')
            fail(r, "line %d, %s: expected a number, got '%.40s' (a decimal comma is read only "
                 "in logs delimited by ';')", r->line, cname, text);
        else
            fail(r, "line %d, %s: expected a number, got '%.40s'", r->line, cname, text);
        return;
    }
    if (col->slot == 0) {
        x = isfinite(x) ? sample_time(r, col, text, len, x) : x;
        size_t n = len < sizeof r->tcell - 1 ? len : sizeof r->tcell - 1;   /* for messages */
        memcpy(r->tcell, text, n);
        r->tcell[n] = '\0';
    } else if (col->conv == 1)
        x *= col->scale;
    else if (col->conv == 2)
        x = x * col->mul / col->div;
    if (!isfinite(x)) {
        column_name(r, c, cname, sizeof cname);
        fail(r, "line %d, %s: expected a finite number, got '%.40s'", r->line, cname, text);
        return;
    }
    *cellp = x;
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
    if (r->nrow > 0 && !(row[0] > row[-r->width])) {
        /* messages only: formatted when a row is wrong, not for every row */
        char cname[320];
        column_name(r, r->tcol, cname, sizeof cname);
        if (row[0] == row[-r->width])
            fail(r, "line %d, %s: repeated time %s (also on line %d); expected increasing "
                 "times", r->line, cname, r->tcell, r->prev_line);
        else
            fail(r, "line %d, %s: decreasing time %s after %s on line %d; expected "
                 "increasing times", r->line, cname, r->tcell, r->tprev, r->prev_line);
        return;
    }
    memcpy(r->tprev, r->tcell, sizeof r->tprev);
    r->rowline[r->nrow] = r->line;
    r->prev_line = r->line;
    r->nrow++;
}

/* The delimiter of the header line: whichever of ',', ';' and tab it has most of outside
 * quotes (',' on a tie); 0 if it has none of them but spaces (not a format we read). */
static char detect_delimiter(const char *text, size_t len)
{
    int n[3] = { 0, 0, 0 }, quoted = 0, spaces = 0;
    static const char cand[3] = { ',', ';', '\t' };
    for (size_t i = 0; i < len && text[i] != '\n' && text[i] != '\r'; i++) {
        if (text[i] == '"')
            quoted = !quoted;
        else if (!quoted) {
            for (int k = 0; k < 3; k++)
                n[k] += text[i] == cand[k];
            spaces += text[i] == ' ';
        }
    }
    int best = 0;
    for (int k = 1; k < 3; k++)
        if (n[k] > n[best])
            best = k;
    if (n[best] == 0 && spaces)
        return 0;
    return cand[best];
}

/* libcsv trims spaces and tabs around fields; a tab that delimits must not be trimmed. */
static int is_space_not_tab(unsigned char c)
{
    return c == CSV_SPACE;
}

/* Feed len bytes to libcsv a line at a time, counting lines for the callbacks (a line may
 * arrive in several pieces: the count goes up when a new one starts). */
static void feed(reader *r, struct csv_parser *p, const char *data, size_t len)
{
    size_t at = 0;
    while (at < len && !r->failed) {
        if (r->line_start) {
            r->line++;
            r->line_start = 0;
        }
        const char *nl = memchr(data + at, '\n', len - at);
        size_t n = nl ? (size_t)(nl - (data + at)) + 1 : len - at;
        if (csv_parse(p, data + at, n, on_field, on_row, r) != n) {
            fail(r, "line %d: %s", r->line, csv_error(p) == CSV_EPARSE
                     ? "malformed quoting; expected a quote only around a whole field"
                     : csv_strerror(csv_error(p)));
            return;
        }
        r->line_start = nl != NULL;
        at += n;
    }
}

/* Set the parser up from the header line (head, up to its newline or the end of the file)
 * and feed it: the delimiter is the header's. */
static void start(reader *r, struct csv_parser *p, const char *head, size_t len)
{
    /* A UTF-8 byte order mark (spreadsheets write one) is not part of the first name. */
    if (len >= 3 && memcmp(head, "\xEF\xBB\xBF", 3) == 0) {
        head += 3;
        len -= 3;
    }
    r->delim = detect_delimiter(head, len);
    if (!r->delim) {
        size_t n = strcspn(head, "\r\n");
        fail(r, "line 1: no ',', ';' or tab between the column names, got '%.*s%s'; "
             "expected a header such as t,q.JOINT,... (columns apart by spaces are not read)",
             (int)(n > 60 ? 60 : n), head, n > 60 ? "..." : "");
        return;
    }
    r->point = r->delim == ';' ? ',' : '.';
    csv_set_delim(p, (unsigned char)r->delim);
    if (r->delim == '\t')
        csv_set_space_func(p, is_space_not_tab);
    feed(r, p, head, len);
}

/* Read the log in pieces, so that it is never in memory whole next to its samples. Returns
 * 1 when the whole file was read (for its kept digest). */
#define PIECE (1 << 16)
static int parse(reader *r, readfile_stream *in)
{
    struct csv_parser p;
    char *piece = malloc(PIECE), *head = NULL;
    size_t nhead = 0;
    int started = 0, complete = 0;
    if (!piece || csv_init(&p, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL) != 0) {
        free(piece);
        fail(r, "out of memory");
        return 0;
    }
    r->line = 0;
    r->line_start = 1;
    while (!r->failed) {
        long n = readfile_read(in, piece, PIECE - 1, r->err);
        if (n < 0) {
            r->failed = 1;   /* err says why */
            break;
        }
        if (n > 0 && started) {
            feed(r, &p, piece, (size_t)n);
            continue;
        }
        if (n > 0) {
            /* the header line, gathered until its newline, decides the delimiter */
            char *grown = realloc(head, nhead + (size_t)n + 1);
            if (!grown) {
                fail(r, "out of memory");
                break;
            }
            head = grown;
            memcpy(head + nhead, piece, (size_t)n);
            nhead += (size_t)n;
            head[nhead] = '\0';
            if (!memchr(piece, '\n', (size_t)n))
                continue;
        }
        if (!started) {
            started = 1;
            start(r, &p, head, nhead);
            free(head);
            head = NULL;
        }
        if (n == 0) {
            complete = 1;
            break;
        }
    }
    if (!r->failed && csv_fini(&p, on_field, on_row, r) != 0)
        fail(r, "line %d: %s", r->line, csv_error(&p) == CSV_EPARSE
             ? "unterminated quote at the end of the file"
             : csv_strerror(csv_error(&p)));
    free(head);
    free(piece);
    csv_free(&p);
    return complete && !r->failed;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Dropped samples are simulated as one long interval: say where, in case it is a recording
 * that stopped and restarted. A gap is an interval over GAP_FACTOR times the median. */
#define GAP_FACTOR 10
#define GAP_SHOWN 3
static void warn_gaps(const reader *r)
{
    const int n = r->nrow - 1;
    if (n < 2 || !sid_io_warn_enabled())
        return;
    double *dt = malloc((size_t)n * sizeof *dt);
    if (!dt)
        return;
    for (int i = 0; i < n; i++)
        dt[i] = r->val[(size_t)(i + 1) * (size_t)r->width] - r->val[(size_t)i * (size_t)r->width];
    qsort(dt, (size_t)n, sizeof *dt, cmp_double);
    const double median = n % 2 ? dt[n / 2] : 0.5 * (dt[n / 2 - 1] + dt[n / 2]);
    int ngap = 0;
    for (int i = 0; i < n; i++) {
        double d = r->val[(size_t)(i + 1) * (size_t)r->width] - r->val[(size_t)i * (size_t)r->width];
        if (!(d > GAP_FACTOR * median))
            continue;
        if (ngap++ < GAP_SHOWN)
            sid_io_warn("%s: line %d: a gap of %.6g s after line %d, %.3g times the median sample "
                     "interval %.6g s (samples missing?)", r->path, r->rowline[i + 1], d,
                     r->rowline[i], d / median, median);
    }
    if (ngap > GAP_SHOWN)
        sid_io_warn("%s: %d more gaps over %d times the median sample interval", r->path,
                 ngap - GAP_SHOWN, GAP_FACTOR);
    free(dt);
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
    const size_t per = (size_t)sid_model_nbody(r->m) * SID_PUSH_STRIDE;
    if (r->npush && !(tr->push = sid_alloc((size_t)r->nrow * per * sizeof(double)))) {
        free(mc);
        sid_traj_free(tr);
        sid_error_set(r->err, SID_ERR_NOMEM, "%s: out of memory", r->path);
        return NULL;
    }
    if (r->has_tau) {
        tr->tau = sid_alloc((size_t)r->nrow * (size_t)(nv ? nv : 1) * sizeof(double));
        tr->tau_has = sid_alloc((size_t)(nv ? nv : 1) * sizeof(int));
        if (!tr->tau || !tr->tau_has) {
            free(mc);
            sid_traj_free(tr);
            sid_error_set(r->err, SID_ERR_NOMEM, "%s: out of memory", r->path);
            return NULL;
        }
        for (int c = 0; c < r->ncol; c++)
            if (r->col[c].slot >= tau_slot(r, 0) && r->col[c].slot < tau_slot(r, nv))
                tr->tau_has[r->col[c].slot - tau_slot(r, 0)] = 1;
    }
    for (int i = 0; i < r->nrow; i++) {
        const double *row = r->val + (size_t)i * (size_t)r->width;
        tr->t[i] = row[0];
        for (int c = 0; tr->tau && c < nv; c++)
            tr->tau[(size_t)i * (size_t)nv + (size_t)c] = tr->tau_has[c] ? row[tau_slot(r, c)] : 0;
        memcpy(tr->q + (size_t)i * (size_t)nq, row + 1, (size_t)nq * sizeof *row);
        if (tr->qd)
            memcpy(tr->qd + (size_t)i * (size_t)nv, row + 1 + nq, (size_t)nv * sizeof *row);
        for (int c = 0; c < nm; c++)
            tr->u[(size_t)i * (size_t)nv + (size_t)mc[c]] = row[1 + nq + nv + mc[c]];
        for (int c = 0; c < r->npush; c++)
            tr->push[(size_t)i * per + (size_t)r->push_dst[c]] = row[r->push_base + c];
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
    r.width = 1 + r.nq + 3 * r.nv;
    *tr = NULL;

    readfile_stream *in = readfile_open(path, err);
    if (!in)
        return -1;
    readfile_close(in, parse(&r, in));
    if (!r.failed && r.in_header)
        fail(&r, "no header row; expected a line of column names");
    else if (!r.failed && r.nrow == 0)
        fail(&r, "no samples after the header (line %d); expected at least 2 rows", r.hline);
    else if (!r.failed && r.nrow < 2)
        fail(&r, "line %d: only one sample; expected at least 2", r.prev_line);
    if (!r.failed) {
        if (r.nheld) {
            char cname[320];
            column_name(&r, r.held_col, cname, sizeof cname);
            sid_io_warn("%s: %ld empty command cell%s held the previous row's command (the first: "
                     "line %d, %s)", path, r.nheld, r.nheld > 1 ? "s" : "", r.held_line, cname);
        }
        warn_gaps(&r);
        *tr = build(&r);
    }
    for (int c = 0; c < r.ncol; c++)
        free(r.header[c]);
    free(r.header);
    free(r.col);
    free(r.val);
    free(r.rowline);
    free(r.push_dst);
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
