#!/usr/bin/env python3
"""mktree.py — write the robot.json of a branched test robot with N revolute joints.

    python3 tests/bench/mktree.py 30 > tests/bench/tree30.json
    python3 tests/tools/json2mjcf.py tests/bench/tree30.json > tests/bench/tree30.xml

Shape (a humanoid-like tree): joint 1 turns a torso about z on a fixed base; the other N-1
joints form limbs of at most 6 joints, each limb hanging from the torso at its own place
around it. N = 2 and N = 7 are chains (torso + one limb); N = 15 is torso + 6 + 6 + 2 and
N = 30 torso + 4 x 6 + 5, so the deepest chain has 7 joints. Every link has an off-axis COM
and a full inertia tensor, every joint a non-zero origin rpy, armature, viscous damping and a
torque motor (u in N·m). No Coulomb friction, so json2mjcf.py can write an exact MuJoCo twin.
Deterministic; only the Python standard library is used.
"""
import json
import math
import sys


def link(name, depth, k):
    m = 2.0 * 0.8 ** depth
    s = 0.02 * m                              # inertia scale [kg m^2]
    return {"name": name, "mass": round(m, 6),
            "com": [0.004 * (k % 3 - 1), 0.003 * ((k + 1) % 3 - 1), 0.05],
            "inertia": {"ixx": round(s, 8), "iyy": round(0.9 * s, 8), "izz": round(0.5 * s, 8),
                        "ixy": round(0.02 * s, 8), "ixz": round(-0.03 * s, 8),
                        "iyz": round(0.01 * s, 8)}}


def joint(name, parent, child, xyz, rpy, axis, depth):
    return {"name": name, "type": "revolute", "parent": parent, "child": child,
            "origin": {"xyz": xyz, "rpy": rpy}, "axis": axis,
            "armature": round(0.02 * 0.8 ** depth, 8),
            "friction": {"viscous": round(0.2 * 0.8 ** depth, 8)},
            "motor": {"input": "torque", "gear": 1.0, "kt": 1.0}}


def main():
    if len(sys.argv) != 2 or not sys.argv[1].isdigit() or int(sys.argv[1]) < 1:
        sys.exit("usage: mktree.py N > tree.json  (N >= 1 revolute joints)")
    n = int(sys.argv[1])
    links = [{"name": "base"}, link("torso", 0, 0)]
    joints = [joint("j1", "base", "torso", [0, 0, 1.0], [0, 0, 0.1], [0, 0, 1], 0)]
    rest = n - 1
    nlimb = (rest + 5) // 6
    axes = ([0, 1, 0], [1, 0, 0], [0, 0, 1], [1, 1, 0])
    k = 1
    for limb in range(nlimb):
        size = min(6, rest - 6 * limb)
        ang = 2 * math.pi * limb / max(nlimb, 1)
        parent = "torso"
        for d in range(1, size + 1):
            k += 1
            name = f"l{limb + 1}_{d}"
            if d == 1:
                xyz = [round(0.15 * math.cos(ang), 6), round(0.15 * math.sin(ang), 6), 0.1]
                rpy = [0.1, 0.2, round(ang, 6)]
            else:
                xyz = [0.01, 0, 0.12]
                rpy = [0.05 * (d % 2), -0.05, 0.1]
            links.append(link(name, d, k))
            joints.append(joint(f"j{k}", parent, name, xyz, rpy, axes[(d - 1) % 4], d))
            parent = name
    robot = {"name": f"tree{n}", "gravity": [0, 0, -9.81], "links": links, "joints": joints}
    json.dump(robot, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
