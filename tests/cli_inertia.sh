#!/usr/bin/env bash
# tests/cli_inertia.sh — `sysid fit --free-only 'links.*.inertia.*'`: a link's whole inertia
# tensor fitted through the log-Cholesky map (core/model/inertia_param.h) on the bundled pendulum,
# with known truth: it runs, meets no unphysical trial point, recovers the one moment the
# hinge sees and reports an interval for it, in ordinary units.
# Run from the repository root: SYSID=/abs/path/sysid bash tests/cli_inertia.sh
set -u
. tests/harness.sh   # run, check, $TMP, the counters

ROBOT=data/pendulum/robot.json

# ---- data with a known truth: the pendulum's ixx and iyy 12 % up (a thin rod: still a + b > c), 1 s --
head -n 1002 data/pendulum/log.csv >"$TMP/log.csv"
"$SYSID" params "$ROBOT" --set links.pole.inertia.iyy=0.028 --set links.pole.inertia.ixx=0.0275 -o "$TMP/truth.json" 2>"$TMP/err" &&
    "$SYSID" simulate "$TMP/truth.json" "$TMP/log.csv" -o "$TMP/synth.csv" 2>"$TMP/err"
if [ $? -ne 0 ] || [ ! -s "$TMP/synth.csv" ]; then
    fail "setup: cannot make synthetic data with params --set and simulate"
    echo "$passed passed, $failed failed"
    exit 1
fi

for opt in lbfgs lm; do
    run fit "$ROBOT" "$TMP/synth.csv" --free-only 'links.*.inertia.*' --optimizer $opt -q \
        -o "$TMP/fit_$opt.json" --report "$TMP/r_$opt.json"
    why=""
    [ "$rc" -eq 0 ] || why+=" exit $rc;"
    jqt "$TMP/r_$opt.json" '.rejected == 0' || why+=" rejected trial points: $(jq .rejected "$TMP/r_$opt.json");"
    jqt "$TMP/r_$opt.json" '[.parameters[] | select(.name | startswith("links.pole.inertia."))] | length == 6' ||
        why+=" the report does not list the six inertia entries;"
    # the log is the truth's own simulation: iyy (the hinge's axis) is the exact minimum, reached
    # to ~1e-9 relative; 1e-6 leaves room. Its interval is in kg*m^2 and holds the truth.
    jqt "$TMP/r_$opt.json" '.parameters[] | select(.name == "links.pole.inertia.iyy") |
        (.fitted - 0.028 | fabs) <= 1e-6 * 0.028 and .unit == "kg*m^2" and
        .ci95 != null and .ci95[0] <= .fitted and .fitted <= .ci95[1] and .stderr > 0' ||
        why+=" iyy not recovered or without an interval: $(jq -c '.parameters[] | select(.name == "links.pole.inertia.iyy")' "$TMP/r_$opt.json");"
    # the fitted robot loads (sysid params checks the inertia is a rigid body's)
    "$SYSID" params "$TMP/fit_$opt.json" >/dev/null 2>"$TMP/err" || why+=" the fitted robot does not load: $(head -c 200 "$TMP/err");"
    check "fit --free-only links.*.inertia.* --optimizer $opt" "$why"
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
