#!/usr/bin/env bash
# tests/cli_fit.sh — `sysid fit` as a user and a script see it: recovery of known parameters
# from synthetic data, the report's schema, what the data do not determine, exit codes (0, 1,
# 2, 3, 130), atomic writes, --in-place, determinism, --validate and several logs.
# Run from the repository root: SYSID=/abs/path/sysid bash tests/cli_fit.sh
set -u
. tests/harness.sh   # run, check, expect_invalid, $TMP, the counters

FIX=tests/fixtures
SPEC=$FIX/fit/pendulum.json
ROBOT=data/pendulum/robot.json

# close A B TOL: |A - B| <= TOL
close() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'; }

sha() { sha256sum "$1" | cut -d' ' -f1; }

# ---- synthetic data with a known truth ------------------------------------------------------
# The pendulum with a heavier pole and more friction; its simulated replay of the example log
# is data the nominal robot can be fitted to exactly. Halves of it are two more logs.

pendulum_truth
head -n 2501 "$TMP/synth.csv" >"$TMP/a.csv"
{ head -n 1 "$TMP/synth.csv"; tail -n +2502 "$TMP/synth.csv"; } >"$TMP/b.csv"

# ---- help ---------------------------------------------------------------------------------------

run fit --help
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
grep -q "^usage: sysid fit" "$TMP/out" || why+=" no usage line on stdout;"
grep -q "130" "$TMP/out" || why+=" exit codes not listed;"
"$SYSID" help fit >"$TMP/out2" 2>/dev/null
cmp -s "$TMP/out" "$TMP/out2" || why+=" 'sysid help fit' differs from 'sysid fit --help';"
check "help" "$why"

# ---- recovery, outputs and the report ------------------------------------------------------

run fit "$ROBOT" "$TMP/synth.csv" -c "$SPEC" -o "$TMP/fit.json" --report "$TMP/r.json"
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc, expected 0;"
[ ! -s "$TMP/out" ] || why+=" stdout is not empty without --json;"
grep -q "^iter " "$TMP/err" || why+=" no progress lines on stderr;"
grep -q "^parameter " "$TMP/err" || why+=" no summary table on stderr;"
check "fit: exit 0, stdout empty, progress and table on stderr" "$why"

why=""
m=$(jq '.links[] | select(.name == "pole") | .mass' "$TMP/fit.json" 2>/dev/null)
v=$(jq '.joints[0].friction.viscous' "$TMP/fit.json" 2>/dev/null)
a=$(jq '.joints[0].armature' "$TMP/fit.json" 2>/dev/null)
close "${m:-0}" 0.9 1e-6 || why+=" mass $m, truth 0.9;"
close "${v:-0}" 0.03 1e-6 || why+=" viscous $v, truth 0.03;"
close "${a:-0}" 0.002 1e-7 || why+=" armature $a, truth 0.002;"
check "fit: recovers the perturbed parameters" "$why"

why=""
# everything but the fitted values is as the input had it
jq -S 'del(.links[1].mass, .joints[0].friction.viscous, .joints[0].armature)' "$ROBOT" >"$TMP/in.n"
jq -S 'del(.links[1].mass, .joints[0].friction.viscous, .joints[0].armature)' "$TMP/fit.json" >"$TMP/out.n" 2>/dev/null
cmp -s "$TMP/in.n" "$TMP/out.n" || why+=" the fitted robot differs elsewhere;"
"$SYSID" params "$TMP/fit.json" >/dev/null 2>&1 || why+=" the fitted robot does not load;"
check "fit: the fitted robot is the input with fitted values" "$why"

R=$TMP/r.json
why=""
jqt "$R" '.command == "fit" and (.version | type == "string")' || why+=" command/version;"
jqt "$R" '.stop == "converged" and (.message | type == "string")' || why+=" stop;"
jqt "$R" '[.iterations, .evaluations, .rejected] | all(type == "number")' || why+=" counts;"
jqt "$R" '.iterations > 0 and .evaluations >= .iterations and .rejected >= 0' || why+=" count values;"
jqt "$R" '.loss.before > .loss.after and .loss.after >= 0' || why+=" loss before/after;"
jqt "$R" '.settings.start == "fitted" and .settings.window == 0.5 and .settings.windows == 10' || why+=" settings;"
jqt "$R" '.parameters | length == 3' || why+=" 3 parameters;"
jqt "$R" '.parameters | map(.name) == ["links.pole.mass", "joints.hinge.armature", "joints.hinge.friction.viscous"]' ||
    why+=" parameter names/order;"
jqt "$R" '.parameters | all(keys == (["at_bound", "bounds", "change", "ci95", "ci95_robust", "dof_robust", "fitted",
    "identifiable", "name", "nominal", "poorly_determined", "relative_change", "relative_stderr", "stderr", "stderr_robust", "unit"]))' ||
    why+=" parameter keys;"
jqt "$R" '.parameters | all(.identifiable == true and .stderr > 0 and .poorly_determined == false and .at_bound == null)' ||
    why+=" identifiable with a standard error;"
jqt "$R" '.parameters | all((.ci95[0] - (.fitted - 1.96 * .stderr) | fabs) < 1e-15 and (.ci95[1] - (.fitted + 1.96 * .stderr) | fabs) < 1e-15)' ||
    why+=" ci95 is not fitted +- 1.96 se;"
jqt "$R" '.parameters[0] | .nominal == 0.8 and .unit == "kg" and .bounds == [0.16000000000000003, 4] and
    ((.change - (.fitted - .nominal)) | fabs) < 1e-15 and ((.relative_change - .change / .nominal) | fabs) < 1e-12' ||
    why+=" mass nominal/unit/bounds/change;"
jqt "$R" '.prediction.fit.rmse.after.q.hinge < 1e-6 and .prediction.fit.rmse.before.q.hinge > 1e-3' || why+=" rmse q;"
jqt "$R" '.prediction.fit.rmse.after.qd.hinge < .prediction.fit.rmse.before.qd.hinge' || why+=" rmse qd;"
jqt "$R" '.prediction.fit.loss.before > .prediction.fit.loss.after' || why+=" prediction loss;"
jqt "$R" '.prediction.validation == null and .validation_logs == []' || why+=" no validation;"
jqt "$R" '.identifiability | .null_directions == [] and .unidentifiable == [] and .dof > 0' || why+=" identifiability;"
jqt "$R" '.gates == {"passed": true}' || why+=" gates;"
jqt "$R" '.timing | keys == ["covariance_seconds", "fit_seconds", "total_seconds"]' || why+=" timing;"
check "report: schema and values" "$why"

