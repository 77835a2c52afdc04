#!/usr/bin/env bash
# tests/bench/as_typed.sh — the command a user types against MuJoCo's finite-difference fit, side by
# side, as whole processes (`make bench` runs it after the rows of bench_runner; a benchmark, not a
# test: it prints a table and checks nothing).
#
# Data the project has not fitted before, made here by MuJoCo 2.2.2 (build/mjlog): data/arm7's MJCF
# twin with a frictionloss on every joint, its truth 20-50 % off in the masses of link2..7, the
# joints' damping and armature and (for the last row) their frictionloss; a 3 s log at 1 kHz of its
# multi-sine commands (data/arm7/README.md's amplitudes) with white noise of 5e-4 rad and 5e-3 rad/s,
# and a 20 s clean one. Fitted, each from its nominal values:
#   - `sysid fit nominal.xml LOG --free-only ...` as typed (the MJCF brings its timestep and its
#     frictionloss, which sysid imports as dry friction; the optimizer, the step and the window are
#     sysid's defaults);
#   - the same robot as a robot.json whose friction is the smooth Coulomb stand-in and which states no
#     timestep (what data/arm7/robot.json is), as typed;
#   - build/mjfit: NLopt L-BFGS on MuJoCo finite differences of the same free parameters (one
#     rollout per parameter per gradient), the way system identification is done with MuJoCo.
# Each cell is one run, the two tools alternated (sysid, MuJoCo, sysid, MuJoCo): wall and CPU seconds
# (user + system: sysid uses both cores, mjfit one), iterations, worst relative parameter error
# against the truth. Ratios: MuJoCo's time over sysid's. Say the machine's load with the figures.
# Run from the repository root after `make build/mjlog build/mjfit`:  bash tests/bench/as_typed.sh
set -u
SYSID=${SYSID:-./sysid}
MJLOG=${MJLOG:-build/mjlog}
MJFIT=${MJFIT:-build/mjfit}
ROUNDS=${ROUNDS:-2}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
for x in "$SYSID" "$MJLOG" "$MJFIT"; do
    [ -x "$x" ] || { echo "as_typed.sh: $x is missing (make; make build/mjlog build/mjfit)" >&2; exit 2; }
done

# ---- the robots ----------------------------------------------------------------------------------
# nominal: arm7's twin with frictionloss 0.1 N m on every joint; truth: 20-50 % off (alternating)
sed 's|damping="\([0-9.]*\)" armature=|damping="\1" frictionloss="0.1" armature=|' data/arm7/model.xml >"$T/nom27.xml"
set_truth=(--set links.link2.mass=3.2 --set links.link3.mass=1.6 --set links.link4.mass=2.1
    --set links.link5.mass=0.9 --set links.link6.mass=1.05 --set links.link7.mass=0.3
    --set joints.j1.friction.viscous=0.7 --set joints.j2.friction.viscous=0.35 --set joints.j3.friction.viscous=0.28
    --set joints.j4.friction.viscous=0.2 --set joints.j5.friction.viscous=0.14 --set joints.j6.friction.viscous=0.07
    --set joints.j7.friction.viscous=0.07
    --set joints.j1.armature=0.13 --set joints.j2.armature=0.07 --set joints.j3.armature=0.028
    --set joints.j4.armature=0.035 --set joints.j5.armature=0.014 --set joints.j6.armature=0.014
    --set joints.j7.armature=0.007)
set_floss=(--set joints.j1.friction.coulomb=0.15 --set joints.j2.friction.coulomb=0.13
    --set joints.j3.friction.coulomb=0.07 --set joints.j4.friction.coulomb=0.14 --set joints.j5.friction.coulomb=0.06
    --set joints.j6.friction.coulomb=0.13 --set joints.j7.friction.coulomb=0.075)
"$SYSID" params "$T/nom27.xml" "${set_truth[@]}" "${set_floss[@]}" -o "$T/truth.json" -q &&
    "$SYSID" export "$T/truth.json" --into "$T/nom27.xml" -o "$T/truth.xml" -q &&
    "$SYSID" params "$T/nom27.xml" "${set_floss[@]}" -o "$T/nom20.json" -q &&
    "$SYSID" export "$T/nom20.json" --into "$T/nom27.xml" -o "$T/nom20.xml" -q || exit 1
# the robot.json a user may have instead: smooth Coulomb friction, no timestep
"$SYSID" import "$T/nom20.xml" -o "$T/imported.json" -q &&
    jq 'del(.timestep) | .joints |= map(if .friction then .friction.model = "smooth" else . end)' \
        "$T/imported.json" >"$T/nom20_smooth.json" || exit 1

# ---- the logs ------------------------------------------------------------------------------------
pose=j1=0.3,j2=-2.9,j3=2.3,j4=-1.6,j5=2.1,j6=2.4,j7=-0.7
amps=j1=0.3,j2=0.6,j3=1,j4=0.4,j5=0.3,j6=0.2,j7=0.1
"$MJLOG" "$T/truth.xml" --duration 3 --rate 1000 --seed 31 --q0 "$pose" --amp "$amps" --noise-q 5e-4 \
    --noise-qd 5e-3 >"$T/noisy3.csv" &&
    "$MJLOG" "$T/truth.xml" --duration 20 --rate 1000 --seed 32 --q0 "$pose" --amp "$amps" >"$T/clean20.csv" || exit 1

