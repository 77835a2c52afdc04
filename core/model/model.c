/* model.c — sid_model: validate a robot description, order its bodies topologically and lay
 * out the parameter vector theta (every number of robot.json, named by its JSON path).
 * Errors name the description's JSON path, e.g. "joints[2].axis: ...". */
#include "model.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void sid_joint_desc_defaults(sid_joint_desc *j)
{
    memset(j, 0, sizeof *j);
    j->type = SID_JOINT_REVOLUTE;
    j->parent = j->child = -1;
    j->limit_effort = j->limit_velocity = -1;
    sid_param_defaults(SID_OWNER_JOINT, j);
}

/* Where a block's first parameter index is kept (NULL: the element has no such block). */
static int *block_slot(sid_model *m, sid_body *bd, int sphere, sid_param_block block)
{
    switch (block) {
    case SID_BLOCK_GRAVITY: return &m->p_gravity;
    case SID_BLOCK_INERTIAL: return &bd->p_inertial;
    case SID_BLOCK_ORIGIN: return &bd->p_origin;
    case SID_BLOCK_DOF: return &bd->p_dof;
    case SID_BLOCK_STRIBECK: return &bd->p_stribeck;
    case SID_BLOCK_COULOMB_NEGATIVE: return &bd->p_coulneg;
    case SID_BLOCK_FRICTION_LOAD: return &bd->p_fload;
    case SID_BLOCK_MOTOR: return &bd->p_motor;
    case SID_BLOCK_GROUND: return &m->p_ground;
    case SID_BLOCK_SPHERE: return &m->sphere[sphere].p;
    case SID_BLOCK_LIMIT_LOWER: return &bd->p_limit_lower;
    case SID_BLOCK_LIMIT_UPPER: return &bd->p_limit_upper;
    case SID_BLOCK_LIMIT: return &bd->p_limit;
    case SID_BLOCK_SERVO: return &bd->p_servo;
    case SID_BLOCK_SERVO_LIMIT: return &bd->p_servo_limit;
    case SID_BLOCK_DELAY: return &bd->p_delay;
    case SID_BLOCK_TORQUE_SENSOR: return &bd->p_sensor;
    case SID_BLOCK_BACKLASH: return &bd->p_backlash;
    case SID_NPARAM_BLOCK: break;
    }
    return NULL;
}

/* One element of the description whose parameters are appended: owner index `owner` of class
 * cls, named owner_name; bd its body, or the sphere's index in `sphere`. */
typedef struct {
    sid_param_owner cls;
    int owner;
    const char *owner_name;
    sid_body *bd;
    int sphere;
} element;

/* Append the parameters of one element: every row of the table that exists on it, in table order. */
static void add_params(sid_model *m, double *theta, const sid_robot_desc *d, const element *e)
{
    const sid_param_owner cls = e->cls;
    const int owner = e->owner;
    const sid_param_row *rows;
    const int nrow = sid_param_rows(&rows);
    for (int r = 0; r < nrow; r++) {
        const sid_param_row *row = &rows[r];
        if (row->owner != cls || !sid_param_exists(row, d, owner)) continue;
        int *slot = block_slot(m, e->bd, e->sphere, row->block);
        if (*slot < 0) *slot = m->nparam;
        const double *x = sid_param_value(row, d, owner);
        for (int k = 0; k < row->ncomp; k++) {
            sid_param_info *p = &m->param[m->nparam];
            sid_param_name(row, e->owner_name, row->comp0 + k, p->name, sizeof p->name);
            p->unit = sid_param_unit(row, d, owner);
            p->kind = row->kind;
            p->owner = cls == SID_OWNER_ROBOT || cls == SID_OWNER_GROUND ? -1 : owner;
            p->comp = row->comp0 + k;
            p->row = row;
            theta[m->nparam++] = x[k];
        }
    }
}

