#!/usr/bin/env bash
# writers.sh: two writers on one run file. Every writer of
# RUN.h5 (train, train --resume / --force, eval, a sweep's children) holds
# an exclusive lock on RUN.h5.lock while it writes; a second writer is
# refused at once (exit 2) naming the holder's pid, and the run file is
# left alone. A lock left by a killed writer does not block the next one.
# No timing: the first writer is simply still running.
#   tests/writers.sh SRCDIR GATELAB
. "$(dirname "$0")/shell_test.sh" writers "$@"
A=
cleanup() { [ -n "$A" ] && kill -KILL "$A" 2>/dev/null; [ -n "${H:-}" ] && kill "$H" 2>/dev/null; rm -rf "$W"; }
trap cleanup EXIT
# second CMD...: refused with exit 2, naming pid $holder
second() {
    timeout -s KILL 60 "$@" >out.txt 2>err.txt
    local rc=$?
    [ $rc -eq 2 ] || bad "exit $rc, want 2: $* ($(head -c 300 err.txt))"
    grep -q "pid $holder" err.txt || bad "does not name the holder (pid $holder): $*: $(cat err.txt)"
}
steps() { # the step column of /metrics/$2 as "0,1,2,..."
    h5dump -d "/metrics/$2/step" -y -w 0 "$1" 2>/dev/null | sed -n '/^   DATA {/,/^   }/p' |
        sed '1d;$d' | tr -d ' \n'
}
T="--config $S/experiments/tiny.ini --set threads=1 --quiet"
LONG="$T --set steps=100000000 --set eval_every=0 --set ckpt_every=20"

# 1. a trainer is writing x.h5 (it never ends by itself)
"$G" train $LONG --out x.h5 2>a.err &
A=$!
for _ in $(seq 600); do # wait until it holds the lock and the first commit is on disk
    [ -f x.h5.ckpt ] && grep -q "pid $A" x.h5.lock 2>/dev/null && break
    kill -0 "$A" 2>/dev/null || break
    sleep 0.1
done
kill -0 "$A" 2>/dev/null || { echo "setup: the first trainer ended: $(cat a.err)"; exit 1; }
holder=$A
second "$G" train $LONG --resume --out x.h5
second "$G" train $LONG --force --out x.h5
second "$G" train $LONG --resume --force --out x.h5
kill -0 "$A" 2>/dev/null || bad "the first writer died after a second one was refused: $(cat a.err)"

# 2. the holder is killed: its lock file stays, but blocks no one
kill -KILL "$A"; wait "$A" 2>/dev/null; A=
grep -q "pid $holder" x.h5.lock || bad "expected a stale lock file naming pid $holder"
"$G" train $T --set steps=6 --set eval_every=3 --force --out x.h5 2>err.txt ||
    bad "a stale lock blocked train --force: $(cat err.txt)"
[ "$(steps x.h5 train)" = "0,1,2,3,4,5" ] || bad "train rows after the restart: $(steps x.h5 train)"
[ -e x.h5.lock ] && bad "x.h5.lock left behind by a writer that ended normally"

# 3. a finished run held by another process: eval, intervene, train and a sweep are refused
"$G" train $T --set steps=4 --out y.h5 || { echo "setup: train y.h5 failed"; exit 1; }
cp y.h5 y.orig
echo "pid 4242" >y.h5.lock
hold() { ( exec 9<>"$1"; flock 9 && exec sleep 600 ) & H=$!; } # the sleep holds the lock
hold y.h5.lock
for _ in $(seq 100); do flock -n y.h5.lock true 2>/dev/null || break; sleep 0.1; done
holder=4242
second "$G" eval y.h5 --lengths 32
second "$G" intervene y.h5 bos-mean
second "$G" train $T --set steps=4 --force --out y.h5
cmp -s y.h5 y.orig || bad "y.h5 changed while another process held its lock"
# an unfinished run the sweep would resume (same config as its child's)
mkdir sw && { GATELAB_TEST_KILL_AT=3 "$G" train $T --set steps=8 --out sw/baseline_s1.h5; } 2>/dev/null
cp sw/baseline_s1.h5 sw.orig && echo "pid 4242" >sw/baseline_s1.h5.lock
kill "$H"; wait "$H" 2>/dev/null
hold sw/baseline_s1.h5.lock
for _ in $(seq 100); do flock -n sw/baseline_s1.h5.lock true 2>/dev/null || break; sleep 0.1; done
printf '[sweep]\npreset = %s\nseeds = 1\nset = steps=8\n[run baseline]\nvariant = baseline\n' \
    "$S/experiments/tiny.ini" >one.sweep
# (the sweep waits 1 s, not 60, for the lock to go before it is refused)
GATELAB_TEST_LOCK_WAIT=1 "$G" sweep one.sweep --out sw --jobs 1 --no-report >sweep.log 2>&1 &&
    bad "a sweep wrote a locked run"
grep -q "still being written by an earlier process; waiting" sweep.log ||
    bad "the sweep did not say it waits for the lock: $(head -c 300 sweep.log)"
grep -q "pid 4242" sw/logs/*.log || bad "the sweep's log does not name the holder"
cmp -s sw/baseline_s1.h5 sw.orig || bad "the sweep changed a locked run file"

[ $fail -eq 0 ] && echo "writers: PASS" && exit 0
exit 1
