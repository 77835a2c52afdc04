/* test_mesh.c — mesh files (io/mesh.h) and their mass properties against closed forms.
 *
 * Every mesh is written here, into a temporary directory that the suite removes: a unit cube
 * as binary STL, ASCII STL and OBJ (the same numbers from each), a box made from it by the
 * scale, a tetrahedron, fine icospheres (solid and shell), and broken files whose messages
 * must name the file, the line and what was wrong.
 */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mesh.h"

Suite *mesh_suite(void);

/* ---- the temporary directory ----------------------------------------------------------------- */

static char tmpdir[] = "/tmp/sysid_meshes_XXXXXX";

static void make_tmpdir(void)
{
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void remove_tmpdir(void)
{
    DIR *d = opendir(tmpdir);
    if (!d) return;
    char p[300];
    for (struct dirent *e; (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(p, sizeof p, "%s/%s", tmpdir, e->d_name);
        unlink(p);
    }
    closedir(d);
    rmdir(tmpdir);
}

/* tmpdir/name into p (200 bytes) */
static const char *in_tmp(char *p, const char *name)
{
    snprintf(p, 200, "%s/%s", tmpdir, name);
    return p;
}

/* ---- writing meshes -------------------------------------------------------------------------- */

static FILE *create(const char *path)
{
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "%s: cannot create", path);
    return f;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = create(path);
    fputs(text, f);
    fclose(f);
}

static void put_le32(FILE *f, unsigned long u)
{
    for (int i = 0; i < 4; i++) fputc((int)(u >> 8 * i & 0xff), f);
}

static void put_float(FILE *f, double x)
{
    float v = (float)x;
    unsigned long u = 0;
    unsigned char b[4];
    memcpy(b, &v, 4);   /* the host's order; the test machines are little-endian, as STL */
    for (int i = 3; i >= 0; i--) u = u << 8 | b[i];
    put_le32(f, u);
}

/* A triangle soup: ntri x 3 corners x 3 coordinates. */
static void write_binary_stl(const char *path, const char *header, const double *soup, int ntri)
{
    FILE *f = create(path);
    char h[80] = { 0 };
    memcpy(h, header, strlen(header) < sizeof h ? strlen(header) : sizeof h);
    fwrite(h, 1, 80, f);
    put_le32(f, (unsigned long)ntri);
    for (int t = 0; t < ntri; t++) {
        for (int i = 0; i < 3; i++) put_float(f, 0);   /* the normal, which readers ignore */
        for (int i = 0; i < 9; i++) put_float(f, soup[9 * t + i]);
        fputc(0, f), fputc(0, f);
    }
    fclose(f);
}

static void write_ascii_stl(const char *path, const double *soup, int ntri)
{
    FILE *f = create(path);
    fprintf(f, "solid test\n");
    for (int t = 0; t < ntri; t++) {
        fprintf(f, "  facet normal 0 0 0\n    outer loop\n");
        for (int k = 0; k < 3; k++)
            fprintf(f, "      vertex %.17g %.17g %.17g\n", soup[9 * t + 3 * k], soup[9 * t + 3 * k + 1], soup[9 * t + 3 * k + 2]);
        fprintf(f, "    endloop\n  endfacet\n");
    }
    fprintf(f, "endsolid test\n");
    fclose(f);
}

/* ---- the unit cube [0, 1]^3: vertex x + 2y + 4z, faces counter-clockwise seen from outside ---- */

static const int cube_quad[6][4] = {
    { 0, 4, 6, 2 }, { 1, 3, 7, 5 },   /* x = 0, x = 1 */
    { 0, 1, 5, 4 }, { 2, 6, 7, 3 },   /* y = 0, y = 1 */
    { 0, 2, 3, 1 }, { 4, 5, 7, 6 },   /* z = 0, z = 1 */
};

static void cube_vertex(int v, double p[3])
{
    p[0] = v & 1, p[1] = v >> 1 & 1, p[2] = v >> 2 & 1;
}

/* The cube's first nface faces as 2 nface triangles (fans a b c, a c d); flip: clockwise. */
static int cube_soup(double *soup, int nface, int flip)
{
    int n = 0;
    for (int q = 0; q < nface; q++)
        for (int t = 0; t < 2; t++) {
            int v[3] = { cube_quad[q][0], cube_quad[q][1 + t], cube_quad[q][2 + t] };
            if (flip) v[1] ^= v[2], v[2] ^= v[1], v[1] ^= v[2];
            for (int k = 0; k < 3; k++) cube_vertex(v[k], soup + 9 * n + 3 * k);
            n++;
        }
    return n;
}

/* The cube as OBJ quads, its faces' vertices in each form OBJ has (a, a/t, a/t/n, a//n; every
 * other face counted back from the last vertex), among records that are not geometry. */
static void write_cube_obj(const char *path, int flip)
{
    static const char *const form[4] = { "%d", "%d/1", "%d/1/1", "%d//1" };
    FILE *f = create(path);
    fprintf(f, "# a unit cube\nmtllib cube.mtl\no cube\n");
    for (int v = 0; v < 8; v++) {
        double p[3];
        cube_vertex(v, p);
        fprintf(f, "v %g %g %g\n", p[0], p[1], p[2]);
    }
    fprintf(f, "vt 0 0\nvn 0 0 1\ng sides\nusemtl grey\ns off\n");
    for (int q = 0; q < 6; q++) {
        fprintf(f, "f");
        for (int k = 0; k < 4; k++) {
            int v = cube_quad[q][flip ? 3 - k : k] + 1;
            fprintf(f, " ");
            fprintf(f, form[(q + k) % 4], q % 2 ? v - 9 : v);
        }
        fprintf(f, "   # face %d\n", q);
    }
    fclose(f);
}

/* ---- checking ------------------------------------------------------------------------------- */

static mesh load(const char *path, const double *scale)
{
    mesh m;
    sid_error err = { 0 };
    ck_assert_msg(mesh_load(path, scale, &m, &err) == 0, "%s", err.msg);
    return m;
}

static mesh_mass solid(const mesh *m)
{
    mesh_mass mm;
    sid_error err = { 0 };
    ck_assert_msg(mesh_solid(m, &mm, &err) == 0, "%s", err.msg);
    return mm;
}

static mesh_mass shell(const mesh *m)
{
    mesh_mass mm;
    sid_error err = { 0 };
    ck_assert_msg(mesh_shell(m, &mm, &err) == 0, "%s", err.msg);
    return mm;
}

/* got against the expected size (volume, or area for a shell), centre and inertia: the size
 * relative to itself, the centre relative to the body's extent len, the inertia relative to
 * its largest moment. */
static void check_mass(const char *what, const mesh_mass *g, int is_solid, double size, const double com[3],
                       const double inertia[6], double len, double tol)
{
    double got = is_solid ? g->volume : g->area, imax = 0;
    ck_assert_msg(fabs(got - size) <= tol * size, "%s: %s %.17g, expected %.17g", what, is_solid ? "volume" : "area",
                  got, size);
    for (int i = 0; i < 3; i++)
        ck_assert_msg(fabs(g->com[i] - com[i]) <= tol * len, "%s: com[%d] %.17g, expected %.17g", what, i, g->com[i],
                      com[i]);
    for (int p = 0; p < 3; p++) imax = fmax(imax, fabs(inertia[p]));
    for (int p = 0; p < 6; p++)
        ck_assert_msg(fabs(g->inertia[p] - inertia[p]) <= tol * imax, "%s: inertia[%d] %.17g, expected %.17g", what, p,
                      g->inertia[p], inertia[p]);
}

/* A solid box [0, a] x [0, b] x [0, c] of unit density: m (b^2 + c^2) / 12, ... about its centre. */
static void check_box(const char *what, const mesh_mass *g, double a, double b, double c)
{
    const double m = a * b * c, com[3] = { a / 2, b / 2, c / 2 };
    const double I[6] = { m * (b * b + c * c) / 12, m * (a * a + c * c) / 12, m * (a * a + b * b) / 12, 0, 0, 0 };
    check_mass(what, g, 1, m, com, I, fmax(a, fmax(b, c)), 1e-12);
}

/* ---- solids ---------------------------------------------------------------------------------- */

START_TEST(test_cube_three_formats)
{
    char p[3][200];
    double soup[12 * 9];
    int n = cube_soup(soup, 6, 0);
    /* a binary STL whose header starts as an ASCII one does: its size tells them apart */
    write_binary_stl(in_tmp(p[0], "cube_bin.stl"), "solid cube, but binary", soup, n);
    write_ascii_stl(in_tmp(p[1], "cube_ascii.stl"), soup, n);
    write_cube_obj(in_tmp(p[2], "cube.obj"), 0);
    const double box[3] = { 1, 2, 3 };
    mesh_mass first = { 0 };
    for (int f = 0; f < 3; f++) {
        mesh m = load(p[f], NULL);
        /* STL's 36 corners are the cube's 8 vertices again: its edges are shared */
        ck_assert_int_eq(m.nvert, 8);
        ck_assert_int_eq(m.ntri, 12);
        mesh_mass g = solid(&m);
        check_box(p[f], &g, 1, 1, 1);
        ck_assert_msg(fabs(g.area - 6) < 1e-12, "%s: area %.17g", p[f], g.area);
        if (f == 0) first = g;
        /* the same triangles in the same order: the same numbers to the last bit */
        ck_assert_msg(!memcmp(&g, &first, sizeof g), "%s: not the numbers of %s", p[f], p[0]);
        mesh_free(&m);
        ck_assert_ptr_null(m.vert);
        m = load(p[f], box);
        g = solid(&m);
        check_box(p[f], &g, 1, 2, 3);
        mesh_free(&m);
    }
}
END_TEST

START_TEST(test_inward_faces)
{
    char p[200], q[200];
    double soup[12 * 9];
    write_cube_obj(in_tmp(p, "inward.obj"), 1);
    write_binary_stl(in_tmp(q, "inward.stl"), "inward", soup, cube_soup(soup, 6, 1));
    const double scale[3] = { 2, 0.5, 3 };
    for (int f = 0; f < 2; f++) {
        mesh m = load(f ? q : p, scale);
        mesh_mass g = solid(&m);
        check_box(f ? q : p, &g, 2, 0.5, 3);
        mesh_free(&m);
    }
}
END_TEST

/* Tonon 2004, "Explicit exact formulas for the 3-D tetrahedron inertia tensor in terms of its
 * vertex coordinates": with coordinates relative to the centroid and |J| = 6 V,
 *   Ixx = |J| / 60 (sum over k <= l of (y_k y_l + z_k z_l)),
 *   the product of y and z, a' = |J| / 120 (sum over k of 2 y_k z_k + sum over k != l of y_k z_l),
 * and the tensor holds -a'. */
static double tonon_moment(const double u[4])
{
    double s = 0;
    for (int k = 0; k < 4; k++)
        for (int l = k; l < 4; l++) s += u[k] * u[l];
    return s / 60;
}

static double tonon_product(const double u[4], const double w[4])
{
    double s = 0;
    for (int k = 0; k < 4; k++)
        for (int l = 0; l < 4; l++) s += (k == l ? 2 : 1) * u[k] * w[l];
    return s / 120;
}

START_TEST(test_tetrahedron)
{
    /* far from the origin, no face along an axis */
    const double P[4][3] = { { 10.2, -3.1, 7.3 }, { 11.9, -2.6, 7.1 }, { 10.5, -0.4, 7.9 }, { 10.9, -2.2, 9.8 } };
    double e[3][3], soup[4 * 9], com[3] = { 0 }, c[3][4];
    for (int k = 1; k < 4; k++)
        for (int i = 0; i < 3; i++) e[k - 1][i] = P[k][i] - P[0][i];
    double det = e[0][0] * (e[1][1] * e[2][2] - e[1][2] * e[2][1]) - e[0][1] * (e[1][0] * e[2][2] - e[1][2] * e[2][0]) +
                 e[0][2] * (e[1][0] * e[2][1] - e[1][1] * e[2][0]);
    /* the face opposite vertex k, turned to face away from it (det > 0: 1 2 3 runs
     * counter-clockwise seen from outside, and 0 is behind it) */
    static const int face[4][3] = { { 1, 2, 3 }, { 0, 3, 2 }, { 0, 1, 3 }, { 0, 2, 1 } };
    for (int f = 0; f < 4; f++)
        for (int k = 0; k < 3; k++) {
            int v = face[f][det > 0 ? k : 2 - k];
            memcpy(soup + 9 * f + 3 * k, P[v], sizeof P[v]);
        }
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < 3; i++) com[i] += P[k][i] / 4;
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < 3; i++) c[i][k] = P[k][i] - com[i];
    const double J = fabs(det);
    const double I[6] = {
        J * (tonon_moment(c[1]) + tonon_moment(c[2])), J * (tonon_moment(c[0]) + tonon_moment(c[2])),
        J * (tonon_moment(c[0]) + tonon_moment(c[1])), -J * tonon_product(c[0], c[1]),
        -J * tonon_product(c[0], c[2]),                -J * tonon_product(c[1], c[2]),
    };
    char p[200];
    write_ascii_stl(in_tmp(p, "tet.stl"), soup, 4);
    mesh m = load(p, NULL);
    ck_assert_int_eq(m.nvert, 4);
    mesh_mass g = solid(&m);
    check_mass("tetrahedron", &g, 1, J / 6, com, I, 2, 1e-12);
    /* the products are not small here: a wrong sign would show */
    ck_assert(fabs(I[3]) > 0.01 * I[0] && fabs(I[4]) > 0.01 * I[0] && fabs(I[5]) > 0.01 * I[0]);
    mesh_free(&m);
}
END_TEST

