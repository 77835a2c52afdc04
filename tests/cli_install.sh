#!/usr/bin/env bash
# tests/cli_install.sh — `make install` into a staging directory and what a user gets there:
# exactly the files docs/library.md lists; a shared library with its soname that exports the public
# headers' functions and nothing else, under SYSID_1.0; headers that compile alone in C and
# C++; sysid.pc good for shared and static linking (the example, examples/fit_friction.c,
# built with `pkg-config --cflags --libs sysid` against the stage and run from it, gives the
# numbers `sysid fit` gives on the same data); a man page holding every line of every help
# text; bash completion; and `make uninstall` leaving nothing behind.
# SYSID_BUILD: the build directory; SYSID_LDFLAGS: sanitizer flags the library was built
# with, which the example needs too (a sanitizer build run with CK_EXCLUDE_TAGS=slow fits the
# example on data/pendulum instead of data/arm7); SYSID_NO_INSTALL=1 (make debug) skips it.
set -u
cd "$(dirname "$0")/.."
if [ -n "${SYSID_NO_INSTALL:-}" ]; then echo "cli_install: skipped (SYSID_NO_INSTALL, make debug)"; exit 0; fi
source tests/harness.sh
B=${SYSID_BUILD:-$PWD/build}
XFLAGS=${SYSID_LDFLAGS:-}
CC=${CC:-cc}
stage=$TMP/stage

make -s --no-print-directory install DESTDIR="$stage" PREFIX=/usr B="$B" BIN="$SYSID" >"$TMP/make.out" 2>&1
check install "$( [ $? -eq 0 ] || { echo " make install failed:"; head -5 "$TMP/make.out"; })"

# ---- the files ----
(cd "$stage" && find . ! -type d | sort) >"$TMP/files"
cat >"$TMP/want" <<'LIST'
./usr/bin/sysid
./usr/include/sysid/sid.h
./usr/include/sysid/sid_io.h
./usr/include/sysid/sid_params.h
./usr/lib/libsysid.a
./usr/lib/libsysid.so
./usr/lib/libsysid.so.1
./usr/lib/libsysid.so.1.0.0
./usr/lib/pkgconfig/sysid.pc
./usr/share/bash-completion/completions/sysid
./usr/share/man/man1/sysid.1
LIST
check files "$(diff "$TMP/want" "$TMP/files" | sed -n 's/^[<>].*/&;/p' | tr '\n' ' ')"
lib=$stage/usr/lib
check symlinks "$( [ "$(readlink "$lib/libsysid.so")" = libsysid.so.1 ] && [ "$(readlink "$lib/libsysid.so.1")" = libsysid.so.1.0.0 ] || echo " libsysid.so -> .so.1 -> .so.1.0.0 expected")"
check soname "$(readelf -d "$lib/libsysid.so.1.0.0" | grep -q 'SONAME.*\[libsysid.so.1\]' || echo " no SONAME libsysid.so.1")"

# ---- exports: the declared functions, all under SYSID_1.0; no internal one ----
declared=$(sh tools/mkmap.sh "$CC -E -Iinclude/sysid" include/sysid/sid_io.h | sed -n 's/^    \(sid_[a-z0-9_]*\);$/\1/p')
objdump -T "$lib/libsysid.so.1.0.0" | awk '$2 == "g" && $4 != "*UND*" { print $(NF-1), $NF }' | grep -v '^SYSID_1.0 SYSID_1.0$' >"$TMP/exported"
why=""
n=$(wc -l <"$TMP/exported")
[ "$n" -ge 100 ] || why+=" only $n symbols exported;"
grep -v '^SYSID_1\.0 ' "$TMP/exported" | head -3 | while read -r v s; do echo " $s has version $v, not SYSID_1.0;"; done >"$TMP/badver"
why+=$(cat "$TMP/badver")
while read -r v s; do
    printf '%s\n' "$declared" | grep -qx "$s" || why+=" $s is exported but not in sid.h or sid_io.h;"
