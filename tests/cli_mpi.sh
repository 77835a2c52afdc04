#!/usr/bin/env bash
# tests/cli_mpi.sh — `mpirun -n N sysid-mpi fit` (mpi/): the same bytes as `sysid fit` for 1, 2
# and 3 ranks (L-BFGS and LM, start states fitted, several logs, any thread count), and the
# faults: a bad log on one rank, a rank that cannot go on mid-fit, a rank killed, Ctrl-C.
# Each rank reads only the logs its windows need (and the fallback where it cannot) is checked
# with SYSID_MPI_STATS's lists of the logs each rank read.
# Run from the repository root: SYSID=/abs/path/sysid SYSID_BUILD=/abs/build bash tests/cli_mpi.sh
set -u
. tests/harness.sh   # run, check, $TMP, the counters

if ! command -v mpirun >/dev/null; then
    echo "SKIP: mpirun is not installed (apt-get install openmpi-bin libopenmpi-dev): sysid-mpi not tested"
    exit 0
fi
MPI=${SYSID_BUILD:-$PWD/build}/sysid-mpi
if [ ! -x "$MPI" ]; then
    fail "setup: $MPI is not built (make mpi)"
    echo "$passed passed, $failed failed"
    exit 1
fi
# CI runs as root; more ranks than cores on a small machine; containers often forbid the
# cross-process memory reads of Open MPI's shared-memory transport (its copy-in/out still works)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none

# mrun N ARGS...: mpirun -n N sysid-mpi ARGS; sets $rc, stdout in $TMP/out, stderr in $TMP/err
mrun() {
    local n=$1
    shift
    mpirun --oversubscribe -n "$n" "$MPI" "$@" >"$TMP/out" 2>"$TMP/err"
    rc=$?
}

FIX=tests/fixtures
SPEC=$FIX/fit/pendulum.json   # mass, viscous friction, armature free
ROBOT=data/pendulum/robot.json

# ---- data with a known truth, cut into two logs (windows of both on every rank count) -------------
pendulum_truth
head -1201 "$TMP/synth.csv" >"$TMP/a.csv"
{ head -1 "$TMP/synth.csv"; sed -n 1202,3001p "$TMP/synth.csv"; } >"$TMP/b.csv"
LOGS=("$TMP/a.csv" "$TMP/b.csv")

# same NAME REF OUT: the fitted robots are the same bytes, the reports too but for "timing"
same() {
    local why=""
    cmp -s "$TMP/$2.json" "$TMP/$3.json" || why+=" the fitted robot differs from sysid fit's;"
    jq -S 'del(.timing)' "$TMP/$2_r.json" >"$TMP/$2_r.cmp" 2>/dev/null
    jq -S 'del(.timing)' "$TMP/$3_r.json" >"$TMP/$3_r.cmp" 2>/dev/null || why+=" no report;"
    cmp -s "$TMP/$2_r.cmp" "$TMP/$3_r.cmp" || why+=" the report differs from sysid fit's (but timing);"
    [ "$rc" -eq 0 ] || why+=" exit $rc;"
    check "$1" "$why"
}

# ---- the same bytes as sysid fit -----------------------------------------------------------------
for opt in lbfgs lm; do
    run fit "$ROBOT" "${LOGS[@]}" -c "$SPEC" --optimizer $opt -q --threads 1 -o "$TMP/$opt.json" --report "$TMP/${opt}_r.json"
    why=""
    [ "$rc" -eq 0 ] || why+=" exit $rc;"
    # a real fit: several iterations and start states fitted, else the comparison shows little
    jqt "$TMP/${opt}_r.json" '.iterations >= 3 and .stop == "converged"' || why+=" not a converged fit of 3+ iterations;"
    jqt "$TMP/${opt}_r.json" '.settings.windows >= 6' || why+=" fewer than 6 windows;"
    check "sysid fit --optimizer $opt: the reference" "$why"
    for n in 1 2 3; do
        mrun $n fit "$ROBOT" "${LOGS[@]}" -c "$SPEC" --optimizer $opt -q --threads 1 -o "$TMP/${opt}_$n.json" \
            --report "$TMP/${opt}_${n}_r.json"
        same "mpirun -n $n, $opt: the bytes of sysid fit" $opt ${opt}_$n
    done
