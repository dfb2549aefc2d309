#!/usr/bin/env bash
# interrupts.sh: SIGINT and SIGTERM are the same for every command: exit
# 130, one line on stderr, the command's lock file and temporaries gone,
# every finished file as it was. A sweep's children die with it, even when
# it is SIGKILLed, and a rerun picks them up (none recorded failed).
# Each signal is sent once the command is known to be mid-way: report is
# held inside its first figure by a gnuplot that waits; the others once
# their lock file exists.
#   tests/interrupts.sh SRCDIR GATELAB
. "$(dirname "$0")/shell_test.sh" interrupts "$@"
kids=""
trap 'for p in $kids; do kill -9 $p 2>/dev/null; done; rm -rf "$W"' EXIT

no_tmps() {
    local left
    left=$(find . -name '*.tmp' | head -3)
    [ -z "$left" ] || bad "$1: temporaries left behind: $left"
}
# alive PID: running (a zombie nobody reaped does not count)
alive() { [ -e "/proc/$1/status" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null; }
# wait_for FILE: until it exists (at most 20 s)
wait_for() {
    for _ in $(seq 200); do [ -e "$1" ] && return 0; sleep 0.1; done
    return 1
}
# interrupted WHAT SIG PID LOCK: send SIG once LOCK exists; exit 130, one
# line saying so, LOCK removed, no temporaries
interrupted() {
    local what=$1 sig=$2 pid=$3 lock=$4
    wait_for "$lock" || bad "$what: never took its lock $lock"
    kill -"$sig" "$pid"
    wait "$pid"
    local rc=$?
    [ $rc -eq 130 ] || bad "$what: SIG$sig gave exit $rc, want 130 ($(tail -2 err.txt))"
    grep -q "interrupted" err.txt || bad "$what: no 'interrupted' line: $(cat err.txt)"
    [ -e "$lock" ] && bad "$what: $lock left behind"
    no_tmps "$what"
}

T="--config $S/experiments/tiny.ini --quiet"
"$G" train $T --set steps=4 --set probe_n=1024 --out run.h5 || { echo "setup: train failed"; exit 1; }
"$G" report . --out rep >/dev/null 2>&1 || { echo "setup: report failed"; exit 1; }
cp rep/REPORT.md report.orig && cp run.h5 run.orig

# report, held in its first figure by a gnuplot that never finishes
mkdir fakebin
printf '#!/bin/sh\necho $$ >%s/gnuplot.pid\nexec sleep 60\n' "$W" >fakebin/gnuplot
chmod +x fakebin/gnuplot
for sig in TERM INT; do
    rm -f gnuplot.pid
    PATH="$W/fakebin:$PATH" "$G" report . --out rep >/dev/null 2>err.txt &
    pid=$!
    kids="$kids $pid"
    wait_for gnuplot.pid || bad "report never ran gnuplot"
    kill -$sig $pid
    wait $pid
    rc=$?
    [ $rc -eq 130 ] || bad "report: SIG$sig gave exit $rc, want 130"
    [ "$(wc -l <err.txt)" -eq 1 ] || bad "report: want one line: $(cat err.txt)"
    cmp -s rep/REPORT.md report.orig || bad "report: SIG$sig changed REPORT.md"
    no_tmps "report SIG$sig"
    sleep 0.2
    gp=$(cat gnuplot.pid 2>/dev/null)
    [ -n "$gp" ] && alive "$gp" && { bad "report: gnuplot outlived it"; kill -9 "$gp"; }
done

# intervene (writes the run file when done; the lock is held from the start)
for sig in TERM INT; do
    "$G" intervene run.h5 all >/dev/null 2>err.txt &
    kids="$kids $!"
    interrupted "intervene" $sig $! run.h5.lock
    cmp -s run.h5 run.orig || bad "intervene: SIG$sig changed run.h5"
done

# eval (polls between batches) and train (checkpoints, resumable)
"$G" eval run.h5 --lengths 1x,2x,4x --batches 4000 >/dev/null 2>err.txt &
kids="$kids $!"
interrupted "eval" INT $! run.h5.lock
cmp -s run.h5 run.orig || bad "eval: SIGINT changed run.h5"
"$G" train $T --set steps=200000 --out long.h5 2>err.txt &
kids="$kids $!"
interrupted "train" TERM $! long.h5.lock

# start_sweep FILE OUT STEPS LOG: write a sweep of baseline and g1-elem at
# STEPS steps to FILE (an eval every 1000), run it into OUT in the
# background and wait until both trainers hold their locks; sets sp (the
# sweep) and tpids (trainers)
start_sweep() {
    printf '[sweep]\npreset = %s\nseeds = 1\nset = steps=%s\nset = ckpt_every=50\nset = eval_every=1000\n' \
        "$S/experiments/tiny.ini" "$3" >"$1"
    printf '[run baseline]\nvariant = baseline\n[run g1-elem]\nvariant = g1-elem\n' >>"$1"
    "$G" sweep "$1" --out "$2" --jobs 2 --no-report >"$4" 2>&1 &
    sp=$!
    kids="$kids $sp"
    wait_for "$2/baseline_s1.h5.lock" && wait_for "$2/g1-elem_s1.h5.lock" ||
        bad "sweep: no trainer started"
    tpids=$(sed -n 's/^pid //p' "$2"/*.lock)
}

# a sweep SIGKILLed mid-way: its trainers stop too; the rerun picks them up
start_sweep k.sweep sw 1000 sweep1.log
kill -KILL $sp
wait $sp 2>/dev/null
for _ in $(seq 100); do
    left=""
    for p in $tpids; do alive "$p" && left="$left $p"; done
    [ -z "$left" ] && break
    sleep 0.1
done
[ -z "$left" ] || { bad "sweep: trainers outlived the killed sweep:$left"; kill -9 $left; }
"$G" sweep k.sweep --out sw --jobs 2 --no-report >sweep2.log 2>&1 ||
    bad "sweep rerun failed: $(tail -3 sweep2.log)"
# resumed from its checkpoint, restarted when killed before the first one,
# or started afresh when killed before its run file existed (a slow start,
# as under the sanitizers)
grep -qE "(resume|restart|start) baseline_s1" sweep2.log ||
    bad "the rerun did not pick up baseline_s1: $(cat sweep2.log)"
grep -qP '\t(failed|killed)$' sw/sweep_status.tsv && bad "a run recorded failed: $(cat sw/sweep_status.tsv)"

# a sweep SIGTERMed mid-way passes the signal on: its trainers checkpoint and
# stop, each run is recorded interrupted (resumable), the sweep exits 130
start_sweep t.sweep st 200000 sweep3.log
kids="$kids $tpids"
kill -TERM $sp
for _ in $(seq 300); do alive $sp || break; sleep 0.1; done
if alive $sp; then
    bad "sweep: still running 30 s after SIGTERM (trainers not told?)"
    kill -9 $sp $tpids 2>/dev/null
fi
wait $sp
rc=$?
[ $rc -eq 130 ] || bad "sweep: SIGTERM gave exit $rc, want 130 ($(tail -2 sweep3.log))"
for p in $tpids; do alive "$p" && bad "sweep: trainer $p outlived the SIGTERMed sweep"; done
for r in baseline g1-elem; do
    grep -qP "^$r\t1\t.*\tinterrupted$" st/sweep_status.tsv ||
        bad "sweep: $r not recorded interrupted: $(cat st/sweep_status.tsv)"
done

[ $fail = 0 ] && echo "interrupts: PASS"
exit $fail
