#!/usr/bin/env bash
# tests/cli.sh — run the sysid binary as a user would: exit codes, messages that name the
# file and the place, nothing written on failure, stdout/stderr separation, --json parses.
# Run from the repository root: SYSID=/abs/path/sysid bash tests/cli.sh
set -u
. tests/harness.sh   # run, check, expect_invalid, $TMP, the counters

FIX=tests/fixtures
BAD=$FIX/bad
ROBOT=$FIX/arm2.json
LOG=$FIX/arm2_log.csv
BOX=$FIX/box.json           # a floating box (free joint) with 8 contact spheres
BOXLOG=$FIX/box_log.csv

# ---- robot.json: every mistake names the file and the JSON path (or line and column) ----

bad_robot() { expect_invalid "robot: $1" "$BAD/$1" "$2" simulate "$BAD/$1" "$LOG"; }
bad_robot malformed.json "line 15, column 7"
bad_robot empty.json "empty file"
bad_robot unknown_joint_type.json "joints[1].type"
bad_robot missing_parent.json "joints[1].parent"
bad_robot unknown_parent.json "joints[1].parent: unknown link 'forearm'"
bad_robot cycle.json "cycle"
bad_robot two_roots.json "two roots"
bad_robot duplicate_link.json "links[2].name"
bad_robot duplicate_joint.json "joints[1].name"
bad_robot zero_axis.json "joints[1].axis"
bad_robot negative_mass.json "links[2].mass: expected a positive number, got -1"
bad_robot inertia_not_pd.json "links[1].inertia"
bad_robot inertia_triangle.json "links[1].inertia"
bad_robot wrong_type.json "links[1].mass"
expect_invalid "robot: missing file" "$BAD/no_such_robot.json" "cannot open" \
    simulate "$BAD/no_such_robot.json" "$LOG"
# params and validate report the same way
expect_invalid "params: negative mass" "$BAD/negative_mass.json" "links[2].mass" \
    params "$BAD/negative_mass.json"
expect_invalid "validate: cycle" "$BAD/cycle.json" "cycle" validate "$BAD/cycle.json"

# ---- logs: every mistake names the file, the line and the column ------------------------

bad_log() { expect_invalid "log: $1" "$BAD/$1" "$2" simulate "$ROBOT" "$BAD/$1"; }
bad_log missing_column.csv "missing column q.elbow"
bad_log empty_cell.csv "line 4, column q.elbow: empty cell"
bad_log nul_byte.csv "line 3, column q.shoulder: expected a number, got a cell with a NUL byte"
bad_log nonnumeric.csv "line 4, column q.elbow: expected a number, got 'abc'"
bad_log nan.csv "line 5, column q.shoulder: expected a finite number, got 'nan'"
bad_log inf.csv "line 5, column u.shoulder: expected a finite number, got 'inf'"
bad_log repeated_time.csv "line 5, column t: repeated time"
bad_log decreasing_time.csv "line 5, column t: decreasing time"
bad_log wrong_joints.csv "missing column q.shoulder"
bad_log field_count.csv "line 4: expected 7 fields"
bad_log header_only.csv "no samples"
bad_log empty.csv "empty file"
expect_invalid "log: missing file" "$BAD/no_such_log.csv" "cannot open" \
    simulate "$ROBOT" "$BAD/no_such_log.csv"
expect_invalid "validate: bad log" "$BAD/nan.csv" "line 5" validate "$ROBOT" "$LOG" "$BAD/nan.csv"

# ---- floating bases and contact: the same, for free joints, contact and quaternions ------

bad_box() { expect_invalid "robot: $1" "$BAD/$1" "$2" simulate "$BAD/$1" "$BOXLOG"; }
bad_box free_origin.json "joints[0].origin: a free joint has no origin"
bad_box free_not_root.json "joints[1].parent: a free joint connects a floating link to the root link 'world'"
bad_box sphere_unknown_link.json "contact.spheres[0].link: unknown link 'lid'"
bad_box spheres_without_ground.json "contact.ground: contact spheres need a ground plane"
bad_box negative_stiffness.json "contact.ground.stiffness: expected a non-negative number, got -10000"
bad_box zero_width.json "contact.ground.width: expected a positive number, got 0"
bad_box contact_model.json 'contact.model: expected "compliant" or "hard", got "soft"'
expect_invalid "validate: free joint with origin" "$BAD/free_origin.json" "joints[0].origin" \
    validate "$BAD/free_origin.json"