static sid_status check_desc(const sid_robot_desc *d, int *child_of, sid_error *err)
{
    if (d->nlink < 1) return sid_error_set(err, SID_ERR_INPUT, "links: expected at least one link");
    for (int i = 0; i < d->nlink; i++) {
        if (!d->link[i].name[0]) return sid_error_set(err, SID_ERR_INPUT, "links[%d].name: expected a non-empty name", i);
        for (int k = 0; k < i; k++)
            if (!strcmp(d->link[i].name, d->link[k].name))
                return sid_error_set(err, SID_ERR_INPUT, "links[%d].name: duplicate link name '%s' (also links[%d])",
                                     i, d->link[i].name, k);
        child_of[i] = -1;
    }
    for (int j = 0; j < d->njoint; j++) {
        const sid_joint_desc *jd = &d->joint[j];
        if (!jd->name[0]) return sid_error_set(err, SID_ERR_INPUT, "joints[%d].name: expected a non-empty name", j);
        for (int k = 0; k < j; k++)
            if (!strcmp(jd->name, d->joint[k].name))
                return sid_error_set(err, SID_ERR_INPUT, "joints[%d].name: duplicate joint name '%s' (also joints[%d])",
                                     j, jd->name, k);
        if (jd->parent < 0 || jd->parent >= d->nlink)
            return sid_error_set(err, SID_ERR_INPUT, "joints[%d].parent: expected the name of a link", j);
        if (jd->child < 0 || jd->child >= d->nlink)
            return sid_error_set(err, SID_ERR_INPUT, "joints[%d].child: expected the name of a link", j);
        if (jd->parent == jd->child)
            return sid_error_set(err, SID_ERR_INPUT, "joints[%d]: link '%s' cannot be its own parent (cycle)", j,
                                 d->link[jd->child].name);
        if (child_of[jd->child] >= 0)
            return sid_error_set(err, SID_ERR_INPUT,
                                 "joints[%d].child: link '%s' already has a parent joint (joints[%d]); a link has at most one",
                                 j, d->link[jd->child].name, child_of[jd->child]);
        child_of[jd->child] = j;
        if (jd->type == SID_JOINT_REVOLUTE || jd->type == SID_JOINT_PRISMATIC) {
            const double n = sqrt(jd->axis[0] * jd->axis[0] + jd->axis[1] * jd->axis[1] + jd->axis[2] * jd->axis[2]);
            if (!(n > 1e-12) || !isfinite(n))
                return sid_error_set(err, SID_ERR_INPUT, "joints[%d].axis: expected a non-zero finite vector", j);
        }
    }
    int root = -1;
    for (int i = 0; i < d->nlink; i++) {
        if (child_of[i] >= 0) continue;
        if (root >= 0)
            return sid_error_set(err, SID_ERR_INPUT,
                                 "links: two roots, '%s' (links[%d]) and '%s' (links[%d]); every link but one must be a joint's child",
                                 d->link[root].name, root, d->link[i].name, i);
        root = i;
    }
    if (root < 0)
        return sid_error_set(err, SID_ERR_INPUT, "joints: the links form a cycle; expected a tree with one root link");
    for (int j = 0; j < d->njoint; j++)
        if (d->joint[j].type == SID_JOINT_FREE && d->joint[j].parent != root)
            return sid_error_set(err, SID_ERR_INPUT,
                                 "joints[%d].parent: a free joint connects a floating link to the root link '%s'", j,
                                 d->link[root].name);
    if (d->nsphere > 0 && !d->ground.present)
        return sid_error_set(err, SID_ERR_INPUT, "contact.ground: contact spheres need a ground plane");
    for (int c = 0; c < d->nsphere; c++) {
        const sid_sphere_desc *sd = &d->sphere[c];
        if (!sd->name[0]) return sid_error_set(err, SID_ERR_INPUT, "contact.spheres[%d].name: expected a non-empty name", c);
        for (int k = 0; k < c; k++)
            if (!strcmp(sd->name, d->sphere[k].name))
                return sid_error_set(err, SID_ERR_INPUT,
                                     "contact.spheres[%d].name: duplicate sphere name '%s' (also contact.spheres[%d])", c,
                                     sd->name, k);
        if (sd->link < 0 || sd->link >= d->nlink)
            return sid_error_set(err, SID_ERR_INPUT, "contact.spheres[%d].link: expected the name of a link", c);
    }
    return SID_OK;
}