done
# threads per rank change nothing either; nor do start states from the logs
mrun 2 fit "$ROBOT" "${LOGS[@]}" -c "$SPEC" --optimizer lm -q --threads 2 -o "$TMP/lm_t.json" --report "$TMP/lm_t_r.json"
same "mpirun -n 2 --threads 2, lm: the bytes of sysid fit --threads 1" lm lm_t
run fit "$ROBOT" "${LOGS[@]}" -c "$SPEC" --start logged -q -o "$TMP/lg.json" --report "$TMP/lg_r.json"
mrun 3 fit "$ROBOT" "${LOGS[@]}" -c "$SPEC" --start logged -q -o "$TMP/lg_3.json" --report "$TMP/lg_3_r.json"
same "mpirun -n 3 --start logged: the bytes of sysid fit" lg lg_3

# four logs of different lengths (0.3 to 2 s: 1 to 4 windows each) and a validation log: the
# ranks' blocks of windows begin and end inside logs, and each rank holds no window of some log
{ head -1 "$TMP/synth.csv"; sed -n 3002,3301p "$TMP/synth.csv"; } >"$TMP/c.csv"
{ head -1 "$TMP/synth.csv"; sed -n 3302,4001p "$TMP/synth.csv"; } >"$TMP/d.csv"
{ head -1 "$TMP/synth.csv"; sed -n 4002,5001p "$TMP/synth.csv"; } >"$TMP/e.csv"
LOGS4=("$TMP/c.csv" "$TMP/b.csv" "$TMP/d.csv" "$TMP/e.csv" --validate "$TMP/a.csv")
run fit "$ROBOT" "${LOGS4[@]}" -c "$SPEC" -q --threads 1 -o "$TMP/l4.json" --report "$TMP/l4_r.json"
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
jqt "$TMP/l4_r.json" '.settings.windows >= 8 and (.logs | length) == 4' || why+=" not 4 logs in 8+ windows;"
check "sysid fit, 4 logs of different lengths and a validation log: the reference" "$why"
for n in 2 3; do
    mrun $n fit "$ROBOT" "${LOGS4[@]}" -c "$SPEC" -q --threads 1 -o "$TMP/l4_$n.json" --report "$TMP/l4_${n}_r.json"
    same "mpirun -n $n, 4 logs of different lengths and a validation log: the bytes of sysid fit" l4 l4_$n
done

