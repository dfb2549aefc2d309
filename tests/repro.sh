#!/usr/bin/env bash
# repro.sh GATELAB: the reproducible mode (config key reproducible, repro.h)
# gives the same bits whether or not the machine has AVX-512. Two tiny
# g1-elem runs in that mode:
#   A  natively, started on OpenBLAS's AVX-512 core (SkylakeX) with
#      gatelab's AVX-512 kernels asked for: the mode must re-execute onto
#      the Haswell core and the AVX2 kernels;
#   B  under qemu-x86_64 -cpu Haswell, a CPU with AVX2 and FMA but no
#      AVX-512 (the test first checks that gatelab there refuses
#      GATELAB_SIMD=avx512), with the environment already pinned, since an
#      exec from inside qemu-user would leave the emulator.
# Their final weights must be byte-identical, and both files must record
# core Haswell and path avx2. A third run, C, out of the mode on the AVX-512
# core, must record those instead (the mode is what pins them). Out of the
# mode the products are gatelab's own (op_gemm.c), whose paths give the
# same bits: a fourth run, D, out of the mode under qemu (AVX2, Haswell
# core), must have C's weights.
# Needs qemu-user (skipped without it) and AVX2 + FMA.
set -u
bin=$1
fail() { echo "FAIL: $*"; exit 1; }
flags=$(grep -m1 '^flags' /proc/cpuinfo)
has() { [[ " $flags " == *" $1 "* ]]; }
has avx2 && has fma || { echo "SKIP: no AVX2 + FMA"; exit 77; }
command -v qemu-x86_64 >/dev/null || { echo "SKIP: no qemu-x86_64 (Debian qemu-user)"; exit 77; }
# the sanitizer suite: the plain suite runs this check; emulating an
# instrumented binary only adds minutes
[ -z "${ASAN_OPTIONS:-}" ] || { echo "SKIP: sanitizer build (the plain suite checks this)"; exit 77; }
src=$(cd "$(dirname "$0")/.." && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cfg=(--config "$src/experiments/tiny.ini" --set variant=g1-elem --quiet)
native() { "$bin" train "${cfg[@]}" "$@"; }
# qemu warns about every host CPU feature TCG lacks: its stderr goes to a file
emulated() { qemu-x86_64 -cpu Haswell "$bin" train "${cfg[@]}" "$@" 2>"$dir/qemu.err"; }
attr() { h5dump -a "$2" "$1" | sed -n 's/^ *(0): "\(.*\)"$/\1/p'; }
params() { h5dump -g /params "$1" | tail -n +2; }

(
    unset OPENBLAS_L2_SIZE
    export OPENBLAS_CORETYPE=SkylakeX GATELAB_SIMD=avx512
    native --set reproducible=1 --out "$dir/a.h5"
) || fail "native reproducible run"
if GATELAB_SIMD=avx512 qemu-x86_64 -cpu Haswell "$bin" --version >/dev/null 2>&1; then
    fail "under qemu -cpu Haswell gatelab still offers AVX-512"
fi
(
    export OPENBLAS_CORETYPE=Haswell OPENBLAS_L2_SIZE=512 GATELAB_SIMD=avx2
    emulated --set reproducible=1 --out "$dir/b.h5"
) || fail "emulated run: $(grep -v 'TCG doesn.t support' "$dir/qemu.err")"
for f in a b; do
    [ "$(attr "$dir/$f.h5" blas_core)" = Haswell ] || fail "$f.h5: core $(attr "$dir/$f.h5" blas_core)"
    [ "$(attr "$dir/$f.h5" simd_path)" = avx2 ] || fail "$f.h5: path $(attr "$dir/$f.h5" simd_path)"
done
cmp <(params "$dir/a.h5") <(params "$dir/b.h5") || fail "weights differ with and without AVX-512"
if has avx512f && has avx512bw && has avx512vl && has avx512dq; then
    (
        export OPENBLAS_CORETYPE=SkylakeX GATELAB_SIMD=avx512
        native --out "$dir/c.h5"
    ) || fail "native run out of the mode"
    [ "$(attr "$dir/c.h5" blas_core)" = SkylakeX ] || fail "c.h5: core not SkylakeX"
    [ "$(attr "$dir/c.h5" simd_path)" = avx512 ] || fail "c.h5: path not avx512"
    (
        export OPENBLAS_CORETYPE=Haswell GATELAB_SIMD=avx2
        emulated --out "$dir/d.h5"
    ) || fail "emulated run out of the mode: $(grep -v 'TCG doesn.t support' "$dir/qemu.err")"
    cmp <(params "$dir/c.h5") <(params "$dir/d.h5") ||
        fail "out of the mode, weights differ between AVX-512 + SkylakeX and AVX2 + Haswell"
fi
echo "ok: runs are bit-identical with and without AVX-512, in the mode and out of it"
