#!/usr/bin/env bash
# shards.sh GATELAB SRC: the config key shards. A batch is cut into
# min(shards, batch_size) shards whose gradients are summed in shard order
# (trainer.c), so on tiny.ini with a batch of 16:
#   a  shards = 16 ends with the same /params at 1, 2, 4 and 16 threads;
#   b  shards = 8 set explicitly ends with the default's /params;
#   c  shards = 16 ends with other /params than shards = 8 (the shard count
#      is part of the arithmetic, the thread count is not);
#   d  threads above the shards train to the same bits with one warning
#      naming shards, and threads within them give no warning;
#   e  shards 0, 257 and a word are refused in one line naming shards.
set -u
bin=$1
src=$(cd "$2" && pwd)
fail() { echo "FAIL: $*"; exit 1; }
command -v h5dump >/dev/null || { echo "SKIP: no h5dump (Debian hdf5-tools)"; exit 77; }
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
# train NAME SETS...: a tiny run with a batch of 16, its /params as d/NAME.txt
train() {
    local name=$1
    shift
    local sets=()
    for s in "$@"; do sets+=(--set "$s"); done
    "$bin" train --config "$src/experiments/tiny.ini" --set batch_size=16 "${sets[@]}" \
        --quiet --out "$d/$name.h5" >/dev/null 2>"$d/$name.err" ||
        fail "$name: $(cat "$d/$name.err")"
    h5dump -g /params "$d/$name.h5" | tail -n +2 >"$d/$name.txt" || fail "h5dump $name"
}
same() { cmp -s "$d/$1.txt" "$d/$2.txt"; }
n=0
for t in 1 2 4 16; do train "s16-t$t" shards=16 threads=$t; done
for t in 2 4 16; do same s16-t1 "s16-t$t" || fail "a: shards=16 at $t threads differs from 1"; done
for t in 1 2 4 16; do
    [ ! -s "$d/s16-t$t.err" ] || fail "a: shards=16 threads=$t wrote: $(cat "$d/s16-t$t.err")"
done
n=$((n + 1))
train default threads=1
train s8 shards=8 threads=1
same default s8 || fail "b: shards=8 differs from the default"
n=$((n + 1))
same default s16-t1 && fail "c: shards=16 gave the same /params as shards=8"
n=$((n + 1))
train default-t16 threads=16
same default default-t16 || fail "d: 16 threads over 8 shards differ from 1 thread"
[ "$(wc -l <"$d/default-t16.err")" = 1 ] && grep -q "warning: threads 16 .*raise shards" \
    "$d/default-t16.err" || fail "d: no one-line warning naming shards: $(cat "$d/default-t16.err")"
n=$((n + 1))
for v in 0 257 x; do
    "$bin" train --config "$src/experiments/tiny.ini" --set shards=$v --quiet \
        --out "$d/bad.h5" >/dev/null 2>"$d/bad.err"
    rc=$?
    [ $rc = 2 ] || fail "e: shards=$v gave exit $rc, not 2"
    [ "$(wc -l <"$d/bad.err")" = 1 ] && grep -q "key 'shards': bad value '$v'" "$d/bad.err" ||
        fail "e: shards=$v not refused in one line naming shards: $(cat "$d/bad.err")"
    [ ! -e "$d/bad.h5" ] || fail "e: shards=$v left a run file"
done
n=$((n + 1))
echo "$n passed, 0 failed"
