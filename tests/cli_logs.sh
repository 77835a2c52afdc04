#!/usr/bin/env bash
# tests/cli_logs.sh — real logs without ceremony (docs/formats.md "Logs (CSV)"): column patterns,
# units, epoch times in ns read exactly, ';' and tab logs, decimal commas, empty cells, gaps.
# Each fixture is compared with the same samples in sysid's own columns; each mistake exits
# 2 with a message naming the file and the line, or the spec and its JSON path.
# Run from the repository root: SYSID=/abs/path/sysid bash tests/cli_logs.sh
set -u
. tests/harness.sh   # run, check, expect_invalid, $TMP, the counters

D=data/double_pendulum
ROBOT=$D/robot.json
ROS=$D/ros2_joint_states.csv
ROSSPEC=$D/ros2.json
CTL=$D/controller_deg.csv
CTLSPEC=$D/controller.json

# loss LOG ARGS...: eval's loss, as printed
loss() { "$SYSID" eval "$ROBOT" "$@" --window 0.1 --json -q | jq -r .loss; }

# maxdiff A B: the largest |difference| between the numbers of two CSVs of the same shape
maxdiff() {
    paste -d, "$1" "$2" | awk -F, 'NR > 1 { n = NF / 2; for (i = 1; i <= n; i++) {
        d = $i - $(i + n); if (d < 0) d = -d; if (d > m) m = d } } END { printf "%.3g\n", m }'
}

# maxstep_error CSV H: the largest |t[k+1] - t[k] - H| of a CSV's first column
maxstep_error() {
    awk -F, -v h="$2" 'NR > 2 { d = $1 - p - h; if (d < 0) d = -d; if (d > m) m = d }
        NR > 1 { p = $1 } END { printf "%.3g\n", m }' "$1"
}

# The canonical log the fixtures were made from (tests/tools/mkreallogs.sh).
"$SYSID" params "$ROBOT" --set links.fore.mass=1.1 --set joints.elbow.armature=0.02 -o "$TMP/truth.json"
"$SYSID" simulate "$TMP/truth.json" $D/log.csv --max-dt 0.0001 -o "$TMP/full.csv"
head -n 2002 "$TMP/full.csv" >"$TMP/canon.csv"
CANON=$(loss "$TMP/canon.csv")
# the fixtures' specs say "window": 0.1, which the step choice tests windows of: the same here
printf '{ "window": 0.1 }\n' >"$TMP/w01.json"
"$SYSID" simulate "$ROBOT" "$TMP/canon.csv" -c "$TMP/w01.json" -o "$TMP/sim_canon.csv"

# ---- fixtures against the canonical log ---------------------------------------------------

got=$(loss "$ROS" -c "$ROSSPEC")
check "ROS 2 export, patterns by {index}: the same loss" "$([ "$got" = "$CANON" ] || echo " $got != $CANON;")"
"$SYSID" simulate "$ROBOT" "$ROS" -c "$ROSSPEC" -q -o "$TMP/sim_ros.csv"
check "ROS 2 export: simulate byte-identical" "$(cmp -s "$TMP/sim_canon.csv" "$TMP/sim_ros.csv" || echo " differs;")"
check "ROS 2 export: 1 ms steps of ns epoch times exact to 1e-12 s" \
    "$(awk -v e="$(maxstep_error "$TMP/sim_ros.csv" 0.001)" 'BEGIN { if (e > 1e-12) print " step error " e }')"

got=$(loss "$CTL" -c "$CTLSPEC")
check "controller log (deg, ns, ';', decimal commas, mN*m, mA): the loss within 1e-12" \
    "$(awk -v a="$got" -v b="$CANON" 'BEGIN { d = (a - b) / b; if (d < 0) d = -d; if (d > 1e-12) print " " a " vs " b }')"
"$SYSID" simulate "$ROBOT" "$CTL" -c "$CTLSPEC" -o "$TMP/sim_ctl.csv"
check "controller log: simulated states within 1e-12 of the canonical log's" \
    "$(awk -v e="$(maxdiff "$TMP/sim_canon.csv" "$TMP/sim_ctl.csv")" 'BEGIN { if (e > 1e-12) print " max diff " e }')"
check "controller log: times identical" "$(cmp -s <(cut -d, -f1 "$TMP/sim_canon.csv") <(cut -d, -f1 "$TMP/sim_ctl.csv") || echo " differ;")"

