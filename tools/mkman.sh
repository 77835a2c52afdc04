#!/bin/sh
# mkman.sh SYSID — the man page sysid(1) on stdout, made of the binary's own help texts:
# `sysid --help` for NAME, SYNOPSIS and the command list, then one section per command with
# `sysid COMMAND --help` as it prints it (no fill: the text is already laid out). There is
# no second copy of any text, so `sysid help` and the man page cannot disagree
# (tests/cli_install.sh checks every line of every help text is in the rendered page).
set -eu
sysid=$1
# roff: a backslash is \e, a line starting with . or ' would be a request, - is a minus
roff() { sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/" -e 's/-/\\-/g'; }
version=$("$sysid" --version | sed 's/^sysid //')
help=$("$sysid" --help)
commands=$(printf '%s\n' "$help" | sed -n '/^Commands:/,/^$/p' | sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p')

printf '.TH SYSID 1 "" "sysid %s" "User Commands"\n' "$version"
printf '.SH NAME\nsysid \\- calibrate robot simulation models against logged trajectories\n'
printf '.SH SYNOPSIS\n.nf\n'
printf '%s\n' "$help" | sed -n 's/^usage: //p' | roff
printf '.fi\n.SH DESCRIPTION\n.nf\n'
printf '%s\n' "$help" | sed '/^usage: /d' | roff
printf '.fi\n.SH COMMANDS\n'
for c in $commands; do
    printf '.SS %s\n.nf\n' "$c"
    "$sysid" "$c" --help | roff
    printf '.fi\n'
done
printf '.SH FILES\nFormats of robot.json, logs and fit specs: docs/formats.md of the source.\n'
printf '.SH SEE ALSO\nThe C library: the headers sysid/sid.h and sysid/sid_io.h, pkg\\-config sysid.\n'
