#!/usr/bin/env bash
# bench.sh GATELAB SRC: `gatelab bench` checks its config before measuring,
# prints the BLAS core, and (where python3-torch is installed) runs the
# PyTorch twin on the preset's own shape from any working directory: the
# twin's parameter count must equal gatelab's (tiny.ini has GQA, 1 kv head).
set -u
bin=$1
src=$(cd "$2" && pwd)
fail() { echo "FAIL: $*"; exit 1; }
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cd "$d"
"$bin" bench --config "$src/experiments/tiny.ini" --set n_heads=3 >out 2>err
rc=$?
[ $rc = 2 ] || fail "a bad config gave exit $rc, not 2"
! grep -q "sgemm peak" out || fail "bench measured before checking its config"
[ "$(wc -l <err)" = 1 ] || fail "a bad config gave not one error line: $(cat err)"
"$bin" bench --config "$src/experiments/tiny.ini" --torch-core "x'; touch pwned" >out 2>err
[ $? = 2 ] && [ ! -e pwned ] || fail "--torch-core with a quote was not refused"
# the twin is Python alone: the sanitized suite (ASAN_OPTIONS set) leaves
# it to the plain one
torch=--torch
if [ -n "${ASAN_OPTIONS:-}" ]; then torch=
elif ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then torch=; fi
"$bin" bench --config "$src/experiments/tiny.ini" $torch -v baseline -v g1-head \
    --steps 1 --repeats 1 --warmup 0 >out 2>err || fail "bench failed: $(cat err)"
grep -q "^BLAS: OpenBLAS .*, core [A-Za-z0-9]" out || fail "no BLAS core line: $(cat out)"
for v in baseline g1-head; do
    g=$(awk -v v=$v '$1 == "gatelab" && $2 == v {print $8}' out)
    [ -n "$g" ] || fail "no gatelab row for $v: $(cat out)"
    [ -z "$torch" ] && continue
    t=$(awk -v v=$v '$1 == "pytorch" && $2 == v {print $8}' out)
    [ "$t" = "$g" ] || fail "$v: the PyTorch twin has $t params, gatelab $g: $(cat out)"
done
# --profile: one line under the row with every family's ms per step, each
# at least 0, products above 0, the shards' sum above 0 (tiny.ini runs 4
# shards), and the families within the step
"$bin" bench --config "$src/experiments/tiny.ini" --profile --steps 2 --repeats 1 --warmup 0 \
    >out 2>err || fail "bench --profile failed: $(cat err)"
awk '/^  profile, ms\/step:/ {
        n = 0; sum = 0
        for (i = 3; i < NF; i++)
            if ($i ~ /^(products|attention|norms|activations|loss|optimizer|reduce|sync)$/) {
                if ($(i + 1) < 0) exit 1
                sum += $(i + 1); n++; seen[$i] = $(i + 1)
            }
        if (n != 8 || seen["products"] <= 0 || seen["reduce"] <= 0 || $NF <= 0 || sum > $NF * 1.01) exit 1
        ok = 1
    }
    END { exit !ok }' out || fail "no well-formed profile line: $(cat out)"
# --threads above the config's shards: the bench raises shards to the
# threads and says so (tiny.ini at 1 thread: batch 4, so 4 of shards = 8;
# with batch 16 and 12 threads, 12 shards and 12 threads)
grep -q "^shards: 4 (shards = 8, at least --threads; batch_size 4; running threads 1)" out ||
    fail "no shards line for tiny.ini: $(cat out)"
"$bin" bench --config "$src/experiments/tiny.ini" --set batch_size=16 --threads 12 --steps 1 \
    --repeats 1 --warmup 0 >out 2>err || fail "bench --threads 12 failed: $(cat err)"
grep -q "^shards: 12 (shards = 12, at least --threads; batch_size 16; running threads 12)" out ||
    fail "bench --threads 12 did not raise shards to 12: $(cat out)"
# the products line names the blocking of the path the FMA peak line names,
# on each path this CPU runs (the plain path, which every CPU runs: one
# element at a time); a path it lacks is refused at start-up with a line
# that names both
for path in avx512 avx2 base; do
    if ! GATELAB_SIMD=$path "$bin" bench --config "$src/experiments/tiny.ini" --steps 1 \
        --repeats 1 --warmup 0 >out 2>err; then
        grep -q "GATELAB_SIMD=$path: this CPU has only " err && continue
        fail "bench under GATELAB_SIMD=$path failed: $(cat err)"
    fi
    ran=$(sed -n 's/^FMA peak: .*, \([a-z0-9]*\))$/\1/p' out)
    [ "$ran" = "$path" ] || fail "GATELAB_SIMD=$path ran the $ran path: $(cat out)"
    case $path in base) want="plain: one element at a time" ;; *) want="$path: tiles " ;; esac
    grep -q "^products: gatelab's own (op_gemm.c, $want" out ||
        fail "the products line does not name the $path blocking: $(cat out)"
done
[ -n "$torch" ] || echo "note: PyTorch rows not checked (python3-torch not installed, or the sanitized suite)"
echo "1 passed, 0 failed"
