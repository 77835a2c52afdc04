#!/usr/bin/env bash
# tests/cli_window.sh — `sysid fit --window auto`: the window chosen by cross-validation on the
# fitted logs (pipeline/window_select.c). On data of known truth: clean data, where every candidate
# recovers the truth and the tie goes to the longest; data whose truth ran at 1 kHz but is
# fitted at 250 Hz (a step mismatch no parameter removes), where the scores differ and one is
# recomputed with plain `sysid fit` and `sysid eval`. Then: the report's fields, that the
# choice ignores --validate logs and repeats exactly, Ctrl-C, and the inputs that are refused.
# Run from the repository root: SYSID=/abs/path/sysid bash tests/cli_window.sh
set -u
. tests/harness.sh   # run, check, $TMP, the counters

SPEC=tests/fixtures/fit/pendulum.json   # mass, viscous friction, armature free
ROBOT=data/pendulum/robot.json
# LM and a given step keep the fits quick and let a plain fit repeat a selection's fit exactly
FAST=(-c "$SPEC" --optimizer lm --substeps 4)

# rel A B TOL: |A - B| <= TOL |B|
rel() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; if (b < 0) b = -b; exit !(d <= t * b) }'; }

# ---- data: the pendulum with a heavier pole and more friction ------------------------------------
# cmd250: the pendulum log's commands at 250 Hz; clean: the truth simulated on them at the fit's
# own step (exact data); synth: the truth at 1 kHz, kept every 4th sample (mismatched step).
awk -F, 'NR == 1 || (NR - 2) % 4 == 0' data/pendulum/log.csv >"$TMP/cmd250.csv"
"$SYSID" params "$ROBOT" --set links.pole.mass=0.9 --set joints.hinge.friction.viscous=0.03 \
    -o "$TMP/truth.json" 2>"$TMP/err" &&
    "$SYSID" simulate "$TMP/truth.json" "$TMP/cmd250.csv" --substeps 4 -o "$TMP/clean.csv" 2>"$TMP/err" &&
    "$SYSID" simulate "$TMP/truth.json" data/pendulum/log.csv -o "$TMP/synth1k.csv" 2>"$TMP/err"
if [ $? -ne 0 ] || [ ! -s "$TMP/clean.csv" ] || [ ! -s "$TMP/synth1k.csv" ]; then
    fail "setup: cannot make synthetic data with params --set and simulate"
    echo "$passed passed, $failed failed"
    exit 1
fi
head -n 401 "$TMP/clean.csv" >"$TMP/clean_a.csv"                  # 1.6 s, 400 samples
awk -F, 'NR == 1 || (NR - 2) % 4 == 0' "$TMP/synth1k.csv" >"$TMP/synth.csv"
for p in a:2,401 b:402,801 c:802,1201; do                          # three 1.6 s logs
    (head -n 1 "$TMP/synth.csv"; sed -n "${p#*:}p" "$TMP/synth.csv") >"$TMP/m_${p%%:*}.csv"
done

# window_selection's invariants: candidates (positive ones increasing, 0 last), which the search
# tried (the middle one, 0.5 s where it is one, always) with a score each, none for the others;
# settings.window the chosen one, which is the longest tie with the lowest score among those
# tried (within 1 % of it plus 1e-6 of the nominal held-out loss, as docs/formats.md states).
valid_selection() {
    jqt "$1" '.settings.window_selection as $s
        | ($s.candidates | length) >= 1 and ($s.candidates | length) == ($s.scores | length)
        and ($s.tried | length) == ($s.scores | length)
        and ([$s.candidates[] | select(. > 0)] as $p | $p == ($p | sort) and ($p | unique | length) == ($p | length))
        and ([$s.candidates[:-1][] | select(. == 0)] | length) == 0
        and all(range(0; $s.scores | length); ($s.scores[.] != null) == $s.tried[.])
        and .settings.window == $s.chosen and $s.folds == '"$2"'
        and ([$s.scores[] | select(. != null)] | min) as $b
        | ([range(0; $s.scores | length) | select($s.scores[.] != null and
              $s.scores[.] - $b <= 0.01 * $b + 1e-6 * $s.nominal_score)] | last) as $i
        | $s.candidates[$i] == $s.chosen'
}

