#!/usr/bin/env python3
"""Print the quantities the DFKI double-pendulum data determine (the base parameters of the
authors' model, docs/text/dynamics.rst) for one or more of our robot.json files, next to the
published model_3.0 values. Standard library only.

    python3 data/dfki_double_pendulum/derived.py data/dfki_double_pendulum/robot.json fitted.json
"""
import json, sys

L1 = 0.2
PUB = dict(I1=0.02671076499939512, I2=0.053878129629650884, Ir=9.937281205437459e-05,
           m1=0.6416937799349799, m2=0.563935954099688, r1=0.2, r2=0.3212669909674605, gr=6.0)


def published():
    p = PUB
    return {"m1*r1 + m2*l1 [kg m]": p["m1"] * p["r1"] + p["m2"] * L1,
            "m2*r2 [kg m]": p["m2"] * p["r2"],
            "M11 - 2 m2 l1 r2 cos q2 [kg m^2]": p["I1"] + p["I2"] + p["m2"] * L1 ** 2 + (p["gr"] ** 2 + 1) * p["Ir"],
            "M12 - m2 l1 r2 cos q2 [kg m^2]": p["I2"] - p["gr"] * p["Ir"],
            "M22 [kg m^2]": p["I2"] + p["gr"] ** 2 * p["Ir"],
            "shoulder viscous [N m s/rad]": 0.001, "shoulder coulomb [N m]": 0.093 * 3.141592653589793 / 2,
            "elbow viscous [N m s/rad]": 0.001, "elbow coulomb [N m]": 0.078 * 3.141592653589793 / 2}


def ours(path):
    r = json.load(open(path))
    lk = {l["name"]: l for l in r["links"]}
    jt = {j["name"]: j for j in r["joints"]}
    m1, r1, i1 = lk["link1"]["mass"], -lk["link1"]["com"][2], lk["link1"]["inertia"]["iyy"]
    m2, r2, i2 = lk["link2"]["mass"], -lk["link2"]["com"][2], lk["link2"]["inertia"]["iyy"]
    a1, a2 = jt["shoulder"].get("armature", 0), jt["elbow"].get("armature", 0)
    f1, f2 = jt["shoulder"].get("friction", {}), jt["elbow"].get("friction", {})
    I2 = i2 + m2 * r2 ** 2
    return {"m1*r1 + m2*l1 [kg m]": m1 * r1 + m2 * L1,
            "m2*r2 [kg m]": m2 * r2,
            "M11 - 2 m2 l1 r2 cos q2 [kg m^2]": i1 + m1 * r1 ** 2 + a1 + I2 + m2 * L1 ** 2,
            "M12 - m2 l1 r2 cos q2 [kg m^2]": I2,
            "M22 [kg m^2]": I2 + a2,
            "shoulder viscous [N m s/rad]": f1.get("viscous", 0), "shoulder coulomb [N m]": f1.get("coulomb", 0),
            "elbow viscous [N m s/rad]": f2.get("viscous", 0), "elbow coulomb [N m]": f2.get("coulomb", 0)}


cols = [("published model_3.0", published())] + [(p, ours(p)) for p in sys.argv[1:]]
print("| quantity | " + " | ".join(c[0] for c in cols) + " |")
print("| --- |" + " --- |" * len(cols))
for k in cols[0][1]:
    print(f"| {k} | " + " | ".join(f"{c[1][k]:.5g}" for c in cols) + " |")
