/* urdf_export.c — fitted values written back into a URDF's text (urdf.h): the target file is
 * read with urdf_read into the same picture the import makes, so a fitted robot.json made from
 * it finds each number's element again by name; only those numbers' bytes change. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "warn.h"
#include "numfmt.h"
#include "robot_json.h"
#include "urdf_internal.h"
#include "xml_text.h"

/* ---- export: fitted values into the file's text ---------------------------------------------- */

/* The whitespace that indents the line node starts on (at most cap - 1 bytes), and node's span. */
static int indent_of(const char *text, size_t len, const xmlNode *node, char *ind, size_t cap, size_t *start,
                     size_t *end)
{
    if (xml_element_span(text, len, node, start, end)) return -1;
    size_t b = *start;
    while (b > 0 && (text[b - 1] == ' ' || text[b - 1] == '\t')) b--;
    size_t n = *start - b < cap - 1 ? *start - b : cap - 1;
    memcpy(ind, text + b, n);
    ind[n] = 0;
    return 0;
}

/* Insert raw as parent's new last child element, on its own line, indented like its last child. */
static int insert_child(xml_edits *e, const char *text, size_t len, const xmlNode *parent, const char *raw)
{
    const xmlNode *last = NULL;
    for (const xmlNode *c = parent->children; c; c = c->next)
        if (c->type == XML_ELEMENT_NODE) last = c;
    if (!last) return -1;
    char ind[64], buf[400];
    size_t s, t;
    if (indent_of(text, len, last, ind, sizeof ind, &s, &t)) return -1;
    snprintf(buf, sizeof buf, "\n%s%s", ind, raw);
    return xml_edits_insert(e, t, buf);
}

/* "x y z" of three numbers, numfmt's forms. */
static void triple(char *buf, size_t len, const double *v)
{
    char a[NUMFMT_LEN], b[NUMFMT_LEN], c[NUMFMT_LEN];
    numfmt(a, v[0]), numfmt(b, v[1]), numfmt(c, v[2]);
    snprintf(buf, len, "%s %s %s", a, b, c);
}

/* Components changed (new[k] != old[k]) into ch; any? */
static int changed3(const double *nv, const double *ov, int n, unsigned char *ch)
{
    int any = 0;
    for (int k = 0; k < n; k++) any |= (ch[k] = nv[k] != ov[k]);
    return any;
}

/* Write the three numbers v of attribute a of element el (changed ones only, if present). */
static int set_triple(xml_edits *e, const char *text, size_t len, const xmlNode *el, const char *a, const double *v,
                      const unsigned char *ch)
{
    if (urdf_attr(el, a)) return xml_edits_set_numbers(e, text, len, el, a, 3, v, ch);
    char buf[3 * NUMFMT_LEN + 4];
    triple(buf, sizeof buf, v);
    return xml_edits_set_attr(e, text, len, el, a, buf);
}

static int set_number(xml_edits *e, const char *text, size_t len, const xmlNode *el, const char *a, double v)
{
    char buf[NUMFMT_LEN];
    numfmt(buf, v);
    return xml_edits_set_attr(e, text, len, el, a, buf);
}

static int export_link(xml_edits *e, const char *text, size_t len, const ulink *l, const sid_link_desc *f)
{
    static const char *const keys[] = { "ixx", "iyy", "izz", "ixy", "ixz", "iyz" };
    unsigned char ch[6];
    if (f->mass != l->mass && set_number(e, text, len, l->mass_el, "value", f->mass)) return -1;
    if (changed3(f->com, l->com, 3, ch)) {
        if (l->in_origin) {
            if (set_triple(e, text, len, l->in_origin, "xyz", f->com, ch)) return -1;
        } else {
            /* a new <origin> before <mass>, on a line of its own */
            char ind[64], buf[200], xyz[3 * NUMFMT_LEN + 4];
            size_t s, t;
            if (indent_of(text, len, l->mass_el, ind, sizeof ind, &s, &t)) return -1;
            triple(xyz, sizeof xyz, f->com);
            snprintf(buf, sizeof buf, "<origin xyz=\"%s\"/>\n%s", xyz, ind);
            if (xml_edits_insert(e, s, buf)) return -1;
        }
    }
    if (!changed3(f->inertia, l->inertia, 6, ch)) return 0;
    const int rotated = l->rpy[0] != 0 || l->rpy[1] != 0 || l->rpy[2] != 0;
    if (rotated) {
        /* the tensor goes into the link frame, so the inertial frame loses its rotation */
        static const double zero[3] = { 0, 0, 0 };
        static const unsigned char all[3] = { 1, 1, 1 };
        if (xml_edits_set_numbers(e, text, len, l->in_origin, "rpy", 3, zero, all)) return -1;
        memset(ch, 1, 6);
    }
    for (int k = 0; k < 6; k++)
        if (ch[k] && set_number(e, text, len, l->inertia_el, keys[k], f->inertia[k])) return -1;
    return 0;
}

