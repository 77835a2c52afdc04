#!/usr/bin/env bash
# tests/cli_servo.sh — position and velocity servos on the command line: a servo robot.json
# simulated and fitted from a log whose reference columns are ref.JOINT (or u.JOINT, in degrees
# with --units), and the mistakes that exit 2 naming the JSON path or the column.
# Run from the repository root: SYSID=/abs/path/sysid bash tests/cli_servo.sh
set -u
. tests/harness.sh   # run, check, expect_invalid, $TMP, the counters

# data/double_pendulum with a PD position servo on the shoulder and a saturating velocity
# servo on the elbow; the truth differs in the gains only
jq '.joints[0].motor = {"input": "position", "kp": 30, "kd": 1} |
    .joints[1].motor = {"input": "velocity", "kd": 0.5, "limit": 2}' data/double_pendulum/robot.json >"$TMP/servo.json"
jq '.joints[0].motor.kp = 36 | .joints[0].motor.kd = 1.2 | .joints[1].motor.kd = 0.6' "$TMP/servo.json" >"$TMP/truth.json"

# references: 2 s at 2 ms, the shoulder's an angle [rad], the elbow's a rate [rad/s]
awk 'BEGIN { print "t,q.shoulder,q.elbow,ref.shoulder,ref.elbow";
             for (i = 0; i <= 1000; i++) { t = i * 0.002;
                 printf "%.3f,0.2,-0.1,%.9f,%.9f\n", t, 0.2 + 0.5 * sin(2.1 * t) + 0.2 * sin(5.3 * t + 1), 1.5 * sin(3.1 * t) } }' \
    >"$TMP/ref.csv"

# ---- simulate: ref.* is the command column; it comes out as u.* ----

run simulate "$TMP/servo.json" "$TMP/ref.csv" -o "$TMP/sim.csv"
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
[ "$(head -1 "$TMP/sim.csv")" = "t,q.shoulder,q.elbow,qd.shoulder,qd.elbow,u.shoulder,u.elbow" ] || why+=" header $(head -1 "$TMP/sim.csv");"
# the references pass through as the commands, and the servo moves the shoulder towards its
# reference (it starts 0.17 rad away, at rest)
paste -d, <(cut -d, -f4,5 "$TMP/ref.csv") <(cut -d, -f6,7 "$TMP/sim.csv") | awk -F, 'NR > 1 && ($1 - $3 > 1e-9 || $3 - $1 > 1e-9 || $2 - $4 > 1e-9 || $4 - $2 > 1e-9) { bad = 1 } END { exit bad }' ||
    why+=" u.* are not the ref.* references;"
awk -F, 'NR > 1 { e = $2 - $6; if (e < 0) e = -e; if (NR == 2) e0 = e; last = e } END { exit !(e0 > 0.1 && last < 0.5 * e0) }' "$TMP/sim.csv" ||
    why+=" the shoulder does not follow its reference;"
check "simulate a servo robot from ref.* columns" "$why"

# the same log with the reference columns named u.*: the same trajectory, bit for bit
sed '1s/ref\./u./g' "$TMP/ref.csv" >"$TMP/ref_u.csv"
run simulate "$TMP/servo.json" "$TMP/ref_u.csv" -o "$TMP/sim_u.csv"
check "u.* and ref.* are the same column" "$([ "$rc" -eq 0 ] || echo " exit $rc;")$(cmp -s "$TMP/sim.csv" "$TMP/sim_u.csv" || echo " outputs differ;")"

# degrees in a position reference follow q's units (--units u.shoulder=deg); the rate in deg/s
awk -F, 'NR == 1 { print; next } { printf "%s,%s,%s,%.12f,%.12f\n", $1, $2, $3, $4 * 180 / 3.14159265358979323846, $5 * 180 / 3.14159265358979323846 }' \
    "$TMP/ref.csv" >"$TMP/ref_deg.csv"
run simulate "$TMP/servo.json" "$TMP/ref_deg.csv" --units 'u.shoulder=deg,u.elbow=deg/s' -o "$TMP/sim_deg.csv"
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
paste -d, <(cut -d, -f2 "$TMP/sim.csv") <(cut -d, -f2 "$TMP/sim_deg.csv") | awk -F, 'NR > 1 { d = $1 - $2; if (d < 0) d = -d; if (d > 1e-9) bad = 1 } END { exit bad }' ||
    why+=" degrees do not give the radians' trajectory;"
check "a reference in degrees (--units)" "$why"
run simulate "$TMP/servo.json" "$TMP/ref.csv" --units 'u.shoulder=N*m' -o "$TMP/x.csv"
check "a torque unit on a position reference is refused" "$([ "$rc" -eq 2 ] || echo " exit $rc;")$(grep -q "u.shoulder is the reference of revolute joint shoulder (a position servo)" "$TMP/err" || echo " message;")"

# ---- fit: the gains come back from a log of the truth ----

