#!/usr/bin/env python3
"""json2mjcf.py — write the MuJoCo (MJCF) twin of a sysid robot.json.

    python3 tests/tools/json2mjcf.py data/arm7/robot.json > data/arm7/model.xml

The twin is the same physics as sysid's model, so MuJoCo can serve as a test oracle
(tests/test_mujoco.c) and as the generator of the example logs (tests/tools/mjlog.c):
  - joint origin (URDF: pose of the joint frame in the parent link frame) -> body pos/quat;
    rpy is URDF's fixed-axis roll-pitch-yaw, R = Rz(yaw) Ry(pitch) Rx(roll), written as a
    quaternion (w x y z) so no Euler convention of MuJoCo's is involved;
  - the child link's frame is the joint frame: the joint sits at the body origin;
  - revolute -> hinge, prismatic -> slide, fixed -> a body without a joint (welded);
  - link mass/com/inertia -> <inertial pos quat mass diaginertia>: the inertia matrix
    (ixx iyy izz ixy ixz iyz: matrix entries about the COM, as in URDF and MuJoCo's
    fullinertia) diagonalised here by Jacobi rotations to machine precision, because
    MuJoCo 2.2.2 diagonalises fullinertia only to about 1e-7 relative (mju_eig3), which
    would make the twin differ from sysid by more than rounding;
  - armature -> armature, friction.viscous -> damping;
  - torque/current motor -> <motor gear = gear*kt> (ctrl is the command u, so the joint
    torque is gear*kt*u as in FORMATS.md);
  - no geoms, contact disabled, no limits, no frictionloss.
Refused (MuJoCo has no exact equivalent): Coulomb/Stribeck friction, voltage motors,
encoder offsets, massless moving links (MuJoCo rejects them).
Only the Python standard library is used.
"""
import json
import math
import sys


def fmt(x):
    """Shortest text that reads back as the same double."""
    x = float(x)
    if x == 0.0:
        return "0"
    return repr(x)


def vec(v):
    return " ".join(fmt(x) for x in v)


def rpy_to_quat(r, p, y):
    """Quaternion (w, x, y, z) of R = Rz(y) Ry(p) Rx(r), i.e. qz * qy * qx."""
    cr, sr = math.cos(r / 2), math.sin(r / 2)
    cp, sp = math.cos(p / 2), math.sin(p / 2)
    cy, sy = math.cos(y / 2), math.sin(y / 2)
    return (cr * cp * cy + sr * sp * sy,
            sr * cp * cy - cr * sp * sy,
            cr * sp * cy + sr * cp * sy,
            cr * cp * sy - sr * sp * cy)


def jacobi_eig3(a):
    """Eigen-decomposition of a symmetric 3x3 matrix by cyclic Jacobi rotations, run to
    machine precision: returns (eigenvalues, V) with a = V diag(e) V^T, V a proper rotation
    whose columns are the eigenvectors."""
    a = [row[:] for row in a]
    v = [[1.0 if i == j else 0.0 for j in range(3)] for i in range(3)]
    for _ in range(100):
        off = a[0][1] ** 2 + a[0][2] ** 2 + a[1][2] ** 2
        if off == 0.0:
            break
        for p, q in ((0, 1), (0, 2), (1, 2)):
            if a[p][q] == 0.0:
                continue
            theta = (a[q][q] - a[p][p]) / (2 * a[p][q])
            t = math.copysign(1.0, theta) / (abs(theta) + math.sqrt(theta * theta + 1))
            c = 1 / math.sqrt(t * t + 1)
            s = t * c
            for k in range(3):          # a = J^T a J with J the (p, q) rotation
                akp, akq = a[k][p], a[k][q]
                a[k][p], a[k][q] = c * akp - s * akq, s * akp + c * akq
            for k in range(3):
                apk, aqk = a[p][k], a[q][k]
                a[p][k], a[q][k] = c * apk - s * aqk, s * apk + c * aqk
            for k in range(3):
                vkp, vkq = v[k][p], v[k][q]
                v[k][p], v[k][q] = c * vkp - s * vkq, s * vkp + c * vkq
    e = [a[0][0], a[1][1], a[2][2]]
    det = (v[0][0] * (v[1][1] * v[2][2] - v[1][2] * v[2][1])
           - v[0][1] * (v[1][0] * v[2][2] - v[1][2] * v[2][0])
           + v[0][2] * (v[1][0] * v[2][1] - v[1][1] * v[2][0]))
    if det < 0:
        for k in range(3):
            v[k][2] = -v[k][2]
    return e, v


