#!/usr/bin/env bash
# tests/cli_integrator.sh — a robot's own integrator (robot.json "integrator", an MJCF's
# <option integrator>): the one commands take when neither the spec nor --integrator names
# one; implicitfast holds stiff servos at a file's own step where euler diverges; a bad name
# exits 2 naming it.
# Run from the repository root: SYSID=/abs/path/sysid bash tests/cli_integrator.sh
set -u
. tests/harness.sh   # run, check, expect_invalid, $TMP, the counters

jq '.integrator = "implicitfast"' data/pendulum/robot.json >"$TMP/imp.json"

# ---- the robot's integrator is taken, and a flag or a spec overrides it ----
run validate "$TMP/imp.json" data/pendulum/log.csv
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
grep -q "none longer, implicitfast)" "$TMP/out" || why+=" validate: $(grep -i substep "$TMP/out");"
check "validate: the robot's integrator" "$why"

run fit "$TMP/imp.json" data/pendulum/log.csv --free-only joints.hinge.friction.viscous --report "$TMP/r.json" \
    -o "$TMP/f.json" -q
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
jqt "$TMP/r.json" '.settings.integrator == "implicitfast"' || why+=" report $(jq -c .settings.integrator "$TMP/r.json");"
jqt "$TMP/f.json" '.integrator == "implicitfast"' || why+=" the fitted robot lost its integrator;"
check "fit: the robot's integrator, in the report and kept in the fitted robot" "$why"

run fit "$TMP/imp.json" data/pendulum/log.csv --free-only joints.hinge.friction.viscous --integrator rk4 \
    --report "$TMP/r1.json" -q
jqt "$TMP/r1.json" '.settings.integrator == "rk4"'
check "--integrator overrides the robot's" "$([ $? -eq 0 ] || echo " $(jq -c .settings.integrator "$TMP/r1.json")")"

echo '{ "integrator": "euler" }' >"$TMP/spec.json"
run validate "$TMP/imp.json" data/pendulum/log.csv -c "$TMP/spec.json"
grep -q "none longer, euler)" "$TMP/out"
check "a spec's integrator overrides the robot's" "$([ $? -eq 0 ] || echo " $(grep -i substep "$TMP/out")")"

# ---- MJCF: <option integrator> reaches robot.json; implicit is implicitfast, with a warning ----
why=""
for pair in Euler:euler RK4:rk4 implicitfast:implicitfast implicit:implicitfast; do
    sed "s/integrator=\"Euler\"/integrator=\"${pair%%:*}\"/" data/servo_arm/nominal.xml >"$TMP/opt.xml"
    run import "$TMP/opt.xml"
    jq -e --arg w "${pair#*:}" '.integrator == $w' "$TMP/out" >/dev/null ||
        why+=" ${pair%%:*}: $(jq -c .integrator "$TMP/out");"
done
grep -q "integrator=\"implicit\" imported as implicitfast" "$TMP/err" || why+=" no warning for implicit;"
sed 's/ integrator="Euler"//' data/servo_arm/nominal.xml >"$TMP/none.xml"
run import "$TMP/none.xml"
jq -e 'has("integrator") | not' "$TMP/out" >/dev/null || why+=" no option integrator: $(jq -c .integrator "$TMP/out");"
check "MJCF import: <option integrator>" "$why"

# ---- stiff servos at the file's own 2 ms step (the servo arm's kd raised to 60): euler
# diverges, implicitfast holds, as in MuJoCo ----
sed -e 's/biasprm="0 -\([0-9]*\) -[0-9.]*"/biasprm="0 -\1 -60"/' -e 's/timestep="0.001"/timestep="0.002"/' \
    data/servo_arm/nominal.xml >"$TMP/stiff.xml"
run simulate "$TMP/stiff.xml" data/servo_arm/log.csv -o "$TMP/euler.csv"
why=""
[ "$rc" -eq 3 ] || why+=" euler: exit $rc;"
grep -q "diverged" "$TMP/err" || why+=" euler: no divergence named;"
sed 's/integrator="Euler"/integrator="implicitfast"/' "$TMP/stiff.xml" >"$TMP/stiff_if.xml"
run simulate "$TMP/stiff_if.xml" data/servo_arm/log.csv -o "$TMP/if.csv"
[ "$rc" -eq 0 ] || why+=" implicitfast: exit $rc;"
[ "$(wc -l <"$TMP/if.csv")" -eq "$(wc -l <data/servo_arm/log.csv)" ] || why+=" implicitfast: a short trajectory;"
check "stiff servos at 2 ms: euler diverges (exit 3), implicitfast holds" "$why"
# excite's start pose: a divergence says so, and what to do
run excite "$TMP/stiff.xml" --duration 2 --max-velocity 3 --max-torque 50 --max-angle 1 -o "$TMP/ex.csv"
why=""
[ "$rc" -eq 3 ] || why+=" exit $rc;"
grep -q "holding the start pose, the simulation diverges (t = .*) under the euler integrator: stiff servos at this step need implicitfast" \
    "$TMP/err" || why+=" message: $(tail -n 1 "$TMP/err");"
[ ! -e "$TMP/ex.csv" ] || why+=" wrote a design;"
run excite "$TMP/stiff_if.xml" --duration 2 --max-velocity 3 --max-torque 50 --max-angle 1 --design random -o "$TMP/ex.csv"
[ "$rc" -eq 0 ] || why+=" implicitfast: exit $rc: $(tail -n 1 "$TMP/err");"
check "excite: a start pose that diverges under euler says so (exit 3); implicitfast designs" "$why"

# ---- a bad name is an input error naming it ----
jq '.integrator = "implicit"' data/pendulum/robot.json >"$TMP/bad.json"
expect_invalid "robot.json integrator not ours" "$TMP/bad.json" 'integrator: expected "euler", "rk4" or "implicitfast"' \
    validate "$TMP/bad.json" data/pendulum/log.csv
sed 's/integrator="Euler"/integrator="Newton"/' data/servo_arm/nominal.xml >"$TMP/bad.xml"
run validate "$TMP/bad.xml" data/pendulum/log.csv
why=""
[ "$rc" -eq 2 ] || why+=" exit $rc;"
grep -q "^sysid: error: $TMP/bad.xml:4: <option>: integrator=\"Newton\": expected Euler, RK4, implicit or implicitfast" \
    "$TMP/err" || why+=" message: $(cat "$TMP/err");"
check "MJCF integrator unknown: exit 2 naming the line and the attribute" "$why"

echo "cli_integrator: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
