#!/usr/bin/env bash
# tests/cli_keyframe.sh — a robot file's keyframes (an MJCF's <key>s, robot.json "keyframes"):
# imported, a start state for simulate --keyframe and a start pose for excite (its first by
# default); a robot arm holds its home keyframe for 2 s at its own step; a missing or bad
# keyframe exits 2 naming it.
# Run from the repository root: SYSID=/abs/path/sysid bash tests/cli_keyframe.sh
set -u
. tests/harness.sh   # run, check, expect_invalid, $TMP, the counters

UR5E=data/robots/mjcf/universal_robots_ur5e/ur5e.xml
J="shoulder_pan_joint shoulder_lift_joint elbow_joint wrist_1_joint wrist_2_joint wrist_3_joint"
HOME_Q="-1.5708 -1.5708 1.5708 -1.5708 -1.5708 0"

# ---- import: the key's qpos and ctrl by joint name ----
run import "$UR5E" -o "$TMP/ur5e.json"
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
jqt "$TMP/ur5e.json" '.keyframes[0].name == "home" and .keyframes[0].q.elbow_joint == 1.5708 and
    .keyframes[0].q.shoulder_lift_joint == -1.5708 and .keyframes[0].u.elbow_joint == 1.5708' ||
    why+=" keyframes $(jq -c .keyframes "$TMP/ur5e.json");"
grep -q "keyframes are not imported" "$TMP/err" && why+=" still warns that keyframes are not imported;"
check "MJCF import: <key> becomes robot.json keyframes" "$why"

# ---- simulate --keyframe: 2 s at the file's 2 ms step from home, the servos' references at
# home (a log of commands: q columns 0, never read for the start) ----
awk -v J="$J" -v H="$HOME_Q" 'BEGIN {
    n = split(J, j, " "); split(H, h, " ");
    printf "t"; for (i = 1; i <= n; i++) printf ",q.%s", j[i]; for (i = 1; i <= n; i++) printf ",u.%s", j[i]; print "";
    for (k = 0; k <= 1000; k++) {
        printf "%.3f", k * 0.002; for (i = 1; i <= n; i++) printf ",0"; for (i = 1; i <= n; i++) printf ",%s", h[i]; print ""
    } }' >"$TMP/hold.csv"
for robot in "$UR5E" "$TMP/ur5e.json"; do
    run simulate "$robot" "$TMP/hold.csv" --keyframe home -o "$TMP/sim.csv"
    why=""
    [ "$rc" -eq 0 ] || why+=" exit $rc;"
    grep -q "implicitfast" "$TMP/err" || why+=" not the file's integrator: $(grep step: "$TMP/err");"
    # the first row is the keyframe; after 2 s every joint within 0.02 rad of it and at rest
    awk -F, -v H="$HOME_Q" 'BEGIN { split(H, h, " ") } NR == 2 { for (i = 1; i <= 6; i++) if ($(i + 1) != h[i]) bad = 1 }
        END { for (i = 1; i <= 6; i++) { d = $(i + 1) - h[i]; if (d > 0.02 || d < -0.02) bad = 1;
              v = $(i + 7); if (v > 1e-3 || v < -1e-3) bad = 1 } exit bad }' "$TMP/sim.csv" ||
        why+=" does not hold home: $(sed -n 2p "$TMP/sim.csv" | cut -c1-120) ... $(tail -n 1 "$TMP/sim.csv" | cut -c1-160);"
    check "simulate --keyframe home: the UR5e holds its home pose 2 s at its own step ($(basename "$robot"))" "$why"
done

run simulate "$UR5E" "$TMP/hold.csv" --keyframe homer -o "$TMP/no.csv"
why=""
[ "$rc" -eq 2 ] || why+=" exit $rc;"
grep -q "^sysid: error: $UR5E: no keyframe 'homer' (it has 'home')" "$TMP/err" || why+=" message: $(tail -n 1 "$TMP/err");"
[ ! -e "$TMP/no.csv" ] || why+=" wrote the output;"
check "simulate --keyframe of a name the robot has not: exit 2, naming the ones it has" "$why"

# ---- excite: the first keyframe is the start pose unless --pose or --keyframe says ----
run excite "$UR5E" --duration 2 --max-velocity 3 --design random -o "$TMP/ex.csv"
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc: $(tail -n 1 "$TMP/err");"
grep -q "the start pose is the robot file's keyframe 'home'" "$TMP/err" || why+=" no note of the start pose;"
check "excite: the robot file's first keyframe is the start pose" "$why"
run excite "$UR5E" --duration 2 --max-velocity 3 --design random --keyframe home --pose 0,0,0,0,0,0 -o "$TMP/no.csv"
why=""
[ "$rc" -eq 2 ] || why+=" exit $rc;"
grep -q -- "--pose and --keyframe: give one start pose" "$TMP/err" || why+=" message;"
check "excite --pose with --keyframe: a usage error" "$why"

# ---- a bad keyframe in robot.json: exit 2 naming its JSON path ----
jq '.keyframes[0].q.no_such_joint = 1' "$TMP/ur5e.json" >"$TMP/bad1.json"
expect_invalid "keyframe of a joint the robot has not" "$TMP/bad1.json" \
    "keyframes[0].q.no_such_joint: expected the name of a moving joint" validate "$TMP/bad1.json" "$TMP/hold.csv"
jq '.keyframes[0].q.elbow_joint = "up"' "$TMP/ur5e.json" >"$TMP/bad2.json"
expect_invalid "keyframe value not a number" "$TMP/bad2.json" "keyframes[0].q.elbow_joint: expected a number" \
    validate "$TMP/bad2.json" "$TMP/hold.csv"
jq '.keyframes += [.keyframes[0]]' "$TMP/ur5e.json" >"$TMP/bad3.json"
expect_invalid "two keyframes of one name" "$TMP/bad3.json" "keyframes[1].name: 'home' names keyframes[0] too" \
    validate "$TMP/bad3.json" "$TMP/hold.csv"
sed 's|qpos="-1.5708 -1.5708 1.5708 -1.5708 -1.5708 0"|qpos="0 1"|' "$UR5E" >"$TMP/short.xml"
run import "$TMP/short.xml"
why=""
[ "$rc" -eq 2 ] || why+=" exit $rc;"
grep -q "short.xml:134: <key name=\"home\">: qpos: expected 6 numbers (the model's qpos size), got 2" "$TMP/err" ||
    why+=" message: $(tail -n 1 "$TMP/err");"
check "MJCF key of the wrong size: exit 2 naming the line" "$why"

echo "cli_keyframe: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