/* ---- spheres --------------------------------------------------------------------------------- */

enum { ICO_LEVELS = 5, ICO_TRI = 20 << 2 * ICO_LEVELS };

static void to_sphere(double *p, const double c[3], double r)
{
    double n = sqrt((p[0] - c[0]) * (p[0] - c[0]) + (p[1] - c[1]) * (p[1] - c[1]) + (p[2] - c[2]) * (p[2] - c[2]));
    for (int i = 0; i < 3; i++) p[i] = c[i] + r * (p[i] - c[i]) / n;
}

/* An icosahedron about c, each triangle split into four ICO_LEVELS times, the new corners
 * moved out onto the sphere of radius r. A midpoint is computed from its edge's two ends
 * in the same way by both triangles that share the edge: the same point, bit for bit. */
static double *icosphere(const double c[3], double r)
{
    const double t = (1 + sqrt(5)) / 2;
    const double v[12][3] = { { -1, t, 0 }, { 1, t, 0 }, { -1, -t, 0 }, { 1, -t, 0 }, { 0, -1, t }, { 0, 1, t },
                              { 0, -1, -t }, { 0, 1, -t }, { t, 0, -1 }, { t, 0, 1 }, { -t, 0, -1 }, { -t, 0, 1 } };
    static const int f[20][3] = { { 0, 11, 5 }, { 0, 5, 1 },  { 0, 1, 7 },   { 0, 7, 10 }, { 0, 10, 11 },
                                  { 1, 5, 9 },  { 5, 11, 4 }, { 11, 10, 2 }, { 10, 7, 6 }, { 7, 1, 8 },
                                  { 3, 9, 4 },  { 3, 4, 2 },  { 3, 2, 6 },   { 3, 6, 8 },  { 3, 8, 9 },
                                  { 4, 9, 5 },  { 2, 4, 11 }, { 6, 2, 10 },  { 8, 6, 7 },  { 9, 8, 1 } };
    double *s = malloc(ICO_TRI * 9 * sizeof *s), *next = malloc(ICO_TRI * 9 * sizeof *next);
    ck_assert(s && next);
    for (int k = 0; k < 20 * 3; k++) {
        for (int i = 0; i < 3; i++) s[3 * k + i] = c[i] + v[f[k / 3][k % 3]][i];
        to_sphere(s + 3 * k, c, r);
    }
    for (int level = 0, n = 20; level < ICO_LEVELS; level++, n *= 4) {
        for (int tri = 0; tri < n; tri++) {
            const double *a = s + 9 * tri, *b = a + 3, *cc = a + 6;
            double m[3][3];   /* midpoints of ab, bc, ca */
            for (int i = 0; i < 3; i++) {
                m[0][i] = (a[i] + b[i]) / 2, m[1][i] = (b[i] + cc[i]) / 2, m[2][i] = (cc[i] + a[i]) / 2;
            }
            for (int k = 0; k < 3; k++) to_sphere(m[k], c, r);
            const double *out[4][3] = { { a, m[0], m[2] }, { m[0], b, m[1] }, { m[2], m[1], cc }, { m[0], m[1], m[2] } };
            for (int q = 0; q < 4; q++)
                for (int k = 0; k < 3; k++) memcpy(next + 9 * (4 * tri + q) + 3 * k, out[q][k], 3 * sizeof(double));
        }
        double *x = s;
        s = next, next = x;
    }
    free(next);
    return s;
}