# the same maps as flags
run eval "$ROBOT" "$ROS" --window 0.1 --json --columns 't=time,q.*=position[{index}],qd.*=velocity[{index}],u.*=effort[{index}]' --units t=ns
check "--columns patterns and --units as flags" "$([ "$rc" -eq 0 ] || echo " exit $rc;")$([ "$(jq -r .loss "$TMP/out")" = "$CANON" ] || echo " loss $(jq -r .loss "$TMP/out");")"
run eval "$ROBOT" "$ROS" --window 0.1 --json --columns '{"t": "time", "q.*": "position[{index}]", "qd.*": "velocity[{index}]", "u.*": "effort[{index}]"}' --units '{"t": "ns"}'
check "--columns and --units as JSON" "$([ "$rc" -eq 0 ] || echo " exit $rc;")$([ "$(jq -r .loss "$TMP/out")" = "$CANON" ] || echo " loss;")"

# explicit entries win over patterns; {index1} counts from 1
sed '1s/position\[1\]/elbow_angle/' "$ROS" >"$TMP/ros_renamed.csv"
got=$(loss "$TMP/ros_renamed.csv" -c "$ROSSPEC" --columns q.elbow=elbow_angle)
check "an explicit entry overrides the pattern" "$([ "$got" = "$CANON" ] || echo " $got;")"
sed '1s/position\[0\]/p1/; 1s/position\[1\]/p2/' "$ROS" >"$TMP/ros_index1.csv"
got=$(loss "$TMP/ros_index1.csv" -c "$ROSSPEC" --columns 'q.*=p{index1}')
check "{index1} and a flag's pattern over the file's" "$([ "$got" = "$CANON" ] || echo " $got;")"
# PlotJuggler's style of topic paths, by joint name; and the log on standard input
sed '1s/.*/__time,\/joint_states\/position\/shoulder,\/joint_states\/position\/elbow,\/joint_states\/velocity\/shoulder,\/joint_states\/velocity\/elbow,\/cmd\/shoulder,\/cmd\/elbow/' "$TMP/canon.csv" >"$TMP/plotjuggler.csv"
got=$(loss "$TMP/plotjuggler.csv" --columns 't=__time,q.*=/joint_states/position/{joint},qd.*=/joint_states/velocity/{joint},u.*=/cmd/{joint}')
check "topic paths by {joint}" "$([ "$got" = "$CANON" ] || echo " $got;")"
got=$("$SYSID" eval "$ROBOT" - -c "$ROSSPEC" --json -q <"$ROS" | jq -r .loss)
check "a ROS export on standard input" "$([ "$got" = "$CANON" ] || echo " $got;")"
# a flag's unit replaces the file's scale for the same column, and the other way round
got=$(loss "$CTL" -c "$CTLSPEC" --scale 'u.shoulder=0.001')
check "--scale over a spec's unit" "$(awk -v a="$got" -v b="$CANON" 'BEGIN { d = (a - b) / b; if (d < 0) d = -d; if (d > 1e-12) print " " a }')"

# delimiters: ';', tab, the UTF-8 byte order mark before a ';' header
sed 's/,/;/g' "$TMP/canon.csv" >"$TMP/semi.csv"
check "';' detected" "$([ "$(loss "$TMP/semi.csv")" = "$CANON" ] || echo " loss differs;")"
tr ',' '\t' <"$TMP/canon.csv" >"$TMP/tab.csv"
check "tab detected" "$([ "$(loss "$TMP/tab.csv")" = "$CANON" ] || echo " loss differs;")"
{ printf '\xEF\xBB\xBF'; cat "$TMP/semi.csv"; } >"$TMP/bom_semi.csv"
check "';' after a byte order mark" "$([ "$(loss "$TMP/bom_semi.csv")" = "$CANON" ] || echo " loss differs;")"

# large float seconds since the epoch, µs resolution: re-based exactly
awk -F, 'NR == 1 { print; next } { us = 1700000000123456 + (NR - 2) * 1000
    $1 = sprintf("%d.%06d", int(us / 1000000), us % 1000000); print }' OFS=, "$TMP/canon.csv" >"$TMP/epoch_s.csv"
"$SYSID" simulate "$ROBOT" "$TMP/epoch_s.csv" -c "$TMP/w01.json" -o "$TMP/sim_epoch.csv"
check "epoch seconds with 6 decimals: steps exact to 1e-12 s" \
    "$(awk -v e="$(maxstep_error "$TMP/sim_epoch.csv" 0.001)" 'BEGIN { if (e > 1e-12) print " step error " e }')$(cmp -s "$TMP/sim_canon.csv" "$TMP/sim_epoch.csv" || echo " simulate differs;")"
