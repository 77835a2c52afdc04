/* mesh.h — triangle meshes from STL and OBJ files, and their mass properties.
 *
 * MuJoCo computes the inertia of a body from its geoms, mesh geoms included: as a solid of
 * uniform density (the volume the closed surface bounds) or, with shellinertia, as a thin
 * shell of uniform area density. Both are exact integrals over the triangles here.
 */
#ifndef CLI_MESH_H
#define CLI_MESH_H

#include "sid.h"

typedef struct {
    int nvert, ntri;
    double *vert;   /* nvert x 3 */
    int *tri;       /* ntri x 3, 0-based, counter-clockwise seen from outside */
    char *name;     /* for messages: the file's path (malloc'ed, freed by mesh_free); NULL: "mesh" */
} mesh;

void mesh_free(mesh *m);

/* Read the mesh file at path, recognised by its content, not its name: binary STL (its size is
 * 84 + 50 n bytes for the n triangles its header counts, even when the header starts with
 * "solid"), ASCII STL ("solid ... endsolid") or Wavefront OBJ (v and f records; polygons are
 * split into fans of triangles). STL repeats a vertex in every triangle that has it; equal
 * points are made one vertex, so that neighbouring triangles share their edges. Vertices are
 * multiplied by scale per axis (NULL: 1, 1, 1). 0, or -1 with err set (SID_ERR_INPUT:
 * "PATH:LINE: what was expected" for text formats; SID_ERR_NOMEM). */
int mesh_load(const char *path, const double scale[3], mesh *out, sid_error *err);

/* Mass properties per unit density (solid: mass = volume) or per unit area density (shell:
 * mass = area). inertia is about com: ixx iyy izz ixy ixz iyz, products as the tensor holds
 * them (ixy = -integral of x y dm), as URDF's <inertia> and MuJoCo's fullinertia. */
typedef struct {
    double volume, area, com[3], inertia[6];
} mesh_mass;

/* The solid the mesh bounds. The mesh must be closed: every edge shared by exactly two
 * triangles that run along it in opposite directions. A mesh whose triangles all face inward
 * (a negative volume) is taken as turned outward, as MuJoCo does. -1 with err set
 * (SID_ERR_INPUT) for an open mesh (naming how many edges are open) or a zero volume. */
int mesh_solid(const mesh *m, mesh_mass *out, sid_error *err);

/* The triangles as a thin shell (open meshes too); volume is 0. -1 for a zero area. */
int mesh_shell(const mesh *m, mesh_mass *out, sid_error *err);

#endif
