#!/usr/bin/env bash
# tests/tools/lm_vs_lbfgs.sh [SECONDS] [TIME_LIMIT] — issue 18's measurement: the 7-joint arm's
# 28 joint parameters (armature, viscous and Coulomb friction, kt) fitted with start states
# fitted (sysid fit's default), by L-BFGS and by Levenberg-Marquardt, one after the other on
# the same data, side by side. Run from the repository root after `make`:
#
#     bash tests/tools/lm_vs_lbfgs.sh 60 300     # the issue's case: 60 s log, 300 s limit each
#     bash tests/tools/lm_vs_lbfgs.sh 10 300     # a 10 s log
#     LMBENCH_OPTIMIZERS=lm bash tests/tools/lm_vs_lbfgs.sh 3600 3600   # an hour of data, LM only
#
# The data: arm7 (data/arm7/robot.json) with a Coulomb friction of half its viscous coefficient
# (N*m per N*m*s/rad: arm7 has none, and a zero nominal cannot be "20-50 % off") is the
# nominal robot; the truth has each of the 28 parameters 20 to 50 % off (sign and size from a
# fixed seed). The log: SECONDS at 1 kHz, a 10-tone multi-sine command per joint (0.2-2 Hz,
# data/arm7/README.md's amplitudes, as tests/bench's bench_command), simulated by `sysid
# simulate` from the truth and the README's start state. Both fits: bounds [0.1, 10] x
# nominal (Coulomb [0, 10] x nominal), --substeps 1 (the step the log was simulated with, so
# the truth reproduces it exactly; the automatic choice takes 16 substeps here and makes every
# evaluation 16 times dearer), all other settings sysid fit's defaults, --time-limit.
# Printed per optimizer: stop, iterations, evaluations (LM: trial losses + Jacobians), fit
# wall time (report timing.fit_seconds), the worst joint's q RMSE predicted from the logged
# start states (report prediction.fit.rmse.after), the worst relative parameter error
# against the truth; and the machine's load average before each fit (2 shared cores).
set -eu
T=${1:-60}
LIMIT=${2:-300}
SYSID=${SYSID:-./sysid}
W=${LMBENCH_DIR:-build/lm_vs_lbfgs}
mkdir -p "$W"

python3 - "$T" "$W" <<'EOF'
import json, math, random, sys
T, w = float(sys.argv[1]), sys.argv[2]
robot = json.load(open("data/arm7/robot.json"))
rng = random.Random(18)
nominal, truth, bounds = {}, {}, []
for j in robot["joints"]:
    if j.get("type") in ("fixed", None) or "friction" not in j:
        continue
    n = j["name"]
    j["friction"]["coulomb"] = 0.5 * j["friction"]["viscous"]
    vals = {"armature": j["armature"], "friction.viscous": j["friction"]["viscous"],
            "friction.coulomb": j["friction"]["coulomb"], "motor.kt": j["motor"]["kt"]}
    for k, v in vals.items():
        name = "joints.%s.%s" % (n, k)
        f = rng.uniform(0.2, 0.5)
        nominal[name] = v
        truth[name] = v * (1 + f if rng.random() < 0.5 else 1 - f)
json.dump(robot, open(w + "/nominal.json", "w"), indent=2)
with open(w + "/truth.txt", "w") as out:
    for k in nominal:
        out.write("%s %.17g %.17g\n" % (k, nominal[k], truth[k]))
with open(w + "/set.txt", "w") as out:
    for k in truth:
        out.write("--set\n%s=%.17g\n" % (k, truth[k]))
# commands: 10 tones 0.2 j Hz, phases from a fixed seed, amplitude / sqrt(10)
q0 = [0.3, -2.9, 2.3, -1.6, 2.1, 2.4, -0.7]
amp = [0.3, 0.6, 1, 0.4, 0.3, 0.2, 0.1]
ph = [[rng.uniform(0, 2 * math.pi) for _ in range(10)] for _ in range(7)]
names = [j["name"] for j in robot["joints"] if j.get("type") not in ("fixed", None)]
with open(w + "/commands.csv", "w") as out:
    out.write("t," + ",".join("q." + n for n in names) + "," + ",".join("qd." + n for n in names) + "," +
              ",".join("u." + n for n in names) + "\n")
    for k in range(int(round(T * 1000)) + 1):
        t = k * 1e-3
        u = [amp[i] / math.sqrt(10) * sum(math.sin(2 * math.pi * 0.2 * (j + 1) * t + ph[i][j]) for j in range(10))
             for i in range(7)]
        out.write("%.3f," % t + ",".join(repr(x) for x in q0) + "," + ",".join("0" for _ in q0) + "," +
                  ",".join(repr(x) for x in u) + "\n")
EOF
# shellcheck disable=SC2046
$SYSID params "$W/nominal.json" $(cat "$W/set.txt") -o "$W/truth.json"
$SYSID simulate "$W/truth.json" "$W/commands.csv" --substeps 1 -o "$W/log.csv"

echo "arm7, ${T} s at 1 kHz, 28 joint parameters 20-50 % off, start states fitted, time limit ${LIMIT} s each"
echo "$(nproc) cores; $(uname -n); $(date -u +%FT%TZ)"
printf '| optimizer | load before | stop | iterations | evaluations | fit wall [s] | worst q RMSE [rad] | worst param error | worst param |\n'
printf '|---|---|---|---|---|---|---|---|---|\n'
for opt in ${LMBENCH_OPTIMIZERS:-lbfgs lm}; do
    load=$(cut -d' ' -f1-3 /proc/loadavg)
    $SYSID fit "$W/nominal.json" "$W/log.csv" -q --optimizer "$opt" --time-limit "$LIMIT" --substeps 1 \
        --free-only 'joints.*.armature' --free-only 'joints.*.friction.viscous' \
        --free-only 'joints.*.friction.coulomb' --free-only 'joints.*.motor.kt' \
        --bounds 'joints.*.friction.coulomb=scale:0:10' --bounds '*=scale:0.1:10' \
        -o "$W/fitted_$opt.json" --report "$W/report_$opt.json" || true
    python3 - "$W/report_$opt.json" "$W/truth.txt" "$opt" "$load" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
truth = {l.split()[0]: float(l.split()[2]) for l in open(sys.argv[2])}
worst, wname = 0, ""
for p in r["parameters"]:
    e = abs(p["fitted"] - truth[p["name"]]) / abs(truth[p["name"]])
    if e > worst:
        worst, wname = e, p["name"]
rmse = max(r["prediction"]["fit"]["rmse"]["after"]["q"].values())
ev = "%d (%d Jacobians)" % (r["evaluations"], r["jacobians"]) if "jacobians" in r else "%d" % r["evaluations"]
print("| %s | %s | %s | %d | %s | %.1f | %.2e | %.2e | %s |" % (sys.argv[3], sys.argv[4], r["stop"], r["iterations"], ev,
      r["timing"]["fit_seconds"], rmse, worst, wname))
EOF
done
