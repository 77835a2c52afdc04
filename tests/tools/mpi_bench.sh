#!/usr/bin/env bash
# tests/tools/mpi_bench.sh — sysid-mpi's speed-up and traffic, side by side in one run: the same
# fit by sysid (1 thread), by mpirun -n 1 and by mpirun -n 2 sysid-mpi (1 thread per rank),
# interleaved REPS times (the best of each is shown: the machine may be shared), for L-BFGS and
# LM; and the bytes the gathers moved (SYSID_MPI_STATS), per iteration of the optimizer. Wall
# times on a shared machine carry its load (each gather waits for the rank the scheduler held
# back longest), so the CPU time each rank spent computing (not in gathers) is shown too: its
# ratio is the speed-up the work division gives on cores of one's own.
# Also checks that the three give the same fitted robot. Run from the repository root after
# `make && make mpi`:  bash tests/tools/mpi_bench.sh   (ROBOT, LOG, ITER, REPS to change)
set -eu
SYSID=${SYSID:-./sysid}
MPI=${MPI:-build/sysid-mpi}
ROBOT=${ROBOT:-data/arm7/robot.json}
LOG=${LOG:-data/arm7/log.csv}
ITER=${ITER:-20}
REPS=${REPS:-3}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

secs() { jq -r ".timing.$2" "$TMP/$1.json"; }
min() { printf '%s\n' "$@" | sort -g | head -1; }

for opt in lbfgs lm; do
    iter=$ITER
    [ $opt = lm ] && iter=$((ITER / 4 > 0 ? ITER / 4 : 1))
    args=(fit "$ROBOT" "$LOG" --optimizer $opt --max-iter $iter --threads 1 -q)
    f0=() f1=() f2=() c0=() c2=() u1=() u2=()
    for _ in $(seq "$REPS"); do
        "$SYSID" "${args[@]}" -o "$TMP/s.robot" --report "$TMP/s.json"
        SYSID_MPI_STATS=1 mpirun -n 1 "$MPI" "${args[@]}" -o "$TMP/m1.robot" --report "$TMP/m1.json" 2>"$TMP/stats1"
        SYSID_MPI_STATS=1 mpirun -n 2 "$MPI" "${args[@]}" -o "$TMP/m2.robot" --report "$TMP/m2.json" 2>"$TMP/stats"
        f0+=("$(secs s fit_seconds)") f1+=("$(secs m1 fit_seconds)") f2+=("$(secs m2 fit_seconds)")
        c0+=("$(secs s covariance_seconds)") c2+=("$(secs m2 covariance_seconds)")
        cpu() { sed -n 's/.* \([0-9.]*\) s CPU computing.*/\1/p' "$1" | sort -g | tail -1; }   # the busiest rank
        u1+=("$(cpu "$TMP/stats1")") u2+=("$(cpu "$TMP/stats")")
        cmp -s "$TMP/s.robot" "$TMP/m1.robot" && cmp -s "$TMP/s.robot" "$TMP/m2.robot" ||
            { echo "mpi_bench: $opt: the fitted robots differ" >&2; exit 1; }
    done
    it=$(jq .iterations "$TMP/s.json") ev=$(jq .evaluations "$TMP/s.json") win=$(jq .settings.windows "$TMP/s.json")
    np=$(jq '.parameters | length' "$TMP/s.json")
    bytes=$(sed -n 's/.* \([0-9]*\) bytes received by all ranks.*/\1/p' "$TMP/stats")
    gathers=$(sed -n 's/.* \([0-9]*\) gathers.*/\1/p' "$TMP/stats")
    b0=$(min "${f0[@]}") b1=$(min "${f1[@]}") b2=$(min "${f2[@]}") d0=$(min "${c0[@]}") d2=$(min "${c2[@]}")
    p1=$(min "${u1[@]}") p2=$(min "${u2[@]}")
    echo "$opt: $ROBOT, $LOG ($win windows, $np free parameters), $it iterations, $ev evaluations; best of $REPS"
    awk -v a="$b0" -v b="$b1" -v c="$b2" -v d="$d0" -v e="$d2" 'BEGIN {
        printf "  fit:        sysid %.3f s   mpirun -n 1 %.3f s   mpirun -n 2 %.3f s   speed-up 2 ranks: %.2fx (vs -n 1: %.2fx)\n", a, b, c, a / c, b / c
        printf "  covariance: sysid %.3f s   mpirun -n 2 %.3f s   speed-up %.2fx\n", d, e, d / e }'
    awk -v a="$p1" -v b="$p2" -v l="$(cut -d' ' -f1 /proc/loadavg)" 'BEGIN {
        printf "  CPU computing, whole run (busiest rank): -n 1 %.3f s   -n 2 %.3f s   ratio %.2fx   (load average %s)\n", a, b, a / b, l }'
    awk -v b="$bytes" -v g="$gathers" -v it="$it" 'BEGIN {
        printf "  traffic (-n 2, whole run: fit, covariance, predictions): %d bytes in %d gathers, %.0f bytes per iteration\n", b, g, b / it }'
done
