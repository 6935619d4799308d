#!/usr/bin/env bash
# bench-smoke: runs bench_spawn with few starts; fails unless it exits 0 and prints every FIGURE.
#   usage: bench_spawn_smoke.sh path/to/bench_spawn path/to/podworker path/to/podworker-helper
#                               path/to/podworker-rank path/to/podctl
set -uo pipefail
out=$("$1" --podworker "$2" --helper "$3" --rank "$4" --podctl "$5" --runs 30) || { echo "$out"; echo "bench_spawn failed"; exit 1; }
echo "$out"
for fig in spawn_true_wall_ms spawn_true_cpu_ms spawn_podworker_wall_ms spawn_podworker_cpu_ms \
           spawn_helper_wall_ms spawn_helper_cpu_ms spawn_rank_wall_ms spawn_rank_cpu_ms \
           spawn_helper_vs_true_cpu spawn_rank_vs_true_cpu spawn_podworker_vs_helper_cpu \
           spawn_helper_vs_rank_cpu spawn_podctl_wall_ms spawn_podctl_cpu_ms \
           spawn_podctl_vs_true_cpu spawn_agent_fork_cpu_ms spawn_agent_child_cpu_ms \
           spawn_agent_fork_vs_child_cpu; do
  grep -Eq "^FIGURE $fig [0-9.]+ [a-z]+$" <<<"$out" || { echo "missing FIGURE $fig"; exit 1; }
done
