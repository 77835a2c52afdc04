#!/usr/bin/env bash
# tests/cli_grad_commands.sh — `sysid grad --wrt commands` as a user scripting trajectory
# optimisation runs it: the CSV's shape and names (log, t, u.COORD; one row per sample of each
# log), --check against central differences passing (Euler, RK4 with substeps, delayed servos
# with dry friction) and failing where it must (a round-off loss), zeros where no window reads,
# the same bytes for any --threads, -o (atomic, "-" is stdout), and bad combinations exiting 2
# with nothing written.
# Run from the repository root: SYSID=/abs/path/sysid bash tests/cli_grad_commands.sh
set -u
. tests/harness.sh   # run, check, $TMP, the counters

# expect_bad NAME ARGS...: exit 2, an error message on stderr, nothing on stdout, no out.csv.
expect_bad() {
    local name=$1 why=""
    shift
    rm -f "$TMP/out.csv"
    run "$@"
    [ "$rc" -eq 2 ] || why+=" exit $rc, expected 2;"
    grep -q '^sysid: error: ' "$TMP/err" || why+=" no 'sysid: error:' on stderr;"
    [ ! -s "$TMP/out" ] || why+=" stdout is not empty;"
    [ ! -e "$TMP/out.csv" ] || why+=" out.csv was written;"
    no_temp "$TMP" || why+=" a temporary file was left;"
    check "$name" "$why"
}

# The first 0.3 s of the double pendulum's log, a perturbed robot (the logged one replays to
# round-off); a second log from 0.3 s to 0.5 s.
DP=$TMP/dp.json
awk -F, 'NR == 1 || $1 <= 0.3' data/double_pendulum/log.csv >"$TMP/a.csv"
awk -F, 'NR == 1 || ($1 > 0.3 && $1 <= 0.5)' data/double_pendulum/log.csv >"$TMP/b.csv"
"$SYSID" params data/double_pendulum/robot.json --set 'gravity[2]=-9.6' \
    --set 'joints.*.friction.viscous=0.05' -o "$DP" 2>"$TMP/err" || fail "params --set"
na=$(($(wc -l <"$TMP/a.csv") - 1))
nb=$(($(wc -l <"$TMP/b.csv") - 1))

# ---- shape and names -----------------------------------------------------------------------
run grad "$DP" "$TMP/a.csv" "$TMP/b.csv" --wrt commands --window 0.05
cp "$TMP/out" "$TMP/two.csv"
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
[ "$(head -1 "$TMP/two.csv")" = "log,t,u.shoulder,u.elbow" ] || why+=" header is '$(head -1 "$TMP/two.csv")';"
[ "$(awk -F, 'NR > 1 && $1 == 1' "$TMP/two.csv" | wc -l)" -eq "$na" ] || why+=" log 1 has not $na rows;"
[ "$(awk -F, 'NR > 1 && $1 == 2' "$TMP/two.csv" | wc -l)" -eq "$nb" ] || why+=" log 2 has not $nb rows;"
awk -F, 'NR > 1 && NF != 4 { bad = 1 } END { exit bad }' "$TMP/two.csv" || why+=" a row without 4 fields;"
# t is the log's own, from its first sample (the first log starts at 0)
paste -d, <(awk -F, 'NR > 1 && $1 == 1 { print $2 }' "$TMP/two.csv") <(awk -F, 'NR > 1 { print $1 }' "$TMP/a.csv") |
    awk -F, '{ if ($1 - $2 > 1e-12 || $2 - $1 > 1e-12) bad = 1 } END { exit bad }' || why+=" t differs from the log's;"
awk -F, 'NR > 1 && $1 == 2 { print $2; exit }' "$TMP/two.csv" | grep -qx 0 || why+=" log 2's t does not start at 0;"
grep -qi 'nan\|inf' "$TMP/two.csv" && why+=" NaN or Inf written;"
awk -F, 'NR > 1 && ($3 != 0 || $4 != 0) { n++ } END { exit !(n > 400) }' "$TMP/two.csv" || why+=" mostly zeros;"
grep -q 'loss and command gradient in .* ms, loss alone in .* ms' "$TMP/err" || why+=" no timings on stderr;"
check "grad --wrt commands: CSV of log, t, u.* per sample of each log" "$why"

# a log's last sample starts no interval: its commands move nothing
why=""
awk -F, 'NR > 1 && $1 == 1 { last = $3 "," $4 } END { exit !(last == "0,0") }' "$TMP/two.csv" || why+=" log 1's last row is not 0;"
# 0.32 s with 0.05 s windows: the trailing 0.02 s window is dropped, its samples unread
awk -F, 'NR == 1 || $1 <= 0.32' data/double_pendulum/log.csv >"$TMP/c.csv"
run grad "$DP" "$TMP/c.csv" --wrt commands --window 0.05
[ "$rc" -eq 0 ] || why+=" exit $rc;"
awk -F, 'NR > 1 && $2 > 0.3 + 1e-9 && ($3 != 0 || $4 != 0) { bad = 1 } END { exit bad }' "$TMP/out" ||
    why+=" a sample of the dropped window is not 0;"
awk -F, 'NR > 1 && $2 < 0.29 && ($3 != 0 || $4 != 0) { n++ } END { exit !(n > 250) }' "$TMP/out" || why+=" the scored part is zeros;"
check "grad --wrt commands: unread samples are 0" "$why"