# µs and N·m spelled in UTF-8
awk -F, 'NR == 1 { print; next } { $1 = (NR - 2) * 1000; print }' OFS=, "$TMP/canon.csv" >"$TMP/us.csv"
got=$(loss "$TMP/us.csv" --units 't=µs,u.shoulder=N·m')
check "units µs and N·m" "$([ "$got" = "$CANON" ] || echo " $got;")"

# an empty command cell holds the previous command; the loss is that of the held log
awk -F, 'NR == 50 { $6 = "" } { print }' OFS=, "$TMP/canon.csv" >"$TMP/held.csv"
awk -F, 'NR == 50 { $6 = prev } { prev = $6; print }' OFS=, "$TMP/canon.csv" >"$TMP/held_filled.csv"
run eval "$ROBOT" "$TMP/held.csv" --window 0.1 --json
check "an empty command cell holds the previous command" "$([ "$rc" -eq 0 ] || echo " exit $rc;")$(grep -q 'held.csv: 1 empty command cell held the previous row.s command (the first: line 50, column u.shoulder)' "$TMP/err" || echo " no warning naming line 50;")$([ "$(jq -r .loss "$TMP/out")" = "$(loss "$TMP/held_filled.csv")" ] || echo " loss is not the held log's;")"

# gaps: 40 samples missing after line 1000
awk 'NR < 1001 || NR > 1040' "$TMP/canon.csv" >"$TMP/gap.csv"
run validate "$ROBOT" "$TMP/gap.csv"
check "a gap is warned about, by line" "$([ "$rc" -eq 0 ] || echo " exit $rc;")$(grep -q 'gap.csv: line 1001: a gap of 0.041 s after line 1000, 41 times the median sample interval 0.001 s' "$TMP/err" || echo " no warning;")"
run validate "$ROBOT" "$TMP/canon.csv"
check "no gap warning on a regular log" "$(grep -q 'gap' "$TMP/err" && echo " warned;")"
run validate "$ROBOT" "$TMP/gap.csv" -q
check "-q silences the gap warning" "$([ ! -s "$TMP/err" ] || echo " stderr not empty;")"

# the old numeric scale still works next to units
got=$(loss "$TMP/us.csv" --scale t=1e-6)
check "numeric --scale still converts" "$(awk -v a="$got" -v b="$CANON" 'BEGIN { d = (a - b) / b; if (d < 0) d = -d; if (d > 1e-9) print " " a }')"

# ---- mistakes: the spec (file and JSON path) or the flag ------------------------------------

spec() { echo "$2" >"$TMP/$1"; }
spec unknown_unit.json '{ "units": { "q.*": "degree" } }'
expect_invalid "unknown unit" "$TMP/unknown_unit.json" 'units["q.*"]: expected a unit' \
    simulate "$ROBOT" "$TMP/canon.csv" -c "$TMP/unknown_unit.json"
expect_invalid "unknown unit (flag)" "--units" 'units["q.*"]: expected a unit' \
    simulate "$ROBOT" "$TMP/canon.csv" --units 'q.*=degs'
spec length_on_revolute.json '{ "units": { "q.*": "mm" } }'
expect_invalid "length unit on a revolute joint" "$TMP/length_on_revolute.json: units[\"q.*\"]" \
    "'mm' is a length unit, but q.shoulder is the angle of revolute joint shoulder; expected an angle (rad, deg, rev)" \
    simulate "$ROBOT" "$TMP/canon.csv" -c "$TMP/length_on_revolute.json"
expect_invalid "angle unit on a velocity" "--units" "'deg' is an angle unit, but qd.elbow is an angular velocity" \
    simulate "$ROBOT" "$TMP/canon.csv" --units 'qd.elbow=deg'
expect_invalid "angle unit on the time" "--units" "'deg' is an angle unit, but t is the time; expected a time" \
    simulate "$ROBOT" "$TMP/canon.csv" --units 't=deg'
expect_invalid "voltage on a current motor's command" "--units" "'V' is a voltage unit, but u.elbow is the command of revolute joint elbow" \
    simulate "$ROBOT" "$TMP/canon.csv" --units 'u.elbow=V'
expect_invalid "a unit on a quaternion component" "--units" "q.base.qw is a quaternion component of free joint base; expected no unit" \
    simulate tests/fixtures/box.json tests/fixtures/box_log.csv --units 'q.base.*=m'
expect_invalid "an angle unit on a prismatic joint" "--units" "is a position of prismatic joint" \
    simulate data/tree/robot.json data/tree/log.csv --units 'q.*=deg'
