#!/usr/bin/env bash
# params_hashes.sh GATELAB [THREADS...]: one line per catalog id, mode and
# thread count, "ID MODE THREADS SHA256", the hash of a tiny run's final
# weights (h5dump of /params, data only). Two builds whose outputs are
# equal train every variant to the same bits:
#   tests/params_hashes.sh old/gatelab > a; tests/params_hashes.sh new/gatelab > b; diff a b
# MODE is always "default", gatelab's one arithmetic (files written while
# it had a second mode still diff against these lines). THREADS defaults
# to 1. The ids come from the source's catalog, so an id a build
# lacks shows as "FAILED" rather than disappearing.
set -uo pipefail
[ $# -ge 1 ] || { echo "usage: $0 GATELAB [THREADS...]" >&2; exit 2; }
bin=$1
shift
threads=("${@:-1}")
# without h5dump every hash would be that of empty input, and equal
command -v h5dump >/dev/null ||
    { echo "params_hashes.sh: h5dump not found (Debian hdf5-tools: apt-get install hdf5-tools)" >&2; exit 2; }
src=$(cd "$(dirname "$0")/.." && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
ids=$(grep -rhoE '\{\s*\.id = "[^"]+"' "$src"/src --include='variants*.c' |
    sed 's/.*"\(.*\)"/\1/')
for id in $ids; do
    for t in "${threads[@]}"; do
        out="$dir/$id-$t.h5"
        if "$bin" train --config "$src/experiments/tiny.ini" --set variant="$id" \
            --set threads="$t" --quiet --out "$out" >/dev/null 2>"$dir/err"; then
            if dump=$(h5dump -g /params "$out") && [ -n "$dump" ]; then
                h=$(printf '%s\n' "$dump" | tail -n +2 | sha256sum | cut -c1-16)
            else
                h="FAILED(h5dump -g /params)"
            fi
        else
            h="FAILED($(head -c 80 "$dir/err" | tr '\n' ' '))"
        fi
        echo "$id default $t $h"
        rm -f "$out" "$out".*
    done
done
