#!/usr/bin/env bash
# tests/cli_keepfile.sh — written robots keep the user's file: a write that changes nothing
# is the input byte for byte, and one that changes numbers changes only those (and adds the
# keys a changed default needs, laid out as their siblings). What is written reads back to
# the written parameters bit for bit.
# Run from the repository root: SYSID=/abs/path/sysid bash tests/cli_keepfile.sh
set -u
. tests/harness.sh   # run, check, expect_invalid, $TMP, the counters

K=tests/fixtures/keepfile    # odd.json: tabs, odd key order, 1e-3, 0.50, -0, unicode names,
                             # braces and quotes in strings, an escaped key; oneline.json: one
                             # line, no newline; sparse.json: CRLF, absent fields, "ground": {}

# same_params A B: every parameter of A and B is the same double (sysid diff --tol 0 lists none)
same_params() {
    "$SYSID" diff "$1" "$2" --tol 0 --json 2>/dev/null | jq -e '.count == 0' >/dev/null
}

# ---- a write that changes nothing is the input, byte for byte ----

for f in data/*/robot.json $K/odd.json $K/oneline.json $K/sparse.json; do
    # every parameter set to its own value, as params prints it
    sets=()
    while IFS= read -r s; do sets+=(--set "$s"); done < <("$SYSID" params "$f" --json |
        jq -r '.parameters[] | "\(.name)=\(.value)"')
    run params "$f" "${sets[@]}" -o "$TMP/same.json"
    why=""
    [ "$rc" -eq 0 ] || why+=" exit $rc;"
    cmp -s "$f" "$TMP/same.json" || why+=" the file changed: $(diff "$f" "$TMP/same.json" | head -4 | tr '\n' ' ')"
    check "params --set of every value to itself keeps $f" "$why"
done

# the same number in another spelling is no change: "1.20", "-0", "2.6e-2" stay
run params $K/odd.json --set 'links.bras_é.mass=1.2' --set 'gravity[1]=-0.0' \
    --set 'links.bras_é.inertia.ixx=0.026' --set 'joints.épaule.friction.stribeck.torque=0.02' -o "$TMP/same.json"
check "another spelling of the same number keeps the file" \
    "$([ "$rc" -eq 0 ] || echo " exit $rc;")$(cmp -s $K/odd.json "$TMP/same.json" || echo " changed;")"

# a UTF-8 byte order mark (cJSON skips it) stays, and the file is still patched
{ printf '\357\273\277'; cat data/pendulum/robot.json; } >"$TMP/bom.json"
run params "$TMP/bom.json" --set joints.hinge.armature=0.003 -o "$TMP/bom_out.json"
check "a byte order mark is kept and the file patched" \
    "$([ "$rc" -eq 0 ] || echo " exit $rc;")$([ ! -s "$TMP/err" ] || echo " warned;")$(
    [ "$(diff "$TMP/bom.json" "$TMP/bom_out.json" | grep -c '^[<>]')" -eq 2 ] || echo " not one line changed;")"

# a fit that moves nothing (the example logs were simulated from the example robots, one step a
# sample: at that step the robots reproduce them exactly)
for r in pendulum double_pendulum arm7; do
    cp data/$r/robot.json "$TMP/$r.json"
    run fit "$TMP/$r.json" data/$r/log.csv --start logged --free 'joints.*.friction.viscous' --max-iter 5 --substeps 1 \
        --in-place -q
    why=""
    [ "$rc" -eq 0 ] || why+=" exit $rc;"
    cmp -s data/$r/robot.json "$TMP/$r.json" || why+=" the file changed: $(diff data/$r/robot.json "$TMP/$r.json" | head -4 | tr '\n' ' ')"
    check "a fit that changes nothing leaves $r's robot as it was (--in-place)" "$why"
done

# make demo's robot, with its one free parameter held where it is (bounds lo = hi)
D=data/dfki_pendulum
cp $D/robot.json "$TMP/dfki_same.json"
run fit "$TMP/dfki_same.json" $D/sysid_pd_data_measured.csv -c $D/fit.json --free-only links.pole.mass \
    --bounds 'links.pole.mass=0.1830558:0.1830558' --in-place -q
check "a fit held at the nominal values leaves the dfki robot as it was" \
    "$([ "$rc" -eq 0 ] || echo " exit $rc;")$(cmp -s $D/robot.json "$TMP/dfki_same.json" || echo " changed;")"

# ---- changed numbers change only themselves; absent keys are added where they belong ----

# The expected files were reviewed by hand: `diff $K/odd.json $K/odd_set.json` and so on.
run params $K/odd.json --set 'joints.épaule.friction.viscous=0.002' --set 'links.bras_é.inertia.ixx=0.027' \
    --set 'gravity[2]=-9.80665' --set 'links.bras_é.mass=1.2' --set 'gravity[1]=-0' \
    --set 'joints.épaule.armature=0.015' --set joints.coude.armature=0.02 --set joints.coude.friction.viscous=0.1 \
    --set 'links.avant.com[2]=-0.1' --set 'links.avant.inertia.ixy=1e-05' \
    --set joints.épaule.friction.stribeck.torque=0.03 --set joints.coude.motor.gear=2.5 -o "$TMP/odd.json"
check "odd layout: only the set numbers change, added keys in their objects" \
    "$([ "$rc" -eq 0 ] || echo " exit $rc;")$(diff $K/odd_set.json "$TMP/odd.json" >/dev/null || echo " differs from odd_set.json: $(diff $K/odd_set.json "$TMP/odd.json" | head -6 | tr '\n' ' ')")"

run params $K/oneline.json --set links.pole.mass=0.5 --set joints.hinge.friction.coulomb=0.05 \
    --set 'links.pole.com[2]=-0.45' --set joints.hinge.motor.kt=0.9 -o "$TMP/oneline.json"
check "one-line JSON without a newline stays one line without a newline" \
    "$([ "$rc" -eq 0 ] || echo " exit $rc;")$(cmp -s $K/oneline_set.json "$TMP/oneline.json" || echo " differs from oneline_set.json;")"

run params $K/sparse.json --set contact.ground.friction=0.8 --set contact.spheres.tip.radius=0.01 \
    --set 'contact.spheres.tip.xyz[2]=-0.12' --set joints.j2.friction.stribeck.torque=0.15 \
    --set joints.j1.motor.ke=0.02 --set 'links.hand.com[0]=0.01' --set joints.j2.friction.viscous=0.5 \
    --set 'joints.j1.origin.xyz[2]=0.3' -o "$TMP/sparse.json"
check "CRLF, ground {}, sphere radius, nested stribeck, missing com and origin" \
    "$([ "$rc" -eq 0 ] || echo " exit $rc;")$(cmp -s $K/sparse_set.json "$TMP/sparse.json" || echo " differs from sparse_set.json: $(diff $K/sparse_set.json "$TMP/sparse.json" | head -6 | tr '\n' ' ')")"

# added keys land in the right object, once: the escaped "\u0061rmature" is armature
why=""
jq -e '.joints[1].armature == 0.02 and .joints[1].friction == {"viscous": 0.1}
       and (.joints[0] | keys | map(select(. == "armature")) | length) == 1 and .joints[0].armature == 0.015
       and .links[2].com == [0, 0, -0.1] and .links[2].inertia.ixy == 1e-05 and (.links[1] | has("com"))' \
    "$TMP/odd.json" >/dev/null || why+=" wrong place or duplicated;"
jq -e '.contact.ground == {"friction": 0.8} and .contact.spheres[0].radius == 0.01
       and .joints[0].origin == {"xyz": [0, 0, 0.3]} and .joints[0].motor.ke == 0.02
       and .joints[1].friction == {"stribeck": {"torque": 0.15, "velocity": 0.2}, "viscous": 0.5}' \
    "$TMP/sparse.json" >/dev/null || why+=" sparse: wrong place;"
check "added keys are in the objects that own them" "$why"

# what is written reads back as what was set, bit for bit, and nothing else moved
for c in odd oneline sparse; do
    run diff $K/$c.json "$TMP/$c.json" --json
    got=$(jq -c '[.differences[] | {name, new}]' "$TMP/out")
    why=""
    [ "$rc" -eq 0 ] || why+=" diff exit $rc;"
    same_params $K/${c}_set.json "$TMP/$c.json" || why+=" reads back differently;"
    case $c in
    odd) want='[{"name":"gravity[2]","new":-9.80665},{"name":"links.bras_é.inertia.ixx","new":0.027},{"name":"links.avant.com[2]","new":-0.1},{"name":"links.avant.inertia.ixy","new":1e-05},{"name":"joints.épaule.armature","new":0.015},{"name":"joints.épaule.friction.viscous","new":0.002},{"name":"joints.épaule.friction.stribeck.torque","new":0.03},{"name":"joints.coude.armature","new":0.02},{"name":"joints.coude.friction.viscous","new":0.1},{"name":"joints.coude.motor.gear","new":2.5}]' ;;
    *) want=$got ;;
    esac
    [ "$got" = "$want" ] || why+=" changed: $got;"
    check "$c: reloads with exactly the set parameters changed" "$why"
done

# standard input is patched too
run params - --set 'joints.épaule.friction.viscous=0.002' --set 'links.bras_é.inertia.ixx=0.027' \
    --set 'gravity[2]=-9.80665' --set 'joints.épaule.armature=0.015' --set joints.coude.armature=0.02 \
    --set joints.coude.friction.viscous=0.1 --set 'links.avant.com[2]=-0.1' --set 'links.avant.inertia.ixy=1e-05' \
    --set joints.épaule.friction.stribeck.torque=0.03 --set joints.coude.motor.gear=2.5 -o "$TMP/stdin.json" <$K/odd.json
check "a robot read from standard input is patched as a file is" \
    "$([ "$rc" -eq 0 ] || echo " exit $rc;")$(cmp -s $K/odd_set.json "$TMP/stdin.json" || echo " differs;")"

# ---- fits: only the fitted numbers' lines change ----

# make demo's fit: mass and com[2] share a line, viscous and coulomb another
run fit $D/robot.json $D/sysid_pd_data_measured.csv -c $D/fit.json -o "$TMP/dfki.json" --report "$TMP/dfki_report.json" -q
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
[ "$(diff $D/robot.json "$TMP/dfki.json" | grep -c '^[<>]')" -eq 4 ] || why+=" not 2 lines changed: $(diff $D/robot.json "$TMP/dfki.json" | tr '\n' ' ');"
diff <(diff $D/robot.json "$TMP/dfki.json" | grep '^<' | sed -E 's/-?[0-9][0-9.e+-]*/N/g') \
    <(diff $D/robot.json "$TMP/dfki.json" | grep '^>' | sed -E 's/^>/</; s/-?[0-9][0-9.e+-]*/N/g') >/dev/null ||
    why+=" more than numbers changed;"
