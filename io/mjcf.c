/* mjcf.c — reading an MJCF document as MuJoCo's compiler does, with MuJoCo 3's defaults where
 * they changed since 2.2.2 (autolimits; docs/formats.md lists them) (mjcf_internal.h): the
 * compiler settings, assets (meshes), the body tree with its joints, inertials and geoms
 * (mesh geoms' inertia from mesh.h), actuators, keyframes, and what else the file holds that
 * sysid warns about. Attribute lookup through classes and includes
 * is mjcf_defaults.c's; frames and primitive inertias mjcf_inertia.c's.
 */
#include "mjcf.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "warn.h"
#include "mjcf_internal.h"

static const char *const JOINT[] = { "joint", NULL };
static const char *const GEOM[] = { "geom", NULL };
static const char *const MESH[] = { "mesh", NULL };
static const char *const ACTUATOR[] = { "general", "motor", "position", "velocity", "intvelocity", "damper",
                                        "cylinder", "muscle", "adhesion", NULL };

/* ---- names ------------------------------------------------------------------------------------ */

/* sysid names may not hold . [ ] * ? , quotes, spaces or backslashes: they become '_' (warned). */
static int set_name(mjcf_doc *d, xmlNode *n, char *out, const char *fallback, const char *attr)
{
    char raw[256];
    mjcf_attr_str(n, attr, raw, sizeof raw);
    if (!raw[0]) {
        snprintf(out, SID_MAX_NAME, "%s", fallback);
        return 0;
    }
    if (strlen(raw) >= SID_MAX_NAME) return mjcf_fail(d, n, "%s longer than %d characters", attr, SID_MAX_NAME - 1);
    int changed = 0;
    for (int i = 0; raw[i]; i++) {
        unsigned char ch = (unsigned char)raw[i];
        if (strchr(".[]*?,\"'\\", ch) || isspace(ch) || ch < 32) out[i] = '_', changed = 1;
        else out[i] = raw[i];
    }
    out[strlen(raw)] = 0;
    if (changed) mjcf_warn(d, n, "%s '%s' imported as '%s' (sysid names cannot hold . [ ] * ? , quotes or spaces)", attr, raw, out);
    return 0;
}

/* ---- compiler, option ------------------------------------------------------------------------ */

static int read_compiler(mjcf_doc *d, xmlNode *n)
{
    char v[64];
    if (mjcf_has_attr(n, "angle")) {
        mjcf_attr_str(n, "angle", v, sizeof v);
        if (strcmp(v, "degree") && strcmp(v, "radian")) return mjcf_fail(d, n, "angle: expected degree or radian, got '%s'", v);
        d->degree = strcmp(v, "degree") == 0;
    }
    if (mjcf_has_attr(n, "eulerseq")) {
        mjcf_attr_str(n, "eulerseq", v, sizeof v);
        int ok = strlen(v) == 3;
        for (int i = 0; ok && i < 3; i++) ok = strchr("xyzXYZ", v[i]) != NULL;
        if (!ok) return mjcf_fail(d, n, "eulerseq: expected three of xyzXYZ, got '%s'", v);
        memcpy(d->eulerseq, v, 4);
    }
    if (mjcf_has_attr(n, "inertiafromgeom")) {
        mjcf_attr_str(n, "inertiafromgeom", v, sizeof v);
        if (strcmp(v, "false") == 0) d->inertiafromgeom = 0;
        else if (strcmp(v, "true") == 0) d->inertiafromgeom = 1;
        else if (strcmp(v, "auto") == 0) d->inertiafromgeom = 2;
        else return mjcf_fail(d, n, "inertiafromgeom: expected false, true or auto, got '%s'", v);
    }
    /* where mesh files are: meshdir, else assetdir (MuJoCo 3), relative to the main file */
    if (mjcf_has_attr(n, "assetdir") && !d->meshdir[0]) mjcf_attr_str(n, "assetdir", d->meshdir, sizeof d->meshdir);
    if (mjcf_has_attr(n, "meshdir")) mjcf_attr_str(n, "meshdir", d->meshdir, sizeof d->meshdir);
    if (mjcf_has_attr(n, "exactmeshinertia")) {
        mjcf_attr_str(n, "exactmeshinertia", v, sizeof v);
        d->exactmesh = strcmp(v, "true") == 0;
    }
    if (mjcf_has_attr(n, "autolimits")) {
        mjcf_attr_str(n, "autolimits", v, sizeof v);
        if (strcmp(v, "true") && strcmp(v, "false")) return mjcf_fail(d, n, "autolimits: expected true or false, got '%s'", v);
        d->autolimits = strcmp(v, "true") == 0;
    }
    if (mjcf_has_attr(n, "coordinate")) {
        mjcf_attr_str(n, "coordinate", v, sizeof v);
        if (strcmp(v, "local")) return mjcf_fail(d, n, "coordinate=\"%s\": only local coordinates are read", v);
    }
    if (mjcf_nums(d, n, "inertiagrouprange", 2, 2, d->inertiagroup) < 0) return -1;
    if (mjcf_has_attr(n, "balanceinertia")) {
        mjcf_attr_str(n, "balanceinertia", v, sizeof v);
        d->balanceinertia = strcmp(v, "true") == 0;
    }
    return 0;
}

static int read_option(mjcf_doc *d, xmlNode *n)
{
    if (mjcf_nums(d, n, "gravity", 3, 3, d->gravity) < 0) return -1;
    if (mjcf_nums(d, n, "timestep", 1, 1, &d->timestep) < 0) return -1;
    if (!(d->timestep > 0)) return mjcf_fail(d, n, "timestep=\"%g\": expected a positive number of seconds", d->timestep);
    if (mjcf_has_attr(n, "integrator")) {
        /* MuJoCo's names; implicit (implicit in the Coriolis terms too) has no twin here */
        static const char *const mj[] = { "Euler", "RK4", "implicitfast", "implicit" };
        static const sid_integrator ours[] = { SID_EULER, SID_RK4, SID_IMPLICITFAST, SID_IMPLICITFAST };
        char v[32];
        mjcf_attr_str(n, "integrator", v, sizeof v);
        int k = 0;
        while (k < 4 && strcmp(v, mj[k])) k++;
        if (k == 4) return mjcf_fail(d, n, "integrator=\"%s\": expected Euler, RK4, implicit or implicitfast", v);
        d->integrator = (int)ours[k];
        if (k == 3)
            mjcf_warn(d, n, "integrator=\"implicit\" imported as implicitfast: the Coriolis and centrifugal terms "
                            "are integrated explicitly (sysid has no implicit integrator); the damping and the "
                            "servos' kd implicitly, as MuJoCo does");
    }
    mjcf_nodes l;
    if (mjcf_kids(d, n, &l)) return -1;
    for (int i = 0; i < l.count; i++) {
        char v[32];
        if (!mjcf_is(l.n[i], "flag")) continue;
        xmlNode *f = l.n[i];
        mjcf_attr_str(f, "gravity", v, sizeof v);
        if (strcmp(v, "disable") == 0) {
            d->gravity[0] = d->gravity[1] = d->gravity[2] = 0;
            mjcf_warn(d, f, "gravity disabled: imported as gravity 0");
        }
        /* what MuJoCo leaves out, sysid does not import (constraint: limits, frictionloss, contact) */
        static const char *const what[] = { "limit", "frictionloss", "contact", "passive", "constraint" };
        int off[5];
        for (int k = 0; k < 5; k++) {
            mjcf_attr_str(f, what[k], v, sizeof v);
            off[k] = strcmp(v, "disable") == 0;
        }
        d->no_limit |= off[0] || off[4], d->no_frictionloss |= off[1] || off[4], d->no_contact |= off[2] || off[4];
        d->no_passive |= off[3];
        if (off[0] || off[1] || off[2] || off[3] || off[4]) d->flag = f;
        mjcf_attr_str(f, "eulerdamp", v, sizeof v);
        if (strcmp(v, "disable") == 0)
            mjcf_warn(d, f, "eulerdamp disabled: not modelled (sysid's euler integrates joint damping implicitly, as "
                            "MuJoCo's default does)");
        mjcf_attr_str(f, "actuation", v, sizeof v);
        if (strcmp(v, "disable") == 0)
            mjcf_warn(d, f, "actuation disabled: the actuators are imported all the same (a log's commands drive them)");
    }
    free(l.n);
    return 0;
}

