/* workspace_layout.c — sizing and carving the one buffer that holds the scratch of one simulation
 * thread (workspace.h): the struct, its arrays, hard contact's and dry friction's scratch,
 * laid out by one sequence of sid_carve_take calls that first counts and then carves. */
#include "contact.h"
#include "hard_solver.h"
#include "dry_friction.h"
#include "workspace.h"

#include <string.h>

static sid_workspace *carve(const sid_model *m, sid_carve *c)
{
    const size_t nb = (size_t)m->nbody, nv = (size_t)(m->nv > 0 ? m->nv : 1), nq = (size_t)(m->nq > 0 ? m->nq : 1);
    const size_t np = (size_t)(m->nparam > 0 ? m->nparam : 1);
    sid_workspace *ws = sid_carve_take(c, 1, sizeof *ws);
    sid_workspace w = {0};
    w.nbody = m->nbody;
    w.nv = m->nv;
    w.X = sid_carve_take(c, nb, sizeof *w.X);
    w.RT = sid_carve_take(c, nb, sizeof *w.RT);
    w.dRT = sid_carve_take(c, 3 * nb, sizeof *w.dRT);
    w.theta_seen = sid_carve_take(c, (size_t)(m->nparam > 0 ? m->nparam : 1), sizeof *w.theta_seen);
    w.Q = sid_carve_take(c, nb, sizeof *w.Q);
    w.I = sid_carve_take(c, nb, sizeof *w.I);
    w.vJ = sid_carve_take(c, nb, sizeof *w.vJ);
    w.aJ = sid_carve_take(c, nb, sizeof *w.aJ);
    w.Rw = sid_carve_take(c, nb, sizeof *w.Rw);
    w.Rwbar = sid_carve_take(c, nb, sizeof *w.Rwbar);
    w.pw = sid_carve_take(c, nb, sizeof *w.pw);
    w.pwbar = sid_carve_take(c, nb, sizeof *w.pwbar);
    w.fext = sid_carve_take(c, nb, sizeof *w.fext);
    w.fextbar = sid_carve_take(c, nb, sizeof *w.fextbar);
    w.v = sid_carve_take(c, nb, sizeof *w.v);
    w.a = sid_carve_take(c, nb, sizeof *w.a);
    w.h = sid_carve_take(c, nb, sizeof *w.h);
    w.f = sid_carve_take(c, nb, sizeof *w.f);
    w.cm = sid_carve_take(c, nb, sizeof *w.cm);
    w.ch = sid_carve_take(c, nb, sizeof *w.ch);
    w.cI = sid_carve_take(c, nb, sizeof *w.cI);
    w.vbar = sid_carve_take(c, nb, sizeof *w.vbar);
    w.abar = sid_carve_take(c, nb, sizeof *w.abar);
    w.fbar = sid_carve_take(c, nb, sizeof *w.fbar);
    w.Ebar = sid_carve_take(c, nb, sizeof *w.Ebar);
    w.rbar = sid_carve_take(c, nb, sizeof *w.rbar);
    w.Ibar = sid_carve_take(c, nb, sizeof *w.Ibar);
    w.jv_v = sid_carve_take(c, nb, sizeof *w.jv_v);
    w.jv_a = sid_carve_take(c, nb, sizeof *w.jv_a);
    w.jv_f = sid_carve_take(c, nb, sizeof *w.jv_f);
    w.jv_fx = sid_carve_take(c, nb, sizeof *w.jv_fx);
    w.jv_vS = sid_carve_take(c, nb, sizeof *w.jv_vS);
    w.jv_B = sid_carve_take(c, 36 * nb, sizeof *w.jv_B);
    w.M = sid_carve_take(c, nv * nv, sizeof *w.M);
    w.c = sid_carve_take(c, nv, sizeof *w.c);
    w.F = sid_carve_take(c, nv, sizeof *w.F);
    w.rhs = sid_carve_take(c, nv, sizeof *w.rhs);
    w.tmp = sid_carve_take(c, nv, sizeof *w.tmp);
    w.w = sid_carve_take(c, nv, sizeof *w.w);
    w.jrows = sid_carve_take(c, 2 * nv * (nq + nv + np), sizeof *w.jrows);
    w.jbar = sid_carve_take(c, np + 2 * nv + nq, sizeof *w.jbar);
    w.ud = sid_carve_take(c, nv, sizeof *w.ud);
    w.dsave = sid_carve_take(c, nv, sizeof *w.dsave);
    w.rk = sid_carve_take(c, (3 * nq + 7 * nv), sizeof *w.rk);
    w.rkbar = sid_carve_take(c, (9 * nv + nq), sizeof *w.rkbar);
    w.Lst = sid_carve_take(c, 4 * (nv * nv + 2 * (size_t)(m->ndry + m->nclim)), sizeof *w.Lst);
    w.hard = sid_hard_carve(m, c);
    w.sphere = sid_contact_carve(m, c);
    w.dry = sid_dry_carve(m, c);
    if (ws) *ws = w;
    return ws;
}

size_t sid_workspace_size(const sid_model *m)
{
    sid_carve c = {NULL, 0};
    carve(m, &c);
    return c.used;
}

sid_workspace *sid_workspace_init(const sid_model *m, void *buf, size_t n)
{
    if (!buf || n < sid_workspace_size(m)) return NULL;
    memset(buf, 0, n);
    sid_carve c = {buf, 0};
    return carve(m, &c);
}

sid_workspace *sid_workspace_create(const sid_model *m)
{
    const size_t n = sid_workspace_size(m);
    void *buf = sid_alloc(n);
    return buf ? sid_workspace_init(m, buf, n) : NULL;
}

void sid_workspace_free(sid_workspace *ws) { sid_free(ws); }
