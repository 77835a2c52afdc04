#!/usr/bin/env bash
# tests/cli_fuzz.sh — what the libFuzzer harnesses (tests/fuzz/) and the reading behind them
# found, as the command line meets it: each case once crashed, corrupted memory (seen under
# `make debug`'s ASan) or gave a wrong result.
# Run from the repository root: SYSID=/abs/path/sysid bash tests/cli_fuzz.sh
set -u
SYSID=${SYSID:-$PWD/sysid}
ROBOT=tests/fixtures/arm2.json
LOG=tests/fixtures/arm2_log.csv
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
pass=0 fail=0

# expect NAME RC GREP ARGS...: sysid ARGS exits RC and its stderr contains GREP ("" : anything).
expect() {
    local name=$1 want=$2 pat=$3
    shift 3
    "$SYSID" "$@" >"$TMP/out" 2>"$TMP/err"
    local rc=$?
    if [ "$rc" -eq "$want" ] && { [ -z "$pat" ] || grep -qF -- "$pat" "$TMP/err"; }; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL: $name: exit $rc (expected $want), stderr should contain '$pat':" >&2
        sed 's/^/    /' "$TMP/err" | head -20 >&2
    fi
}

# fuzz_columns: a fit spec's "columns" entry recorded where it came from, "PATH: columns[...]",
# in a 128-byte field by strcpy from a 160-byte one: a spec at a long path overflowed the heap.
long=$TMP/$(printf 'd%.0s' $(seq 1 120))
mkdir -p "$long"
echo '{"columns": {"q.shoulder": "q.shoulder"}, "scale": {"t": 1}}' >"$long/spec.json"
expect "columns from a spec at a long path" 0 "" validate "$ROBOT" "$LOG" -c "$long/spec.json"
echo '{"columns": {"q.shoulder": "no_such_header"}}' >"$long/bad.json"
expect "a missing column mapped by a spec at a long path" 2 "missing column no_such_header (mapped to q.shoulder by /" \
    validate "$ROBOT" "$LOG" -c "$long/bad.json"

# fuzz_columns' reading: a --scale of 1 did not override the spec's scale for that column (the
# merge took 1 for "not given"), though flags override the file.
echo '{"scale": {"qd.elbow": 2}}' >"$TMP/scale.json"
plain=$("$SYSID" eval "$ROBOT" "$LOG" --json 2>/dev/null | jq .loss)
reset=$("$SYSID" eval "$ROBOT" "$LOG" -c "$TMP/scale.json" --scale qd.elbow=1 --json 2>/dev/null | jq .loss)
scaled=$("$SYSID" eval "$ROBOT" "$LOG" -c "$TMP/scale.json" --json 2>/dev/null | jq .loss)
if [ -n "$plain" ] && [ "$plain" = "$reset" ] && [ "$plain" != "$scaled" ]; then
    pass=$((pass + 1))
else
    fail=$((fail + 1))
    echo "FAIL: --scale NAME=1 over a spec's scale: loss $reset, expected the unscaled $plain (scaled: $scaled)" >&2
fi

echo "cli_fuzz: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
