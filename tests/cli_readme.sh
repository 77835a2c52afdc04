#!/usr/bin/env bash
# The examples of README.md and docs/ run as written (each `$ ` line of their console blocks,
# in the order tests/doc_commands.sh gives, from the repository root) and succeed. SYSID names
# the binary to use for `./sysid`.
set -u
cd "$(dirname "$0")/.."
SYSID=${SYSID:-$PWD/sysid}
mkdir -p build
pass=0 fail=0
while IFS= read -r cmd; do
    run=${cmd/#.\/sysid/$SYSID}
    if out=$(bash -c "$run" 2>&1); then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        printf 'FAIL (exit %s): %s\n%s\n' "$?" "$cmd" "$out" | head -20
    fi
done < <(bash tests/doc_commands.sh || echo "exit 1 # tests/doc_commands.sh failed")
echo "cli_readme: $pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