# the same bytes for any thread count; -o FILE and -o - are the stdout bytes
why=""
for t in 1 2; do
    run grad "$DP" "$TMP/a.csv" "$TMP/b.csv" --wrt commands --window 0.05 --threads $t -o "$TMP/t$t.csv"
    [ "$rc" -eq 0 ] || why+=" --threads $t exit $rc;"
    [ ! -s "$TMP/out" ] || why+=" -o also printed on stdout;"
done
cmp -s "$TMP/t1.csv" "$TMP/t2.csv" || why+=" --threads 1 and 2 differ;"
cmp -s "$TMP/t1.csv" "$TMP/two.csv" || why+=" -o FILE differs from stdout;"
run grad "$DP" "$TMP/a.csv" "$TMP/b.csv" --wrt commands --window 0.05 -o -
cmp -s "$TMP/out" "$TMP/two.csv" || why+=" -o - differs from stdout;"
no_temp "$TMP" || why+=" a temporary file was left;"
check "grad --wrt commands: --threads, -o FILE, -o -" "$why"

# ---- --check -------------------------------------------------------------------------------
for args in "--integrator euler" "--integrator rk4 --substeps 2"; do
    run grad "$DP" "$TMP/a.csv" --wrt commands --window 0.05 $args --check -q
    why=""
    [ "$rc" -eq 0 ] || why+=" exit $rc;"
    grep -qE '^sysid: grad --check: 40 command entries .* max_rel_err [0-9.e+-]+, failed 0 ' "$TMP/err" || why+=" no passing summary;"
    [ "$(head -1 "$TMP/out")" = "log,t,u.shoulder,u.elbow" ] || why+=" no CSV with --check;"
    check "grad --wrt commands --check $args" "$why"
    echo "    $(grep -o 'max_rel_err [^,]*' "$TMP/err") ($args)" >&2
done
# delayed position servos with dry friction (data/delayed_servo): the delays split each
# command's share over two samples, across window starts
awk -F, 'NR == 1 || $1 <= 0.2' data/delayed_servo/log_noisy.csv >"$TMP/servo.csv"
run grad data/delayed_servo/truth.json "$TMP/servo.csv" --wrt commands --window 0.05 --check -q
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
grep -qE 'failed 0 ' "$TMP/err" || why+=" no passing summary;"
[ "$(head -1 "$TMP/out")" = "log,t,u.j1,u.j2,u.j3,u.j4,u.j5,u.j6,u.j7" ] || why+=" header is '$(head -1 "$TMP/out")';"
check "grad --wrt commands --check: delayed servos, dry friction" "$why"
echo "    $(grep -o 'max_rel_err [^,]*' "$TMP/err") (delayed_servo)" >&2

# A check that must fail: the pendulum's own log replays exactly (loss ~1e-32), its gradient is
# round-off, and differences of round-off do not agree: exit 1, the CSV still written, a warning.
awk -F, 'NR == 1 || $1 <= 0.3' data/pendulum/log.csv >"$TMP/p.csv"
run grad data/pendulum/robot.json "$TMP/p.csv" --wrt commands --window 0.05 --integrator euler --substeps 1 --check
why=""
[ "$rc" -eq 1 ] || why+=" exit $rc, expected 1;"
grep -q 'round-off level' "$TMP/err" || why+=" no round-off warning;"
grep -q '^sysid: error: grad --check: .* command entries exceed' "$TMP/err" || why+=" no error line;"
[ "$(head -1 "$TMP/out")" = "log,t,u.hinge" ] || why+=" no CSV;"
check "grad --wrt commands --check fails on round-off" "$why"

# ---- bad combinations: exit 2, nothing written -------------------------------------------
expect_bad "--wrt bad value" grad "$DP" "$TMP/a.csv" --wrt torques -o "$TMP/out.csv"
expect_bad "-o without --wrt commands" grad "$DP" "$TMP/a.csv" -o "$TMP/out.csv"
expect_bad "--wrt params -o" grad "$DP" "$TMP/a.csv" --wrt params -o "$TMP/out.csv"
expect_bad "--wrt commands --json" grad "$DP" "$TMP/a.csv" --wrt commands --json -o "$TMP/out.csv"
expect_bad "--wrt commands --free" grad "$DP" "$TMP/a.csv" --wrt commands --free 'links.*' -o "$TMP/out.csv"
expect_bad "--wrt commands --fix" grad "$DP" "$TMP/a.csv" --wrt commands --fix 'links.*' -o "$TMP/out.csv"
expect_bad "--wrt commands, a robot without motors" grad data/ball/robot.json data/ball/drop.csv --wrt commands -o "$TMP/out.csv"
printf 't,q.shoulder,q.elbow,qd.shoulder,qd.elbow,u.shoulder,u.elbow\n0,0,0,0,0,0,0\n0.001,0,x,0,0,0,0\n' >"$TMP/bad.csv"
expect_bad "--wrt commands, a bad log" grad "$DP" "$TMP/bad.csv" --wrt commands -o "$TMP/out.csv"
grep -q 'bad.csv: line 3' "$TMP/err" || fail "a bad log's error names its file and line"
cp "$TMP/a.csv" "$TMP/keep.csv"
run grad "$DP" "$TMP/keep.csv" --wrt commands -o "$TMP/keep.csv"
why=""
[ "$rc" -eq 2 ] || why+=" exit $rc;"
cmp -s "$TMP/keep.csv" "$TMP/a.csv" || why+=" the log was overwritten;"
grep -q 'would overwrite the input' "$TMP/err" || why+=" no message;"
check "-o over an input log" "$why"
run grad --help
grep -q -- '--wrt params|commands' "$TMP/out" && grep -q 'u.COORD' "$TMP/out" || fail "grad --help documents --wrt"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
