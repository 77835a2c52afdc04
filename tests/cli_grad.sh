#!/usr/bin/env bash
# tests/cli_grad.sh — `sysid grad`, `eval` and `diff` as a user runs them: the adjoint gradient
# agrees with finite differences on every example robot and both integrators, --json parses,
# exit codes (0, 1 for a failed gate, 2 for bad input with nothing on stdout).
# Run from the repository root: SYSID=/abs/path/sysid bash tests/cli_grad.sh
set -u
. tests/harness.sh   # run, check, expect_invalid, $TMP, the counters

FIX=tests/fixtures

# jqok FILTER [JQ-OPTIONS...]: does $TMP/out parse as JSON and make FILTER true?
jqok() { jq -e "${@:2}" "$1" "$TMP/out" >/dev/null 2>&1; }

# expect_bad NAME ARGS...: exit 2, an error message on stderr, nothing on stdout.
expect_bad() {
    local name=$1 why=""
    shift
    run "$@"
    [ "$rc" -eq 2 ] || why+=" exit $rc, expected 2;"
    grep -q '^sysid: error: ' "$TMP/err" || why+=" no 'sysid: error:' on stderr;"
    [ ! -s "$TMP/out" ] || why+=" stdout is not empty;"
    check "$name" "$why"
}

# ---- grad --check on every example, both integrators ------------------------------------
# The example logs were made by MuJoCo from the robots as given, which our Euler step replays
# to round-off: the loss there is ~1e-32 and its gradient is noise. A perturbed copy (other
# gravity, other viscous friction) gives residuals of a realistic size. Logs are cut to their
# first 0.3 s (0.15 s for the 7-joint robots) and windows to 0.05 s, to keep this fast.

for r in pendulum double_pendulum arm7 tree; do
    case $r in arm7 | tree) T=0.15 nw=3 ;; *) T=0.3 nw=6 ;; esac
    awk -F, -v T=$T 'NR == 1 || $1 <= T' "data/$r/log.csv" >"$TMP/$r.csv"
    "$SYSID" params "data/$r/robot.json" --set 'gravity[2]=-9.6' \
        --set 'joints.*.friction.viscous=0.05' -o "$TMP/$r.json" 2>"$TMP/err" ||
        fail "params --set for $r"
    np=$("$SYSID" params "data/$r/robot.json" --json | jq '.parameters | length')
    for integ in euler rk4; do
        run grad "$TMP/$r.json" "$TMP/$r.csv" --window 0.05 --integrator "$integ" --check --json
        why=""
        [ "$rc" -eq 0 ] || why+=" exit $rc;"
        jqok '.loss > 0 and .nres > 0 and .windows == '$nw ||
            why+=" not JSON with loss, nres, windows;"
        jqok "(.gradient | length) == $np and (.check | length) == $np" ||
            why+=" gradient/check do not have all $np parameters;"
        jqok '.atol as $a | ([.check[].pass] | all) and .failed == 0 and .tol == 1e-4 and .atol >= 0 and ([.check[] | select([(.analytic | fabs), (.fd | fabs)] | max > $a) | .rel_err] | max // 0) == .max_rel_err' ||
            why+=" a component failed, or tol, atol, max_rel_err missing or inconsistent;"
        # rel_err is the plain relative error, not the mixed one (which rounds to 0 within atol)
        jqok '([.check[] | (.analytic - .fd | fabs) as $d | ([(.analytic | fabs), (.fd | fabs)] | max) as $m
                | if $m == 0 then .rel_err == 0 else (.rel_err - $d / $m | fabs) <= 1e-12 * $d / $m end] | all)
              and .max_rel_err > 0' ||
            why+=" rel_err is not |a-b|/max(|a|,|b|);"
        jqok '.gradient as $g | [.check | to_entries[] | .value.analytic == $g[.key]] | all' ||
            why+=" check.analytic differs from gradient;"
        grep -q 'loss and gradient in .* ms, loss alone in .* ms' "$TMP/err" ||
            why+=" no timings on stderr;"
        check "grad --check $r $integ" "$why"
        echo "    grad --check $r $integ: max_rel_err $(jq '.max_rel_err' "$TMP/out" 2>/dev/null)" >&2
    done
