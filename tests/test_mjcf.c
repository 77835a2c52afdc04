/* test_mjcf.c — MJCF import checked against MuJoCo 2.2.2's own compile of the same file, bad
 * input, and export's round trip.
 *
 * MuJoCo is the oracle: every corpus robot (data/robots/mjcf) and every fixture
 * (tests/fixtures/mjcf) is loaded by mj_loadXML from a stripped copy (mesh geoms and mesh
 * assets removed, since the assets are not shipped; option integrator="implicitfast" and
 * position/@dampratio removed, which 2.2.2 does not know; unnamed bodies and joints named as our
 * import names them, so that the two can be matched), while mjcf_import reads the ORIGINAL. twin_compare
 * then measures the difference. Tolerances (from the issue): masses (relative), COMs, inertias
 * and joint frames 1e-12, mass matrix and bias forces at random states 1e-10, a 2 s replay
 * 1e-8 rad. What is compared is computed by two different programs from the same numbers, so
 * the only expected difference is rounding: products of a few operations on numbers of order
 * one, ~1e-16 each, which leaves those tolerances four orders of margin.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <mujoco/mujoco.h>

#include "diag.h"
#include "keyframe.h"
#include "mjcf.h"
#include "readfile.h"
#include "robot_json.h"
#include "twin.h"

Suite *mjcf_suite(void);

/* ---- the stripped copy MuJoCo reads ----------------------------------------------------------- */

static int nth_joint(xmlNode *j)
{
    int k = 0;
    for (xmlNode *s = j->parent->children; s && s != j; s = s->next)
        if (s->type == XML_ELEMENT_NODE && (xmlStrEqual(s->name, BAD_CAST "joint") || xmlStrEqual(s->name, BAD_CAST "freejoint")))
            k++;
    return k;
}

static void strip_file(const char *src, const char *dir);

void dsyev_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda, double *w, double *work,
            const int *lwork, int *info);

/* Eigenvalues w (ascending) and a right-handed eigenvector matrix (columns, row-major V[3r+c]) of
 * the symmetric I (ixx iyy izz ixy ixz iyz), by LAPACK. */
static void eig3(const double I[6], double w[3], double V[9])
{
    double a[9] = { I[0], I[3], I[4], I[3], I[1], I[5], I[4], I[5], I[2] }, work[64];
    int n = 3, lwork = 64, info;
    dsyev_("V", "U", &n, a, &n, w, work, &lwork, &info);
    ck_assert_int_eq(info, 0);
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) V[3 * r + c] = a[3 * c + r];   /* column-major: a[3c + r] is V[r][c] */
    double det = V[0] * (V[4] * V[8] - V[5] * V[7]) - V[1] * (V[3] * V[8] - V[5] * V[6]) + V[2] * (V[3] * V[7] - V[4] * V[6]);
    if (det < 0)
        for (int r = 0; r < 3; r++) V[3 * r + 2] = -V[3 * r + 2];
}

/* MuJoCo 2.2.2 diagonalises a fullinertia with its own mju_eig3, which rebuilds the tensor only
 * to ~5e-7 relative (measured: panda's link1, iyz 0.019169 comes back as 0.01916945698). So the
 * copy carries the same tensor as quat + diaginertia from LAPACK (exact to ~1e-16), and the
 * comparison measures the import, not MuJoCo's eigensolver. */
static void fullinertia_to_diag(xmlNode *n)
{
    xmlChar *v = xmlGetProp(n, BAD_CAST "fullinertia");
    double I[6], w[3], V[9], q[4];
    ck_assert_int_eq(sscanf((const char *)v, "%lf %lf %lf %lf %lf %lf", &I[0], &I[1], &I[2], &I[3], &I[4], &I[5]), 6);
    xmlFree(v);
    eig3(I, w, V);
    mju_mat2Quat(q, V);
    char buf[300];
    snprintf(buf, sizeof buf, "%.17g %.17g %.17g", w[0], w[1], w[2]);
    xmlSetProp(n, BAD_CAST "diaginertia", BAD_CAST buf);
    snprintf(buf, sizeof buf, "%.17g %.17g %.17g %.17g", q[0], q[1], q[2], q[3]);
    xmlSetProp(n, BAD_CAST "quat", BAD_CAST buf);
    xmlUnsetProp(n, BAD_CAST "fullinertia");
}

static int nbody_seen;   /* bodies so far in document order: MuJoCo's depth-first body number - 1 */

static void strip_tree(xmlNode *n, const char *srcdir, const char *dir)
{
    for (xmlNode *c = n->children, *next; c; c = next) {
        next = c->next;
        if (c->type != XML_ELEMENT_NODE) continue;
        const char *t = (const char *)c->name;
        if ((strcmp(t, "geom") == 0 && xmlHasProp(c, BAD_CAST "mesh")) || strcmp(t, "mesh") == 0) {
            xmlUnlinkNode(c);
            xmlFreeNode(c);
            continue;
        }
        if (strcmp(t, "option") == 0) {
            xmlChar *v = xmlGetProp(c, BAD_CAST "integrator");
            if (v && xmlStrEqual(v, BAD_CAST "implicitfast")) xmlUnsetProp(c, BAD_CAST "integrator");
            xmlFree(v);
        }
        if (strcmp(t, "position") == 0) xmlUnsetProp(c, BAD_CAST "dampratio");
        /* MuJoCo 3's default, which sysid reads a file by; 2.2.2's was false */
        if (strcmp(t, "compiler") == 0 && !xmlHasProp(c, BAD_CAST "autolimits")) xmlSetProp(c, BAD_CAST "autolimits", BAD_CAST "true");
        if ((strcmp(t, "body") == 0 || strcmp(t, "joint") == 0) && xmlHasProp(c, BAD_CAST "name")) {
            xmlChar *v = xmlGetProp(c, BAD_CAST "name");   /* as the import renames (no actuator refers to these) */
            for (xmlChar *p = v; *p; p++)
                if (strchr(".[]*?,\"' \\", *p)) *p = '_';
            xmlSetProp(c, BAD_CAST "name", v);
            xmlFree(v);
        }
        if (strcmp(t, "body") == 0 && ++nbody_seen && !xmlHasProp(c, BAD_CAST "name")) {
            char name[32];
            snprintf(name, sizeof name, "body%d", nbody_seen);
            xmlSetProp(c, BAD_CAST "name", BAD_CAST name);
        }
        if (strcmp(t, "inertial") == 0 && xmlHasProp(c, BAD_CAST "fullinertia")) fullinertia_to_diag(c);
        if ((strcmp(t, "joint") == 0 || strcmp(t, "freejoint") == 0) && !xmlHasProp(c, BAD_CAST "name") &&
            xmlStrEqual(c->parent->name, BAD_CAST "body")) {
            xmlChar *b = xmlGetProp(c->parent, BAD_CAST "name");
            char name[128];
            snprintf(name, sizeof name, "%s_joint%d", b ? (const char *)b : "body", nth_joint(c));
            xmlSetProp(c, BAD_CAST "name", BAD_CAST name);
            xmlFree(b);
        }
        if (strcmp(t, "include") == 0) {
            xmlChar *f = xmlGetProp(c, BAD_CAST "file");
            char path[600];
            snprintf(path, sizeof path, "%s/%s", srcdir, (const char *)f);
            strip_file(path, dir);
            xmlFree(f);
        }
        strip_tree(c, srcdir, dir);
    }
}

