#!/usr/bin/env bash
# resume_lineup.sh: resumes that must line up. After any
# resume the run file's train rows are exactly steps 0..N-1 (one per step,
# N rows) and its eval rows unique and increasing; a resume that cannot
# guarantee that is refused (exit 2) and touches nothing:
#   - --resume --force on a finished run (it must not append a duplicate eval row)
#   - a checkpoint newer than the run file's last commit (a gap in the rows)
#   - a run file whose rows are already out of order (e.g. written by two writers)
#   tests/resume_lineup.sh SRCDIR GATELAB
. "$(dirname "$0")/shell_test.sh" lineup "$@"
trap 'rm -rf "$W"' EXIT
steps() { # the step column of /metrics/$2 as "0,1,2,..."
    h5dump -d "/metrics/$2/step" -y -w 0 "$1" 2>/dev/null | sed -n '/^   DATA {/,/^   }/p' |
        sed '1d;$d' | tr -d ' \n'
}
refused() { # refused FILE CMD...: exit 2, FILE byte for byte unchanged
    local f=$1; shift
    cp "$f" before.h5
    timeout -s KILL 120 "$@" >/dev/null 2>err.txt
    local rc=$?
    [ $rc -eq 2 ] || bad "exit $rc, want 2: $* ($(head -c 300 err.txt))"
    cmp -s "$f" before.h5 || bad "$f was changed by a refused resume: $*"
}
T="--config $S/experiments/tiny.ini --set threads=1 --quiet --set steps=40 --set eval_every=10 --set ckpt_every=10"
ALL=$(seq -s, 0 39)

# 1. --resume --force on a finished run
"$G" train $T --out a.h5 || { echo "setup failed"; exit 1; }
refused a.h5 "$G" train $T --resume --force --out a.h5
refused a.h5 "$G" train $T --resume --out a.h5
[ "$(steps a.h5 eval)" = "10,20,30,40" ] || bad "a.h5 eval rows: $(steps a.h5 eval)"

# 2. a checkpoint newer than the run file: an older run file put back
{ GATELAB_TEST_KILL_AT=14 "$G" train $T --out b.h5; } 2>/dev/null   # committed to 10
cp b.h5 b-at10.h5
{ GATELAB_TEST_KILL_AT=34 "$G" train $T --out b.h5 --resume; } 2>/dev/null  # ckpt at 30
cp b-at10.h5 b.h5
refused b.h5 "$G" train $T --resume --out b.h5
grep -q "newer than the run file" err.txt || bad "no reason given: $(cat err.txt)"

# 3. a run file with train rows written twice (what two writers once made):
#    graft steps 10..19 onto a run file whose rows already reach 19
{ GATELAB_TEST_KILL_AT=24 "$G" train $T --out c.h5; } 2>/dev/null   # rows 0..19, ckpt 20
/usr/bin/python3 - c.h5 <<'PY' || { echo "setup: h5py"; exit 1; }
import sys, h5py
with h5py.File(sys.argv[1], "r+") as f:
    for d in f["metrics/train"].values():
        n = d.shape[0]; d.resize((n + 10,)); d[n:] = d[10:20]
PY
refused c.h5 "$G" train $T --resume --out c.h5

# 4. kills at many moments, each resumed: rows always line up
rm -f d.h5*
for k in 3 9 10 11 19 20 27 33; do
    { GATELAB_TEST_KILL_AT=$k "$G" train $T --out d.h5 --resume; } 2>/dev/null
done
"$G" train $T --out d.h5 --resume || bad "final resume of d.h5 failed"
[ "$(steps d.h5 train)" = "$ALL" ] || bad "d.h5 train rows: $(steps d.h5 train)"
[ "$(steps d.h5 eval)" = "10,20,30,40" ] || bad "d.h5 eval rows: $(steps d.h5 eval)"

# 5. an unfinished run rerun without --resume: refused, the reply points to
# --resume (and --force to start over), never calling it finished
rm -f e.h5*
{ GATELAB_TEST_KILL_AT=15 "$G" train $T --out e.h5; } 2>/dev/null
refused e.h5 "$G" train $T --out e.h5
grep -q 'e.h5 exists and is not finished (status running); continue it with --resume, or start it over with --force' err.txt ||
    bad "the refusal of an unfinished run does not point to --resume: $(cat err.txt)"
"$G" train $T --out e.h5 --resume || bad "resume of e.h5 failed"
refused e.h5 "$G" train $T --out e.h5
grep -q 'finished results are never overwritten; use --force' err.txt ||
    bad "the refusal of a finished run changed: $(cat err.txt)"

[ $fail -eq 0 ] && echo "resume_lineup: PASS" && exit 0
exit 1
