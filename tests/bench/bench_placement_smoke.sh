#!/usr/bin/env bash
# bench-smoke: runs bench_placement with tiny parameters; fails unless it exits 0 and prints
# every headline FIGURE line.   usage: bench_placement_smoke.sh path/to/bench_placement
set -uo pipefail
out=$("$1" --requests 500 --quick) || { echo "$out"; echo "bench_placement failed"; exit 1; }
echo "$out"
for fig in placement_p99_v3_fragmented placement_p99_v3_fragmented_after_change \
           placement_p99_v3_fragmented_first_fit_after_change blocked_first_fit blocked_best_fit \
           blocked_ratio_best_over_first utilization_first_fit utilization_best_fit; do
  grep -Eq "^FIGURE $fig [0-9.]+ [a-z]+$" <<<"$out" || { echo "missing FIGURE $fig"; exit 1; }
done
