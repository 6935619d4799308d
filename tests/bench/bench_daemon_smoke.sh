#!/usr/bin/env bash
# Runs bench_daemon with tiny counts and checks that it prints its FIGURE lines.
set -euo pipefail
out=$("$1" --podsched "$2" --stored 200 --submits 64 --lists 64 --pass-submits 20 \
  --rss-arrays 3 --rss-array-size 50)
echo "$out"
for c in 1 8 64; do
  for f in submit_per_s submit_p50 submit_p99 list_per_s list_p50 list_p99 get_per_s get_p99; do
    grep -qE "^FIGURE daemon_${f}_c${c} [0-9.]+ " <<< "$out" || { echo "missing daemon_${f}_c${c}"; exit 1; }
  done
done
for r in 0 64; do
  for f in pass_mean pass_p99_bucket submit_p99; do
    grep -qE "^FIGURE daemon_${f}_readers${r} [0-9.]+ " <<< "$out" || { echo "missing daemon_${f}_readers${r}"; exit 1; }
  done
done
for f in rss peak_rss; do
  grep -qE "^FIGURE daemon_${f}_stored150_queued50 [0-9.]+ MB" <<< "$out" || { echo "missing daemon_${f}"; exit 1; }
done
