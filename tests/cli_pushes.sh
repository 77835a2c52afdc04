#!/usr/bin/env bash
# tests/cli_pushes.sh — logged pushes on the command line (docs/formats.md "Logs", f.<link>.*): data/box's
# toss log with push columns added. Zero pushes change nothing; a world-frame force of m g
# cancels gravity; --units converts them; the link frame is another push; validate lists them;
# a wrong link, frame or component exits 2 naming the column.
# Run from the repository root: SYSID=/abs/path/sysid bash tests/cli_pushes.sh
set -u
. tests/harness.sh   # run, check, expect_invalid, $TMP, the counters

R=data/box/robot.json   # the box: link "box" on free joint "base", 1.3 kg, gravity -9.81
with() {   # with HEADER VALUE: toss.csv plus one constant column
    awk -F, -v h="$1" -v x="$2" 'NR == 1 { print $0 "," h; next } { print $0 "," x }' data/box/toss.csv
}

run simulate "$R" data/box/toss.csv -o "$TMP/plain.csv"
[ "$rc" -eq 0 ] || fail "simulate toss.csv: exit $rc"
with f.box.fz 0 | awk -F, -v OFS=, 'NR == 1 { print $0 ",f.box@link.tx"; next } { print $0 ",0" }' >"$TMP/zero.csv"
run simulate "$R" "$TMP/zero.csv" -o "$TMP/zero_sim.csv"
check "zero pushes: the same trajectory, bit for bit" \
    "$([ "$rc" -eq 0 ] || echo " exit $rc;")$(cmp -s "$TMP/plain.csv" "$TMP/zero_sim.csv" || echo " outputs differ;")"

# f.box.fz = m g = 12.753 N holds the box up: it leaves the ground (it starts 0.2 m up, rising at
# 2 m/s) and flies straight, z(2 s) = z0 + 2 vz0 to rounding (Euler keeps a constant velocity
# to ~1e-13 m over the 64000 steps; tolerance 1e-9 m); without it, it has fallen back
with f.box.fz 12.753 >"$TMP/float.csv"
run simulate "$R" "$TMP/float.csv" -o "$TMP/float_sim.csv"
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
awk -F, 'NR == 2 { z0 = $4; vz = $11 } END { d = $4 - (z0 + 2 * vz); if (d < 0) d = -d; if (d > 1e-9) { print " z(2 s) off by " d; exit 1 } }' \
    "$TMP/float_sim.csv" || why+=" not a straight flight;"
awk -F, 'END { exit !($4 < 0.5) }' "$TMP/plain.csv" || why+=" the unpushed box did not fall back;"
check "a world-frame force of m g cancels gravity" "$why"

# kN: 0.0125 kN is 12.5 N, both exact in binary: the same trajectory, bit for bit
with f.box.fz 12.5 >"$TMP/n.csv"
with f.box.fz 0.0125 >"$TMP/kn.csv"
run simulate "$R" "$TMP/n.csv" -o "$TMP/n_sim.csv"
run simulate "$R" "$TMP/kn.csv" --units '{"f.*.fz": "kN"}' -o "$TMP/kn_sim.csv"
check "--units converts a push" \
    "$([ "$rc" -eq 0 ] || echo " exit $rc;")$(cmp -s "$TMP/n_sim.csv" "$TMP/kn_sim.csv" || echo " outputs differ;")"
run simulate "$R" "$TMP/kn.csv" --units '{"f.box.fz": "deg"}' -o "$TMP/deg.csv"
check "--units refuses an angle unit for a push force" \
    "$([ "$rc" -eq 2 ] || echo " exit $rc;")$(grep -qF 'f.box.fz is a push force' "$TMP/err" || echo " message: $(cat "$TMP/err");")"

# the link frame: the box spins (wy = 6 rad/s), so a link-frame fz is not the world's
with f.box@link.fz 12.5 >"$TMP/link.csv"
run simulate "$R" "$TMP/link.csv" -o "$TMP/link_sim.csv"
check "a link-frame push differs from the world-frame one" \
    "$([ "$rc" -eq 0 ] || echo " exit $rc;")$(cmp -s "$TMP/n_sim.csv" "$TMP/link_sim.csv" && echo " the same output;")"

run validate "$R" "$TMP/float.csv"
check "validate lists the pushes" \
    "$([ "$rc" -eq 0 ] || echo " exit $rc;")$(grep -qF 'float.csv: pushes on box: world force' "$TMP/out" || echo " output: $(cat "$TMP/out");")"
run validate "$R" "$TMP/float.csv" --json
check "validate --json lists the pushes" \
    "$([ "$rc" -eq 0 ] || echo " exit $rc;")$(jq -e '.logs[0].pushes == ["box: world force"]' "$TMP/out" >/dev/null || echo " output: $(cat "$TMP/out");")"

with f.lid.fx 1 >"$TMP/bad_link.csv"
expect_invalid "an unknown link exits 2 naming the column" "$TMP/bad_link.csv" "column f.lid.fx: the robot has no link 'lid'" \
    simulate "$R" "$TMP/bad_link.csv"
with f.box.fw 1 >"$TMP/bad_comp.csv"
expect_invalid "an unknown component exits 2 naming the column" "$TMP/bad_comp.csv" "column f.box.fw: component 'fw'" \
    simulate "$R" "$TMP/bad_comp.csv"
with f.box@body.fx 1 >"$TMP/bad_frame.csv"
expect_invalid "an unknown frame exits 2 naming the column" "$TMP/bad_frame.csv" "column f.box@body.fx: frame 'body'" \
    simulate "$R" "$TMP/bad_frame.csv"
with f.world.fx 1 >"$TMP/root.csv"
expect_invalid "a push on the root link exits 2" "$TMP/root.csv" "column f.world.fx: link 'world' is the root" \
    fit "$R" "$TMP/root.csv"

echo "cli_pushes: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
