/* command_grad.c — the loss's gradient with respect to the logged commands (sid.h,
 * sid_problem_grad_commands): the adjoint of dL/dtheta's reverse sweep also gives the
 * cotangent of each interval's held command (adjoint.c, ws->ubar), and the delay's adjoint
 * hands it to the log samples the command was read from (delay.h). What trajectory
 * optimisation and analytic policy gradients need: one backward pass for every sample.
 *
 * Thread count. Each window adds into a buffer of its own, covering the samples it can read
 * (from sid_delay_first_sample of its start to its end); the windows run in parallel in the
 * problem's chunks (sid_problem_run_chunks, as the loss's gradient), and their buffers are
 * summed into the logs' arrays in window order afterwards, so the result does not depend on
 * the number of threads. */
#include "delay.h"
#include "problem.h"

#include <math.h>
#include <string.h>

sid_status sid_problem_grad_commands(sid_problem *p, const double *theta, const double *x0, double *loss,
                                     double *const *ubar, sid_error *err)
{
    const sid_model *m = p->m;
    const int nu = m->nvo;
    /* window w's buffer: rows first[w] .. k1 of its log, from off[w] */
    int *first = sid_alloc(sizeof(int) * (size_t)p->nwin);
    size_t *off = sid_alloc(sizeof(size_t) * (size_t)(p->nwin + 1));
    if (!first || !off) {
        sid_free(first);
        sid_free(off);
        return sid_error_set(err, SID_ERR_NOMEM, "out of memory");
    }
    for (int w = 0; w < p->nwin; w++) {
        const window *win = &p->win[w];
        first[w] = sid_delay_first_sample(m, theta, p->logs[win->log], win->k0);
        off[w + 1] = off[w] + (size_t)(win->k1 - first[w] + 1) * (size_t)nu;
    }
    double *buf = sid_alloc(sizeof(double) * (off[p->nwin] > 0 ? off[p->nwin] : 1));
    if (!buf) {
        sid_free(first);
        sid_free(off);
        return sid_error_set(err, SID_ERR_NOMEM, "out of memory");
    }
    const sid_ubar_out ub = {buf, off, first};
    /* thetabar: wanted by the sweep */
    sid_status s = sid_problem_run_chunks(p, theta, x0, &(sid_run_wants){1, NULL, 0, &ub}, err);
    if (!s) {
        const double inv = 1.0 / p->nres;
        double sum = 0;
        for (int c = 0; c < p->nchunk; c++) sum += p->chunk_sum[c];
        if (loss) *loss = sum * inv;
        if (!isfinite(sum)) s = sid_error_set(err, SID_ERR_NONFINITE, "loss is not finite");
        for (int l = 0; l < p->nlog; l++)
            memset(ubar[l], 0, sizeof(double) * (size_t)p->logs[l]->n * (size_t)nu);
        for (int w = 0; w < p->nwin; w++) {   /* in window order: the same sums for any thread count */
            const window *win = &p->win[w];
            double *out = ubar[win->log] + (size_t)first[w] * (size_t)nu;
            const double *in = buf + off[w];
            for (size_t i = 0; i < off[w + 1] - off[w]; i++) out[i] += in[i];
        }
        for (int l = 0; l < p->nlog && !s; l++)
            for (size_t i = 0; i < (size_t)p->logs[l]->n * (size_t)nu; i++) {
                ubar[l][i] *= inv;
                if (!isfinite(ubar[l][i])) {
                    s = sid_error_set(err, SID_ERR_NONFINITE, "log %d: the gradient of sample %zu's commands is not finite",
                                      l + 1, i / (size_t)nu + 1);
                    break;
                }
            }
    }
    sid_free(buf);
    sid_free(first);
    sid_free(off);
    return s;
}
