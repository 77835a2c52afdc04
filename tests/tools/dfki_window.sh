#!/usr/bin/env bash
# tests/tools/dfki_window.sh — the real double pendulum's shipped fit as a user types it: the DFKI
# design C.0 recordings (../shared/data/real/dfki-double-pendulum-design-C0, or $DFKI), fitted with
# data/dfki_double_pendulum/fit.json ("window": "auto", the optimizer and the step sysid's own) on
# trajectories 00-04 only, scored on 05 and 06, which the fit never saw, against the builders'
# published parameters (data/dfki_double_pendulum/robot.json). A measuring script, not a test:
# prints the command's wall time, the window chosen and the held-out position RMSE per joint over
# 0.3 s and 1 s windows and the whole runs. Run from the repository root after `make`.
set -u
SYSID=${SYSID:-./sysid}
D=data/dfki_double_pendulum
R=${DFKI:-../shared/data/real/dfki-double-pendulum-design-C0}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
[ -f "$R/trajectory_06.csv" ] || { echo "dfki_window.sh: no recordings in $R (set DFKI)" >&2; exit 2; }
fit=("$R"/trajectory_0[0-4].csv)
held=("$R/trajectory_05.csv" "$R/trajectory_06.csv")
t0=$(date +%s.%N)
"$SYSID" fit "$D/robot.json" "${fit[@]}" -c "$D/fit.json" -o "$T/fitted.json" --report "$T/report.json" 2>"$T/err"
rc=$?
t1=$(date +%s.%N)
echo "fit on ${fit[*]##*/}: exit $rc, $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s wall"
grep '^window auto: chose\|^optimizer:' "$T/err"
jq -r '"stop: \(.stop) (\(.message)), \(.iterations) iterations; window \(.settings.window) s; timing \(.timing)"' "$T/report.json"
printf '| held out (05, 06) | window | published: q RMSE shoulder, elbow [rad] | fitted | \n|---|---|---|---|\n'
for w in 0.3 1 0; do
    for r in robot fitted; do
        f=$D/robot.json
        [ "$r" = fitted ] && f=$T/fitted.json
        "$SYSID" eval "$f" "${held[@]}" -c "$D/fit.json" --window "$w" --json -q >"$T/$r.e" 2>/dev/null
    done
    printf '| 05 + 06 | %s | %s | %s |\n' "$([ "$w" = 0 ] && echo "whole runs" || echo "$w s")" \
        "$(jq -r '"\(.rmse.q.shoulder | . * 1e4 | round / 1e4), \(.rmse.q.elbow | . * 1e4 | round / 1e4)"' "$T/robot.e")" \
        "$(jq -r '"\(.rmse.q.shoulder | . * 1e4 | round / 1e4), \(.rmse.q.elbow | . * 1e4 | round / 1e4)"' "$T/fitted.e")"
done
