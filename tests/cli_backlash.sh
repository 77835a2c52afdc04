#!/usr/bin/env bash
# tests/cli_backlash.sh — a joint with backlash (joints[].backlash, docs/formats.md): its rows exist
# only where given; `fit --free 'joints.*.backlash.*'` recovers data/backlash_arm's truth from
# the nominal robot, to 1e-6 relative on its clean log (made by sysid simulate from truth.json:
# the same model) and within 1 % on the noisy one, and writes the fitted numbers back; bad
# backlash fields and unsupported combinations exit 2 naming the JSON path.
# Run from the repository root: SYSID=/abs/path/sysid bash tests/cli_backlash.sh
set -u
. tests/harness.sh   # run, check, expect_invalid, $TMP, the counters

D=data/backlash_arm

# ---- the rows exist only where given ----
run params "$D/robot.json"
why=""
[ "$(grep -c 'backlash\.' "$TMP/out")" -eq 5 ] || why+=" $(grep -c 'backlash\.' "$TMP/out") backlash rows, expected 5;"
run params data/pendulum/robot.json
grep -q 'backlash' "$TMP/out" && why+=" a backlash row without the field;"
check "params: joints.*.backlash.* where robot.json gives it" "$why"

# ---- the clean log replays exactly on the truth (sysid made it) ----
run eval "$D/truth.json" "$D/log.csv" --window 0 --json
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
jqt "$TMP/out" '.rmse.q.shoulder < 1e-12' || why+=" rmse $(jq -c .rmse.q "$TMP/out");"
check "eval: truth.json replays log.csv" "$why"

# ---- recovery: one window from the log's start at rest (docs/correctness.md "Backlash": short windows
# start the motor side unloaded where the truth's is loaded) ----
rel='def rel(a; b): ((a - b) / b | fabs); .joints[0].backlash as $b'
run fit "$D/robot.json" "$D/log.csv" --free 'joints.*.backlash.*' --window 0 --optimizer lm -o "$TMP/fit.json" -q
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
jqt "$TMP/fit.json" "$rel | rel(\$b.width; 0.05) < 1e-6 and rel(\$b.stiffness; 40) < 1e-6 and rel(\$b.damping; 0.3) < 1e-6 and rel(\$b.inertia; 0.01) < 1e-6" ||
    why+=" fitted $(jq -c '.joints[0].backlash' "$TMP/fit.json");"
check "fit --free 'joints.*.backlash.*' (clean): truth to 1e-6" "$why"

# short windows restart the rotor unloaded: the fit says so, and --window 0 (above) does not
run fit "$D/robot.json" "$D/log.csv" --max-iter 1 -o "$TMP/short.json"
why=""
grep -q "warning: backlash: each of the [0-9]* windows starts the motor side unloaded" "$TMP/err" || why+=" no warning;"
run fit "$D/robot.json" "$D/log.csv" --window 0 --max-iter 1 -o "$TMP/short.json"
grep -q "warning: backlash" "$TMP/err" && why+=" a warning with --window 0;"
check "fit with windows shorter than the log warns about the rotor's start" "$why"

run fit "$D/robot.json" "$D/log_noisy.csv" --free 'joints.*.backlash.*' --window 0 --optimizer lm -o "$TMP/fitn.json" -q
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
jqt "$TMP/fitn.json" "$rel | rel(\$b.width; 0.05) < 0.01 and rel(\$b.stiffness; 40) < 0.01 and rel(\$b.damping; 0.3) < 0.01 and rel(\$b.inertia; 0.01) < 0.01" ||
    why+=" fitted $(jq -c '.joints[0].backlash' "$TMP/fitn.json");"
check "fit --free 'joints.*.backlash.*' (noisy): truth within 1 %" "$why"

# ---- bad input exits 2 naming the field ----
jq '.joints[0].backlash.width = -0.01' "$D/robot.json" >"$TMP/neg.json"
expect_invalid "negative backlash width" "$TMP/neg.json" "joints[0].backlash.width" validate "$TMP/neg.json" "$D/log.csv"
jq '.joints[0].backlash.stiffness = 0' "$D/robot.json" >"$TMP/k0.json"
expect_invalid "zero backlash stiffness" "$TMP/k0.json" "joints[0].backlash.stiffness" simulate "$TMP/k0.json" "$D/log.csv"
jq 'del(.joints[0].backlash.inertia)' "$D/robot.json" >"$TMP/noj.json"
expect_invalid "backlash without inertia" "$TMP/noj.json" "joints[0].backlash.inertia" fit "$TMP/noj.json" "$D/log.csv"
jq '.joints[0].friction.model = "dry" | .joints[0].friction.coulomb = 0.01' "$D/robot.json" >"$TMP/dry.json"
expect_invalid "backlash with dry friction" "$TMP/dry.json" "joints[0].backlash" simulate "$TMP/dry.json" "$D/log.csv"
jq '.joints[0].motor = {"input": "position", "kp": 5}' "$D/robot.json" >"$TMP/servo.json"
expect_invalid "backlash on a servo" "$TMP/servo.json" "joints[0].backlash" validate "$TMP/servo.json" "$D/log.csv"
jq '.joints[0].type = "fixed" | del(.joints[0].motor)' "$D/robot.json" >"$TMP/fixed.json"
expect_invalid "backlash on a fixed joint" "$TMP/fixed.json" "joints[0].backlash" validate "$TMP/fixed.json" "$D/log.csv"

# ---- a spring limit on the link, its gains computed from the link's inertia ----
jq '.joints[0].limit = {"lower": -1, "upper": 1}' "$D/truth.json" >"$TMP/lim.json"
run simulate "$TMP/lim.json" "$D/log.csv" -o "$TMP/lim.csv" -q
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
run params "$TMP/lim.json"
grep -q 'limit.stiffness' "$TMP/out" || why+=" no limit.stiffness row;"
check "a backlash joint with a spring limit and default gains" "$why"

echo "cli_backlash: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