spec both.json '{ "scale": { "t": 0.001 }, "units": { "t": "ms" } }'
expect_invalid "a unit and a scale for one column" "$TMP/both.json: units[\"t\"]" "t already has a scale ($TMP/both.json: scale[\"t\"]); give a unit or a scale, not both" \
    simulate "$ROBOT" "$TMP/canon.csv" -c "$TMP/both.json"
spec units_not_object.json '{ "units": "deg" }'
expect_invalid "units not an object" "$TMP/units_not_object.json" 'units: expected an object { "q.JOINT": "unit", ... }' \
    simulate "$ROBOT" "$TMP/canon.csv" -c "$TMP/units_not_object.json"
spec unit_number.json '{ "units": { "t": 1e-9 } }'
expect_invalid "a unit that is a number" "$TMP/unit_number.json" 'units["t"]: expected a unit' \
    simulate "$ROBOT" "$TMP/canon.csv" -c "$TMP/unit_number.json"
spec unit_unknown_column.json '{ "units": { "q.hip": "deg" } }'
expect_invalid "a unit for a column the robot has not" "$TMP/unit_unknown_column.json: units[\"q.hip\"]" "q.hip is not a log column of this robot" \
    simulate "$ROBOT" "$TMP/canon.csv" -c "$TMP/unit_unknown_column.json"
spec pattern_nothing.json '{ "columns": { "pos.*": "p_{joint}" } }'
expect_invalid "a pattern matching no column of the robot" "$TMP/pattern_nothing.json: columns[\"pos.*\"]" "pos.* matches no log column of this robot" \
    simulate "$ROBOT" "$TMP/canon.csv" -c "$TMP/pattern_nothing.json"
expect_invalid "a scale pattern matching nothing" "--scale" "z* matches no log column of this robot" \
    simulate "$ROBOT" "$TMP/canon.csv" --scale 'z*=2'
spec pattern_missing.json '{ "columns": { "t": "time", "q.*": "pos_{joint}" }, "units": { "t": "ns" } }'
expect_invalid "a pattern's header not in the log" "$ROS" "line 1: missing column pos_shoulder (mapped to q.shoulder by $TMP/pattern_missing.json: columns[\"q.*\"]); the header has: time, header.stamp.sec" \
    simulate "$ROBOT" "$ROS" -c "$TMP/pattern_missing.json"
expect_invalid "a flag pattern's header not in the log" "$TMP/canon.csv" "line 1: missing column vel_shoulder (mapped to qd.shoulder by --columns); the header has: t, q.shoulder" \
    simulate "$ROBOT" "$TMP/canon.csv" --columns 'qd.*=vel_{joint}'
spec placeholder.json '{ "columns": { "q.*": "pos_{name}" } }'
expect_invalid "an unknown placeholder" "$TMP/placeholder.json" "columns[\"q.*\"]: expected a header template: unknown placeholder '{name}'" \
    simulate "$ROBOT" "$TMP/canon.csv" -c "$TMP/placeholder.json"
expect_invalid "a stray brace" "--columns" "a '}' that closes no placeholder" \
    simulate "$ROBOT" "$TMP/canon.csv" --columns 'q.*=pos}'
expect_invalid "a pattern without placeholder maps two joints to one header" "$ROS" "column position[0] is mapped to both q.shoulder and q.elbow by --columns" \
    simulate "$ROBOT" "$ROS" -c "$ROSSPEC" --columns 'q.*=position[0]'
expect_invalid "--units without a value" "--units" "expected a JSON object or NAME=UNIT" \
    simulate "$ROBOT" "$TMP/canon.csv" --units 'q.*='
expect_invalid "--columns pattern without =" "--columns" "expected a JSON object or NAME=HEADER" \
    simulate "$ROBOT" "$TMP/canon.csv" --columns 'q.*'

# ---- mistakes of the log: file, line and column ---------------------------------------------

expect_invalid "ns times read as seconds" "$ROBOT" "simulating $ROS: the log interval at t = 0 s (sample 1, 1e+06 s long)" \
    simulate "$ROBOT" "$ROS" --columns 't=time,q.*=position[{index}],qd.*=velocity[{index}],u.*=effort[{index}]' --max-dt 0.001
awk -F, 'NR == 7 { $7 = "" } { print }' OFS=, "$ROS" >"$TMP/empty_q.csv"
expect_invalid "an empty position cell" "$TMP/empty_q.csv" "line 7, column position[0] (q.shoulder): empty cell; expected a number (sysid does not interpolate" \
    simulate "$ROBOT" "$TMP/empty_q.csv" -c "$ROSSPEC"