/* Measured for r = 0.3 after 5 subdivisions (20480 triangles): the inscribed solid misses
 * 5.4e-4 of the ball's volume and 9.0e-4 of its inertia (2/5 m r^2 with the ball's m); the
 * shell 3.0e-4 of the sphere's area and 6.6e-4 of its inertia (2/3 m r^2). Each shrinks about
 * fourfold per subdivision (the error of an inscribed mesh, of order of the edge squared). The
 * bound is 1e-3; the centre is exact but for rounding (the mesh is symmetric about it). */
START_TEST(test_icosphere)
{
    const double c[3] = { 1.5, -2, 0.25 }, r = 0.3, tol = 1e-3;
    double *soup = icosphere(c, r);
    char p[200];
    write_ascii_stl(in_tmp(p, "sphere.stl"), soup, ICO_TRI);
    free(soup);
    mesh m = load(p, NULL);
    ck_assert_int_eq(m.nvert, 10 * (1 << 2 * ICO_LEVELS) + 2);   /* Euler: V = F / 2 + 2 */
    mesh_mass g = solid(&m), h = shell(&m);
    const double pi = acos(-1), vol = 4 * pi * r * r * r / 3, area = 4 * pi * r * r;
    const double Is = 0.4 * vol * r * r, Ih = 2 * area * r * r / 3;
    const double I_solid[6] = { Is, Is, Is, 0, 0, 0 }, I_shell[6] = { Ih, Ih, Ih, 0, 0, 0 };
    check_mass("solid sphere", &g, 1, vol, c, I_solid, r, tol);
    check_mass("spherical shell", &h, 0, area, c, I_shell, r, tol);
    /* ... and the error is a real one: the inscribed mesh is smaller than the sphere */
    ck_assert(g.volume < vol && g.inertia[0] < Is && h.area < area && h.inertia[0] < Ih);
    for (int i = 0; i < 3; i++) ck_assert(fabs(g.com[i] - c[i]) < 1e-12 && fabs(h.com[i] - c[i]) < 1e-12);
    mesh_free(&m);
}
END_TEST

