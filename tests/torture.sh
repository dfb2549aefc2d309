#!/bin/bash
# torture.sh: crash-safety torture test; not part of the
# fast suite. A small sweep (tests/torture.sweep) is killed with SIGKILL -
# the sweep runner and every trainer child at once, as a power cut would -
# KILLS times, and rerun (= resumed) after each kill. The kill moments are
# spread over the sweep's measured length, so most kills land mid-run; each
# kill is classified by what it interrupted:
#   checkpoint write  a RUN.h5.ckpt.XXXXXX.tmp written since this attempt started
#   run-file commit   a RUN.h5.XXXXXX.tmp written since this attempt started
#   training step     neither, but trainers logged steps in this attempt
#   startup           no step logged yet in this attempt
#   after the end     every run had already finished
# The test fails when fewer than half the kills landed mid-run (the first
# three classes). Then: every run file opens, every run is finished and
# intact, and the report's results.csv (both reports without figures)
# equals that of an unbroken sweep in every column except tokens_per_sec
# (resume is bit-exact, so losses must match exactly).
# Last, the concurrent-writer round: two trainers started together on one
# --out (fresh/fresh, fresh/--force, --resume/--force, --resume/--resume),
# ROUNDS times; each must end done (0) or refused (2), and the file must end
# with train rows exactly steps 0..N-1 and unique, increasing eval rows.
#
#   tests/torture.sh [BUILDDIR] [KILLS] [ROUNDS]     (default build, 20, 12)
set -u
export GATELAB_TEST_RUN="${GATELAB_TEST_RUN:-torture}" # its GATELAB_TEST_KILL_AT acts only so
cd "$(dirname "$0")/.."
B=${1:-build}
KILLS=${2:-20}
ROUNDS=${3:-12}
G=$PWD/$B/gatelab
SW=tests/torture.sweep
W=$(mktemp -d /tmp/gatelab-torture-XXXXXX)
trap 'rm -rf "$W"' EXIT
[ -x "$G" ] || { echo "torture: no $G (build first)"; exit 2; }

ms() { date +%s%3N; }
echo "torture: reference sweep (unbroken)"
t0=$(ms)
"$G" sweep "$SW" --out "$W/ref" --jobs 2 --no-figures >"$W/ref.log" 2>&1 ||
    { echo "torture: reference sweep failed"; cat "$W/ref.log"; exit 1; }
ref_ms=$(($(ms) - t0))
echo "torture: the unbroken sweep took $ref_ms ms; kills at 3..40% of that after each start"

# step lines the trainers have logged so far, over all runs
logged() { cat "$W"/t/logs/*.log 2>/dev/null | grep -c '^step '; }
all_done() { [ "$("$G" sweep "$SW" --out "$W/t" --dry-run 2>/dev/null | grep -c "skip (done)")" = 3 ]; }
newer() { [ -n "$(find "$W/t" -maxdepth 1 -name "$1" -newer "$W/mark" 2>/dev/null | head -1)" ]; }
kills=0 resumes=0 restarts=0 started=0
n_ckpt=0 n_commit=0 n_step=0 n_start=0 n_end=0
RANDOM=${TORTURE_SEED:-7}
while [ $kills -lt "$KILLS" ]; do
    [ -d "$W" ] || { echo "torture: its work dir $W was removed by something else"; exit 1; }
    before=$(logged)
    touch "$W/mark"
    sleep 0.01 # mtimes after the mark are strictly newer
    # own session, so the kill reaches the runner and its children at once
    setsid "$G" sweep "$SW" --out "$W/t" --jobs 2 --no-report >>"$W/t.log" 2>&1 &
    pid=$!
    [ $started -gt 0 ] && resumes=$((resumes + 1))
    started=1
    d=$((ref_ms * (3 + RANDOM % 38) / 100))
    sleep "$(printf '%d.%03d' $((d / 1000)) $((d % 1000)))"
    if kill -0 "$pid" 2>/dev/null && kill -KILL -- "-$pid" 2>/dev/null; then
        kills=$((kills + 1))
        wait "$pid" 2>/dev/null
        if newer '*.ckpt.??????.tmp'; then n_ckpt=$((n_ckpt + 1))
        elif newer '*.h5.??????.tmp'; then n_commit=$((n_commit + 1))
        elif all_done; then n_end=$((n_end + 1))
        elif [ "$(logged)" -gt "$before" ]; then n_step=$((n_step + 1))
        else n_start=$((n_start + 1))
        fi
    fi
    wait "$pid" 2>/dev/null
    # all finished before the kill: start over, so every kill hits work
    if all_done; then
        restarts=$((restarts + 1))
        rm -rf "$W/t"
        started=0
    fi
done
mid=$((n_ckpt + n_commit + n_step))
echo "torture: kills $kills: checkpoint write $n_ckpt, run-file commit $n_commit, training step $n_step, startup $n_start, after the end $n_end (mid-run $mid)"
echo "torture: final rerun to completion"
"$G" sweep "$SW" --out "$W/t" --jobs 2 --no-figures >>"$W/t.log" 2>&1 ||
    { echo "torture: final sweep failed"; tail -20 "$W/t.log"; exit 1; }
resumes=$((resumes + 1))

fail=0 intact=0 total=0
for f in "$W"/t/*.h5; do
    total=$((total + 1))
    st=$(h5dump -a status "$f" 2>/dev/null | sed -n 's/.*(0): "\(.*\)".*/\1/p')
    if [ "$st" = done ] && "$G" sinks "$f" >/dev/null 2>&1; then
        intact=$((intact + 1))
    else
        echo "torture: $f does not open or is not finished (status '$st')"
        fail=1
    fi
done

# results.csv without tokens_per_sec (wall time is not in it)
strip() {
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "tokens_per_sec") skip = i }
             { out = ""; for (i = 1; i <= NF; i++) if (i != skip) out = out (out == "" ? "" : ",") $i
               print out }' "$1"
}
if ! diff <(strip "$W/ref/results.csv") <(strip "$W/t/results.csv") >"$W/diff"; then
    echo "torture: results.csv differs from the unbroken sweep:"
    cat "$W/diff"
    fail=1