/* ---- bodies ----------------------------------------------------------------------------------- */

typedef struct {
    int nmodel;          /* unmodelled collision geoms (warned once) */
    xmlNode *first_unmodelled;
} geom_notes;

static int grow(mjcf_doc *d, void **p, int n, size_t size)
{
    void *q = realloc(*p, size * (size_t)(n + 1));
    if (!q) return sid_error_set(d->err, SID_ERR_NOMEM, "out of memory"), -1;
    *p = q;
    memset((char *)q + size * (size_t)n, 0, size);
    return 0;
}

static int read_joint(mjcf_doc *d, xmlNode *n, int b, int k)
{
    mjcf_body *B = &d->body[b];
    if (grow(d, (void **)&d->jnt, d->njnt, sizeof *d->jnt)) return -1;
    mjcf_joint *j = &d->jnt[d->njnt];
    j->node = n, j->body = b, j->axis[2] = 1;
    char fallback[SID_MAX_NAME + 16], type[32];
    snprintf(fallback, sizeof fallback, "%.40s_joint%d", B->name, k);
    if (set_name(d, n, j->name, fallback, "name")) return -1;
    if (mjcf_is(n, "freejoint")) {   /* MuJoCo gives a <freejoint> no defaults */
        j->type = MJ_FREE, j->cls = -1;
    } else {
        if (mjcf_elem_class(d, n, B->childclass, &j->cls)) return -1;
        mjcf_get_str(d, n, j->cls, JOINT, "type", type, sizeof type, "hinge");
        if (strcmp(type, "hinge") == 0) j->type = MJ_HINGE;
        else if (strcmp(type, "slide") == 0) j->type = MJ_SLIDE;
        else if (strcmp(type, "free") == 0) j->type = MJ_FREE;
        else if (strcmp(type, "ball") == 0)
            return mjcf_fail(d, n, "ball joints are not supported (sysid has hinge, slide and free joints)");
        else return mjcf_fail(d, n, "type: expected hinge, slide, free or ball, got '%s'", type);
    }
    if (j->type == MJ_FREE && B->parent != 0)
        return mjcf_fail(d, n, "a free joint must connect a child of the world (its body '%s' is not one)", B->name);
    if (j->type == MJ_FREE) {
        double x;
        static const char *const unused[] = { "damping", "armature", "frictionloss", "stiffness" };
        for (int i = 0; i < 4 && j->cls >= 0; i++)
            if (mjcf_get(d, n, j->cls, JOINT, unused[i], 1, 1, &x, NULL) > 0 && x != 0)
                mjcf_warn(d, n, "%s of a free joint: not modelled (ignored)", unused[i]);
        d->njnt++;
        return 0;
    }
    if (mjcf_get(d, n, j->cls, JOINT, "pos", 3, 3, j->pos, NULL) < 0) return -1;
    if (mjcf_get(d, n, j->cls, JOINT, "axis", 3, 3, j->axis, NULL) < 0) return -1;
    if (sqrt(j->axis[0] * j->axis[0] + j->axis[1] * j->axis[1] + j->axis[2] * j->axis[2]) < 1e-15)
        return mjcf_fail(d, n, "axis: expected a non-zero vector");
    if (mjcf_get(d, n, j->cls, JOINT, "damping", 1, 1, &j->damping, &j->src_damping) < 0 ||
        mjcf_get(d, n, j->cls, JOINT, "armature", 1, 1, &j->armature, &j->src_armature) < 0 ||
        mjcf_get(d, n, j->cls, JOINT, "frictionloss", 1, 1, &j->frictionloss, &j->src_frictionloss) < 0 ||
        mjcf_get(d, n, j->cls, JOINT, "range", 2, 2, j->range, &j->src_range) < 0)
        return -1;
    if (j->damping < 0 || j->armature < 0 || j->frictionloss < 0)
        return mjcf_fail(d, n, "damping, armature and frictionloss must be non-negative");
    /* <flag ... disable>: MuJoCo leaves them out (counted for one warning) */
    if (d->no_frictionloss && j->frictionloss != 0) j->frictionloss = 0, d->dropped[1]++;
    if (d->no_passive && j->damping != 0) j->damping = 0, d->dropped[2]++;
    char lim[16];
    mjcf_get_str(d, n, j->cls, JOINT, "limited", lim, sizeof lim, "auto");
    if (strcmp(lim, "true") == 0) j->limited = 1;
    else if (strcmp(lim, "false") == 0) j->limited = 0;
    else if (strcmp(lim, "auto") == 0) j->limited = d->autolimits && j->src_range;
    else return mjcf_fail(d, n, "limited: expected true, false or auto, got '%s'", lim);
    if (j->type == MJ_HINGE && d->degree) {
        j->range[0] *= 3.14159265358979323846 / 180;
        j->range[1] *= 3.14159265358979323846 / 180;
    }
    if (j->limited && !(j->range[0] < j->range[1]))
        return mjcf_fail(d, n, "range: a limited joint needs lower < upper");
    if (d->no_limit && j->limited) j->limited = 0, d->dropped[0]++;
    if (!j->limited && j->src_range && !d->autolimits && strcmp(lim, "auto") == 0)
        mjcf_warn(d, n, "range without limited=\"true\" (and compiler autolimits=\"false\"): no limit imported");
    double x;
    if (mjcf_get(d, n, j->cls, JOINT, "stiffness", 1, 1, &x, NULL) > 0 && x != 0)
        mjcf_warn(d, n, "joint stiffness %g: springs are not modelled (ignored)", x);
    if (mjcf_get(d, n, j->cls, JOINT, "ref", 1, 1, &x, NULL) > 0 && x != 0) {
        mjcf_warn(d, n, "ref %g: not imported (sysid's q = 0 is this pose, MuJoCo's qpos = ref: its positions are q + ref)", x);
        j->ref = j->type == MJ_HINGE && d->degree ? x * 3.14159265358979323846 / 180 : x;
    }
    static const char *const sol[] = { "solreflimit", "solimplimit", "solreffriction", "solimpfriction", "margin" };
    for (int i = 0; i < 5; i++)
        if (mjcf_source(d, n, j->cls, JOINT, sol[i]))
            mjcf_warn(d, n, "%s: MuJoCo's constraint softness is not imported", sol[i]);
    d->njnt++;
    return 0;
}