/* ---- shells ---------------------------------------------------------------------------------- */

/* A box shell of sides a, b, c about its centre, per unit area: integral of y^2 + z^2 over its
 * faces. The two faces x = +-a/2 (b by c) give 2 bc (b^2 + c^2) / 12; the two y = +-b/2 (a by c),
 * where y^2 = b^2 / 4, give 2 ac (b^2 / 4 + c^2 / 12); the two z = +-c/2 likewise
 * 2 ab (b^2 / 12 + c^2 / 4). For the unit cube: 1/3 + 2/3 + 2/3 = 5/3. */
static double box_shell_ixx(double a, double b, double c)
{
    return b * c * (b * b + c * c) / 6 + a * c * (b * b / 2 + c * c / 6) + a * b * (b * b / 6 + c * c / 2);
}

START_TEST(test_box_shell)
{
    char p[200];
    write_cube_obj(in_tmp(p, "shell.obj"), 0);
    mesh m = load(p, NULL);
    mesh_mass g = shell(&m);
    const double com[3] = { 0.5, 0.5, 0.5 }, I[6] = { 5.0 / 3, 5.0 / 3, 5.0 / 3, 0, 0, 0 };
    ck_assert_double_eq_tol(box_shell_ixx(1, 1, 1), 5.0 / 3, 1e-15);
    check_mass("cube shell", &g, 0, 6, com, I, 1, 1e-12);
    ck_assert(g.volume == 0);
    mesh_free(&m);

    const double s[3] = { 1, 2, 3 }, box_com[3] = { 0.5, 1, 1.5 };
    m = load(p, s);
    g = shell(&m);
    const double J[6] = { box_shell_ixx(1, 2, 3), box_shell_ixx(2, 3, 1), box_shell_ixx(3, 1, 2), 0, 0, 0 };
    check_mass("box shell", &g, 0, 2 * (1 * 2 + 2 * 3 + 3 * 1), box_com, J, 3, 1e-12);
    mesh_free(&m);
}
END_TEST