done <"$TMP/exported"
for s in robot_load fitspec_init traj_csv_load sid_io_warn sid_rpy_matrix; do
    grep -q " $s\$" "$TMP/exported" && why+=" internal $s is exported;"
done
for s in sid_version sid_io_robot_load sid_io_fit_run sid_fit sid_model_create; do
    grep -q " $s\$" "$TMP/exported" || why+=" $s is not exported;"
done
check exports "$why"

# ---- the headers alone, in C and C++ (extern "C": the C++ TU links against the library) ----
inc=$stage/usr/include
printf '#include <sysid/sid_io.h>\nint main(void) { return sid_version()[0] == 0; }\n' >"$TMP/h.c"
printf '#include <sysid/sid.h>\nint main(void) { sid_error e = { SID_OK, "" }; return (int)e.status; }\n' >"$TMP/h2.c"
printf '#include <sysid/sid_io.h>\n#include <cstring>\nint main() { return std::strcmp(sid_version(), SID_VERSION) != 0; }\n' >"$TMP/h.cc"
why=""
$CC -std=c11 -Wall -Wextra -Werror -pedantic -I"$inc" -c "$TMP/h.c" -o "$TMP/h.o" 2>"$TMP/err" || why+=" sid_io.h alone does not compile as C11: $(head -2 "$TMP/err");"
$CC -std=c11 -Wall -Wextra -Werror -pedantic -I"$inc" -c "$TMP/h2.c" -o "$TMP/h2.o" 2>"$TMP/err" || why+=" sid.h alone does not compile as C11: $(head -2 "$TMP/err");"
if command -v c++ >/dev/null; then
    c++ -std=c++11 -Wall -Wextra -Werror -I"$inc" "$TMP/h.cc" -L"$lib" -lsysid $XFLAGS -o "$TMP/hcc" 2>"$TMP/err" &&
        LD_LIBRARY_PATH=$lib "$TMP/hcc" || why+=" the C++ TU does not build, link or run: $(head -3 "$TMP/err");"
else
    echo "cli_install: no C++ compiler: the C++ header check is skipped" >&2
fi
check headers "$why"

# ---- pkg-config, the example (shared and static) ----
export PKG_CONFIG_PATH=$lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$stage
flags=$(pkg-config --cflags --libs sysid 2>"$TMP/err")
check pkgconfig "$( [[ " $flags " == *" -I$inc "* && " $flags " == *" -L$lib "* && " $flags " == *" -lsysid "* ]] || echo " pkg-config --cflags --libs sysid: '$flags' $(cat "$TMP/err")")"
check pc_version "$( [ "$(pkg-config --modversion sysid)" = "$("$SYSID" --version | sed 's/^sysid //')" ] || echo " sysid.pc's version is not sysid --version's")"
$CC -std=c11 -Wall -Wextra -Werror -pedantic examples/fit_friction.c $flags $XFLAGS -o "$TMP/fit_friction" 2>"$TMP/err"
check example_builds "$( [ $? -eq 0 ] || head -5 "$TMP/err")"
static=$(pkg-config --static --cflags --libs sysid | sed 's/-lsysid/-l:libsysid.a/')
$CC -std=c11 examples/fit_friction.c $static $XFLAGS -o "$TMP/fit_friction_static" 2>"$TMP/err"
check example_static "$( [ $? -eq 0 ] || head -5 "$TMP/err"; ! ldd "$TMP/fit_friction_static" 2>/dev/null | grep -q libsysid || echo " links libsysid.so")"
check example_uses_stage "$(LD_LIBRARY_PATH=$lib ldd "$TMP/fit_friction" | grep -q "libsysid.so.1 => $lib/libsysid.so.1" || echo " libsysid.so.1 is not the staged one")"