/* Is joint j's backlash one this model supports? (an error naming the JSON path) */
static sid_status backlash_check(const sid_robot_desc *d, int j, sid_error *err)
{
    const sid_joint_desc *jd = &d->joint[j];
    if (jd->friction_model == SID_FRICTION_DRY)
        return sid_error_set(err, SID_ERR_INPUT,
                             "joints[%d].backlash: not supported with dry friction (friction.model \"dry\"): the "
                             "motor side's friction is the smooth model only", j);
    if (jd->motor == SID_MOTOR_POSITION || jd->motor == SID_MOTOR_VELOCITY)
        return sid_error_set(err, SID_ERR_INPUT,
                             "joints[%d].backlash: not supported on a servo (motor.input \"position\" or "
                             "\"velocity\"): its feedback would have to read the motor side", j);
    if (jd->has_limit_lower || jd->has_limit_upper)
        if (jd->limit_model == SID_LIMIT_CONSTRAINT)
            return sid_error_set(err, SID_ERR_INPUT,
                                 "joints[%d].backlash: not supported with a constraint limit (limit.model "
                                 "\"constraint\"): use the \"spring\" limit model", j);
    return SID_OK;
}

void sid_ground_desc_defaults(sid_ground_desc *g)
{
    memset(g, 0, sizeof *g);
    g->present = 1;
    g->model = SID_CONTACT_COMPLIANT;
    sid_param_defaults(SID_OWNER_GROUND, g);   /* the numbers: the parameter table's */
}

/* Names of a free joint's coordinates. */
static const char *free_q_suffix[7] = {"x", "y", "z", "qw", "qx", "qy", "qz"};
static const char *free_v_suffix[6] = {"vx", "vy", "vz", "wx", "wy", "wz"};