/* ---- errors ---------------------------------------------------------------------------------- */

START_TEST(test_open_mesh)
{
    char p[200];
    double soup[10 * 9];
    write_binary_stl(in_tmp(p, "open.stl"), "a cube without its top", soup, cube_soup(soup, 5, 0));
    mesh m = load(p, NULL);
    mesh_mass g;
    sid_error err = { 0 };
    ck_assert_int_eq(mesh_solid(&m, &g, &err), -1);
    ck_assert_int_eq(err.status, SID_ERR_INPUT);
    ck_assert_msg(strstr(err.msg, p) && strstr(err.msg, "the mesh is open: 4 open edges (in one triangle only)"), "%s",
                  err.msg);
    /* A shell need not be closed. Five unit faces: the floor at z = 0 and four walls centred at
     * z = 1/2 put the centre at z = 2/5. About it, with x' = x - 1/2, z' = z - 2/5 and
     * int_0^1 z'^2 dz = (0.6^3 + 0.4^3) / 3 = 0.28 / 3: Izz = 1/6 (floor) + 4 (1/4 + 1/12)
     * (walls) = 3/2; Ixx = (1/12 + 0.16) (floor) + 2 (1/12 + 0.28/3) (walls x = 0, 1)
     * + 2 (1/4 + 0.28/3) (walls y = 0, 1) = 3/4 + 8/15 = 77/60. */
    g = shell(&m);
    const double com[3] = { 0.5, 0.5, 0.4 }, I[6] = { 77.0 / 60, 77.0 / 60, 1.5, 0, 0, 0 };
    check_mass("open box shell", &g, 0, 5, com, I, 1, 1e-12);
    mesh_free(&m);
}
END_TEST

