#!/bin/sh
# Identification with contact on the MuJoCo-made logs of data/box and data/ball, per gradient
# mode: compliant contact with the exact adjoint, compliant with randomized smoothing, hard
# contact with the implicit gradient. Prints a Markdown table (docs/contact.md).
# Run from the repository root after `make`: sh tests/tools/contact_table.sh
# MuJoCo's truth: box friction 0.8, mass 1.0 kg; ball friction 0.6, mass 0.2 kg (their READMEs).
set -eu
SYSID=${SYSID:-./sysid}
OUT=${TMPDIR:-/tmp}/sysid-contact-table
mkdir -p "$OUT"

fit() {  # fit NAME MODE ROBOT "LOGS" FREE-GLOBS...: one row
    name=$1 mode=$2 robot=$3 logs=$4
    shift 4
    free=""
    for g in "$@"; do free="$free --free $g"; done
    case $mode in
    adjoint) extra="" ;;
    smoothed) extra="--smoothing 0.05,${PAIRS:-8}" ;;
    hard) extra="--contact hard" ;;
    hard-smoothed) extra="--contact hard --smoothing 0.05,${PAIRS:-8}" ;;
    esac
    # shellcheck disable=SC2086
    "$SYSID" fit "$robot" $logs --start logged ${WINDOW:---window 0.2} $free $extra -q \
        -o "$OUT/$name-$mode.json" --report "$OUT/$name-$mode.report.json" || true
    label=$mode
    case $mode in *smoothed) label="$mode (${PAIRS:-8} pairs)" ;; esac
    jq -r --arg name "$name" --arg mode "$label" '
        [ $name, $mode,
          (.parameters | map("\(.name | sub("contact.ground."; "") | sub("links."; "")) \(.fitted | tostring | .[0:6])") | join(", ")),
          "\(.loss.before | tostring | .[0:7]) → \(.loss.after | tostring | .[0:7])",
          "\(.iterations)", "\(.timing.fit_seconds | tostring | .[0:5])", .stop ]
        | "| " + join(" | ") + " |"' "$OUT/$name-$mode.report.json"
}

BOX="data/box/slide.csv data/box/slide_noisy.csv data/box/tumble.csv data/box/toss.csv"
BALL="data/ball/drop.csv data/ball/bounce.csv"
echo "| robot | mode | fitted | loss | iterations | seconds | stop |"
echo "|---|---|---|---|---:|---:|---|"
for mode in adjoint smoothed; do
    fit box $mode data/box/robot.json "$BOX" contact.ground.friction contact.ground.stiffness contact.ground.damping
done
fit box hard data/box/robot.json "$BOX" contact.ground.friction
for mode in adjoint smoothed hard hard-smoothed; do
    PAIRS=4 WINDOW=" " fit slide $mode data/box/robot.json data/box/slide.csv contact.ground.friction
done
for mode in adjoint smoothed; do
    fit ball $mode data/ball/robot.json "$BALL" contact.ground.friction contact.ground.stiffness contact.ground.damping
done
fit ball hard data/ball/robot.json "$BALL" contact.ground.friction