sid_status sid_model_build(sid_model **out, double **theta_out, const sid_robot_desc *d, sid_error *err)
{
    *out = NULL;
    *theta_out = NULL;
    int *cof = sid_alloc(sizeof(int) * (size_t)(d->nlink > 0 ? d->nlink : 1));
    int *order = sid_alloc(sizeof(int) * (size_t)(d->nlink > 0 ? d->nlink : 1));
    int *body_of_link = sid_alloc(sizeof(int) * (size_t)(d->nlink > 0 ? d->nlink : 1));
    sid_model *m = sid_alloc(sizeof *m);
    const int maxparam = sid_param_count(SID_OWNER_ROBOT) + sid_param_count(SID_OWNER_LINK) * d->nlink +
                         sid_param_count(SID_OWNER_JOINT) * d->njoint + sid_param_count(SID_OWNER_GROUND) +
                         sid_param_count(SID_OWNER_SPHERE) * d->nsphere;
    double *theta = sid_alloc(sizeof(double) * (size_t)maxparam);
    sid_status s = SID_OK;
    if (!cof || !order || !body_of_link || !m || !theta) { s = sid_error_set(err, SID_ERR_NOMEM, "out of memory"); goto fail; }
    if ((s = check_desc(d, cof, err))) goto fail;

    /* Breadth-first order from the root, children in description order: parent < child. */
    int n = 0;
    for (int i = 0; i < d->nlink; i++)
        if (cof[i] < 0) order[n++] = i;
    for (int head = 0; head < n; head++)
        for (int j = 0; j < d->njoint; j++)
            if (d->joint[j].parent == order[head]) order[n++] = d->joint[j].child;
    if (n < d->nlink) {
        for (int i = 0; i < d->nlink; i++) {
            int seen = 0;
            for (int k = 0; k < n; k++) seen |= order[k] == i;
            if (!seen) {
                s = sid_error_set(err, SID_ERR_INPUT, "joints[%d]: link '%s' is part of a cycle, not reachable from the root link",
                                  cof[i], d->link[i].name);
                goto fail;
            }
        }
    }

    m->nbody = n;
    m->body = sid_alloc(sizeof(sid_body) * (size_t)n);
    m->param = sid_alloc(sizeof(sid_param_info) * (size_t)maxparam);
    m->dof_body = sid_alloc(sizeof(int) * (size_t)n);
    m->dof_name = sid_alloc(sizeof(*m->dof_name) * (size_t)n);
    m->link_name = sid_alloc(sizeof(*m->link_name) * (size_t)n);
    m->dof_parent = sid_alloc(sizeof(int) * (size_t)(6 * n));
    m->q_name = sid_alloc(sizeof(*m->q_name) * (size_t)(7 * n));
    m->v_name = sid_alloc(sizeof(*m->v_name) * (size_t)(6 * n));
    m->q_angular = sid_alloc(sizeof(int) * (size_t)(7 * n));
    m->v_angular = sid_alloc(sizeof(int) * (size_t)(6 * n));
    m->sphere = sid_alloc(sizeof(sid_sphere) * (size_t)(d->nsphere > 0 ? d->nsphere : 1));
    if (!m->body || !m->param || !m->dof_body || !m->dof_name || !m->link_name || !m->dof_parent || !m->q_name || !m->v_name ||
        !m->q_angular || !m->v_angular || !m->sphere) {
        s = sid_error_set(err, SID_ERR_NOMEM, "out of memory");
        goto fail;
    }
    for (int b = 0; b < n; b++) body_of_link[order[b]] = b;

    for (int b = 0; b < n; b++) {
        sid_body *bd = &m->body[b];
        bd->link = order[b];
        snprintf(m->link_name[b], SID_MAX_NAME, "%s", d->link[order[b]].name);
        bd->joint = cof[order[b]];
        bd->parent = bd->joint >= 0 ? body_of_link[d->joint[bd->joint].parent] : -1;
        bd->type = bd->joint >= 0 ? d->joint[bd->joint].type : SID_JOINT_FIXED;
        bd->qadr = bd->vadr = -1;
        bd->p_inertial = bd->p_origin = bd->p_dof = bd->p_stribeck = bd->p_motor = -1;
        bd->p_coulneg = bd->p_fload = -1;
        bd->p_limit = bd->p_limit_lower = bd->p_limit_upper = -1;
        bd->p_servo = bd->p_servo_limit = bd->p_delay = -1;
        bd->p_sensor = -1;
        bd->p_backlash = bd->bl_q = bd->bl_v = -1;
        if (bd->type != SID_JOINT_FIXED) {
            if (m->ndofj >= SID_MAX_JOINTS) {
                s = sid_error_set(err, SID_ERR_INPUT, "joints: more than %d moving joints", SID_MAX_JOINTS);
                goto fail;
            }
            const char *jname = d->joint[bd->joint].name;
            bd->qadr = m->nq;
            bd->vadr = m->nv;
            if (bd->type == SID_JOINT_FREE) {
                for (int k = 0; k < 7; k++) {
                    snprintf(m->q_name[m->nq + k], sizeof m->q_name[0], "%s.%s", jname, free_q_suffix[k]);
                    m->q_angular[m->nq + k] = k >= 3;
                }
                for (int k = 0; k < 6; k++) {
                    snprintf(m->v_name[m->nv + k], sizeof m->v_name[0], "%s.%s", jname, free_v_suffix[k]);
                    m->v_angular[m->nv + k] = k >= 3;
                }
                m->nq += 7;
                m->nv += 6;
                m->nfree++;
            } else {
                const double *ax = d->joint[bd->joint].axis;
                const double nrm = sqrt(ax[0] * ax[0] + ax[1] * ax[1] + ax[2] * ax[2]);
                for (int k = 0; k < 3; k++) bd->axis[k] = ax[k] / nrm;
                snprintf(m->q_name[m->nq], sizeof m->q_name[0], "%s", jname);
                snprintf(m->v_name[m->nv], sizeof m->v_name[0], "%s", jname);
                m->q_angular[m->nq++] = m->v_angular[m->nv++] = bd->type == SID_JOINT_REVOLUTE;
            }
            m->dof_body[m->ndofj] = b;
            snprintf(m->dof_name[m->ndofj], SID_MAX_NAME, "%s", jname);
            m->ndofj++;
        }
    }

    /* The hidden motor sides of backlash joints, after the tree's coordinates (backlash.h). */
    m->nqo = m->nq;
    m->nvo = m->nv;
    for (int b = 1; b < n; b++) {
        sid_body *bd = &m->body[b];
        const sid_joint_desc *jd = bd->joint >= 0 ? &d->joint[bd->joint] : NULL;
        if (!jd || !jd->has_backlash || bd->vadr < 0 || bd->type == SID_JOINT_FREE) continue;
        if ((s = backlash_check(d, bd->joint, err))) goto fail;
        bd->bl_q = m->nq;
        bd->bl_v = m->nv;
        snprintf(m->q_name[m->nq], sizeof m->q_name[0], "%s.motor", jd->name);
        snprintf(m->v_name[m->nv], sizeof m->v_name[0], "%s.motor", jd->name);
        m->q_angular[m->nq++] = m->v_angular[m->nv++] = bd->type == SID_JOINT_REVOLUTE;
        m->dof_parent[bd->bl_v] = -1;   /* the rotor's inertia couples with nothing */
        m->nbacklash++;
    }

    /* The mass matrix couples a dof only with its ancestors: keep each dof's parent dof (the
     * last dof of the nearest moving ancestor; a free joint's six dofs form a chain). */
    for (int b = 1; b < n; b++) {
        const sid_body *bd = &m->body[b];
        if (bd->vadr < 0) continue;
        int a = bd->parent;
        while (a > 0 && m->body[a].vadr < 0) a = m->body[a].parent;
        m->dof_parent[bd->vadr] = a > 0 ? m->body[a].vadr + (m->body[a].type == SID_JOINT_FREE ? 5 : 0) : -1;
        if (bd->type == SID_JOINT_FREE)
            for (int k = 1; k < 6; k++) m->dof_parent[bd->vadr + k] = bd->vadr + k - 1;
    }

    /* Parameters: the robot's (gravity), then links and joints in description order, the
     * ground, the spheres; each element's in the parameter table's order. */
    m->p_gravity = m->p_ground = -1;
    for (int c = 0; c < d->nsphere; c++) {
        m->sphere[c].body = body_of_link[d->sphere[c].link];
        m->sphere[c].p = -1;
    }
    add_params(m, theta, d, &(element){SID_OWNER_ROBOT, -1, "", NULL, 0});
    for (int i = 0; i < d->nlink; i++)
        add_params(m, theta, d, &(element){SID_OWNER_LINK, i, d->link[i].name, &m->body[body_of_link[i]], 0});
    for (int j = 0; j < d->njoint; j++) {
        sid_body *bd = &m->body[body_of_link[d->joint[j].child]];
        if (bd->vadr >= 0 && bd->type != SID_JOINT_FREE) {
            bd->motor = d->joint[j].motor;
            bd->dry = d->joint[j].friction_model == SID_FRICTION_DRY;
            m->ndry += bd->dry;
            bd->climit = d->joint[j].limit_model == SID_LIMIT_CONSTRAINT &&
                         (d->joint[j].has_limit_lower || d->joint[j].has_limit_upper);
            if (bd->climit) m->nclim += d->joint[j].has_limit_lower + d->joint[j].has_limit_upper;
            if (d->joint[j].has_friction_load && (d->joint[j].motor == SID_MOTOR_NONE ||
                                                  d->joint[j].motor == SID_MOTOR_POSITION ||
                                                  d->joint[j].motor == SID_MOTOR_VELOCITY)) {
                s = sid_error_set(err, SID_ERR_INPUT,
                                  "joints[%d].friction.load: load-dependent friction needs a torque, current or voltage "
                                  "motor (a servo's torque is not modelled as its load yet)", j);
                goto fail;
            }
            if (bd->dry && d->joint[j].has_stribeck) {
                s = sid_error_set(err, SID_ERR_INPUT,
                                  "joints[%d].friction.stribeck: the dry friction model has no Stribeck term "
                                  "(only \"model\": \"smooth\" has it)", j);
                goto fail;
            }
        }
        add_params(m, theta, d, &(element){SID_OWNER_JOINT, j, d->joint[j].name, bd, 0});
    }
    if (d->ground.present) m->contact = d->ground.model;
    m->timestep = d->timestep;
    m->integrator = d->has_integrator ? (int)d->integrator : -1;
    add_params(m, theta, d, &(element){SID_OWNER_GROUND, -1, "", NULL, 0});
    for (int c = 0; c < d->nsphere; c++) add_params(m, theta, d, &(element){SID_OWNER_SPHERE, c, d->sphere[c].name, NULL, c});
    m->nsphere = d->nsphere;
    /* leaves to root: a joint moves mass if its body or one below it has some */
    for (int b = n - 1; b >= 0; b--) {
        m->body[b].moves_mass |= m->body[b].p_inertial >= 0;
        if (b > 0) m->body[m->body[b].parent].moves_mass |= m->body[b].moves_mass;
    }
    sid_model_mark_placeholders(m, theta);
    if ((s = sid_model_check_theta(m, theta, err))) goto fail;
    for (int b = 1; b < n; b++) m->nlimit += m->body[b].p_limit >= 0;
    sid_free(cof);
    sid_free(order);
    sid_free(body_of_link);
    *out = m;
    *theta_out = theta;
    return SID_OK;
fail:
    sid_free(cof);
    sid_free(order);
    sid_free(body_of_link);
    sid_model_free(m);
    sid_free(theta);
    return s;
}