# ---- each rank reads only the logs its windows need (mpi/shard_read.c) ---------------------------
# the same logs, one without velocities (a rank may hold no log that has them) and one with a
# column sysid ignores (warned of by the rank that reads it, said by rank 0 as sysid says it);
# SYSID_MPI_STATS=1 has each rank list the logs it read in full
cut -d, -f1,2,4 "$TMP/c.csv" >"$TMP/cn.csv"
awk -F, -v OFS=, 'NR == 1 { print $0 ",extra"; next } { print $0 ",1" }' "$TMP/e.csv" >"$TMP/ex.csv"
LOGS5=("$TMP/cn.csv" "$TMP/b.csv" "$TMP/d.csv" "$TMP/ex.csv" --validate "$TMP/a.csv")
run fit "$ROBOT" "${LOGS5[@]}" -c "$SPEC" --threads 1 -o "$TMP/l5.json" --report "$TMP/l5_r.json"
grep -v '^iter\|^stop:\|^covariance' "$TMP/err" >"$TMP/l5_err"
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
grep -q "ignoring 1 unknown column" "$TMP/l5_err" || why+=" no warning of the unknown column;"
check "sysid fit, a log without velocities and one with an unknown column: the reference" "$why"
for n in 3; do
    SYSID_MPI_STATS=1 mrun $n fit "$ROBOT" "${LOGS5[@]}" -c "$SPEC" --threads 1 -o "$TMP/l5_$n.json" --report "$TMP/l5_${n}_r.json"
    same "mpirun -n $n, a log without velocities: the bytes of sysid fit" l5 l5_$n
    # which logs each rank read: none reads all five, every log is read, and one is read by two
    # ranks (its windows straddle their blocks of chunks)
    sed -n 's/.*logs read in full:\(.*\) (of 5;.*/\1/p' "$TMP/err" >"$TMP/held"
    why=""
    [ "$(wc -l <"$TMP/held")" -eq "$n" ] || why+=" not $n ranks' lists;"
    ! awk 'NF == 5' "$TMP/held" | grep -q . || why+=" a rank read every log;"
    [ "$(tr ' ' '\n' <"$TMP/held" | grep . | sort -u | wc -l)" -eq 5 ] || why+=" a log no rank read;"
    tr ' ' '\n' <"$TMP/held" | grep . | sort | uniq -d | grep -q . || why+=" no log read by two ranks;"
    [ "$n" -ne 3 ] || ! grep -q "rank 0 of 3: logs read in full:.* 5 " "$TMP/err" || why+=" rank 0 of 3 read the validation log;"
    grep -v '^iter\|^stop:\|^covariance\|^sysid-mpi: ' "$TMP/err" | cmp -s - "$TMP/l5_err" ||
        why+=" stderr (but progress and stats) is not sysid fit's;"
    check "mpirun -n $n: each rank reads only its logs, the warnings said once as sysid says them" "$why"
done

# where the fit needs every log on every rank ("window": "auto" cross-validates on them all),
# every rank reads every log, and rank 0 says so
run fit "$ROBOT" "${LOGS[@]}" -c "$SPEC" --window auto -q --threads 1 -o "$TMP/wa.json" --report "$TMP/wa_r.json"
SYSID_MPI_STATS=1 mrun 2 fit "$ROBOT" "${LOGS[@]}" -c "$SPEC" --window auto --threads 1 -o "$TMP/wa_2.json" \
    --report "$TMP/wa_2_r.json"
same "mpirun -n 2 --window auto: the bytes of sysid fit" wa wa_2
why=""
grep -q "sysid-mpi: every rank reads every log: \"window\": \"auto\" cross-validates on every log" "$TMP/err" ||
    why+=" does not say every rank reads every log;"
! grep -q "logs read in full" "$TMP/err" || why+=" the ranks read their logs only;"
check "mpirun -n 2 --window auto: every rank reads every log, and rank 0 says why" "$why"
# --html plots every log: rank 0 (which writes it) reads them all, the others only theirs
run fit "$ROBOT" "${LOGS4[@]}" -c "$SPEC" -q --threads 1 -o "$TMP/h.json" --report "$TMP/h_r.json" --html "$TMP/h.html"
SYSID_MPI_STATS=1 mrun 3 fit "$ROBOT" "${LOGS4[@]}" -c "$SPEC" --threads 1 -o "$TMP/h_3.json" --report "$TMP/h_3_r.json" \
    --html "$TMP/h_3.html"