START_TEST(test_missing_and_truncated)
{
    char p[200];
    mesh m;
    sid_error err = { 0 };
    ck_assert_int_eq(mesh_load(in_tmp(p, "missing.stl"), NULL, &m, &err), -1);
    ck_assert_msg(strstr(err.msg, p) && strstr(err.msg, "cannot open"), "%s", err.msg);
    ck_assert(m.vert == NULL && m.tri == NULL && m.ntri == 0);

    double soup[12 * 9];
    write_binary_stl(in_tmp(p, "cut.stl"), "solid cube, binary and cut short", soup, cube_soup(soup, 6, 0));
    ck_assert_int_eq(truncate(p, 84 + 50 * 12 - 7), 0);
    ck_assert_int_eq(mesh_load(p, NULL, &m, &err), -1);
    ck_assert_msg(strstr(err.msg, p) && strstr(err.msg, "truncated binary STL: its header counts 12 triangles"), "%s",
                  err.msg);
}
END_TEST

START_TEST(test_obj_index_out_of_range)
{
    char p[200], want[300];
    write_text(in_tmp(p, "mesh.obj"), "# eight vertices, a face beyond them on line 12\n"
                                      "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nv 0 0 1\nv 1 0 1\nv 0 1 1\nv 1 1 1\n"
                                      "\n"
                                      "f 1 2 3\n"
                                      "f 5/1/1 6/1/1 9/1/1\n");
    mesh m;
    sid_error err = { 0 };
    ck_assert_int_eq(mesh_load(p, NULL, &m, &err), -1);
    snprintf(want, sizeof want, "%s:12: f: expected vertex indices 1..8, got 9", p);
    ck_assert_str_eq(err.msg, want);
}
END_TEST

