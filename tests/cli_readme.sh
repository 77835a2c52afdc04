#!/usr/bin/env bash
# The examples in README.md run as written (each `$ ` line of its console blocks, in order,
# from the repository root) and succeed. SYSID names the binary to use for `./sysid`.
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
done < <(awk '/^```console/ {on = 1; next} /^```/ {on = 0} on && /^\$ / {sub(/^\$ /, ""); print}' README.md)
echo "cli_readme: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
