#!/usr/bin/env bash
# repro.sh GATELAB: gatelab's arithmetic is one, whatever the CPU. Its
# products (op_gemm.c) and elementwise kernels (simd.h) give the same bits
# on every SIMD path and whichever OpenBLAS core is loaded, so:
#   1  every catalog id's tiny run ends with the same /params as the
#      default under GATELAB_SIMD=avx512, avx2 and base, and under
#      OPENBLAS_CORETYPE=SkylakeX, Haswell and Sandybridge (each path and
#      core this CPU can run; the files must record the path and core asked
#      for): baseline and g1-elem under each, every other id under one of
#      them in turn (tests/params_hashes.sh runs every id, at every merge);
#   2  under qemu-x86_64 -cpu Haswell, a CPU with AVX2 and FMA but no
#      AVX-512 (where gatelab must refuse GATELAB_SIMD=avx512), 6-step tiny
#      runs of baseline and g1-elem have the native runs' /params (on a CPU
#      without AVX-512 part 1 already ran there natively: skipped, with a note);
#   3  the retired key `reproducible` is refused by train with its one-line
#      reason, and a run file that recorded reproducible = 1 (in its config
#      text and its typed /config attributes) still reads and reruns: eval,
#      intervene, stream.
# Part 2 needs qemu-user (skipped without it, with a note); part 3 needs
# python3-h5py to write the old file (skipped without it, with a note).
set -u
bin=$1
fail() { echo "FAIL: $*"; exit 1; }
flags=$(grep -m1 '^flags' /proc/cpuinfo)
has() { [[ " $flags " == *" $1 "* ]]; }
command -v h5dump >/dev/null || { echo "SKIP: no h5dump (Debian hdf5-tools)"; exit 77; }
src=$(cd "$(dirname "$0")/.." && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
attr() { h5dump -a "$2" "$1" | sed -n 's/^ *(0): "\(.*\)"$/\1/p'; }
params() { h5dump -g /params "$1" | tail -n +2 | sha256sum | cut -c1-16; }
ids=$(grep -rhoE '\{\s*\.id = "[^"]+"' "$src"/src --include='variants*.c' |
    sed 's/.*"\(.*\)"/\1/')
[ -n "$ids" ] || fail "no catalog ids found under $src/src"

# the settings of part 1 this CPU can run, each as "VAR=VALUE"
settings=(GATELAB_SIMD=base OPENBLAS_CORETYPE=Sandybridge)
if has avx2 && has fma; then settings+=(GATELAB_SIMD=avx2 OPENBLAS_CORETYPE=Haswell); fi
# AVX-512 as gatelab's avx512 path needs it (F, BW, VL, DQ)
avx512=0
has avx512f && has avx512bw && has avx512vl && has avx512dq && avx512=1
if [ $avx512 = 1 ]; then settings+=(GATELAB_SIMD=avx512 OPENBLAS_CORETYPE=SkylakeX); fi

# train ID OUT [VAR=VALUE...]: a tiny run of ID into OUT under the settings
train() {
    local id=$1 out=$2
    shift 2
    env "$@" "$bin" train --config "$src/experiments/tiny.ini" --set variant="$id" --quiet \
        --out "$out" >/dev/null 2>"$dir/err"
}

# baseline and g1-elem under every setting; every other id under one,
# taken in turn, so each setting sees a seventh of the catalog and the
# test stays a few CPU-minutes. Under the sanitizers (run_sanitized.sh)
# every id still runs once, on the default path, and only baseline and
# g1-elem under the other settings: the plain suite holds the bits, the
# instrumented one looks for memory errors, which each id's default run
# and the settings' runs of those two reach (53 instrumented runs, not 92)
n=0
i=0
for id in $ids; do
    train "$id" "$dir/ref.h5" || fail "$id: $(head -c 200 "$dir/err")"
    want=$(params "$dir/ref.h5")
    rm -f "$dir"/ref.h5*
    these=("${settings[@]}")
    case $id in
    baseline | g1-elem) ;;
    *) if [ -n "${ASAN_OPTIONS:-}" ]; then these=(); else these=("${settings[i % ${#settings[@]}]}"); fi ;;
    esac
    i=$((i + 1))
    for s in "${these[@]}"; do
        train "$id" "$dir/s.h5" "$s" || fail "$id under $s: $(head -c 200 "$dir/err")"
        case $s in
        GATELAB_SIMD=*) rec=$(attr "$dir/s.h5" simd_path) ;;
        *) rec=$(attr "$dir/s.h5" blas_core) ;;
        esac
        [ "$rec" = "${s#*=}" ] || fail "$id under $s: the run file records '$rec'"
        got=$(params "$dir/s.h5")
        [ "$got" = "$want" ] || fail "$id: /params under $s ($got) differ from the default ($want)"
        rm -f "$dir"/s.h5*
        n=$((n + 1))
    done
