#!/usr/bin/env bash
# tests/cli_runner.sh — the Check runner fails on a selection that names nothing: a suite or
# case name with a typo, or tags that leave no check, exit 2 naming the selector; a good one
# runs and passes. The runner is TEST_RUNNER, else test_runner next to $SYSID (build-debug/)
# or in build/ beside it (./sysid). Runs from tests/, as the runner expects.
set -u
cd "$(dirname "$0")"
SYSID=${SYSID:-$PWD/../sysid}
dir=$(dirname "$SYSID")
if [ -z "${TEST_RUNNER:-}" ]; then
    if [ -x "$dir/test_runner" ]; then TEST_RUNNER=$dir/test_runner; else TEST_RUNNER=$dir/build/test_runner; fi
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
pass=0 fail=0

# expect NAME RC GREP VAR=VALUE...: the runner, with only the given CK_ selectors, exits RC and
# its output contains GREP.
expect() {
    local name=$1 want=$2 pat=$3
    shift 3
    env -u CK_RUN_SUITE -u CK_RUN_CASE -u CK_INCLUDE_TAGS -u CK_EXCLUDE_TAGS "$@" "$TEST_RUNNER" >"$TMP/out" 2>&1
    local rc=$?
    if [ "$rc" -eq "$want" ] && grep -qF -- "$pat" "$TMP/out"; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL: $name: exit $rc (expected $want), output should contain '$pat':" >&2
        sed 's/^/    /' "$TMP/out" | head -20 >&2
    fi
}

if [ ! -x "$TEST_RUNNER" ]; then
    echo "FAIL: no test runner at $TEST_RUNNER (set TEST_RUNNER)" >&2
    exit 1
fi
expect "suite typo" 2 "CK_RUN_SUITE='modle' names no suite" CK_RUN_SUITE=modle
expect "suite typo lists the suites" 2 " model " CK_RUN_SUITE=modle
expect "empty suite" 2 "names no suite" CK_RUN_SUITE=
expect "good suite" 0 "100%: Checks: " CK_RUN_SUITE=model
expect "case typo" 2 "CK_RUN_CASE='validaton' names no test case of suite model" CK_RUN_SUITE=model CK_RUN_CASE=validaton
expect "case of another suite" 2 "names no test case of suite model" CK_RUN_SUITE=model CK_RUN_CASE=box
expect "case typo, any suite" 2 "names no test case of any suite" CK_RUN_CASE=validaton
expect "good case" 0 "100%: Checks: " CK_RUN_SUITE=model CK_RUN_CASE=validation
expect "tag that matches nothing" 2 "no checks ran" CK_RUN_SUITE=model CK_INCLUDE_TAGS=no_such_tag
expect "excluded tag leaves nothing" 2 "no checks ran" CK_RUN_SUITE=contact_recovery CK_EXCLUDE_TAGS=slow
expect "excluded tag leaves the rest" 0 "100%: Checks: " CK_RUN_SUITE=model CK_EXCLUDE_TAGS=slow
echo "cli_runner: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
