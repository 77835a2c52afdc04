#!/bin/sh
# Regenerate the MuJoCo twins (data/*/model.xml) and example logs (data/*/log.csv) from
# data/*/robot.json. Run from the repository root: `make logs`, or
#   cc -O2 tests/tools/mjlog.c -o build/mjlog -lmujoco -lm && MJLOG=build/mjlog sh tests/tools/mklogs.sh
# Deterministic: the same MuJoCo build gives the same bytes.
set -eu
MJLOG=${MJLOG:-build/mjlog}
PYTHON=${PYTHON:-python3}

for r in pendulum double_pendulum arm7 tree; do
    "$PYTHON" tests/tools/json2mjcf.py "data/$r/robot.json" > "data/$r/model.xml.tmp"
    mv "data/$r/model.xml.tmp" "data/$r/model.xml"
done

log() {  # log NAME ARGS...: simulate data/NAME/model.xml into data/NAME/log.csv
    name=$1; shift
    "$MJLOG" "data/$name/model.xml" "$@" > "data/$name/log.csv.tmp"
    mv "data/$name/log.csv.tmp" "data/$name/log.csv"
}

log pendulum --duration 5 --rate 1000 --seed 1 --q0 hinge=0.5 --amp hinge=0.6
log double_pendulum --duration 5 --rate 1000 --seed 2 --q0 shoulder=0.4,elbow=-0.3 \
    --amp shoulder=1.5,elbow=1
log arm7 --duration 4 --rate 1000 --seed 3 \
    --q0 j1=0.3,j2=-2.9,j3=2.3,j4=-1.6,j5=2.1,j6=2.4,j7=-0.7 \
    --amp j1=0.3,j2=0.6,j3=1,j4=0.4,j5=0.3,j6=0.2,j7=0.1
log tree --duration 4 --rate 1000 --seed 4 \
    --q0 l_yaw=-2.4,r_yaw=-0.4,l_pitch=0.3,r_pitch=-0.2,r_elbow=0.5 \
    --amp slide=10,l_yaw=0.3,l_pitch=1,r_yaw=0.1,r_pitch=0.4,r_elbow=0.6