# ---- one log: two halves, clean data --------------------------------------------------------------
run fit "$ROBOT" "$TMP/clean_a.csv" "${FAST[@]}" -q --window auto -o "$TMP/c.json" --report "$TMP/c_r.json"
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
valid_selection "$TMP/c_r.json" 2 || why+=" window_selection invalid or not the longest tie with the lowest score;"
# exact data: every candidate's fit recovers the truth, so every held-out score is convergence
# noise (measured <= 4e-24 against a nominal 2.5e-3): the search walks to the longest, 0, which
# the tie goes to
jqt "$TMP/c_r.json" '.settings.window_selection as $s | all($s.scores[] | select(. != null); . <= 1e-9 * $s.nominal_score)' ||
    why+=" a clean-data score is not at noise level;"
jqt "$TMP/c_r.json" '.settings.window == 0 and .settings.windows == 1' || why+=" the tie did not go to one window per log;"
jqt "$TMP/c_r.json" '.stop == "converged"' || why+=" the final fit did not converge;"
check "one log, clean: halves, the longest of the ties" "$why"

# ---- two logs: leave one out, mismatched step ---------------------------------------------------
run fit "$ROBOT" "$TMP/m_a.csv" "$TMP/m_b.csv" "${FAST[@]}" --window auto -o "$TMP/m.json" --report "$TMP/m_r.json"
cp "$TMP/err" "$TMP/m_err"
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
valid_selection "$TMP/m_r.json" 2 || why+=" window_selection invalid or not the longest tie with the lowest score;"
n=$(jq '[.settings.window_selection.tried[] | select(.)] | length' "$TMP/m_r.json")
[ "$(grep -c '^window auto: .* s: held-out loss \|^window auto: whole: held-out loss' "$TMP/m_err")" = "$n" ] ||
    why+=" stderr does not give each candidate's score;"
grep -q '^window auto: chose ' "$TMP/m_err" || why+=" stderr does not say the choice;"
check "two logs: leave one out, report and stderr" "$why"

