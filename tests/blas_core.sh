#!/usr/bin/env bash
# blas_core.sh GATELAB TEST_REFERENCE: the BLAS core auto-selection end to
# end. A child is started on OpenBLAS's generic Prescott core; with the
# test hook GATELAB_BLAS_CORE=test-generic that preset counts as OpenBLAS's
# own fallback, so gatelab must re-exec itself on the best core this CPU
# supports. Then the PyTorch fixture test runs on that core. Also: a
# user-set OPENBLAS_CORETYPE and GATELAB_BLAS_CORE=keep are left alone, and
# a failed sgemm check falls back with a one-line warning.
set -u
bin=$1
ref=$2
fail() { echo "FAIL: $*"; exit 1; }
flags=$(grep -m1 '^flags' /proc/cpuinfo)
has() { [[ " $flags " == *" $1 "* ]]; }
if has avx512f && has avx512bw && has avx512vl && has avx512dq; then best=SkylakeX
elif has avx2 && has fma; then best=Haswell
else echo "SKIP: this CPU has neither AVX-512 nor AVX2+FMA"; exit 77; fi
core() { env "$@" "$bin" --version | sed -n 's/^BLAS: .*, core \([^ ]*\) .*/\1/p'; }
env -u OPENBLAS_CORETYPE -u GATELAB_BLAS_CORE true  # env -u works
export -n GATELAB_BLAS_AUTO GATELAB_BLAS_FALLBACK 2>/dev/null
unset GATELAB_BLAS_AUTO GATELAB_BLAS_FALLBACK

c=$(core OPENBLAS_CORETYPE=Prescott GATELAB_BLAS_CORE=)
[ "$c" = Prescott ] || fail "a user-set OPENBLAS_CORETYPE=Prescott gave core '$c'"
c=$(core OPENBLAS_CORETYPE=Prescott GATELAB_BLAS_CORE=keep)
[ "$c" = Prescott ] || fail "GATELAB_BLAS_CORE=keep gave core '$c'"
out=$(env OPENBLAS_CORETYPE=Prescott GATELAB_BLAS_CORE=test-generic "$bin" --version 2>&1)
echo "$out" | grep -q "core $best (auto-selected; OpenBLAS had chosen Prescott)" ||
    fail "forced generic core was not upgraded to $best: $out"
err=$(env OPENBLAS_CORETYPE=Prescott GATELAB_BLAS_CORE=test-badverify "$bin" --version 2>&1 >/dev/null)
[ "$(echo "$err" | wc -l)" = 1 ] && echo "$err" | grep -q "warning: .*going back to Prescott" ||
    fail "a failed check did not give one warning line: $err"
c=$(core OPENBLAS_CORETYPE=Prescott GATELAB_BLAS_CORE=test-badverify)
[ "$c" = Prescott ] || fail "a failed check left core '$c'"
# the PyTorch fixtures on the upgraded core (the environment gatelab set)
OPENBLAS_CORETYPE=$best GATELAB_BLAS_AUTO=Prescott "$ref" >/dev/null 2>&1 ||
    fail "test_reference fails on the upgraded core $best"
# and a short training run upgrades and is bit-identical to one started on $best
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
src=$(dirname "$0")/..
for m in auto direct; do
    if [ $m = auto ]; then e=(OPENBLAS_CORETYPE=Prescott GATELAB_BLAS_CORE=test-generic)
    else e=(OPENBLAS_CORETYPE=$best); fi
    env "${e[@]}" "$bin" train --config "$src/experiments/tiny.ini" --set steps=8 \
        --set eval_every=4 --set ckpt_every=0 --out "$d/$m.h5" >"$d/$m.log" 2>&1 ||
        fail "train ($m) failed: $(tail -2 "$d/$m.log")"
done
dump() { h5dump -d /metrics/train/loss -g /params "$1" | tail -n +2; }
if command -v h5dump >/dev/null; then
    [ "$(dump "$d/auto.h5")" = "$(dump "$d/direct.h5")" ] ||
        fail "the auto-selected core trained differently from OPENBLAS_CORETYPE=$best"
fi
# every run file records the BLAS that trained it
attr() { h5dump -a "/$2" "$1" | sed -n 's/^ *(0): "\(.*\)"$/\1/p'; }
if command -v h5dump >/dev/null; then
    [ "$(attr "$d/auto.h5" blas_core)" = "$best" ] || fail "run file blas_core: $(attr "$d/auto.h5" blas_core)"
    [ "$(attr "$d/auto.h5" blas_core_how)" = "auto-selected; OpenBLAS had chosen Prescott" ] ||
        fail "run file blas_core_how: $(attr "$d/auto.h5" blas_core_how)"
    [ "$(attr "$d/auto.h5" blas_library)" = OpenBLAS ] || fail "run file blas_library"
    [ -n "$(attr "$d/auto.h5" blas_version)" ] || fail "run file blas_version is empty"
fi
echo "1 passed, 0 failed"
