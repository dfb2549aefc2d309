#!/bin/sh
# run_fuzzers.sh: build the libFuzzer targets through meson (-Dfuzz=true,
# clang, ASan + UBSan) and run each one for SECONDS (default 60) over its
# seed corpus.
#
#   tests/fuzz/run_fuzzers.sh [SECONDS] [TARGET...]
#
# The targets link the project's own static libraries (tests/fuzz/meson.build),
# so they follow every source list the build has. The build directory is
# build-fuzz/ (GATELAB_FUZZ_BUILD overrides it); needs clang and its libFuzzer
# runtime (experiments/install-deps.sh test installs both).
#
# New corpus entries go to BUILD/corpus/TARGET (the committed seeds in
# corpus/TARGET stay small); a crash is written to BUILD/crash-TARGET-*,
# classified by whose frames its stack shows (classify_stack.sh: HDF5's or
# ours, by shared object or source path), and the script exits 1 for a
# crash in our code. Copy such a file to regressions/TARGET/ and it is replayed
# by test_fuzz_regressions in the normal suite.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
secs=${1:-60}
[ $# -gt 0 ] && shift
all="config sweepfile protocol runread tokens tokenlines safetensors hfconfig hftok runlock"
targets=${*:-$all}
out=${GATELAB_FUZZ_BUILD:-$root/build-fuzz}
case $out in /*) ;; *) out=$(pwd)/$out ;; esac

if [ ! -f "$out/build.ninja" ]; then
    log=$(mktemp)
    CC=clang meson setup "$out" "$root" -Dfuzz=true -Dmpi=disabled \
        -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=plain \
        -Dc_args="-O1 -g -fno-sanitize-recover=undefined" >"$log" 2>&1 ||
        { cat "$log" >&2; rm -f "$log"; exit 1; }
    rm -f "$log"
fi
echo "== build the fuzz targets ($out)"
ninja -C "$out" $(for t in $targets; do echo tests/fuzz/fuzz_$t; done) >"$out/fuzz-build.log" 2>&1 ||
    { tail -30 "$out/fuzz-build.log" >&2; exit 1; }

# a crash is classified by its symbolized stack frames: without the
# symbolizer most frames are bare addresses and few can be told apart
command -v llvm-symbolizer >/dev/null ||
    { echo "run_fuzzers: llvm-symbolizer not found (Debian llvm; experiments/install-deps.sh test)" >&2; exit 2; }
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# Fork mode with -ignore_crashes: a crash is saved and fuzzing goes on, so
# one shallow HDF5-internal crash (see README.md) cannot hide bugs of ours.
# An input over rss_mb is replayed under a malloc limit of half of it.
rss_mb=2048
# fuzz_one T: fuzz target T for secs, then name and classify its crashes;
# its lines go to $out/fuzz_T.summary, and the file $out/fuzz_T.bad is
# made for a crash in our code
fuzz_one() {
    t=$1
    bin=$out/tests/fuzz/fuzz_$t
    mkdir -p "$out/corpus/$t"
    rm -f "$out"/crash-$t-* "$out"/timeout-$t-* "$out"/oom-$t-*
    (cd "$out" && "$bin" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
        -max_total_time="$secs" -max_len=65536 -timeout=10 -rss_limit_mb=$rss_mb \
        -artifact_prefix="$out/crash-$t-" \
        "$out/corpus/$t" "$here/corpus/$t" >"$out/fuzz_$t.log" 2>&1) || true
    cov=$(grep -E "^#[0-9]+: cov" "$out/fuzz_$t.log" | tail -1 | cut -c1-60 || true)
    n=$(ls "$out"/crash-$t-* 2>/dev/null | wc -l)
    echo "fuzz_$t ${secs}s: $n crashing input(s); $cov"
    for f in "$out"/crash-$t-*; do
        [ -e "$f" ] || continue
        # Classify (classify_stack.sh): the first frame that is libhdf5's
        # or ours by its shared object or source path, runtime and libc
        # frames (a memset interceptor on top) skipped. An input over the
        # RSS limit is replayed under a malloc limit, so that one allocation
        # over it is reported with its own stack; without one, the replay
        # lists the live heap's largest allocations, libFuzzer's input
        # buffer among them.
        lim=
        case $f in *-oom-*) lim=-malloc_limit_mb=$((rss_mb / 2)) ;; esac
        who=$(timeout 30 "$bin" -timeout=5 -rss_limit_mb=$rss_mb $lim "$f" 2>&1 |
              sh "$here/classify_stack.sh")
        echo "  $(basename "$f"): $who"
        case $f:$who in
            *:hdf5\ *) ;;  # inside HDF5 itself: an upstream bug (README.md)
            *-oom-*:none) ;;  # over -rss_limit_mb with no allocation to name: not counted
            *) touch "$out/fuzz_$t.bad" ;;
        esac
    done
}

# The targets in as many lanes as there are cores (each libFuzzer runs one
# child, -fork=1): lane l fuzzes targets l, l + lanes, ... one after
# another. The summaries are printed in the targets' order.
lanes=$(nproc 2>/dev/null || echo 1)
for t in $targets; do rm -f "$out/fuzz_$t.summary" "$out/fuzz_$t.bad"; done
l=0
while [ $l -lt "$lanes" ]; do
    (i=0
     for t in $targets; do
         [ $((i % lanes)) -eq $l ] && fuzz_one "$t" >"$out/fuzz_$t.summary"
         i=$((i + 1))
     done) &
    l=$((l + 1))
done
wait
status=0
for t in $targets; do
    cat "$out/fuzz_$t.summary"
    [ -e "$out/fuzz_$t.bad" ] && status=1
done
exit $status
