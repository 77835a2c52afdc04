#!/usr/bin/env python3
"""Make data/backlash_arm's logs: a torque multi-sine replayed on truth.json by sysid's own
simulator (MuJoCo has no backlash), then a noisy copy. Run from the repository root after
`make`:  python3 data/backlash_arm/mklogs.py"""
import math, os, random, subprocess, sys, tempfile

here = os.path.dirname(os.path.abspath(__file__))
sysid = os.environ.get("SYSID", os.path.join(here, "..", "..", "sysid"))

# 4 s at 1 kHz from rest at q = 0; the command reverses often, so the motor crosses the gap
with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
    f.write("t,q.shoulder,qd.shoulder,u.shoulder\n")
    for k in range(4001):
        t = k * 1e-3
        u = (0.25 * math.sin(2 * math.pi * 0.6 * t) + 0.15 * math.sin(2 * math.pi * 1.7 * t + 1)
             + 0.08 * math.sin(2 * math.pi * 3.1 * t + 2))
        f.write("%.3f,0,0,%r\n" % (t, u))
    template = f.name
clean = os.path.join(here, "log.csv")
subprocess.run([sysid, "simulate", os.path.join(here, "truth.json"), template, "-o", clean, "-q"], check=True)
os.unlink(template)

# Gaussian noise: 2e-4 rad on q (a 15-bit encoder's quantisation is 1e-4), 2e-2 rad/s on qd
rng = random.Random(7)
with open(clean) as f, open(os.path.join(here, "log_noisy.csv"), "w") as g:
    g.write(f.readline())
    for line in f:
        t, q, qd, u = line.strip().split(",")
        g.write("%s,%r,%r,%s\n" % (t, float(q) + rng.gauss(0, 2e-4), float(qd) + rng.gauss(0, 2e-2), u))
