#!/usr/bin/env bash
# speed_compare.sh: two builds of gatelab interleaved, for docs/speed.md's
# comparison of a build with the one before it. Each round runs `bench -v
# baseline` for small.ini and reference.ini at each thread count, the two
# builds back to back, so both see the same machine; one line per run
# ("ROUND PRESET THREADS BUILD TOKENS/S %FMA"), then per preset and thread
# count the median tokens/s of each build and their ratio. Run it on a
# quiet machine; the first line and the last give `uptime`.
#   bash experiments/speed_compare.sh OLD NEW [ROUNDS] [THREADS...]
# ROUNDS defaults to 6, THREADS to 1 2.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: $0 OLD_GATELAB NEW_GATELAB [ROUNDS] [THREADS...]" >&2; exit 2; }
old=$1 new=$2
rounds=${3:-6}
shift 2
if [ $# -gt 0 ]; then shift; fi
if [ $# -gt 0 ]; then threads=("$@"); else threads=(1 2); fi
for b in "$old" "$new"; do
    [ -x "$b" ] || { echo "speed_compare.sh: $b is not an executable gatelab" >&2; exit 2; }
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "speed_compare.sh: ROUNDS must be a positive integer, not '$rounds'" >&2; exit 2; }
echo "# uptime before: $(uptime)"
runs=$(mktemp)
trap 'rm -f "$runs"' EXIT
for ((r = 1; r <= rounds; r++)); do
    for preset in small reference; do
        steps=(--steps 20 --repeats 5)
        [ "$preset" = reference ] && steps=(--steps 4 --repeats 3)
        for t in "${threads[@]}"; do
            for which in old new; do
                b=$old
                [ $which = new ] && b=$new
                out=$("$b" bench --config "experiments/$preset.ini" --threads "$t" -v baseline \
                    "${steps[@]}" 2>&1) || { echo "speed_compare.sh: $b bench failed: $(tail -2 <<<"$out")" >&2; exit 1; }
                read -r tok fma < <(awk '$1 == "gatelab" && $2 == "baseline" {print $4, $7; exit}' <<<"$out")
                echo "$r $preset $t $which $tok $fma" | tee -a "$runs"
            done
        done
    done
done
echo "# uptime after: $(uptime)"
echo "# preset threads old-median new-median new/old"
for preset in small reference; do
    for t in "${threads[@]}"; do
        med() { awk -v p="$preset" -v t="$t" -v w="$1" '$2 == p && $3 == t && $4 == w {print $5}' "$runs" |
            sort -n | awk '{v[NR] = $1} END {print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
        o=$(med old) n=$(med new)
        awk -v p="$preset" -v t="$t" -v o="$o" -v n="$n" 'BEGIN {printf "%s %s %.0f %.0f %.3fx\n", p, t, o, n, n / o}'
    done
done
