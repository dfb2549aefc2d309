#!/usr/bin/env bash
# Two MPI ranks share a three-run tiny sweep: every run must happen exactly
# once (one run file each, one "started" line per run across both ranks'
# logs), and rank 0 writes the report over all three.
#   tests/mpi_sweep.sh SRC_ROOT GATELAB_BIN
set -euo pipefail
src=$1 bin=$2
out=$(mktemp -d /tmp/gatelab-mpi-XXXXXX)
trap 'rm -rf "$out"' EXIT
cd "$src"
mpirun --allow-run-as-root --oversubscribe -n 2 "$bin" sweep experiments/test-mpi.sweep \
    --out "$out" > "$out/mpirun.log" 2>&1 || { cat "$out/mpirun.log"; exit 1; }
fail=0
for run in baseline_s1 g1-elem_s1 g1-head_s1; do
    [ -f "$out/$run.h5" ] || { echo "missing $run.h5"; fail=1; }
    name=${run%_s1}
    n=$(grep -c "^$name	1	" "$out/sweep_status.tsv" || true)
    [ "$n" = 1 ] || { echo "$run ran $n times (want 1)"; fail=1; }
done
rows=$(($(wc -l < "$out/results.csv") - 1))
[ "$rows" = 3 ] || { echo "results.csv has $rows rows (want 3)"; fail=1; }
if [ $fail = 0 ]; then echo "1 passed, 0 failed"; else cat "$out/sweep_status.tsv"; echo "0 passed, 1 failed"; fi
exit $fail