/* <asset>: its <mesh>es (name, else the file's base name without extension; file; scale). The
 * files are read only where a body's inertia needs them (mesh_properties). */
static int read_assets(mjcf_doc *d, xmlNode *n)
{
    mjcf_nodes l;
    if (mjcf_kids(d, n, &l)) return -1;
    int rc = 0;
    for (int i = 0; i < l.count && !rc; i++) {
        xmlNode *e = l.n[i];
        if (!mjcf_is(e, "mesh")) continue;
        char file[512], inertia[16];
        int c;
        mjcf_attr_str(e, "file", file, sizeof file);
        if (!file[0]) continue;   /* a mesh given by its vertices in the file: not read */
        if ((rc = grow(d, (void **)&d->mesh, d->nmesh, sizeof *d->mesh))) break;
        mjcf_mesh *M = &d->mesh[d->nmesh++];
        M->node = e, M->scale[0] = M->scale[1] = M->scale[2] = 1;
        if ((rc = mjcf_elem_class(d, e, 0, &c)) || (rc = mjcf_get(d, e, c, MESH, "scale", 3, 3, M->scale, NULL) < 0 ? -1 : 0))
            break;
        mjcf_get_str(d, e, c, MESH, "inertia", inertia, sizeof inertia, "");
        M->shell = strcmp(inertia, "shell") == 0;
        M->legacy = !M->shell && strcmp(inertia, "exact") && strcmp(inertia, "convex") && !d->exactmesh;
        if (mjcf_has_attr(e, "name")) mjcf_attr_str(e, "name", M->name, sizeof M->name);
        else {   /* MuJoCo's rule: the file name without its directory and extension */
            const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file, *dot = strrchr(base, '.');
            snprintf(M->name, sizeof M->name, "%.*s", (int)(dot ? dot - base : (long)strlen(base)), base);
        }
        /* the file: absolute, or under meshdir (absolute, or relative to the main file's folder) */
        const char *slash = strrchr(d->path, '/');
        const int dirlen = slash ? (int)(slash - d->path) + 1 : 0;
        const size_t need = strlen(d->path) + strlen(d->meshdir) + strlen(file) + 3;
        if (!(M->path = malloc(need))) return free(l.n), sid_error_set(d->err, SID_ERR_NOMEM, "out of memory"), -1;
        if (file[0] == '/') snprintf(M->path, need, "%s", file);
        else if (d->meshdir[0] == '/') snprintf(M->path, need, "%s/%s", d->meshdir, file);
        else snprintf(M->path, need, "%.*s%s%s%s", dirlen, d->path, d->meshdir, d->meshdir[0] ? "/" : "", file);
    }
    free(l.n);
    return rc;
}

/* Mesh asset name's mass properties (a solid, or with shell its surface), read and computed
 * once; NULL with d->err naming the geom at n when the mesh is unknown, missing or open. */
static const mesh_mass *mesh_properties(mjcf_doc *d, xmlNode *n, const char *name, int shell)
{
    mjcf_mesh *M = NULL;
    for (int i = 0; i < d->nmesh; i++)
        if (strcmp(d->mesh[i].name, name) == 0) M = &d->mesh[i];
    if (!M) return mjcf_fail(d, n, "mesh '%s': no <mesh> asset of that name with a file", name), NULL;
    shell |= M->shell;
    if (shell ? M->have_shell : M->have_solid) return shell ? &M->surface : &M->solid;
    mesh ms;
    sid_error e = { 0 };
    int rc = mesh_load(M->path, M->scale, &ms, &e);   /* on failure, ms holds nothing */
    if (!rc) {
        rc = shell ? mesh_shell(&ms, &M->surface, &e) : mesh_solid(&ms, &M->solid, &e);
        mesh_free(&ms);
    }
    if (!rc) {
        if (M->legacy && !shell && !d->legacy_warned++)
            mjcf_warn(d, n, "mesh '%s' (and any other mesh of this file that gives a body its inertia): its volume "
                      "and inertia are computed exactly, as MuJoCo's inertia=\"exact\" (and \"convex\" for a convex "
                      "mesh) do; MuJoCo's default rule, \"legacy\", can count more volume (2.2.2's gave a "
                      "tetrahedron 39 %% more): give the body an <inertial>, or the mesh inertia=\"exact\"", name);
        if (shell) M->have_shell = 1;
        else M->have_solid = 1;
        return shell ? &M->surface : &M->solid;
    }
    return mjcf_fail(d, n, "the inertia of mesh '%s' (its body has no <inertial>): %s", name, e.msg), NULL;
}

/* A geom's share of its body's inertia: mass, centre of mass and rotational inertia about it in
 * body axes (ixx iyy izz ixy ixz iyz). */
typedef struct {
    double mass, pos[3], I[6];
} geom_mass;