/* Files that do not load (solid 0), or load and are refused as solids (solid 1). */
static const struct {
    const char *text, *msg;
    int solid;
} bad[] = {
    { "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2\n", ":4: f: expected at least 3 vertices, got 2", 0 },
    { "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 -4\n", ":4: f: expected vertex indices 1..3 or -3..-1, got -4", 0 },
    { "f 1 2 3\n", ":1: f: vertex 1 before any 'v' record", 0 },
    { "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 x 3\n", ":4: f: expected a vertex index, got 'x'", 0 },
    { "v 0 0 0\nv 1 0 nan\n", ":2: v: nan is not a finite number", 0 },
    { "v 0 0 0\nv 1 0\n", ":2: v: expected 3 coordinates, got 2", 0 },
    { "v 0 0 0  # only a vertex\n", "no triangles", 0 },
    { "solid t\nfacet normal 0 0 1\n outer loop\n  vertex 0 0 0\n  vertex 1 0 0\n  vertex 0 1 inf\n",
      ":6: vertex: inf is not a finite number", 0 },
    { "solid t\nfacet normal 0 0 1\n outer loop\n  vertex 0 0 0\n  vertex 1 0\n endloop\n",
      ":6: vertex: expected a number, got 'endloop'", 0 },
    { "solid t\nfacet normal 0 0 1\n outer loop\n  vertex 0 0 0\n  vertex 1 0 0\n  vertex 0 1 0\n endloop\nendfacet\n",
      ":8: expected 'facet' or 'endsolid', got the end of the file", 0 },
    { "solid t\nendsolid t\n", "no triangles", 0 },
    /* one triangle, both ways: closed, but flat */
    { "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\nf 1 3 2\n", "the mesh encloses no volume", 1 },
    /* a cube with its top turned over: no open edge, four that run the same way twice */
    { "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nv 0 0 1\nv 1 0 1\nv 0 1 1\nv 1 1 1\n"
      "f 1 5 7 3\nf 2 4 8 6\nf 1 2 6 5\nf 3 7 8 4\nf 1 3 4 2\nf 5 7 8 6\n",
      "not a closed surface: 4 edges that both triangles run the same way, of 18 edges", 1 },
};

START_TEST(test_bad_file)
{
    char p[200], name[32];
    snprintf(name, sizeof name, "bad%d.txt", _i);
    write_text(in_tmp(p, name), bad[_i].text);
    mesh m;
    sid_error err = { 0 };
    int rc = mesh_load(p, NULL, &m, &err);
    if (bad[_i].solid) {
        ck_assert_msg(rc == 0, "%s", err.msg);
        mesh_mass g;
        rc = mesh_solid(&m, &g, &err);
        mesh_free(&m);
    }
    ck_assert_int_eq(rc, -1);
    ck_assert_int_eq(err.status, SID_ERR_INPUT);
    ck_assert_msg(strncmp(err.msg, p, strlen(p)) == 0 && strstr(err.msg, bad[_i].msg), "file %d: got \"%s\", expected \"%s\"",
                  _i, err.msg, bad[_i].msg);
}
END_TEST

Suite *mesh_suite(void)
{
    Suite *s = suite_create("mesh");
    TCase *tc = tcase_create("mesh");
    tcase_add_unchecked_fixture(tc, make_tmpdir, remove_tmpdir);
    tcase_add_test(tc, test_cube_three_formats);
    tcase_add_test(tc, test_inward_faces);
    tcase_add_test(tc, test_tetrahedron);
    tcase_add_test(tc, test_icosphere);
    tcase_add_test(tc, test_box_shell);
    tcase_add_test(tc, test_open_mesh);
    tcase_add_test(tc, test_missing_and_truncated);
    tcase_add_test(tc, test_obj_index_out_of_range);
    tcase_add_loop_test(tc, test_bad_file, 0, (int)(sizeof bad / sizeof bad[0]));
    suite_add_tcase(s, tc);
    return s;
}