# ---- one score recomputed by plain fits and sysid eval ------------------------------------------
# candidate k's score is the mean over the folds of the held-out log's position loss (weights
# q 1, qd 0) from logged starts in the evaluation windows, at the parameters fitted with window
# w on the other log; the nominal score is the same at the robot's own parameters. The folds'
# fits start from each other's, plain fits from the nominal values: both converge to the same
# minimum, to the fold fits' flat test (a chi-square change below 10 per span)
jq '.weights = { "q": 1, "qd": 0 }' "$SPEC" >"$TMP/eval.json"
E=$(jq '.settings.window_selection.evaluation_window' "$TMP/m_r.json")
k=$(jq '[.settings.window_selection.tried | to_entries[] | select(.value) | .key] | first' "$TMP/m_r.json")
w=$(jq ".settings.window_selection.candidates[$k]" "$TMP/m_r.json")
want=$(jq ".settings.window_selection.scores[$k]" "$TMP/m_r.json")
nominal=$(jq '.settings.window_selection.nominal_score' "$TMP/m_r.json")
why=""
sum=0
sum0=0
for pair in a:b b:a; do
    held=${pair%%:*} trained=${pair#*:}
    run fit "$ROBOT" "$TMP/m_$trained.csv" "${FAST[@]}" -q --window "$w" -o "$TMP/fold_$trained.json"
    [ "$rc" -eq 0 ] || why+=" the plain fit on log $trained exits $rc;"
    run eval "$TMP/fold_$trained.json" "$TMP/m_$held.csv" -c "$TMP/eval.json" --substeps 4 --window "$E" --json -q
    l=$(jq .loss "$TMP/out")
    run eval "$ROBOT" "$TMP/m_$held.csv" -c "$TMP/eval.json" --substeps 4 --window "$E" --json -q
    l0=$(jq .loss "$TMP/out")
    sum=$(awk -v s="$sum" -v l="$l" 'BEGIN { printf "%.17g", s + l / 2 }')
    sum0=$(awk -v s="$sum0" -v l="$l0" 'BEGIN { printf "%.17g", s + l / 2 }')
done
rel "$sum" "$want" 1e-4 || why+=" the $w s score is $want, sysid fit + eval give $sum;"
rel "$sum0" "$nominal" 1e-12 || why+=" the nominal score is $nominal, sysid eval gives $sum0;"
check "a score recomputed with sysid fit and sysid eval" "$why"

# ---- the choice ignores --validate logs and repeats exactly --------------------------------------
run fit "$ROBOT" "$TMP/m_a.csv" "$TMP/m_b.csv" "${FAST[@]}" -q --window auto --validate "$TMP/m_c.csv" \
    -o "$TMP/v.json" --report "$TMP/v_r.json"
why=""
[ "$rc" -eq 0 ] || why+=" exit $rc;"
[ "$(jq -c .settings.window_selection "$TMP/m_r.json")" = "$(jq -c .settings.window_selection "$TMP/v_r.json")" ] ||
    why+=" the selection changed with a --validate log;"
cmp -s "$TMP/m.json" "$TMP/v.json" || why+=" the fitted robot changed with a --validate log;"
check "the selection ignores --validate logs and is deterministic" "$why"

# ---- Ctrl-C during the selection: exit 130, nothing written --------------------------------------
# the signal once stderr says the selection has begun (its first line, before the first fold's
# fit), however fast the machine; emptied first, so a stale line cannot say so
: >"$TMP/err"
"$SYSID" fit "$ROBOT" "$TMP/synth1k.csv" -c "$SPEC" --window auto -o "$TMP/int.json" \
    --report "$TMP/int_r.json" >"$TMP/out" 2>"$TMP/err" &
pid=$!
for _ in $(seq 300); do
    grep -q "^window auto: cross-validation" "$TMP/err" 2>/dev/null && break
    sleep 0.1
done
kill -INT "$pid"
wait "$pid"
rc=$?
why=""
[ "$rc" -eq 130 ] || why+=" exit $rc, expected 130;"
grep -q "interrupted while choosing the window" "$TMP/err" || why+=" stderr does not say where it stopped;"
[ ! -e "$TMP/int.json" ] && [ ! -e "$TMP/int_r.json" ] || why+=" a file was written;"
no_temp "$TMP" || why+=" a temporary file was left;"
check "SIGINT while choosing the window" "$why"

# ---- refused: exit 2 naming the flag or the JSON path, nothing written ---------------------------
bad() {
    local name=$1 want=$2 why=""
    shift 2
    rm -f "$TMP/x.json"
    run "$@"
    [ "$rc" -eq 2 ] || why+=" exit $rc, expected 2;"
    grep -qF -- "sysid: error: $want" "$TMP/err" || why+=" stderr does not say '$want';"
    [ ! -e "$TMP/x.json" ] || why+=" a file was written;"
    check "exit 2: $name" "$why"
}
jq '.window = "Auto"' "$SPEC" >"$TMP/s_Auto.json"
jq '.window = -1' "$SPEC" >"$TMP/s_neg.json"
jq '.window = "auto"' "$SPEC" >"$TMP/s_auto.json"
bad "--window auto5" "--window: expected a non-negative number of seconds or auto, got 'auto5'" \
    fit "$ROBOT" "$TMP/clean_a.csv" --window auto5 -o "$TMP/x.json"
bad "--window -1" "--window: expected a non-negative number of seconds or auto, got '-1'" \
    fit "$ROBOT" "$TMP/clean_a.csv" --window -1 -o "$TMP/x.json"
bad "spec window Auto" "$TMP/s_Auto.json: window: expected a non-negative number of seconds or \"auto\"" \
    fit "$ROBOT" "$TMP/clean_a.csv" -c "$TMP/s_Auto.json" -o "$TMP/x.json"
bad "spec window -1" "$TMP/s_neg.json: window: expected" fit "$ROBOT" "$TMP/clean_a.csv" -c "$TMP/s_neg.json" -o "$TMP/x.json"
bad "eval --window auto" "--window auto: only sysid fit chooses the window" eval "$ROBOT" "$TMP/clean_a.csv" --window auto
bad "eval spec auto" "$TMP/s_auto.json: window: \"auto\": only sysid fit" eval "$ROBOT" "$TMP/clean_a.csv" -c "$TMP/s_auto.json"
bad "validate spec auto" "$TMP/s_auto.json: window: \"auto\": only sysid fit" validate "$ROBOT" "$TMP/clean_a.csv" \
    -c "$TMP/s_auto.json"
bad "grad --window auto" "--window auto: only sysid fit" grad "$ROBOT" "$TMP/clean_a.csv" --window auto

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