bad_box_log() { expect_invalid "log: $1" "$BAD/$1" "$2" simulate "$BOX" "$BAD/$1"; }
bad_box_log box_zero_quaternion.csv "line 4, columns q.base.qw, q.base.qx, q.base.qy, q.base.qz: quaternion of norm 0"
bad_box_log box_missing_qz.csv "line 1: missing column q.base.qz"
expect_invalid "validate: zero quaternion" "$BAD/box_zero_quaternion.csv" "line 4" \
    validate "$BOX" "$BOXLOG" "$BAD/box_zero_quaternion.csv"

# ---- fit specs and option values -------------------------------------------------------

expect_invalid "spec: malformed" "$BAD/spec_malformed.json" "line 3, column 3" \
    simulate "$ROBOT" "$LOG" -c "$BAD/spec_malformed.json"
expect_invalid "spec: integrator" "$BAD/spec_integrator.json" "integrator: expected" \
    simulate "$ROBOT" "$LOG" -c "$BAD/spec_integrator.json"
# a joint that moves only massless links, without armature: its mass matrix is singular
cat >"$TMP/massless.json" <<'JSON'
{ "name": "m", "links": [ { "name": "base" }, { "name": "arm" } ],
  "joints": [ { "name": "j", "type": "revolute", "parent": "base", "child": "arm", "axis": [0, 0, 1] } ] }