/* Write the stripped copy of src into dir under the same base name. */
static void strip_file(const char *src, const char *dir)
{
    xmlDoc *doc = xmlReadFile(src, NULL, XML_PARSE_NONET);
    ck_assert_msg(doc != NULL, "%s: libxml2 cannot read it", src);
    char srcdir[512], out[600];
    snprintf(srcdir, sizeof srcdir, "%s", src);
    char *slash = strrchr(srcdir, '/');
    if (slash) *slash = 0;
    else snprintf(srcdir, sizeof srcdir, ".");
    strip_tree(xmlDocGetRootElement(doc), srcdir, dir);
    const char *base = strrchr(src, '/');
    snprintf(out, sizeof out, "%s/%s", dir, base ? base + 1 : src);
    ck_assert_int_ge(xmlSaveFile(out, doc), 0);
    xmlFreeDoc(doc);
}

static mjModel *mujoco_load(const char *path)
{
    char dir[] = "/tmp/sysid_mjcf_XXXXXX", out[700], errstr[1000] = "";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    nbody_seen = 0;
    strip_file(path, dir);
    const char *base = strrchr(path, '/');
    snprintf(out, sizeof out, "%s/%s", dir, base ? base + 1 : path);
    mjModel *mm = mj_loadXML(out, NULL, errstr, sizeof errstr);
    ck_assert_msg(mm != NULL, "%s: MuJoCo: %s", out, errstr);
    char cmd[800];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
    return mm;
}

/* ---- our side --------------------------------------------------------------------------------- */

/* The import's warnings are checked in test_import_warnings; elsewhere they would only be noise. */
static char *import_file(const char *path, sid_error *err)
{
    size_t len;
    char *text = readfile(path, &len, err), *json = NULL;
    if (!text) return NULL;
    int q = cli_quiet;
    cli_quiet = 1;
    int rc = mjcf_import(path, text, len, &json, err);
    cli_quiet = q;
    free(text);
    return rc ? NULL : json;
}

static char *slurp(const char *path, size_t *len)
{
    sid_error err = { 0 };
    char *t = readfile(path, len, &err);
    ck_assert_msg(t != NULL, "%s", err.msg);
    return t;
}

/* stderr of a call, captured through a temporary file. */
typedef struct {
    FILE *tmp;
    int saved;
} capture;

static void capture_start(capture *c)
{
    fflush(stderr);
    c->tmp = tmpfile();
    ck_assert_ptr_nonnull(c->tmp);
    c->saved = dup(2);
    dup2(fileno(c->tmp), 2);
}

static char *capture_end(capture *c)
{
    fflush(stderr);
    dup2(c->saved, 2);
    close(c->saved);
    long n = ftell(c->tmp);
    rewind(c->tmp);
    char *log = calloc((size_t)n + 1, 1);
    ck_assert_int_eq(fread(log, 1, (size_t)n, c->tmp), (size_t)n);
    fclose(c->tmp);
    return log;
}

static void load_model(const char *path, sid_robot_desc *d, sid_model **m, double **theta)
{
    sid_error err = { 0 };
    char *json = import_file(path, &err);
    ck_assert_msg(json != NULL, "%s: %s", path, err.msg);
    int q = cli_quiet;
    cli_quiet = 1;   /* "limit" is not a robot.json key yet: the loader would warn about it */
    int rc = robot_json_parse(path, json, strlen(json), d, NULL, &err);
    cli_quiet = q;
    ck_assert_msg(rc == 0, "%s: the imported robot.json does not load: %s", path, err.msg);
    free(json);
    ck_assert_msg(sid_model_create(m, theta, d, &err) == SID_OK, "%s: %s", path, err.msg);
}

static const char *const files[] = {
    "../data/robots/mjcf/franka_emika_panda/panda.xml",
    "../data/robots/mjcf/franka_emika_panda/panda_nohand.xml",
    "../data/robots/mjcf/universal_robots_ur5e/ur5e.xml",
    "../data/robots/mjcf/dynamixel_2r/dynamixel_2r.xml",
    "../data/robots/mjcf/dynamixel_2r/robot.xml",
    "../data/robots/mjcf/dynamixel_2r/scene.xml",
    "../data/robots/mjcf/unitree_go1/go1.xml",
    "fixtures/mjcf/geoms.xml",
    "fixtures/mjcf/classes.xml",
    "fixtures/mjcf/include_main.xml",
    "fixtures/mjcf/balance.xml",
    "fixtures/mjcf/unnamed.xml",
};
enum { NFILE = (int)(sizeof files / sizeof files[0]) };

/* Max over bodies found by name on both sides of |sorted eigenvalues of our inertia - MuJoCo's
 * body_inertia| / the largest. */
static double principal_moments(const sid_robot_desc *d, const mjModel *mm)
{
    double worst = 0;
    for (int i = 0; i < d->nlink; i++) {
        int b = mj_name2id(mm, mjOBJ_BODY, d->link[i].name);
        if (b <= 0 || !d->link[i].has_mass) continue;
        double w[3], V[9], mj[3];
        eig3(d->link[i].inertia, w, V);
        memcpy(mj, mm->body_inertia + 3 * b, sizeof mj);
        for (int x = 0; x < 3; x++)   /* sort ascending, as dsyev's */
            for (int y = x + 1; y < 3; y++)
                if (mj[y] < mj[x]) {
                    double t = mj[x];
                    mj[x] = mj[y], mj[y] = t;
                }
        for (int k = 0; k < 3; k++) worst = fmax(worst, fabs(w[k] - mj[k]) / fmax(w[2], 1e-300));
    }
    return worst;
}