# the fitted robot holds the report's fitted values, bit for bit (jq compares doubles)
"$SYSID" params "$TMP/dfki.json" --json >"$TMP/p.json" 2>/dev/null
jq -e -n --slurpfile r "$TMP/dfki_report.json" --slurpfile p "$TMP/p.json" \
    '[$r[0].parameters[] | .name as $n | .fitted as $v | $p[0].parameters[] | select(.name == $n) | .value == $v] |
     length == 4 and all' >/dev/null || why+=" the written values are not the report's;"
check "dfki fit (make demo): two lines change, in their numbers only, to the report's values" "$why"

# a fit that puts a default field the file does not have (armature): added to its joint
grep -v '"armature"' data/pendulum/robot.json >"$TMP/p0.json"
cp "$TMP/p0.json" "$TMP/p0.orig"
run fit "$TMP/p0.json" data/pendulum/log.csv --start logged --free joints.hinge.armature --in-place \
    --report "$TMP/r.json" -q
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
[ "$(diff "$TMP/p0.orig" "$TMP/p0.json" | grep -c '^[<>]')" -eq 3 ] || why+=" not one line changed and one added;"
diff "$TMP/p0.orig" "$TMP/p0.json" | grep -q '^>       "motor": { "input": "torque", "gear": 1.0, "kt": 1.0 },$' ||
    why+=" the joint's last line did not just get its comma;"
diff "$TMP/p0.orig" "$TMP/p0.json" | grep -Eq '^>       "armature": [0-9.e-]+ }$' || why+=" no armature line as its siblings';"
[ "$(jq '.joints[0].armature' "$TMP/p0.json")" = "$(jq '.parameters[0].fitted' "$TMP/r.json")" ] ||
    why+=" the armature is not in joints[0] or not the fitted value;"
"$SYSID" params "$TMP/p0.json" >/dev/null 2>"$TMP/err" || why+=" does not load;"
check "a fitted armature the file lacked is added to its joint (--in-place)" "$why"

# ---- nothing written on error, as before ----
rm -f "$TMP/bad.json"
run params $K/odd.json --set 'links.avant.mass=-1' -o "$TMP/bad.json"
check "an invalid --set writes nothing" "$([ "$rc" -eq 2 ] || echo " exit $rc;")$([ ! -e "$TMP/bad.json" ] || echo " written;")"

echo "cli_keepfile: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
