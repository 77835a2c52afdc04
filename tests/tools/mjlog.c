/* mjlog — simulate an MJCF robot in MuJoCo under multi-sine commands and write a sysid log.
 *
 *   mjlog MODEL.xml [options] > log.csv
 *
 * The log follows docs/formats.md: `t,q.<joint>...,qd.<joint>...,u.<joint>...` with MuJoCo's
 * joint names (the same as robot.json's when the model comes from tests/tools/json2mjcf.py),
 * %.17g. A free joint J has seven q columns `q.J.x,q.J.y,q.J.z,q.J.qw,q.J.qx,q.J.qy,q.J.qz`
 * (world position of the body frame, unit quaternion w x y z) and six qd columns
 * `qd.J.vx,qd.J.vy,qd.J.vz,qd.J.wx,qd.J.wy,qd.J.wz` (world linear velocity, body-frame
 * angular velocity): exactly MuJoCo's qpos and qvel. A model without actuators has no u
 * columns. Hinge, slide and free joints only. Row k holds the state at t_k and the command
 * applied from t_k to t_{k+1}; the command is evaluated at t_k and held over the sample
 * interval, whatever the number of simulation steps inside it (sysid replays it the same
 * way).
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
 *   --q0 J=X,...      initial position per joint (default: the model's qpos0, i.e. 0 for
 *                     hinges and slides, the body's pose in the MJCF for free joints);
 *                     a free joint's coordinates by name: J.x, J.y, J.z, J.qw, J.qx, J.qy,
 *                     J.qz (the quaternion is normalised after parsing, so rounded values
 *                     are fine); `*=X` sets every hinge and slide joint
 *   --v0 J=X,...      initial velocity per joint (default 0); free joints: J.vx, J.vy,
 *                     J.vz (world frame), J.wx, J.wy, J.wz (body frame), as in MuJoCo's qvel
 *   --settle S        before the log, simulate S seconds from the --q0 position at zero
 *                     velocity and zero command (e.g. to let a body come to rest on the
 *                     ground), then set the velocities to --v0 and start the log at t = 0
 *                     from the settled position (default 0: no settling)
 *   --integrator euler|rk4   (default: the model's)
 *   --noise-q S, --noise-qd S  Gaussian noise (std) added to the logged q, qd only
 *                     (default 0: clean logs). Free joints: S [m] on x, y, z; the
 *                     orientation is perturbed by a random rotation (rotation vector in the
 *                     body frame, each component of std --noise-rot) and renormalised; the
 *                     --noise-qd std applies to all six velocity components
 *   --noise-rot S     orientation noise of free joints [rad] (default: the --noise-q value)
 * Exit codes: 0 success, 2 usage or model error, 3 the simulation went non-finite, MuJoCo
 * reset it (bad qpos/qvel/qacc) or ran out of contact or constraint memory.
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
            "             [--v0 J=X,...] [--settle S] [--integrator euler|rk4]\n"
            "             [--noise-q S] [--noise-qd S] [--noise-rot S] > log.csv\n");
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

static const char *const free_qname[7] = { "x", "y", "z", "qw", "qx", "qy", "qz" };
static const char *const free_vname[6] = { "vx", "vy", "vz", "wx", "wy", "wz" };

static int is_1dof(const mjModel *m, int j)
{
    return m->jnt_type[j] == mjJNT_HINGE || m->jnt_type[j] == mjJNT_SLIDE;
}

/* Split tok = "NAME=VALUE" in place (tok keeps NAME) and return VALUE; exit 2 if malformed. */
static double split_assignment(char *tok, const char *what)
{
    char *eq = strchr(tok, '=');
    if (!eq) {
        fprintf(stderr, "mjlog: error: %s: expected NAME=VALUE, got '%s'\n", what, tok);
        exit(2);
    }
    *eq = '\0';
    return parse_num(eq + 1, what);
}

/* Apply a "name=value,..." list of joint coordinates to vals[] (qpos if pos, else qvel):
 * NAME is a hinge or slide joint, or JOINT.COORD for a free joint (free_qname / free_vname);
 * "*=value" sets every hinge and slide joint. */