static int export_joint(xml_edits *e, const char *text, size_t len, const ujoint *j, const sid_joint_desc *f)
{
    unsigned char cx[3], cr[3], ca[3];
    const int dx = changed3(f->xyz, j->xyz, 3, cx), dr = changed3(f->rpy, j->rpy, 3, cr);
    if (dx || dr) {
        if (j->origin) {
            if (dx && set_triple(e, text, len, j->origin, "xyz", f->xyz, cx)) return -1;
            if (dr && set_triple(e, text, len, j->origin, "rpy", f->rpy, cr)) return -1;
        } else {
            char buf[300], xyz[3 * NUMFMT_LEN + 4], rpy[3 * NUMFMT_LEN + 4];
            triple(xyz, sizeof xyz, f->xyz), triple(rpy, sizeof rpy, f->rpy);
            snprintf(buf, sizeof buf, "<origin xyz=\"%s\" rpy=\"%s\"/>", xyz, rpy);
            if (insert_child(e, text, len, j->node, buf)) return -1;
        }
    }
    if ((f->type == SID_JOINT_REVOLUTE || f->type == SID_JOINT_PRISMATIC) && changed3(f->axis, j->axis, 3, ca)) {
        if (j->axis_el) {
            if (set_triple(e, text, len, j->axis_el, "xyz", f->axis, ca)) return -1;
        } else {
            char buf[200], xyz[3 * NUMFMT_LEN + 4];
            triple(xyz, sizeof xyz, f->axis);
            snprintf(buf, sizeof buf, "<axis xyz=\"%s\"/>", xyz);
            if (insert_child(e, text, len, j->node, buf)) return -1;
        }
    }
    const int dv = f->viscous != j->damping, dc = f->coulomb != j->friction;
    if (f->type == SID_JOINT_FIXED || f->type == SID_JOINT_FREE || (!dv && !dc)) return 0;
    if (j->dynamics) {
        if (dv && set_number(e, text, len, j->dynamics, "damping", f->viscous)) return -1;
        if (dc && set_number(e, text, len, j->dynamics, "friction", f->coulomb)) return -1;
        return 0;
    }
    char buf[200], v[NUMFMT_LEN], c[NUMFMT_LEN];
    numfmt(v, f->viscous), numfmt(c, f->coulomb);
    if (dv && dc) snprintf(buf, sizeof buf, "<dynamics damping=\"%s\" friction=\"%s\"/>", v, c);
    else if (dv) snprintf(buf, sizeof buf, "<dynamics damping=\"%s\"/>", v);
    else snprintf(buf, sizeof buf, "<dynamics friction=\"%s\"/>", c);
    return insert_child(e, text, len, j->node, buf);
}

/* Is the row a number the URDF holds (and urdf_export writes)? */
static int representable(const sid_param_row *row)
{
    switch (row->kind) {
    case SID_P_MASS: case SID_P_COM: case SID_P_INERTIA: case SID_P_XYZ: case SID_P_RPY:
    case SID_P_VISCOUS: case SID_P_COULOMB:
        return 1;
    default:
        return 0;
    }
}

static int find_name(const char *name, const char *names, size_t stride, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names + (size_t)i * stride, name) == 0) return i;
    return -1;
}

/* fitted's links and joints are the file's (by name), with the same types and tree:
 * lmap/jmap[i] = the file's index of fitted's link/joint i. */
static int match_structure(reader *r, const urdf_doc *u, const sid_robot_desc *f, int *lmap, int *jmap)
{
    for (int i = 0; i < f->nlink; i++) {
        lmap[i] = find_name(f->link[i].name, u->link[0].name, sizeof(ulink), u->nlink);
        if (lmap[i] < 0)
            return sid_error_set(r->err, SID_ERR_INPUT, "%s: link '%s' of the fitted robot is not in the file",
                                 r->path, f->link[i].name), -1;
        if (f->link[i].has_mass != u->link[lmap[i]].has_mass)
            return urdf_fail(r, u->link[lmap[i]].node, "the fitted robot's link '%s' %s a mass and the file's %s",
                        f->link[i].name, f->link[i].has_mass ? "has" : "has no",
                        f->link[i].has_mass ? "has none" : "has one");
    }
    for (int i = 0; i < f->njoint; i++) {
        const sid_joint_desc *fj = &f->joint[i];
        jmap[i] = find_name(fj->name, u->joint[0].name, sizeof(ujoint), u->njoint);
        if (jmap[i] < 0)
            return sid_error_set(r->err, SID_ERR_INPUT, "%s: joint '%s' of the fitted robot is not in the file",
                                 r->path, fj->name), -1;
        const ujoint *j = &u->joint[jmap[i]];
        if (fj->type != j->type || fj->parent < 0 || fj->child < 0 || lmap[fj->parent] != j->parent ||
            lmap[fj->child] != j->child)
            return urdf_fail(r, j->node, "the fitted robot's joint '%s' differs in type, parent or child (a different "
                                    "structure: export writes numbers, not joints)", fj->name);
    }
    if (f->nlink != u->nlink || f->njoint != u->njoint)
        return sid_error_set(r->err, SID_ERR_INPUT, "%s: the file has %d links and %d joints, the fitted robot %d and %d "
                                                    "(a different structure)",
                             r->path, u->nlink, u->njoint, f->nlink, f->njoint), -1;
    return 0;
}

