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
    torque is gear*kt*u as in docs/formats.md);
  - no geoms, contact disabled, no limits (robots without "contact");
  - dry Coulomb friction ("friction": {"coulomb": c, "model": "dry"}) -> frictionloss="c",
    with the solver's tolerance 1e-12 (and enough iterations) so that MuJoCo's answer is
    the exact solution of the friction rows' problem, as sysid's is (docs/formats.md).
Refused (MuJoCo has no exact equivalent): smooth Coulomb and Stribeck friction, voltage motors,
encoder offsets, massless moving links (MuJoCo rejects them).

Floating bodies and ground contact. Here MuJoCo is NOT a twin but plays the "real robot":
its contact model (soft constraints solved per step) deliberately differs from sysid's
compliant one, and the robot.json may carry the truth MuJoCo simulates next to the nominal
values sysid starts from:
  - a "free" joint (parent: the massless root link) -> <freejoint name=.../> in a body at the
    origin with identity orientation (mjlog sets the log's start state); no friction,
    armature, motor or offset allowed on it;
  - "contact": {"model", "ground": {"height", "friction", ...}, "spheres": [...]} ->
    a <geom type="plane"> at z = height in the world body and, per sphere, a
    <geom type="sphere" size=radius pos=xyz mass=0> in its link's body (the mass and inertia
    stay those of <inertial>). contype/conaffinity: plane 1/1, spheres 0/1, so spheres
    collide with the plane only, never with each other. condim 3 (sliding friction only),
    elliptic friction cone, friction "mu 0.005 0.0001" (torsional and rolling values unused
    at condim 3), the same solref/solimp on the plane and every sphere (MuJoCo mixes the two
    geoms' values; equal values make the mix exact). The compliant model's stiffness,
    damping, width and smoothing have no MuJoCo meaning and are not translated.
  - an optional top-level "_mujoco" object (sysid ignores keys starting with "_") holds the
    truth for MuJoCo:
      "friction": mu            Coulomb coefficient (default: contact.ground.friction)
      "solref": [a, b]          MuJoCo solref (default [0.02, 1], MuJoCo's own default;
                                negative values are direct stiffness and damping)
      "solimp": [d0, dw, width(, midpoint, power)]   (default [0.9, 0.95, 0.001])
      "timestep": h             simulation step [s] (default 0.001)
      "links": {"<link>": {"mass": m, "com": [...], "inertia": {...}}}
                                true mass properties replacing robot.json's, key by key
      "mass_scale": s           multiplies every link's (true) mass and inertia by s
    A robot without "_mujoco" and without "contact" gives the same model.xml as before.
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
    truth = robot.get("_mujoco", {})
    known = {"friction", "solref", "solimp", "timestep", "links", "mass_scale"}
    for k in truth:
        if k not in known and not k.startswith("_"):
            die(f'_mujoco.{k}: unknown key (known: {", ".join(sorted(known))})')
    links = {l["name"]: dict(l) for l in robot["links"]}
    for name, over in truth.get("links", {}).items():
        if name not in links:
            die(f"_mujoco.links.{name}: no such link")
        for k, v in over.items():
            if k not in ("mass", "com", "inertia"):
                die(f"_mujoco.links.{name}.{k}: only mass, com, inertia")
            links[name][k] = v
    if "mass_scale" in truth:
        s = float(truth["mass_scale"])
        if not s > 0:
            die("_mujoco.mass_scale: must be positive")
        for l in links.values():
            if "mass" in l:
                l["mass"] = float(l["mass"]) * s
                l["inertia"] = {k: float(v) * s for k, v in l["inertia"].items()}
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
    contact = robot.get("contact")
    timestep = fmt(truth["timestep"]) if "timestep" in truth else "0.001"
    dry = any(j.get("friction", {}).get("model") == "dry" and j["friction"].get("coulomb", 0) != 0
              for j in joints)
    solver = ' tolerance="1e-12" iterations="1000"' if dry else ""
    if contact is None:
        w(f'  <option timestep="{timestep}" gravity="{vec(g)}" integrator="Euler"{solver}>')
        w('    <flag contact="disable"/>')
        w('  </option>')
    else:
        w(f'  <option timestep="{timestep}" gravity="{vec(g)}" integrator="Euler" '
          f'cone="elliptic"{solver}/>')
    w('  <worldbody>')
    actuators = []
    spheres = {}     # link name -> [sphere]
    cattr = ""       # contact attributes shared by the plane and every sphere
    if contact is not None:
        ground = contact.get("ground", {})
        mu = float(truth.get("friction", ground.get("friction", 1.0)))
        solref = truth.get("solref", [0.02, 1])
        solimp = truth.get("solimp", [0.9, 0.95, 0.001])
        if len(solref) != 2 or len(solimp) not in (3, 5):
            die("_mujoco: solref needs 2 numbers, solimp 3 or 5")
        cattr = (f'condim="3" friction="{fmt(mu)} 0.005 0.0001" '
                 f'solref="{vec(solref)}" solimp="{vec(solimp)}"')
        h = float(ground.get("height", 0))
        w(f'    <geom name="ground" type="plane" size="0 0 1" pos="0 0 {fmt(h)}" '
          f'contype="1" conaffinity="1" {cattr}/>')
        for sp in contact.get("spheres", []):
            if sp["link"] not in links:
                die(f'contact sphere {sp.get("name")}: no link {sp["link"]}')
            spheres.setdefault(sp["link"], []).append(sp)

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
        if j["type"] == "free":
            if depth != 2:
                die(f'joint {j["name"]}: a free joint must have the root link as parent')
            if any(float(x) != 0 for x in xyz + rpy):
                die(f'joint {j["name"]}: a free joint has no origin')
            fr = j.get("friction", {})
            if (any(fr.get(k, 0) != 0 for k in ("viscous", "coulomb")) or "stribeck" in fr
                    or j.get("armature", 0) != 0 or j.get("motor") or j.get("offset", 0) != 0):
                die(f'joint {j["name"]}: friction, armature, motor or offset on a free joint')
            w(f'{ind}  <freejoint name="{j["name"]}"/>')
        elif j["type"] != "fixed":
            fr = j.get("friction", {})
            dry_j = fr.get("model") == "dry"
            if (fr.get("coulomb", 0) != 0 and not dry_j) or "stribeck" in fr:
                die(f'joint {j["name"]}: smooth Coulomb/Stribeck friction has no MuJoCo twin')
            floss = f' frictionloss="{fmt(fr["coulomb"])}"' if dry_j and fr.get("coulomb", 0) != 0 else ""

            if j.get("offset", 0) != 0:
                die(f'joint {j["name"]}: encoder offset has no MuJoCo twin')
            kind = {"revolute": "hinge", "prismatic": "slide"}[j["type"]]
            w(f'{ind}  <joint name="{j["name"]}" type="{kind}" pos="0 0 0" '
              f'axis="{vec(j["axis"])}" limited="false" '
              f'damping="{fmt(fr.get("viscous", 0))}" armature="{fmt(j.get("armature", 0))}"{floss}/>')
            mot = j.get("motor")
            if mot:
                if mot["input"] not in ("torque", "current"):
                    die(f'joint {j["name"]}: {mot["input"]} motor has no MuJoCo twin')
                gear = float(mot.get("gear", 1.0)) * float(mot.get("kt", 1.0))
                actuators.append((j["name"], gear))
        for sp in spheres.get(link["name"], []):
            w(f'{ind}  <geom name="{sp["name"]}" type="sphere" size="{fmt(sp["radius"])}" '
              f'pos="{vec(sp.get("xyz", [0, 0, 0]))}" mass="0" contype="0" conaffinity="1" '
              f'{cattr}/>')
        for c in children[link["name"]]:
            body(c, depth + 1)
        w(f'{ind}</body>')

    for j in children[roots[0]]:
        body(j, 2)
    w('  </worldbody>')
    if actuators:
        w('  <actuator>')
        for name, gear in actuators:
            w(f'    <motor name="{name}" joint="{name}" gear="{fmt(gear)}" '
              f'ctrllimited="false" forcelimited="false"/>')
        w('  </actuator>')
    w('</mujoco>')
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
