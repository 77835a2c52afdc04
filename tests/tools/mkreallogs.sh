#!/usr/bin/env bash
# tests/tools/mkreallogs.sh — regenerate the "real log" fixtures of data/double_pendulum:
# the README's truth (forearm mass 1.1 kg, elbow armature 0.02) simulated over the first 2 s
# of data/double_pendulum/log.csv's commands, rewritten by tests/tools/reallog.c as a ROS 2
# joint-state export (ros2_joint_states.csv) and as a controller's ';' log in degrees and
# nanoseconds with decimal commas (controller_deg.csv). Run from the repository root after
# `make`; the fit specs ros2.json and controller.json read them.
set -eu
cd "$(dirname "$0")/../.."
SYSID=${SYSID:-$PWD/sysid}
B=build/reallogs
D=data/double_pendulum
mkdir -p "$B"
cc -O2 -std=c11 -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L -o "$B/reallog" tests/tools/reallog.c -lm
"$SYSID" params $D/robot.json --set links.fore.mass=1.1 --set joints.elbow.armature=0.02 -o "$B/truth.json"
# at a tenth of a millisecond, finer than any step a fit chooses: the logs stand for the
# continuous motion, as a real robot's do
"$SYSID" simulate "$B/truth.json" $D/log.csv --max-dt 0.0001 -o "$B/truth.csv"
head -n 2002 "$B/truth.csv" >"$B/truth_2s.csv"
"$B/reallog" ros2 <"$B/truth_2s.csv" >$D/ros2_joint_states.csv
"$B/reallog" controller <"$B/truth_2s.csv" >$D/controller_deg.csv
echo "wrote $D/ros2_joint_states.csv and $D/controller_deg.csv from $B/truth_2s.csv"