# The example against `sysid fit` of the same data: every fitted value to the bit (the same
# calls on the same inputs), standard errors and losses as the example rounds them. On
# data/arm7 (7 joints, ~10 s each); the sanitizer run (`make debug` leaves out "slow" checks)
# takes data/pendulum, 1 joint.
if [[ ${CK_EXCLUDE_TAGS:-} == *slow* ]]; then data=data/pendulum njoint=1; else data=data/arm7 njoint=7; fi
LD_LIBRARY_PATH=$lib "$TMP/fit_friction" $data/robot.json $data/log.csv >"$TMP/ex.out" 2>"$TMP/ex.err"
check example_runs "$( [ $? -eq 0 ] || { echo " exit $?:"; head -3 "$TMP/ex.err"; })"
run fit $data/robot.json $data/log.csv --free-only 'joints.*.friction.viscous' -q --json -o "$TMP/fitted.json"
cp "$TMP/out" "$TMP/report.json"
jq -r '"\(.loss.before) \(.loss.after) \(.iterations)", (.parameters[] | "\(.name) \(.nominal) \(.fitted) \(.stderr)")' \
    "$TMP/report.json" >"$TMP/cli.txt"
why=$(awk -v ver="$("$SYSID" --version | sed 's/^sysid //')" -v njoint=$njoint '
    NR == FNR { cli[FNR] = $0; ncli = FNR; next }
    FNR == 1 {
        split(cli[1], c, " ")
        want = sprintf("libsysid %s: loss %.6g -> %.6g, %d iterations", ver, c[1], c[2], c[3])
        if ($0 != want) printf " first line \"%s\", expected \"%s\";", $0, want
        next
    }
    {
        split(cli[FNR], c, " "); n++
        if ($1 != c[1]) printf " line %d names %s, sysid fit %s;", FNR, $1, c[1]
        else if ($3 + 0 != c[3] + 0) printf " %s: fitted %s, sysid fit %s;", $1, $3, c[3]
        else if ($5 != sprintf("%.3g", c[4])) printf " %s: stderr %s, sysid fit %s;", $1, $5, c[4]
    }
    END { if (n != ncli - 1 || n != njoint) printf " %d parameters, sysid fit %d (%d joints);", n, ncli - 1, njoint }' \
    "$TMP/cli.txt" "$TMP/ex.out")
check example_matches_fit "$why"
# the robot sysid fit wrote has the fitted values the example printed
why=$(jq -r '.joints[] | "joints.\(.name).friction.viscous \(.friction.viscous)"' "$TMP/fitted.json" |
      awk -v njoint=$njoint 'NR == FNR { v[$1] = $2; next }
          FNR > 1 && ($1 in v) { n++; if (v[$1] + 0 != $3 + 0) printf " %s: file %s, example %s;", $1, v[$1], $3 }
          END { if (n != njoint) printf " %d fitted values found in the robot sysid fit wrote;", n }' - "$TMP/ex.out")
check fitted_file "$why"
LD_LIBRARY_PATH=$lib "$TMP/fit_friction" data/pendulum/robot.json data/pendulum/log.csv >"$TMP/p1" 2>&1
"$TMP/fit_friction_static" data/pendulum/robot.json data/pendulum/log.csv >"$TMP/p2" 2>&1
check static_same "$(cmp -s "$TMP/p1" "$TMP/p2" && grep -q 'joints.hinge.friction.viscous' "$TMP/p1" || echo " shared and static examples differ on data/pendulum")"
LD_LIBRARY_PATH=$lib "$TMP/fit_friction" data/arm7/robot.json no_such.csv >"$TMP/out" 2>"$TMP/err"
check example_error "$( [ $? -eq 2 ] && grep -q '^fit_friction: no_such.csv: ' "$TMP/err" || echo " a missing log: exit 2 and a message naming it expected")"

# ---- version macros ----
v=$(sed -n 's/^#define SID_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' "$inc/sysid/sid_io.h" | paste -sd.)
check version_macros "$( [ "$v" = "$("$SYSID" --version | sed 's/^sysid //')" ] || echo " SID_VERSION_MAJOR.MINOR.PATCH = $v, sysid --version says otherwise")"

# ---- the man page: every line of every help text, rendered ----
man=$stage/usr/share/man/man1/sysid.1
norm() { sed -e 's/\xe2\x88\x92/-/g' -e 's/\xe2\x80\x90/-/g' -e 's/\xe2\x80\x99/'"'"'/g' -e 's/\xe2\x80\x98/'"'"'/g' \
             -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' -e 's/[[:space:]][[:space:]]*/ /g'; }
groff -man -Tutf8 -P-cbu "$man" 2>"$TMP/err" | norm >"$TMP/man.txt"
check man_renders "$( [ -s "$TMP/man.txt" ] && [ ! -s "$TMP/err" ] || { echo " groff:"; head -3 "$TMP/err"; })"
why=""
cmds=$("$SYSID" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p')
[ "$(printf '%s\n' "$cmds" | wc -l)" -ge 10 ] || why+=" fewer than 10 commands in sysid --help;"
for c in "" $cmds; do
    # (the top-level usage line is the SYNOPSIS, without its "usage: ")
    if [ -z "$c" ]; then "$SYSID" --help | sed 's/^usage: //'; else "$SYSID" "$c" --help; fi | norm | grep -v '^$' >"$TMP/help.txt"
    missing=$(grep -vxF -f "$TMP/man.txt" "$TMP/help.txt" | head -2)
    [ -z "$missing" ] || why+=" sysid ${c:---help}: not in the man page: $missing;"
    [ -z "$c" ] || grep -qx "$c" "$TMP/man.txt" || why+=" no section $c;"
done
check man_has_help "$why"

# ---- bash completion ----
comp=$stage/usr/share/bash-completion/completions/sysid
complete_words() {   # complete_words WORD... : the completions of the last word
    SYSID_COMP=$comp bash -c 'source "$SYSID_COMP"; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _sysid; printf "%s\n" "${COMPREPLY[@]}"' _ "$@"
}
why=""
[ "$(complete_words "$SYSID" fi)" = fit ] || why+=" 'fi' does not complete to fit;"
[ "$(complete_words "$SYSID" help va)" = validate ] || why+=" 'help va' does not complete to validate;"
[ "$(complete_words "$SYSID" fit data/arm7/robot.json --free-o)" = --free-only ] || why+=" fit --free-o: not --free-only;"
complete_words "$SYSID" validate x --in | grep -q -- --in-place && why+=" validate offers fit's --in-place;"
complete_words "$SYSID" export x --in | grep -qx -- --into || why+=" export --in does not offer --into;"
[ "$(complete_words "$SYSID" fit x --integrator "" | tr '\n' ' ')" = "euler rk4 implicitfast " ] || why+=" --integrator: not euler rk4 implicitfast;"
complete_words "$SYSID" fit data/arm7/robot.json data/arm7/log.csv --free joints.j1.fr >"$TMP/names"
[ "$(cat "$TMP/names" | tr '\n' ' ')" = "joints.j1.friction.viscous joints.j1.friction.coulomb joints.j1.friction.smoothing " ] ||
    why+=" --free joints.j1.fr: $(tr '\n' ' ' <"$TMP/names");"
n=$(complete_words "$SYSID" params data/arm7/robot.json --set "" | wc -l)
[ "$n" -eq "$(( $("$SYSID" params data/arm7/robot.json | wc -l) - 1 ))" ] || why+=" --set offers $n names, not every parameter;"
check completion "$why"

# ---- uninstall ----
make -s --no-print-directory uninstall DESTDIR="$stage" PREFIX=/usr B="$B" BIN="$SYSID" >"$TMP/make.out" 2>&1
check uninstall "$(left=$(cd "$stage" && find . ! -type d); [ -z "$left" ] || echo " left: $left")"

echo "cli_install: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
