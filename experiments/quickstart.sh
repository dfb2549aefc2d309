#!/usr/bin/env bash
# The main job, on a fresh Debian 12 machine as root: install the packages,
# build, run the quickstart sweep (the baseline against g1-elem on
# bigram-backcopy, 8 seeds each) and write the report, whose first lines
# test the paper's headline, with heatmaps and plots. About 8 minutes on 2
# cores once the packages are installed.
#   bash experiments/quickstart.sh [OUT_DIR]     (default results/quickstart)
# Rerunning continues where it stopped: finished runs are kept.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-results/quickstart}

bash experiments/install-deps.sh build git

echo "== build"
[ -f build/build.ninja ] || meson setup build >/dev/null
meson compile -C build >/dev/null

# The sweep is confirmatory: it checks that its sweep file is committed and
# unedited. A release archive or a copy without .git has no commit to
# check against; there it runs with --uncommitted, which protocol.ini, every
# run file and the report's headline record.
flags=()
if [ "$(git rev-parse --show-toplevel 2>/dev/null)" != "$(pwd -P)" ]; then
    echo "note: $(pwd) is not a git checkout, so the sweep file's commit cannot be checked;"
    echo "      the sweep runs with --uncommitted and the report says so"
    flags=(--uncommitted)
fi

echo "== sweep (progress below; logs in $out/logs)"
start=$(date +%s)
build/gatelab sweep experiments/quickstart.sweep --out "$out" --jobs "$(nproc)" ${flags[@]+"${flags[@]}"}
echo "== done in $(( $(date +%s) - start )) s"
echo "report: $out/REPORT.md  (results.csv and figures/ beside it)"