done

# ---- grad: table, free selection, spec, exit 1 --------------------------------------------

P=$TMP/pendulum.json
PL=$TMP/pendulum.csv
run grad "$P" "$PL" --window 0.05 --free 'links.*.mass' --free 'joints.*.friction.viscous' --check
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
grep -qE '^name +value +gradient +fd +rel_err +check \(tol 1e-4, atol [0-9.e+-]+\)$' "$TMP/out" || why+=" no table header naming tol and atol;"
grep -qE '^links.pole.mass .* [0-9.e+-]+ +ok$' "$TMP/out" || why+=" no rel_err and verdict on the mass row;"
grep -qx 'failed       0 of 2' "$TMP/out" || why+=" no 'failed 0 of 2' line;"
grep -q '^links.pole.mass  *0.8  ' "$TMP/out" || why+=" no links.pole.mass row with its value;"
grep -q '^joints.hinge.friction.viscous  *0.05  ' "$TMP/out" || why+=" no viscous row;"
[ "$(grep -c '^links\.\|^joints\.\|^gravity' "$TMP/out")" -eq 2 ] || why+=" not exactly 2 rows;"
grep -q '^loss  ' "$TMP/out" || why+=" no loss line;"
check "grad table with --free" "$why"

# The gradient of the selection equals those components of the full gradient.
run grad "$P" "$PL" --window 0.05 --json -q
cp "$TMP/out" "$TMP/full.json"
[ ! -s "$TMP/err" ]; q_silent=$?
run grad "$P" "$PL" --window 0.05 --json --free 'links.*.mass'
check "grad --free matches the full gradient" "$([ "$rc" -eq 0 ] || echo " exit $rc;")$(jqok '(.gradient | keys) == ["links.pole.mass"] and .gradient["links.pole.mass"] == $f[0].gradient["links.pole.mass"] and .loss == $f[0].loss and (has("check") | not)' \
    --slurpfile f "$TMP/full.json" || echo " differs;")$([ "$q_silent" -eq 0 ] || echo " -q left stderr output;")"

# A spec's "free" and "window" are used; flags override the file.
printf '{ "free": ["joints.*.friction.*"], "window": 0.1, "integrator": "rk4" }\n' >"$TMP/spec.json"
run grad "$P" "$PL" -c "$TMP/spec.json" --json
check "grad -c spec" "$([ "$rc" -eq 0 ] || echo " exit $rc;")$(jqok '(.gradient | length) == 3 and .windows == 3' || echo " expected 3 friction parameters and 3 windows;")"
run grad "$P" "$PL" -c "$TMP/spec.json" --window 0.05 --free-only 'links.pole.mass' --json
check "grad flags override the spec" "$([ "$rc" -eq 0 ] || echo " exit $rc;")$(jqok '(.gradient | keys) == ["links.pole.mass"] and .windows == 6' || echo " flags did not win;")"

# --start fitted: grad still starts from the logged states, and says so.
run grad "$P" "$PL" --window 0.05 --start fitted --json
check "grad --start fitted uses logged starts" "$([ "$rc" -eq 0 ] || echo " exit $rc;")$(jqok '.loss == $f[0].loss' --slurpfile f "$TMP/full.json" || echo " loss differs from logged starts;")$(grep -q 'logged states' "$TMP/err" || echo " no warning;")"