static int read_geom(mjcf_doc *d, xmlNode *n, int b, int ngeom, geom_mass **gm, int *ngm, geom_notes *notes)
{
    mjcf_body *B = &d->body[b];
    int c;
    if (mjcf_elem_class(d, n, B->childclass, &c)) return -1;
    char type[32];
    mjcf_get_str(d, n, c, GEOM, "type", type, sizeof type, "sphere");
    double size[3] = { 0, 0, 0 }, pos[3] = { 0, 0, 0 }, q[4], ft[6];
    int nft;
    if (mjcf_get(d, n, c, GEOM, "size", 1, 3, size, NULL) < 0 || mjcf_get(d, n, c, GEOM, "pos", 3, 3, pos, NULL) < 0 ||
        mjcf_orientation(d, n, c, GEOM, q) || (nft = mjcf_get(d, n, c, GEOM, "fromto", 6, 6, ft, NULL)) < 0)
        return -1;
    if (nft > 0) {
        if (strcmp(type, "capsule") && strcmp(type, "cylinder") && strcmp(type, "box") && strcmp(type, "ellipsoid"))
            return mjcf_fail(d, n, "fromto: only capsule, cylinder, box and ellipsoid geoms take one");
        double v[3] = { ft[3] - ft[0], ft[4] - ft[1], ft[5] - ft[2] };
        for (int i = 0; i < 3; i++) pos[i] = (ft[i] + ft[i + 3]) / 2;
        mjcf_quat_z2vec(q, v);
        double l = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        if (l < 1e-15) return mjcf_fail(d, n, "fromto: the two points coincide");
        size[strcmp(type, "box") && strcmp(type, "ellipsoid") ? 1 : 2] = l / 2;
    }
    double contype = 1, conaff = 1, group = 0, fr[3] = { 1, 0.005, 0.0001 };
    if (mjcf_get(d, n, c, GEOM, "contype", 1, 1, &contype, NULL) < 0 ||
        mjcf_get(d, n, c, GEOM, "conaffinity", 1, 1, &conaff, NULL) < 0 ||
        mjcf_get(d, n, c, GEOM, "group", 1, 1, &group, NULL) < 0 || mjcf_get(d, n, c, GEOM, "friction", 1, 3, fr, NULL) < 0)
        return -1;
    int collides = contype != 0 || conaff != 0;

    if (b == 0) {   /* the world's geoms: a plane is the ground, the rest is scenery */
        if (strcmp(type, "plane") == 0 && collides) {
            double R[9];
            mjcf_quat_mat(R, q);
            if (fabs(R[2]) > 1e-12 || fabs(R[5]) > 1e-12 || R[8] <= 0)
                return mjcf_fail(d, n, "a ground plane must face +z (sysid's ground is z = height)");
            if (d->has_ground) {
                mjcf_warn(d, n, "a second ground plane: ignored (sysid has one ground)");
                return 0;
            }
            d->has_ground = 1, d->ground = n, d->ground_height = pos[2], d->ground_friction = fr[0];
        } else if (collides) {
            notes->nmodel++;
            if (!notes->first_unmodelled) notes->first_unmodelled = n;
        }
        return 0;
    }
    if (strcmp(type, "sphere") == 0 && collides) {
        if (grow(d, (void **)&d->sphere, d->nsphere, sizeof *d->sphere)) return -1;
        mjcf_sphere *s = &d->sphere[d->nsphere];
        char fallback[SID_MAX_NAME + 16];
        snprintf(fallback, sizeof fallback, "%.40s_geom%d", B->name, ngeom);
        if (set_name(d, n, s->name, fallback, "name")) return -1;
        s->body = b, s->node = n, s->radius = size[0];
        memcpy(s->xyz, pos, sizeof pos);
        d->nsphere++;
    } else if (collides) {
        notes->nmodel++;
        if (!notes->first_unmodelled) notes->first_unmodelled = n;
    }

    if (group < d->inertiagroup[0] || group > d->inertiagroup[1]) return 0;
    double vol, Iu[3], mass = -1, density = 1000;
    if (mjcf_get(d, n, c, GEOM, "mass", 1, 1, &mass, NULL) < 0 || mjcf_get(d, n, c, GEOM, "density", 1, 1, &density, NULL) < 0)
        return -1;
    if (mjcf_geom_inertia(type, size, &vol, Iu)) {
        char mesh_name[SID_MAX_NAME], shell[8];
        mjcf_get_str(d, n, c, GEOM, "mesh", mesh_name, sizeof mesh_name, "");
        if (B->is_static) {   /* welded to the world: needs no inertia, imported massless */
            if (B->inertia_from == MJ_INERTIA_GEOMS) B->inertia_from = MJ_INERTIA_NONE;
            return 0;
        }
        if (B->inertia_from != MJ_INERTIA_GEOMS) return 0;
        if (strcmp(type, "mesh") || !mesh_name[0])
            return mjcf_fail(d, n, "body '%s' takes its inertia from its geoms, and a %s geom has none", B->name, type);
        /* a mesh geom: its solid (or, with shellinertia, its surface) at uniform density, in the
         * geom's frame: exact integrals over the triangles (mesh.h) */
        mjcf_get_str(d, n, c, GEOM, "shellinertia", shell, sizeof shell, "false");
        const mesh_mass *mm = mesh_properties(d, n, mesh_name, strcmp(shell, "true") == 0);
        if (!mm) return -1;
        const double size1 = mm->volume > 0 ? mm->volume : mm->area;   /* per unit density */
        if (grow(d, (void **)gm, *ngm, sizeof **gm)) return -1;
        geom_mass *g = &(*gm)[(*ngm)++];
        g->mass = mass >= 0 ? mass : density * size1;
        double R[9], Iw[6];
        mjcf_quat_mat(R, q);
        const double k = g->mass / size1;
        const double I[9] = { mm->inertia[0], mm->inertia[3], mm->inertia[4], mm->inertia[3], mm->inertia[1],
                              mm->inertia[5], mm->inertia[4], mm->inertia[5], mm->inertia[2] };
        for (int i = 0; i < 3; i++) {   /* R (k I) R^T, and the centre of mass at pos + R com */
            g->pos[i] = pos[i] + R[3 * i] * mm->com[0] + R[3 * i + 1] * mm->com[1] + R[3 * i + 2] * mm->com[2];
            for (int j = i; j < 3; j++) {
                double x = 0;
                for (int a = 0; a < 3; a++)
                    for (int b2 = 0; b2 < 3; b2++) x += R[3 * i + a] * I[3 * a + b2] * R[3 * j + b2];
                Iw[i == j ? i : i + j + 2] = k * x;   /* (0,1) -> 3, (0,2) -> 4, (1,2) -> 5 */
            }
        }
        memcpy(g->I, Iw, sizeof Iw);
        return 0;
    }
    int need = strcmp(type, "sphere") == 0 ? 1 : strcmp(type, "capsule") == 0 || strcmp(type, "cylinder") == 0 ? 2 : 3;
    for (int k = 0; k < need && B->inertia_from == MJ_INERTIA_GEOMS && !B->is_static; k++)
        if (!(size[k] > 0))
            return mjcf_fail(d, n, "size: a %s geom that gives its body's inertia needs %d positive number%s", type, need,
                             need == 1 ? "" : "s");
    if (grow(d, (void **)gm, *ngm, sizeof **gm)) return -1;
    geom_mass *g = &(*gm)[(*ngm)++];
    g->mass = mass >= 0 ? mass : density * vol;
    memcpy(g->pos, pos, sizeof pos);
    double R[9], diag[3] = { g->mass * Iu[0], g->mass * Iu[1], g->mass * Iu[2] };
    mjcf_quat_mat(R, q);
    mjcf_inertia_rotate(g->I, R, diag);
    return 0;
}

/* Mass, COM and inertia about it (body axes) of the geoms: I = sum I_i + m_i (|r_i|^2 E - r_i
 * r_i^T), r_i = p_i - com, I_i = R_i diag(m_i Iu_i) R_i^T for a primitive, as MuJoCo's compiler
 * combines them. */
static void combine(mjcf_body *B, const geom_mass *g, int n)
{
    double m = 0, c[3] = { 0, 0, 0 };
    for (int i = 0; i < n; i++) {
        m += g[i].mass;
        for (int k = 0; k < 3; k++) c[k] += g[i].mass * g[i].pos[k];
    }
    B->mass = m;
    memset(B->I, 0, sizeof B->I);
    if (m <= 0) {
        B->inertia_from = MJ_INERTIA_NONE;
        return;
    }
    for (int k = 0; k < 3; k++) B->com[k] = c[k] / m;
    for (int i = 0; i < n; i++) {
        const double *Ir = g[i].I;
        double r[3] = { g[i].pos[0] - B->com[0], g[i].pos[1] - B->com[1], g[i].pos[2] - B->com[2] };
        double r2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
        B->I[0] += Ir[0] + g[i].mass * (r2 - r[0] * r[0]);
        B->I[1] += Ir[1] + g[i].mass * (r2 - r[1] * r[1]);
        B->I[2] += Ir[2] + g[i].mass * (r2 - r[2] * r[2]);
        B->I[3] += Ir[3] - g[i].mass * r[0] * r[1];
        B->I[4] += Ir[4] - g[i].mass * r[0] * r[2];
        B->I[5] += Ir[5] - g[i].mass * r[1] * r[2];
    }
}

