# tests/harness.sh — what the command-line test scripts (tests/cli*.sh) share; sourced from the
# repository root, never run by itself (its name keeps it out of `make test`'s tests/cli*.sh).
#
#   run ARGS...            run sysid; sets $rc, stdout in $TMP/out, stderr in $TMP/err
#   check NAME WHY         pass if WHY is empty, else fail with it (and the last stderr)
#   jqt FILE FILTER        jq -e FILTER holds on FILE
#   no_temp DIR            no temporary file of an atomic write is left in DIR
#   expect_invalid NAME FILE PLACE ARGS...
#                          sysid ARGS exits 2, says "sysid: error: FILE: ...PLACE...", prints
#                          nothing on stdout and (simulate, given -o out.csv) writes no file
# Counters: $passed, $failed; each script prints them and exits nonzero on a failure.

SYSID=${SYSID:-$PWD/sysid}
TMP=$(mktemp -d)
# only the script's own shell removes it: a background command signalled between its fork and its
# exec would run this trap too, in the forked subshell, and take $TMP from under the script
trap '[ "$BASHPID" = "$$" ] && rm -rf "$TMP"' EXIT
passed=0
failed=0

pass() { passed=$((passed + 1)); }
fail() {
    failed=$((failed + 1))
    echo "FAIL: $1" >&2
    # the last command's stderr, without its progress lines
    if [ -s "$TMP/err" ]; then grep -v '^iter ' "$TMP/err" | sed 's/^/    stderr: /' | head -20 >&2; fi
}

run() {
    "$SYSID" "$@" >"$TMP/out" 2>"$TMP/err"
    rc=$?
}

check() {
    if [ -z "$2" ]; then pass; else fail "$1:$2"; fi
}

jqt() { jq -e "$2" "$1" >/dev/null 2>&1; }

no_temp() { ! compgen -G "$1/.*.??????" >/dev/null; }

expect_invalid() {
    local name=$1 file=$2 place=$3 why=""
    shift 3
    rm -f "$TMP"/out.csv "$TMP"/.out.csv.*
    if [ "$1" = simulate ]; then set -- "$@" -o "$TMP/out.csv"; fi
    run "$@"
    [ "$rc" -eq 2 ] || why+=" exit $rc, expected 2;"
    grep -qF -- "sysid: error: $file: " "$TMP/err" || why+=" stderr does not start with 'sysid: error: $file: ';"
    grep -qF -- "$place" "$TMP/err" || why+=" stderr does not name '$place';"
    [ ! -s "$TMP/out" ] || why+=" stdout is not empty;"
    [ ! -e "$TMP/out.csv" ] || why+=" out.csv was written;"
    no_temp "$TMP" || why+=" a temporary file was left;"
    check "$name" "$why"
}

# $TMP/truth.json and $TMP/synth.csv: the pendulum with a heavier pole (0.9 kg) and more friction
# (0.03), replaying data/pendulum/log.csv's commands: data with a known truth, which the
# nominal robot fits exactly. Ends the script (exit 1) when they cannot be made.
pendulum_truth() {
    "$SYSID" params data/pendulum/robot.json --set links.pole.mass=0.9 --set joints.hinge.friction.viscous=0.03 \
        -o "$TMP/truth.json" 2>"$TMP/err" &&
        "$SYSID" simulate "$TMP/truth.json" data/pendulum/log.csv -o "$TMP/synth.csv" 2>"$TMP/err"
    if [ $? -ne 0 ] || [ ! -s "$TMP/synth.csv" ]; then
        fail "setup: cannot make synthetic data with params --set and simulate"
        echo "$passed passed, $failed failed"
        exit 1
    fi
}
