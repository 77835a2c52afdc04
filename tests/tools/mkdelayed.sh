#!/bin/sh
# Make data/delayed_servo/ from data/servo_arm/: the same arm on PD servos with dry friction,
# each servo seeing its command late by 2.3 to 17.6 samples of the 500 Hz logs (MuJoCo 2.2.2 has
# no actuator delay, so sysid's own simulator plays the robot). Run from the repository root
# after `make`: sh tests/tools/mkdelayed.sh. Deterministic: the same build gives the same bytes.
set -eu
SYSID=${SYSID:-./sysid}
PYTHON=${PYTHON:-python3}
out=data/delayed_servo
mkdir -p "$out"
# delays [s]: 2.3, 4.7, 6.1, 8.4, 10.9, 13.2, 17.6 samples of 2 ms
"$SYSID" import data/servo_arm/truth.xml -q |
    jq --indent 2 '.name = "delayed_servo_truth" | .joints |= [foreach .[] as $j (-1; . + 1;
        $j | .motor.delay = ([0.0046, 0.0094, 0.0122, 0.0168, 0.0218, 0.0264, 0.0352][$j.name[1:] | tonumber - 1]))]' \
    > "$out/truth.json"
"$SYSID" import data/servo_arm/nominal.xml -q |
    jq --indent 2 '.name = "delayed_servo" | .joints |= map(.motor.delay = 0)' > "$out/nominal.json"
# the servo_arm logs' references and first states, replayed on the truth
"$SYSID" simulate "$out/truth.json" data/servo_arm/log.csv -q -o "$out/log.csv"
"$SYSID" simulate "$out/truth.json" data/servo_arm/log_noisy.csv -q -o "$out/clean_noisy.tmp"
# Gaussian noise of 1e-3 rad on q and 1e-2 rad/s on qd (seed 7), as the servo_arm's noisy log
"$PYTHON" - "$out/clean_noisy.tmp" "$out/log_noisy.csv" <<'PY'
import csv, random, sys
rng = random.Random(7)
with open(sys.argv[1]) as f, open(sys.argv[2], "w", newline="") as g:
    r, w = csv.reader(f), csv.writer(g, lineterminator="\n")
    head = next(r)
    w.writerow(head)
    for row in r:
        w.writerow([repr(float(v) + rng.gauss(0, 1e-3 if h.startswith("q.") else 1e-2))
                    if h.startswith(("q.", "qd.")) else v for h, v in zip(head, row)])
PY
rm "$out/clean_noisy.tmp"
