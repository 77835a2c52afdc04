/* grad_commands.c — `sysid grad ROBOT LOG... --wrt commands [-o FILE] [--check]`.
 *
 * One CSV for all logs, so a script reads one file whatever it optimises: columns log (the
 * log's place among the operands, 1-based), t (seconds from the log's first sample, as the
 * logs are read) and u.COORD for each coordinate with a motor, in the log's order and names
 * (docs/formats.md "Command gradient"); one row per sample of each log, %.17g-exact. A value is
 * d loss / d u[k] in SI units of the command (N m, N, A, V; a servo's rad, m, rad/s, m/s),
 * the loss as `sysid grad` prints it.
 *
 * --check compares the CHECK_LARGEST largest entries and CHECK_RANDOM others drawn by a fixed
 * seed with the five-point central difference of the loss in that one command, by the mixed
 * error of the parameter check (cmd_grad.c), on stderr. */
#include "grad_commands.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic.h"
#include "coords.h"
#include "diag.h"
#include "numfmt.h"

#define CHECK_TOL 1e-4
#define CHECK_LARGEST 20
#define CHECK_RANDOM 20

typedef struct {
    int log, k, c;   /* log, sample, coordinate */
    double g;        /* the adjoint's entry */
} entry;

static int write_csv(FILE *f, const sid_model *m, sid_traj **logs, int nlog, double *const *ub, const int *mc, int nm)
{
    const int nv = sid_model_nv(m);
    char buf[NUMFMT_LEN];
    fputs("log,t", f);
    for (int c = 0; c < nm; c++) fprintf(f, ",u.%s", sid_model_v_name(m, mc[c]));
    fputc('\n', f);
    for (int l = 0; l < nlog; l++)
        for (int k = 0; k < logs[l]->n && !ferror(f); k++) {
            numfmt(buf, logs[l]->t[k]);
            fprintf(f, "%d,%s", l + 1, buf);
            for (int c = 0; c < nm; c++) {
                numfmt(buf, ub[l][(size_t)k * (size_t)nv + (size_t)mc[c]]);
                fprintf(f, ",%s", buf);
            }
            fputc('\n', f);
        }
    return ferror(f) ? -1 : 0;
}

static int output(const char *out, const sid_model *m, sid_traj **logs, int nlog, double *const *ub, const int *mc,
                  int nm)
{
    sid_error err = {0};
    if (!out || strcmp(out, "-") == 0) {
        if (write_csv(stdout, m, logs, nlog, ub, mc, nm) == 0 && fflush(stdout) == 0) return EXIT_OK;
        cli_error("cannot write to standard output");
        return EXIT_INPUT;
    }
    atomic_file af;
    if (atomic_open(&af, out, &err) != SID_OK) return cli_fail(&err);
    if (write_csv(af.f, m, logs, nlog, ub, mc, nm) != 0) {
        atomic_abort(&af);
        cli_error("%s: cannot write", out);
        return EXIT_INPUT;
    }
    if (atomic_commit(&af, &err) != SID_OK) return cli_fail(&err);
    return EXIT_OK;
}

/* Loss with command (l, k, c) moved by d (restored on return). */
static sid_status loss_moved(sid_problem *p, const double *theta, sid_traj *tr, size_t at, double d, double *f,
                             sid_error *err)
{
    const double u0 = tr->u[at];
    tr->u[at] = u0 + d;
    const sid_status s = sid_problem_loss(p, theta, NULL, f, NULL, NULL, err);
    tr->u[at] = u0;
    return s;
}

/* A small deterministic generator: the entries checked are the same on every run. */
static unsigned long next_rand(unsigned long *s)
{
    *s = *s * 6364136223846793005UL + 1442695040888963407UL;
    return *s >> 33;
}

