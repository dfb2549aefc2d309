#!/usr/bin/env bash
# The test command: installs what the build and tests need (Debian 12, as
# root), builds with meson and runs the whole cmocka suite (the two-rank MPI
# sweep included); then the same suite under AddressSanitizer + UBSan, the
# full-disk check (a tmpfs; skipped where it cannot be mounted), the
# SIGKILL torture test and every fuzz target for GATELAB_FUZZ_SECONDS
# (default 5) each; last the clang-format check (tests/check_format.sh).
#   bash tests/run_tests.sh                  # everything (~20 min on 2 cores)
#   GATELAB_FAST=1 bash tests/run_tests.sh   # only the meson suite
set -euo pipefail
cd "$(dirname "$0")/.."

bash experiments/install-deps.sh test

# stage NAME: the stage's heading, with the seconds since the start (CI
# has 20 minutes on 2 cores: the headings show where they go)
stage() { echo "== $1 (at ${SECONDS} s)"; }
SECONDS=0
stage build
# a build directory the main job configured before the test packages were
# installed is reconfigured, so that it finds them (OpenMPI: the two-rank
# sweep test is defined only where mpi and mpirun are found)
if [ -f build/build.ninja ]; then meson setup --reconfigure build >/dev/null
else meson setup build >/dev/null; fi
meson compile -C build >/dev/null
stage test
log=$(mktemp)
trap 'rm -f "$log"' EXIT
meson test -C build --print-errorlogs | tee "$log"

if [ "${GATELAB_FAST:-0}" != 1 ]; then
    stage "test under address,undefined sanitizers"
    bash tests/run_sanitized.sh build-asan
    stage "full disk"
    bash tests/diskfull.sh build
    stage "torture: 20 SIGKILLs of a sweep"
    bash tests/torture.sh build 20
    stage "fuzz: every target for ${GATELAB_FUZZ_SECONDS:-5} s (tests/fuzz/README.md)"
    sh tests/fuzz/run_fuzzers.sh "${GATELAB_FUZZ_SECONDS:-5}"
fi
# the code style (.clang-format); CI fails on unformatted code
stage format
bash tests/check_format.sh
# the closing line CI reads: the meson suite's counts; the tests that
# skipped (exit 77) are named on the line before it, each with the last
# line it printed, its reason
ok=$(awk '/^Ok:/ {print $2}' "$log"); bad=$(awk '/^Fail:/ {print $2}' "$log")
skip=$(awk '/^Skipped:/ {print $2}' "$log")
stage "all tests passed"
if [ "${skip:-0}" != 0 ]; then
    /usr/bin/python3 - build/meson-logs/testlog.json <<'PY' || true
import json, sys
why = []
for line in open(sys.argv[1], encoding="utf-8"):
    t = json.loads(line)
    if t.get("result") == "SKIP":
        said = [l for l in (t.get("stdout") or "").splitlines() if l.strip()]
        why.append(f"{t['name']} ({said[-1].strip() if said else 'no reason printed'})")
print("skipped: " + "; ".join(why))
PY
    echo "${ok:-0} passed, ${bad:-0} failed, $skip skipped"
else
    echo "${ok:-0} passed, ${bad:-0} failed"
fi