START_TEST(test_against_mujoco)
{
    const char *path = files[_i];
    sid_robot_desc d;
    sid_model *m;
    double *theta;
    load_model(path, &d, &m, &theta);
    mjModel *mm = mujoco_load(path);
    twin_figures f;
    char msg[300] = "";
    const char *base = strrchr(path, '/');
    ck_assert_msg(twin_compare(m, theta, mm, 2.0, 20, &f, msg, sizeof msg) == 0, "%s: %s", path, msg);
    twin_print(base ? base + 1 : path, &f);
    int nmoving = 0;
    for (int j = 0; j < mm->njnt; j++) nmoving++;
    ck_assert_msg(f.ndof == nmoving, "%s: %d of MuJoCo's %d joints matched", path, f.ndof, nmoving);
    ck_assert_msg(f.mass <= 1e-12, "%s: mass %.3e", path, f.mass);
    ck_assert_msg(f.com <= 1e-12, "%s: com %.3e", path, f.com);
    /* MuJoCo also diagonalises the inertia it sums from geoms with mju_eig3, whose eigenvectors
     * carry up to ~2e-11 (measured, geoms.xml) of the tensor; its principal moments do not (the
     * eigenvalues of a symmetric matrix are insensitive to rotation errors to first order). So for
     * files whose inertias come from geoms the moments are compared to 1e-12 of the largest, and
     * the world-frame tensor to 1e-10 (the measured eigensolver error with margin 5). */
    double moments = principal_moments(&d, mm);
    fprintf(stderr, "mjcf: %-22s principal moments against MuJoCo's: %.1e (relative)\n", base ? base + 1 : path, moments);
    ck_assert_msg(moments <= 1e-12, "%s: principal moments differ by %.3e", path, moments);
    double tol_inertia = strstr(path, "geoms.xml") || strstr(path, "classes.xml") ? 1e-10 : 1e-12;
    ck_assert_msg(f.inertia <= tol_inertia, "%s: inertia %.3e", path, f.inertia);
    ck_assert_msg(f.frame <= 1e-12, "%s: frame %.3e", path, f.frame);
    ck_assert_msg(f.M <= 1e-10, "%s: M %.3e", path, f.M);
    ck_assert_msg(f.bias <= 1e-10, "%s: bias %.3e", path, f.bias);
    ck_assert_msg(f.replay <= 1e-8, "%s: replay %.3e", path, f.replay);
    mj_deleteModel(mm);
    sid_free(theta);
    sid_model_free(m);
    robot_desc_free(&d);
}
END_TEST

/* ---- keyframes ---------------------------------------------------------------------------------- */

/* Every <key> of the robots that have them and of a fixture (a free joint, a hinge with a ref in
 * degrees, a tendon actuator among the motors, an unnamed key) as MuJoCo 2.2.2 resets to it
 * (mj_resetDataKeyframe): q + ref = qpos, qd = qvel and u = ctrl joint by joint, exactly. */
START_TEST(test_keyframes_match_mujoco)
{
    static const char *const kf_files[] = {
        "../data/robots/mjcf/franka_emika_panda/panda.xml", "../data/robots/mjcf/universal_robots_ur5e/ur5e.xml",
        "../data/robots/mjcf/unitree_go1/go1.xml", "fixtures/mjcf/keyframes.xml",
    };
    int nkeys = 0, ncompared = 0;
    for (size_t f = 0; f < sizeof kf_files / sizeof kf_files[0]; f++) {
        const char *path = kf_files[f];
        sid_error err = { 0 };
        char *json = import_file(path, &err);
        ck_assert_msg(json != NULL, "%s: %s", path, err.msg);
        sid_robot_desc d;
        cJSON *doc;
        int q = cli_quiet;
        cli_quiet = 1;
        ck_assert_msg(robot_json_parse(path, json, strlen(json), &d, &doc, &err) == 0, "%s: %s", path, err.msg);
        cli_quiet = q;
        free(json);
        sid_model *m;
        double *theta;
        ck_assert_msg(sid_model_create(&m, &theta, &d, &err) == SID_OK, "%s: %s", path, err.msg);
        mjModel *mm = mujoco_load(path);
        mjData *md = mj_makeData(mm);
        ck_assert_int_ge(mm->nkey, 1);
        const int nq = sid_model_nq(m), nv = sid_model_nv(m);
        double kq[64], kv[64], ku[64];
        ck_assert_int_le(nq, 64);
        const cJSON *ks = cJSON_GetObjectItemCaseSensitive(doc, "keyframes");
        ck_assert_int_eq(cJSON_GetArraySize(ks), mm->nkey);
        for (int k = 0; k < mm->nkey; k++) {
            const char *name = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(ks, k), "name")->valuestring;
            ck_assert_msg(keyframe_state(path, doc, m, name, kq, kv, ku, &err) == 0, "%s: %s", path, err.msg);
            mj_resetDataKeyframe(mm, md, k);
            nkeys++;
            for (int j = 0; j < sid_model_ndof_joints(m); j++) {
                const int jid = mj_name2id(mm, mjOBJ_JOINT, sid_model_dof_joint_name(m, j));
                ck_assert_msg(jid >= 0, "%s: joint %s", path, sid_model_dof_joint_name(m, j));
                const int free = mm->jnt_type[jid] == mjJNT_FREE, qa = mm->jnt_qposadr[jid], da = mm->jnt_dofadr[jid];
                const double ref = free ? 0 : mm->qpos0[qa];
                const double *oq = kq + sid_model_dof_joint_qadr(m, j), *ov = kv + sid_model_dof_joint_vadr(m, j);
                for (int c = 0; c < (free ? 7 : 1); c++, ncompared++)
                    ck_assert_msg(fabs(oq[c] + ref - md->qpos[qa + c]) <= 1e-15 * (1 + fabs(ref)), "%s: key %s, %s q[%d]: %.17g + %.17g vs qpos %.17g",
                                  path, name, sid_model_dof_joint_name(m, j), c, oq[c], ref, md->qpos[qa + c]);
                for (int c = 0; c < (free ? 6 : 1); c++)
                    ck_assert_msg(ov[c] == md->qvel[da + c], "%s: key %s, %s qd[%d]", path, name,
                                  sid_model_dof_joint_name(m, j), c);
                for (int a = 0; a < mm->nu && !free; a++)
                    if (mm->actuator_trntype[a] == mjTRN_JOINT && mm->actuator_trnid[2 * a] == jid &&
                        sid_model_dof_joint_has_motor(m, j)) {
                        ck_assert_msg(ku[sid_model_dof_joint_vadr(m, j)] == md->ctrl[a], "%s: key %s, %s u %g vs ctrl %g",
                                      path, name, sid_model_dof_joint_name(m, j), ku[sid_model_dof_joint_vadr(m, j)], md->ctrl[a]);
                        break;
                    }
            }
        }
        mj_deleteData(md);
        mj_deleteModel(mm);
        cJSON_Delete(doc);
        sid_free(theta);
        sid_model_free(m);
        robot_desc_free(&d);
        (void)nv;
    }
    fprintf(stderr, "mjcf: %d keyframes of 4 files as MuJoCo 2.2.2 resets to them (%d positions compared)\n", nkeys,
            ncompared);
}
END_TEST

/* ---- what the import says ---------------------------------------------------------------------- */

static const sid_link_desc *link_of(const sid_robot_desc *d, const char *name)
{
    for (int i = 0; i < d->nlink; i++)
        if (strcmp(d->link[i].name, name) == 0) return &d->link[i];
    ck_abort_msg("no link %s", name);
    return NULL;
}