# A check that must fail: at the robot the log was made from, the Euler replay is exact, the
# loss is round-off (~1e-32) and so is its gradient (at MuJoCo's step: one per sample); finite differences of round-off do not
# agree with it. Exit 1, the data still on stdout, a warning and an error naming a parameter.
run grad data/pendulum/robot.json "$PL" --window 0.05 --integrator euler --substeps 1 --check --json
check "grad --check fails at an exact fit (exit 1)" "$([ "$rc" -eq 1 ] || echo " exit $rc, expected 1;")$(jqok '.loss < 1e-20 and .max_rel_err > 1e-4 and .failed == ([.check[] | select(.pass | not)] | length) and .failed > 0' || echo " JSON missing or check did not fail;")$(grep -q 'round-off level' "$TMP/err" || echo " no round-off warning;")$(grep -q '^sysid: error: grad --check: [a-z]' "$TMP/err" || echo " no error naming a parameter;")"

# help
run grad --help
h1=$(cat "$TMP/out")
run help grad
check "grad --help" "$([ "$rc" -eq 0 ] || echo " exit $rc;")$([ "$(cat "$TMP/out")" = "$h1" ] || echo " 'sysid help grad' differs;")$(grep -q 'Exit status' "$TMP/out" || echo " no exit codes;")"

# bad input: exit 2, nothing on stdout
expect_bad "grad: no arguments" grad
expect_bad "grad: no log" grad "$P"
expect_bad "grad: missing log" grad "$P" "$TMP/no_such.csv"
expect_bad "grad: missing robot" grad "$TMP/no_such.json" "$PL"
expect_bad "grad: bad robot" grad "$FIX/bad/negative_mass.json" "$FIX/arm2_log.csv"
expect_bad "grad: bad log" grad "$FIX/arm2.json" "$FIX/bad/missing_column.csv"
expect_bad "grad: --window -1" grad "$P" "$PL" --window -1
expect_bad "grad: --integrator" grad "$P" "$PL" --integrator midpoint
expect_bad "grad: --free matches nothing" grad "$P" "$PL" --free 'links.nothing.*'
expect_bad "grad: unknown option" grad "$P" "$PL" --bogus
expect_bad "grad: --check with a value" grad "$P" "$PL" --check=yes

# ---- eval -------------------------------------------------------------------------------

DP=$TMP/double_pendulum.json
DL=$TMP/double_pendulum.csv
run eval "$DP" "$DL" --window 0.05
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
grep -q '^joint  *rmse_q  *rmse_qd' "$TMP/out" || why+=" no table header;"
grep -q '^shoulder  *[0-9.e-]*  *[0-9.e-]*  *rad' "$TMP/out" || why+=" no shoulder row;"
grep -q '^elbow  ' "$TMP/out" || why+=" no elbow row;"
grep -q '^loss  ' "$TMP/out" || why+=" no loss line;"
check "eval table" "$why"

run eval "$DP" "$DL" --window 0.05 --json
cp "$TMP/out" "$TMP/eval.json"
check "eval --json" "$([ "$rc" -eq 0 ] || echo " exit $rc;")$(jqok '.loss > 0 and .windows == 6 and (.rmse.q | keys) == ["elbow", "shoulder"] and .rmse.q.shoulder > 0 and .rmse.qd.elbow > 0 and (.logs | length) == 1 and .logs[0].samples == 301 and .logs[0].rmse == .rmse' || echo " unexpected JSON;")"

# eval's loss is grad's loss for the same options.
run grad "$DP" "$DL" --window 0.05 --json
check "eval loss == grad loss" "$(jqok '.loss == $e[0].loss' --slurpfile e "$TMP/eval.json" || echo " differ;")"

# The robot the log was made from replays it exactly with Euler (MuJoCo's own integrator) at
# MuJoCo's step, one per sample (an automatic step would be finer, so not MuJoCo's).
run eval data/pendulum/robot.json "$PL" --window 0 --integrator euler --substeps 1 --json
check "eval exact model: rmse ~ 0" "$([ "$rc" -eq 0 ] || echo " exit $rc;")$(jqok '.windows == 1 and .rmse.q.hinge < 1e-12 and .rmse.qd.hinge < 1e-10' || echo " not ~0;")"

