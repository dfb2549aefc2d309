#!/bin/sh
# run_sanitized.sh: build with AddressSanitizer + UBSan and run the whole
# test suite under them (issue 7.1). Any report aborts the offending test,
# so "meson test" failing means a sanitizer found something.
#
#   tests/run_sanitized.sh [BUILDDIR]      (default build-asan)
#
# Leak detection is off: OpenBLAS keeps its thread pool and buffers alive
# until exit and HDF5 keeps library-global state, both reported as leaks
# that are not ours. Memory errors and UB are all still fatal.
set -eu
cd "$(dirname "$0")/.."
B=${1:-build-asan}
if [ ! -d "$B" ]; then
    meson setup "$B" -Db_sanitize=address,undefined -Dbuildtype=debugoptimized \
        -Db_lundef=false
fi
meson compile -C "$B"
ASAN_OPTIONS=halt_on_error=1:abort_on_error=1:detect_leaks=0:strict_string_checks=1
UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_stacktrace=1
export ASAN_OPTIONS UBSAN_OPTIONS
meson test -C "$B" --print-errorlogs --timeout-multiplier 3
