#!/bin/sh
# Regenerate the MuJoCo models (data/*/model.xml) and example logs (data/*/*.csv) from
# data/*/robot.json. pendulum, double_pendulum, arm7, tree: exact twins and log.csv. box and
# ball: floating bodies on the ground, where MuJoCo plays the real robot (its contact model
# and the "_mujoco" truth in robot.json differ from sysid's nominal model on purpose).
# Run from the repository root: `make logs`, or
#   cc -O2 tests/tools/mjlog.c -o build/mjlog -lmujoco -lm && MJLOG=build/mjlog sh tests/tools/mklogs.sh
# Deterministic: the same MuJoCo build gives the same bytes.
set -eu
MJLOG=${MJLOG:-build/mjlog}
PYTHON=${PYTHON:-python3}

for r in pendulum double_pendulum arm7 tree box ball; do
    "$PYTHON" tests/tools/json2mjcf.py "data/$r/robot.json" > "data/$r/model.xml.tmp"
    mv "data/$r/model.xml.tmp" "data/$r/model.xml"
done

log() {  # log NAME ARGS...: simulate data/NAME/model.xml into data/NAME/log.csv
    name=$1; shift
    "$MJLOG" "data/$name/model.xml" "$@" > "data/$name/log.csv.tmp"
    mv "data/$name/log.csv.tmp" "data/$name/log.csv"
}

logto() {  # logto NAME FILE ARGS...: simulate data/NAME/model.xml into data/NAME/FILE
    name=$1; file=$2; shift 2
    "$MJLOG" "data/$name/model.xml" "$@" > "data/$name/$file.tmp"
    mv "data/$name/$file.tmp" "data/$name/$file"
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

# box: 0.2 x 0.15 x 0.1 m, free joint "base", 8 corner spheres (data/box/README.md).
# slide: at rest flat on the ground (0.5 s of settling), then launched along x at 2 m/s.
logto box slide.csv --duration 1.5 --q0 base.z=0.05 --settle 0.5 --v0 base.vx=2
logto box slide_noisy.csv --duration 1.5 --seed 12 --q0 base.z=0.05 --settle 0.5 \
    --v0 base.vx=1.5,base.vy=0.5,base.wz=3 --noise-q 1e-3 --noise-qd 1e-2
logto box tumble.csv --duration 1.5 --seed 13 \
    --q0 base.z=0.3,base.qw=0.95,base.qx=0.25,base.qy=0.15,base.qz=0.1 \
    --v0 base.vx=0.5,base.wx=6,base.wy=-4,base.wz=2 --noise-q 1e-3 --noise-qd 1e-2
logto box toss.csv --duration 2 --seed 14 --q0 base.z=0.2 \
    --v0 base.vx=1.5,base.vz=2,base.wy=6,base.wz=2 --noise-q 1e-3 --noise-qd 1e-2

# ball: radius 0.05 m, free joint "base", one contact sphere at the centre (data/ball/README.md).
logto ball drop.csv --duration 2.5 --q0 base.z=0.5
logto ball bounce.csv --duration 2.5 --seed 21 --q0 base.z=0.4 \
    --v0 base.vx=1,base.wx=5,base.wy=-15,base.wz=5 --noise-q 1e-3 --noise-qd 1e-2

# servo_arm: arm7 on PD servos with dry friction and a limit on j4 (data/servo_arm/README.md);
# truth.xml plays the robot, nominal.xml is where a fit starts. The servos' references (u.*,
# rad) swing about the hanging pose; j4's pushes it about 25 mrad into its upper bound.
"$PYTHON" tests/tools/mkservoarm.py data/arm7/model.xml data/servo_arm
pose=j1=0.3,j2=-2.9,j3=2.3,j4=-1.6,j5=2.1,j6=2.4,j7=-0.7
swing=j1=0.3,j2=0.2,j3=0.4,j4=0.25,j5=0.4,j6=0.4,j7=0.5
"$MJLOG" data/servo_arm/truth.xml --duration 8 --rate 500 --seed 5 --q0 $pose --bias $pose --amp $swing \
    > data/servo_arm/log.csv.tmp && mv data/servo_arm/log.csv.tmp data/servo_arm/log.csv
"$MJLOG" data/servo_arm/truth.xml --duration 8 --rate 500 --seed 6 --q0 $pose --bias $pose --amp $swing \
    --noise-q 1e-3 --noise-qd 1e-2 > data/servo_arm/log_noisy.csv.tmp && mv data/servo_arm/log_noisy.csv.tmp data/servo_arm/log_noisy.csv