JSON
expect_invalid "robot: all links massless" "$TMP/massless.json" "joints[0]: no link it moves has a mass" validate "$TMP/massless.json"
# outputs: never over an input; through a symlink (the link stays); into a FIFO or device as it is
cp "$LOG" "$TMP/in.csv"
run simulate "$ROBOT" "$TMP/in.csv" -o "$TMP/in.csv"
check "simulate -o onto its own log" "$([ "$rc" -eq 2 ] || echo " exit $rc;")$(cmp -s "$LOG" "$TMP/in.csv" || echo " the log changed;")"
cp "$ROBOT" "$TMP/real.json" && ln -sf real.json "$TMP/link.json"
run params "$TMP/link.json" --set 'joints.*.armature=0.03' -o "$TMP/link.json"
check "params -o through a symlink" "$([ "$rc" -eq 0 ] || echo " exit $rc;")$([ -L "$TMP/link.json" ] || echo " the link was replaced;")$(grep -q '0.03' "$TMP/real.json" || echo " its target was not written;")"
mkfifo "$TMP/fifo" && { cat "$TMP/fifo" >"$TMP/from_fifo" & }
run simulate "$ROBOT" "$LOG" -o "$TMP/fifo"
wait
check "simulate -o a FIFO" "$([ "$rc" -eq 0 ] || echo " exit $rc;")$([ -p "$TMP/fifo" ] || echo " the FIFO was replaced;")$(head -1 "$TMP/from_fifo" | grep -q '^t,' || echo " nothing came through;")"
# work beyond reason (a typo in a flag, ns read as s) is refused, naming the flags, not run:
# it overflowed step counts (a crash), hung, or ran no step at all
awk -F, 'NR == 1 { print; next } { $1 = sprintf("%.0f", 1796124021000000000 + $1 * 1e9); print }' OFS=, "$LOG" >"$TMP/ns.csv"
for case in "grad --substeps 1000000000 --window 0" "simulate --max-dt 1e-13" "eval --max-dt 1e-13" \
            "grad --max-dt 1e-13 --window 0"; do
    run ${case%% *} "$ROBOT" "$LOG" ${case#* }
    check "too much work: $case" "$([ "$rc" -eq 2 ] || echo " exit $rc;")$(grep -q 'simulation steps (--substeps' "$TMP/err" || echo " no message naming the flags;")"
done
run simulate "$ROBOT" "$TMP/ns.csv" --max-dt 0.001
check "too much work: a log in nanoseconds" "$([ "$rc" -eq 2 ] || echo " exit $rc;")$(grep -q 'check the unit of the time column' "$TMP/err" || echo " no hint at the unit;")"
# a number the element cannot have is named in a warning, not silently dropped
run validate "$FIX/fixed_joint_friction.json"
check "numbers an element cannot have are named" "$([ "$rc" -eq 0 ] || echo " exit $rc;")$(grep -q 'joints\[1\].armature: ignored: only a revolute or prismatic joint has it' "$TMP/err" || echo " no warning for the fixed joint's armature;")$(grep -q 'joints\[0\].motor.resistance: ignored: only a voltage motor has it' "$TMP/err" || echo " no warning for a current motor's resistance;")"
# a key given twice: cJSON would take the first, the user edited the second
echo '{ "window": 0.5, "window": 0.2 }' >"$TMP/dup.json"
expect_invalid "spec: key given twice" "$TMP/dup.json" "window: key given twice" simulate "$ROBOT" "$LOG" -c "$TMP/dup.json"
echo '{ "bounds": { "links.*.mass": [0, 1], "links.*.mass": [0, 2] } }' >"$TMP/dup2.json"
expect_invalid "spec: nested key given twice" "$TMP/dup2.json" "bounds.links.*.mass: key given twice" \
    grad "$ROBOT" "$LOG" -c "$TMP/dup2.json"
# a bound that bounds nothing is as much a typo as a --free that frees nothing
expect_invalid "--bounds matching nothing" "--bounds links.*.mas=0:1" "'links.*.mas' matches no parameter" \
    grad "$ROBOT" "$LOG" --bounds 'links.*.mas=0:1'
echo '{ "free": ["links.*.mass"], "bounds": { "joints.*.frction.viscous": [0, 1] } }' >"$TMP/nobound.json"
expect_invalid "spec: bounds matching nothing" "$TMP/nobound.json" "'joints.*.frction.viscous' matches no parameter" \
    grad "$ROBOT" "$LOG" -c "$TMP/nobound.json"
expect_invalid "flag: --substeps" "--substeps" "expected a whole number" \
    simulate "$ROBOT" "$LOG" --substeps 0
expect_invalid "flag: --integrator" "--integrator" "euler, rk4 or implicitfast" \
    simulate "$ROBOT" "$LOG" --integrator leapfrog
expect_invalid "flag: --columns unknown joint" "--columns" "q.hip" \
    simulate "$ROBOT" "$LOG" --columns q.hip=x
expect_invalid "flag: --columns missing header" "$LOG" "missing column pos9 (mapped to q.elbow by --columns)" \
    simulate "$ROBOT" "$LOG" --columns q.elbow=pos9

# ---- a failed run leaves an existing output file alone ----------------------------------

echo "previous contents" >"$TMP/keep.csv"
run simulate "$ROBOT" "$BAD/nan.csv" -o "$TMP/keep.csv"
check "failure keeps the old output" "$([ "$rc" -eq 2 ] || echo " exit $rc;")$(grep -qx "previous contents" "$TMP/keep.csv" || echo " keep.csv changed;")"

# ---- numerical failure: exit 3, nothing written -----------------------------------------

rm -f "$TMP/out.csv"
run simulate "$ROBOT" "$FIX/arm2_diverge.csv" -o "$TMP/out.csv"
check "diverging simulation" "$([ "$rc" -eq 3 ] || echo " exit $rc, expected 3;")$([ ! -e "$TMP/out.csv" ] || echo " out.csv written;")$(grep -q "not finite" "$TMP/err" || echo " no 'not finite' message;")"

# ---- usage ------------------------------------------------------------------------------

run --help
check "--help" "$([ "$rc" -eq 0 ] || echo " exit $rc;")$(grep -q '^usage: sysid' "$TMP/out" || echo " no usage on stdout;")$(grep -q 'simulate' "$TMP/out" || echo " commands not listed;")$(grep -q '130' "$TMP/out" || echo " exit codes not listed;")$([ ! -s "$TMP/err" ] || echo " stderr not empty;")"

run --version
check "--version" "$([ "$rc" -eq 0 ] || echo " exit $rc;")$(grep -qE '^sysid [0-9]+\.[0-9]+\.[0-9]+$' "$TMP/out" || echo " bad version line;")"

for cmd in params validate simulate fit grad eval diff; do
    run help "$cmd"
    cp "$TMP/out" "$TMP/help1"
    r1=$rc
    run "$cmd" --help
    check "help $cmd == $cmd --help" "$([ "$r1" -eq 0 ] && [ "$rc" -eq 0 ] || echo " exit $r1/$rc;")$(cmp -s "$TMP/help1" "$TMP/out" || echo " texts differ;")$(grep -q "^usage: sysid $cmd" "$TMP/out" || echo " no usage line;")$([ ! -s "$TMP/err" ] || echo " stderr not empty;")"
done

run
check "no command" "$([ "$rc" -eq 2 ] || echo " exit $rc;")$(grep -q 'usage' "$TMP/err" || echo " no usage on stderr;")$([ ! -s "$TMP/out" ] || echo " stdout not empty;")"

run frobnicate
check "unknown command" "$([ "$rc" -eq 2 ] || echo " exit $rc;")$(grep -q "'frobnicate' is not a sysid command" "$TMP/err" || echo " message;")"

run simulate "$ROBOT" "$LOG" --frobnicate
check "unknown option" "$([ "$rc" -eq 2 ] || echo " exit $rc;")$(grep -q "unknown option '--frobnicate'" "$TMP/err" || echo " message;")$(grep -qF "Try 'sysid simulate --help'." "$TMP/err" || echo " no Try line;")$([ ! -s "$TMP/out" ] || echo " stdout not empty;")"

run simulate "$ROBOT"
check "missing argument" "$([ "$rc" -eq 2 ] || echo " exit $rc;")$(grep -q '^usage: sysid simulate' "$TMP/err" || echo " no usage;")$(grep -qF "Try 'sysid simulate --help'." "$TMP/err" || echo " no Try line;")"

run simulate "$ROBOT" "$LOG" -o
check "option without value" "$([ "$rc" -eq 2 ] || echo " exit $rc;")$(grep -q "needs a value" "$TMP/err" || echo " message;")"

# ---- options: a command's help lists exactly the options it accepts ----------------------

COMMANDS="params validate simulate fit grad eval diff excite"

# help_flags CMD: "FLAG value|none" for each flag on the option lines of CMD's help
# ("  -o, --output FILE   ...", "  --json   ...", "  --bounds GLOB=LO:HI | ..." on its own).
help_flags() {
    "$SYSID" "$1" --help | awk '/^  -/ {
        s = substr($0, 3); i = index(s, "  "); if (i) s = substr(s, 1, i - 1)
        n = split(s, t, " "); nf = 0; val = "none"
        for (k = 1; k <= n; k++) {
            f = t[k]; sub(/,$/, "", f)
            if (f ~ /^-/ && val == "none") flags[++nf] = f; else val = "value"
        }
        for (k = 1; k <= nf; k++) print flags[k], val
    }'
}

