#!/usr/bin/env bash
# The main job on the embedded defaults: installs what is missing, builds, and starts podsched
# on 127.0.0.1:8470 with its data in ./var (SQLite var/podsched.db, admin token var/admin.token).
# Ctrl-C stops it cleanly; the data stays for the next start.
#
#   deploy/up.sh            build and start podsched in the foreground
#   deploy/up.sh --demo     build and run the placement demo instead (podsim place --demo)
#
# It prints the dashboard's URL and the admin token to log in with.
#
# Not yet: host agents (podworker), so submitted jobs are placed but do not run.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

deploy/deps.sh
echo "==> building (first build takes several minutes on 2 cores)"
cmake -S "$root" -B "$root/build" -G Ninja >/dev/null
cmake --build "$root/build" -j"$(nproc)" --target podsched podctl podsim podtrain

if [[ "${1:-}" == "--demo" ]]; then
  exec "$root/build/scheduler/sim/podsim" place --demo
fi

podctl="$root/build/scheduler/ctl/podctl"
echo "==> starting podsched (Ctrl-C to stop)"
out=$(mktemp)
"$root/build/scheduler/daemon/podsched" > >(tee "$out") &
pid=$!
trap 'kill -TERM $pid 2>/dev/null' INT TERM
for _ in $(seq 100); do
  grep -q '^podsched listening on ' "$out" && break
  kill -0 $pid 2>/dev/null || break
  sleep 0.1
done
url=$(sed -n 's/^podsched listening on \(http[^ ]*\)$/\1/p' "$out")
rm -f "$out"
if [[ -z $url ]]; then
  wait $pid
  exit 1
fi
cat <<MSG

==> dashboard: $url/
    log in with the admin token: $(cat "$root/var/admin.token")

==> from another terminal, in $root:
    $podctl submit --accelerator v2-32 --preemptible --name demo -- podtrain --steps 100
    $podctl jobs
    $podctl pod
    $podctl describe 1
  podctl reads the admin token from var/admin.token here (or POD_TOKEN / --token elsewhere).
  Placement demo: deploy/up.sh --demo

MSG
while kill -0 $pid 2>/dev/null; do wait $pid; done
