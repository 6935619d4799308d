#!/usr/bin/env bash
# bench-smoke: runs bench_jobdb with tiny counts; fails unless it exits 0 and prints every
# headline FIGURE line.   usage: bench_jobdb_smoke.sh path/to/bench_jobdb
set -uo pipefail
out=$("$1" --submissions 64 --concurrency 1,8 --queued 200 --reason-passes 2) ||
  { echo "$out"; echo "bench_jobdb failed"; exit 1; }
echo "$out"
for c in 1 8; do
  for fig in jobdb_submits_per_s_nogroup_$c jobdb_submits_per_s_group_$c \
             jobdb_group_commit_speedup_$c; do
    grep -Eq "^FIGURE $fig [0-9.]+ [a-z/]+$" <<<"$out" || { echo "missing FIGURE $fig"; exit 1; }
  done
done
for fig in jobdb_reasons_200_as_rows_ms jobdb_reasons_200_as_updates_ms \
           jobdb_reason_update_speedup; do
  grep -Eq "^FIGURE $fig [0-9.]+ [a-z/]+$" <<<"$out" || { echo "missing FIGURE $fig"; exit 1; }
done