static void parse_state(const mjModel *m, const char *list, int pos, double *vals,
                        const char *what)
{
    char *buf = strdup(list);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        const double x = split_assignment(tok, what);
        if (strcmp(tok, "*") == 0) {
            for (int j = 0; j < m->njnt; j++)
                if (is_1dof(m, j)) vals[pos ? m->jnt_qposadr[j] : m->jnt_dofadr[j]] = x;
            continue;
        }
        int id = mj_name2id(m, mjOBJ_JOINT, tok);
        if (id >= 0 && is_1dof(m, id)) {
            vals[pos ? m->jnt_qposadr[id] : m->jnt_dofadr[id]] = x;
            continue;
        }
        if (id >= 0) {
            fprintf(stderr, "mjlog: error: %s: joint '%s' is free: name a coordinate, "
                    "e.g. %s.%s\n", what, tok, tok, pos ? "z" : "vx");
            exit(2);
        }
        char *dot = strrchr(tok, '.');
        int k = -1;
        if (dot) {
            *dot = '\0';
            id = mj_name2id(m, mjOBJ_JOINT, tok);
            for (int c = 0; c < (pos ? 7 : 6); c++)
                if (!strcmp(dot + 1, pos ? free_qname[c] : free_vname[c])) k = c;
        }
        if (id < 0 || m->jnt_type[id] != mjJNT_FREE || k < 0) {
            if (dot) *dot = '.';
            fprintf(stderr, "mjlog: error: %s: no joint or free-joint %s coordinate named "
                    "'%s'\n", what, pos ? "position" : "velocity", tok);
            exit(2);
        }
        vals[(pos ? m->jnt_qposadr[id] : m->jnt_dofadr[id]) + k] = x;
    }
    free(buf);
}

/* Apply a "name=value,name=value" list to vals[] indexed by actuator id; "*=value" sets
 * every entry. */
static void parse_assign(const mjModel *m, int objtype, int n, const char *list, double *vals,
                         const char *what)
{
    char *buf = strdup(list);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        const double x = split_assignment(tok, what);
        if (strcmp(tok, "*") == 0) {
            for (int i = 0; i < n; i++) vals[i] = x;
            continue;
        }
        int id = mj_name2id(m, objtype, tok);
        if (id < 0) {
            fprintf(stderr, "mjlog: error: %s: no actuator named '%s'\n", what, tok);
            exit(2);
        }
        vals[id] = x;
    }
    free(buf);
}

/* q <- q * exp(r / 2) with r a rotation vector of independent N(0, s^2) components (a small
 * rotation in the body frame), then renormalised. */
static void perturb_quat(double q[4], double s)
{
    double r[3] = { s * rng_normal(), s * rng_normal(), s * rng_normal() };
    double a = sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
    double c = cos(0.5 * a), k = a > 0 ? sin(0.5 * a) / a : 0.5;
    double e[4] = { c, k * r[0], k * r[1], k * r[2] };
    double p[4] = {
        q[0] * e[0] - q[1] * e[1] - q[2] * e[2] - q[3] * e[3],
        q[0] * e[1] + q[1] * e[0] + q[2] * e[3] - q[3] * e[2],
        q[0] * e[2] - q[1] * e[3] + q[2] * e[0] + q[3] * e[1],
        q[0] * e[3] + q[1] * e[2] - q[2] * e[1] + q[3] * e[0],
    };
    double n = sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2] + p[3] * p[3]);
    for (int i = 0; i < 4; i++) q[i] = p[i] / n;
}

/* Nonzero (after a message) if the state went non-finite or MuJoCo warned about a reset or
 * full contact/constraint buffers. */
