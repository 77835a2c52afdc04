#!/usr/bin/env bash
# tests/cli_delay.sh — the motor command delay (joints[].motor.delay, docs/formats.md): a log that
# sysid simulated on data/double_pendulum with delays of 3.4 and 12.7 samples (1 kHz) is fitted
# back from 0 with --free-only 'joints.*.motor.delay' by both optimizers, to 1e-9 s (1e-6 of
# a sample: a noise-free log from the same model); a zero delay replays as today's hold; a
# delay is a parameter only where given, negative or on a saturating servo exits 2 naming it.
# Run from the repository root: SYSID=/abs/path/sysid bash tests/cli_delay.sh
set -u
. tests/harness.sh   # run, check, expect_invalid, $TMP, the counters

head -2001 data/double_pendulum/log.csv >"$TMP/in.csv"   # 2 s of its commands
jq '.joints[0].motor.delay = 0.0034 | .joints[1].motor.delay = 0.0127' data/double_pendulum/robot.json >"$TMP/truth.json"
jq '.joints[0].motor.delay = 0 | .joints[1].motor.delay = 0' data/double_pendulum/robot.json >"$TMP/nom.json"

# ---- delay 0 is the hold: the same replay as the robot without the field, byte for byte ----
run simulate data/double_pendulum/robot.json "$TMP/in.csv" --substeps 1 -o "$TMP/plain.csv"
run simulate "$TMP/nom.json" "$TMP/in.csv" --substeps 1 -o "$TMP/zero.csv"
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
cmp -s "$TMP/plain.csv" "$TMP/zero.csv" || why+=" the replays differ;"
check "simulate: a delay of 0 replays as no delay" "$why"

run simulate "$TMP/truth.json" "$TMP/in.csv" --substeps 1 -o "$TMP/log.csv"
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
cmp -s "$TMP/plain.csv" "$TMP/log.csv" && why+=" the delay changes nothing;"
check "simulate: the delayed truth log" "$why"

# ---- the parameter exists only where given ----
run params data/double_pendulum/robot.json
why=""
grep -q "motor.delay" "$TMP/out" && why+=" a delay row without the field;"
run params "$TMP/nom.json"
[ "$(grep -c 'motor.delay' "$TMP/out")" -eq 2 ] || why+=" $(grep -c 'motor.delay' "$TMP/out") delay rows where given;"
check "params: motor.delay where robot.json gives it" "$why"

# ---- recovery from 0 by L-BFGS and LM: 3.4 and 12.7 ms to 1e-9 s ----
for opt in lbfgs lm; do
    run fit "$TMP/nom.json" "$TMP/log.csv" --free-only 'joints.*.motor.delay' --substeps 1 --optimizer $opt \
        -o "$TMP/fit_$opt.json" -q
    why=""
    [ "$rc" -eq 0 ] || why+=" exit $rc;"
    jqt "$TMP/fit_$opt.json" '(.joints[0].motor.delay - 0.0034 | fabs) < 1e-9 and (.joints[1].motor.delay - 0.0127 | fabs) < 1e-9' ||
        why+=" fitted $(jq -c '[.joints[].motor.delay]' "$TMP/fit_$opt.json");"
    check "fit --optimizer $opt --free-only 'joints.*.motor.delay': 3.4 and 12.7 samples recovered" "$why"
done

# ---- data/delayed_servo: its truth replays its clean log exactly, its nominal robot does not ----
run eval data/delayed_servo/truth.json data/delayed_servo/log.csv --json
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
jqt "$TMP/out" '.loss == 0' || why+=" truth's loss $(jq .loss "$TMP/out");"
run eval data/delayed_servo/nominal.json data/delayed_servo/log.csv --json
jqt "$TMP/out" '.loss > 1e-4' || why+=" nominal's loss $(jq .loss "$TMP/out");"
check "data/delayed_servo: the truth reproduces log.csv to the bit (loss 0), the nominal robot not" "$why"

# ---- bad delays exit 2 naming the field ----
jq '.joints[0].motor.delay = -0.001' data/double_pendulum/robot.json >"$TMP/neg.json"
expect_invalid "negative delay" "$TMP/neg.json" "motor.delay" validate "$TMP/neg.json" "$TMP/in.csv"
jq '.joints[0].motor = {"input": "position", "kp": 5, "limit": 2, "delay": 0.001}' data/pendulum/robot.json >"$TMP/servo.json"
expect_invalid "delay on a saturating servo" "$TMP/servo.json" "motor.delay" validate "$TMP/servo.json" data/pendulum/log.csv

echo "cli_delay: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
