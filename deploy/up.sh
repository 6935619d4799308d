#!/usr/bin/env bash
# The main job on the embedded defaults: installs what is missing, builds, and runs.
#
# Until the scheduler daemon lands, "the main job" is the placement demo: a simulated TPU v2 pod
# (8x8 hosts) receives a sequence of slice requests, releases and a host failure under both
# placement policies, and the host grid is drawn after each step.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

deploy/deps.sh
cmake -S "$root" -B "$root/build" -G Ninja >/dev/null
cmake --build "$root/build" -j"$(nproc)" --target podsim

"$root/build/scheduler/sim/podsim" place --demo "$@"
