#!/usr/bin/env bash
# tests/cli_torque.sh — joint torque sensors (tau.<joint> log columns, joints[].torque_sensor,
# --weight-tau; docs/formats.md "Torque sensors"): a fit with --weight-tau scores the readings and its
# report says so (settings.weights.tau, prediction rmse tau, the summary's torque sensor rows);
# without --weight-tau a log with tau columns fits byte for byte as the same log without them;
# the sensor's rows exist only where given; a tau column of no joint, a non-numeric reading and
# a negative weight exit 2 naming the file and line, or the flag or field.
# The readings here are made up (u and u/2): this checks the plumbing, test_torque_sensor.c the
# numbers. Run from the repository root: SYSID=/abs/path/sysid bash tests/cli_torque.sh
set -u
. tests/harness.sh   # run, check, expect_invalid, $TMP, the counters

head -301 data/double_pendulum/log.csv >"$TMP/plain.csv"   # 0.3 s
awk -F, 'NR == 1 { print $0 ",tau.shoulder,tau.elbow"; next } { print $0 "," $6 "," 0.5 * $7 }' \
    "$TMP/plain.csv" >"$TMP/log.csv"
jq '.joints[0].torque_sensor = {"gain": 1, "bias": 0}' data/double_pendulum/robot.json >"$TMP/robot.json"

# ---- rows only where given ----
run params "$TMP/robot.json"
why=""
[ "$(grep -c 'torque_sensor' "$TMP/out")" -eq 2 ] || why+=" $(grep -c 'torque_sensor' "$TMP/out") sensor rows, expected 2;"
grep -q 'elbow.torque_sensor' "$TMP/out" && why+=" a row on the elbow, which has no torque_sensor;"
run params data/double_pendulum/robot.json
grep -q 'torque_sensor' "$TMP/out" && why+=" rows without the field;"
check "params: torque_sensor.gain and .bias where robot.json gives them" "$why"

# ---- a fit with --weight-tau: the readings are scored and reported ----
run fit "$TMP/robot.json" "$TMP/log.csv" --weight-tau 1 --free-only 'joints.shoulder.torque_sensor.*' \
    --max-iter 20 -o "$TMP/fit.json" --report "$TMP/rep.json"
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
jqt "$TMP/rep.json" '.settings.weights.tau == 1' || why+=" settings.weights.tau is not 1;"
jqt "$TMP/rep.json" '.prediction.fit.rmse.after.tau.shoulder < .prediction.fit.rmse.before.tau.shoulder' ||
    why+=" the shoulder reading's RMSE did not fall: $(jq -c '.prediction.fit.rmse' "$TMP/rep.json");"
jqt "$TMP/fit.json" '.joints[0].torque_sensor.gain != 1' || why+=" the gain did not move;"
grep -q '^  torque sensors, RMSE' "$TMP/err" || why+=" the summary has no torque sensor rows;"
grep -q '^  tau.shoulder' "$TMP/err" || why+=" the summary has no tau.shoulder row;"
check "fit --weight-tau 1: readings scored, report and summary show them" "$why"

# ---- weight 0 (the default): the tau columns change nothing ----
run fit data/double_pendulum/robot.json "$TMP/plain.csv" --free-only 'links.*.mass' --max-iter 5 -o "$TMP/a.json" -q
run fit data/double_pendulum/robot.json "$TMP/log.csv" --free-only 'links.*.mass' --max-iter 5 -o "$TMP/b.json" -q
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
cmp -s "$TMP/a.json" "$TMP/b.json" || why+=" the fits differ;"
check "fit without --weight-tau: tau columns leave the fit byte for byte" "$why"

# ---- bad input exits 2 naming where ----
awk -F, 'NR == 1 { print $0 ",tau.knee"; next } { print $0 ",0" }' "$TMP/log.csv" >"$TMP/unknown.csv"
expect_invalid "tau column of no joint" "$TMP/unknown.csv" "line 1: column tau.knee" \
    validate "$TMP/robot.json" "$TMP/unknown.csv"
awk -F, 'BEGIN { OFS = "," } NR == 5 { $9 = "abc" } { print }' "$TMP/log.csv" >"$TMP/text.csv"
expect_invalid "non-numeric reading" "$TMP/text.csv" "line 5, column tau.elbow" \
    validate "$TMP/robot.json" "$TMP/text.csv"
run fit "$TMP/robot.json" "$TMP/log.csv" --weight-tau -1 -o "$TMP/neg.json"
why=""
[ "$rc" -eq 2 ] || why+=" exit $rc, expected 2;"
grep -q -- '--weight-tau' "$TMP/err" || why+=" stderr does not name --weight-tau;"
[ ! -e "$TMP/neg.json" ] || why+=" an output was written;"
check "--weight-tau -1 exits 2 naming the flag" "$why"
echo '{"weights": {"tau": -1}}' >"$TMP/spec.json"
expect_invalid "weights.tau -1 in a fit spec" "$TMP/spec.json" "weights.tau" \
    fit "$TMP/robot.json" "$TMP/log.csv" -c "$TMP/spec.json"

echo "cli_torque: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