/* The entries to check: the largest, then others at random (no repeats); returns how many. */
static int pick_entries(sid_traj **logs, int nlog, int nv, double *const *ub, const int *mc, int nm, entry *e)
{
    long total = 0;
    for (int l = 0; l < nlog; l++) total += (long)logs[l]->n * nm;
    int n = 0;
    for (int r = 0; r < CHECK_LARGEST && n < total; r++) {
        entry best = {-1, 0, 0, 0};
        for (int l = 0; l < nlog; l++)
            for (int k = 0; k < logs[l]->n; k++)
                for (int c = 0; c < nm; c++) {
                    const double g = ub[l][(size_t)k * (size_t)nv + (size_t)mc[c]];
                    int taken = 0;
                    for (int i = 0; i < n && !taken; i++) taken = e[i].log == l && e[i].k == k && e[i].c == c;
                    if (!taken && (best.log < 0 || fabs(g) > fabs(best.g))) best = (entry){l, k, c, g};
                }
        e[n++] = best;
    }
    unsigned long s = 12345;
    for (int r = 0, tries = 0; r < CHECK_RANDOM && n < total && tries < 100 * CHECK_RANDOM; tries++) {
        long i = (long)(next_rand(&s) % (unsigned long)total);
        int l = 0;
        while (i >= (long)logs[l]->n * nm) i -= (long)logs[l]->n * nm, l++;
        const int k = (int)(i / nm), c = (int)(i % nm);
        int taken = 0;
        for (int j = 0; j < n && !taken; j++) taken = e[j].log == l && e[j].k == k && e[j].c == c;
        if (taken) continue;
        e[n++] = (entry){l, k, c, ub[l][(size_t)k * (size_t)nv + (size_t)mc[c]]};
        r++;
    }
    return n;
}

/* --check: the five-point central difference of each picked entry (step 1e-6 max(1, |u|)),
 * failing where the mixed error max(0, |g - fd| - atol) / (|g| + |fd| + atol) > CHECK_TOL,
 * atol = 1e-9 max |g| over every entry. A summary, and each failure, on stderr. */
static int check_entries(sid_problem *p, const double *theta, sid_traj **logs, int nlog, double *const *ub,
                         const int *mc, int nm)
{
    const sid_model *m = sid_problem_model(p);
    const int nv = sid_model_nv(m);
    entry e[CHECK_LARGEST + CHECK_RANDOM];
    const int n = pick_entries(logs, nlog, nv, ub, mc, nm, e);
    double gmax = 0;
    for (int l = 0; l < nlog; l++)
        for (size_t i = 0; i < (size_t)logs[l]->n * (size_t)nv; i++) gmax = fmax(gmax, fabs(ub[l][i]));
    const double atol = 1e-9 * gmax;
    double max_rel = 0;
    int nfail = 0;
    for (int i = 0; i < n; i++) {
        sid_traj *tr = logs[e[i].log];
        const size_t at = (size_t)e[i].k * (size_t)nv + (size_t)mc[e[i].c];
        const double h = 1e-6 * fmax(1, fabs(tr->u[at])), d[4] = {h, -h, 2 * h, -2 * h};
        double f[4];
        sid_error err = {0};
        for (int j = 0; j < 4; j++)
            if (loss_moved(p, theta, tr, at, d[j], &f[j], &err) != SID_OK) {
                sid_error_prefix(&err, "--check: log %d, sample %d, u.%s moved by %g", e[i].log + 1, e[i].k + 1,
                                 sid_model_v_name(m, mc[e[i].c]), d[j]);
                return cli_fail(&err);
            }
        const double fd = (8 * (f[0] - f[1]) - (f[2] - f[3])) / (12 * h), g = e[i].g;
        const double diff = fabs(g - fd), den = fabs(g) + fabs(fd) + atol;
        const double mixed = den > 0 ? fmax(0, diff - atol) / den : 0;
        const double rel = diff / fmax(fmax(fabs(g), fabs(fd)), DBL_MIN);
        if (fmax(fabs(g), fabs(fd)) > atol) max_rel = fmax(max_rel, rel);
        if (mixed > CHECK_TOL) {
            nfail++;
            fprintf(stderr, "sysid: grad --check: log %d, t = %.17g, u.%s: adjoint %.17g, fd %.17g, rel_err %.3g: FAIL\n",
                    e[i].log + 1, tr->t[e[i].k], sid_model_v_name(m, mc[e[i].c]), g, fd, rel);
        }
    }
    fprintf(stderr, "sysid: grad --check: %d command entries (the %d largest, the others at random) against central "
            "differences: max_rel_err %.3g, failed %d (tol %g, atol %.3g)\n", n, n < CHECK_LARGEST ? n : CHECK_LARGEST,
            max_rel, nfail, CHECK_TOL, atol);
    if (nfail) {
        cli_error("grad --check: %d of %d command entries exceed the tolerance %g", nfail, n, CHECK_TOL);
        return EXIT_GATE;
    }
    return EXIT_OK;
}

