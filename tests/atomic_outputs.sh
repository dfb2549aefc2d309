#!/usr/bin/env bash
# atomic_outputs.sh: every output is written to a fresh temporary and
# renamed into place, and a lock file is never written through an
# existing name. A write that fails half-way (a full disk, simulated with
# ulimit -f) leaves the previous complete REPORT.md, results.csv, figure
# and Slurm script byte for byte; a user's file hard-linked at a name a
# writer once used (RUN.h5.tmp, RUN.h5.ckpt.tmp, RUN.h5.lock) keeps its
# content; a lock path that is a link or a FIFO is refused (exit 2, one
# line) and left as it was.
#   tests/atomic_outputs.sh SRCDIR GATELAB
. "$(dirname "$0")/shell_test.sh" atomic_outputs "$@"
trap 'rm -rf "$W"' EXIT

same() { cmp -s "$1" "$2" || bad "$1 was changed"; }
no_tmps() {
    local left
    left=$(find . -name '*.tmp' | head -3)
    [ -z "$left" ] || bad "temporaries left behind: $left"
}
# small_disk CMD...: run CMD where no file may grow past 8 KiB
small_disk() { (trap '' XFSZ; ulimit -f 8; "$@") >/dev/null 2>err.txt; }

T="--config $S/experiments/tiny.ini --set steps=4 --set eval_every=2 --set ckpt_every=2 --quiet"
"$G" train $T --out run.h5 || { echo "setup: train failed"; exit 1; }
"$G" report . --out rep >/dev/null || { echo "setup: report failed"; exit 1; }
cp rep/REPORT.md report.orig && cp rep/results.csv csv.orig
[ "$(stat -c %s report.orig)" -gt 8192 ] || bad "setup: REPORT.md too small to test"

# a report that cannot finish leaves the previous one whole
small_disk "$G" report . --out rep && bad "report under a full disk exited 0"
same rep/REPORT.md report.orig
same rep/results.csv csv.orig
no_tmps

# a heatmap that cannot finish leaves the previous PNG whole
"$G" heatmap run.h5 --out map.png >/dev/null || bad "heatmap failed"
cp map.png map.orig
[ "$(stat -c %s map.orig)" -gt 8192 ] || bad "setup: map.png too small to test"
small_disk "$G" heatmap run.h5 --out map.png && bad "heatmap under a full disk exited 0"
same map.png map.orig
no_tmps

# hard links at a writer's old fixed names are never written through
echo "precious notes" >notes.txt && cp notes.txt notes.orig
ln notes.txt run.h5.tmp
"$G" intervene run.h5 gates-open >/dev/null 2>&1 || bad "intervene failed"
same notes.txt notes.orig
rm run.h5.tmp
ln notes.txt run2.h5.ckpt.tmp
"$G" train $T --out run2.h5 || bad "train beside a linked .ckpt.tmp failed"
same notes.txt notes.orig
rm run2.h5.ckpt.tmp
# ... nor a lock file: refused, exit 2, one line; the file keeps its content
ln notes.txt run3.h5.lock
"$G" train $T --out run3.h5 2>err.txt
rc=$?
[ $rc -eq 2 ] || bad "train with a hard-linked lock exited $rc, want 2"
[ "$(wc -l <err.txt)" -eq 1 ] || bad "want one line: $(cat err.txt)"
same notes.txt notes.orig
[ -e run3.h5 ] && bad "run3.h5 was written despite the refused lock"

# a lock path that is a symbolic link or a FIFO: refused with the reason, kept
ln -s notes.txt run4.h5.lock
mkfifo run5.h5.lock
for r in run4 run5; do
    "$G" train $T --out $r.h5 2>err.txt
    rc=$?
    [ $rc -eq 2 ] || bad "$r: exit $rc, want 2"
    [ "$(wc -l <err.txt)" -eq 1 ] || bad "$r: want one line: $(cat err.txt)"
    grep -q 'not a gatelab lock file' err.txt || bad "$r: no reason: $(cat err.txt)"
done
[ -L run4.h5.lock ] || bad "the symbolic-link lock was removed"
[ -p run5.h5.lock ] || bad "the FIFO lock was removed"
same notes.txt notes.orig

# a stale lock of a dead writer is still taken over
echo "pid 999999" >run6.h5.lock
"$G" train $T --out run6.h5 || bad "a stale lock blocked train"
[ -e run6.h5.lock ] && bad "run6.h5.lock left behind"
no_tmps

[ $fail = 0 ] && echo "atomic_outputs: PASS"
exit $fail