done
echo "ok: $n runs over $(echo $ids | wc -w) ids bit-identical under ${settings[*]} (baseline and g1-elem under each, the others under one in turn${ASAN_OPTIONS:+; sanitized: the others under none})"

if [ -n "${ASAN_OPTIONS:-}" ]; then
    # emulating an instrumented binary only adds minutes; the plain suite runs it
    echo "note: sanitizer build, qemu part skipped"
elif [ $avx512 = 0 ]; then
    echo "note: this CPU has no AVX-512: part 1 ran the AVX2-only case natively, the emulated part skipped"
elif ! command -v qemu-x86_64 >/dev/null; then
    echo "note: no qemu-x86_64 (Debian qemu-user), the emulated part skipped"
else
    if GATELAB_SIMD=avx512 qemu-x86_64 -cpu Haswell "$bin" --version >/dev/null 2>&1; then
        fail "under qemu -cpu Haswell gatelab still offers AVX-512"
    fi
    # 6 steps each (every op's forward and backward and AdamW, about 13 s
    # emulated): emulation is far slower than the CPU
    for id in baseline g1-elem; do
        "$bin" train --config "$src/experiments/tiny.ini" --set variant="$id" --set steps=6 \
            --quiet --out "$dir/n.h5" >/dev/null 2>"$dir/err" ||
            fail "$id native: $(head -c 200 "$dir/err")"
        # qemu warns about every host CPU feature TCG lacks: stderr is kept apart
        qemu-x86_64 -cpu Haswell "$bin" train --config "$src/experiments/tiny.ini" \
            --set variant="$id" --set steps=6 --quiet --out "$dir/q.h5" >/dev/null \
            2>"$dir/qemu.err" ||
            fail "$id emulated: $(grep -v 'TCG doesn.t support' "$dir/qemu.err" | head -c 200)"
        [ "$(attr "$dir/q.h5" simd_path)" = avx2 ] || fail "$id emulated: path not avx2"
        [ "$(params "$dir/q.h5")" = "$(params "$dir/n.h5")" ] ||
            fail "$id: /params differ between this CPU and an emulated Haswell"
        rm -f "$dir"/n.h5* "$dir"/q.h5*
    done
    echo "ok: baseline and g1-elem bit-identical on an emulated AVX2-only Haswell"
fi

"$bin" train --config "$src/experiments/tiny.ini" --set reproducible=1 --quiet \
    --out "$dir/r.h5" >/dev/null 2>"$dir/err"
rc=$?
[ $rc = 2 ] || fail "train --set reproducible=1 exited $rc, not 2"
grep -q "reproducible.: retired: the default products give the same bits on every CPU; see docs/speed.md" \
    "$dir/err" || fail "train --set reproducible=1 said: $(head -c 200 "$dir/err")"
[ "$(wc -l <"$dir/err")" = 1 ] || fail "the refusal is not one line: $(cat "$dir/err")"
[ ! -e "$dir/r.h5" ] || fail "a refused train wrote its run file"

if ! /usr/bin/python3 -c 'import h5py' 2>/dev/null; then
    echo "note: no python3-h5py, the old run file part skipped"
    exit 0
fi
train g1-elem "$dir/old.h5" || fail "g1-elem: $(head -c 200 "$dir/err")"
/usr/bin/python3 - "$dir/old.h5" <<'EOF' || fail "could not write reproducible = 1 into the run file"
import sys
import h5py
import numpy as np

with h5py.File(sys.argv[1], "r+") as f:
    g = f["config"]
    t = g.attrs["text"]
    t = t.decode() if isinstance(t, bytes) else t
    assert "reproducible" not in t and "[train]\n" in t
    g.attrs["text"] = t.replace("[train]\n", "[train]\nreproducible = 1\n", 1)
    g.attrs["reproducible"] = np.int64(1)
EOF
for c in "eval --lengths 1x" "intervene" "stream"; do
    set -- $c
    cmd=$1
    shift
    k=()
    [ "$cmd" = intervene ] && k=(gates-open)
    "$bin" "$cmd" "$dir/old.h5" "$@" "${k[@]}" >/dev/null 2>"$dir/err" ||
        fail "$cmd of a run file that recorded reproducible = 1: $(head -c 200 "$dir/err")"
done
echo "ok: reproducible is refused; a run file that recorded it reads and reruns"
