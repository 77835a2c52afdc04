/* stepchoice.c — the simulation step a command uses: core's sid_step_choose on the command's
 * own logs at the robot's parameters, written back into the spec so that every problem the
 * command makes (and the report's settings) use it, and the sentence `validate` prints. */
#include "stepchoice.h"

#include <math.h>
#include <stdio.h>

#include "warn.h"

int stepchoice_apply(fitspec *spec, const sid_model *m, const double *theta, sid_traj *const *logs,
                     const char *const *path, int nlog, int say, sid_step_choice *c, sid_error *err)
{
    sid_loss_opts lo;
    fitspec_loss_opts(spec, &lo);
    /* the work the user's own options ask for, named by file, before any choosing */
    for (int l = 0; l < nlog; l++)
        if (sid_sim_check(&lo.sim, logs[l], err)) {
            sid_error_prefix(err, "simulating %s", path[l]);
            return -1;
        }
    if (sid_step_choose(m, theta, (const sid_traj *const *)logs, nlog, &lo, SID_STEP_TOL, c, err)) return -1;
    spec->sim = c->sim;
    if (say) {
        char line[640];
        stepchoice_describe(c, m, line, sizeof line);
        sid_io_note("step: %s", line);
    }
    return 0;
}

/* A duration in ms below 1 s, else in s. */
static void seconds(char *buf, size_t n, double s)
{
    if (s < 1) snprintf(buf, n, "%.4g ms", s * 1e3);
    else snprintf(buf, n, "%.4g s", s);
}

void stepchoice_describe(const sid_step_choice *c, const sid_model *m, char *buf, size_t n)
{
    char h[32], dt[32], win[32];
    seconds(h, sizeof h, c->h);
    seconds(dt, sizeof dt, c->interval);
    seconds(win, sizeof win, c->window);
    const char *integ = sid_integrator_name(c->sim.integrator);
    int k = snprintf(buf, n, "%s (%d substep%s of the %s median sample interval%s, %s): ", h, c->substeps,
                     c->substeps == 1 ? "" : "s", dt, c->sim.max_dt > 0 ? ", none longer" : "", integ);
    if (k < 0 || (size_t)k >= n) return;
    buf += k, n -= (size_t)k;
    if (c->from_robot) {
        snprintf(buf, n, "the robot's own timestep, kept (no step test); --max-dt or --substeps overrides");
        return;
    }
    if (!c->automatic) {
        snprintf(buf, n, "as given (--substeps, --max-dt or the spec), kept (no step test)");
        return;
    }
    const char *unit = c->coord >= 0 && !sid_model_q_is_angular(m, c->coord) ? "m" : "rad";
    if (c->error < 0)
        k = snprintf(buf, n, "error not estimated (halving the step exceeds the work limits)");
    else if (!isfinite(c->error))
        k = snprintf(buf, n, "a simulation diverged at this step or half of it");
    else
        k = snprintf(buf, n, "estimated position error %.2g %s (%s) per %s window (step doubling on %d windows), %.2g "
                     "of its allowance %.2g %s: the larger of %.2g of its spread %.3g %s and %.2g of the noise %.2g %s "
                     "its log shows", c->error_abs, unit, c->coord >= 0 ? sid_model_q_name(m, c->coord) : "-", win,
                     c->windows, c->error, c->allowance, unit, c->tol, c->scale, unit, c->noise_tol, c->noise, unit);
    if (k < 0 || (size_t)k >= n) return;
    buf += k, n -= (size_t)k;
    if (c->capped)
        snprintf(buf, n, "; above it at the most substeps tried: give --max-dt");
    else
        snprintf(buf, n, "; --max-dt or --substeps overrides");
}