# Two logs, one free-running window each; per-log RMSE.
awk -F, 'NR == 1 || ($1 > 0.1 && $1 <= 0.25)' data/double_pendulum/log.csv >"$TMP/dp2.csv"
run eval "$DP" "$DL" "$TMP/dp2.csv" --window 0 --json
check "eval two logs --window 0" "$([ "$rc" -eq 0 ] || echo " exit $rc;")$(jqok '.windows == 2 and (.logs | length) == 2 and .logs[1].file == $f and .logs[0].windows == 1 and .logs[1].rmse.q.elbow > 0 and .logs[0].rmse != .rmse' --arg f "$TMP/dp2.csv" || echo " unexpected JSON;")"

# A log without velocities: no velocity RMSE (null).
cut -d, -f1,2,4 "$PL" >"$TMP/noqd.csv"
run eval "$P" "$TMP/noqd.csv" --json
check "eval log without qd" "$([ "$rc" -eq 0 ] || echo " exit $rc;")$(jqok '.rmse.qd.hinge == null and .rmse.q.hinge > 0' || echo " qd not null;")"

expect_bad "eval: no log" eval "$P"
expect_bad "eval: missing log" eval "$P" "$TMP/no_such.csv"
expect_bad "eval: bad robot" eval "$FIX/bad/negative_mass.json" "$FIX/arm2_log.csv"
expect_bad "eval: --window x" eval "$P" "$PL" --window x
expect_bad "eval: unknown option" eval "$P" "$PL" --free '*'

# ---- diff -------------------------------------------------------------------------------

run diff data/arm7/robot.json data/arm7/robot.json --tol 0
check "diff with itself" "$([ "$rc" -eq 0 ] || echo " exit $rc;")$([ "$(wc -l <"$TMP/out")" -eq 1 ] || echo " rows besides the header;")"
run diff data/arm7/robot.json data/arm7/robot.json --json
check "diff with itself --json" "$([ "$rc" -eq 0 ] || echo " exit $rc;")$(jqok '.count == 0 and .differences == [] and .tol == null' || echo " unexpected JSON;")"

"$SYSID" params data/pendulum/robot.json --set 'links.pole.mass=1' -o "$TMP/heavy.json" 2>"$TMP/err" ||
    fail "params --set mass"
run diff data/pendulum/robot.json "$TMP/heavy.json" --json
check "diff perturbed copy --json" "$([ "$rc" -eq 0 ] || echo " exit $rc;")$(jqok '.count == 1 and .differences[0].name == "links.pole.mass" and .differences[0].status == "changed" and .differences[0].old == 0.8 and .differences[0].new == 1 and (.differences[0].abs_change - 0.2 | fabs) < 1e-15 and (.differences[0].rel_change - 0.25 | fabs) < 1e-15 and .differences[0].unit == "kg"' || echo " unexpected JSON;")"
run diff data/pendulum/robot.json "$TMP/heavy.json"
check "diff perturbed copy table" "$([ "$rc" -eq 0 ] || echo " exit $rc;")$(grep -q '^links.pole.mass  *changed  *0.8  *1  *0.2  *0.25$' "$TMP/out" || echo " no aligned row 'links.pole.mass changed 0.8 1 0.2 0.25';")"
run diff data/pendulum/robot.json "$TMP/heavy.json" --tol 0.2
check "diff --tol below the change: exit 1" "$([ "$rc" -eq 1 ] || echo " exit $rc, expected 1;")$(grep -q 'links.pole.mass' "$TMP/out" || echo " no data on stdout;")$(grep -q '^sysid: error: diff: 1 parameter changed' "$TMP/err" || echo " no message;")"
run diff data/pendulum/robot.json "$TMP/heavy.json" --tol 0.3 --json
check "diff --tol above the change: exit 0" "$([ "$rc" -eq 0 ] || echo " exit $rc;")$(jqok '.tol == 0.3 and .exceeded == []' || echo " unexpected JSON;")"
run diff data/pendulum/robot.json "$TMP/heavy.json" --tol 0.2 --json
check "diff --tol --json lists the exceeded" "$([ "$rc" -eq 1 ] || echo " exit $rc;")$(jqok '.exceeded == ["links.pole.mass"]' || echo " unexpected JSON;")"