static int check_state(const mjModel *m, const mjData *d, double t)
{
    for (int i = 0; i < m->nq; i++)
        if (!isfinite(d->qpos[i])) goto nonfinite;
    for (int i = 0; i < m->nv; i++)
        if (!isfinite(d->qvel[i])) goto nonfinite;
    if (d->warning[mjWARN_BADQACC].number > 0 || d->warning[mjWARN_BADQPOS].number > 0 ||
        d->warning[mjWARN_BADQVEL].number > 0) {
        fprintf(stderr, "mjlog: error: MuJoCo reset the state (bad qpos, qvel or qacc) at "
                "t = %g\n", t);
        return 1;
    }
    if (d->warning[mjWARN_CONTACTFULL].number > 0 || d->warning[mjWARN_CNSTRFULL].number > 0) {
        fprintf(stderr, "mjlog: error: MuJoCo's contact or constraint buffer is full at "
                "t = %g\n", t);
        return 1;
    }
    return 0;
nonfinite:
    fprintf(stderr, "mjlog: error: non-finite state at t = %g\n", t);
    return 1;
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
    double noise_rot = -1.0, settle = 0.0;
    int nharm = 10;
    uint64_t seed = 1;
    double *amp = calloc((size_t)m->nu + 1, sizeof(double));
    double *bias = calloc((size_t)m->nu + 1, sizeof(double));
    double *q0 = calloc((size_t)m->nq + 1, sizeof(double));
    double *v0 = calloc((size_t)m->nv + 1, sizeof(double));
    for (int i = 0; i < m->nu; i++) amp[i] = 1.0;
    for (int i = 0; i < m->nq; i++) q0[i] = m->qpos0[i];
    for (int j = 0; j < m->njnt; j++) {
        if (!is_1dof(m, j) && m->jnt_type[j] != mjJNT_FREE) {
            fprintf(stderr, "mjlog: error: joint %d: only hinge, slide and free joints\n", j);
            return 2;
        }
    }

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
        else if (!strcmp(a, "--q0")) parse_state(m, val, 1, q0, a);
        else if (!strcmp(a, "--v0")) parse_state(m, val, 0, v0, a);
        else if (!strcmp(a, "--settle")) settle = parse_num(val, a);
        else if (!strcmp(a, "--noise-q")) noise_q = parse_num(val, a);
        else if (!strcmp(a, "--noise-qd")) noise_qd = parse_num(val, a);
        else if (!strcmp(a, "--noise-rot")) noise_rot = parse_num(val, a);
        else if (!strcmp(a, "--integrator")) {
            if (!strcmp(val, "euler")) m->opt.integrator = mjINT_EULER;
            else if (!strcmp(val, "rk4")) m->opt.integrator = mjINT_RK4;
            else usage();
        } else {
            fprintf(stderr, "mjlog: error: unknown option '%s'\n", a);
            usage();
        }
    }
    if (nharm < 1 || nharm > MAXH || duration <= 0 || rate <= 0 || settle < 0) usage();
    if (noise_rot < 0) noise_rot = noise_q;
    for (int j = 0; j < m->njnt; j++) {   /* normalise free joints' start quaternions */
        if (m->jnt_type[j] != mjJNT_FREE) continue;
        double *qq = q0 + m->jnt_qposadr[j] + 3;
        double n = sqrt(qq[0] * qq[0] + qq[1] * qq[1] + qq[2] * qq[2] + qq[3] * qq[3]);
        if (!(n > 0)) {
            fprintf(stderr, "mjlog: error: --q0: joint %s: zero quaternion\n",
                    mj_id2name(m, mjOBJ_JOINT, j));
            return 2;
        }
        for (int c = 0; c < 4; c++) qq[c] /= n;
    }
    int substeps = (int)lround(1.0 / (rate * m->opt.timestep));
    if (substeps < 1 || fabs(substeps * rate * m->opt.timestep - 1.0) > 1e-9) {
        fprintf(stderr, "mjlog: error: --rate %g does not divide 1/timestep = %g\n", rate,
                1.0 / m->opt.timestep);
        return 2;
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
    for (int i = 0; i < m->nq; i++) d->qpos[i] = q0[i];
    if (settle > 0) {
        long nsettle = lround(settle / m->opt.timestep);
        for (long k = 0; k < nsettle; k++) {
            mj_step(m, d);
            if (check_state(m, d, -settle + (double)(k + 1) * m->opt.timestep)) return 3;
        }
        d->time = 0.0;
    }
    for (int i = 0; i < m->nv; i++) d->qvel[i] = v0[i];

    /* header */
    printf("t");
    for (int j = 0; j < m->njnt; j++) {
        const char *name = mj_id2name(m, mjOBJ_JOINT, j);
        if (is_1dof(m, j)) printf(",q.%s", name);
        else for (int c = 0; c < 7; c++) printf(",q.%s.%s", name, free_qname[c]);
    }
    for (int j = 0; j < m->njnt; j++) {
        const char *name = mj_id2name(m, mjOBJ_JOINT, j);
        if (is_1dof(m, j)) printf(",qd.%s", name);
        else for (int c = 0; c < 6; c++) printf(",qd.%s.%s", name, free_vname[c]);
    }
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
            const double *x = d->qpos + m->jnt_qposadr[j];
            if (is_1dof(m, j)) {
                printf(",%.17g", noise_q > 0 ? x[0] + noise_q * rng_normal() : x[0]);
                continue;
            }
            double p[7];
            for (int c = 0; c < 7; c++) p[c] = x[c];
            if (noise_q > 0)
                for (int c = 0; c < 3; c++) p[c] += noise_q * rng_normal();
            if (noise_rot > 0) perturb_quat(p + 3, noise_rot);
            for (int c = 0; c < 7; c++) printf(",%.17g", p[c]);
        }
        for (int j = 0; j < m->njnt; j++) {
            int n = is_1dof(m, j) ? 1 : 6;
            for (int c = 0; c < n; c++) {
                double x = d->qvel[m->jnt_dofadr[j] + c];
                if (fabs(x) > qdmax) qdmax = fabs(x);
                printf(",%.17g", noise_qd > 0 ? x + noise_qd * rng_normal() : x);
            }
        }
        for (int a = 0; a < m->nu; a++) printf(",%.17g", d->ctrl[a]);
        printf("\n");
        if (s + 1 == nsample) break;
        for (int k = 0; k < substeps; k++) mj_step(m, d);
        if (check_state(m, d, t)) return 3;
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