# parsed CMD FLAG: how the parser takes FLAG alone (no value, no operands): "refused",
# "value" (it asks for one) or "none" (accepted as a switch; the operands are missing then).
parsed() {
    "$SYSID" "$1" "$2" >/dev/null 2>"$TMP/perr"
    if grep -q "unknown option" "$TMP/perr"; then echo refused
    elif grep -q "needs a value" "$TMP/perr"; then echo value
    else echo none; fi
}

# Every flag any help lists, and every short letter, tried on every command.
for cmd in $COMMANDS; do help_flags "$cmd"; done | cut -d' ' -f1 | sort -u >"$TMP/all_flags"
printf -- "-%s\n" {a..z} {A..Z} >>"$TMP/all_flags"
for cmd in $COMMANDS; do
    help_flags "$cmd" >"$TMP/listed"
    why=""
    [ -s "$TMP/listed" ] || why+=" no option lines in the help;"
    while read -r flag; do
        listed=$(awk -v f="$flag" '$1 == f { print $2 }' "$TMP/listed")
        got=$(parsed "$cmd" "$flag")
        if [ -z "$listed" ] && [ "$got" != refused ]; then why+=" $flag accepted but not in the help;"
        elif [ -n "$listed" ] && [ "$got" = refused ]; then why+=" $flag in the help but refused;"
        elif [ -n "$listed" ] && [ "$got" != "$listed" ]; then why+=" $flag: help says $listed, parser takes $got;"
        fi
    done < <(sort -u "$TMP/all_flags")
    : >"$TMP/err"
    check "$cmd: help lists exactly the options it accepts" "$why"
done

# An option of another command is a usage error, named, with the command's Try line.
run eval "$ROBOT" "$LOG" --check
check "eval refuses grad's --check" "$([ "$rc" -eq 2 ] || echo " exit $rc;")$(grep -qF "unknown option '--check'" "$TMP/err" || echo " message;")$(grep -qF "Try 'sysid eval --help'." "$TMP/err" || echo " no Try line;")$([ ! -s "$TMP/out" ] || echo " stdout not empty;")"
run diff "$ROBOT" "$ROBOT" -o "$TMP/out.json"
check "diff refuses -o" "$([ "$rc" -eq 2 ] || echo " exit $rc;")$(grep -qF "unknown option '-o'" "$TMP/err" || echo " message;")$([ ! -e "$TMP/out.json" ] || echo " a file was written;")"
run simulate "$ROBOT" "$LOG" --free '*'
check "simulate refuses the fit-spec flag --free" "$([ "$rc" -eq 2 ] || echo " exit $rc;")$(grep -qF "unknown option '--free'" "$TMP/err" || echo " message;")"
run grad "$ROBOT" "$LOG" --json=yes
check "a switch given a value" "$([ "$rc" -eq 2 ] || echo " exit $rc;")$(grep -qF "option '--json' takes no value" "$TMP/err" || echo " message;")"

