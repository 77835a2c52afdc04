#!/usr/bin/env bash
# tests/cli_timestep.sh — a robot's own simulation step (robot.json "timestep", an MJCF's
# <option timestep>): the step commands take when none is given, overridden by --substeps or
# --max-dt; a bad one exits 2 naming it.
# Run from the repository root: SYSID=/abs/path/sysid bash tests/cli_timestep.sh
set -u
. tests/harness.sh   # run, check, expect_invalid, $TMP, the counters

# data/pendulum's 1 kHz log sampled at 250 Hz, so that a 2 ms timestep means 2 steps a sample
awk -F, 'NR == 1 || (NR - 2) % 4 == 0' data/pendulum/log.csv >"$TMP/log250.csv"
jq '.timestep = 0.002' data/pendulum/robot.json >"$TMP/ts.json"

# ---- the robot's step is taken: 2 steps of 2 ms per 4 ms sample, as validate and the report say ----
run validate "$TMP/ts.json" "$TMP/log250.csv"
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
grep -q "2 ms (2 substeps of the 4 ms median sample interval, none longer, euler).*the robot's own timestep" "$TMP/out" ||
    why+=" validate does not name the robot's step: $(grep -i substep "$TMP/out");"
check "validate: the robot's timestep sets the step" "$why"

run fit "$TMP/ts.json" "$TMP/log250.csv" --free-only joints.hinge.friction.viscous --report "$TMP/r.json" -o "$TMP/f.json" -q
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
jqt "$TMP/r.json" '.settings.step.seconds > 0.002 * (1 - 1e-9) and .settings.step.seconds < 0.002 * (1 + 1e-9)' ||
    why+=" step $(jq .settings.step.seconds "$TMP/r.json");"
jqt "$TMP/r.json" '.settings.step.robot_timestep == true and .settings.step.automatic == false and .settings.max_dt == 0.002' ||
    why+=" report settings $(jq -c .settings.step "$TMP/r.json");"
jqt "$TMP/f.json" '.timestep == 0.002' || why+=" the fitted robot lost its timestep;"
check "fit: the robot's timestep is the step, and the report says so" "$why"

# ---- --substeps overrides it; without a timestep the step is chosen ----
run fit "$TMP/ts.json" "$TMP/log250.csv" --free-only joints.hinge.friction.viscous --substeps 1 --report "$TMP/r1.json" -q
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
jqt "$TMP/r1.json" '.settings.substeps == 1 and (.settings.step | has("robot_timestep") | not)' ||
    why+=" $(jq -c .settings.step "$TMP/r1.json");"
check "--substeps overrides the robot's timestep" "$why"

run fit data/pendulum/robot.json "$TMP/log250.csv" --free-only joints.hinge.friction.viscous --report "$TMP/r2.json" -q
jqt "$TMP/r2.json" '.settings.step.automatic == true and (.settings.step | has("robot_timestep") | not)'
check "without a timestep the step is chosen" "$([ $? -eq 0 ] || echo " $(jq -c .settings.step "$TMP/r2.json")")"

# ---- an MJCF's option timestep reaches robot.json (and MuJoCo's default when absent) ----
run import data/servo_arm/nominal.xml
why=""
jq -e '.timestep == 0.001' "$TMP/out" >/dev/null || why+=" servo_arm: $(jq .timestep "$TMP/out");"
sed 's/ timestep="0.001"//' data/servo_arm/nominal.xml >"$TMP/nots.xml"
run import "$TMP/nots.xml"
jq -e '.timestep == 0.002' "$TMP/out" >/dev/null || why+=" no option timestep: $(jq .timestep "$TMP/out");"
check "MJCF import: <option timestep>, else MuJoCo's 0.002" "$why"

# ---- a bad timestep is an input error naming it ----
jq '.timestep = -0.001' data/pendulum/robot.json >"$TMP/neg.json"
expect_invalid "negative timestep" "$TMP/neg.json" "timestep" validate "$TMP/neg.json" data/pendulum/log.csv
jq '.timestep = "1 ms"' data/pendulum/robot.json >"$TMP/str.json"
expect_invalid "timestep not a number" "$TMP/str.json" "timestep" validate "$TMP/str.json" data/pendulum/log.csv
sed 's/timestep="0.001"/timestep="0"/' data/servo_arm/nominal.xml >"$TMP/zero.xml"
run validate "$TMP/zero.xml" data/pendulum/log.csv
why=""
[ "$rc" -eq 2 ] || why+=" exit $rc;"
grep -q "^sysid: error: $TMP/zero.xml:4: <option>: timestep=\"0\": expected a positive number" "$TMP/err" || why+=" message;"
check "MJCF timestep 0: exit 2 naming the line and the attribute" "$why"

echo "cli_timestep: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
