#!/usr/bin/env bash
# The main job on the embedded defaults: installs what is missing, builds, and starts podsched
# on 127.0.0.1:8470 with its data in ./var (SQLite var/podsched.db, admin token var/admin.token).
# Ctrl-C stops it cleanly; the data stays for the next start.
#
#   deploy/up.sh            build and start podsched in the foreground
#   deploy/up.sh --demo     build and run the placement demo instead (podsim place --demo)
#
# Not yet: host agents (podworker), so submitted jobs are placed but do not run; the dashboard.
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
cat <<MSG

==> starting podsched (Ctrl-C to stop). From another terminal, in $root:
    $podctl submit --accelerator v2-32 --preemptible --name demo -- podtrain --steps 100
    $podctl jobs
    $podctl pod
    $podctl describe 1
  podctl reads the admin token from var/admin.token here (or POD_TOKEN / --token elsewhere).
  Placement demo: deploy/up.sh --demo

MSG
exec "$root/build/scheduler/daemon/podsched"