static int read_inertial(mjcf_doc *d, xmlNode *n, mjcf_body *B)
{
    double q[4], diag[3], full[6];
    int nd, nf;
    if (mjcf_nums(d, n, "pos", 3, 3, B->com) < 0 || mjcf_nums(d, n, "mass", 1, 1, &B->mass) < 0 ||
        (nd = mjcf_nums(d, n, "diaginertia", 3, 3, diag)) < 0 || (nf = mjcf_nums(d, n, "fullinertia", 6, 6, full)) < 0 ||
        mjcf_orientation(d, n, -1, NULL, q))
        return -1;
    if (!mjcf_has_attr(n, "pos") || !mjcf_has_attr(n, "mass")) return mjcf_fail(d, n, "expected pos and mass");
    if (!(B->mass >= 0)) return mjcf_fail(d, n, "mass: expected a non-negative number");
    if (nd + nf == 0 && B->mass > 0) return mjcf_fail(d, n, "expected diaginertia or fullinertia");
    if (nd && nf) return mjcf_fail(d, n, "diaginertia and fullinertia: give one");
    if (nf) {
        for (int i = 0; i < 5; i++)
            if (mjcf_has_attr(n, MJCF_ORIENT[i])) return mjcf_fail(d, n, "fullinertia and %s: give one (fullinertia is in the body frame)", MJCF_ORIENT[i]);
        memcpy(B->I, full, sizeof full);
    } else if (nd) {
        double R[9];
        int broken = 0;
        for (int k = 0; k < 3; k++) broken |= diag[k] + diag[(k + 1) % 3] < diag[(k + 2) % 3];
        if (broken && d->balanceinertia) {   /* MuJoCo's repair: all three moments to their mean */
            double mean = (diag[0] + diag[1] + diag[2]) / 3;
            mjcf_warn(d, n, "diaginertia %g %g %g breaks the triangle inequality: balanced to %g each "
                      "(compiler balanceinertia)", diag[0], diag[1], diag[2], mean);
            diag[0] = diag[1] = diag[2] = mean;
        } else if (broken) {
            mjcf_warn(d, n, "diaginertia %g %g %g breaks the triangle inequality (a + b >= c): MuJoCo repairs it only "
                      "with compiler balanceinertia=\"true\"", diag[0], diag[1], diag[2]);
        }
        mjcf_quat_mat(R, q);
        mjcf_inertia_rotate(B->I, R, diag);
    }
    B->inertia_from = B->mass > 0 ? MJ_INERTIA_ELEMENT : MJ_INERTIA_NONE;
    B->inertial = n;
    return 0;
}

static int read_body(mjcf_doc *d, xmlNode *n, int parent, int childclass, geom_notes *notes);

/* The elements of body b (the world for b = 0), then its child bodies. */
static int read_contents(mjcf_doc *d, xmlNode *n, int b, geom_notes *notes)
{
    mjcf_nodes l;
    if (mjcf_kids(d, n, &l)) return -1;
    geom_mass *gm = NULL;
    int ngm = 0, ngeom = 0, rc = 0;
    xmlNode *inertial = NULL;
    d->body[b].jnt0 = d->njnt;
    for (int i = 0; i < l.count && !rc; i++) {
        xmlNode *c = l.n[i];
        if (b > 0 && mjcf_is(c, "inertial")) {
            if (inertial) rc = mjcf_fail(d, c, "a second <inertial> in body '%s'", d->body[b].name);
            inertial = c;
        } else if (b > 0 && (mjcf_is(c, "joint") || mjcf_is(c, "freejoint"))) {
            rc = read_joint(d, c, b, d->body[b].njnt);
            if (!rc) d->body[b].njnt++;
        }
    }
    mjcf_body *B = &d->body[b];
    if (!rc && b > 0) {
        B->is_static = d->body[B->parent].is_static && B->njnt == 0;
        for (int k = 0; k < B->njnt; k++)
            if (d->jnt[B->jnt0 + k].type == MJ_FREE && B->njnt > 1)
                rc = mjcf_fail(d, d->jnt[B->jnt0 + k].node, "a free joint must be the only joint of its body");
        if (!rc && inertial && d->inertiafromgeom != 1) rc = read_inertial(d, inertial, B);
        else if (!rc && d->inertiafromgeom != 0) B->inertia_from = MJ_INERTIA_GEOMS;
        if (!rc && B->njnt > 0) memcpy(B->off, d->jnt[B->jnt0 + B->njnt - 1].pos, sizeof B->off);
    }
    for (int i = 0; i < l.count && !rc; i++)
        if (mjcf_is(l.n[i], "geom")) rc = read_geom(d, l.n[i], b, ngeom++, &gm, &ngm, notes);
    B = &d->body[b];
    if (!rc && b > 0 && B->inertia_from == MJ_INERTIA_GEOMS) combine(B, gm, ngm);
    free(gm);
    for (int i = 0; i < l.count && !rc; i++) {
        xmlNode *c = l.n[i];
        const char *t = (const char *)c->name;
        if (mjcf_is(c, "body")) rc = read_body(d, c, b, d->body[b].childclass, notes);
        else if (mjcf_is(c, "composite") || mjcf_is(c, "flexcomp") || mjcf_is(c, "replicate") || mjcf_is(c, "frame"))
            rc = mjcf_fail(d, c, "<%s> is not read by sysid (MuJoCo 2.2.2 bodies and joints only)", t);
        else if (!mjcf_is(c, "geom") && !mjcf_is(c, "inertial") && !mjcf_is(c, "joint") && !mjcf_is(c, "freejoint") && !mjcf_is(c, "site") &&
                 !mjcf_is(c, "camera") && !mjcf_is(c, "light"))
            mjcf_warn(d, c, "unknown element: ignored");
    }
    free(l.n);
    return rc;
}

static int read_body(mjcf_doc *d, xmlNode *n, int parent, int childclass, geom_notes *notes)
{
    if (grow(d, (void **)&d->body, d->nbody, sizeof *d->body)) return -1;
    int b = d->nbody++;
    mjcf_body *B = &d->body[b];
    B->node = n, B->parent = parent, B->childclass = childclass;
    char fallback[SID_MAX_NAME];
    snprintf(fallback, sizeof fallback, "body%d", b);
    if (set_name(d, n, B->name, fallback, "name")) return -1;
    if (mjcf_has_attr(n, "childclass")) {
        char cname[SID_MAX_NAME];
        mjcf_attr_str(n, "childclass", cname, sizeof cname);
        if ((B->childclass = mjcf_find_class(d, cname)) < 0) return mjcf_fail(d, n, "unknown childclass '%s'", cname);
    }
    if (mjcf_nums(d, n, "pos", 3, 3, B->pos) < 0 || mjcf_orientation(d, n, -1, NULL, B->quat)) return -1;
    char v[16];
    mjcf_attr_str(n, "mocap", v, sizeof v);
    if (strcmp(v, "true") == 0) mjcf_warn(d, n, "a mocap body: imported as welded to its parent");
    return read_contents(d, n, b, notes);
}