# ---- data on stdout, diagnostics on stderr ----------------------------------------------

run params "$ROBOT" --json
check "params --json" "$([ "$rc" -eq 0 ] || echo " exit $rc;")$(jq -e '.parameters | length > 0' "$TMP/out" >/dev/null 2>&1 || echo " not JSON with parameters;")$(jq -e '[.parameters[] | select(.name == "links.upper.mass" and .value == 1.2 and .unit == "kg" and .path == "links[1].mass")] | length == 1' "$TMP/out" >/dev/null 2>&1 || echo " links.upper.mass missing;")$([ ! -s "$TMP/err" ] || echo " stderr not empty;")"

run params "$ROBOT"
check "params table" "$([ "$rc" -eq 0 ] || echo " exit $rc;")$(grep -qE '^joints\.elbow\.motor\.kt +0\.05 +N\*m/A$' "$TMP/out" || echo " no joints.elbow.motor.kt row;")"

run validate "$ROBOT" "$LOG" --json
check "validate --json" "$([ "$rc" -eq 0 ] || echo " exit $rc;")$(jq -e '.robot.moving_joints == 2 and .logs[0].samples == 21 and .logs[0].velocities' "$TMP/out" >/dev/null 2>&1 || echo " unexpected JSON;")"

run validate "$ROBOT" "$LOG"
check "validate summary" "$([ "$rc" -eq 0 ] || echo " exit $rc;")$(grep -q '21 samples over 0.2 s' "$TMP/out" || echo " no sample summary;")$(grep -q '51 parameters' "$TMP/out" || echo " no parameter count;")"

run simulate "$ROBOT" "$LOG"
# stderr: one line, the step chosen and why
check "simulate to stdout" "$([ "$rc" -eq 0 ] || echo " exit $rc;")$([ "$(head -1 "$TMP/out")" = "t,q.shoulder,q.elbow,qd.shoulder,qd.elbow,u.shoulder,u.elbow" ] || echo " header;")$([ "$(wc -l <"$TMP/out")" -eq 22 ] || echo " row count;")$([ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -q '^step: .* substeps\? of the 10 ms median sample interval' "$TMP/err" || echo " stderr is not the step's one line: $(head -c 200 "$TMP/err");")"
cp "$TMP/out" "$TMP/stdout.csv"

rm -f "$TMP/out.csv"
run simulate "$ROBOT" "$LOG" -o "$TMP/out.csv"
check "simulate -o equals stdout" "$([ "$rc" -eq 0 ] || echo " exit $rc;")$(cmp -s "$TMP/out.csv" "$TMP/stdout.csv" || echo " files differ;")$([ ! -s "$TMP/out" ] || echo " stdout not empty;")"

# Renamed and rescaled columns (ms, degrees) from a fit spec give the same trajectory
# start; the unused column is a warning on stderr, stdout stays clean CSV.
run simulate "$ROBOT" "$FIX/arm2_renamed.csv" -c "$FIX/arm2_spec.json" --integrator euler --substeps 1
check "columns and scale from a spec" "$([ "$rc" -eq 0 ] || echo " exit $rc;")$(grep -q 'warning: .*temperature' "$TMP/err" || echo " no warning for the unknown column;")$([ "$(sed -n 3p "$TMP/out" | cut -d, -f1)" = "0.01" ] || echo " time not scaled;")$(awk -F, 'NR == 2 && ($3 - 0.2 > 1e-9 || 0.2 - $3 > 1e-9) { exit 1 }' "$TMP/out" || echo " degrees not scaled;")$(grep -qv '^[-0-9tq.,eu]' "$TMP/out" && echo " non-CSV on stdout;")"

