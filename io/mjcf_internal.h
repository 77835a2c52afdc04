/* mjcf_internal.h — what the MJCF reader knows about a file, shared by import and export.
 *
 * mjcf_read turns the document (with its <include>s) into a list of bodies and joints as
 * sysid will see them, and remembers for every number where it was defined: the element
 * itself or the <default> element of the class that gave it. Import prints that as
 * robot.json (mjcf_json.c); export finds there the attribute a fitted value goes back to.
 *
 * Frames: every MuJoCo body has its body frame (pos, quat in the parent body's frame). sysid's
 * link of the body is the body frame translated by off (in body axes): the anchor of the body's
 * last joint, about which sysid's joint rotates. Inertias are kept in body axes about the COM.
 */
#ifndef CLI_MJCF_INTERNAL_H
#define CLI_MJCF_INTERNAL_H

#include <stddef.h>

#include <libxml/tree.h>

#include "sid.h"
#include "mesh.h"

enum { MJ_HINGE, MJ_SLIDE, MJ_FREE };
enum { MJ_INERTIA_NONE, MJ_INERTIA_ELEMENT, MJ_INERTIA_GEOMS };

typedef struct {
    char name[SID_MAX_NAME];
    xmlNode *node;               /* the <default> element */
    int parent;                  /* class index, -1 for main */
} mjcf_class;

typedef struct {
    xmlNode *node;               /* <body>, NULL for the world */
    char name[SID_MAX_NAME];     /* sanitised, or body<id> */
    int parent;                  /* body index, -1 for the world */
    int childclass;              /* class its elements default to */
    int is_static;               /* welded to the world through welded bodies only */
    double pos[3], quat[4];      /* body frame in the parent's body frame */
    double off[3];               /* link frame origin in the body frame */
    int inertia_from;            /* MJ_INERTIA_* */
    xmlNode *inertial;           /* the <inertial> element when inertia_from is ELEMENT */
    double mass, com[3], I[6];   /* com in the body frame; I about it in body axes (ixx iyy izz ixy ixz iyz) */
    int jnt0, njnt;              /* its joints: jnt[jnt0 .. jnt0 + njnt - 1] */
} mjcf_body;

typedef struct {
    xmlNode *node;               /* <joint> or <freejoint> */
    char name[SID_MAX_NAME];
    int body, cls, type;
    double pos[3], axis[3];      /* anchor and axis in the body frame */
    double damping, armature, frictionloss;
    int limited;
    double range[2];             /* [rad or m] */
    /* where each was given: the element, a <default>'s <joint>, or NULL (MuJoCo's default) */
    xmlNode *src_damping, *src_armature, *src_frictionloss, *src_range;
    int motor;                   /* 1: a <motor> or a servo on this joint */
    xmlNode *act, *src_gear;     /* the actuator element, and where its gear was given */
    double gear;
    /* a servo (a <position>, <velocity>, or PD <general>): SID_MOTOR_POSITION or _VELOCITY, 0
     * for a <motor>; its gains, the element that gave kd when a <velocity> was merged into a
     * <position> (else act), and a torque limit from forcerange where forcelimited */
    int servo;
    double kp, kd;
    xmlNode *act_kd;
    int has_limit;
    double limit;
    int act_ctrl;                /* with motor: act's place among the file's actuators (its ctrl in a key) */
    double effort;               /* a <motor>'s largest torque by its forcerange or ctrlrange; 0: none */
    double ref;                  /* MuJoCo's qpos at sysid's q = 0 [rad or m] */
} mjcf_joint;

/* An <asset>'s <mesh>: its file (resolved against the compiler's meshdir), scale, and its mass
 * properties once a body's inertia needs them (loaded: 0 not yet, 1 solid, 2 shell too). */
typedef struct {
    xmlNode *node;
    char name[SID_MAX_NAME];
    char *path;
    double scale[3];
    int shell;                   /* mesh inertia="shell" (MuJoCo 3) */
    int legacy;                  /* its inertia rule is MuJoCo's legacy one (the default, unless
                                  * inertia="exact"/"convex" or compiler exactmeshinertia) */
    int have_solid, have_shell;
    mesh_mass solid, surface;
} mjcf_mesh;

/* A <key> of a <keyframe>: MuJoCo's qpos, qvel and ctrl vectors (NULL where not given). */
typedef struct {
    xmlNode *node;
    char name[SID_MAX_NAME];     /* "key<N>" when unnamed (N: its place, from 0) */
    double *qpos, *qvel, *ctrl;
} mjcf_key;

typedef struct {
    char name[SID_MAX_NAME];
    xmlNode *node;               /* the <geom> */
    int body;
    double xyz[3], radius;       /* centre in the body frame */
} mjcf_sphere;

typedef struct {
    xmlDoc *doc;
    char *path;
    const char *text;            /* owned only for included files (own_text) */
    size_t len;
    int own_text;
} mjcf_file;

