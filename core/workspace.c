/* workspace.c — creating and freeing the scratch of one simulation thread (workspace.h). */
#include "contact_hard.h"
#include "workspace.h"

sid_workspace *sid_workspace_create(const sid_model *m)
{
    sid_workspace *ws = sid_alloc(sizeof *ws);
    if (!ws) return NULL;
    const size_t nb = (size_t)m->nbody, nv = (size_t)(m->nv > 0 ? m->nv : 1), nq = (size_t)(m->nq > 0 ? m->nq : 1);
    ws->nbody = m->nbody;
    ws->nv = m->nv;
    ws->X = sid_alloc(nb * sizeof *ws->X);
    ws->RT = sid_alloc(nb * sizeof *ws->RT);
    ws->dRT = sid_alloc(3 * nb * sizeof *ws->dRT);
    ws->theta_seen = sid_alloc((size_t)(m->nparam > 0 ? m->nparam : 1) * sizeof *ws->theta_seen);
    ws->Q = sid_alloc(nb * sizeof *ws->Q);
    ws->I = sid_alloc(nb * sizeof *ws->I);
    ws->vJ = sid_alloc(nb * sizeof *ws->vJ);
    ws->aJ = sid_alloc(nb * sizeof *ws->aJ);
    ws->Rw = sid_alloc(nb * sizeof *ws->Rw);
    ws->Rwbar = sid_alloc(nb * sizeof *ws->Rwbar);
    ws->pw = sid_alloc(nb * sizeof *ws->pw);
    ws->pwbar = sid_alloc(nb * sizeof *ws->pwbar);
    ws->fext = sid_alloc(nb * sizeof *ws->fext);
    ws->fextbar = sid_alloc(nb * sizeof *ws->fextbar);
    ws->v = sid_alloc(nb * sizeof *ws->v);
    ws->a = sid_alloc(nb * sizeof *ws->a);
    ws->h = sid_alloc(nb * sizeof *ws->h);
    ws->f = sid_alloc(nb * sizeof *ws->f);
    ws->cm = sid_alloc(nb * sizeof *ws->cm);
    ws->ch = sid_alloc(nb * sizeof *ws->ch);
    ws->cI = sid_alloc(nb * sizeof *ws->cI);
    ws->vbar = sid_alloc(nb * sizeof *ws->vbar);
    ws->abar = sid_alloc(nb * sizeof *ws->abar);
    ws->fbar = sid_alloc(nb * sizeof *ws->fbar);
    ws->Ebar = sid_alloc(nb * sizeof *ws->Ebar);
    ws->rbar = sid_alloc(nb * sizeof *ws->rbar);
    ws->Ibar = sid_alloc(nb * sizeof *ws->Ibar);
    ws->M = sid_alloc(nv * nv * sizeof *ws->M);
    ws->c = sid_alloc(nv * sizeof *ws->c);
    ws->F = sid_alloc(nv * sizeof *ws->F);
    ws->rhs = sid_alloc(nv * sizeof *ws->rhs);
    ws->tmp = sid_alloc(nv * sizeof *ws->tmp);
    ws->w = sid_alloc(nv * sizeof *ws->w);
    ws->rk = sid_alloc((3 * nq + 7 * nv) * sizeof *ws->rk);
    ws->rkbar = sid_alloc((9 * nv + nq) * sizeof *ws->rkbar);
    ws->Lst = sid_alloc(4 * nv * nv * sizeof *ws->Lst);
    ws->hard = sid_hard_create(m);
    if (!ws->X || !ws->RT || !ws->dRT || !ws->theta_seen || !ws->Q || !ws->I || !ws->vJ || !ws->aJ || !ws->Rw ||
        !ws->Rwbar || !ws->pw || !ws->pwbar || !ws->fext || !ws->fextbar || !ws->v || !ws->a || !ws->h || !ws->f || !ws->cm ||
        !ws->ch || !ws->cI || !ws->vbar || !ws->abar || !ws->fbar || !ws->Ebar || !ws->rbar || !ws->Ibar || !ws->M ||
        !ws->c || !ws->F || !ws->rhs || !ws->tmp || !ws->w || !ws->rk || !ws->rkbar || !ws->Lst || (m->nsphere && !ws->hard)) {
        sid_workspace_free(ws);
        return NULL;
    }
    return ws;
}

void sid_workspace_free(sid_workspace *ws)
{
    if (!ws) return;
    void *p[] = {ws->X, ws->RT, ws->dRT, ws->theta_seen, ws->Q, ws->I, ws->vJ, ws->aJ, ws->Rw, ws->Rwbar, ws->pw,
                 ws->pwbar, ws->fext, ws->fextbar, ws->v, ws->a, ws->h, ws->f, ws->cm, ws->ch, ws->cI,
                 ws->vbar, ws->abar, ws->fbar, ws->Ebar, ws->rbar, ws->Ibar, ws->M, ws->c, ws->F, ws->rhs,
                 ws->tmp, ws->w, ws->rk, ws->rkbar, ws->Lst};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) sid_free(p[i]);
    sid_hard_free(ws->hard);
    sid_free(ws);
}
