#!/usr/bin/env bash
# thread_bits.sh GATELAB SRC: a run's bits do not depend on its thread
# count. The batch is cut into a fixed number of shards whose gradients are
# summed in shard order (trainer.c), so tiny runs of baseline and g1-elem at
# 1 and at 3 threads (3 does not divide the shards evenly) must end with
# byte-identical /params.
set -u
bin=$1
src=$(cd "$2" && pwd)
fail() { echo "FAIL: $*"; exit 1; }
command -v h5dump >/dev/null || { echo "SKIP: no h5dump (Debian hdf5-tools)"; exit 77; }
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
n=0
for v in baseline g1-elem; do
    for t in 1 3; do
        "$bin" train --config "$src/experiments/tiny.ini" --set variant=$v \
            --set threads=$t --quiet --out "$d/$v-$t.h5" \
            >/dev/null 2>"$d/err" || fail "$v threads=$t: $(cat "$d/err")"
        h5dump -g /params "$d/$v-$t.h5" | tail -n +2 >"$d/$v-$t.txt" || fail "h5dump $v-$t"
    done
    cmp -s "$d/$v-1.txt" "$d/$v-3.txt" || fail "$v: /params at 3 threads differ from 1 thread"
    n=$((n + 1))
done
echo "$n passed, 0 failed"