/* ---- actuators and the rest ---------------------------------------------------------------------- */

static int joint_by_raw_name(const mjcf_doc *d, const char *name)
{
    for (int i = 0; i < d->njnt; i++) {
        char raw[256];
        mjcf_attr_str(d->jnt[i].node, "name", raw, sizeof raw);
        if (strcmp(raw, name) == 0) return i;
    }
    return -1;
}

/* Actuator a (class c) as a servo (servo.h): a <position> (kp; MuJoCo 3's kv as kd), a <velocity>
 * (kv), or a <general> with fixed gain g, affine bias and no dynamics whose biasprm is a PD's,
 * (0, -g, -kd): a position servo, or (0, 0, -g): a velocity one. 1: a servo, with *kind, *kp, *kd;
 * 0: not one; -1: an error (d->err). */
static int servo_of(mjcf_doc *d, xmlNode *a, int c, int *kind, double *kp, double *kd)
{
    if (mjcf_is(a, "position") || mjcf_is(a, "velocity")) {
        /* kp and kv from the element or a class's element of its own kind only: a class's
         * <velocity kv> is not a <position>'s */
        static const char *const POS[] = { "position", NULL }, *const VEL[] = { "velocity", NULL };
        const int pos = mjcf_is(a, "position");
        double k = 1, kv = pos ? 0 : 1;
        if ((pos && mjcf_get(d, a, c, POS, "kp", 1, 1, &k, NULL) < 0) ||
            mjcf_get(d, a, c, pos ? POS : VEL, "kv", 1, 1, &kv, NULL) < 0)
            return -1;
        *kind = pos ? SID_MOTOR_POSITION : SID_MOTOR_VELOCITY, *kp = pos ? k : 0, *kd = kv;
        return 1;
    }
    if (!mjcf_is(a, "general")) return 0;
    char gt[32], bt[32], dt[32];
    mjcf_get_str(d, a, c, ACTUATOR, "gaintype", gt, sizeof gt, "fixed");
    mjcf_get_str(d, a, c, ACTUATOR, "biastype", bt, sizeof bt, "none");
    mjcf_get_str(d, a, c, ACTUATOR, "dyntype", dt, sizeof dt, "none");
    if (strcmp(gt, "fixed") || strcmp(bt, "affine") || strcmp(dt, "none")) return 0;
    double g[10] = { 1 }, b[10] = { 0 };
    if (mjcf_get(d, a, c, ACTUATOR, "gainprm", 1, 10, g, NULL) < 0 || mjcf_get(d, a, c, ACTUATOR, "biasprm", 1, 10, b, NULL) < 0)
        return -1;
    if (!(g[0] > 0) || b[0] != 0 || b[2] > 0) return 0;
    if (b[1] == -g[0]) *kind = SID_MOTOR_POSITION, *kp = g[0], *kd = -b[2];
    else if (b[1] == 0 && b[2] == -g[0]) *kind = SID_MOTOR_VELOCITY, *kp = 0, *kd = g[0];
    else return 0;
    return 1;
}

/* Is a's force (or ctrl, with what "ctrl") limited: its *limited attribute, "auto" meaning a range
 * given under compiler autolimits. */
static int range_limited(mjcf_doc *d, xmlNode *a, int c, const char *what)
{
    char attr[32], range[32], v[16];
    snprintf(attr, sizeof attr, "%slimited", what);
    snprintf(range, sizeof range, "%srange", what);
    mjcf_get_str(d, a, c, ACTUATOR, attr, v, sizeof v, "auto");
    if (strcmp(v, "true") == 0) return 1;
    return strcmp(v, "auto") == 0 && d->autolimits && mjcf_source(d, a, c, ACTUATOR, range);
}

/* Warnings that repeat for every actuator of a robot: one at the first, counting and listing. */
typedef struct {
    int count;
    xmlNode *first;
    char list[1200];
} tally;

static void tally_add(tally *t, xmlNode *a, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void tally_add(tally *t, xmlNode *a, const char *fmt, ...)
{
    if (!t->count++) t->first = a;
    size_t len = strlen(t->list);
    if (len + 4 >= sizeof t->list) return;
    if (len) snprintf(t->list + len, sizeof t->list - len, ", "), len += 2;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->list + len, sizeof t->list - len, fmt, ap);
    va_end(ap);
}

/* The servo's torque limit from a limited forcerange (symmetric about 0; otherwise the smaller
 * side, warned); the warning that tanh is not MuJoCo's clamp is tallied in clamped. */
static int servo_limit(mjcf_doc *d, xmlNode *a, int c, const char *aname, const char *jname, mjcf_joint *J,
                       tally *clamped)
{
    double r[2] = { 0, 0 };
    if (mjcf_get(d, a, c, ACTUATOR, "forcerange", 2, 2, r, NULL) < 0) return -1;
    if (!(r[0] < 0 && r[1] > 0)) {
        mjcf_warn(d, a, "servo on joint %s: a forcerange that does not hold 0 is not modelled (no torque limit)", jname);
        return 0;
    }
    J->has_limit = 1, J->limit = fmin(-r[0], r[1]);
    if (-r[0] != r[1])
        mjcf_warn(d, a, "servo on joint %s: asymmetric forcerange imported as the limit %g on both sides", jname, J->limit);
    tally_add(clamped, a, "%s on joint %s at %g", aname[0] ? aname : "(unnamed)", jname, J->limit);
    return 0;
}

