#!/bin/sh
# data/panda/log.csv: 1 s at 1 kHz of a Franka Panda (data/robots/urdf/panda/panda.urdf)
# following a smooth excitation from Franka's "ready" pose (every arm joint 0.3 rad, the finger
# 1 cm, each at its own frequency), as a controller would make it follow it: the q and qd
# columns are the motion, the u columns the joint torques it takes, by inverse dynamics
# (tests/tools/feedforward.c) of a "true" Panda whose friction differs from the URDF's:
# joint2 viscous 0.2 N*m*s/rad (URDF 0.003), joint4 Coulomb 0.1 N*m (URDF 0), joint6 viscous
# 0.05 (URDF 0.003). data/panda/truth.json is that robot. Run from the repository root.
set -e
make -s build/feedforward sysid
./sysid params -q data/robots/urdf/panda/panda.urdf --set joints.panda_joint2.friction.viscous=0.2 \
    --set joints.panda_joint4.friction.coulomb=0.1 --set joints.panda_joint6.friction.viscous=0.05 \
    -o data/panda/truth.json
./build/feedforward data/panda/truth.json 1 1000 \
    0 -0.785398163397448 0 -2.35619449019234 0 1.5707963267949 0.785398163397448 0.02 \
    > data/panda/log.csv