run simulate "$ROBOT" "$LOG" --integrator rk4 --substeps 4 --max-dt 0.001
check "simulate rk4 with substeps" "$([ "$rc" -eq 0 ] || echo " exit $rc;")$([ "$(wc -l <"$TMP/out")" -eq 22 ] || echo " row count;")"

# ---- floating bases and contact: parameters, logs, simulation ---------------------------

run params "$BOX"
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
grep -qE '^contact\.ground\.stiffness +10000 +N/m$' "$TMP/out" || why+=" no ground stiffness row;"
grep -qE '^contact\.ground\.width +0\.001 +m$' "$TMP/out" || why+=" no default width row;"
grep -qE '^contact\.spheres\.c8\.xyz\[2\] +0\.05 +m$' "$TMP/out" || why+=" no sphere xyz row;"
[ "$(grep -c '^contact\.ground\.' "$TMP/out")" -eq 6 ] || why+=" not 6 ground parameters;"
[ "$(grep -c '^contact\.spheres\.c[1-8]\.' "$TMP/out")" -eq 32 ] || why+=" not 32 sphere parameters;"
grep -q '^joints\.' "$TMP/out" && why+=" the free joint has parameters;"
check "params: contact parameters" "$why"

run params "$BOX" --json
check "params --json: contact paths" "$([ "$rc" -eq 0 ] || echo " exit $rc;")$(jq -e '[.parameters[] | select((.name == "contact.spheres.c3.radius" and .path == "contact.spheres[2].radius" and .value == 0.01) or (.name == "contact.ground.damping" and .path == "contact.ground.damping" and .unit == "N*s/m^2"))] | length == 2' "$TMP/out" >/dev/null 2>&1 || echo " unexpected JSON;")"

run validate "$BOX" "$BOXLOG" --json
check "validate: floating box" "$([ "$rc" -eq 0 ] || echo " exit $rc;")$(jq -e '.robot.moving_joints == 1 and .robot.contact.model == "compliant" and .robot.contact.spheres == 8 and .logs[0].samples == 5 and .logs[0].velocities' "$TMP/out" >/dev/null 2>&1 || echo " unexpected JSON;")$([ ! -s "$TMP/err" ] || echo " stderr not empty;")"

BOXQ="t,q.base.x,q.base.y,q.base.z,q.base.qw,q.base.qx,q.base.qy,q.base.qz"
BOXQD="qd.base.vx,qd.base.vy,qd.base.vz,qd.base.wx,qd.base.wy,qd.base.wz"
run simulate "$BOX" "$BOXLOG"
check "simulate: floating box" "$([ "$rc" -eq 0 ] || echo " exit $rc;")$([ "$(head -1 "$TMP/out")" = "$BOXQ,$BOXQD" ] || echo " header;")$([ "$(wc -l <"$TMP/out")" -eq 6 ] || echo " row count;")"

# --contact (and a spec's contact_model) reaches every command that simulates, not only fit:
# the hard model replays the same log differently, and eval's loss on a log with contact
# (MuJoCo's box sliding to a stop) moves with it.
cp "$TMP/out" "$TMP/box_compliant.csv"
run simulate "$BOX" "$BOXLOG" --contact hard
check "simulate --contact hard" "$([ "$rc" -eq 0 ] || echo " exit $rc;")$(cmp -s "$TMP/out" "$TMP/box_compliant.csv" && echo " same output as compliant;")"
run eval data/box/robot.json data/box/slide.csv --json
loss_c=$(jq .loss "$TMP/out")
echo '{ "contact_model": "hard" }' >"$TMP/hard_spec.json"
run eval data/box/robot.json data/box/slide.csv -c "$TMP/hard_spec.json" --json
check "eval: a spec's contact_model applies" "$([ "$rc" -eq 0 ] || echo " exit $rc;")$([ "$(jq .loss "$TMP/out")" != "$loss_c" ] || echo " same loss as compliant;")"
run eval "$BOX" "$BOXLOG" --contact soft
check "eval --contact soft: rejected" "$([ "$rc" -eq 2 ] || echo " exit $rc;")$(grep -qF -- "--contact: expected compliant or hard" "$TMP/err" || echo " message;")"

# Positions only: the start velocity comes from them; the simulated velocities are written.
cut -d, -f1-8 "$BOXLOG" >"$TMP/box_q.csv"
run simulate "$BOX" "$TMP/box_q.csv"
check "simulate: floating box without velocities" "$([ "$rc" -eq 0 ] || echo " exit $rc;")$([ "$(head -1 "$TMP/out")" = "$BOXQ,$BOXQD" ] || echo " header;")"

