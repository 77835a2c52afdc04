#!/usr/bin/env bash
# tests/tools/mpi_memory.sh — sysid-mpi's peak memory per rank (each rank reads only the logs its
# windows need, mpi/shard_read.c) for 1, 2 and 3 ranks on a data set of several logs, against
# sysid and, if OLD is given, against another sysid-mpi build (one whose ranks all read every
# log, e.g. a checkout before shard_read.c: OLD=/path/to/old/build/sysid-mpi). Peak RSS is
# /usr/bin/time's %M (the most resident memory a process had, in kB), one line per rank; the
# logs each rank read in full come from SYSID_MPI_STATS. Also checks that every run gives the
# fitted robot of sysid.
# Run from the repository root after `make && make mpi`:  bash tests/tools/mpi_memory.sh
# Data: LOGS="a.csv b.csv ..." (ROBOT to match), or by default six arm7 logs of 40 to 60 s at
# 1 kHz (300 s, 126 MB of CSV, 53 MB parsed) simulated by MuJoCo (tests/tools/mjlog.c, built
# here). The fit is kept cheap so that the logs, not the fit's work, are what is measured
# (FIT: one free parameter, one step per sample, one iteration); it is the same fit for every run.
set -eu
SYSID=${SYSID:-./sysid}
MPI=${MPI:-build/sysid-mpi}
OLD=${OLD:-}
ROBOT=${ROBOT:-data/arm7/robot.json}
FIT=${FIT:---free-only links.link3.mass --substeps 1 --max-iter 1}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

if [ -z "${LOGS:-}" ]; then
    [ -x build/mjlog ] || cc -O2 tests/tools/mjlog.c -o build/mjlog -lmujoco -lm
    LOGS=""
    for s in 1 2 3 4 5 6; do
        build/mjlog data/arm7/model.xml --duration $((36 + 4 * s)) --rate 1000 --seed $((10 + s)) \
            --q0 j1=0.3,j2=-2.9,j3=2.3,j4=-1.6,j5=2.1,j6=2.4,j7=-0.7 \
            --amp j1=0.3,j2=0.6,j3=1,j4=0.4,j5=0.3,j6=0.2,j7=0.1 >"$TMP/log$s.csv" 2>/dev/null
        LOGS+=" $TMP/log$s.csv"
    done
fi
read -r -a logs <<<"$LOGS"
read -r -a fit <<<"$FIT"
args=(fit "$ROBOT" "${logs[@]}" "${fit[@]}" --threads 1 -q)
mb() { awk -v k="$1" 'BEGIN { printf "%.1f MB", k / 1024 }'; }
csv=$(cat "${logs[@]}" | wc -c)
echo "${#logs[@]} logs, $(awk -v b="$csv" 'BEGIN { printf "%.1f MB", b / 1048576 }') of CSV, $ROBOT, $FIT"

/usr/bin/time -f %M -o "$TMP/rss" "$SYSID" "${args[@]}" -o "$TMP/s.robot"
echo "  sysid:             peak RSS $(mb "$(cat "$TMP/rss")")"
# run LABEL BINARY N: mpirun -n N BINARY under /usr/bin/time, one peak per rank
run() {
    SYSID_MPI_STATS=1 mpirun -n "$3" /usr/bin/time -f "rss %M" "$2" "${args[@]}" -o "$TMP/m.robot" 2>"$TMP/err"
    cmp -s "$TMP/s.robot" "$TMP/m.robot" || { echo "mpi_memory: $1 -n $3: the fitted robot differs from sysid's" >&2; exit 1; }
    local peaks
    peaks=$(sed -n 's/^rss \([0-9]*\)$/\1/p' "$TMP/err" | sort -g | while read -r k; do mb "$k"; echo -n ", "; done)
    printf '  %-8s -n %d:     peak RSS per rank %s\n' "$1" "$3" "${peaks%, }"
    sed -n 's/^sysid-mpi: rank \([0-9]*\) of [0-9]*: logs read in full: \(.*\) (of.*/      rank \1 read logs \2/p' "$TMP/err" | sort
}
for n in 1 2 3; do
    run sysid-mpi "$MPI" $n
    [ -z "$OLD" ] || run old "$OLD" $n
done