fi
# and the raw loss series, bit for bit
for f in "$W"/ref/*.h5; do
    n=$(basename "$f")
    if ! cmp -s <(h5dump -d /metrics/train/loss -y -w 0 "$f" | tail -n +2) \
                <(h5dump -d /metrics/train/loss -y -w 0 "$W/t/$n" | tail -n +2); then
        echo "torture: $n: train losses differ from the unbroken run"
        fail=1
    fi
done
echo "torture: kills $kills, resumes $resumes (fresh starts after a complete sweep: $restarts), runs intact $intact/$total"
if [ $((2 * mid)) -lt "$kills" ]; then
    echo "torture: only $mid of $kills kills landed mid-run (want at least half)"
    fail=1
fi

# ---- concurrent writers: two trainers on one --out, started together ----
echo "torture: concurrent writers, $ROUNDS rounds"
C="--config experiments/tiny.ini --set threads=1 --set steps=300 --set eval_every=100 --set ckpt_every=50 -q"
N=300
col() { h5dump -d "/metrics/$2/step" -y -w 0 "$1" 2>/dev/null | sed -n '/^   DATA {/,/^   }/p' | sed '1d;$d' | tr -d ' \n'; }
want_train=$(seq -s, 0 $((N - 1)))
refused=0
for r in $(seq "$ROUNDS"); do
    f=$W/cw.h5
    rm -f "$f" "$f".*
    case $((r % 4)) in
        1) a=""; b="" ;;
        2) a=""; b="--force" ;;
        3) a="--resume"; b="--force" ;;
        0) a="--resume"; b="--resume" ;;
    esac
    # a half-done run for the resuming pairs
    [ $((r % 4)) = 3 ] || [ $((r % 4)) = 0 ] &&
        { GATELAB_TEST_KILL_AT=120 "$G" train $C --out "$f"; } 2>/dev/null
    "$G" train $C $a --out "$f" 2>"$W/cw1.err" & p1=$!
    "$G" train $C $b --out "$f" 2>"$W/cw2.err" & p2=$!
    wait $p1; r1=$?
    wait $p2; r2=$?
    for rc in $r1 $r2; do
        case $rc in 0) ;; 2) refused=$((refused + 1)) ;;
            *) echo "torture: round $r ($a / $b): a writer exited $rc: $(cat "$W"/cw?.err)"; fail=1 ;;
        esac
    done
    [ $r1 = 0 ] || [ $r2 = 0 ] || { echo "torture: round $r: neither writer finished"; fail=1; }
    st=$(h5dump -a status "$f" 2>/dev/null | sed -n 's/.*(0): "\(.*\)".*/\1/p')
    tr=$(col "$f" train) ev=$(col "$f" eval)
    if [ "$st" != done ] || [ "$tr" != "$want_train" ] || [ "$ev" != "100,200,300" ]; then
        echo "torture: round $r ($a / $b): status '$st', eval steps $ev, train steps ${tr:0:80}..."
        fail=1
    fi
done
echo "torture: concurrent writers: $ROUNDS rounds, $refused writers refused"
[ $fail -eq 0 ] && [ $intact -eq 3 ] && echo "torture: PASS" && exit 0
echo "torture: FAIL"
exit 1