same "mpirun -n 3 --html: the bytes of sysid fit" h h_3
why=""
cmp -s "$TMP/h.html" "$TMP/h_3.html" || why+=" the page differs from sysid fit's;"
grep -q "sysid-mpi: rank 0 reads every log: --html plots every log" "$TMP/err" || why+=" rank 0 does not say so;"
grep -q "rank 0 of 3: logs read in full: 1 2 3 4 5 (of 5" "$TMP/err" || why+=" rank 0 did not read every log;"
[ "$(grep -c "logs read in full: 1 2 3 4 5 (of 5" "$TMP/err")" -eq 1 ] || why+=" another rank read every log;"
check "mpirun -n 3 --html: rank 0 reads every log and writes the page of sysid fit" "$why"

# torque sensor readings scored (their RMSE per window, gathered): three logs of the double
# pendulum, two with made-up readings (cli_torque.sh's), one without
DP=data/double_pendulum
jq '.joints[0].torque_sensor = {"gain": 1, "bias": 0}' $DP/robot.json >"$TMP/dp.json"
tau_log() { awk -F, 'NR == 1 { print $0 ",tau.shoulder,tau.elbow"; next } { print $0 "," $6 "," 0.5 * $7 }'; }
head -301 $DP/log.csv | tau_log >"$TMP/t1.csv"
{ head -1 $DP/log.csv; sed -n 302,501p $DP/log.csv; } >"$TMP/t2.csv"
{ head -1 $DP/log.csv; sed -n 502,901p $DP/log.csv; } | tau_log >"$TMP/t3.csv"
TAU=(fit "$TMP/dp.json" "$TMP/t1.csv" "$TMP/t2.csv" "$TMP/t3.csv" --weight-tau 1 --window 0.1
    --free-only 'joints.shoulder.torque_sensor.*' --free 'links.*.mass' -q --threads 1)
run "${TAU[@]}" -o "$TMP/wt.json" --report "$TMP/wt_r.json"
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
jqt "$TMP/wt_r.json" '.prediction.fit.rmse.after.tau.shoulder > 0' || why+=" no torque sensor RMSE;"
check "sysid fit --weight-tau 1, three logs, two with torque readings: the reference" "$why"
SYSID_MPI_STATS=1 mrun 3 "${TAU[@]}" -o "$TMP/wt_3.json" --report "$TMP/wt_3_r.json"
same "mpirun -n 3 --weight-tau 1: the bytes of sysid fit" wt wt_3
why=""
! grep -q "every rank reads every log" "$TMP/err" || why+=" every rank read every log;"
[ "$(grep -c "logs read in full: [0-9]* \?[0-9]* (of 3" "$TMP/err")" -eq 3 ] || why+=" a rank read all three logs;"
check "mpirun -n 3 --weight-tau 1: each rank reads only its logs" "$why"

# ---- what sysid-mpi refuses ----------------------------------------------------------------------
mrun 2 simulate "$ROBOT" "$TMP/a.csv"
why=""
[ "$rc" -ne 0 ] || why+=" exit 0;"
grep -q "sysid-mpi runs \`fit\` only" "$TMP/err" || why+=" does not say it runs fit only;"
check "sysid-mpi simulate: refused" "$why"
mrun 2 fit "$ROBOT" "${LOGS[@]}" -c "$SPEC" --time-limit 10 -q -o "$TMP/tl.json"
why=""
[ "$rc" -ne 0 ] || why+=" exit 0;"
grep -q "time limit.*not with several ranks" "$TMP/err" || why+=" does not say why;"
[ ! -e "$TMP/tl.json" ] || why+=" the robot was written;"
check "sysid-mpi -n 2 --time-limit: refused (each rank's clock would stop elsewhere)" "$why"

# ---- faults: a rank fails, all stop, nothing written ---------------------------------------------
# nothing_written WHY_VAR: no output and no temporary file in $TMP/outdir
mkdir -p "$TMP/outdir"
OUT=(-o "$TMP/outdir/fit.json" --report "$TMP/outdir/report.json")
nothing_written() { [ -z "$(ls -A "$TMP/outdir")" ]; }

{ head -3 "$TMP/b.csv"; echo "garbage,1,2,3"; } >"$TMP/bad.csv"
SYSID_MPI_FAULT_RANK=1 SYSID_MPI_FAULT_ARG="$TMP/b.csv=$TMP/bad.csv" \
    mrun 2 fit "$ROBOT" "${LOGS[@]}" -c "$SPEC" "${OUT[@]}"
why=""
[ "$rc" -eq 2 ] || why+=" exit $rc, expected 2 (the failed rank's);"
grep -qF "sysid-mpi: rank 1 of 2: sysid: error: $TMP/bad.csv: line 4" "$TMP/err" || why+=" does not show rank 1's error;"
grep -qF "rank 1 of 2 failed (exit 2); every rank stops, nothing written" "$TMP/err" || why+=" does not say rank 1 failed;"
nothing_written || why+=" something was written;"
check "a bad log on rank 1 of 2: its error, exit 2, nothing written" "$why"

SYSID_MPI_FAULT_RANK=2 SYSID_MPI_FAULT_GATHER=6 mrun 3 fit "$ROBOT" "${LOGS[@]}" -c "$SPEC" -q "${OUT[@]}"
why=""
[ "$rc" -ne 0 ] || why+=" exit 0;"
grep -qF "sysid-mpi: error: rank 2 of 3: injected fault (SYSID_MPI_FAULT_GATHER=6)" "$TMP/err" || why+=" does not name rank 2 and the cause;"
nothing_written || why+=" something was written;"
check "rank 2 of 3 cannot go on mid-fit: named, non-zero exit, nothing written" "$why"

# a long fit (the double pendulum, all its log) to kill or interrupt while it runs
# (L-BFGS with ftol_rel 0 runs on; LM's flat test would end it before the signal)
LONG=(fit data/double_pendulum/robot.json data/double_pendulum/log.csv --threads 1 --max-iter 100000 --ftol-rel 0
    --optimizer lbfgs)
# rank_pid MPIRUN_PID R: the pid of rank R among mpirun's children (empty until it has started)
rank_pid() {
    local c
    for c in $(pgrep -P "$1"); do
        if tr '\0' '\n' <"/proc/$c/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$2"; then
            echo "$c"
            return
        fi
    done
}
# started FILE: wait (up to 30 s) until rank 0's progress shows the fit iterating. Empty FILE before
# the launch (: >FILE): the launched command empties it only after its fork, so the last run's
# progress could be read, and the signal reach the forked shell before it becomes mpirun
started() {
    for _ in $(seq 300); do
        grep -q "iter " "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}

: >"$TMP/err"
mpirun --oversubscribe -n 2 "$MPI" "${LONG[@]}" "${OUT[@]}" >"$TMP/out" 2>"$TMP/err" &
job=$!
why=""
if started "$TMP/err"; then
    r1=$(rank_pid $job 1)
    [ -n "$r1" ] && kill -9 "$r1" || why+=" rank 1's pid not found;"
else
    why+=" the fit did not start;"
fi
wait $job
rc=$?
[ "$rc" -ne 0 ] || why+=" exit 0;"
grep -q "rank 1 .*exited on signal 9" "$TMP/err" || why+=" stderr does not say rank 1 was killed;"
nothing_written || why+=" something was written;"
check "rank 1 of 2 killed (kill -9): the job ends, rank and signal named, nothing written" "$why"

# Ctrl-C on the launcher: mpirun sends every rank SIGTERM; all stop at the same evaluation and
# rank 0 writes the best point so far, as sysid fit does on a signal. mpirun waits
# odls_base_sigkill_timeout seconds (default 1) before the SIGTERM and as long again before
# SIGKILL: rank 0 has that long to finish the evaluation, the predictions and the writing,
# which a loaded machine may need more than 1 s for (docs/mpi.md says so). 3 s held at a load
# average of 15 on 2 cores; a sanitizer build needs more (make debug leaves this script out).
: >"$TMP/err"
mpirun --mca odls_base_sigkill_timeout 3 --oversubscribe -n 2 "$MPI" "${LONG[@]}" "${OUT[@]}" >"$TMP/out" 2>"$TMP/err" &
job=$!
why=""
started "$TMP/err" || why+=" the fit did not start;"
kill -INT $job
wait $job
rc=$?
[ "$rc" -ne 0 ] || why+=" exit 0;"
jqt "$TMP/outdir/report.json" '.stop == "interrupted" and .iterations >= 1' || why+=" no report that says interrupted;"
jqt "$TMP/outdir/fit.json" '.links' || why+=" no fitted robot;"
grep -q "interrupted (SIGTERM): the best parameters so far were written" "$TMP/err" || why+=" rank 0 does not say so;"
check "Ctrl-C on mpirun -n 2: every rank stops, rank 0 writes the best so far" "$why"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