static const sid_joint_desc *joint_of(const sid_robot_desc *d, const char *name)
{
    for (int i = 0; i < d->njoint; i++)
        if (strcmp(d->joint[i].name, name) == 0) return &d->joint[i];
    ck_abort_msg("no joint %s", name);
    return NULL;
}

/* ---- mesh inertia -------------------------------------------------------------------------------- */

/* A binary STL of the box [lo, hi] (12 outward triangles). */
static void write_box_stl(const char *path, const double lo[3], const double hi[3])
{
    static const int face[6][4] = { {0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4}, {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5} };
    float v[8][3];
    for (int k = 0; k < 8; k++)
        for (int a = 0; a < 3; a++) v[k][a] = (float)(k >> a & 1 ? hi[a] : lo[a]);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    char header[80] = "sysid test box";
    uint32_t n = 12;
    fwrite(header, 1, 80, f);
    fwrite(&n, 4, 1, f);
    for (int t = 0; t < 6; t++)
        for (int h = 0; h < 2; h++) {
            const int tri[3] = { face[t][0], face[t][1 + h], face[t][2 + h] };
            float rec[12] = { 0 };
            uint16_t attr = 0;
            for (int c = 0; c < 3; c++)
                for (int a = 0; a < 3; a++) rec[3 + 3 * c + a] = v[tri[c]][a];
            fwrite(rec, 4, 12, f);
            fwrite(&attr, 2, 1, f);
        }
    fclose(f);
}

/* Bodies whose inertia comes from mesh geoms (a binary STL box scaled and turned, an OBJ
 * tetrahedron with a given mass, beside a sphere): mass, centre of mass and inertia as MuJoCo
 * 2.2.2 compiles them with exactmeshinertia (MuJoCo 3's inertia="exact", and "convex" for a
 * convex mesh; 2.2.2's default legacy rule gives this tetrahedron 39 % more volume). MuJoCo
 * holds mesh vertices in single precision and moves them to the mesh's centre of mass there, so
 * it agrees to ~1e-8 only: 1e-6 relative is the bound (sysid's integrals are exact in double:
 * tests/test_mesh.c against closed forms). */