def mat_to_quat(r):
    """Unit quaternion (w, x, y, z) of a rotation matrix (Shepperd's method)."""
    tr = r[0][0] + r[1][1] + r[2][2]
    if tr > 0:
        s = 2 * math.sqrt(tr + 1)
        q = (s / 4, (r[2][1] - r[1][2]) / s, (r[0][2] - r[2][0]) / s, (r[1][0] - r[0][1]) / s)
    elif r[0][0] > r[1][1] and r[0][0] > r[2][2]:
        s = 2 * math.sqrt(1 + r[0][0] - r[1][1] - r[2][2])
        q = ((r[2][1] - r[1][2]) / s, s / 4, (r[0][1] + r[1][0]) / s, (r[0][2] + r[2][0]) / s)
    elif r[1][1] > r[2][2]:
        s = 2 * math.sqrt(1 + r[1][1] - r[0][0] - r[2][2])
        q = ((r[0][2] - r[2][0]) / s, (r[0][1] + r[1][0]) / s, s / 4, (r[1][2] + r[2][1]) / s)
    else:
        s = 2 * math.sqrt(1 + r[2][2] - r[0][0] - r[1][1])
        q = ((r[1][0] - r[0][1]) / s, (r[0][2] + r[2][0]) / s, (r[1][2] + r[2][1]) / s, s / 4)
    n = math.sqrt(sum(x * x for x in q))
    return tuple(x / n for x in q)


def principal_inertia(name, i):
    """Principal moments and the quaternion of the principal axes in the link frame."""
    a = [[float(i["ixx"]), float(i["ixy"]), float(i["ixz"])],
         [float(i["ixy"]), float(i["iyy"]), float(i["iyz"])],
         [float(i["ixz"]), float(i["iyz"]), float(i["izz"])]]
    e, v = jacobi_eig3(a)
    s = sorted(e)
    if s[0] <= 0 or s[0] + s[1] < s[2]:
        sys.exit(f"json2mjcf: link {name}: inertia not physical, principal moments {s}")
    return e, mat_to_quat(v)


def die(msg):
    sys.exit("json2mjcf: " + msg)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: json2mjcf.py ROBOT.json > MODEL.xml")
    path = sys.argv[1]
    with open(path) as f:
        robot = json.load(f)
    links = {l["name"]: l for l in robot["links"]}
    joints = robot["joints"]
    children = {name: [] for name in links}
    child_of = set()
    for j in joints:
        children[j["parent"]].append(j)
        child_of.add(j["child"])
    roots = [n for n in links if n not in child_of]
    if len(roots) != 1:
        die(f"expected one root link, got {roots}")

    out = []
    w = out.append
    w(f'<!-- MuJoCo twin of {path}: generated by tests/tools/json2mjcf.py; do not edit. -->')
    w(f'<mujoco model="{robot.get("name", "robot")}">')
    w('  <compiler angle="radian" inertiafromgeom="false" autolimits="true"/>')
    g = robot.get("gravity", [0, 0, -9.81])
    w(f'  <option timestep="0.001" gravity="{vec(g)}" integrator="Euler">')
    w('    <flag contact="disable"/>')
    w('  </option>')
    w('  <worldbody>')
    actuators = []

    def body(j, depth):
        ind = "  " * depth
        link = links[j["child"]]
        o = j.get("origin", {})
        xyz = o.get("xyz", [0, 0, 0])
        rpy = o.get("rpy", [0, 0, 0])
        quat = rpy_to_quat(*[float(x) for x in rpy])
        w(f'{ind}<body name="{link["name"]}" pos="{vec(xyz)}" quat="{vec(quat)}">')
        if "mass" in link:
            inertia = link["inertia"]
            e, iquat = principal_inertia(link["name"], inertia)
            full = [inertia[k] for k in ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")]
            w(f'{ind}  <!-- fullinertia="{vec(full)}" -->')
            w(f'{ind}  <inertial pos="{vec(link.get("com", [0, 0, 0]))}" quat="{vec(iquat)}" '
              f'mass="{fmt(link["mass"])}" diaginertia="{vec(e)}"/>')
        elif j["type"] != "fixed":
            die(f'link {link["name"]}: MuJoCo rejects massless moving bodies')
        if j["type"] != "fixed":
            fr = j.get("friction", {})
            if fr.get("coulomb", 0) != 0 or "stribeck" in fr:
                die(f'joint {j["name"]}: Coulomb/Stribeck friction has no MuJoCo twin')
            if j.get("offset", 0) != 0:
                die(f'joint {j["name"]}: encoder offset has no MuJoCo twin')
            kind = {"revolute": "hinge", "prismatic": "slide"}[j["type"]]
            w(f'{ind}  <joint name="{j["name"]}" type="{kind}" pos="0 0 0" '
              f'axis="{vec(j["axis"])}" limited="false" '
              f'damping="{fmt(fr.get("viscous", 0))}" armature="{fmt(j.get("armature", 0))}"/>')
            mot = j.get("motor")
            if mot:
                if mot["input"] not in ("torque", "current"):
                    die(f'joint {j["name"]}: {mot["input"]} motor has no MuJoCo twin')
                gear = float(mot.get("gear", 1.0)) * float(mot.get("kt", 1.0))
                actuators.append((j["name"], gear))
        for c in children[link["name"]]:
            body(c, depth + 1)
        w(f'{ind}</body>')

    for j in children[roots[0]]:
        body(j, 2)
    w('  </worldbody>')
    w('  <actuator>')
    for name, gear in actuators:
        w(f'    <motor name="{name}" joint="{name}" gear="{fmt(gear)}" '
          f'ctrllimited="false" forcelimited="false"/>')
    w('  </actuator>')
    w('</mujoco>')
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
