#!/usr/bin/env bash
# tests/cli_intervals.sh — intervals that know when they are wrong (docs/intervals.md):
# a matched model on a noisy log (data/pendulum's own simulation plus white noise) says
# "verdict": "ok", shows the classic interval, exits 0; the same log fitted with the link's
# inertia pinned against its triangle inequality (iyy = ixx + izz while the truth wants more)
# says model_mismatch by name on stderr and in report.json, shows the robust interval, and,
# as most trial points are unphysical and the loss does not fall, stops with no_progress and
# exit 1 for both optimizers (outputs written).
# Run from the repository root: SYSID=/abs/path/sysid bash tests/cli_intervals.sh
set -u
. tests/harness.sh   # run, check, jqt, $TMP, the counters

# ---- a noisy log of known truth: 3 s of data/pendulum's commands, simulated, noise on q and qd ----
head -3001 data/pendulum/log.csv >"$TMP/in.csv"
run simulate data/pendulum/robot.json "$TMP/in.csv" -o "$TMP/clean.csv"
[ "$rc" -eq 0 ] || fail "simulate the truth: exit $rc"
# Box-Muller in awk: standard deviations 1e-3 rad and 1e-2 rad/s, a fixed seed
awk -F, -v OFS=, 'BEGIN { srand(7) } NR == 1 { print; next }
    function g() { return sqrt(-2 * log(1 - rand())) * cos(6.283185307179586 * rand()) }
    { $2 = sprintf("%.17g", $2 + 1e-3 * g()); $3 = sprintf("%.17g", $3 + 1e-2 * g()); print }' \
    "$TMP/clean.csv" >"$TMP/noisy.csv"

# ---- matched: viscous friction and armature fitted from moved values ----
jq '.joints[0].friction.viscous = 0.03 | .joints[0].armature = 0.003' data/pendulum/robot.json >"$TMP/moved.json"
run fit "$TMP/moved.json" "$TMP/noisy.csv" --free-only 'joints.hinge.friction.viscous' \
    --free-only 'joints.hinge.armature' -o "$TMP/fit.json" --report "$TMP/ok.json"
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
jqt "$TMP/ok.json" '.stop == "converged"' || why+=" stop $(jq -r .stop "$TMP/ok.json");"
jqt "$TMP/ok.json" '.diagnostics.verdict == "ok" and .diagnostics.residuals_white and .diagnostics.interval == "classic"' ||
    why+=" diagnostics $(jq -c '.diagnostics | {verdict, rms_over_noise, lag1_autocorrelation}' "$TMP/ok.json");"
jqt "$TMP/ok.json" '[.parameters[] | .ci95_robust | length == 2] | all' || why+=" no ci95_robust;"
grep -q "model does not fit" "$TMP/err" && why+=" a mismatch warning on a matched model;"
grep -q "^intervals: robust" "$TMP/err" && why+=" the table shows the robust interval;"
check "fit: matched model on white noise: verdict ok, classic interval, exit 0" "$why"

# ---- mismatch and no progress: iyy pinned at the triangle inequality, below the truth ----
jq '.links[1].inertia |= (.ixx = 0.0225 | .iyy = 0.024 | .ixy = 0 | .ixz = 0 | .iyz = 0)' data/pendulum/robot.json \
    >"$TMP/pinned.json"
for opt in lbfgs lm; do
    run fit "$TMP/pinned.json" "$TMP/noisy.csv" --free-only links.pole.inertia.iyy --optimizer $opt \
        -o "$TMP/pinned_fit.json" --report "$TMP/bad_$opt.json"
    why=""
    [ "$rc" -eq 1 ] || why+=" exit $rc, expected 1;"
    [ -s "$TMP/pinned_fit.json" ] || why+=" the fitted robot was not written;"
    jqt "$TMP/bad_$opt.json" '.stop == "no_progress"' || why+=" stop $(jq -r .stop "$TMP/bad_$opt.json");"
    grep -q 'sysid: error: the fit made no progress (report: "stop": "no_progress")' "$TMP/err" || why+=" no no_progress error;"
    jqt "$TMP/bad_$opt.json" '.diagnostics.verdict == "model_mismatch" and (.diagnostics.residuals_white | not)
        and .diagnostics.interval == "robust" and .diagnostics.lag1_autocorrelation["q.hinge"] > 0.3' ||
        why+=" diagnostics $(jq -c '.diagnostics | {verdict, rms_over_noise, lag1_autocorrelation}' "$TMP/bad_$opt.json");"
    grep -q "sysid: warning: residuals are correlated (lag-1 autocorrelation .* on q\?d\?\.hinge.*: the model does not fit the data; sigma^2 (J^T J)^-1 intervals are too narrow" "$TMP/err" ||
        why+=" no correlated-residuals warning;"
    grep -q "^intervals: robust" "$TMP/err" || why+=" the table does not say it shows the robust interval;"
    check "fit --optimizer $opt: pinned inertia: model_mismatch named, robust interval, no_progress exit 1" "$why"
done

echo "cli_intervals: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