START_TEST(test_mesh_inertia_matches_mujoco)
{
    char dir[] = "/tmp/sysid_mesh_XXXXXX", path[600], cmd[700];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/assets", dir);
    ck_assert_int_eq(mkdir(path, 0700), 0);
    const double lo[3] = { -0.1, -0.04, -0.02 }, hi[3] = { 0.12, 0.05, 0.03 };
    snprintf(path, sizeof path, "%s/assets/box.stl", dir);
    write_box_stl(path, lo, hi);
    snprintf(path, sizeof path, "%s/assets/tetra.obj", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("# a tetrahedron\nv 0 0 0\nv 0.1 0 0\nv 0 0.08 0\nv 0.01 0.02 0.12\nf 1 3 2\nf 1 2 4\nf 2 3 4\nf 3 1 4\n", f);
    fclose(f);
    snprintf(path, sizeof path, "%s/model.xml", dir);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("<mujoco model='meshes'>\n  <compiler angle='radian' meshdir='assets' exactmeshinertia='true'/>\n"
          "  <asset><mesh name='box' file='box.stl' scale='1 2 1.5'/><mesh file='tetra.obj'/></asset>\n"
          "  <worldbody>\n    <body name='a' pos='0 0 1'>\n      <joint name='j' type='hinge' axis='0 1 0'/>\n"
          "      <geom type='mesh' mesh='box' density='800' pos='0.1 0 0' quat='0.9 0.1 0.3 0.2'/>\n"
          "      <geom type='mesh' mesh='tetra' mass='0.3' pos='0 0.05 -0.1' euler='0.3 0 0.5'/>\n"
          "      <geom type='sphere' size='0.02' mass='0.1' pos='0.2 0 0'/>\n"
          "      <body name='b' pos='0.3 0 0'>\n        <joint name='k' type='slide' axis='1 0 0'/>\n"
          "        <geom type='mesh' mesh='tetra' density='2000'/>\n      </body>\n    </body>\n  </worldbody>\n"
          "</mujoco>\n", f);
    fclose(f);
    sid_robot_desc d;
    sid_model *m;
    double *theta;
    load_model(path, &d, &m, &theta);
    char errstr[1000] = "";
    mjModel *mm = mj_loadXML(path, NULL, errstr, sizeof errstr);
    ck_assert_msg(mm != NULL, "MuJoCo: %s", errstr);
    double worst = 0;
    for (int b = 1; b < mm->nbody; b++) {
        const sid_link_desc *L = link_of(&d, mj_id2name(mm, mjOBJ_BODY, b));
        double R[9], full[9];
        mju_quat2Mat(R, mm->body_iquat + 4 * b);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                full[3 * i + j] = 0;
                for (int k = 0; k < 3; k++) full[3 * i + j] += R[3 * i + k] * mm->body_inertia[3 * b + k] * R[3 * j + k];
            }
        const double ours[9] = { L->inertia[0], L->inertia[3], L->inertia[4], L->inertia[3], L->inertia[1],
                                 L->inertia[5], L->inertia[4], L->inertia[5], L->inertia[2] };
        const double scale = fmax(mm->body_inertia[3 * b], fmax(mm->body_inertia[3 * b + 1], mm->body_inertia[3 * b + 2]));
        ck_assert_msg(fabs(L->mass - mm->body_mass[b]) <= 1e-6 * mm->body_mass[b], "body %d mass %.17g vs %.17g", b,
                      L->mass, mm->body_mass[b]);
        for (int k = 0; k < 3; k++)
            ck_assert_msg(fabs(L->com[k] - mm->body_ipos[3 * b + k]) <= 1e-7, "body %d com[%d] %.17g vs %.17g", b, k,
                          L->com[k], mm->body_ipos[3 * b + k]);
        for (int k = 0; k < 9; k++) worst = fmax(worst, fabs(ours[k] - full[k]) / scale);
    }
    fprintf(stderr, "mjcf: mesh inertia (STL box, OBJ tetrahedron) against MuJoCo 2.2.2: %.1e of the largest moment\n",
            worst);
    ck_assert_msg(worst <= 1e-6, "inertia %.3e", worst);
    mj_deleteModel(mm);
    sid_free(theta);
    sid_model_free(m);
    robot_desc_free(&d);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* Values the fixture states, so the mapping can be read off the file: exact where no arithmetic
 * is involved, 1e-15 where a unit conversion is (degrees). */
START_TEST(test_fields)
{
    sid_robot_desc d;
    sid_model *m;
    double *theta;
    load_model("fixtures/mjcf/classes.xml", &d, &m, &theta);
    ck_assert_double_eq(d.gravity[1], 0.5);
    const sid_joint_desc *ey = joint_of(&d, "elbow_y"), *sl = joint_of(&d, "elbow_slide");
    ck_assert_double_eq(ey->viscous, 0.2);     /* forearm overrides main's 0.3 */
    ck_assert_double_eq(ey->coulomb, 0.05);
    ck_assert_double_eq(ey->armature, 0.01);   /* from main */
    ck_assert_int_eq(sl->type, SID_JOINT_PRISMATIC);
    ck_assert_double_eq(sl->armature, 0.5);
    ck_assert_double_eq(sl->viscous, 0.3);     /* class slider, whose parent is main, not forearm */
    const sid_joint_desc *sh = joint_of(&d, "shoulder"), *wr = joint_of(&d, "wrist");
    ck_assert_int_eq(sh->motor, SID_MOTOR_TORQUE);
    ck_assert_double_eq(sh->gear, 50);
    ck_assert_double_eq(wr->gear, 2);
    ck_assert_int_eq(joint_of(&d, "elbow_x")->motor, SID_MOTOR_NONE);
    /* the multi-joint body: a chain through two massless links, the body last */
    ck_assert_int_eq(link_of(&d, "fore_elbow_y")->has_mass, 0);
    ck_assert_int_eq(link_of(&d, "fore_elbow_x")->has_mass, 0);
    ck_assert_int_eq(link_of(&d, "fore")->has_mass, 1);
    ck_assert_double_eq(joint_of(&d, "elbow_x")->xyz[1], 0.01 - 0.02);   /* p_k - p_{k-1} */
    sid_free(theta);
    sid_model_free(m);
    robot_desc_free(&d);

    load_model("fixtures/mjcf/include_main.xml", &d, &m, &theta);
    ck_assert_int_eq(d.ground.present, 1);
    ck_assert_double_eq(d.ground.height, -0.5);
    ck_assert_double_eq(d.ground.friction, 0.8);
    ck_assert_int_eq(d.nsphere, 2);
    ck_assert_str_eq(d.sphere[0].name, "foot1");
    ck_assert_double_eq(d.sphere[0].radius, 0.02);
    ck_assert_double_eq(d.sphere[1].xyz[0], -0.1);
    ck_assert_int_eq(joint_of(&d, "root")->type, SID_JOINT_FREE);
    const sid_link_desc *box = link_of(&d, "box");
    ck_assert_double_eq(box->mass, 2);
    ck_assert_double_eq(box->inertia[3], 0.001);   /* fullinertia is the body-axes tensor */
    ck_assert_double_eq(box->inertia[4], -0.002);
    sid_free(theta);
    sid_model_free(m);
    robot_desc_free(&d);
}
END_TEST

START_TEST(test_limits_in_degrees)
{
    sid_error err = { 0 };
    char *json = import_file("fixtures/mjcf/include_main.xml", &err);
    ck_assert_msg(json != NULL, "%s", err.msg);
    /* range="-30 45" under angle="degree": the numbers, converted, are in the text */
    char want[200];
    snprintf(want, sizeof want, "\"limit\": { \"lower\": %.17g", -30 * 3.14159265358979323846 / 180);
    ck_assert_msg(strstr(json, "\"limit\": { \"lower\": -0.5235987755982988") != NULL, "%s\n(want %s)", json, want);
    free(json);
}
END_TEST

/* What sysid cannot express is warned about, naming file:line and the element. */
START_TEST(test_import_warnings)
{
    static const struct {
        const char *file, *want;
    } w[] = {
        { "../data/robots/mjcf/unitree_go1/go1.xml", "go1.xml:210: <position name=\"FR_hip\">: 12 servos with a limited forcerange (FR_hip on joint FR_hip_joint at 23.7, FR_thigh on joint FR_thigh_joint at 23.7, FR_calf on joint FR_calf_joint at 35.55" },
        { "../data/robots/mjcf/unitree_go1/go1.xml", "go1.xml:210: <position name=\"FR_hip\">: 12 servos with a limited ctrlrange (FR_hip on joint FR_hip_joint" },
        { "../data/robots/mjcf/franka_emika_panda/panda.xml", "panda.xml:265: <general name=\"actuator1\">: 7 servos with a limited forcerange (actuator1 on joint joint1 at 87," },
        { "../data/robots/mjcf/unitree_go1/go1.xml", "4 sphere geoms but no ground plane in the worldbody" },
        { "../data/robots/mjcf/franka_emika_panda/panda.xml", "panda.xml:253: <tendon>: tendons are not modelled" },
        { "../data/robots/mjcf/franka_emika_panda/panda.xml", "<general name=\"actuator8\">: a general actuator without a joint transmission" },
        { "../data/robots/mjcf/franka_emika_panda/panda_nohand.xml", "model 'panda nohand' imported as 'panda_nohand'" },
        { "fixtures/mjcf/classes.xml", "classes.xml:44: <motor name=\"m_wrist\">: motor on joint wrist: ctrlrange/forcerange clamps" },
        { "fixtures/mjcf/include_main.xml", "include_body.xml:9: <geom>: 1 collision geom" },
        { "fixtures/mjcf/unnamed.xml", "unnamed.xml:10: <joint name=\"elbow.pitch\">: name 'elbow.pitch' imported as 'elbow_pitch'" },
    };
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
        size_t len;
        char *text = slurp(w[i].file, &len), *json = NULL;
        sid_error err = { 0 };
        capture c;
        capture_start(&c);
        int rc = mjcf_import(w[i].file, text, len, &json, &err);
        char *log = capture_end(&c);
        ck_assert_msg(rc == 0, "%s: %s", w[i].file, err.msg);
        ck_assert_msg(strstr(log, w[i].want) != NULL, "%s: no warning '%s' in:\n%s", w[i].file, w[i].want, log);
        free(log), free(json), free(text);
    }
}
END_TEST

/* ---- bad input ---------------------------------------------------------------------------------- */

static const struct {
    const char *file, *want;
} bad[] = {
    { "bad_xml.xml", "bad_xml.xml:5: Opening and ending tag mismatch" },
    { "two_orient.xml", "two_orient.xml:3: <body name=\"a\">: two orientations (quat and euler)" },
    { "ball.xml", "ball.xml:4: <joint name=\"shoulder\">: ball joints are not supported" },
    /* a mesh whose file is not there, where the body's inertia needs it */
    { "mesh_inertia.xml", "mesh_inertia.xml:8: <geom>: the inertia of mesh 'shell' (its body has no <inertial>): fixtures/mjcf/shell.stl: cannot open" },
    { "free_below.xml", "free_below.xml:7: <freejoint name=\"loose\">: a free joint must connect a child of the world" },
    { "missing_include.xml", "missing_include.xml:3: <include>: cannot read the included file 'fixtures/mjcf/no_such_file.xml'" },
    { "unknown_class.xml", "unknown_class.xml:7: <joint name=\"j\">: unknown class 'leg'" },
    { "no_size.xml", "no_size.xml:5: <geom>: size: a box geom that gives its body's inertia needs 3 positive numbers" },
    { "nonnumber.xml", "nonnumber.xml:3: <body name=\"a\"> pos=\"0 0.1 x\": expected 3 numbers" },
};

