#!/bin/sh
# data/panda/commands.csv: 2 s at 500 Hz of joint torques for the Franka Panda of
# data/robots/urdf/panda/panda.urdf, from Franka's "ready" pose at rest: a sinusoid per arm
# joint (its own frequency and phase, 4 N·m on the big joints, 1 N·m on the wrist) and a slow
# 2 N open-close of the finger. The q and qd columns hold the start state in every row (only the
# first row matters to `simulate`). README's Panda walk-through simulates its truth log from it.
awk 'BEGIN {
    n = 7; pi = 3.14159265358979323846
    split("0 -0.785398163397448 0 -2.35619449019234 0 1.5707963267949 0.785398163397448", q0, " ")
    printf "t"
    for (j = 1; j <= n; j++) printf ",q.panda_joint%d", j
    printf ",q.panda_finger_joint1"
    for (j = 1; j <= n; j++) printf ",qd.panda_joint%d", j
    printf ",qd.panda_finger_joint1"
    for (j = 1; j <= n; j++) printf ",u.panda_joint%d", j
    printf ",u.panda_finger_joint1\n"
    for (k = 0; k <= 1000; k++) {
        t = k / 500
        printf "%.3f", t
        for (j = 1; j <= n; j++) printf ",%.15g", q0[j]
        printf ",0.02"
        for (j = 1; j <= n + 1; j++) printf ",0"
        for (j = 1; j <= n; j++) {
            a = j <= 4 ? 4 : 1
            printf ",%.6f", a * sin(2 * pi * (0.4 + 0.23 * j) * t + 0.9 * j)
        }
        printf ",%.6f\n", 2 * sin(2 * pi * 0.5 * t)
    }
}' > data/panda/commands.csv
