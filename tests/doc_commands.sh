#!/usr/bin/env bash
# tests/doc_commands.sh — the commands of the documentation's examples: every `$ ` line of the
# ```console blocks of README.md and of docs/*.md, in the order of DOCS below, without the `$ `.
# Later commands read files that earlier ones wrote, so the order matters. Read by
# tests/cli_readme.sh (they run and succeed) and the golden case `readme` of
# tests/golden/cases.txt (their outputs, byte for byte). Run from anywhere; paths are the
# repository root's. A Markdown file of docs/ that is not listed is an error (exit 2): its
# examples would go untested.
set -u
cd "$(dirname "$0")/.."
DOCS=(
    README.md
    docs/real-logs.md
    docs/own-robot.md
    docs/servos.md
    docs/experiment.md
    docs/mpi.md
    docs/library.md
    docs/debian.md
    docs/commands.md
    docs/formats.md
    docs/how-it-works.md
    docs/intervals.md
    docs/correctness.md
    docs/adjoint.md
    docs/simulation-step.md
    docs/contact.md
    docs/layout.md
    docs/not-yet.md
    docs/performance.md
    docs/recovery.md
    docs/real-robots.md
    docs/README.md
)
for f in docs/*.md; do
    case " ${DOCS[*]} " in
    *" $f "*) ;;
    *) echo "tests/doc_commands.sh: $f is not in its list DOCS" >&2; exit 2 ;;
    esac
done
awk 'FNR == 1 {on = 0} /^```console/ {on = 1; next} /^```/ {on = 0} on && /^\$ / {sub(/^\$ /, ""); print}' "${DOCS[@]}"
