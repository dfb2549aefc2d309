#!/usr/bin/env bash
# The test command: installs what the build and tests need (Debian 12, as
# root), builds with meson, and runs the whole cmocka suite; then the same
# suite under AddressSanitizer + UBSan, and the two-rank MPI sweep.
#   bash tests/run_tests.sh            # everything
#   GATELAB_FAST=1 bash tests/run_tests.sh   # skip the sanitizer pass
set -euo pipefail
cd "$(dirname "$0")/.."

bash experiments/install-deps.sh test

echo "== build"
[ -f build/build.ninja ] || meson setup build >/dev/null
meson compile -C build >/dev/null
echo "== test"
meson test -C build --print-errorlogs

if [ "${GATELAB_FAST:-0}" != 1 ] && [ -x tests/run_sanitized.sh ]; then
    echo "== test under address,undefined sanitizers"
    bash tests/run_sanitized.sh
fi