START_TEST(test_bad_input)
{
    char path[256];
    snprintf(path, sizeof path, "fixtures/mjcf/%s", bad[_i].file);
    sid_error err = { 0 };
    char *json = import_file(path, &err);
    ck_assert_msg(json == NULL, "%s: imported", path);
    ck_assert_int_eq(err.status, SID_ERR_INPUT);
    ck_assert_msg(strstr(err.msg, bad[_i].want) != NULL, "%s: got '%s', want '%s'", path, err.msg, bad[_i].want);
    ck_assert_msg(strncmp(err.msg, "fixtures/mjcf/", 14) == 0, "the message names the file: %s", err.msg);
}
END_TEST


/* ---- export ---------------------------------------------------------------------------------------- */


/* Export fitted into path's text; stderr (the warnings) captured into *log when log is given. */
static char *export_into(const char *path, const sid_robot_desc *fitted, size_t *outlen, char **log, sid_error *err)
{
    size_t len;
    char *text = slurp(path, &len), *out = NULL;
    capture c;
    if (log) capture_start(&c);
    int rc = mjcf_export(path, text, len, fitted, &out, outlen, err);
    if (log) *log = capture_end(&c);
    free(text);
    return rc ? NULL : out;
}

/* An unchanged fit writes the file back byte for byte. */
START_TEST(test_export_unchanged)
{
    const char *path = files[_i];
    sid_robot_desc d;
    sid_model *m;
    double *theta;
    load_model(path, &d, &m, &theta);
    size_t len, outlen;
    char *text = slurp(path, &len);
    sid_error err = { 0 };
    char *out = export_into(path, &d, &outlen, NULL, &err);
    ck_assert_msg(out != NULL, "%s: %s", path, err.msg);
    ck_assert_msg(outlen == len && memcmp(out, text, len) == 0, "%s: an unchanged fit changed the file", path);
    free(out);
    free(text);
    sid_free(theta);
    sid_model_free(m);
    robot_desc_free(&d);
}
END_TEST

/* Import the exported text from a temporary file. */
static void reimport(const char *path, const char *text, size_t len, sid_robot_desc *d)
{
    char tmp[] = "/tmp/sysid_mjcf_export_XXXXXX";   /* (no round-trip file includes another) */
    int fd = mkstemp(tmp);
    ck_assert_int_ge(fd, 0);
    (void)path;
    FILE *f = fdopen(fd, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fwrite(text, 1, len, f), len);
    fclose(f);
    sid_model *m;
    double *theta;
    load_model(tmp, d, &m, &theta);
    remove(tmp);
    sid_free(theta);
    sid_model_free(m);
}

/* Lines of out that differ from text's (the edits add no line): each must hold a written attribute. */
static void only_numbers_changed(const char *path, const char *text, const char *out)
{
    static const char *const attrs[] = { "damping=", "armature=", "frictionloss=", "gear=", "mass=", "pos=",
                                         "diaginertia=", "fullinertia=", "quat=", NULL };
    /* (a body whose orientation was euler/axisangle/... gets quat: only where it had none of those) */
    const char *a = text, *b = out;
    int line = 1, changed = 0;
    while (*a || *b) {
        const char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');
        ck_assert_msg(ea && eb, "%s: the output has another number of lines", path);
        size_t la = (size_t)(ea - a), lb = (size_t)(eb - b);
        if (la != lb || memcmp(a, b, la)) {
            int ok = 0;
            for (int i = 0; attrs[i] && !ok; i++) ok = strstr(b, attrs[i]) && strstr(b, attrs[i]) < eb;
            ck_assert_msg(ok, "%s:%d: a line changed that holds no written value: %.*s", path, line, (int)lb, b);
            ck_assert_msg(strstr(a, "<!--") == NULL || strstr(a, "<!--") > ea, "%s:%d: a comment changed", path, line);
            changed++;
        }
        a = ea + 1, b = eb + 1, line++;
    }
    ck_assert_msg(changed > 0, "%s: nothing changed", path);
}

/* Rz(y) Ry(p) Rx(r), row-major. */
static void rpy_mat(double R[9], const double rpy[3])
{
    double cr = cos(rpy[0]), sr = sin(rpy[0]), cp = cos(rpy[1]), sp = sin(rpy[1]), cy = cos(rpy[2]), sy = sin(rpy[2]);
    double M[9] = { cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr,
                    sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr,
                    -sp, cp * sr, cp * cr };
    memcpy(R, M, sizeof M);
}

static double nudge(double v, int k)
{
    return v != 0 ? v * (1.25 + 0.01 * k) : 0.003 * (k + 1);
}

/* Change every value MJCF holds (per joint different: classes' values move onto the joints), export,
 * import again: each comes back, to the bit where the mapping is a copy (joint numbers, gear, mass,
 * inertial pos of a body whose link frame is its body frame, fullinertia), to 5e-15 relative where a
 * rotation or a frame offset is involved (diaginertia in a rotated inertial frame, com + off - off). */
