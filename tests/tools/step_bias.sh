#!/bin/sh
# tests/tools/step_bias.sh — how the simulation step biases a fit, with known truth (docs/simulation-step.md,
# "The simulation step"). Not a test: it prints a table.
#
# Truth: data/arm7 with its seven viscous frictions 1.3-1.4x nominal and three link masses
# 1.25x; its logs are data/arm7/log.csv's commands taken at 100, 500 and 1000 Hz (held over
# each interval) and replayed by RK4 at 0.1 ms (the motion itself, to ~1e-10 rad). Each log is
# fitted from nominal (7 viscous frictions and the masses of links 2-7, start states fitted,
# 0.5 s windows) with Euler at one step per sample (--substeps 1, the old default), with the
# step sysid now chooses, and with RK4 at its chosen step. Columns: worst relative error of
# the viscous frictions and of the masses, and the fit's wall time.
# Run from the repository root after `make`: sh tests/tools/step_bias.sh
set -eu
S=${SYSID:-./sysid}
T=${TMPDIR:-/tmp}/step_bias.$$
mkdir -p "$T"
trap 'rm -rf "$T"' EXIT
$S params data/arm7/robot.json -o "$T/truth.json" \
    --set joints.j1.friction.viscous=0.7 --set joints.j2.friction.viscous=0.65 \
    --set joints.j3.friction.viscous=0.28 --set joints.j4.friction.viscous=0.39 \
    --set joints.j5.friction.viscous=0.14 --set joints.j6.friction.viscous=0.13 \
    --set joints.j7.friction.viscous=0.07 --set links.link3.mass=2.5 --set links.link5.mass=1.5 \
    --set links.link7.mass=0.5
FREE="--free joints.*.friction.viscous"
for l in 2 3 4 5 6 7; do FREE="$FREE --free links.link$l.mass"; done

# worst |fitted / truth - 1| over the parameters matching $2 in report $1, as "x.xx % (name)"
worst() {
    jq -r --slurpfile t "$T/truth.params" --arg re "$2" '
        [.parameters[] | select(.name | test($re)) | .name as $n
         | {n: $n, e: ((.fitted / ($t[0][$n]) - 1) * 100)}]
        | max_by(.e | fabs)
        | (if (.e | fabs) < 0.001 then "< 0.001" else (.e * 1000 | round / 1000 | tostring) end) as $v
        | "\($v) % (\(.n | sub("joints\\.|links\\."; "") | sub("\\.friction\\.viscous|\\.mass"; "")))"' "$1"
}
$S params "$T/truth.json" --json | jq '[.parameters[] | {(.name): .value}] | add' > "$T/truth.params"

echo "| log rate | integrator, step | substeps | worst viscous error | worst mass error | fit seconds |"
echo "|---|---|---:|---|---|---:|"
for r in 100 500 1000; do
    k=$((1000 / r))
    awk -F, -v k=$k 'NR == 1 || (NR - 2) % k == 0' data/arm7/log.csv > "$T/cmd.csv"
    $S simulate "$T/truth.json" "$T/cmd.csv" --integrator rk4 --max-dt 1e-4 -o "$T/log.csv"
    for how in "euler, one per sample|--substeps 1" "euler, chosen|" "rk4, chosen|--integrator rk4"; do
        name=${how%%|*} flags=${how#*|}
        t0=$(date +%s.%N)
        # shellcheck disable=SC2086
        $S fit data/arm7/robot.json "$T/log.csv" $FREE $flags -o "$T/fit.json" --report "$T/rep.json" -q
        t1=$(date +%s.%N)
        n=$(jq .settings.substeps "$T/rep.json")
        h=$(jq '.settings.step.seconds * 1e6 | round / 1e3' "$T/rep.json")
        printf '| %s Hz | %s (%s ms) | %s | %s | %s | %.1f |\n' "$r" "$name" "$h" "$n" \
            "$(worst "$T/rep.json" viscous)" "$(worst "$T/rep.json" mass)" "$(echo "$t1 - $t0" | bc)"
    done
done
