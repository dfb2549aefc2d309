#!/usr/bin/env bash
# The main job, on a fresh Debian 12 machine as root: install the packages,
# build, fetch the Brown corpus, run the quickstart sweep (baseline, g1-elem
# and g1-head on bigram-backcopy and on Brown) and write the report with
# heatmaps and plots. About 10 minutes on 2 cores.
#   bash experiments/quickstart.sh [OUT_DIR]     (default results/quickstart)
# Rerunning continues where it stopped: finished runs are kept.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-results/quickstart}

bash experiments/install-deps.sh quickstart

echo "== build"
[ -f build/build.ninja ] || meson setup build >/dev/null
meson compile -C build >/dev/null

echo "== data"
bash data/fetch_brown.sh

echo "== sweep (progress below; logs in $out/logs)"
start=$(date +%s)
build/gatelab sweep experiments/quickstart.sweep --out "$out" --jobs "$(nproc)"
echo "== done in $(( $(date +%s) - start )) s"
echo "report: $out/REPORT.md  (results.csv and figures/ beside it)"
