#!/usr/bin/env bash
# sysid import / export and URDF/MJCF read by every command (io/robot_load.c): every corpus
# robot imports and loads; a command takes the XML file as it takes robot.json; export of an
# unchanged robot gives the file back byte for byte, of a fitted one changes only the fitted
# numbers; and every misuse exits 2, names the file and writes nothing.
set -u
cd "$(dirname "$0")/.."
source tests/harness.sh
PANDA=data/robots/urdf/panda/panda.urdf

# every corpus robot: import, load the robot.json, and the XML directly, to the same parameters
for f in data/robots/urdf/*/*.urdf data/robots/mjcf/*/*.xml; do
    extra=()
    case $f in *talos*) extra=(--balance-inertia) ;; esac
    why=""
    run import -q "${extra[@]}" "$f" -o "$TMP/r.json"
    [ "$rc" -eq 0 ] || why+=" import exit $rc;"
    "$SYSID" params -q --json "$TMP/r.json" >"$TMP/p1" 2>/dev/null || why+=" params of the import failed;"
    if [ ${#extra[@]} -eq 0 ]; then
        "$SYSID" params -q --json "$f" >"$TMP/p2" 2>/dev/null || why+=" params of the file failed;"
        cmp -s "$TMP/p1" "$TMP/p2" || why+=" the file and its import give different parameters;"
        run export -q "$TMP/r.json" --into "$f" -o "$TMP/same"
        [ "$rc" -eq 0 ] && cmp -s "$f" "$TMP/same" || why+=" export of the unchanged import is not byte-identical;"
    fi
    check "corpus $f" "$why"
done

# stdout by default, and the warnings name file:line
run import "$PANDA"
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
jq -e '.joints | length == 12' "$TMP/out" >/dev/null || why+=" stdout is not the robot.json;"
grep -q "^sysid: warning: $PANDA:348: <joint name=\"panda_finger_joint2\">: <mimic" "$TMP/err" || why+=" no mimic warning with its line;"
check "import to stdout, warnings with lines" "$why"

# fit a URDF as given: the fitted robot is a robot.json; export puts the numbers back
run fit -q "$PANDA" data/panda/log.csv --integrator rk4 --start logged --free-only 'joints.*.friction.*' \
    --fix 'joints.*.friction.smoothing' -o "$TMP/fitted.json"
why=""
[ "$rc" -eq 0 ] || why+=" fit exit $rc;"
jqt "$TMP/fitted.json" '.joints[] | select(.name == "panda_joint2") | .friction.viscous | . > 0.19 and . < 0.21' ||
    why+=" joint2's viscous friction (truth 0.2) not recovered to 5%;"
check "fit a URDF" "$why"
run export -q "$TMP/fitted.json" --into "$PANDA" -o "$TMP/fitted.urdf"
why=""
[ "$rc" -eq 0 ] || why+=" export exit $rc;"
# only <dynamics> lines change, and the fitted value is in the copy
changed=$(diff "$PANDA" "$TMP/fitted.urdf" | grep '^>' | grep -vc '<dynamics ')
[ "$changed" -eq 0 ] || why+=" $changed lines other than <dynamics> changed;"
v=$(jq -r '.joints[] | select(.name == "panda_joint2") | .friction.viscous' "$TMP/fitted.json")
grep -qF "damping=\"$v\"" "$TMP/fitted.urdf" || why+=" joint2's fitted damping $v is not in the copy;"
"$SYSID" params -q --json "$TMP/fitted.urdf" | jq -c '[.parameters[] | select(.name | test("friction.(viscous|coulomb)$"))]' >"$TMP/a"
jq -c '[.parameters[] | select(.name | test("friction.(viscous|coulomb)$"))]' <("$SYSID" params -q --json "$TMP/fitted.json") >"$TMP/b"
cmp -s "$TMP/a" "$TMP/b" || why+=" the exported URDF does not read back to the fitted friction;"
check "export the fit into the URDF" "$why"

# a changed mass changes the limit gains computed from it, but those are the file's own (absent
# in it): export writes the mass and lists nothing as not representable
run params -q "$PANDA" --set links.panda_link3.mass=3.5 -o "$TMP/m.json"
run export "$TMP/m.json" --into "$PANDA" -o "$TMP/m.urdf"
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
[ "$(diff "$PANDA" "$TMP/m.urdf" | grep -c '^>')" -eq 1 ] || why+=" not exactly one line changed;"
grep -q 'not representable' "$TMP/err" && why+=" computed limit gains listed as not representable;"
run params -q "$TMP/m.json" --set joints.panda_joint2.limit.stiffness=5000 -o "$TMP/m2.json"
run export "$TMP/m2.json" --into "$PANDA" -o "$TMP/m2.urdf"
grep -q '^sysid: warning:   joints.panda_joint2.limit.stiffness = 5000$' "$TMP/err" || why+=" a fitted gain is not listed;"
check "computed limit gains are the file's, fitted ones not representable" "$why"

# the MJCF side: a changed joint damping goes where the file defines it
run params -q data/robots/mjcf/universal_robots_ur5e/ur5e.xml --set 'joints.*.friction.viscous=0.5' -o "$TMP/ur.json"
run export "$TMP/ur.json" --into data/robots/mjcf/universal_robots_ur5e/ur5e.xml -o "$TMP/ur.xml"
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
"$SYSID" params -q --json "$TMP/ur.xml" | jq -e '[.parameters[] | select(.name | endswith("friction.viscous")) | .value] | all(. == 0.5)' >/dev/null ||
    why+=" the copy does not read back to damping 0.5;"
check "export into MJCF" "$why"

# told by content, past a declaration, comments and a DOCTYPE with an internal subset
printf '<?xml version="1.0"?>\n<!-- a > in a comment -->\n<!DOCTYPE robot [ <!ENTITY x "1"> ]>\n<robot name="r"><link name="a"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link></robot>\n' >"$TMP/robot.json"
run params -q --json "$TMP/robot.json"
check "a URDF named robot.json, with a DOCTYPE" "$([ "$rc" -eq 0 ] && jq -e '.parameters[] | select(.name == "links.a.mass") | .value == 1' "$TMP/out" >/dev/null || echo " exit $rc")"

# misuse: exit 2, the file named, nothing written
printf '<sdf version="1.6"><model name="x"/></sdf>\n' >"$TMP/model.sdf"
expect_invalid "an XML root sysid does not read" "$TMP/model.sdf" "root element is <sdf>" validate "$TMP/model.sdf"
printf '<mujocoinclude><body name="b"/></mujocoinclude>\n' >"$TMP/inc.xml"
expect_invalid "an MJCF include fragment" "$TMP/inc.xml" "<mujocoinclude> fragment" params "$TMP/inc.xml"
printf '<robot name="r">\n  <link name="a">\n</robot>\n' >"$TMP/bad.urdf"
expect_invalid "malformed URDF" "$TMP/bad.urdf:3" "Opening and ending tag mismatch" import "$TMP/bad.urdf"
# talos's gripper motor links break the triangle inequality but are welded to their gripper bases:
# merged, as MuJoCo's fusestatic and Pinocchio merge them, the model loads
run validate data/robots/urdf/talos_reduced/talos_reduced.urdf
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc: $(tail -n 1 "$TMP/err");"
grep -q "<link name=\"gripper_left_motor_single_link\">.*welded to 'gripper_left_base_link' by the fixed joint" "$TMP/err" ||
    why+=" no warning naming the merge;"
check "talos without the repair: its welded placeholder inertias merge, and it loads" "$why"
# a placeholder inertia on a moving joint is refused naming the link
sed 's|"hatch_joint" type="fixed">|"hatch_joint" type="revolute"><axis xyz="1 0 0"/>|' tests/fixtures/urdf/welded.urdf >"$TMP/hatch.urdf"
expect_invalid "a placeholder inertia on a moving joint names the link" "$TMP/hatch.urdf" \
    "link 'hatch'.inertia: expected a positive definite inertia tensor" validate -q "$TMP/hatch.urdf"

cp "$PANDA" "$TMP/panda.urdf"
run fit -q "$TMP/panda.urdf" data/panda/log.csv --in-place
why=""
[ "$rc" -eq 2 ] || why+=" exit $rc;"
grep -q "would replace the URDF file" "$TMP/err" || why+=" no reason given;"
cmp -s "$PANDA" "$TMP/panda.urdf" || why+=" the URDF was changed;"
check "fit --in-place refuses to replace a URDF" "$why"
run params -q "$TMP/panda.urdf" --set links.panda_link3.mass=3 -o "$TMP/panda.urdf"
why=""
[ "$rc" -eq 2 ] || why+=" exit $rc;"
cmp -s "$PANDA" "$TMP/panda.urdf" || why+=" the URDF was changed;"
check "params -o refuses to replace a URDF" "$why"
run import -q data/arm7/robot.json
check "import of a robot.json" "$([ "$rc" -eq 2 ] && grep -q 'already a robot.json' "$TMP/err" || echo " exit $rc")"
run export -q data/arm7/robot.json --into data/arm7/robot.json
check "export into a robot.json" "$([ "$rc" -eq 2 ] && [ ! -s "$TMP/out" ] || echo " exit $rc")"
run export -q data/arm7/robot.json --into "$PANDA" -o "$TMP/x.urdf"
check "export of another robot's structure" "$([ "$rc" -eq 2 ] && [ ! -e "$TMP/x.urdf" ] || echo " exit $rc")"
cp "$TMP/fitted.json" "$TMP/keep.json"
run export -q "$TMP/fitted.json" --into "$PANDA" -o "$TMP/fitted.json"
check "export over the fitted robot" "$([ "$rc" -eq 2 ] && cmp -s "$TMP/fitted.json" "$TMP/keep.json" || echo " exit $rc")"
run export -q "$TMP/fitted.json"
check "export without --into" "$([ "$rc" -eq 2 ] && grep -q -- '--into' "$TMP/err" || echo " exit $rc")"

# MJCF frictionloss is MuJoCo's dry friction: it imports as friction.model "dry" whatever the
# file's <option integrator> (every integrator and contact model takes it), and a fitted level
# goes back as frictionloss
DYN=data/robots/mjcf/dynamixel_2r/dynamixel_2r.xml
run import "$DYN" -o "$TMP/dyn.json"
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
jqt "$TMP/dyn.json" '[.joints[] | select(.friction.coulomb == 0.1) | .friction.model == "dry"] | length == 2 and all' ||
    why+=" frictionloss 0.1 is not a dry coulomb 0.1 on both joints;"
grep -q 'frictionloss' "$TMP/err" && why+=" a warning about frictionloss;"
check "MJCF frictionloss imports as dry friction" "$why"
sed 's|<option |<option integrator="RK4" |' "$DYN" > "$TMP/dyn_rk4.xml"
run import "$TMP/dyn_rk4.xml" -o "$TMP/dyn_rk4.json"
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
grep -q 'frictionloss' "$TMP/err" && why+=" a warning about frictionloss;"
[ "$(jq -c 'del(.integrator)' "$TMP/dyn_rk4.json")" = "$(jq -c . "$TMP/dyn.json")" ] ||
    why+=" another robot.json than the Euler file's (besides its integrator);"
jqt "$TMP/dyn_rk4.json" '.integrator == "rk4"' || why+=" integrator $(jq -c .integrator "$TMP/dyn_rk4.json");"
# and it simulates and fits with rk4: the step of dry friction with RK4 exists
{ head -n 1 data/double_pendulum/log.csv | sed 's/shoulder/R1/g; s/elbow/R2/g'; sed -n '2,501p' data/double_pendulum/log.csv; } \
    >"$TMP/dyn_log.csv"
run grad "$TMP/dyn_rk4.json" "$TMP/dyn_log.csv" --integrator rk4 --window 0.2 --free-only 'joints.*.friction.coulomb' -q
[ "$rc" -eq 0 ] || why+=" grad with rk4: exit $rc: $(head -c 200 "$TMP/err");"
check "MJCF frictionloss of an RK4 model imports as dry friction too, and rk4 takes it" "$why"
run params -q "$TMP/dyn.json" --set joints.R1.friction.coulomb=0.25 -o "$TMP/dyn2.json"
run export -q "$TMP/dyn2.json" --into "$DYN" -o "$TMP/dyn2.xml"
why=""
[ "$rc" -eq 0 ] || why+=" export exit $rc;"
grep -q 'frictionloss="0.25"' "$TMP/dyn2.xml" || why+=" the dry level is not written back as frictionloss;"
check "a dry coulomb exports as frictionloss" "$why"

# An MJCF limited joint imports as MuJoCo's own limit (limit.model "constraint"), and a fitted
# bound goes back into its range (in the file's angle unit)
ARM=data/servo_arm/truth.xml
run import "$ARM" -o "$TMP/arm.json"
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
jqt "$TMP/arm.json" '.joints[] | select(.name == "j4") | .limit == {"lower": -2.4, "upper": -1.35, "model": "constraint"}' ||
    why+=" j4's limit is not the constraint model with the file's range;"
grep -q 'frictionloss' "$TMP/err" && why+=" an euler warning for an Euler model;"
check "MJCF limited joint imports as a constraint limit" "$why"
run params -q "$TMP/arm.json" --set joints.j4.limit.upper=-1.3 -o "$TMP/arm2.json"
run export -q "$TMP/arm2.json" --into "$ARM" -o "$TMP/arm2.xml"
why=""
[ "$rc" -eq 0 ] || why+=" export exit $rc;"
grep -q 'name="j4".*range="-2.4 -1.3"' "$TMP/arm2.xml" || why+=" the fitted bound is not written into the range;"
check "a fitted limit bound exports into the MJCF range" "$why"

# ---- an MJCF motor's ctrlrange (times its gear) or forcerange is its torque limit: limit.effort ----
run import tests/fixtures/mjcf/classes.xml
why=""
jq -e '(.joints[] | select(.name == "wrist") | .limit.effort) == 2' "$TMP/out" >/dev/null ||
    why+=" wrist: limit $(jq -c '.joints[] | select(.name == "wrist") | .limit' "$TMP/out");"
grep -q 'imported as limit.effort 2' "$TMP/err" || why+=" no note of it;"
check "MJCF motor ctrlrange x gear becomes limit.effort" "$why"

# ---- a body's inertia from a mesh geom: exact, warned about MuJoCo's legacy default; an open mesh is refused ----
mkdir -p "$TMP/m/meshes"
printf 'v 0 0 0\nv 0.1 0 0\nv 0 0.08 0\nv 0.01 0.02 0.12\nf 1 3 2\nf 1 2 4\nf 2 3 4\nf 3 1 4\n' >"$TMP/m/meshes/tet.obj"
printf 'v 0 0 0\nv 0.1 0 0\nv 0 0.08 0\nv 0.01 0.02 0.12\nf 1 3 2\nf 1 2 4\nf 2 3 4\n' >"$TMP/m/meshes/open.obj"
cat >"$TMP/m/robot.xml" <<'XML'
<mujoco model="m">
  <compiler angle="radian" meshdir="meshes"/>
  <asset><mesh file="tet.obj"/><mesh name="open" file="open.obj"/></asset>
  <worldbody>
    <body name="b" pos="0 0 1">
      <joint name="j" type="hinge" axis="0 1 0"/>
      <geom type="mesh" mesh="tet" density="2000"/>
    </body>
  </worldbody>
</mujoco>
XML
run import "$TMP/m/robot.xml"
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc: $(tail -n 1 "$TMP/err");"
jq -e '.links[1].mass > 0.32 * (1 - 1e-12) and .links[1].mass < 0.32 * (1 + 1e-12)' "$TMP/out" >/dev/null ||
    why+=" mass $(jq .links[1].mass "$TMP/out"), not 2000 kg/m^3 x 1.6e-4 m^3;"
grep -q "mesh 'tet' (and any other mesh of this file that gives a body its inertia): its volume and inertia are computed exactly" \
    "$TMP/err" || why+=" no note of MuJoCo's legacy rule;"
check "MJCF: a body's inertia from its mesh geom (OBJ under meshdir), exact" "$why"
sed 's/mesh="tet"/mesh="open"/' "$TMP/m/robot.xml" >"$TMP/m/open.xml"
run validate "$TMP/m/open.xml"
why=""
[ "$rc" -eq 2 ] || why+=" exit $rc;"
grep -qF "sysid: error: $TMP/m/open.xml:7: <geom>: the inertia of mesh 'open' (its body has no <inertial>): $TMP/m/meshes/open.obj: the mesh is open: 3 open edges" \
    "$TMP/err" || why+=" message: $(tail -n 1 "$TMP/err");"
check "MJCF: an open mesh giving a body its inertia: exit 2 naming the line, the mesh and its open edges" "$why"

# ---- <option><flag limit="disable" frictionloss="disable">: MuJoCo simulates neither; nor does the import ----
sed 's|<flag contact="disable"/>|<flag contact="disable" limit="disable" frictionloss="disable"/>|' data/servo_arm/nominal.xml >"$TMP/flags.xml"
run import "$TMP/flags.xml"
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
jq -e '[.joints[] | select(has("limit") or (.friction.coulomb // 0) != 0)] | length == 0' "$TMP/out" >/dev/null ||
    why+=" a limit or a coulomb left;"
grep -q "flags.xml:5: <flag>: disabled, so not imported (MuJoCo does not simulate them): 1 joint limit, 7 frictionloss" "$TMP/err" ||
    why+=" warning: $(grep flag "$TMP/err");"
run import data/servo_arm/nominal.xml
grep -q "disabled, so not imported" "$TMP/err" && why+=" a warning where nothing was dropped;"
check "MJCF <flag> disabling limits and frictionloss: neither imported, one warning counting them" "$why"

# ---- compiler autolimits: true unless the file says false (MuJoCo's default since 2.3.0) ----
cat >"$TMP/al.xml" <<'XML'
<mujoco model="al">
  <compiler angle="radian"/>
  <worldbody>
    <body name="b" pos="0 0 1">
      <joint name="j" type="hinge" axis="0 1 0" range="-1 1.5"/>
      <inertial pos="0 0 -0.2" mass="1" diaginertia="0.01 0.01 0.002"/>
    </body>
  </worldbody>
</mujoco>
XML
run import "$TMP/al.xml"
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
jq -e '.joints[0].limit.lower == -1 and .joints[0].limit.upper == 1.5' "$TMP/out" >/dev/null ||
    why+=" default: limit $(jq -c .joints[0].limit "$TMP/out");"
sed 's|<compiler angle="radian"/>|<compiler angle="radian" autolimits="false"/>|' "$TMP/al.xml" >"$TMP/al_false.xml"
run import "$TMP/al_false.xml"
jq -e '.joints[0] | has("limit") | not' "$TMP/out" >/dev/null || why+=" autolimits false: a limit;"
grep -q 'range without limited="true" (and compiler autolimits="false")' "$TMP/err" || why+=" autolimits false: no warning;"
check "MJCF autolimits: true by default (MuJoCo 3), false as the file says" "$why"

echo "cli_import: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
