#!/usr/bin/env bash
# tests/tools/urdf_typed.sh — a 6-joint arm from a public URDF as a new user brings it:
# data/robots/urdf/ur5/ur5_robot.urdf imported as it is (no friction, no armature, torque motors),
# a "true" UR5 whose link masses are 10-20 % off, with armature, viscous and Coulomb friction on
# every joint; 10 s at 500 Hz of it following a smooth excitation from a bent pose
# (tests/tools/feedforward.c's computed torques of the truth, replayed on the truth by RK4 at
# 0.1 ms, so the log is the motion itself); then `sysid fit ur5_robot.urdf log.csv` as typed
# (the default free set: six masses, armature, viscous and Coulomb friction of every joint and
# five kt, 29 parameters), and the same with --max-iter 5. A measuring script, not a test:
# prints exit codes, the optimizer, iterations, wall time and every mass against the truth.
# Run from the repository root after `make sysid build/feedforward`.
set -u
SYSID=${SYSID:-./sysid}
FF=${FF:-build/feedforward}
URDF=data/robots/urdf/ur5/ur5_robot.urdf
T=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
[ -x "$FF" ] || { echo "urdf_typed.sh: $FF is missing (make build/feedforward)" >&2; exit 2; }
"$SYSID" import "$URDF" -o "$T/nominal.json" -q || exit 1
J=(shoulder_pan_joint shoulder_lift_joint elbow_joint wrist_1_joint wrist_2_joint wrist_3_joint)
mass=(shoulder_link:1.1 upper_arm_link:0.9 forearm_link:1.2 wrist_1_link:0.85 wrist_2_link:1.15 wrist_3_link:1.1)
arm=(0.12 0.1 0.05 0.012 0.01 0.008) visc=(2 2 1 0.5 0.5 0.3) coul=(1.5 1.5 1 0.3 0.3 0.2)
sets=()
for lm in "${mass[@]}"; do
    l=${lm%%:*} f=${lm#*:}
    m=$(jq --arg l "$l" '.links[] | select(.name == $l) | .mass' "$T/nominal.json")
    sets+=(--set "links.$l.mass=$(awk -v m="$m" -v f="$f" 'BEGIN { printf "%.17g", m * f }')")
done
for k in 0 1 2 3 4 5; do
    sets+=(--set "joints.${J[k]}.armature=${arm[k]}" --set "joints.${J[k]}.friction.viscous=${visc[k]}"
        --set "joints.${J[k]}.friction.coulomb=${coul[k]}")
done
"$SYSID" params "$T/nominal.json" "${sets[@]}" -o "$T/truth.json" -q || exit 1
# the excitation: from a bent pose (elbow 1.5 rad, the wrist 0.5), each joint 0.8 rad about it,
# 20 s (a smaller, shorter one leaves the wrists' masses undetermined to a few per cent)
FF_AMP=${FF_AMP:-0.8} "$FF" "$T/truth.json" ${DURATION:-20} 500 0 -1.2 1.5 -0.8 0.5 0 >"$T/cmd.csv" &&
    "$SYSID" simulate "$T/truth.json" "$T/cmd.csv" --integrator rk4 --max-dt 1e-4 -o "$T/log.csv" -q || exit 1

masses() {
    jq -r --slurpfile t "$T/truth.json" '.links[] | select(.mass) as $l | ($t[0].links[] | select(.name == $l.name) |
        .mass) as $m | select($m != null) | "\($l.name) \($l.mass) \($m)"' "$1" |
        awk '{ printf "  %-16s fitted %-10.6g truth %-10.6g %+.3f %%\n", $1, $2, $3, 100 * ($2 - $3) / $3 }'
}
for extra in "" "--max-iter 5"; do
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086
    "$SYSID" fit "$URDF" "$T/log.csv" $extra -o "$T/fitted.json" --report "$T/report.json" 2>"$T/err"
    rc=$?
    t1=$(date +%s.%N)
    echo "== sysid fit ur5_robot.urdf log.csv $extra: exit $rc, $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s"
    grep '^optimizer:\|^step:\|error:' "$T/err" | cut -c1-220
    jq -r '"  stop: \(.stop) (\(.message)), \(.iterations) iterations, \(.parameters | length) free, loss \(.loss.before) -> \(.loss.after)"' "$T/report.json"
    "$SYSID" params "$T/fitted.json" --json -q | jq '{links: [.parameters[] | select(.name | test("^links\\..*\\.mass$"))
        | {name: (.name | sub("^links\\."; "") | sub("\\.mass$"; "")), mass: .value}]}' >"$T/fm.json"
    masses "$T/fm.json"
done
