#!/usr/bin/env bash
# tests/tools/excite_compare.sh — designed excitation against a random multi-sine, on known truth.
#
# Designs an excitation with `sysid excite` (optimised) and takes the seeded random multi-sine of
# the same duration, harmonics and limits (`--design random`, scaled to the limits the same way);
# simulates both on a "true" robot (the nominal one with the free parameters moved by --set),
# adds Gaussian noise of the levels the design assumed (N seeds), fits each noisy log from the
# nominal robot, and prints per parameter: the predicted standard error (from excite), the
# achieved RMS error over the seeds, for both designs; then the worst relative standard error of
# each (largest SE / |value| over the parameters), predicted and achieved, and their ratios.
#
#   SYSID=./sysid bash tests/tools/excite_compare.sh [N]
# Environment: ROBOT, FREE (the --free-only globs), TRUTH (the --set list), LIMITS (duration, limits
# and series of both designs), DESIGN (more
# excite flags), FIT (more fit flags), NQ, NQD (noise), SUB (substeps). Defaults: the double
# pendulum of docs/experiment.md, "Designing the experiment".
set -u
SYSID=${SYSID:-$PWD/sysid}
N=${1:-10}
ROBOT=${ROBOT:-data/double_pendulum/robot.json}
FREE=${FREE:-"links.*.mass joints.*.armature joints.*.friction.viscous"}
TRUTH=${TRUTH:-"links.upper.mass=1.26 links.fore.mass=0.76 joints.shoulder.armature=0.011 joints.elbow.armature=0.0045 joints.shoulder.friction.viscous=0.055 joints.elbow.friction.viscous=0.027"}
LIMITS=${LIMITS:-"--duration 10 --max-torque 5 --max-velocity 6 --max-angle 2 --harmonics 8 --base-freq 0.25"}
DESIGN=${DESIGN:-"--criterion worst --max-evals 400"}
FIT=${FIT:-"--window 0.5 --start fitted --optimizer lm"}
NQ=${NQ:-1e-3}
NQD=${NQD:-1e-2}
SUB=${SUB:-5}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

free=()
for g in $FREE; do free+=(--free-only "$g"); done
set_=()
for s in $TRUTH; do set_+=(--set "$s"); done

"$SYSID" params "$ROBOT" "${set_[@]}" -o "$T/truth.json" -q || exit 1
# shellcheck disable=SC2086
"$SYSID" excite "$ROBOT" $LIMITS "${free[@]}" --substeps "$SUB" --noise-q "$NQ" --noise-qd "$NQD" $DESIGN \
    -o "$T/designed.csv" --json -q >"$T/designed.json" || exit 1
# shellcheck disable=SC2086
"$SYSID" excite "$ROBOT" $LIMITS "${free[@]}" --substeps "$SUB" --noise-q "$NQ" --noise-qd "$NQD" --design random \
    -o "$T/random.csv" --json -q >"$T/random.json" || exit 1

# noisy SEED IN OUT: Gaussian noise (Box-Muller, awk's generator seeded) on every q.* and qd.* cell
noisy() {
    awk -F, -v OFS=, -v seed="$1" -v nq="$NQ" -v nqd="$NQD" '
        function gauss() { return sqrt(-2 * log(1 - rand())) * cos(6.283185307179586 * rand()) }
        BEGIN { srand(seed) }
        NR == 1 { for (i = 1; i <= NF; i++) { s[i] = ($i ~ /^q\./) ? nq : ($i ~ /^qd\./) ? nqd : 0 } print; next }
        { for (i = 1; i <= NF; i++) if (s[i] > 0) $i = sprintf("%.17g", $i + s[i] * gauss()); print }' "$2" >"$3"
}

"$SYSID" params "$T/truth.json" --json -q >"$T/truth.params.json" || exit 1
for d in designed random; do
    "$SYSID" simulate "$T/truth.json" "$T/$d.csv" --substeps "$SUB" -o "$T/$d.clean.csv" -q || exit 1
    for k in $(seq 1 "$N"); do
        noisy $((1000 * k + ${#d})) "$T/$d.clean.csv" "$T/$d.$k.csv"
        # shellcheck disable=SC2086
        "$SYSID" fit "$ROBOT" "$T/$d.$k.csv" "${free[@]}" --substeps "$SUB" $FIT -q -o "$T/$d.$k.fit.json" \
            --report "$T/$d.$k.rep.json" || exit 1
    done
    for k in $(seq 1 "$N"); do jq -c '[.parameters[] | {name, fitted}]' "$T/$d.$k.rep.json"; done | jq -s -c . >"$T/$d.fits.json"
    jq -n --slurpfile pred "$T/$d.json" --slurpfile truth "$T/truth.params.json" --slurpfile fits "$T/$d.fits.json" '
        ($truth[0].parameters | map({(.name): .value}) | add) as $tv
        | [ $pred[0].parameters[] | .name as $n | .se as $se
            | ([ $fits[0][] | .[] | select(.name == $n) | (.fitted - $tv[$n]) | . * . ] | add / length | sqrt) as $err
            | {name: $n, truth: $tv[$n], se: $se, err: $err} ]' \
        >"$T/$d.table.json"
done

jq -r -n --slurpfile a "$T/designed.table.json" --slurpfile b "$T/random.table.json" --argjson n "$N" '
    def f: if . == null then "-" else (. * 1e6 | round / 1e6 | tostring) end;
    def g: if . == null then "-" else ((. | log10 | floor) as $e | (. / pow(10; $e) * 100 | round / 100 | tostring) + "e" + ($e | tostring)) end;
    ($a[0] | map(.se / (.truth | fabs)) | max) as $pa
    | ($b[0] | map(.se / (.truth | fabs)) | max) as $pb
    | ($a[0] | map(.err / (.truth | fabs)) | max) as $ea
    | ($b[0] | map(.err / (.truth | fabs)) | max) as $eb
    | "| parameter | truth | designed: predicted SE | achieved RMS error | random: predicted SE | achieved RMS error |",
      "|---|---|---|---|---|---|",
      ( range(0; $a[0] | length) as $i | $a[0][$i] as $x | $b[0][$i] as $y
        | "| \($x.name) | \($x.truth | f) | \($x.se | g) | \($x.err | g) | \($y.se | g) | \($y.err | g) |" ),
      "",
      "worst relative SE over the parameters (\($n) noisy seeds each):",
      "  predicted: designed \($pa * 1e4 | round / 100) %, random \($pb * 1e4 | round / 100) %, ratio \($pb / $pa * 100 | round / 100)",
      "  achieved:  designed \($ea * 1e4 | round / 100) %, random \($eb * 1e4 | round / 100) %, ratio \($eb / $ea * 100 | round / 100)"'