free20=(--free-only 'links.link?.mass' --fix links.link1.mass --free-only 'joints.*.friction.viscous'
    --free-only 'joints.*.armature')
free27=("${free20[@]}" --free-only 'joints.*.friction.coulomb')
mj20=mass:link2,mass:link3,mass:link4,mass:link5,mass:link6,mass:link7
for j in 1 2 3 4 5 6 7; do mj20+=,damping:j$j,armature:j$j; done
mj27=$mj20
for j in 1 2 3 4 5 6 7; do mj27+=,frictionloss:j$j; done

# worst relative error of a fitted robot against the truth over the parameters of free set $2
worst() {
    "$SYSID" params "$1" --json -q >"$T/f.json" 2>/dev/null && "$SYSID" params "$T/truth.json" --json -q >"$T/t.json" &&
        jq -r -n --slurpfile f "$T/f.json" --slurpfile t "$T/t.json" --arg re "$2" '
        [$t[0].parameters[] | {key: .name, value: .value}] | from_entries as $tv
        | [$f[0].parameters[] | select(.name | test($re)) | ((.value - $tv[.name]) / $tv[.name] | fabs)] | max * 100' |
        awk '{ printf "%.3g %%", $1 }'
}
re20='^links\.link[2-7]\.mass$|^joints\..*\.(armature|friction\.viscous)$'
re27='^links\.link[2-7]\.mass$|^joints\..*\.(armature|friction\.(viscous|coulomb))$'

# one timed run: "wall cpu" of the command into $T/time, its exit status returned
timed() { /usr/bin/time -f "%e %U %S" -o "$T/time" "$@" >"$T/out" 2>"$T/err"; }
secs() { tail -n 1 "$T/time" | awk '{ printf "%s %.2f", $1, $2 + $3 }'; }

printf '| case | sysid as typed: wall s, CPU s, iterations, exit | worst error | MuJoCo FD: wall s, CPU s, iterations, evaluations | worst error | speed-up wall, CPU |\n'
printf '|---|---|---:|---|---:|---:|\n'
# case NAME ROBOT LOG MJ_NOMINAL FREE_SYSID... -- MJ_FREE RE
run_case() {
    local name=$1 robot=$2 log=$3 mjnom=$4 re=$5 mjfree=$6
    shift 6
    local sw=() sc=() mw=() mc=() it rc=0 serr merr mev
    for _ in $(seq "$ROUNDS"); do
        timed "$SYSID" fit "$robot" "$log" "$@" -o "$T/fit.json" --report "$T/rep.json" -q
        rc=$?
        read -r w c <<<"$(secs)"
        sw+=("$w") sc+=("$c")
        timed "$MJFIT" "$mjnom" "$log" --free "$mjfree" --truth "$T/truth.xml"
        read -r w c <<<"$(secs)"
        mw+=("$w") mc+=("$c")
    done
    it=$(jq -r '"\(.iterations) (\(.optimizer.ran | join("+")))"' "$T/rep.json")
    serr=$(worst "$T/fit.json" "$re")
    merr=$(jq -r '.worst_error * 100' "$T/out" | awk '{ printf "%.3g %%", $1 }')
    mev=$(jq -r '"\(.iterations) it, \(.evaluations) ev"' "$T/out")
    med() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }'; }
    local SW SC MW MC
    SW=$(med "${sw[@]}") SC=$(med "${sc[@]}") MW=$(med "${mw[@]}") MC=$(med "${mc[@]}")
    printf '| %s | %s, %s, %s, exit %s | %s | %s, %s, %s | %s | **%s×**, %s× |\n' "$name" "$SW" "$SC" "$it" "$rc" \
        "$serr" "$MW" "$MC" "$mev" "$merr" "$(awk -v a="$MW" -v b="$SW" 'BEGIN { printf "%.1f", a / b }')" \
        "$(awk -v a="$MC" -v b="$SC" 'BEGIN { printf "%.1f", a / b }')"
}
run_case "arm7 MJCF, 20 params, 3 s noisy" "$T/nom20.xml" "$T/noisy3.csv" "$T/nom20.xml" "$re20" "$mj20" "${free20[@]}"
run_case "arm7 robot.json (smooth Coulomb, no timestep), 20 params, 3 s noisy" "$T/nom20_smooth.json" "$T/noisy3.csv" \
    "$T/nom20.xml" "$re20" "$mj20" "${free20[@]}"
run_case "arm7 MJCF, 20 params, 20 s clean" "$T/nom20.xml" "$T/clean20.csv" "$T/nom20.xml" "$re20" "$mj20" "${free20[@]}"
run_case "arm7 MJCF, 27 params (+ Coulomb), 3 s noisy" "$T/nom27.xml" "$T/noisy3.csv" "$T/nom27.xml" "$re27" "$mj27" \
    "${free27[@]}"
echo
echo "(one run per cell, the median of $ROUNDS, the tools alternated; load average: $(cut -d' ' -f1-3 /proc/loadavg))"
