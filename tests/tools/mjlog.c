/* mjlog — simulate an MJCF robot in MuJoCo under multi-sine commands and write a sysid log.
 *
 *   mjlog MODEL.xml [options] > log.csv
 *
 * The log follows FORMATS.md: `t,q.<joint>...,qd.<joint>...,u.<joint>...` with MuJoCo's
 * joint names (the same as robot.json's when the model comes from tests/tools/json2mjcf.py),
 * %.17g. Row k holds the state at t_k and the command applied from t_k to t_{k+1}; the
 * command is evaluated at t_k and held over the sample interval, whatever the number of
 * simulation steps inside it (sysid replays it the same way).
 *
 * Command of actuator j (in command units: N·m, N or A; the model's gear turns it into a
 * joint force):
 *   u_j(t) = bias_j + amp_j / sqrt(K) * sum_{k=1..K} sin(2 pi k f0 t + phi_jk)
 * with phases phi_jk drawn from a fixed-seed generator, so a run is reproducible
 * bit for bit. Options:
 *   --duration S      length of the log [s] (default 4)
 *   --rate HZ         samples per second (default 1000); must divide 1/timestep
 *   --f0 HZ           base frequency of the multi-sine (default 0.2)
 *   --harmonics K     number of harmonics (default 10: 0.2 .. 2 Hz)
 *   --seed N          phase seed (default 1)
 *   --amp J=A,...     amplitude per actuator (default 1; `*=A` sets every actuator)
 *   --bias J=B,...    constant offset per actuator (default 0)
 *   --q0 J=X,...      initial position per joint (default 0)
 *   --v0 J=X,...      initial velocity per joint (default 0)
 *   --integrator euler|rk4   (default: the model's)
 *   --noise-q S, --noise-qd S  Gaussian noise (std) added to the logged q, qd only
 *                     (default 0: clean logs)
 * Exit codes: 0 success, 2 usage or model error, 3 the simulation went non-finite.
 * A tool for tests and example data: it links MuJoCo and is not part of sysid.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mujoco/mujoco.h>

#define MAXH 64
#define PI 3.14159265358979323846

static uint64_t rng_state = 1;

/* splitmix64: small, portable, reproducible. */
static double rng_uniform(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

static double rng_normal(void)
{
    double u1 = rng_uniform(), u2 = rng_uniform();
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(2.0 * PI * u2);
}

static void usage(void)
{
    fprintf(stderr,
            "usage: mjlog MODEL.xml [--duration S] [--rate HZ] [--f0 HZ] [--harmonics K]\n"
            "             [--seed N] [--amp J=A,...] [--bias J=B,...] [--q0 J=X,...]\n"
            "             [--v0 J=X,...] [--integrator euler|rk4] [--noise-q S]\n"
            "             [--noise-qd S] > log.csv\n");
    exit(2);
}

static double parse_num(const char *s, const char *what)
{
    char *end;
    double x = strtod(s, &end);
    if (end == s || *end != '\0' || !isfinite(x)) {
        fprintf(stderr, "mjlog: error: %s: expected a number, got '%s'\n", what, s);
        exit(2);
    }
    return x;
}

/* Apply a "name=value,name=value" list to vals[] indexed by object id of type objtype
 * (actuators or joints); "*=value" sets every entry. */
static void parse_assign(const mjModel *m, int objtype, int n, const char *list, double *vals,
                         const char *what)
{
    char *buf = strdup(list);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        char *eq = strchr(tok, '=');
        if (!eq) {
            fprintf(stderr, "mjlog: error: %s: expected NAME=VALUE, got '%s'\n", what, tok);
            exit(2);
        }
        *eq = '\0';
        double x = parse_num(eq + 1, what);
        if (strcmp(tok, "*") == 0) {
            for (int i = 0; i < n; i++) vals[i] = x;
            continue;
        }
        int id = mj_name2id(m, objtype, tok);
        if (id < 0) {
            fprintf(stderr, "mjlog: error: %s: no %s named '%s'\n", what,
                    objtype == mjOBJ_JOINT ? "joint" : "actuator", tok);
            exit(2);
        }
        vals[id] = x;
    }
    free(buf);
}

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0) usage();
    const char *path = argv[1];
    char errstr[1000] = "";
    mjModel *m = mj_loadXML(path, NULL, errstr, sizeof errstr);
    if (!m) {
        fprintf(stderr, "mjlog: error: %s: %s\n", path, errstr);
        return 2;
    }
    mjData *d = mj_makeData(m);

    double duration = 4.0, rate = 1000.0, f0 = 0.2, noise_q = 0.0, noise_qd = 0.0;
    int nharm = 10;
    uint64_t seed = 1;
    double *amp = calloc((size_t)m->nu + 1, sizeof(double));
    double *bias = calloc((size_t)m->nu + 1, sizeof(double));
    double *q0 = calloc((size_t)m->njnt + 1, sizeof(double));
    double *v0 = calloc((size_t)m->njnt + 1, sizeof(double));
    for (int i = 0; i < m->nu; i++) amp[i] = 1.0;

    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (i + 1 >= argc) usage();
        const char *val = argv[++i];
        if (!strcmp(a, "--duration")) duration = parse_num(val, a);
        else if (!strcmp(a, "--rate")) rate = parse_num(val, a);
        else if (!strcmp(a, "--f0")) f0 = parse_num(val, a);
        else if (!strcmp(a, "--harmonics")) nharm = (int)parse_num(val, a);
        else if (!strcmp(a, "--seed")) seed = (uint64_t)parse_num(val, a);
        else if (!strcmp(a, "--amp")) parse_assign(m, mjOBJ_ACTUATOR, m->nu, val, amp, a);
        else if (!strcmp(a, "--bias")) parse_assign(m, mjOBJ_ACTUATOR, m->nu, val, bias, a);
        else if (!strcmp(a, "--q0")) parse_assign(m, mjOBJ_JOINT, m->njnt, val, q0, a);
        else if (!strcmp(a, "--v0")) parse_assign(m, mjOBJ_JOINT, m->njnt, val, v0, a);
        else if (!strcmp(a, "--noise-q")) noise_q = parse_num(val, a);
        else if (!strcmp(a, "--noise-qd")) noise_qd = parse_num(val, a);
        else if (!strcmp(a, "--integrator")) {
            if (!strcmp(val, "euler")) m->opt.integrator = mjINT_EULER;
            else if (!strcmp(val, "rk4")) m->opt.integrator = mjINT_RK4;
            else usage();
        } else {
            fprintf(stderr, "mjlog: error: unknown option '%s'\n", a);
            usage();
        }
    }
    if (nharm < 1 || nharm > MAXH || duration <= 0 || rate <= 0) usage();
    int substeps = (int)lround(1.0 / (rate * m->opt.timestep));
    if (substeps < 1 || fabs(substeps * rate * m->opt.timestep - 1.0) > 1e-9) {
        fprintf(stderr, "mjlog: error: --rate %g does not divide 1/timestep = %g\n", rate,
                1.0 / m->opt.timestep);
        return 2;
    }
    for (int j = 0; j < m->njnt; j++) {
        if (m->jnt_type[j] != mjJNT_HINGE && m->jnt_type[j] != mjJNT_SLIDE) {
            fprintf(stderr, "mjlog: error: joint %d: only hinge and slide joints\n", j);
            return 2;
        }
    }
    for (int a = 0; a < m->nu; a++) {
        if (m->actuator_trntype[a] != mjTRN_JOINT) {
            fprintf(stderr, "mjlog: error: actuator %d: only joint transmissions\n", a);
            return 2;
        }
    }

    /* Phases first, so the command does not depend on the noise settings. */
    rng_state = seed;
    double *phi = calloc((size_t)m->nu * MAXH + 1, sizeof(double));
    for (int a = 0; a < m->nu; a++)
        for (int k = 0; k < nharm; k++) phi[a * MAXH + k] = 2.0 * PI * rng_uniform();

    mj_resetData(m, d);
    for (int j = 0; j < m->njnt; j++) {
        d->qpos[m->jnt_qposadr[j]] = q0[j];
        d->qvel[m->jnt_dofadr[j]] = v0[j];
    }

    /* header */
    printf("t");
    for (int j = 0; j < m->njnt; j++) printf(",q.%s", mj_id2name(m, mjOBJ_JOINT, j));
    for (int j = 0; j < m->njnt; j++) printf(",qd.%s", mj_id2name(m, mjOBJ_JOINT, j));
    for (int a = 0; a < m->nu; a++)
        printf(",u.%s", mj_id2name(m, mjOBJ_JOINT, m->actuator_trnid[2 * a]));
    printf("\n");

    long nsample = lround(duration * rate) + 1;
    double umax = 0.0, qdmax = 0.0;
    for (long s = 0; s < nsample; s++) {
        double t = (double)s / rate;
        for (int a = 0; a < m->nu; a++) {
            double sum = 0.0;
            for (int k = 0; k < nharm; k++)
                sum += sin(2.0 * PI * (k + 1) * f0 * t + phi[a * MAXH + k]);
            d->ctrl[a] = bias[a] + amp[a] * sum / sqrt((double)nharm);
            if (fabs(d->ctrl[a]) > umax) umax = fabs(d->ctrl[a]);
        }
        printf("%.17g", t);
        for (int j = 0; j < m->njnt; j++) {
            double x = d->qpos[m->jnt_qposadr[j]];
            printf(",%.17g", noise_q > 0 ? x + noise_q * rng_normal() : x);
        }
        for (int j = 0; j < m->njnt; j++) {
            double x = d->qvel[m->jnt_dofadr[j]];
            if (fabs(x) > qdmax) qdmax = fabs(x);
            printf(",%.17g", noise_qd > 0 ? x + noise_qd * rng_normal() : x);
        }
        for (int a = 0; a < m->nu; a++) printf(",%.17g", d->ctrl[a]);
        printf("\n");
        if (s + 1 == nsample) break;
        for (int k = 0; k < substeps; k++) mj_step(m, d);
        for (int i = 0; i < m->nv; i++) {
            if (!isfinite(d->qvel[i]) || !isfinite(d->qpos[i])) {
                fprintf(stderr, "mjlog: error: non-finite state at t = %g\n", t);
                return 3;
            }
        }
        if (d->warning[mjWARN_BADQACC].number > 0) {
            fprintf(stderr, "mjlog: error: MuJoCo reset the state (bad qacc) at t = %g\n", t);
            return 3;
        }
    }
    fprintf(stderr, "mjlog: %s: %ld samples, max |u| %.3g, max |qd| %.3g\n", path, nsample,
            umax, qdmax);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "mjlog: error: writing stdout failed\n");
        return 3;
    }
    free(phi);
    free(amp);
    free(bias);
    free(q0);
    free(v0);
    mj_deleteData(d);
    mj_deleteModel(m);
    return 0;
}