static void round_trip(const char *path, int uniform)
{
    sid_robot_desc d, r;
    sid_model *m;
    double *theta;
    load_model(path, &d, &m, &theta);
    sid_robot_desc f = d;   /* the arrays are d's: changed in place */
    int nchanged = 0;
    for (int i = 0; i < f.njoint; i++) {
        sid_joint_desc *j = &f.joint[i];
        int k = uniform ? 0 : i;
        if (j->type == SID_JOINT_REVOLUTE || j->type == SID_JOINT_PRISMATIC) {
            j->armature = nudge(j->armature, k), j->viscous = nudge(j->viscous, k), j->coulomb = nudge(j->coulomb, k);
            nchanged += 3;
            if (j->motor != SID_MOTOR_NONE) j->gear = nudge(j->gear, k), nchanged++;
        }
        if (j->type != SID_JOINT_FREE)   /* body pos and quat (or not representable: anchors) */
            for (int c = 0; c < 3; c++) j->xyz[c] += 0.01 * (c + 1), j->rpy[c] += 0.02 * (c + 1);
    }
    for (int i = 0; i < f.nlink; i++) {
        sid_link_desc *l = &f.link[i];
        if (!l->has_mass) continue;
        l->mass *= 1.1;
        for (int c = 0; c < 3; c++) l->com[c] += 0.001 * (c + 1);
        for (int c = 0; c < 6; c++) l->inertia[c] *= 1.2;   /* stays diagonal in the inertial's frame */
        if (!uniform && i % 2) l->inertia[3] += 1e-3 * fmin(l->inertia[0], l->inertia[1]);   /* and now it does not */
        nchanged += 10;
    }
    size_t outlen;
    sid_error err = { 0 };
    char *log = NULL;
    char *out = export_into(path, &f, &outlen, &log, &err);
    ck_assert_msg(out != NULL, "%s: %s", path, err.msg);
    size_t len;
    char *text = slurp(path, &len);
    if (uniform) only_numbers_changed(path, text, out);   /* a fullinertia replacing diaginertia may join lines */
    reimport(path, out, outlen, &r);
    int exact = 0, close = 0;
    double worst = 0;
    for (int i = 0; i < f.njoint; i++) {
        const sid_joint_desc *a = &f.joint[i], *b = &r.joint[i];
        ck_assert_str_eq(a->name, b->name);
        if (strstr(log, "included file") && strstr(log, a->name)) continue;   /* listed as not written */
        ck_assert_msg(a->armature == b->armature && a->viscous == b->viscous && a->coulomb == b->coulomb &&
                      a->gear == b->gear, "%s: joint %s: armature %.17g/%.17g damping %.17g/%.17g coulomb %.17g/%.17g gear %.17g/%.17g",
                      path, a->name, a->armature, b->armature, a->viscous, b->viscous, a->coulomb, b->coulomb, a->gear, b->gear);
        exact += 4;
        char origin[SID_MAX_NAME + 32];
        snprintf(origin, sizeof origin, "joints.%s.origin.", a->name);
        if (a->type == SID_JOINT_FREE || strstr(log, origin)) continue;   /* listed as not representable */
        double Ra[9], Rb[9];   /* rotations, not angles: rpy past +-pi comes back wrapped */
        rpy_mat(Ra, a->rpy), rpy_mat(Rb, b->rpy);
        for (int c = 0; c < 9; c++) worst = fmax(worst, fabs(Ra[c] - Rb[c]));
        for (int c = 0; c < 3; c++) worst = fmax(worst, fabs(a->xyz[c] - b->xyz[c]) / fmax(fabs(a->xyz[c]), 0.1));
        close += 6;
    }
    for (int i = 0; i < f.nlink; i++) {
        const sid_link_desc *a = &f.link[i], *b = &r.link[i];
        char geoms[SID_MAX_NAME + 16];
        snprintf(geoms, sizeof geoms, "links.%s.mass = ", a->name);
        if (!a->has_mass || strstr(log, geoms)) continue;   /* inertia from geoms: listed as not representable */
        ck_assert_msg(a->mass == b->mass, "%s: link %s: mass %.17g came back as %.17g", path, a->name, a->mass, b->mass);
        exact++;
        double scale = 0;
        for (int c = 0; c < 6; c++) scale = fmax(scale, fabs(a->inertia[c]));
        for (int c = 0; c < 6; c++) worst = fmax(worst, fabs(a->inertia[c] - b->inertia[c]) / scale);
        double cs = fmax(fmax(fabs(a->com[0]), fabs(a->com[1])), fmax(fabs(a->com[2]), 0.1));
        for (int c = 0; c < 3; c++) worst = fmax(worst, fabs(a->com[c] - b->com[c]) / cs);
        close += 9;
    }
    fprintf(stderr, "mjcf: %-22s export round trip (%s): %d values to the bit, %d to %.1e relative\n",
            strrchr(path, '/') + 1, uniform ? "uniform" : "per joint", exact, close, worst);
    /* diaginertia in a rotated frame is D = R^T I R written, R D R^T read: two triple products of
     * nine terms each, a few ulp apiece; measured 2.0e-15 (go1), so 5e-15 */
    ck_assert_msg(worst <= 5e-15, "%s: a value came back %.3e (relative) off", path, worst);
    ck_assert_int_gt(exact + close, nchanged / 2);
    free(out), free(text), free(log);
    robot_desc_free(&r);
    sid_free(theta);
    sid_model_free(m);
    robot_desc_free(&d);
}

static const char *const rt_files[] = {
    "fixtures/mjcf/classes.xml",
    "../data/robots/mjcf/unitree_go1/go1.xml",
    "../data/robots/mjcf/franka_emika_panda/panda.xml",
    "../data/robots/mjcf/universal_robots_ur5e/ur5e.xml",
    "../data/robots/mjcf/dynamixel_2r/dynamixel_2r.xml",
    "fixtures/mjcf/balance.xml",
};

START_TEST(test_export_round_trip)
{
    round_trip(rt_files[_i / 2], _i % 2);
}
END_TEST

/* One class fitted to one value goes into the class; to several, onto the joints, and it says so. */
START_TEST(test_export_classes)
{
    const char *path = "../data/robots/mjcf/unitree_go1/go1.xml";
    sid_robot_desc d;
    sid_model *m;
    double *theta;
    load_model(path, &d, &m, &theta);
    for (int i = 0; i < d.njoint; i++)
        if (d.joint[i].type == SID_JOINT_REVOLUTE) d.joint[i].armature = 0.02;   /* class go1 gives 0.01 to all */
    size_t outlen, len;
    sid_error err = { 0 };
    char *log = NULL, *out = export_into(path, &d, &outlen, &log, &err), *text = slurp(path, &len);
    ck_assert_msg(out != NULL, "%s", err.msg);
    ck_assert_msg(strstr(out, "<joint axis=\"0 1 0\" damping=\"2\" armature=\"0.02\" frictionloss=\"0.2\"/>") != NULL,
                  "the class go1 holds the one fitted armature");
    ck_assert_int_eq((long)outlen, (long)len);   /* 0.01 -> 0.02: one byte, nothing else */
    size_t ndiff = 0;
    for (size_t i = 0; i < len; i++) ndiff += out[i] != text[i];
    ck_assert_int_eq((long)ndiff, 1);
    free(out), free(log);
    /* now the hips differ from the rest */
    for (int i = 0; i < d.njoint; i++)
        if (strstr(d.joint[i].name, "hip_joint")) d.joint[i].armature = 0.03;
    out = export_into(path, &d, &outlen, &log, &err);
    ck_assert_ptr_nonnull(out);
    ck_assert_msg(strstr(log, "<default class=\"go1\">: armature serves joints fitted to different values") != NULL, "%s", log);
    ck_assert_msg(strstr(log, "FR_hip_joint") != NULL, "%s", log);
    ck_assert_msg(strstr(out, "armature=\"0.01\" frictionloss=\"0.2\"/>") != NULL, "the default stays");
    ck_assert_msg(strstr(out, "<joint class=\"abduction\" name=\"FR_hip_joint\" armature=\"0.03\"/>") != NULL, "%s", out);
    ck_assert_msg(strstr(out, "<joint class=\"hip\" name=\"FR_thigh_joint\" armature=\"0.02\"/>") != NULL, "%s", out);
    free(out), free(log), free(text);
    sid_free(theta);
    sid_model_free(m);
    robot_desc_free(&d);
}
END_TEST