why=""
jqt "$R" ".robot.path == \"$ROBOT\" and .robot.sha256 == \"$(sha "$ROBOT")\"" || why+=" robot sha256;"
jqt "$R" ".config.path == \"$SPEC\" and .config.sha256 == \"$(sha "$SPEC")\"" || why+=" config sha256;"
jqt "$R" ".logs == [{\"path\": \"$TMP/synth.csv\", \"sha256\": \"$(sha "$TMP/synth.csv")\", \"samples\": 5001}]" ||
    why+=" log sha256;"
check "report: inputs with their SHA-256 (as sha256sum)" "$why"

# SHA-256 across the padding boundaries: fit specs of 55, 56, 63, 64, 65, 119 and 120 bytes
why=""
for n in 55 56 63 64 65 119 120; do
    body='{"free":["links.pole.mass"]}'
    printf '%s%*s' "$body" $((n - ${#body})) "" >"$TMP/spec$n.json"
    [ "$(wc -c <"$TMP/spec$n.json")" -eq "$n" ] || why+=" spec$n is not $n bytes;"
    "$SYSID" fit "$ROBOT" "$TMP/a.csv" -c "$TMP/spec$n.json" --max-iter 1 -q --json >"$TMP/s.json" 2>/dev/null
    jqt "$TMP/s.json" ".config.sha256 == \"$(sha "$TMP/spec$n.json")\"" || why+=" $n bytes;"
done
check "sha256: agrees with sha256sum at block boundaries" "$why"

why=""
if grep -qiwE 'nan|-?inf(inity)?' "$R" "$TMP/fit.json"; then why+=" NaN or Inf in an output;"; fi
check "outputs: no NaN or Inf" "$why"

# ---- the headline command: no spec, no flags ------------------------------------------------
# `sysid fit robot.json log.csv > fitted.json` frees the default set (the mass, armature, viscous
# and Coulomb friction; kt is the unit of torque) and recovers the truth; the robot goes to stdout.

"$SYSID" fit "$ROBOT" "$TMP/synth.csv" >"$TMP/headline.json" 2>"$TMP/err"
rc=$?
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
jq -e . "$TMP/headline.json" >/dev/null 2>&1 || why+=" stdout is not the fitted robot (JSON);"
grep -q "free by default" "$TMP/err" || why+=" stderr does not say what was freed by default;"
grep -q "joints.hinge.motor.kt held as the unit of torque" "$TMP/err" || why+=" the kt gauge is not named;"
grep -q "^links.pole.mass " "$TMP/err" || why+=" the summary (stderr) has no mass row;"
# every parameter within 1e-6 of the truth (relative; the Coulomb friction, 0 in the truth, within 1e-12)
"$SYSID" params "$TMP/truth.json" --json >"$TMP/t.p" 2>/dev/null
"$SYSID" params "$TMP/headline.json" --json >"$TMP/h.p" 2>/dev/null
jq -e -n --slurpfile t "$TMP/t.p" --slurpfile h "$TMP/h.p" '[range($t[0].parameters | length) as $i
    | ($h[0].parameters[$i].value - $t[0].parameters[$i].value | fabs) <= 1e-6 * ($t[0].parameters[$i].value | fabs) + 1e-12]
    | all' >/dev/null 2>&1 || why+=" the truth is not recovered: $("$SYSID" diff "$TMP/truth.json" "$TMP/headline.json" 2>&1 | head -c 300);"
grep -q "^optimizer: lm: " "$TMP/err" || why+=" stderr does not say which optimizer ran and why;"
check "fit ROBOT LOG > fitted.json: default set, robot on stdout, truth recovered" "$why"

run fit "$ROBOT" "$TMP/synth.csv" -o - -q --max-iter 3
cp "$TMP/out" "$TMP/dash.json"
run fit "$ROBOT" "$TMP/synth.csv" -o "$TMP/file.json" -q --max-iter 3
why=""
# three iterations do not converge: exit 1, the best point written all the same
[ "$rc" -eq 1 ] && [ ! -s "$TMP/out" ] || why+=" -o FILE: exit $rc (expected 1: max_iter) or stdout not empty;"
run fit "$ROBOT" "$TMP/synth.csv" -o "$TMP/file.json" --max-iter 3
grep -q 'error: the fit did not converge (report: "stop": "max_iter")' "$TMP/err" || why+=" stderr does not say why;"
cmp -s "$TMP/dash.json" "$TMP/file.json" || why+=" -o - differs from -o FILE;"
check "fit -o - is stdout, the same bytes as -o FILE; max_iter is exit 1 with the reason" "$why"

# --free adds to the spec's list; --free-only replaces it; --fix holds what a glob frees
names() { jq -r '[.parameters[].name] | join(" ")' "$1"; }
run fit "$ROBOT" "$TMP/synth.csv" -c "$SPEC" --free joints.hinge.friction.coulomb --max-iter 1 -q --report "$TMP/add.json" -o "$TMP/x.json"
run fit "$ROBOT" "$TMP/synth.csv" -c "$SPEC" --free-only joints.hinge.friction.coulomb --max-iter 1 -q --report "$TMP/only.json" -o "$TMP/x.json"
run fit "$ROBOT" "$TMP/synth.csv" --fix 'joints.*.friction.*' --max-iter 1 -q --report "$TMP/fix.json" -o "$TMP/x.json"
why=""
[ "$(names "$TMP/add.json")" = "links.pole.mass joints.hinge.armature joints.hinge.friction.viscous joints.hinge.friction.coulomb" ] ||
    why+=" --free did not add to the spec's list: $(names "$TMP/add.json");"
[ "$(names "$TMP/only.json")" = "joints.hinge.friction.coulomb" ] || why+=" --free-only did not replace it: $(names "$TMP/only.json");"
[ "$(names "$TMP/fix.json")" = "links.pole.mass joints.hinge.armature" ] || why+=" --fix: $(names "$TMP/fix.json");"
check "--free adds, --free-only replaces, --fix holds" "$why"

run fit "$ROBOT" "$TMP/synth.csv" --json -q --max-iter 1
why=""
jq -e '.parameters' "$TMP/out" >/dev/null 2>&1 || why+=" --json without -o: stdout is not the report;"
check "--json without -o: stdout has the report" "$why"
run fit "$ROBOT" "$TMP/synth.csv" --json --max-iter 1
grep -q "fitted robot was not written" "$TMP/err" && check "--json without -o says the robot was not written" "" ||
    check "--json without -o says the robot was not written" " no warning"

# ---- --json: one object on stdout, the same as --report -----------------------------------

run fit "$ROBOT" "$TMP/synth.csv" -c "$SPEC" --json -q --report "$TMP/r2.json"
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
[ "$(jq -s length "$TMP/out" 2>/dev/null)" = 1 ] || why+=" stdout is not exactly one JSON object;"
[ ! -s "$TMP/err" ] || why+=" -q: stderr is not empty;"
cmp -s "$TMP/out" "$TMP/r2.json" || why+=" stdout and --report differ;"
check "--json: one object on stdout, -q silent" "$why"

# ---- determinism --------------------------------------------------------------------------

run fit "$ROBOT" "$TMP/synth.csv" -c "$SPEC" -q -o "$TMP/fit2.json" --report "$TMP/r3.json"
why=""
cmp -s "$TMP/fit.json" "$TMP/fit2.json" || why+=" fitted robots differ;"
jq -S 'del(.timing)' "$R" >"$TMP/d1" && jq -S 'del(.timing)' "$TMP/r3.json" >"$TMP/d2"
cmp -s "$TMP/d1" "$TMP/d2" || why+=" reports differ outside timing;"
check "determinism: byte-identical fitted robot, report minus timing" "$why"

# ---- what the data do not determine ----------------------------------------------------------

run fit "$ROBOT" "$TMP/synth.csv" --free 'joints.hinge.motor.*' --free links.pole.mass --json
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
O=$TMP/out
jqt "$O" '[.parameters[] | select(.name | test("motor")) | .identifiable == false and .stderr == null and .ci95 == null] |
    length == 2 and all' || why+=" gear and kt not marked unidentifiable with null stderr;"
jqt "$O" '.parameters[] | select(.name == "links.pole.mass") | .identifiable == true and .stderr > 0' ||
    why+=" mass should stay identifiable;"
jqt "$O" '.identifiability.null_directions | length == 1 and
    (.[0].parameters | map(.name) | sort == ["joints.hinge.motor.gear", "joints.hinge.motor.kt"]) and
    (.[0].parameters | all((.coefficient | fabs) > 0.5))' || why+=" the null direction is not gear/kt;"
jqt "$O" '.identifiability.unidentifiable | sort == ["joints.hinge.motor.gear", "joints.hinge.motor.kt"]' ||
    why+=" unidentifiable list;"
grep -q "warning: joints.hinge.motor.kt is not identifiable" "$TMP/err" || why+=" no warning for kt;"
grep -q "warning: the data do not determine the combination" "$TMP/err" || why+=" no warning for the combination;"
check "identifiability: gear and kt as a product" "$why"

# less damping than the nominal robot has: the data pull Coulomb friction below its bound 0
"$SYSID" params "$ROBOT" --set joints.hinge.friction.viscous=0.01 -o "$TMP/low.json" 2>/dev/null &&
    "$SYSID" simulate "$TMP/low.json" data/pendulum/log.csv -o "$TMP/low.csv" 2>/dev/null
run fit "$ROBOT" "$TMP/low.csv" --free joints.hinge.friction.coulomb --bounds 'joints.*.friction.*=0:10' --json -q
why=""
jqt "$TMP/out" '.parameters[] | select(.name == "joints.hinge.friction.coulomb") | .at_bound == "lower" and .bounds == [0, 10]' ||
    why+=" coulomb (truth 0, bound 0) not at_bound lower;"
jqt "$TMP/out" '.identifiability.at_bound == ["joints.hinge.friction.coulomb"]' || why+=" at_bound list;"
run fit "$ROBOT" "$TMP/low.csv" --free joints.hinge.friction.coulomb --bounds 'joints.*.friction.*=0:10' --json
grep -q "warning: joints.hinge.friction.coulomb is at its lower bound" "$TMP/err" || why+=" no warning;"
check "identifiability: a parameter stuck at its bound" "$why"

# Noise of a few mrad: Coulomb friction (truth 0) comes out as noise, and must be flagged so
awk -F, 'BEGIN { srand(7); OFS = "," } NR == 1 { print; next }
         { $2 += 0.002 * (rand() - 0.5); $3 += 0.02 * (rand() - 0.5); print }' "$TMP/synth.csv" >"$TMP/noisy.csv"
run fit "$ROBOT" "$TMP/noisy.csv" --free links.pole.mass --free joints.hinge.friction.viscous --free joints.hinge.friction.coulomb \
    --bounds 'joints.hinge.friction.coulomb=-1:1' --json
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
jqt "$TMP/out" '.parameters[] | select(.name == "joints.hinge.friction.coulomb") |
    .poorly_determined == true and .relative_stderr > 0.5 and .identifiable == true' || why+=" coulomb not poorly determined;"
jqt "$TMP/out" '.parameters[] | select(.name == "links.pole.mass") | .poorly_determined == false and
    (.fitted - 0.9 | fabs) < 3 * .stderr' || why+=" mass: flagged, or truth not within 3 stderr;"
jqt "$TMP/out" '.identifiability.poorly_determined == ["joints.hinge.friction.coulomb"]' || why+=" list;"
grep -q "warning: joints.hinge.friction.coulomb is poorly determined" "$TMP/err" || why+=" no warning;"
check "identifiability: noise is flagged poorly determined" "$why"

# ---- several logs, --validate, --start logged -------------------------------------------------

run fit "$ROBOT" "$TMP/a.csv" "$TMP/b.csv" -c "$SPEC" --json -q
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
jqt "$TMP/out" '.logs | length == 2 and .[0].samples == 2500 and .[1].samples == 2501' || why+=" logs;"
jqt "$TMP/out" '.parameters[0].fitted - 0.9 | fabs < 1e-6' || why+=" mass not recovered;"
jqt "$TMP/out" '.settings.windows == 10' || why+=" windows over both logs;"
check "several logs share one parameter vector" "$why"

run fit "$ROBOT" "$TMP/a.csv" -c "$SPEC" --validate "$TMP/b.csv" --json -q
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
jqt "$TMP/out" ".validation_logs == [{\"path\": \"$TMP/b.csv\", \"sha256\": \"$(sha "$TMP/b.csv")\", \"samples\": 2501}]" ||
    why+=" validation_logs;"
jqt "$TMP/out" '.logs | length == 1' || why+=" the validation log was fitted;"
jqt "$TMP/out" '.prediction.validation.rmse.after.q.hinge < 1e-6 and .prediction.validation.rmse.before.q.hinge > 1e-3' ||
    why+=" validation rmse;"
jqt "$TMP/out" '.prediction.validation.loss.after < .prediction.validation.loss.before' || why+=" validation loss;"
check "--validate: the error on a log that was not fitted" "$why"

run fit "$ROBOT" "$TMP/synth.csv" -c "$SPEC" --start logged --json -q
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
jqt "$TMP/out" '.settings.start == "logged" and (.parameters[0].fitted - 0.9 | fabs) < 1e-6' || why+=" start/recovery;"
check "--start logged" "$why"

# ---- exit 1: quality gates ---------------------------------------------------------------------

rm -f "$TMP/g.json" "$TMP/gr.json"
# (a limit below rounding: the fit reproduces the data to 1e-16)
run fit "$ROBOT" "$TMP/a.csv" -c "$SPEC" --validate "$TMP/b.csv" --max-rmse 1e-30 -o "$TMP/g.json" --report "$TMP/gr.json"
why=""
[ "$rc" -eq 1 ] || why+=" exit $rc, expected 1;"
[ -s "$TMP/g.json" ] && [ -s "$TMP/gr.json" ] || why+=" outputs not written;"
jqt "$TMP/gr.json" '.stop == "converged" and .gates.passed == false and .gates.max_rmse.passed == false and .gates.max_rmse.limit == 1e-30 and
    .gates.max_rmse.value == ([.prediction.fit.rmse.after.q[], .prediction.validation.rmse.after.q[]] | max)' ||
    why+=" gates in the report;"
grep -q "error: --max-rmse" "$TMP/err" || why+=" no message;"
check "exit 1: --max-rmse fails, outputs written" "$why"

run fit "$ROBOT" "$TMP/a.csv" -c "$SPEC" --max-loss 1e-300 -q
[ "$rc" -eq 1 ] && why="" || why=" exit $rc, expected 1"
check "exit 1: --max-loss" "$why"

run fit "$ROBOT" "$TMP/a.csv" -c "$SPEC" --max-rmse 1e-3 --max-loss 1 --json -q
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc, expected 0;"
jqt "$TMP/out" '.gates.passed == true and .gates.max_rmse.passed == true and .gates.max_loss.passed == true' || why+=" gates;"
check "exit 0: gates that pass" "$why"

# ---- exit 2: invalid input, nothing written, an existing -o untouched -------------------------

# expect_invalid NAME PLACE ARGS...: exit 2, "sysid: error:" naming PLACE, stdout empty, the
# existing $TMP/keep.json untouched, no report, no temporary file
expect_invalid() {
    local name=$1 place=$2 why=""
    shift 2
    echo '{"keep": true}' >"$TMP/keep.json"
    rm -f "$TMP/rep.json"
    run "$@"
    [ "$rc" -eq 2 ] || why+=" exit $rc, expected 2;"
    grep -qF -- "sysid: error:" "$TMP/err" || why+=" no 'sysid: error:';"
    grep -qF -- "$place" "$TMP/err" || why+=" stderr does not name '$place';"
    [ ! -s "$TMP/out" ] || why+=" stdout is not empty;"
    [ "$(cat "$TMP/keep.json")" = '{"keep": true}' ] || why+=" -o file was changed;"
    [ ! -e "$TMP/rep.json" ] || why+=" a report was written;"
    no_temp "$TMP" || why+=" a temporary file was left;"
    check "exit 2: $name" "$why"
}
K=(-o "$TMP/keep.json" --report "$TMP/rep.json" --json)
expect_invalid "bad robot" "links[2].mass" fit "$FIX/bad/negative_mass.json" "$TMP/synth.csv" -c "$SPEC" "${K[@]}"
expect_invalid "missing log" "no_such.csv" fit "$ROBOT" "$TMP/no_such.csv" -c "$SPEC" "${K[@]}"
expect_invalid "bad log" "line" fit "$FIX/arm2.json" "$FIX/bad/nan.csv" --free 'links.*.mass' "${K[@]}"
expect_invalid "free glob matches nothing" "links.nothing.mass" fit "$ROBOT" "$TMP/synth.csv" --free links.nothing.mass "${K[@]}"
expect_invalid "no free parameters" "no free parameters" fit "$ROBOT" "$TMP/synth.csv" --fix '*' "${K[@]}"
expect_invalid "fix glob matches nothing" "links.nothing.mass" fit "$ROBOT" "$TMP/synth.csv" --fix links.nothing.mass "${K[@]}"
expect_invalid "-o - and --json both on stdout" "stdout" fit "$ROBOT" "$TMP/synth.csv" -c "$SPEC" -o - --json
expect_invalid "bad --start" "--start" fit "$ROBOT" "$TMP/synth.csv" -c "$SPEC" --start guessed "${K[@]}"
expect_invalid "bad \"start\" in a spec" "start" fit "$ROBOT" "$TMP/synth.csv" -c "$FIX/fit/bad_start.json" "${K[@]}"
expect_invalid "nominal outside bounds" "outside its bounds" fit "$ROBOT" "$TMP/synth.csv" --free links.pole.mass \
    --bounds 'links.*.mass=1:2' "${K[@]}"
expect_invalid "bad --max-rmse" "--max-rmse" fit "$ROBOT" "$TMP/synth.csv" -c "$SPEC" --max-rmse abc "${K[@]}"
expect_invalid "unknown option" "--frobnicate" fit "$ROBOT" "$TMP/synth.csv" -c "$SPEC" --frobnicate "${K[@]}"
expect_invalid "no log" "at least one log" fit "$ROBOT" -c "$SPEC" "${K[@]}"
expect_invalid "--in-place with -o" "--in-place" fit "$ROBOT" "$TMP/synth.csv" -c "$SPEC" --in-place "${K[@]}"
expect_invalid "--report over a log" "would overwrite the log" fit "$ROBOT" "$TMP/a.csv" -c "$SPEC" \
    -o "$TMP/keep.json" --report "$TMP/a.csv"
expect_invalid "-o in a missing directory (checked before fitting)" "cannot write there" \
    fit "$ROBOT" "$TMP/a.csv" -c "$SPEC" -o "$TMP/no/such/dir/fit.json"
cp "$ROBOT" "$TMP/robot.json"
cp "$TMP/robot.json" "$TMP/robot.orig"
expect_invalid "-o over the input robot" "--in-place" fit "$TMP/robot.json" "$TMP/synth.csv" -c "$SPEC" -o "$TMP/robot.json"
expect_invalid "-o over the input robot by another name" "would overwrite the input robot" \
    fit "$TMP/robot.json" "$TMP/synth.csv" -c "$SPEC" -o "$TMP/../$(basename "$TMP")/robot.json"
cmp -s "$TMP/robot.json" "$TMP/robot.orig" && why="" || why=" the input robot was changed"
check "exit 2: the input robot is untouched" "$why"

# ---- exit 3: divergence at the nominal parameters -----------------------------------------------

echo '{"keep": true}' >"$TMP/keep.json"
rm -f "$TMP/rep.json"
run fit "$FIX/arm2.json" "$FIX/arm2_diverge.csv" --free 'links.*.mass' -o "$TMP/keep.json" --report "$TMP/rep.json" --json
why=""
[ "$rc" -eq 3 ] || why+=" exit $rc, expected 3;"
grep -q "sysid: error: .*diverged" "$TMP/err" || why+=" no message about the divergence;"
[ ! -s "$TMP/out" ] || why+=" stdout is not empty;"
[ "$(cat "$TMP/keep.json")" = '{"keep": true}' ] || why+=" -o file was changed;"
[ ! -e "$TMP/rep.json" ] || why+=" a report was written;"
no_temp "$TMP" || why+=" a temporary file was left;"
check "exit 3: diverges at the nominal parameters, nothing written" "$why"

# ---- --in-place -----------------------------------------------------------------------------------

cp "$ROBOT" "$TMP/robot.json"
run fit "$TMP/robot.json" "$TMP/synth.csv" -c "$SPEC" --in-place -q --report "$TMP/ip.json"
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
cmp -s "$TMP/robot.json" "$TMP/fit.json" || why+=" the robot was not replaced by the fitted one;"
jqt "$TMP/ip.json" ".robot.sha256 == \"$(sha "$ROBOT")\"" || why+=" the report does not hash the input as it was;"
no_temp "$TMP" || why+=" a temporary file was left;"
check "--in-place writes the fitted robot over the input" "$why"

# ---- exit 130: Ctrl-C writes the best point so far --------------------------------------------------

# a fit of several seconds, so that the signal surely comes while it runs
"$SYSID" params data/double_pendulum/robot.json --set 'links.*.mass=1.3' -o "$TMP/dp.json" 2>/dev/null
"$SYSID" params data/arm7/robot.json --set 'links.*.mass=1.3' -o "$TMP/a7.json" 2>/dev/null
# SIGINT (Ctrl-C), SIGTERM (a job scheduler) and SIGHUP (a closed terminal) alike
for sig in INT:130 TERM:143 HUP:129; do
rm -f "$TMP/int.json" "$TMP/intr.json"
# signal once the fit has made progress (two progress lines on stderr, a second apart in a
# pipe), however fast the build is; the last signal's progress is cleared first, here (the
# command below clears it only after its fork, so it could be read before sysid runs)
: >"$TMP/err"
# (L-BFGS with ftol_rel 0: LM would be done before the signal came)
"$SYSID" fit "$TMP/a7.json" data/arm7/log.csv -c configs/joints.json --free 'links.*.mass' --ftol-rel 0 \
    --optimizer lbfgs --max-iter 1000000 --threads 1 -o "$TMP/int.json" --report "$TMP/intr.json" >"$TMP/out" 2>"$TMP/err" &
pid=$!
for _ in $(seq 600); do
    [ "$(grep -c "^iter " "$TMP/err" 2>/dev/null)" -ge 2 ] && break
    sleep 0.1
done
kill -"${sig%:*}" "$pid"
wait "$pid"
rc=$?
why=""
[ "$rc" -eq "${sig#*:}" ] || why+=" exit $rc, expected ${sig#*:};"
jqt "$TMP/intr.json" '.stop == "interrupted" and .iterations > 0 and .loss.after < .loss.before' ||
    why+=" report not marked interrupted with progress;"
jqt "$TMP/intr.json" '.identifiability.skipped == "interrupted"' || why+=" covariance not marked skipped;"
"$SYSID" params "$TMP/int.json" >/dev/null 2>&1 || why+=" the written robot does not load;"
jq -e --slurpfile f "$TMP/int.json" '[.parameters[] | select(.name == "links.link1.mass") | .fitted] == [$f[0].links[1].mass]' \
    "$TMP/intr.json" >/dev/null 2>&1 || why+=" report and robot disagree;"
no_temp "$TMP" || why+=" a temporary file was left;"
check "exit ${sig#*:}: SIG${sig%:*}, best point written and marked" "$why"
done

# a run killed outright (SIGKILL) leaves its temporary file; the next run writing there removes it
sleep 1000 & dead=$!; kill -KILL $dead; wait $dead 2>/dev/null
touch "$TMP/.stale.json.sysid-$dead.AbCdEf" "$TMP/.stale.json.sysid-$$.AbCdEf"
"$SYSID" params data/pendulum/robot.json --set links.pole.mass=1 -o "$TMP/stale.json" 2>/dev/null
check "a killed run's temporary file is removed by the next" "$([ ! -e "$TMP/.stale.json.sysid-$dead.AbCdEf" ] || echo " not removed;")$([ -e "$TMP/.stale.json.sysid-$$.AbCdEf" ] || echo " a live run's was removed;")"
rm -f "$TMP/.stale.json.sysid-$$.AbCdEf"

# ---- --threads: the same bits for any number of threads ---------------------------------------------

why=""
for t in 1 2 3; do
    "$SYSID" fit "$TMP/dp.json" data/double_pendulum/log.csv --free 'links.*.mass' --free 'joints.*.armature' \
        --window 0.2 --threads "$t" -o "$TMP/thr$t.json" --report "$TMP/thr$t.r.json" -q || why+=" --threads $t failed;"
    jq 'del(.timing)' "$TMP/thr$t.r.json" >"$TMP/thr$t.r" 2>/dev/null
done
cmp -s "$TMP/thr1.json" "$TMP/thr2.json" && cmp -s "$TMP/thr1.json" "$TMP/thr3.json" || why+=" fitted robots differ;"
cmp -s "$TMP/thr1.r" "$TMP/thr2.r" && cmp -s "$TMP/thr1.r" "$TMP/thr3.r" || why+=" reports differ;"
"$SYSID" fit "$TMP/dp.json" data/double_pendulum/log.csv --threads x -o "$TMP/thrx.json" 2>/dev/null
[ $? -eq 2 ] && [ ! -e "$TMP/thrx.json" ] || why+=" --threads x not a usage error;"
check "--threads 1, 2, 3: byte-identical fitted robot and report" "$why"

# ---- no poison: unphysical trial points are rejected and the fit goes on ------------------------------

why=""
"$SYSID" params data/double_pendulum/robot.json --set links.fore.inertia.ixx=0.014 --set links.fore.inertia.iyy=0.013 \
    --set links.fore.mass=1.4 -o "$TMP/pz.json" 2>/dev/null
# the data and the fit on the same given step (a chosen one depends on the parameters)
"$SYSID" simulate "$TMP/pz.json" data/double_pendulum/log.csv --substeps 1 -o "$TMP/pz.csv" 2>/dev/null
# unbounded principal moments: L-BFGS's first steps leave the physical set (a tensor that is
# not positive definite), which must be rejected, not simulated or written. Only the three
# moments, so that they move elementwise: the whole tensor free moves through the log-Cholesky
# map, where no trial point is unphysical (tests/cli_inertia.sh)
"$SYSID" fit data/double_pendulum/robot.json "$TMP/pz.csv" --substeps 1 --free 'links.*.inertia.ixx' \
    --free 'links.*.inertia.iyy' --free 'links.*.inertia.izz' --free 'links.*.mass' \
    --free 'links.*.com*' --optimizer lbfgs -o "$TMP/pzf.json" --report "$TMP/pzr.json" -q || why+=" exit $?;"
jqt "$TMP/pzr.json" '.rejected >= 1 and .stop == "converged" and .loss.after < 1e-10' || why+=" no rejection or no convergence;"
grep -qwiE 'nan|inf|infinity' "$TMP/pzf.json" "$TMP/pzr.json" && why+=" non-finite output;"
"$SYSID" validate "$TMP/pzf.json" >/dev/null 2>&1 || why+=" the fitted robot is not physical;"
check "no poison: unphysical trial points rejected, fit converges, outputs physical and finite" "$why"

# ---- randomized smoothing and the contact model ------------------------------------------------

# by default the optimizer chooses itself: LM on the pendulum's 3 parameters, its Jacobian the gradient
jqt "$R" '.gradient == "jacobian" and .settings.optimizer.method == "auto" and .optimizer.ran == ["lm"] and
    (.optimizer.why | startswith("lm: ")) and (has("contact_model") | not) and (.loss | has("smoothed") | not)' &&
    why="" || why=" default report: gradient/optimizer/contact_model/loss.smoothed;"
run fit "$ROBOT" "$TMP/synth.csv" -c "$SPEC" --optimizer lbfgs --json -q
jqt "$TMP/out" '.gradient == "adjoint" and .optimizer.ran == ["lbfgs"] and .optimizer.why == "lbfgs, as asked"' ||
    why+=" --optimizer lbfgs: gradient/optimizer;"
check "report: the optimizer that ran and why, its gradient; no contact_model without contact" "$why"

SM=(fit "$TMP/dp.json" data/double_pendulum/log.csv --free 'links.*.mass' --free 'joints.*.armature' --window 0.2 --max-iter 3)
why=""
for t in 1 2; do   # three iterations: exit 1 (max_iter), the best point written
    "$SYSID" "${SM[@]}" --smoothing 0.05,4 --threads "$t" -o "$TMP/sm$t.json" --report "$TMP/sm$t.r.json" 2>"$TMP/err"
    [ $? -eq 1 ] || why+=" --threads $t: exit $?, expected 1;"
    jq 'del(.timing)' "$TMP/sm$t.r.json" >"$TMP/sm$t.r" 2>/dev/null
done
S=$TMP/sm1.r.json
jqt "$S" '.gradient == {"method": "smoothed", "sigma": 0.05, "pairs": 4, "seed": 1}' || why+=" gradient object;"
jqt "$S" '.iterations >= 1 and .iterations <= 3 and .stop == "max_iter"' || why+=" max_iter 3 not honoured;"
jqt "$S" '.loss.smoothed.before > .loss.smoothed.after and (.loss.after | type == "number")' || why+=" loss.smoothed;"
grep -q '"method": "smoothed"' "$S" || why+=" no \"method\": \"smoothed\" in the file;"
grep -q "^smoothed loss: .* (sigma 0.05, 4 pairs, seed 1)" "$TMP/err" || why+=" no smoothed loss in the table;"
grep -q "start states held" "$TMP/err" || why+=" the table does not say the start states were held;"
cmp -s "$TMP/sm1.json" "$TMP/sm2.json" && cmp -s "$TMP/sm1.r" "$TMP/sm2.r" || why+=" 1 and 2 threads differ;"
"$SYSID" "${SM[@]}" --smoothing 0.05,4,2 -q -o "$TMP/sm3.json"
[ $? -eq 1 ] || why+=" seed 2: exit $?, expected 1;"
cmp -s "$TMP/sm1.json" "$TMP/sm3.json" && why+=" seeds 1 and 2 give the same fit;"
check "--smoothing 0.05,4: a short smoothed fit, reported, the same bits for any --threads" "$why"

echo '{"smoothing": {"sigma": 0.02, "pairs": 6, "seed": 9}, "contact_model": "hard"}' >"$TMP/sm_spec.json"
why=""
run "${SM[@]}" -c "$TMP/sm_spec.json" --smoothing 0.05,4 --json
jqt "$TMP/out" '.gradient == {"method": "smoothed", "sigma": 0.05, "pairs": 4, "seed": 9}' ||
    why+=" --smoothing SIGMA,N should keep the spec's seed;"
grep -q "warning: $TMP/sm_spec.json: contact_model: .* has no contact" "$TMP/err" ||
    why+=" no warning that contact_model has no effect;"
jqt "$TMP/out" 'has("contact_model") | not' || why+=" contact_model reported for a robot without contact;"
run "${SM[@]}" -c "$TMP/sm_spec.json" --smoothing off --optimizer lbfgs --json -q
jqt "$TMP/out" '.gradient == "adjoint"' || why+=" --smoothing off;"
check "smoothing from the spec, flags over it; contact_model without contact warns" "$why"

why=""
run fit "$FIX/box.json" "$FIX/box_log.csv" --free links.box.mass --max-iter 1 --json -q
jqt "$TMP/out" '.contact_model == "compliant"' || why+=" robot's model not reported;"
run fit "$FIX/box.json" "$FIX/box_log.csv" --free links.box.mass --max-iter 1 --contact hard --json -q
jqt "$TMP/out" '.contact_model == "hard"' || why+=" --contact hard not applied;"
check "contact_model: the robot's, or --contact's" "$why"

# the fitted robot names the contact model its parameters were fitted with (it was "compliant"
# after a --contact hard fit); the robot's own model leaves the key as the file has it
why=""
# (one iteration: exit 1, max_iter, the best point written)
"$SYSID" fit "$FIX/box.json" "$FIX/box_log.csv" --free links.box.mass --max-iter 1 --contact hard -q -o "$TMP/hard.json"
[ $? -le 1 ] || why+=" --contact hard: exit $?;"
jqt "$TMP/hard.json" '.contact.model == "hard"' || why+=" --contact hard wrote $(jq -c .contact.model "$TMP/hard.json");"
"$SYSID" fit "$TMP/hard.json" "$FIX/box_log.csv" --free links.box.mass --max-iter 1 --contact compliant -q -o "$TMP/back.json"
[ $? -le 1 ] || why+=" --contact compliant: exit $?;"
jqt "$TMP/back.json" '.contact.model == "compliant"' || why+=" back to compliant wrote $(jq -c .contact.model "$TMP/back.json");"
"$SYSID" fit "$FIX/box.json" "$FIX/box_log.csv" --free links.box.mass --max-iter 1 -q -o "$TMP/same.json"
[ $? -le 1 ] || why+=" exit $?;"
[ "$(jq -c '.contact | has("model")' "$FIX/box.json")" = "$(jq -c '.contact | has("model")' "$TMP/same.json")" ] ||
    why+=" the robot's own model changed the key;"
check "fitted robot: contact.model is the model the fit used" "$why"

printf '{"free": ["links.pole.mass"], "smoothing": {"sigma": -1, "pairs": 4}}' >"$TMP/bad_sigma.json"
printf '{"free": ["links.pole.mass"], "smoothing": {"sigma": 0.1}}' >"$TMP/bad_pairs.json"
printf '{"free": ["links.pole.mass"], "smoothing": {"sigma": 0.1, "pairs": 4, "seed": 1.5}}' >"$TMP/bad_seed.json"
printf '{"free": ["links.pole.mass"], "smoothing": [0.1, 4]}' >"$TMP/bad_smoothing.json"
printf '{"free": ["links.pole.mass"], "contact_model": "soft"}' >"$TMP/bad_contact.json"
expect_invalid "bad smoothing.sigma" "bad_sigma.json: smoothing.sigma" fit "$ROBOT" "$TMP/synth.csv" -c "$TMP/bad_sigma.json" "${K[@]}"
expect_invalid "missing smoothing.pairs" "bad_pairs.json: smoothing.pairs" fit "$ROBOT" "$TMP/synth.csv" -c "$TMP/bad_pairs.json" "${K[@]}"
expect_invalid "bad smoothing.seed" "bad_seed.json: smoothing.seed" fit "$ROBOT" "$TMP/synth.csv" -c "$TMP/bad_seed.json" "${K[@]}"
expect_invalid "smoothing not an object" "bad_smoothing.json: smoothing" fit "$ROBOT" "$TMP/synth.csv" -c "$TMP/bad_smoothing.json" "${K[@]}"
expect_invalid "bad contact_model" "bad_contact.json: contact_model" fit "$ROBOT" "$TMP/synth.csv" -c "$TMP/bad_contact.json" "${K[@]}"
for v in abc 0.05 0,4 -0.1,4 0.05,0 0.05,2.5 0.05,4,-1 0.05,4,1,2 0.05,,4 ""; do
    expect_invalid "--smoothing '$v'" "--smoothing" fit "$ROBOT" "$TMP/synth.csv" -c "$SPEC" --smoothing "$v" "${K[@]}"
done
expect_invalid "bad --contact" "--contact" fit "$ROBOT" "$TMP/synth.csv" -c "$SPEC" --contact soft "${K[@]}"

# every output or none: a report that cannot be written (a full device), or --json into a full
# stdout, leaves the old fitted robot as it was
echo '{"old": true}' >"$TMP/keep.json"
run fit data/double_pendulum/robot.json data/double_pendulum/log.csv --free 'joints.*.friction.viscous' \
    --start logged -o "$TMP/keep.json" --report /dev/full -q
# (a device must be written as it is, never replaced: if it was, put /dev/full back and say so)
if [ ! -c /dev/full ]; then rm -f /dev/full; mknod -m 666 /dev/full c 1 7; rc="$rc, /dev/full was replaced by a file"; fi
check "a report that fails keeps the old robot" "$([ "$rc" = 2 ] || echo " exit $rc;")$(grep -q '"old": true' "$TMP/keep.json" || echo " the robot was overwritten;")$(no_temp "$TMP" || echo " a temporary file was left;")"
"$SYSID" fit data/double_pendulum/robot.json data/double_pendulum/log.csv --free 'joints.*.friction.viscous' \
    --start logged -o "$TMP/keep.json" --report "$TMP/keep_report.json" --json -q >/dev/full 2>"$TMP/err"
rc=$?
check "--json into a full stdout writes nothing" "$([ "$rc" -eq 2 ] || echo " exit $rc;")$(grep -q '"old": true' "$TMP/keep.json" || echo " the robot was overwritten;")$([ ! -e "$TMP/keep_report.json" ] || echo " the report was written;")$(no_temp "$TMP" || echo " a temporary file was left;")"

# a log read from a pipe is named in the report by the digest of what was read (re-reading
# the pipe would give the digest of nothing)
run fit data/double_pendulum/robot.json <(cat data/double_pendulum/log.csv) --free 'joints.*.friction.viscous' \
    --start logged --report "$TMP/pipe_report.json" -o "$TMP/pipe_fitted.json" -q
want=$(sha256sum data/double_pendulum/log.csv | cut -c1-64)
check "a piped log's digest" "$([ "$rc" -eq 0 ] || echo " exit $rc;")$([ "$(jq -r '.logs[0].sha256' "$TMP/pipe_report.json")" = "$want" ] || echo " digest is not the log's;")"

# ---- on a terminal: one line redrawn in place (script(1) gives the fit a pty) ----------------
if command -v script >/dev/null 2>&1 && script -qec true /dev/null >/dev/null 2>&1; then
    script -qec "'$SYSID' fit '$ROBOT' '$TMP/synth.csv' -c '$SPEC' --ftol-rel 0 --max-iter 40 -o '$TMP/pty.json'" /dev/null \
        >"$TMP/pty.out" 2>&1
    why=""
    grep -q $'\riter ' "$TMP/pty.out" || why+=" no iteration line redrawn with a carriage return;"
    grep -q $'\033\\[K' "$TMP/pty.out" || why+=" no erase-to-end-of-line;"
    [ "$(tr '\r' '\n' <"$TMP/pty.out" | grep -c '^iter ')" -ge 2 ] || why+=" fewer than two redraws;"
    # in place: no iteration line of its own ends with a newline before the next one
    [ "$(grep -c $'^iter .*\033\\[K\r\?$' "$TMP/pty.out")" -le 1 ] || why+=" iteration lines scroll;"
    check "progress on a terminal: one line redrawn in place" "$why"
fi

# ---- derived quantities and the start-velocity choice on real data ----------------------------
# The DFKI pendulum: mass and COM free, so the report shows m*c and J about the hinge; its PD
# run's velocity column is noise, so start velocities come from positions (said on stderr).
D=data/dfki_pendulum
run fit $D/robot.json $D/sysid_pd_data_measured.csv -c $D/fit.json --max-iter 30 -o "$TMP/dk.json" --report "$TMP/dkr.json"
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
grep -q "start velocities from positions" "$TMP/err" || why+=" no word on the start velocities;"
jqt "$TMP/dkr.json" '.settings.start_velocity == "positions"' || why+=" report: start_velocity not positions;"
# m*c = mass * com[2]; J = iyy + m c^2 + armature (axis y, COM on z), at the fitted values
jqt "$TMP/dkr.json" '
  (.parameters | map({(.name): .fitted}) | add) as $p |
  (.derived | map({(.name): .fitted}) | add) as $d |
  ($d["links.pole.mass*com[2]"] - $p["links.pole.mass"] * $p["links.pole.com[2]"] | fabs) < 1e-12 and
  ($d["joints.hinge.inertia_about_axis"] - (0.0033459 + $p["links.pole.mass"] * $p["links.pole.com[2]"] * $p["links.pole.com[2]"] + 0.002185884) | fabs) < 1e-12 and
  (.derived | all(.stderr > 0))' || why+=" derived m*c or J wrong: $(jq -c .derived "$TMP/dkr.json" | head -c 300);"
grep -q "^joints.hinge.inertia_about_axis" "$TMP/err" || why+=" the summary does not show J;"
run eval "$ROBOT" "$TMP/synth.csv" -c "$SPEC"
grep -q "start velocities from positions" "$TMP/err" && why+=" exact velocities were replaced;"
check "derived m*c and J; start velocities from positions only for noisy velocity columns" "$why"

run simulate "$ROBOT" data/pendulum/log.csv
cp "$TMP/out" "$TMP/sim_default.csv"
run simulate "$ROBOT" data/pendulum/log.csv -o -
why=""
cmp -s "$TMP/out" "$TMP/sim_default.csv" || why+=" simulate -o - differs from stdout;"
run params "$ROBOT" --set links.pole.mass=0.9 -o -
jq -e '.links[1].mass == 0.9' "$TMP/out" >/dev/null 2>&1 || why+=" params -o - did not print the robot;"
check "-o - is stdout for simulate and params" "$why"

# ---- progress: a line a second in a pipe, every iteration with -v, nothing with -q -------------

"$SYSID" fit "$ROBOT" "$TMP/synth.csv" -c "$SPEC" --ftol-rel 0 --max-iter 60 -o "$TMP/p.json" -v 2>"$TMP/pv" >/dev/null
"$SYSID" fit "$ROBOT" "$TMP/synth.csv" -c "$SPEC" --ftol-rel 0 --max-iter 60 -o "$TMP/p.json" --report "$TMP/pr.json" 2>"$TMP/pp" >/dev/null
"$SYSID" fit "$ROBOT" "$TMP/synth.csv" -c "$SPEC" --ftol-rel 0 --max-iter 60 -o "$TMP/p.json" -q 2>"$TMP/pq" >/dev/null
iters=$(jq .iterations "$TMP/pr.json")
secs=$(jq ".timing.fit_seconds" "$TMP/pr.json")
why=""
[ "$(grep -c '^iter ' "$TMP/pv")" -eq "$iters" ] || why+=" -v: $(grep -c '^iter ' "$TMP/pv") iteration lines for $iters iterations;"
lines=$(grep -c '^iter ' "$TMP/pp")
# at most one a second, plus the first and the last
awk -v n="$lines" -v s="$secs" 'BEGIN { exit !(n >= 1 && n <= s + 3) }' || why+=" pipe: $lines lines in $secs s;"
tail -n +1 "$TMP/pp" | grep '^iter ' | tail -1 | grep -q "^iter  *$iters " || why+=" pipe: the last iteration ($iters) is not shown;"
[ ! -s "$TMP/pq" ] || why+=" -q: stderr not empty;"
grep -q $'\r' "$TMP/pp" && why+=" pipe: carriage returns in a log;"
grep -q "^covariance  window [0-9]* of [0-9]*" "$TMP/pp" || why+=" no covariance progress line;"
check "progress: -v every iteration, a pipe at most a line a second and the last, -q silent" "$why"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