static int read_actuators(mjcf_doc *d, xmlNode *n)
{
    mjcf_nodes l;
    if (mjcf_kids(d, n, &l)) return -1;
    int rc = 0;
    tally other[sizeof ACTUATOR / sizeof ACTUATOR[0]], clamped = { 0 }, ctrl = { 0 };
    memset(other, 0, sizeof other);
    const int act0 = d->nact;   /* this section's first actuator among the file's */
    d->nact += l.count;
    for (int i = 0; i < l.count && !rc; i++) {
        xmlNode *a = l.n[i];
        const char *t = (const char *)a->name;
        char jname[256], aname[256];
        mjcf_attr_str(a, "joint", jname, sizeof jname);
        mjcf_attr_str(a, "name", aname, sizeof aname);
        if (!jname[0]) {
            mjcf_warn(d, a, "a %s actuator without a joint transmission (tendon, site or body): not modelled", t);
            continue;
        }
        int j = joint_by_raw_name(d, jname);
        if (j < 0) {
            rc = mjcf_fail(d, a, "joint '%s': no such joint", jname);
            break;
        }
        int c, kind = 0, sv = 0;
        double kp = 0, kd = 0;
        if (!mjcf_is(a, "motor")) {
            int k = 0;
            while (ACTUATOR[k] && strcmp(ACTUATOR[k], t)) k++;
            if (!ACTUATOR[k]) continue;
            if (mjcf_elem_class(d, a, 0, &c) || (sv = servo_of(d, a, c, &kind, &kp, &kd)) < 0) {
                rc = -1;
                break;
            }
            if (!sv) {   /* one warning per kind, at its first, listing them */
                tally_add(&other[k], a, "%s on joint %s", aname[0] ? aname : "(unnamed)", jname);
                continue;
            }
        }
        if (d->jnt[j].type == MJ_FREE) {
            mjcf_warn(d, a, "a %s on free joint %s: not modelled", sv ? "servo" : "motor", jname);
            continue;
        }
        double gear[6] = { 1, 0, 0, 0, 0, 0 };
        xmlNode *src_gear;
        if (mjcf_elem_class(d, a, 0, &c) || mjcf_get(d, a, c, ACTUATOR, "gear", 1, 6, gear, &src_gear) < 0) {
            rc = -1;   /* l.n is freed below */
            break;
        }
        mjcf_joint *J = &d->jnt[j];
        const int flimited = sv && range_limited(d, a, c, "force");
        if (J->motor) {
            /* a <position> and a <velocity> on one joint: MuJoCo's way to a PD servo */
            if (sv && J->servo && J->servo != kind && !J->act_kd && gear[0] == J->gear && !J->has_limit && !flimited &&
                (kind == SID_MOTOR_VELOCITY ? J->kd == 0 : kd == 0)) {
                if (kind == SID_MOTOR_VELOCITY) J->kd = kd, J->act_kd = a;
                else J->servo = kind, J->kp = kp, J->act_kd = J->act, J->act = a, J->act_ctrl = act0 + i, J->src_gear = src_gear;
                mjcf_warn(d, a, "the position and velocity servos on joint %s are one PD servo: the velocity "
                          "actuator's kv is its kd and its ctrl is taken as 0 (u.%s is the position reference)",
                          jname, J->name);
            } else {
                mjcf_warn(d, a, "a second motor on joint %s: ignored (sysid has one motor per joint)", jname);
            }
            continue;
        }
        J->motor = 1, J->act = a, J->act_ctrl = act0 + i, J->gear = gear[0], J->src_gear = src_gear;
        if (sv) {
            J->servo = kind, J->kp = kp, J->kd = kd;
            if (mjcf_is(a, "position") && mjcf_source(d, a, c, ACTUATOR, "dampratio"))
                mjcf_warn(d, a, "servo on joint %s: dampratio (MuJoCo 3) is not imported: kd %g", jname, kd);
            if (flimited && servo_limit(d, a, c, aname, jname, J, &clamped)) {
                rc = -1;
                break;
            }
            if (range_limited(d, a, c, "ctrl")) tally_add(&ctrl, a, "%s on joint %s", aname[0] ? aname : "(unnamed)", jname);
            continue;
        }
        /* the clamps are not simulated, but they are the motor's torque limit: limit.effort, what
         * excite designs within (URDF's <limit effort> likewise) */
        double fr[2] = { 0, 0 }, cr[2] = { 0, 0 };
        if (range_limited(d, a, c, "force") && mjcf_get(d, a, c, ACTUATOR, "forcerange", 2, 2, fr, NULL) < 0) {
            rc = -1;
            break;
        }
        if (range_limited(d, a, c, "ctrl") && mjcf_get(d, a, c, ACTUATOR, "ctrlrange", 2, 2, cr, NULL) < 0) {
            rc = -1;
            break;
        }
        const double by_force = fmin(-fr[0], fr[1]), by_ctrl = fabs(gear[0]) * fmin(-cr[0], cr[1]);
        J->effort = by_force > 0 && by_ctrl > 0 ? fmin(by_force, by_ctrl) : by_force > 0 ? by_force : by_ctrl > 0 ? by_ctrl : 0;
        static const char *const clamps[] = { "ctrlrange", "forcerange", "ctrllimited", "forcelimited" };
        for (int k = 0; k < 4; k++)
            if (mjcf_source(d, a, c, ACTUATOR, clamps[k])) {
                if (J->effort > 0)
                    mjcf_warn(d, a, "motor on joint %s: ctrlrange/forcerange clamps are not simulated; imported as "
                              "limit.effort %g (the torque limit excite designs within)", jname, J->effort);
                else mjcf_warn(d, a, "motor on joint %s: ctrlrange/forcerange clamps are not modelled", jname);
                break;
            }
    }
    if (clamped.count && !rc)
        mjcf_warn(d, clamped.first, "%d servo%s with a limited forcerange (%s): MuJoCo clamps the force there, "
                  "sysid saturates it smoothly, L tanh(f / L), which is below the clamp near it (0.76 L at f = L)",
                  clamped.count, clamped.count == 1 ? "" : "s", clamped.list);
    if (ctrl.count && !rc)
        mjcf_warn(d, ctrl.first, "%d servo%s with a limited ctrlrange (%s): the clamp of the reference is not modelled",
                  ctrl.count, ctrl.count == 1 ? "" : "s", ctrl.list);
    for (int k = 0; ACTUATOR[k] && !rc; k++)
        if (other[k].count)
            mjcf_warn(d, other[k].first, "%d %s actuator%s not modelled, joint%s imported without a motor: %s",
                      other[k].count, ACTUATOR[k], other[k].count == 1 ? "" : "s", other[k].count == 1 ? "" : "s",
                      other[k].list);
    free(l.n);
    return rc;
}

/* MuJoCo's qpos and qvel sizes: a free joint's 7 and 6, a hinge's or slide's 1. */
static void mj_sizes(const mjcf_doc *d, int *nq, int *nv)
{
    *nq = *nv = 0;
    for (int j = 0; j < d->njnt; j++) *nq += d->jnt[j].type == MJ_FREE ? 7 : 1, *nv += d->jnt[j].type == MJ_FREE ? 6 : 1;
}

/* Attribute a of key n: exactly want numbers into a new *out (left NULL when absent). */
static int key_vector(mjcf_doc *d, xmlNode *n, const char *a, int want, const char *what, double **out)
{
    if (!mjcf_has_attr(n, a)) return 0;
    *out = calloc((size_t)want + 2, sizeof **out);
    if (!*out) return sid_error_set(d->err, SID_ERR_NOMEM, "out of memory"), -1;
    const int got = mjcf_nums(d, n, a, 0, want + 1, *out);
    if (got < 0) return -1;
    if (got != want) return mjcf_fail(d, n, "%s: expected %d numbers (%s), got %d", a, want, what, got);
    for (int i = 0; i < want; i++)
        if (!isfinite((*out)[i])) return mjcf_fail(d, n, "%s[%d]: expected a finite number", a, i);
    return 0;
}

/* <keyframe>: each <key>'s qpos, qvel and ctrl, in MuJoCo's order (joints as the bodies nest,
 * actuators as the file lists them); time, act and the mocap poses are not read. */
