#!/bin/sh
# run_fuzzers.sh: build the libFuzzer targets with clang and run each one
# for SECONDS (default 60) over its seed corpus.
#
#   tests/fuzz/run_fuzzers.sh [SECONDS] [TARGET...]
#
# Each target is one small wrapper (fuzz_TARGET.c) around an entry function
# in fuzz_entry.c, compiled together with just the library sources it needs
# (no meson: the sources are listed below), with
# -fsanitize=fuzzer,address,undefined. Needs clang and its libFuzzer runtime
# (Debian: apt-get install clang libclang-rt-14-dev).
#
# New corpus entries go to build-fuzz/corpus/TARGET (the committed seeds in
# corpus/TARGET stay small); a crash is written to build-fuzz/crash-TARGET-*
# and the script exits 1. Copy such a file to regressions/TARGET/ and it is
# replayed by test_fuzz_regressions in the normal suite.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
secs=${1:-60}
[ $# -gt 0 ] && shift
targets=${*:-config sweepfile runread tokens hftok safetensors runlock}
out=$root/build-fuzz
mkdir -p "$out"
CC=${CC:-clang}

cflags="-g -O1 -std=c11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined
  -fno-sanitize-recover=undefined $(for d in base config ops model runfile train hf sweep; do echo -I$root/src/$d; done)
  -I$root/analysis -I$here
  $(pkg-config --cflags hdf5 2>/dev/null || echo -I/usr/include/hdf5/serial)"
libs="$(pkg-config --libs hdf5 2>/dev/null || echo -L/usr/lib/x86_64-linux-gnu/hdf5/serial -lhdf5) -linih -lm
  -ljansson -lpcre2-8 -licuuc"
common="$here/fuzz_entry.c $root/src/base/util.c $root/src/base/rng.c $root/src/config/config.c
  $root/src/config/config_validate.c $root/src/config/config_derive.c $root/src/config/variants.c
  $root/src/train/data.c $root/src/sweep/sweepfile.c $root/analysis/protocol.c
  $root/src/runfile/runfile_read.c $root/src/runfile/runfile_read_util.c
  $root/src/runfile/runfile_read_config.c $root/src/runfile/runfile_read_probe.c
  $root/src/runfile/runfile_read_series.c $root/src/runfile/runfile_check.c
  $root/src/base/runlock.c $root/src/base/atomic_write.c $root/src/base/exitclean.c
  $root/src/model/intervention.c $root/src/ops/metrics.c
  $here/fuzz_entry_hf.c $root/src/hf/safetensors.c
  $(for f in hf_map hf_utf8 hf_normalize hf_regex hf_bytelevel hf_bpe hf_added hf_tokenizer_load hf_load_util \
      hf_load_pipeline hf_tokenizer token_lines; do echo $root/src/hf/$f.c; done)"

for t in $targets; do
    echo "== build fuzz_$t"
    # shellcheck disable=SC2086
    $CC $cflags -o "$out/fuzz_$t" "$here/fuzz_$t.c" $common $libs
done

export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# Fork mode with -ignore_crashes: a crash is saved and fuzzing goes on, so
# one shallow HDF5-internal crash (see README.md) cannot hide bugs of ours.
status=0
for t in $targets; do
    echo "== run fuzz_$t for ${secs}s"
    mkdir -p "$out/corpus/$t"
    rm -f "$out"/crash-$t-* "$out"/timeout-$t-* "$out"/oom-$t-*
    (cd "$out" && ./fuzz_$t -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
        -max_total_time="$secs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
        -artifact_prefix="$out/crash-$t-" \
        "$out/corpus/$t" "$here/corpus/$t" >"$out/fuzz_$t.log" 2>&1) || true
    grep -E "^#[0-9]+: cov" "$out/fuzz_$t.log" | tail -1 || true
    n=$(ls "$out"/crash-$t-* 2>/dev/null | wc -l)
    echo "fuzz_$t: $n crashing input(s)"
    for f in "$out"/crash-$t-*; do
        [ -e "$f" ] || continue
        # Classify: the first stack frame outside the sanitizer runtime.
        top=$(ASAN_OPTIONS=detect_leaks=0 timeout 60 "$out/fuzz_$t" -timeout=5 "$f" 2>&1 |
              grep -E "^ +#[0-9]+ " | grep -v -E "__sanitizer|__interceptor|__asan|__ubsan|fuzzer::|libc\.so|pthread_kill|in raise |in abort " |
              head -1 | sed 's/^ *#[0-9]* 0x[0-9a-f]* in //')
        echo "  $(basename "$f"): $top"
        case $top in
            *libhdf5*|H5*) ;;  # inside HDF5 itself: an upstream bug (README.md)
            *) status=1 ;;
        esac
    done
done
exit $status