cut -d, -f1-9 "$BOXLOG" >"$TMP/box_qd1.csv"
expect_invalid "log: some of a free joint's velocities" "$TMP/box_qd1.csv" "missing column qd.base.vy" \
    simulate "$BOX" "$TMP/box_qd1.csv"

# A free joint with a motorised leg: the leg's u.* column follows all the coordinates.
jq '.links += [{ "name": "leg", "mass": 0.2, "com": [0, 0, -0.1],
                 "inertia": { "ixx": 0.001, "iyy": 0.001, "izz": 0.0001 } }]
    | .joints += [{ "name": "hip", "type": "revolute", "parent": "box", "child": "leg",
                    "axis": [0, 1, 0], "motor": { "input": "torque" } }]' "$BOX" >"$TMP/legged.json"
paste -d, "$BOXLOG" <(printf 'q.hip,qd.hip,u.hip\n'; for _ in 1 2 3 4 5; do echo 0.1,0,0.2; done) >"$TMP/legged.csv"
run simulate "$TMP/legged.json" "$TMP/legged.csv" -o "$TMP/legged_sim.csv"
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
[ "$(head -1 "$TMP/legged_sim.csv" 2>/dev/null)" = "$BOXQ,q.hip,$BOXQD,qd.hip,u.hip" ] || why+=" header;"
run validate "$TMP/legged.json" "$TMP/legged_sim.csv"
[ "$rc" -eq 0 ] || why+=" simulate's output does not read back;"
check "simulate: free joint and a motorised joint" "$why"

run eval "$BOX" "$BOXLOG" --window 0
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
grep -qE '^base\.z +[-0-9.e]+ +m$' "$TMP/out" || why+=" no base.z row in m;"
grep -qE '^base\.qw +[-0-9.e]+ +1$' "$TMP/out" || why+=" no base.qw row, unitless;"
grep -qE '^base\.wx +[-0-9.e]+ +rad/s$' "$TMP/out" || why+=" no base.wx row in rad/s;"
check "eval: a row per coordinate of a free joint" "$why"

# ---- writing a robot back: exact values, created fields, everything else as given -------

rm -f "$TMP/set.json"
run params "$ROBOT" --set links.upper.mass=1.3200000000000003 \
    --set 'joints.*.friction.coulomb=0.123456789012345678' -o "$TMP/set.json"
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
[ ! -s "$TMP/out" ] || why+=" stdout not empty;"
jq -e '.links[1].mass == 1.3200000000000003 and .links[1].mass != 1.32' "$TMP/set.json" >/dev/null 2>&1 || why+=" mass not exact;"
jq -e '.joints[1].friction.coulomb == 0.12345678901234568' "$TMP/set.json" >/dev/null 2>&1 || why+=" absent coulomb not created;"
[ "$(jq -S 'del(.links[1].mass, .joints[].friction.coulomb)' "$TMP/set.json" 2>/dev/null)" = \
  "$(jq -S 'del(.links[1].mass, .joints[].friction.coulomb)' "$ROBOT")" ] || why+=" other fields changed;"
"$SYSID" params "$TMP/set.json" --json 2>/dev/null |
    jq -e '.parameters[] | select(.name == "links.upper.mass") | .value == 1.3200000000000003' >/dev/null 2>&1 ||
    why+=" does not read back;"
check "params --set writes exact values back" "$why"

# Fitted contact parameters go back into robot.json, fields the file left out included.
jq 'del(.contact.spheres[7].radius)' "$BOX" >"$TMP/box.json"
rm -f "$TMP/box_set.json"
run params "$TMP/box.json" --set contact.ground.width=0.002 --set contact.ground.stiffness=20000 \
    --set 'contact.spheres.c8.radius=0.02' --set 'contact.spheres.c1.xyz[2]=-0.06' -o "$TMP/box_set.json"
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
jq -e '.contact.ground.width == 0.002 and .contact.ground.stiffness == 20000 and .contact.spheres[7].radius == 0.02 and .contact.spheres[0].xyz == [0.1, 0.075, -0.06]' "$TMP/box_set.json" >/dev/null 2>&1 || why+=" values not written;"
jq -e '.contact.ground | has("smoothing") | not' "$TMP/box_set.json" >/dev/null 2>&1 || why+=" a default was written;"
[ "$(jq -S 'del(.contact.ground.width, .contact.ground.stiffness, .contact.spheres[7].radius, .contact.spheres[0].xyz[2])' "$TMP/box_set.json" 2>/dev/null)" = \
  "$(jq -S 'del(.contact.ground.stiffness, .contact.spheres[0].xyz[2])' "$TMP/box.json")" ] || why+=" other fields changed;"