/* Unnamed elements get names that export finds again; names sysid cannot hold get '_'. */
START_TEST(test_names)
{
    const char *path = "fixtures/mjcf/unnamed.xml";
    sid_robot_desc d;
    sid_model *m;
    double *theta;
    load_model(path, &d, &m, &theta);
    ck_assert_int_eq(link_of(&d, "body1")->has_mass, 1);
    ck_assert_int_eq(link_of(&d, "fore_arm")->has_mass, 1);
    ck_assert_double_eq(joint_of(&d, "body1_joint0")->viscous, 0.5);
    sid_joint_desc *e = (sid_joint_desc *)joint_of(&d, "elbow_pitch");
    e->viscous = 0.25;
    ((sid_joint_desc *)joint_of(&d, "body1_joint0"))->viscous = 0.75;
    size_t outlen;
    sid_error err = { 0 };
    char *out = export_into(path, &d, &outlen, NULL, &err);
    ck_assert_msg(out != NULL, "%s", err.msg);
    ck_assert_msg(strstr(out, "<joint axis=\"0 1 0\" damping=\"0.75\"/>") != NULL, "%s", out);
    ck_assert_msg(strstr(out, "<joint name=\"elbow.pitch\" axis=\"0 1 0\" damping=\"0.25\"/>") != NULL, "%s", out);
    free(out);
    sid_free(theta);
    sid_model_free(m);
    robot_desc_free(&d);
}
END_TEST

/* Gravity, the ground plane and contact spheres go to <option>, the plane and the sphere geoms. */
START_TEST(test_export_contact)
{
    const char *path = "fixtures/mjcf/include_main.xml";
    sid_robot_desc d;
    sid_model *m;
    double *theta;
    load_model(path, &d, &m, &theta);
    d.ground.height = -0.25, d.ground.friction = 0.6;
    d.gravity[2] = -9.8;       /* the file has no <option>: not representable */
    d.sphere[0].radius = 0.03;  /* defined in the included file: not written */
    size_t outlen;
    sid_error err = { 0 };
    char *log = NULL, *out = export_into(path, &d, &outlen, &log, &err);
    ck_assert_msg(out != NULL, "%s", err.msg);
    ck_assert_msg(strstr(out, "<geom name=\"floor\" type=\"plane\" size=\"2 2 0.1\" pos=\"0 0 -0.25\" friction=\"0.6\"/>") != NULL,
                  "%s", out);
    ck_assert_msg(strstr(log, "gravity[2] = -9.8  (the file has no <option>)") != NULL, "%s", log);
    ck_assert_msg(strstr(log, "contact.spheres.foot1.radius = 0.03 (defined in fixtures/mjcf/include_body.xml, line 5)") != NULL,
                  "%s", log);
    free(out), free(log);
    sid_free(theta);
    sid_model_free(m);
    robot_desc_free(&d);

    path = "fixtures/mjcf/classes.xml";   /* has an <option gravity="0 0.5 -9.7"> */
    load_model(path, &d, &m, &theta);
    d.gravity[0] = 0.25;
    out = export_into(path, &d, &outlen, NULL, &err);
    ck_assert_msg(out != NULL, "%s", err.msg);
    ck_assert_msg(strstr(out, "<option gravity=\"0.25 0.5 -9.7\"/>") != NULL, "%s", out);
    free(out);
    sid_free(theta);
    sid_model_free(m);
    robot_desc_free(&d);
}
END_TEST

/* What MJCF cannot hold is listed under one heading; what an include defines, as not written. */
START_TEST(test_export_not_representable)
{
    const char *path = "fixtures/mjcf/include_main.xml";
    sid_robot_desc d;
    sid_model *m;
    double *theta;
    load_model(path, &d, &m, &theta);
    sid_joint_desc *h = NULL;
    for (int i = 0; i < d.njoint; i++)
        if (strcmp(d.joint[i].name, "hinge") == 0) h = &d.joint[i];
    ck_assert_ptr_nonnull(h);
    h->smoothing = 0.02, h->offset = 0.1, h->torque_bias = 0.5;
    h->viscous = 0.7;   /* defined (as MuJoCo's default) on an element of the included file */
    d.ground.stiffness = 2e4;
    size_t outlen, len;
    sid_error err = { 0 };
    char *log = NULL, *out = export_into(path, &d, &outlen, &log, &err), *text = slurp(path, &len);
    ck_assert_msg(out != NULL, "%s", err.msg);
    ck_assert_msg(outlen == len && memcmp(out, text, len) == 0, "nothing MJCF can take: the file unchanged");
    ck_assert_msg(strstr(log, "not representable in MJCF (kept in FITTED.json only):") != NULL, "%s", log);
    ck_assert_msg(strstr(log, "joints.hinge.friction.smoothing = 0.02") != NULL, "%s", log);
    ck_assert_msg(strstr(log, "joints.hinge.offset = 0.1") != NULL, "%s", log);
    ck_assert_msg(strstr(log, "joints.hinge.torque_bias = 0.5") != NULL, "%s", log);
    ck_assert_msg(strstr(log, "contact.ground.stiffness = 20000") != NULL, "%s", log);
    ck_assert_msg(strstr(log, "joints.hinge.friction.viscous = 0.7 (defined in fixtures/mjcf/include_body.xml, line 8)") != NULL,
                  "%s", log);
    free(out), free(log), free(text);
    /* a different structure is an error */
    snprintf(h->name, sizeof h->name, "elbow");
    ck_assert_ptr_null(export_into(path, &d, &outlen, NULL, &err));
    ck_assert_msg(strstr(err.msg, "joint 'elbow' of the fitted robot is not in the file") != NULL, "%s", err.msg);
    sid_free(theta);
    sid_model_free(m);
    robot_desc_free(&d);
}
END_TEST

Suite *mjcf_suite(void)
{
    Suite *s = suite_create("mjcf");
    TCase *tc = tcase_create("mujoco");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_against_mujoco, 0, NFILE);
    suite_add_tcase(s, tc);
    tc = tcase_create("import");
    tcase_add_test(tc, test_fields);
    tcase_add_test(tc, test_keyframes_match_mujoco);
    tcase_add_test(tc, test_mesh_inertia_matches_mujoco);
    tcase_add_test(tc, test_limits_in_degrees);
    tcase_add_test(tc, test_import_warnings);
    tcase_add_loop_test(tc, test_bad_input, 0, (int)(sizeof bad / sizeof bad[0]));
    suite_add_tcase(s, tc);
    tc = tcase_create("export");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_export_unchanged, 0, NFILE);
    tcase_add_loop_test(tc, test_export_round_trip, 0, 2 * (int)(sizeof rt_files / sizeof rt_files[0]));
    tcase_add_test(tc, test_export_classes);
    tcase_add_test(tc, test_export_not_representable);
    tcase_add_test(tc, test_export_contact);
    tcase_add_test(tc, test_names);
    suite_add_tcase(s, tc);
    return s;
}
