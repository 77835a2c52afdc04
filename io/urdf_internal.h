/* urdf_internal.h — what the URDF reader (urdf.c) and writer (urdf_export.c) share: the
 * picture of a URDF file that urdf_read makes (per link and joint its sysid name, its numbers as
 * robot.json has them and the XML elements they came from). */
#ifndef CLI_URDF_INTERNAL_H
#define CLI_URDF_INTERNAL_H

#include <libxml/tree.h>

#include "urdf.h"

/* ---- the picture of a URDF file ---------------------------------------------------------- */

typedef struct {
    char name[SID_MAX_NAME];       /* sysid's name (sanitized, unique) */
    const char *xml_name;          /* the file's */
    xmlNode *node, *inertial, *in_origin, *mass_el, *inertia_el;
    int has_mass;
    double mass, com[3], rpy[3];   /* the inertial origin */
    double I0[6];                  /* as written (inertial frame): ixx iyy izz ixy ixz iyz */
    double inertia[6];             /* in the link frame (robot.json's) */
    int bad_inertia;               /* 1: not positive definite, 2: breaks the triangle inequality (0: fine, */
    double ev[3];                  /* or balanced): its principal moments, warned once the joints are read */
} ulink;

typedef struct {
    char name[SID_MAX_NAME];
    const char *xml_name;
    xmlNode *node, *origin, *axis_el, *limit, *dynamics, *mimic;
    sid_joint_type type;
    int continuous, is_mimic;
    int parent, child;             /* link indices */
    double xyz[3], rpy[3], axis[3];
    int has_lower, has_upper, has_effort, has_velocity;
    double lower, upper, effort, velocity;
    int has_damping, has_friction;
    double damping, friction;
} ujoint;

typedef struct {
    xmlDoc *doc;
    const char *robot_name;
    int nlink, njoint, root;
    ulink *link;
    ujoint *joint;
} urdf_doc;

/* Notes collected while reading, printed once each at the end (an attribute that every joint of
 * a file has gets one line, with the count of the others, not a hundred). */
#define MAX_NOTES 64
typedef struct {
    char key[96];
    char msg[320];
    long line;
    int count;
} note;

typedef struct {
    const char *path;
    const urdf_import_opts *opts;
    sid_error *err;
    int quiet;
    int nnote, dropped;   /* notes kept; kinds beyond MAX_NOTES (counted, so none goes unsaid) */
    note notes[MAX_NOTES];
} reader;

/* Read the URDF text into u (free with urdf_doc_free); 0, or -1 with r->err set. */
int urdf_read(reader *r, const char *text, size_t len, urdf_doc *u);
void urdf_doc_free(urdf_doc *u);
/* Set r->err to "path:LINE: <tag name=...>: message" (n may be NULL); returns -1. */
int urdf_fail(reader *r, const xmlNode *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Attribute name of n, or NULL. */
const char *urdf_attr(const xmlNode *n, const char *name);
/* u as robot.json text (*json malloc'ed). */
int urdf_write_json(reader *r, const urdf_doc *u, char **json);

#endif