# one step per sample on both sides (the automatic choice depends on the robot's values)
run simulate "$TMP/truth.json" "$TMP/ref.csv" --substeps 1 -o "$TMP/truth.csv"
sed '1s/u\./ref./g' "$TMP/truth.csv" >"$TMP/truth_ref.csv"
run fit -q "$TMP/servo.json" "$TMP/truth_ref.csv" --free-only 'joints.*.motor.k?' --substeps 1 -o "$TMP/fitted.json"
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
jqt "$TMP/fitted.json" '.joints[0].motor.kp | (. - 36 | fabs) < 36e-6' || why+=" kp $(jq '.joints[0].motor.kp' "$TMP/fitted.json");"
jqt "$TMP/fitted.json" '.joints[0].motor.kd | (. - 1.2 | fabs) < 1.2e-6' || why+=" shoulder kd $(jq '.joints[0].motor.kd' "$TMP/fitted.json");"
jqt "$TMP/fitted.json" '.joints[1].motor.kd | (. - 0.6 | fabs) < 0.6e-6' || why+=" elbow kd $(jq '.joints[1].motor.kd' "$TMP/fitted.json");"
jqt "$TMP/fitted.json" '.joints[1].motor.input == "velocity" and .joints[1].motor.limit == 2' || why+=" the elbow's motor changed;"
check "fit recovers servo gains from a ref.* log" "$why"

# the default free set holds the first servo's kp as the unit of torque, frees the velocity
# servo's kd, and leaves a position servo's kd (the viscous friction's twin) alone
run fit "$TMP/servo.json" "$TMP/truth_ref.csv" --max-iter 1 -o "$TMP/dflt.json"
why=""
grep -q "joints.shoulder.motor.kp held as the unit of torque" "$TMP/err" || why+=" no gauge note;"
grep -q "joints.elbow.motor.kd" "$TMP/err" || why+=" elbow kd not free;"
check "the default set of a servo robot" "$why"

# ---- mistakes: exit 2, naming the JSON path or the column ----

jq 'del(.joints[0].motor.kp)' "$TMP/servo.json" >"$TMP/nokp.json"
expect_invalid "a position servo without kp" "$TMP/nokp.json" "joints[0].motor.kp" simulate "$TMP/nokp.json" "$TMP/ref.csv"
jq '.joints[0].motor.kp = -5' "$TMP/servo.json" >"$TMP/negkp.json"
expect_invalid "a negative kp" "$TMP/negkp.json" "joints[0].motor.kp: expected a positive number" simulate "$TMP/negkp.json" "$TMP/ref.csv"
jq 'del(.joints[1].motor.kd)' "$TMP/servo.json" >"$TMP/nokd.json"
expect_invalid "a velocity servo without kd" "$TMP/nokd.json" "joints[1].motor.kd: expected a non-negative number" simulate "$TMP/nokd.json" "$TMP/ref.csv"
jq '.joints[1].motor.limit = 0' "$TMP/servo.json" >"$TMP/zerolim.json"
expect_invalid "a zero torque limit" "$TMP/zerolim.json" "joints[1].motor.limit: expected a positive number" simulate "$TMP/zerolim.json" "$TMP/ref.csv"
jq '.joints[0].motor.input = "pos"' "$TMP/servo.json" >"$TMP/badin.json"
expect_invalid "an unknown motor input" "$TMP/badin.json" 'joints[0].motor.input: expected "torque", "current", "voltage", "position" or "velocity"' simulate "$TMP/badin.json" "$TMP/ref.csv"
awk -F, 'NR == 1 { print $0 ",u.shoulder"; next } { print $0 "," $4 }' "$TMP/ref.csv" >"$TMP/both.csv"
expect_invalid "both u.shoulder and ref.shoulder" "$TMP/both.csv" "columns u.shoulder and ref.shoulder both give" simulate "$TMP/servo.json" "$TMP/both.csv"
cut -d, -f1-4 "$TMP/ref.csv" >"$TMP/noref.csv"
expect_invalid "a missing reference" "$TMP/noref.csv" "missing column u.elbow (reference of joint elbow, which has a velocity servo; or ref.elbow" simulate "$TMP/servo.json" "$TMP/noref.csv"
# kt is no servo's: named in a warning, not used
jq '.joints[0].motor.kt = 2' "$TMP/servo.json" >"$TMP/kt.json"
run simulate "$TMP/kt.json" "$TMP/ref.csv" -o "$TMP/kt.csv"
check "a servo's kt is ignored with a warning" "$([ "$rc" -eq 0 ] || echo " exit $rc;")$(grep -q "joints\[0\].motor.kt: ignored: only a torque, current or voltage motor has it" "$TMP/err" || echo " no warning;")$(cmp -s "$TMP/sim.csv" "$TMP/kt.csv" || echo " the trajectory changed;")"

# ---- data/servo_arm: MuJoCo's logs replay on its truth (servos, dry friction, j4's limit) to rounding,
# in one window of 8 s from the first sample, and not on the nominal model ----
why=""
for log in log log_noisy; do
    run eval data/servo_arm/truth.xml data/servo_arm/$log.csv --window 0 --json
    [ "$rc" -eq 0 ] || why+=" $log: exit $rc;"
done
run eval data/servo_arm/truth.xml data/servo_arm/log.csv --window 0 --json
jqt "$TMP/out" '.loss < 1e-24' || why+=" clean log on the truth: loss $(jq .loss "$TMP/out");"
run eval data/servo_arm/nominal.xml data/servo_arm/log.csv --window 0 --json
jqt "$TMP/out" '.loss > 1e-4' || why+=" nominal: loss $(jq .loss "$TMP/out");"
check "data/servo_arm: MuJoCo's log replays on truth.xml to rounding" "$why"

echo "cli_servo: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
