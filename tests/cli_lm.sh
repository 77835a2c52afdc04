#!/usr/bin/env bash
# tests/cli_lm.sh — `sysid fit --optimizer lm` and the spec's "optimizer": a fit of known truth
# on the pendulum, what the report says of it, and the inputs that are refused (exit 2).
# Run from the repository root: SYSID=/abs/path/sysid bash tests/cli_lm.sh
set -u
. tests/harness.sh   # run, check, $TMP, the counters

FIX=tests/fixtures
SPEC=$FIX/fit/pendulum.json   # mass, viscous friction, armature free
ROBOT=data/pendulum/robot.json

# rel A B TOL: |A - B| <= TOL |B|
rel() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; if (b < 0) b = -b; exit !(d <= t * b) }'; }

# ---- data with a known truth: the pendulum with a heavier pole and more friction --------------
pendulum_truth

# ---- the flag -------------------------------------------------------------------------------------
run fit --help
why=""
grep -q -- "--optimizer lbfgs|lm" "$TMP/out" || why+=" --help does not list --optimizer lbfgs|lm;"
check "help: --optimizer" "$why"

run fit "$ROBOT" "$TMP/synth.csv" -c "$SPEC" --optimizer lm -q -o "$TMP/lm.json" --report "$TMP/lm_r.json"
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
jqt "$TMP/lm_r.json" '.stop == "converged"' || why+=" stop is not converged;"
jqt "$TMP/lm_r.json" '.settings.optimizer.method == "lm"' || why+=" settings.optimizer.method is not lm;"
jqt "$TMP/lm_r.json" '.gradient == "jacobian"' || why+=" gradient is not jacobian;"
jqt "$TMP/lm_r.json" '.jacobians >= 1 and .evaluations > .jacobians' || why+=" jacobians/evaluations not counted;"
# the log is the truth's own simulation at the same step: the truth is the exact minimum, which
# LM reaches to rounding (measured ~1e-12 relative); 1e-8 leaves room
m=$(jq '.parameters[] | select(.name == "links.pole.mass") | .fitted' "$TMP/lm_r.json")
v=$(jq '.parameters[] | select(.name == "joints.hinge.friction.viscous") | .fitted' "$TMP/lm_r.json")
rel "$m" 0.9 1e-8 || why+=" mass $m, truth 0.9;"
rel "$v" 0.03 1e-8 || why+=" viscous $v, truth 0.03;"
jqt "$TMP/lm_r.json" '.spec_flags | index([["--optimizer", "lm"]]) != null' || why+=" --optimizer not in spec_flags;"
check "fit --optimizer lm: converged to the truth, report says lm" "$why"

# the default is L-BFGS, and its report reads as before: no method, an adjoint gradient
run fit "$ROBOT" "$TMP/synth.csv" -c "$SPEC" -q -o "$TMP/bf.json" --report "$TMP/bf_r.json"
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
jqt "$TMP/bf_r.json" '.settings.optimizer | has("method") | not' || why+=" settings.optimizer has a method;"
jqt "$TMP/bf_r.json" '.gradient == "adjoint" and (has("jacobians") | not)' || why+=" gradient/jacobians;"
check "default: lbfgs, report unchanged" "$why"

# ---- the spec ------------------------------------------------------------------------------------
jq '.optimizer = "lm"' "$SPEC" >"$TMP/s_lm.json"
jq '.optimizer.method = "lm" | .optimizer.max_iter = 2' "$SPEC" >"$TMP/s_obj.json"
run fit "$ROBOT" "$TMP/synth.csv" -c "$TMP/s_lm.json" -q -o "$TMP/s1.json" --report "$TMP/s1_r.json"
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
jqt "$TMP/s1_r.json" '.settings.optimizer.method == "lm"' || why+=" method not lm;"
# the spec's default max_iter of the file (200) is kept when "optimizer" is a name
jqt "$TMP/s1_r.json" '.settings.optimizer.max_iter == 1000' || why+=" max_iter not the default;"
cmp -s <(jq -S '.parameters' "$TMP/s1_r.json") <(jq -S '.parameters' "$TMP/lm_r.json") ||
    why+=" parameters differ from the --optimizer lm fit;"
check "spec: \"optimizer\": \"lm\" as the flag" "$why"
run fit "$ROBOT" "$TMP/synth.csv" -c "$TMP/s_obj.json" -q -o "$TMP/s2.json" --report "$TMP/s2_r.json"
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
jqt "$TMP/s2_r.json" '.settings.optimizer.method == "lm" and .stop == "max_iter" and .iterations == 2' ||
    why+=" not an LM fit stopped after 2 iterations;"
check "spec: \"optimizer\": { \"method\": \"lm\", \"max_iter\": 2 }" "$why"

# ---- contact: no forward mode, the Jacobian from central differences (jacobian.c) ------------
"$SYSID" params "$FIX/box.json" --set links.box.mass=1.3 -o "$TMP/box.json" 2>"$TMP/err"
for c in compliant hard; do
    run fit "$TMP/box.json" "$FIX/box_log.csv" --free links.box.mass --contact $c --optimizer lm -q \
        -o "$TMP/box_fit.json" --report "$TMP/box_r.json"
    why=""
    [ "$rc" -eq 0 ] || why+=" exit $rc;"
    jqt "$TMP/box_r.json" '.stop == "converged" and .jacobians >= 1 and .loss.after < .loss.before' ||
        why+=" not converged with a lower loss;"
    check "lm with $c contact (finite-difference Jacobian)" "$why"
done

# ---- exit 2 --------------------------------------------------------------------------------------
# bad NAME PLACE ARGS...: exit 2, "sysid: error:" naming PLACE, stdout empty, nothing written
bad() {
    local name=$1 place=$2 why=""
    shift 2
    rm -f "$TMP/x.json" "$TMP/x_r.json"
    run "$@" -o "$TMP/x.json" --report "$TMP/x_r.json"
    [ "$rc" -eq 2 ] || why+=" exit $rc, expected 2;"
    grep -qF -- "sysid: error:" "$TMP/err" || why+=" no 'sysid: error:';"
    grep -qF -- "$place" "$TMP/err" || why+=" stderr does not name '$place';"
    [ ! -s "$TMP/out" ] || why+=" stdout is not empty;"
    [ ! -e "$TMP/x.json" ] && [ ! -e "$TMP/x_r.json" ] || why+=" a file was written;"
    check "exit 2: $name" "$why"
}
jq '.optimizer = 3' "$SPEC" >"$TMP/s_3.json"
jq '.optimizer = "newton"' "$SPEC" >"$TMP/s_newton.json"
jq '.optimizer.method = "newton"' "$SPEC" >"$TMP/s_mnewton.json"
bad "--optimizer newton" "--optimizer: expected lbfgs or lm, got 'newton'" fit "$ROBOT" "$TMP/synth.csv" --optimizer newton
bad "spec optimizer 3" "$TMP/s_3.json: optimizer: expected" fit "$ROBOT" "$TMP/synth.csv" -c "$TMP/s_3.json"
bad "spec optimizer newton" "$TMP/s_newton.json: optimizer: expected" fit "$ROBOT" "$TMP/synth.csv" -c "$TMP/s_newton.json"
bad "spec optimizer.method newton" "$TMP/s_mnewton.json: optimizer.method: expected" fit "$ROBOT" "$TMP/synth.csv" \
    -c "$TMP/s_mnewton.json"
bad "lm with smoothing" "smoothing" fit "$ROBOT" "$TMP/synth.csv" -c "$SPEC" --optimizer lm --smoothing 0.05,4

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
