#!/bin/bash
# torture.sh: crash-safety torture test (issue 7.3); not part of the fast
# suite. A tiny sweep (tests/torture.sweep) is killed with SIGKILL - the
# sweep runner and every trainer child at once, as a power cut would - at
# random moments KILLS times, and rerun (= resumed) after each kill. Then:
# every run file opens, every run is finished and intact, and the report's
# results.csv equals that of an unbroken sweep in every column except
# tokens_per_sec (resume is bit-exact, so losses must match exactly).
#
#   tests/torture.sh [BUILDDIR] [KILLS]     (default build, 20)
set -u
cd "$(dirname "$0")/.."
B=${1:-build}
KILLS=${2:-20}
G=$PWD/$B/gatelab
SW=tests/torture.sweep
W=$(mktemp -d /tmp/gatelab-torture-XXXXXX)
trap 'rm -rf "$W"' EXIT
[ -x "$G" ] || { echo "torture: no $G (build first)"; exit 2; }

echo "torture: reference sweep (unbroken)"
"$G" sweep "$SW" --out "$W/ref" --jobs 2 >"$W/ref.log" 2>&1 ||
    { echo "torture: reference sweep failed"; cat "$W/ref.log"; exit 1; }

kills=0 resumes=0 restarts=0 started=0
RANDOM=${TORTURE_SEED:-7}
while [ $kills -lt "$KILLS" ]; do
    # own session, so the kill reaches the runner and its children at once
    setsid "$G" sweep "$SW" --out "$W/t" --jobs 2 --no-report >>"$W/t.log" 2>&1 &
    pid=$!
    [ $started -gt 0 ] && resumes=$((resumes + 1))
    started=1
    # a random moment in 0.05 .. 1.55 s
    sleep "0.$((RANDOM % 10))$((RANDOM % 10))"
    sleep "0.$((RANDOM % 14 / 2))5"
    if kill -0 "$pid" 2>/dev/null && kill -KILL -- "-$pid" 2>/dev/null; then
        kills=$((kills + 1))
    fi
    wait "$pid" 2>/dev/null
    # all finished before the kill: start over, so every kill hits work
    if [ "$("$G" sweep "$SW" --out "$W/t" --dry-run 2>/dev/null | grep -c "skip (done)")" = 3 ]; then
        restarts=$((restarts + 1))
        rm -rf "$W/t"
        started=0
    fi
done
echo "torture: final rerun to completion"
"$G" sweep "$SW" --out "$W/t" --jobs 2 >>"$W/t.log" 2>&1 ||
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
[ $fail -eq 0 ] && [ $intact -eq 3 ] && echo "torture: PASS" && exit 0
echo "torture: FAIL"
exit 1