typedef struct {
    const char *path;            /* the main file */
    mjcf_file *file;
    int nfile;
    int quiet;                   /* export's re-import: no warnings */
    sid_error *err;
    /* compiler */
    int degree, autolimits, inertiafromgeom;   /* inertiafromgeom 0 false, 1 true, 2 auto */
    int balanceinertia;
    char eulerseq[4];
    double inertiagroup[2];
    /* model */
    char model[SID_MAX_NAME];
    double gravity[3];
    double timestep;          /* <option timestep> [s] (MuJoCo's default 0.002) */
    int integrator;           /* <option integrator> as a sid_integrator; -1: not given (MuJoCo's Euler) */
    /* <option><flag> X="disable" of what sysid models: joint limits, dry friction, contact, joint
     * damping (passive); each warned once and not imported, so the model simulates as MuJoCo does */
    int no_limit, no_frictionloss, no_contact, no_passive;
    xmlNode *flag;               /* the <flag> element that disabled them */
    int dropped[4];              /* joints whose limit, frictionloss, damping it dropped; contact: 1 */
    mjcf_class *cls;
    int ncls;
    mjcf_body *body;
    int nbody;
    mjcf_joint *jnt;
    int njnt;
    xmlNode *option;             /* the first <option>, NULL if none */
    int has_ground;
    xmlNode *ground;             /* the plane <geom> */
    double ground_height, ground_friction;
    mjcf_sphere *sphere;
    int nsphere;
    char meshdir[512];           /* compiler meshdir (else assetdir), as written */
    int exactmesh;               /* compiler exactmeshinertia="true" (MuJoCo 2) */
    int legacy_warned;
    mjcf_mesh *mesh;
    int nmesh;
    int nact;                    /* actuators of every kind read so far (MuJoCo's nu at the end) */
    mjcf_key *key;
    int nkey;
} mjcf_doc;

/* Read the document: 0, or -1 with d->err set. Free with mjcf_doc_free (also after failure). */
int mjcf_read(mjcf_doc *d, const char *path, const char *text, size_t len, sid_error *err);
void mjcf_doc_free(mjcf_doc *d);
/* The file a node comes from (for messages and edits). */
const mjcf_file *mjcf_file_of(const mjcf_doc *d, const xmlNode *node);
/* The robot.json text of a read document (*json malloc'ed): 0 or -1 (out of memory). */
int mjcf_json(const mjcf_doc *d, char **json);

/* ---- files, classes, attributes (mjcf_defaults.c) ------------------------------------------- */

/* Element children of a node with every <include> expanded in place (free n). */
typedef struct {
    xmlNode **n;
    int count, cap;
} mjcf_nodes;
int mjcf_kids(mjcf_doc *d, xmlNode *node, mjcf_nodes *l);
/* Parse a file's text into d->file (own: d frees text): 0 or -1 ("path:line: ..."). */
int mjcf_add_file(mjcf_doc *d, const char *path, const char *text, size_t len, int own);
/* "file:LINE: <tag name=\"x\">: message" into d->err (returns -1), or as a warning. */
int mjcf_fail(mjcf_doc *d, const xmlNode *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void mjcf_warn(const mjcf_doc *d, const xmlNode *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int mjcf_is(const xmlNode *n, const char *tag);
int mjcf_has_attr(const xmlNode *n, const char *a);
void mjcf_attr_str(const xmlNode *n, const char *a, char *buf, size_t len);   /* "" when absent */
/* Attribute a as min..max numbers: the count, 0 when absent, -1 (d->err) when malformed. */
int mjcf_nums(mjcf_doc *d, const xmlNode *n, const char *a, int min, int max, double *out);
/* Classes: index by name (-1), a nested <default> tree added under parent (-1: main). */
int mjcf_find_class(const mjcf_doc *d, const char *name);
int mjcf_add_class(mjcf_doc *d, xmlNode *n, int parent);
/* The last element of one of tags (NULL-terminated) directly in class c holding attr (any if NULL). */
xmlNode *mjcf_class_elem(mjcf_doc *d, int c, const char *const *tags, const char *attr);
/* The node giving attribute a to element n of class c: n, its class's element, an enclosing
 * class's; NULL: MuJoCo's built-in default. */
xmlNode *mjcf_source(mjcf_doc *d, xmlNode *n, int c, const char *const *tags, const char *a);
/* mjcf_nums of the source of a (0 when none; *src: the source, may be NULL). */
int mjcf_get(mjcf_doc *d, xmlNode *n, int c, const char *const *tags, const char *a, int min, int max,
             double *out, xmlNode **src);
void mjcf_get_str(mjcf_doc *d, xmlNode *n, int c, const char *const *tags, const char *a, char *buf,
                  size_t len, const char *dflt);
/* The class of element n: its class attribute (unknown: an error), else inherited. */
int mjcf_elem_class(mjcf_doc *d, xmlNode *n, int inherited, int *c);
/* quat, axisangle, euler, xyaxes, zaxis: the one n (or, with tags, its class) gives, as a unit
 * quaternion in radians/eulerseq of the compiler; identity when none; two are an error. */
extern const char *const MJCF_ORIENT[5];
int mjcf_orientation(mjcf_doc *d, xmlNode *n, int c, const char *const *tags, double q[4]);

/* ---- frames and inertia (mjcf_inertia.c) ----------------------------------------------- */
void mjcf_quat_normalize(double q[4]);
void mjcf_quat_mul(double r[4], const double a[4], const double b[4]);
void mjcf_quat_mat(double R[9], const double q[4]);          /* row-major */
void mjcf_quat_z2vec(double q[4], const double v[3]);        /* MuJoCo's mju_quatZ2Vec */
void mjcf_mat_quat(double q[4], const double R[9]);
void mjcf_mat_rpy(double rpy[3], const double R[9]);         /* R = Rz(y) Ry(p) Rx(r) */
/* R diag(d) R^T as ixx iyy izz ixy ixz iyz. */
void mjcf_inertia_rotate(double I[6], const double R[9], const double diag[3]);
/* Volume and principal inertia per unit mass of a primitive (MuJoCo's mjGEOM_* codes as names):
 * 0 with vol and I set, -1 for a type without (plane, mesh, hfield). */
int mjcf_geom_inertia(const char *type, const double size[3], double *vol, double Iunit[3]);

#endif