check "params --set writes contact parameters back" "$why"

# ---- the free set, the start velocity, numbers of flags: each names its flag or JSON path ----
printf '{ "fixed": "links.*" }\n' >"$TMP/fixed_str.json"
printf '{ "free": [3] }\n' >"$TMP/free_num.json"
printf '{ "free": [] }\n' >"$TMP/free_empty.json"
printf '{ "start_velocity": "both" }\n' >"$TMP/sv.json"
printf '{ "fixed": ["links.nothing"] }\n' >"$TMP/fixed_nomatch.json"
P=data/pendulum/robot.json; PL=data/pendulum/log.csv
expect_invalid "--fix matching nothing" "--fix" "'links.nothing' matches no parameter" fit $P $PL --fix links.nothing -o "$TMP/o.json"
expect_invalid "--free-only empty" "--free-only" "expected a parameter name or glob" fit $P $PL --free-only '' -o "$TMP/o.json"
expect_invalid "--fix holds the whole default set" "no free parameters" "--fix holds every one that the default set frees" \
    fit $P $PL --fix '*' -o "$TMP/o.json"
expect_invalid "spec: free list empty" "no free parameters" "the free list is empty" fit $P $PL -c "$TMP/free_empty.json" -o "$TMP/o.json"
expect_invalid "--start-velocity both" "--start-velocity" "expected auto, logged or positions" eval $P $PL --start-velocity both
expect_invalid "spec: fixed not an array" "$TMP/fixed_str.json" "fixed: expected an array" fit $P $PL -c "$TMP/fixed_str.json" -o "$TMP/o.json"
expect_invalid "spec: free entry a number" "$TMP/free_num.json" "free[0]: expected a parameter name or glob" \
    fit $P $PL -c "$TMP/free_num.json" -o "$TMP/o.json"
expect_invalid "spec: start_velocity" "$TMP/sv.json" "start_velocity: expected \"auto\"" eval $P $PL -c "$TMP/sv.json"
expect_invalid "spec: fixed matching nothing" "$TMP/fixed_nomatch.json" "fixed[0]: 'links.nothing' matches no parameter" \
    fit $P $PL -c "$TMP/fixed_nomatch.json" -o "$TMP/o.json"
expect_invalid "--max-dt 0" "--max-dt" "expected a positive number of seconds" simulate $P $PL --max-dt 0
expect_invalid "--window -1" "--window" "expected a non-negative number" eval $P $PL --window -1
expect_invalid "--time-limit -1" "--time-limit" "expected a non-negative number" fit $P $PL --time-limit -1 -o "$TMP/o.json"
expect_invalid "--threads -1" "--threads" "expected a whole number >= 0" eval $P $PL --threads -1
expect_invalid "--max-dt 1e-13: too much work, named" "$P" "simulating $PL: the log interval at t = 0 s" simulate $P $PL --max-dt 1e-13
expect_invalid "--substeps 2e6: too much work, named" "$P" "needs 2e+06 simulation steps" eval $P $PL --substeps 2000000
expect_invalid "--integrator on validate" "--integrator" "expected euler, rk4 or implicitfast" validate $P $PL --integrator rk5
expect_invalid "nominal outside a --bounds" "--bounds links.pole.mass=2:3" "outside its bounds" \
    fit $P $PL --free links.pole.mass --bounds links.pole.mass=2:3 -o "$TMP/o.json"
expect_invalid "-o - and --report - both on stdout" "-o - and --report - would both write to stdout" "give one of them a file" \
    fit $P $PL -o - --report -

expect_invalid "params --set negative mass" "--set" "links[1].mass: expected a positive number" \
    params "$ROBOT" --set links.upper.mass=-1 -o "$TMP/out.csv"
check "params --set negative mass writes nothing" "$([ ! -e "$TMP/out.csv" ] || echo " a file was written;")"

if [ -w /dev/full ]; then
    "$SYSID" params "$ROBOT" >/dev/full 2>"$TMP/err"
    rc=$?
    check "full disk is an error" "$([ "$rc" -ne 0 ] || echo " exit 0;")$(grep -q 'cannot write to standard output' "$TMP/err" || echo " no message;")"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