void sid_model_free(sid_model *m)
{
    if (!m) return;
    sid_free(m->body);
    sid_free(m->param);
    sid_free(m->dof_body);
    sid_free(m->dof_name);
    sid_free(m->link_name);
    sid_free(m->dof_parent);
    sid_free(m->q_name);
    sid_free(m->v_name);
    sid_free(m->q_angular);
    sid_free(m->v_angular);
    sid_free(m->sphere);
    sid_free(m);
}

int sid_model_nq(const sid_model *m) { return m->nqo; }
int sid_model_nv(const sid_model *m) { return m->nvo; }
int sid_model_nq_state(const sid_model *m) { return m->nq; }
int sid_model_nv_state(const sid_model *m) { return m->nv; }
int sid_model_nparam(const sid_model *m) { return m->nparam; }
const sid_param_info *sid_model_param(const sid_model *m, int i) { return &m->param[i]; }
int sid_model_ndof_joints(const sid_model *m) { return m->ndofj; }
const char *sid_model_dof_joint_name(const sid_model *m, int k) { return m->dof_name[k]; }

int sid_model_nbody(const sid_model *m) { return m->nbody; }
const char *sid_model_link_name(const sid_model *m, int body) { return m->link_name[body]; }

int sid_model_link_body(const sid_model *m, const char *name)
{
    for (int b = 0; b < m->nbody; b++)
        if (strcmp(m->link_name[b], name) == 0) return b;
    return -1;
}
int sid_model_dof_joint_desc(const sid_model *m, int k) { return m->body[m->dof_body[k]].joint; }
int sid_model_dof_joint_has_motor(const sid_model *m, int k) { return m->body[m->dof_body[k]].motor != SID_MOTOR_NONE; }
sid_motor_input sid_model_dof_joint_motor(const sid_model *m, int k) { return m->body[m->dof_body[k]].motor; }
int sid_model_dof_joint_is_prismatic(const sid_model *m, int k) { return m->body[m->dof_body[k]].type == SID_JOINT_PRISMATIC; }
sid_joint_type sid_model_dof_joint_type(const sid_model *m, int k) { return m->body[m->dof_body[k]].type; }
int sid_model_dof_joint_qadr(const sid_model *m, int k) { return m->body[m->dof_body[k]].qadr; }
int sid_model_dof_joint_vadr(const sid_model *m, int k) { return m->body[m->dof_body[k]].vadr; }
const char *sid_model_q_name(const sid_model *m, int i) { return m->q_name[i]; }
const char *sid_model_v_name(const sid_model *m, int i) { return m->v_name[i]; }
int sid_model_q_is_angular(const sid_model *m, int i) { return m->q_angular[i]; }
int sid_model_v_is_angular(const sid_model *m, int i) { return m->v_angular[i]; }
int sid_model_has_contact(const sid_model *m) { return m->p_ground >= 0; }
sid_contact_model sid_model_contact_model(const sid_model *m) { return m->contact; }
void sid_model_set_contact_model(sid_model *m, sid_contact_model c) { m->contact = c; }
double sid_model_timestep(const sid_model *m) { return m->timestep; }
int sid_model_integrator(const sid_model *m) { return m->integrator; }

