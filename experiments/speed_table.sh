#!/usr/bin/env bash
# speed_table.sh: docs/speed.md's table of one machine, from one run of
# `gatelab bench` per preset and thread count, with the PyTorch twin side by
# side in the same run (--torch). Each row names the CPU, the FMA peak bench
# measured on that many threads, gatelab's tokens/s and share of that peak,
# the twin's tokens/s and the ratio. Run it on a quiet machine (nothing else
# running); the first line and the last give `uptime`.
#   bash experiments/speed_table.sh [GATELAB] [THREADS...]
# GATELAB defaults to build/gatelab; THREADS to 1, 2, 4, ... up to the
# online CPUs (and that count itself). small.ini runs 20 steps x 5 blocks,
# reference.ini 4 x 3 (bench's median block).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/gatelab}
shift || true
[ -x "$bin" ] || { echo "speed_table.sh: $bin is not an executable gatelab (build it: meson compile -C build)" >&2; exit 2; }
if [ $# -gt 0 ]; then
    threads=("$@")
else
    n=$(nproc)
    threads=()
    for ((t = 1; t < n; t *= 2)); do threads+=("$t"); done
    threads+=("$n")
fi
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
echo "<!-- uptime before: $(uptime) -->"
echo "| CPU | preset | threads | FMA peak GFLOP/s | gatelab tok/s | %fma | PyTorch tok/s | gatelab/PyTorch |"
echo "|---|---|---|---|---|---|---|---|"
for preset in small reference; do
    steps=(--steps 20 --repeats 5)
    [ "$preset" = reference ] && steps=(--steps 4 --repeats 3)
    for t in "${threads[@]}"; do
        out=$("$bin" bench --config "experiments/$preset.ini" --threads "$t" -v baseline \
            "${steps[@]}" --torch 2>&1) || { echo "speed_table.sh: bench failed: $(tail -2 <<<"$out")" >&2; exit 1; }
        peak=$(sed -n 's/^FMA peak: \([0-9.]*\) GFLOP.*/\1/p' <<<"$out" | head -1)
        # the rows: impl variant threads tokens/s GFLOP/s %peak %fma ...
        read -r tok fma < <(awk '$1 == "gatelab" && $2 == "baseline" {print $4, $7; exit}' <<<"$out")
        torch=$(awk '$1 == "pytorch" {print $4; exit}' <<<"$out")
        ratio=$(sed -n 's/.*gatelab\/pytorch = \([0-9.]*x\).*/\1/p' <<<"$out" | head -1)
        echo "| $cpu | $preset | $t | $peak | $tok | $fma | ${torch:-—} | ${ratio:-—} |"
    done
done
echo "<!-- uptime after: $(uptime) -->"
