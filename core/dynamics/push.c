/* push.c — logged external wrenches on links (push.h). A world-frame wrench (T, F) at the link's
 * origin is (R^T T, R^T F) in body coordinates, R the link's world rotation, so it depends on q
 * through R; a link-frame wrench is already in body coordinates. */
#include "push.h"

#include "model.h"

const double *sid_push_at(const sid_traj *tr, int nbody, int k)
{
    return tr->push ? tr->push + (size_t)k * (size_t)nbody * SID_PUSH_STRIDE : NULL;
}

void sid_push_forces(const sid_model *m, sid_workspace *ws, sid_sv *fext)
{
    for (int b = 1; b < m->nbody; b++) {
        const double *p = ws->push + (size_t)b * SID_PUSH_STRIDE;
        const sid_m3 *R = &ws->Rw[b];
        const sid_sv wb = sid_sv_make(sid_m3_tmul_v3(R, sid_v3_load(p + SID_PUSH_WORLD)),
                                      sid_m3_tmul_v3(R, sid_v3_load(p + SID_PUSH_WORLD + 3)));
        sid_sv_acc(&fext[b], wb);
        sid_sv_acc(&fext[b], sid_sv_make(sid_v3_load(p + SID_PUSH_LINK), sid_v3_load(p + SID_PUSH_LINK + 3)));
    }
}

void sid_push_forces_vjp(const sid_model *m, sid_workspace *ws, const sid_sv *fextbar)
{
    for (int b = 1; b < m->nbody; b++) {
        const double *p = ws->push + (size_t)b * SID_PUSH_STRIDE;
        sid_m3_acc_outer(&ws->Rwbar[b], sid_v3_load(p + SID_PUSH_WORLD), fextbar[b].w);
        sid_m3_acc_outer(&ws->Rwbar[b], sid_v3_load(p + SID_PUSH_WORLD + 3), fextbar[b].l);
    }
}

void sid_push_forces_jvp(const sid_model *m, sid_workspace *ws, sid_sv *fextdot)
{
    for (int b = 1; b < m->nbody; b++) {
        const double *p = ws->push + (size_t)b * SID_PUSH_STRIDE;
        const sid_m3 *Rd = &ws->Rwbar[b];
        sid_sv_acc(&fextdot[b], sid_sv_make(sid_m3_tmul_v3(Rd, sid_v3_load(p + SID_PUSH_WORLD)),
                                            sid_m3_tmul_v3(Rd, sid_v3_load(p + SID_PUSH_WORLD + 3))));
    }
}