/* The parameters of fitted that differ from orig (the file's import) and URDF cannot hold:
 * the heading once, then one line each. */
static void report_unrepresentable(const char *path, const sid_robot_desc *f, const sid_robot_desc *orig,
                                   const int *lmap, const int *jmap)
{
    const sid_param_row *rows;
    const int nrow = sid_param_rows(&rows);
    int heading = 0;
    for (int r = 0; r < nrow; r++) {
        const sid_param_row *row = &rows[r];
        if (representable(row)) continue;
        const int n = row->owner == SID_OWNER_LINK ? f->nlink : row->owner == SID_OWNER_JOINT ? f->njoint
                    : row->owner == SID_OWNER_SPHERE ? f->nsphere : 1;
        for (int i = 0; i < n; i++) {
            const int oi = row->owner == SID_OWNER_LINK ? lmap[i] : row->owner == SID_OWNER_JOINT ? jmap[i] : -1;
            if (!sid_param_exists(row, f, i)) continue;
            const int oexists = row->owner != SID_OWNER_SPHERE && sid_param_exists(row, orig, oi);
            const double *fv = sid_param_value(row, f, i), *ov = oexists ? sid_param_value(row, orig, oi) : NULL;
            const char *owner = row->owner == SID_OWNER_LINK ? f->link[i].name
                              : row->owner == SID_OWNER_JOINT ? f->joint[i].name
                              : row->owner == SID_OWNER_SPHERE ? f->sphere[i].name : "";
            for (int k = 0; k < row->ncomp; k++) {
                if (ov && fv[k] == ov[k]) continue;
                if (!heading) sid_io_warn("%s: not representable in URDF (kept in FITTED.json only):", path);
                heading = 1;
                char name[2 * SID_MAX_NAME + 32], v[NUMFMT_LEN];
                sid_param_name(row, owner, row->comp0 + k, name, sizeof name);
                numfmt(v, fv[k]);
                sid_io_warn("  %s = %s", name, v);
            }
        }
    }
}

int urdf_export(const char *path, const char *text, size_t len, const sid_robot_desc *fitted,
                char **out, size_t *outlen, sid_error *err)
{
    reader r = { .path = path, .err = err, .quiet = 1 };
    urdf_doc u;
    *out = NULL;
    *outlen = 0;
    if (urdf_read(&r, text, len, &u)) return -1;
    char *json = NULL;
    sid_robot_desc orig = { 0 };
    xml_edits *e = NULL;
    int rc = -1;
    int *lmap = calloc((size_t)(fitted->nlink + 1), sizeof *lmap), *jmap = calloc((size_t)(fitted->njoint + 1), sizeof *jmap);
    if (!lmap || !jmap || !(e = xml_edits_new())) {
        sid_error_set(err, SID_ERR_NOMEM, "%s: out of memory", path);
        goto out;
    }
    if (match_structure(&r, &u, fitted, lmap, jmap) || urdf_write_json(&r, &u, &json)) goto out;
    /* the file's own import, through the same reader as every robot.json (its warnings were
     * the import's: not repeated here) */
    const int quiet = sid_io_warn_mute(1);
    int prc = robot_json_parse(path, json, strlen(json), &orig, NULL, err);
    sid_io_warn_mute(quiet);
    if (prc) goto out;
    for (int i = 0; i < fitted->nlink; i++)
        if (fitted->link[i].has_mass && export_link(e, text, len, &u.link[lmap[i]], &fitted->link[i])) goto edit_failed;
    for (int i = 0; i < fitted->njoint; i++)
        if (export_joint(e, text, len, &u.joint[jmap[i]], &fitted->joint[i])) goto edit_failed;
    if (xml_edits_apply(e, text, len, out, outlen)) goto edit_failed;
    report_unrepresentable(path, fitted, &orig, lmap, jmap);
    rc = 0;
    goto out;
edit_failed:
    sid_error_set(err, SID_ERR_INPUT, "%s: cannot edit the file's text (an element not found again, or out of memory)",
                  path);
out:
    xml_edits_free(e);
    robot_desc_free(&orig);
    free(json);
    free(lmap);
    free(jmap);
    urdf_doc_free(&u);
    return rc;
}
