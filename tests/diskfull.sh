#!/bin/bash
# diskfull.sh: a full disk mid-run. Trains the tiny preset into
# a small tmpfs that is nearly full, and checks that
#   1. the run stops with exit 1 and one clear error naming the path,
#   2. the last good checkpoint survives (and no .tmp file is left),
#   3. once space is freed, --resume finishes the run, and its losses are
#      bit-identical to an unbroken run.
# Needs root (mount -t tmpfs); skips with exit 0 and a message otherwise.
#
#   tests/diskfull.sh [BUILDDIR]      (default build)
set -u
cd "$(dirname "$0")/.."
B=${1:-build}
G=$PWD/$B/gatelab
[ -x "$G" ] || { echo "diskfull: no $G (build first)"; exit 2; }
W=$(mktemp -d /tmp/gatelab-diskfull-XXXXXX)
M=$W/mnt
mkdir -p "$M"
if ! mount -t tmpfs -o size=2m tmpfs "$M" 2>/dev/null; then
    echo "diskfull: SKIP (cannot mount a tmpfs: needs root)"
    rm -rf "$W"
    exit 0
fi
trap 'umount "$M" 2>/dev/null; rm -rf "$W"' EXIT
ARGS="--config experiments/tiny.ini -q --set steps=200 --set eval_every=40 --set ckpt_every=20"
fail() { echo "diskfull: FAIL: $*"; exit 1; }

"$G" train $ARGS --out "$W/ref.h5" || fail "reference run"

# leave ~1.1 MB free: enough to start, not enough to finish
dd if=/dev/zero of="$M/filler" bs=1k count=900 status=none 2>/dev/null
"$G" train $ARGS --out "$M/run.h5" 2>"$W/err"
rc=$?
echo "diskfull: run on the full disk exited $rc: $(cat "$W/err")"
[ $rc -eq 1 ] || fail "exit code $rc, want 1"
[ "$(wc -l <"$W/err")" -eq 1 ] || fail "want one line on stderr"
grep -q "$M/run.h5" "$W/err" || fail "the error does not name the path"
grep -qi "no space" "$W/err" || fail "the error does not say the disk is full"
ls "$M"/run.h5.*.tmp >/dev/null 2>&1 && fail "a temporary copy was left behind"
ls "$M"/run.h5.ckpt.*.tmp >/dev/null 2>&1 && fail "a checkpoint temporary was left behind"
[ -s "$M/run.h5.ckpt" ] || fail "the checkpoint is gone"
h5dump -H "$M/run.h5.ckpt" >/dev/null 2>&1 || fail "the checkpoint does not open"
h5dump -H "$M/run.h5" >/dev/null 2>&1 || fail "the run file does not open"
step=$(h5dump -a step "$M/run.h5.ckpt" | sed -n 's/^ *(0): //p')
echo "diskfull: last good checkpoint at step $step"

rm -f "$M/filler"
"$G" train $ARGS --out "$M/run.h5" --resume 2>"$W/err2" || fail "resume: $(cat "$W/err2")"
a=$(h5dump -d /metrics/train/loss -y -w 0 "$W/ref.h5" | tail -n +2)
b=$(h5dump -d /metrics/train/loss -y -w 0 "$M/run.h5" | tail -n +2)
[ "$a" = "$b" ] || fail "resumed losses differ from the unbroken run"
st=$(h5dump -a status "$M/run.h5" | sed -n 's/.*(0): "\(.*\)".*/\1/p')
[ "$st" = done ] || fail "status '$st' after resume"
echo "diskfull: PASS (resumed from step $step after freeing space; losses bit-identical)"