static int read_keyframes(mjcf_doc *d, xmlNode *n)
{
    mjcf_nodes l;
    if (mjcf_kids(d, n, &l)) return -1;
    int nq, nv, rc = 0;
    mj_sizes(d, &nq, &nv);
    for (int i = 0; i < l.count && !rc; i++) {
        xmlNode *k = l.n[i];
        if (!mjcf_is(k, "key")) continue;
        if ((rc = grow(d, (void **)&d->key, d->nkey, sizeof *d->key))) break;
        mjcf_key *K = &d->key[d->nkey++];
        K->node = k;
        if (mjcf_has_attr(k, "name")) rc = set_name(d, k, K->name, "key", "name");
        else snprintf(K->name, sizeof K->name, "key%d", d->nkey - 1);
        for (int o = 0; o < d->nkey - 1 && !rc; o++)
            if (strcmp(d->key[o].name, K->name) == 0) rc = mjcf_fail(d, k, "a second key named '%s'", K->name);
        if (!rc) rc = key_vector(d, k, "qpos", nq, "the model's qpos size", &K->qpos);
        if (!rc) rc = key_vector(d, k, "qvel", nv, "the model's qvel size", &K->qvel);
        if (!rc) rc = key_vector(d, k, "ctrl", d->nact, "one per actuator", &K->ctrl);
    }
    free(l.n);
    return rc;
}

int mjcf_read(mjcf_doc *d, const char *path, const char *text, size_t len, sid_error *err)
{
    memset(d, 0, sizeof *d);
    d->path = path, d->err = err;
    d->degree = 1, d->inertiafromgeom = 2;
    d->autolimits = 1;   /* MuJoCo's default since 2.3.0 (2.2.2: false) */
    memcpy(d->eulerseq, "xyz", 4);
    d->inertiagroup[0] = 0, d->inertiagroup[1] = 5;
    d->gravity[2] = -9.81;
    d->timestep = 0.002;
    d->integrator = -1;
    if (mjcf_add_file(d, path, text, len, 0)) return -1;
    xmlNode *root = xmlDocGetRootElement(d->file[0].doc);
    if (!root || !mjcf_is(root, "mujoco"))
        return sid_error_set(err, SID_ERR_INPUT, "%s:%ld: expected a <mujoco> root element", path,
                             root ? xmlGetLineNo(root) : 1L), -1;
    if (set_name(d, root, d->model, "mjcf", "model")) return -1;
    mjcf_nodes l;
    if (mjcf_kids(d, root, &l)) return -1;
    int rc = 0;
    /* settings and classes first: they apply wherever the elements using them stand */
    for (int i = 0; i < l.count && !rc; i++) {
        if (mjcf_is(l.n[i], "compiler")) rc = read_compiler(d, l.n[i]);
        else if (mjcf_is(l.n[i], "option")) {
            if (!d->option) d->option = l.n[i];
            rc = read_option(d, l.n[i]);
        }
        else if (mjcf_is(l.n[i], "default")) rc = mjcf_find_class(d, "main") >= 0 ? mjcf_fail(d, l.n[i], "a second top-level <default>") :
                                                                           mjcf_add_class(d, l.n[i], -1);
    }
    if (!rc && d->ncls == 0) {   /* an empty main class, so that class 0 always exists */
        rc = grow(d, (void **)&d->cls, 0, sizeof *d->cls);
        if (!rc) {
            d->ncls = 1, d->cls[0].parent = -1, d->cls[0].node = root;   /* root holds no <joint>: nothing found */
            snprintf(d->cls[0].name, sizeof d->cls[0].name, "main");
        }
    }
    for (int i = 0; i < l.count && !rc; i++)   /* after the classes: a mesh may take a class's scale */
        if (mjcf_is(l.n[i], "asset")) rc = read_assets(d, l.n[i]);
    geom_notes notes = { 0 };
    if (!rc) {
        rc = grow(d, (void **)&d->body, 0, sizeof *d->body);
        if (!rc) {
            d->nbody = 1, d->body[0].parent = -1, d->body[0].is_static = 1, d->body[0].quat[0] = 1;
            snprintf(d->body[0].name, sizeof d->body[0].name, "world");
        }
    }
    for (int i = 0; i < l.count && !rc; i++)
        if (mjcf_is(l.n[i], "worldbody")) rc = read_contents(d, l.n[i], 0, &notes);
    for (int i = 0; i < l.count && !rc; i++) {
        xmlNode *c = l.n[i];
        if (mjcf_is(c, "actuator")) rc = read_actuators(d, c);
        else if (mjcf_is(c, "tendon")) mjcf_warn(d, c, "tendons are not modelled (ignored)");
        else if (mjcf_is(c, "equality")) mjcf_warn(d, c, "equality constraints are not modelled (ignored)");
    }
    for (int i = 0; i < l.count && !rc; i++)   /* their sizes are the model's: after joints and actuators */
        if (mjcf_is(l.n[i], "keyframe")) rc = read_keyframes(d, l.n[i]);
    if (!rc && notes.nmodel)
        mjcf_warn(d, notes.first_unmodelled, "%d collision geom%s (capsule, box, cylinder, mesh, ...; the first here) not "
             "modelled as contact: sysid's contact is sphere geoms on a ground plane", notes.nmodel, notes.nmodel == 1 ? "" : "s");
    if (!rc && d->no_contact && (d->has_ground || d->nsphere)) d->has_ground = 0, d->nsphere = 0, d->dropped[3] = 1;
    if (!rc && (d->dropped[0] || d->dropped[1] || d->dropped[2] || d->dropped[3]))
        mjcf_warn(d, d->flag, "disabled, so not imported (MuJoCo does not simulate them): %d joint limit%s, %d "
                  "frictionloss, %d joint damping%s", d->dropped[0], d->dropped[0] == 1 ? "" : "s", d->dropped[1],
                  d->dropped[2], d->dropped[3] ? ", the contact" : "");
    if (!rc && d->nsphere && !d->has_ground) {
        mjcf_warn(d, root, "%d sphere geom%s but no ground plane in the worldbody: not modelled as contact", d->nsphere,
             d->nsphere == 1 ? "" : "s");
        d->nsphere = 0;
    }
    free(l.n);
    return rc;
}

void mjcf_doc_free(mjcf_doc *d)
{
    for (int i = 0; i < d->nkey; i++) free(d->key[i].qpos), free(d->key[i].qvel), free(d->key[i].ctrl);
    free(d->key);
    for (int i = 0; i < d->nmesh; i++) free(d->mesh[i].path);
    free(d->mesh);
    for (int i = 0; i < d->nfile; i++) {
        xmlFreeDoc(d->file[i].doc);
        free(d->file[i].path);
        if (d->file[i].own_text) free((char *)d->file[i].text);
    }
    free(d->file);
    free(d->cls);
    free(d->body);
    free(d->jnt);
    free(d->sphere);
    memset(d, 0, sizeof *d);
}

int mjcf_import(const char *path, const char *text, size_t len, char **json, sid_error *err)
{
    mjcf_doc d;
    *json = NULL;
    int rc = mjcf_read(&d, path, text, len, err);
    if (!rc && mjcf_json(&d, json)) {
        sid_error_set(err, SID_ERR_NOMEM, "out of memory");
        rc = -1;
    }
    mjcf_doc_free(&d);
    return rc;
}