# Different structure (link renamed), a mass changed, a coulomb from 0 (absent) to 0.1.
run diff "$FIX/diff/a.json" "$FIX/diff/b.json" --json
check "diff different structure --json" "$([ "$rc" -eq 0 ] || echo " exit $rc;")$(jqok '.count == 22 and ([.differences[] | select(.status == "removed" and (.name | startswith("links.fore.")))] | length) == 10 and ([.differences[] | select(.status == "added" and (.name | startswith("links.forearm.")) and .old == null and .rel_change == null)] | length) == 10 and ([.differences[] | select(.name == "joints.elbow.friction.coulomb" and .old == 0 and .new == 0.1 and .rel_change == null and .abs_change == 0.1)] | length) == 1 and ([.differences[] | select(.name == "links.upper.mass" and (.rel_change - 0.25 | fabs) < 1e-15)] | length) == 1' || echo " unexpected JSON;")"
run diff "$FIX/diff/a.json" "$FIX/diff/b.json"
check "diff old 0: inf in the table" "$(grep -q '^joints.elbow.friction.coulomb  *changed  *0  *0.1  *0.1  *inf$' "$TMP/out" || echo " no inf row;")$(grep -q '^links.forearm.mass  *added  *-  *0.8 ' "$TMP/out" || echo " no added row;")"
run diff "$FIX/diff/a.json" "$FIX/diff/b.json" --tol 10
check "diff --tol: added/removed fail the gate" "$([ "$rc" -eq 1 ] || echo " exit $rc, expected 1;")"

expect_bad "diff: one robot" diff data/pendulum/robot.json
expect_bad "diff: three robots" diff data/pendulum/robot.json data/pendulum/robot.json data/pendulum/robot.json
expect_bad "diff: --tol abc" diff data/pendulum/robot.json "$TMP/heavy.json" --tol abc
expect_bad "diff: --tol -1" diff data/pendulum/robot.json "$TMP/heavy.json" --tol -1
expect_bad "diff: missing file" diff data/pendulum/robot.json "$TMP/no_such.json"
expect_bad "diff: bad robot" diff "$FIX/bad/cycle.json" data/pendulum/robot.json

# ---- eval --start-velocity: start velocities from positions on a real log ------------------
# The DFKI double pendulum's vel_meas is the backward difference of its encoder positions:
# windows started from it predict worse than windows started from a smoothed difference
# (0.3 s windows on the fixed grid: 0.022 against 0.018 rad, 0.029 against 0.022 rad; the
# factor of 9 the chained windows showed came from one window starting on a bad sample).
D=data/dfki_double_pendulum
cols='t=time,q.shoulder=pos_meas1,q.elbow=pos_meas2,qd.shoulder=vel_meas1,qd.elbow=vel_meas2,u.shoulder=tau_meas1,u.elbow=tau_meas2'
why=""
run eval "$D/robot.json" "$D/trajectory_02.csv" --columns "$cols" --window 0.3 --json
[ "$rc" -eq 0 ] || why+=" logged: exit $rc;"
cp "$TMP/out" "$TMP/logged.json"
run eval "$D/robot.json" "$D/trajectory_02.csv" --columns "$cols" --window 0.3 --start-velocity positions --json
[ "$rc" -eq 0 ] || why+=" positions: exit $rc;"
jqok '.rmse.q.shoulder < 0.9 * $l[0].rmse.q.shoulder and .rmse.q.elbow < 0.9 * $l[0].rmse.q.elbow' \
    --slurpfile l "$TMP/logged.json" || why+=" positions did not predict better;"
check "eval --start-velocity positions on a log with differenced velocities" "$why"
expect_bad "eval: --start-velocity bad value" eval data/pendulum/robot.json data/pendulum/log.csv --start-velocity x

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
