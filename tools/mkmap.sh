#!/bin/sh
# mkmap.sh CPP HEADER — the linker version script of libsysid: every function the public
# header declares (sid_io.h, which includes sid.h) is exported under the version node
# SYSID_1.0, everything else is local (internal functions are not ABI). The names come from
# the preprocessed header (comments gone), so a function added to sid.h or sid_io.h is
# exported without a second list. CPP: the preprocessor with its -I flags ("cc -E -Iinclude/sysid").
set -eu
cpp=$1
pre=$($cpp -P -D'__attribute__(x)=' "$2")
echo "SYSID_1.0 {"
echo "  global:"
printf '%s\n' "$pre" | grep -o -E '\bsid_[A-Za-z0-9_]+[[:space:]]*\(' | sed -E 's/[[:space:]]*\($//' | sort -u |
    sed 's/.*/    &;/'
echo "  local:"
echo "    *;"
echo "};"