int sid_model_param_find(const sid_model *m, const char *name)
{
    for (int i = 0; i < m->nparam; i++)
        if (!strcmp(m->param[i].name, name)) return i;
    return -1;
}

int sid_model_param_match(const sid_model *m, const char *glob, int *mask)
{
    int n = 0;
    for (int i = 0; i < m->nparam; i++)
        if (sid_glob_match(glob, m->param[i].name)) {
            if (mask) mask[i] = 1;
            n++;
        }
    return n;
}

int sid_model_param_moves(const sid_model *m, int i)
{
    const sid_param_info *p = &m->param[i];
    if (p->row->owner != SID_OWNER_LINK)
        return 1;
    for (int b = 1; b < m->nbody; b++) {
        if (m->body[b].link != p->owner)
            continue;
        for (int a = b; a > 0; a = m->body[a].parent)
            if (m->body[a].vadr >= 0)
                return 1;
        return 0;
    }
    return 0;
}

void sid_model_param_path(const sid_model *m, int i, char *buf, size_t len)
{
    const sid_param_info *p = &m->param[i];
    sid_param_json_path(p->row, p->owner, p->comp, buf, len);
}

sid_status sid_model_check_theta(const sid_model *m, const double *theta, sid_error *err)
{
    char path[160];
    for (int i = 0; i < m->nparam; i++)
        if (!isfinite(theta[i])) {
            sid_model_param_path(m, i, path, sizeof path);
            return sid_error_set(err, SID_ERR_INPUT, "%s: expected a finite number, got %g", path, theta[i]);
        }
    for (int i = 0; i < m->nparam; i++)
        if (!sid_param_in_range(m->param[i].row->range, theta[i])) {
            sid_model_param_path(m, i, path, sizeof path);
            return sid_error_set(err, SID_ERR_INPUT, "%s: expected %s, got %g", path,
                                 sid_param_range_what(m->param[i].row->range), theta[i]);
        }
    /* A joint that moves no mass needs a rotor (armature), or the mass matrix is singular. */
    for (int b = 1; b < m->nbody; b++) {
        const sid_body *bd = &m->body[b];
        if (bd->vadr < 0 || bd->moves_mass || (bd->p_dof >= 0 && theta[bd->p_dof + P_ARMATURE] > 0)) continue;
        return sid_error_set(err, SID_ERR_INPUT,
                             "joints[%d]: no link it moves has a mass%s, so nothing resists its motion (the "
                             "mass matrix is singular): give a link below it a mass%s",
                             bd->joint, bd->type == SID_JOINT_FREE ? "" : " and it has no armature",
                             bd->type == SID_JOINT_FREE ? "" : ", or the joint an armature");
    }
    /* A limit's bounds must leave the joint somewhere to be. */
    for (int b = 1; b < m->nbody; b++) {
        const sid_body *bd = &m->body[b];
        if (bd->p_limit_lower < 0 || bd->p_limit_upper < 0 || theta[bd->p_limit_lower] <= theta[bd->p_limit_upper])
            continue;
        return sid_error_set(err, SID_ERR_INPUT, "joints[%d].limit: expected lower <= upper, got lower %g > upper %g",
                             bd->joint, theta[bd->p_limit_lower], theta[bd->p_limit_upper]);
    }
    /* A rigid body's inertia must be physical: every link's merged with those welded to it */
    return sid_model_check_inertia(m, theta, err);
}