awk -F, 'NR == 9 { $1 = "" } { print }' OFS=, "$ROS" >"$TMP/empty_t.csv"
expect_invalid "an empty time cell" "$TMP/empty_t.csv" "line 9, column time (t): empty cell" \
    simulate "$ROBOT" "$TMP/empty_t.csv" -c "$ROSSPEC"
awk -F, 'NR == 2 { $11 = "" } { print }' OFS=, "$ROS" >"$TMP/empty_u0.csv"
expect_invalid "an empty command cell in the first sample" "$TMP/empty_u0.csv" "line 2, column effort[0] (u.shoulder): empty cell; expected a number (an empty command cell holds the previous row's command, and this is the first sample)" \
    simulate "$ROBOT" "$TMP/empty_u0.csv" -c "$ROSSPEC"
awk -F';' 'NR == 5 { $2 = "12,5,1" } { print }' OFS=';' "$CTL" >"$TMP/two_commas.csv"
expect_invalid "a cell with two commas in a ';' log" "$TMP/two_commas.csv" "line 5, column shoulder_pos_deg (q.shoulder): expected a number, got '12,5,1'" \
    simulate "$ROBOT" "$TMP/two_commas.csv" -c "$CTLSPEC"
tr ';' '\t' <"$CTL" >"$TMP/tab_comma.csv"
expect_invalid "a decimal comma in a tab log" "$TMP/tab_comma.csv" "line 2, column shoulder_pos_deg (q.shoulder): expected a number, got '22,918311805232928' (a decimal comma is read only in logs delimited by ';')" \
    simulate "$ROBOT" "$TMP/tab_comma.csv" -c "$CTLSPEC"
tr ',' ' ' <"$TMP/canon.csv" >"$TMP/spaces.csv"
expect_invalid "columns apart by spaces" "$TMP/spaces.csv" "line 1: no ',', ';' or tab between the column names, got 't q.shoulder" \
    simulate "$ROBOT" "$TMP/spaces.csv"
awk -F, 'NR == 6 { $1 = prev } { prev = $1; print }' OFS=, "$ROS" >"$TMP/repeated_ns.csv"
expect_invalid "a repeated ns time" "$TMP/repeated_ns.csv" "line 6, column time (t): repeated time 1700000000126456789 (also on line 5)" \
    simulate "$ROBOT" "$TMP/repeated_ns.csv" -c "$ROSSPEC"
awk -F, 'NR == 6 { $1 = "1700000000124456788" } { print }' OFS=, "$ROS" >"$TMP/decreasing_ns.csv"
expect_invalid "a decreasing ns time, one ns back" "$TMP/decreasing_ns.csv" "line 6, column time (t): decreasing time 1700000000124456788 after 1700000000126456789 on line 5" \
    simulate "$ROBOT" "$TMP/decreasing_ns.csv" -c "$ROSSPEC"
awk -F';' 'NR == 8 { $1 = "17645868000O7000000" } { print }' OFS=';' "$CTL" >"$TMP/letter_ns.csv"
expect_invalid "a letter in an ns time" "$TMP/letter_ns.csv" "line 8, column timestamp_ns (t): expected a number, got '17645868000O7000000'" \
    simulate "$ROBOT" "$TMP/letter_ns.csv" -c "$CTLSPEC"
awk -F';' 'NR == 4 { $3 = "nan" } { print }' OFS=';' "$CTL" >"$TMP/nan_deg.csv"
expect_invalid "NaN in a degree column" "$TMP/nan_deg.csv" "line 4, column elbow_pos_deg (q.elbow): expected a finite number, got 'nan'" \
    simulate "$ROBOT" "$TMP/nan_deg.csv" -c "$CTLSPEC"
awk -F';' 'NR == 10 { NF = 6 } { print }' OFS=';' "$CTL" >"$TMP/short_row.csv"
expect_invalid "a short row in a ';' log" "$TMP/short_row.csv" "line 10: expected 7 fields (as in the header), got 6" \
    simulate "$ROBOT" "$TMP/short_row.csv" -c "$CTLSPEC"
expect_invalid "validate names the fixture's mistake too" "$TMP/empty_q.csv" "line 7, column position[0] (q.shoulder): empty cell" \
    validate "$ROBOT" "$TMP/empty_q.csv" -c "$ROSSPEC"

echo "cli_logs: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