int grad_commands_run(sid_problem *p, const double *theta, sid_traj **logs, int nlog, const char *out, int check)
{
    const sid_model *m = sid_problem_model(p);
    const int nv = sid_model_nv(m);
    int rc = EXIT_OK;
    double **ub = calloc((size_t)nlog, sizeof *ub);
    int *mc = malloc(sizeof(int) * (size_t)(nv > 0 ? nv : 1));
    if (!ub || !mc) goto nomem;
    for (int l = 0; l < nlog; l++)
        if (!(ub[l] = malloc(sizeof(double) * (size_t)logs[l]->n * (size_t)(nv > 0 ? nv : 1)))) goto nomem;
    const int nm = coords_motor(m, mc);
    if (nm == 0) {
        cli_error("grad --wrt commands: the robot has no motor, so the logs have no commands to differentiate by");
        rc = EXIT_INPUT;
        goto done;
    }
    sid_error err = {0};
    double loss, loss_only, t_grad = HUGE_VAL, t_loss = HUGE_VAL;
    /* the fastest of a few (within half a second): the first also pays for cold caches */
    for (int rep = 0, spent = 0; rep < 3 && !spent; rep++) {
        const double t0 = sid_clock_seconds();
        if (sid_problem_grad_commands(p, theta, NULL, &loss, ub, &err) != SID_OK) {
            rc = cli_fail(&err);
            goto done;
        }
        const double t1 = sid_clock_seconds();
        if (sid_problem_loss(p, theta, NULL, &loss_only, NULL, NULL, &err) != SID_OK) {
            rc = cli_fail(&err);
            goto done;
        }
        const double t2 = sid_clock_seconds();
        t_grad = fmin(t_grad, t1 - t0), t_loss = fmin(t_loss, t2 - t1);
        spent = t2 - t0 > 0.25;
    }
    long samples = 0;
    for (int l = 0; l < nlog; l++) samples += logs[l]->n;
    if (!cli_quiet)
        fprintf(stderr, "sysid: grad: loss %.17g; loss and command gradient in %.3g ms, loss alone in %.3g ms "
                "(%d windows, %d residuals, %ld samples x %d commands)\n", loss, 1e3 * t_grad, 1e3 * t_loss,
                sid_problem_nwindows(p), sid_problem_nresiduals(p), samples, nm);
    if (check && loss < 1e-20)
        cli_warn("grad: the loss (%g) is at round-off level: the model replays the logs exactly, its gradient is "
                 "round-off noise, and --check compares noise", loss);
    const int crc = check ? check_entries(p, theta, logs, nlog, ub, mc, nm) : EXIT_OK;
    if (crc == EXIT_INPUT || crc == EXIT_NUMERIC) {   /* a difference that did not evaluate: no output */
        rc = crc;
        goto done;
    }
    rc = output(out, m, logs, nlog, ub, mc, nm);
    if (rc == EXIT_OK) rc = crc;
    goto done;
nomem:
    cli_error("out of memory");
    rc = EXIT_INPUT;
done:
    for (int l = 0; ub && l < nlog; l++) free(ub[l]);
    free(ub);
    free(mc);
    return rc;
}
