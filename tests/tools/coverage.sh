#!/usr/bin/env bash
# tests/tools/coverage.sh [N] [SECONDS] — how often the report's 95 % intervals cover a known
# truth (a measurement, not a timed test; docs/intervals.md).
#
# For seeds 1..N: data/double_pendulum's robot is the truth; sysid simulates it on the first
# SECONDS of its log's commands, Gaussian noise is added (1e-3 rad on q, 1e-2 rad/s on qd, awk's
# generator seeded by the seed), and the robot with viscous friction and armature 40 % high is
# fitted back (those four free, window 0.1 s, start states fitted). Counted per parameter: does
# ci95 (classic) or ci95_robust (sandwich) hold the truth. Then the same with a mismatched
# model: the truth has dry friction (MuJoCo's frictionloss, 0.1 N m on both joints) and the fit
# has the smooth Coulomb model, coulomb freed too; counted as well, with the report's verdict.
# ci95_robust is fitted +- t stderr_robust, t on the report's dof_robust (mean shown).
# CASES="matched" or "mismatched" runs one half. Prints one table; run from the repository
# root: bash tests/tools/coverage.sh 50
set -eu
N=${1:-50}
T=${2:-3}
SYSID=${SYSID:-$PWD/sysid}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
R=data/double_pendulum/robot.json
head -$((T * 1000 + 1)) data/double_pendulum/log.csv >"$TMP/in.csv"
jq '.joints[].friction.viscous *= 1.4 | .joints[].armature *= 1.4' "$R" >"$TMP/nominal.json"
jq '.joints[].friction.coulomb = 0.1 | .joints[].friction.model = "dry"' "$R" >"$TMP/dry.json"
"$SYSID" simulate "$R" "$TMP/in.csv" -o "$TMP/clean_matched.csv"
"$SYSID" simulate "$TMP/dry.json" "$TMP/in.csv" -o "$TMP/clean_mismatched.csv"
"$SYSID" params "$R" --json >"$TMP/truth_matched.json"
"$SYSID" params "$TMP/dry.json" --json >"$TMP/truth_mismatched.json"

noisy() {   # noisy CLEAN SEED: q columns (2, 3) +1e-3 N(0,1), qd columns (4, 5) +1e-2 N(0,1)
    awk -F, -v OFS=, -v seed="$2" 'BEGIN { srand(seed) }
        function g() { return sqrt(-2 * log(1 - rand())) * cos(6.283185307179586 * rand()) }
        NR == 1 { print; next }
        { for (i = 2; i <= 5; i++) $i = sprintf("%.17g", $i + (i <= 3 ? 1e-3 : 1e-2) * g()); print }' "$1"
}

CASES=${CASES:-matched mismatched}
for case in $CASES; do
    free=(--free-only 'joints.*.friction.viscous' --free-only 'joints.*.armature')
    [ $case = mismatched ] && free+=(--free-only 'joints.*.friction.coulomb')
    for s in $(seq 1 "$N"); do
        noisy "$TMP/clean_$case.csv" "$s" >"$TMP/log.csv"
        "$SYSID" fit "$TMP/nominal.json" "$TMP/log.csv" "${free[@]}" --window 0.1 -o "$TMP/fit.json" \
            --report "$TMP/rep_${case}_$s.json" -q || true
    done
done

for case in $CASES; do
    jq -s -r --slurpfile t "$TMP/truth_$case.json" --arg case "$case" '
        ($t[0].parameters | map({(.name): .value}) | add) as $truth
        | (map(.parameters[]) | group_by(.name)) as $g
        | ($g[] | . as $p | $p[0].name as $n | $truth[$n] as $v
           | [$case, $n, ($v | tostring), (length | tostring),
              ((map(select(.ci95 != null and .ci95[0] <= $v and $v <= .ci95[1])) | length) * 100 / length | floor | tostring) + " %",
              ((map(select(.ci95_robust != null and .ci95_robust[0] <= $v and $v <= .ci95_robust[1])) | length) * 100 / length | floor | tostring) + " %",
              (map(.fitted) | add / length | tostring),
              (map(.dof_robust // empty) | if length > 0 then add / length * 10 | round / 10 | tostring else "" end)]
           | join(" | ")),
          ([$case, "verdict model_mismatch", "", (length | tostring),
            ((map(select(.diagnostics.verdict == "model_mismatch")) | length) * 100 / length | floor | tostring) + " %",
            "", "", ""] | join(" | ")),
          ([$case, "stop converged", "", (length | tostring),
            ((map(select(.stop == "converged")) | length) * 100 / length | floor | tostring) + " %", "", "", ""] | join(" | "))
    ' "$TMP"/rep_${case}_*.json
done | { echo "case | parameter | truth | fits | ci95 covers | ci95_robust covers | mean fitted | mean dof_robust"; echo "---|---|---|---|---|---|---|---"; cat; }
