#!/usr/bin/env bash
# tests/cli_excite.sh — `sysid excite`: the designed excitation's CSV (columns, rows, rest at both
# ends), its limits checked by replaying it with `sysid simulate`, the same bytes for the same
# inputs at any thread count, the inputs that are refused (exit 2, nothing written), and the
# designed excitation against the random multi-sine of the same limits on the double pendulum.
# Run from the repository root: SYSID=/abs/path/sysid bash tests/cli_excite.sh
set -u
. tests/harness.sh   # run, check, $TMP, the counters

ROBOT=data/double_pendulum/robot.json
# small and quick: 4 s at 100 Hz, 3 harmonics (12 coefficients), 2 ms steps
LIM=(--duration 4 --max-torque 5 --max-velocity 6 --max-angle 2)
SMALL=("${LIM[@]}" --harmonics 3 --substeps 5 --free-only 'links.*.mass' --free-only 'joints.*.armature'
       --free-only 'joints.*.friction.viscous' -q)

run excite --help
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
for o in --duration --max-torque --max-velocity --max-angle --seed --criterion --design --noise-q; do
    grep -q -- "$o" "$TMP/out" || why+=" --help does not list $o;"
done
check "help" "$why"

# ---- the design ------------------------------------------------------------------------------------
run excite "$ROBOT" "${SMALL[@]}" --max-evals 60 --json -o "$TMP/ex.csv"
cp "$TMP/out" "$TMP/ex.json"
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
[ "$(head -1 "$TMP/ex.csv")" = "t,q.shoulder,q.elbow,qd.shoulder,qd.elbow,u.shoulder,u.elbow" ] ||
    why+=" header is '$(head -1 "$TMP/ex.csv")';"
[ "$(wc -l <"$TMP/ex.csv")" -eq 402 ] || why+=" $(wc -l <"$TMP/ex.csv") lines, expected a header and 401 rows;"
awk -F, 'NR > 1 { for (i = 1; i <= NF; i++) if ($i !~ /^-?[0-9.]+(e[-+]?[0-9]+)?$/) bad = 1 }
         END { exit bad }' "$TMP/ex.csv" || why+=" a cell is not a number;"
awk -F, 'END { exit !($1 == 4) }' "$TMP/ex.csv" || why+=" the last time is not 4;"
jqt "$TMP/ex.json" '.design == "optimal" and .evaluations == 61 and (.parameters | length) == 6' ||
    why+=" report: design, evaluations or parameters;"
jqt "$TMP/ex.json" '[.parameters[] | .se > 0 and .relative_se > 0] | all' || why+=" a standard error is not positive;"
jqt "$TMP/ex.json" '.condition >= 1 and .worst_relative_se > 0 and .unresolved == 0' || why+=" condition or worst;"
check "design: CSV shape and report" "$why"

# rest: starts still at q = 0, and the commands start and end at the same hold (sin^2 ramps: the
# envelope is exactly 0 at both ends), with zero slope (the second command within 1e-3 of the
# first, relative to the amplitude the series may reach)
why=""
awk -F, 'NR == 2 { exit !($2 == 0 && $3 == 0 && $4 == 0 && $5 == 0) }' "$TMP/ex.csv" || why+=" the first row is not at rest at 0;"
first=$(sed -n 2p "$TMP/ex.csv" | cut -d, -f6,7)
last=$(tail -1 "$TMP/ex.csv" | cut -d, -f6,7)
[ "$first" = "$last" ] || why+=" the last commands $last are not the first (the hold) $first;"
awk -F, 'NR == 2 { a = $6; b = $7 } NR == 3 { d = $6 - a; e = $7 - b; if (d < 0) d = -d; if (e < 0) e = -e;
         exit !(d < 5e-3 && e < 1e-2) }' "$TMP/ex.csv" || why+=" the commands jump at the start;"
check "design: rest at both ends" "$why"

# limits, on the replay by `sysid simulate` (the same step): |q| <= 2 rad, |qd| <= 6 rad/s, and the
# joint torques gear kt u (shoulder 1 x 1, elbow 10 x 0.05) <= 5 N m
run simulate "$ROBOT" "$TMP/ex.csv" --substeps 5 -o "$TMP/replay.csv"
why=""
[ "$rc" -eq 0 ] || why+=" simulate exit $rc;"
awk -F, 'function a(x) { return x < 0 ? -x : x }
         NR > 1 { if (a($2) > 2 || a($3) > 2 || a($4) > 6 || a($5) > 6 || a($6) > 5 || a(0.5 * $7) > 5) bad = NR }
         END { if (bad) print "row " bad; exit !!bad }' "$TMP/replay.csv" >"$TMP/bad" || why+=" limit exceeded at $(cat "$TMP/bad");"
# the design is within 97 % of the binding limit, so it uses more than half of one
jqt "$TMP/ex.json" '[.limits_used[]] | max | . > 0.9 and . <= 0.97' || why+=" limits_used: $(jq -c .limits_used "$TMP/ex.json");"
# and says which: the one used most
jqt "$TMP/ex.json" '.limits_used as $u | .binding_limit as $b | $u[$b] == ([$u[]] | max)' ||
    why+=" binding_limit $(jq -c .binding_limit "$TMP/ex.json") is not the largest of limits_used;"
