#!/usr/bin/env bash
# tests/golden/run.sh record|check — the outputs of a fixed set of commands, byte for byte.
#
# Each case in cases.txt is one line "NAME: COMMAND" (run by bash from the repository root,
# with $SYSID the binary, $OUT an empty directory for the files it writes and $SCRATCH one for
# files that are not recorded). Its golden
# file tests/golden/NAME.out holds the exit status, stdout, and every file left in $OUT
# (reports without their "timing" object, the one part that differs between identical runs).
# `record` rewrites the golden files (`make golden`); `check` compares (`make test`).
# stderr is not recorded: it carries progress and timings. Review a golden diff like code.
set -u
cd "$(dirname "$0")/../.."
mode=${1:-check}
SYSID=${SYSID:-$PWD/sysid}
export SYSID
GOLD=tests/golden
# A fixed place, so that paths in outputs are the same on every run and build.
TMP=build/golden
mkdir -p "$TMP"

# run_case COMMAND: the case's recorded form on stdout
run_case() {
    local out=$TMP/out
    rm -rf "$out" "$TMP/scratch" && mkdir -p "$out" "$TMP/scratch"
    local rc=0
    OUT=$out SCRATCH=$TMP/scratch bash -c "$1" >"$TMP/stdout" 2>"$TMP/stderr" || rc=$?
    echo "== exit $rc"
    echo "== stdout"
    if jq -e 'type == "object" and has("timing")' "$TMP/stdout" >/dev/null 2>&1; then
        jq --indent 2 'del(.timing)' "$TMP/stdout"
    else
        cat "$TMP/stdout"
    fi
    for f in $(cd "$out" && find . -type f | sort); do
        echo "== file ${f#./}"
        case $f in
        *report*.json) jq --indent 2 'del(.timing)' "$out/$f" ;;
        *) cat "$out/$f" ;;
        esac
    done
}

pass=0 fail=0
names=" "
while IFS= read -r line; do
    case $line in '' | '#'*) continue ;; esac
    name=${line%%:*}
    cmd=${line#*: }
    names+="$name.out "
    if [ "$mode" = record ]; then
        run_case "$cmd" >"$GOLD/$name.out"
        echo "recorded $name"
    elif [ ! -f "$GOLD/$name.out" ]; then
        echo "FAIL: $name: no golden file (run make golden)"
        fail=$((fail + 1))
    elif run_case "$cmd" | diff -u "$GOLD/$name.out" - >"$TMP/diff"; then
        pass=$((pass + 1))
    else
        echo "FAIL: $name: output differs from $GOLD/$name.out:"
        head -40 "$TMP/diff"
        fail=$((fail + 1))
    fi
done <"$GOLD/cases.txt"
# a golden file without a case is a case that was dropped: say so
for f in "$GOLD"/*.out; do
    case $names in
    *" ${f##*/} "*) ;;
    *) if [ "$mode" = record ]; then rm -f "$f"; else echo "FAIL: $f has no case in cases.txt"; fail=$((fail + 1)); fi ;;
    esac
done
if [ "$mode" != record ]; then
    echo "golden: $pass passed, $fail failed"
    [ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
fi
