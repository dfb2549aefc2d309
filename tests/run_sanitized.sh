#!/bin/sh
# run_sanitized.sh: build with AddressSanitizer + UBSan and run the whole
# test suite under them. Any report aborts the offending test,
# so "meson test" failing means a sanitizer found something.
#
#   tests/run_sanitized.sh [BUILDDIR]      (default build-asan)
#
# Leak detection is off (detect_leaks=0): with it on, the OpenMPI runtime
# reports ~120 KB in ~3300 allocations at exit under sweep_mpi_2ranks, not
# ours, and tests/test_report.c's test_sinks_numbers does not free one
# ProbeRecord (a test-only leak). Memory errors and undefined behaviour are all still fatal,
# a cast of a floating value out of its target type's range too (GCC's
# -fsanitize=undefined leaves that check out, so it is asked for by name).
# Debug information is line tables only (-g1): the reports keep their
# file:line frames, and the build takes a sixth less time than with -g.
# It runs the meson suite but its 'plain-only' checks (tests/meson.build:
# they run none of gatelab's C), each test's timeout tripled; repro.sh runs
# fewer settings and claims_tiny.sh one study when they see ASAN_OPTIONS
# (the plain suite holds the bits and every study's verdicts).
set -eu
cd "$(dirname "$0")/.."
B=${1:-build-asan}
if [ ! -d "$B" ]; then
    meson setup "$B" -Db_sanitize=address,undefined -Dbuildtype=debugoptimized \
        -Db_lundef=false "-Dc_args=-fsanitize=float-cast-overflow -g1"
fi
meson compile -C "$B"
ASAN_OPTIONS=halt_on_error=1:abort_on_error=1:detect_leaks=0:strict_string_checks=1
UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_stacktrace=1
export ASAN_OPTIONS UBSAN_OPTIONS
meson test -C "$B" --print-errorlogs --timeout-multiplier 3 --no-suite plain-only