# and its q, qd columns are the replay (the same simulation, to rounding)
paste -d, "$TMP/ex.csv" "$TMP/replay.csv" | awk -F, 'function a(x) { return x < 0 ? -x : x }
    NR > 1 { for (i = 2; i <= 5; i++) if (a($i - $(i + 7)) > 1e-9) bad = 1 } END { exit bad }' ||
    why+=" the CSV's q, qd are not its replay;"
check "design: limits respected in its replay" "$why"

# ---- determinism ----------------------------------------------------------------------------------
run excite "$ROBOT" "${SMALL[@]}" --max-evals 60 --json --threads 1 -o "$TMP/ex1.csv"
why=""
cmp -s "$TMP/ex.csv" "$TMP/ex1.csv" || why+=" the CSV differs with --threads 1;"
cmp -s "$TMP/ex.json" "$TMP/out" || why+=" the report differs with --threads 1;"
check "determinism: same bytes for the same inputs and any threads" "$why"

# ---- designed against random ----------------------------------------------------------------------
# The random multi-sine (unit amplitude, random phase per harmonic; --design random) of the same
# limits, scaled the same way, is the design's own starting point. Measured at these settings
# (4 s, 3 harmonics, 60 evaluations): worst relative standard error 0.92 % designed, 2.95 % random;
# asserted: at least 2 times smaller (measured 3.2).
run excite "$ROBOT" "${SMALL[@]}" --design random --json -o "$TMP/rnd.csv"
cp "$TMP/out" "$TMP/rnd.json"
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
jqt "$TMP/rnd.json" '.design == "random" and .evaluations == 1' || why+=" not the random design;"
run excite "$ROBOT" "${SMALL[@]}" --design random --json --seed 2 -o "$TMP/rnd2.csv"
cmp -s "$TMP/rnd.csv" "$TMP/rnd2.csv" && why+=" --seed 2 gives the same multi-sine;"
a=$(jq .worst_relative_se "$TMP/ex.json")
b=$(jq .worst_relative_se "$TMP/rnd.json")
echo "worst relative SE: designed $a, random $b" >&2
awk -v a="$a" -v b="$b" 'BEGIN { exit !(b >= 2 * a) }' || why+=" worst relative SE designed $a, random $b;"
check "designed: worst predicted standard error smaller than the random multi-sine's" "$why"

# ---- refused inputs: exit 2, nothing written -------------------------------------------------------
refused() {
    local name=$1 place=$2 why=""
    shift 2
    rm -f "$TMP/no.csv"
    run excite "$@"
    [ "$rc" -eq 2 ] || why+=" exit $rc, expected 2;"
    grep -qF -- "$place" "$TMP/err" || why+=" stderr does not say '$place';"
    [ ! -e "$TMP/no.csv" ] || why+=" no.csv was written;"
    [ ! -s "$TMP/out" ] || why+=" stdout is not empty;"
    no_temp "$TMP" || why+=" a temporary file was left;"
    check "refused: $name" "$why"
}
refused "no duration" "--duration S is required" "$ROBOT" --max-torque 5 --max-velocity 6 --max-angle 2 -o "$TMP/no.csv"
refused "no -o" "-o EXCITATION.csv is required" "$ROBOT" "${LIM[@]}"
refused "no torque limit" "$ROBOT: the excitation needs a limit for every joint: no torque limit on 2 joints (shoulder, elbow)" \
    "$ROBOT" --duration 4 --max-velocity 6 --max-angle 2 -o "$TMP/no.csv"
refused "no position limit" "no position limit on 2 joints (shoulder, elbow): give --max-angle X" "$ROBOT" --duration 4 \
    --max-velocity 6 --max-torque 5 -o "$TMP/no.csv"
# every missing limit in one message, not one per run
refused "no limits at all" "no position limit on 2 joints (shoulder, elbow): give --max-angle X (the range q0 +- X; or limit.lower and limit.upper); no velocity limit on 2 joints (shoulder, elbow): give --max-velocity X (or limit.velocity); no torque limit on 2 joints (shoulder, elbow): give --max-torque X" \
    "$ROBOT" --duration 4 -o "$TMP/no.csv"
refused "bad harmonics" "--harmonics: expected a number >= 1" "$ROBOT" "${LIM[@]}" --harmonics 0 -o "$TMP/no.csv"
refused "bad criterion" "--criterion: expected logdet or worst" "$ROBOT" "${LIM[@]}" --criterion best -o "$TMP/no.csv"
refused "negative noise" "--noise-q: expected a number" "$ROBOT" "${LIM[@]}" --noise-q -1 -o "$TMP/no.csv"
refused "a pose of the wrong size" "--pose: expected 2 comma-separated numbers" "$ROBOT" "${LIM[@]}" --pose 0.1 -o "$TMP/no.csv"
jq '.joints[0].limit = {"lower": -1, "upper": 1}' "$ROBOT" >"$TMP/limited.json"
refused "a pose outside the robot's limit" "joint 'shoulder': --pose 3 is not inside its limits [-1, 1]" \
    "$TMP/limited.json" "${LIM[@]}" --pose 3,0 -o "$TMP/no.csv"
refused "overwrite the robot" "would overwrite the input" "$ROBOT" "${LIM[@]}" -o "$ROBOT"
refused "a free glob that matches nothing" "nosuch" "$ROBOT" "${LIM[@]}" --free-only 'nosuch.*' -o "$TMP/no.csv"
jq 'del(.joints[1].motor)' "$ROBOT" >"$TMP/nomotor.json"
refused "a joint without a motor" "joint 'elbow' has no motor" "$TMP/nomotor.json" "${LIM[@]}" -o "$TMP/no.csv"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
