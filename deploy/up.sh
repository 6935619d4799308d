#!/usr/bin/env bash
# The main job on the embedded defaults: a whole simulated TPU v2 pod on this machine.
# Installs what is missing (deploy/deps.sh), builds (build/), starts podsched (HTTP
# 127.0.0.1:8470, bus 127.0.0.1:8471, SQLite + file:// storage under ./var) and 64 podworkers
# (one per host; --agents 8 for 8 hosts each), waits until all 64 hosts are registered, prints
# the dashboard URL and the admin token, and submits a demo workload: podtrain jobs (v2-8 and v2-32, on-demand
# and preemptible, checkpointing to file://var/checkpoints) under a provider reclaim rate, so
# that within a few minutes there are placements, preemptions, checkpoints and resumes.
#
#   deploy/up.sh                 start everything in the foreground; Ctrl-C stops it all
#   deploy/up.sh --detach        start, return once ready (pids in VAR/up.pids)
#   deploy/up.sh --down          stop a detached run (nothing is left running)
#   deploy/up.sh --no-workload   start the cluster without submitting the demo jobs
#   deploy/up.sh --demo          the placement demo instead (podsim place --demo; no daemons)
#   deploy/up.sh --fleet         a fleet shaped like the research grant, scaled to this machine
#                                (issue 28): a v2 pod and a v3 pod of 4x4 hosts, 2 on-demand and
#                                8 preemptible v2-8 devices (42 hosts), an agent per pod and per
#                                device; data in ./var-fleet unless --var
#
# Options: --port N (HTTP; the bus uses N+1; default 8470, env PODSCHED_UP_PORT), --var DIR
# (default ./var, env PODSCHED_UP_VAR), --agents N (default 64; 64 must be divisible by N),
# --reclaim-rate R (provider reclaims per preemptible allocation-hour, default 30),
# --build-dir DIR (default ./build, env PODSCHED_UP_BUILD), --skip-deps / --skip-build (env
# PODSCHED_UP_SKIP_DEPS=1 / PODSCHED_UP_SKIP_BUILD=1).
#
# Every process started here carries PODSCHED_UP_RUN=<abs var dir> in its environment (and
# passes it to the MPI daemons and ranks it starts), so stopping can find and kill anything
# left, whatever happened to its parent.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

port=${PODSCHED_UP_PORT:-8470}
var=${PODSCHED_UP_VAR:-$root/var}
# One agent per simulated host by default, as one agent per machine would be; --agents 1 (one
# podworker serving all 64 hosts) works as well: podworker gives each host's orted its own
# OpenMPI session directory (docs/podworker.md), and each agent here also gets its own TMPDIR.
agents=64
agents_given=
fleet=
reclaim=30
mode=foreground
workload=1
skip_deps=${PODSCHED_UP_SKIP_DEPS:-}
skip_build=${PODSCHED_UP_SKIP_BUILD:-}
build=${PODSCHED_UP_BUILD:-$root/build}

die() { echo "up.sh: $*" >&2; exit 1; }
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --detach) mode=detach ;;
    --down) mode=down ;;
    --demo) mode=demo ;;
    --no-workload) workload= ;;
    --fleet) fleet=1 ;;
    --skip-deps) skip_deps=1 ;;
    --skip-build) skip_build=1 ;;
    --port) port=${2:?--port needs a value}; shift ;;
    --var) var=${2:?--var needs a value}; shift ;;
    --build-dir) build=${2:?--build-dir needs a value}; shift ;;
    --agents) agents=${2:?--agents needs a value}; agents_given=1; shift ;;
    --reclaim-rate) reclaim=${2:?--reclaim-rate needs a value}; shift ;;
    -h|--help) usage 0 ;;
    *) echo "up.sh: unknown argument '$1'" >&2; usage ;;
  esac
  shift
done
[[ $port =~ ^[0-9]+$ ]] && ((port >= 1 && port < 65535)) || die "--port: expected 1..65534, got '$port'"
[[ $agents =~ ^[0-9]+$ ]] && ((agents >= 1 && agents <= 64 && 64 % agents == 0)) ||
  die "--agents: expected a divisor of 64 (1, 2, 4, 8, 16, 32, 64), got '$agents'"
[[ $reclaim =~ ^[0-9]+([.][0-9]+)?$ ]] || die "--reclaim-rate: expected a number, got '$reclaim'"
if [[ -n $fleet ]]; then
  [[ -n $agents_given ]] && die "--agents is for the one pod; --fleet runs an agent per pod and per device"
  # Its own data: a store written for pod0 names pod0, which the fleet does not have.
  [[ -z ${PODSCHED_UP_VAR:-} && $var == "$root/var" ]] && var=$root/var-fleet
fi
mkdir -p "$var"
var=$(cd "$var" && pwd)
bus_port=$((port + 1))
pids_file=$var/up.pids
url=http://127.0.0.1:$port

step() { printf '==> %s\n' "$*"; }

# --- stopping --------------------------------------------------------------------------------
alive() { [[ -n "${1:-}" ]] && kill -0 "$1" 2>/dev/null; }

# Pids of every process whose environment holds PODSCHED_UP_RUN=$var (ours, at any depth).
marked_pids() {
  grep -lzxsF "PODSCHED_UP_RUN=$var" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3 || true
}

# Stops a run: SIGTERM to the agents (they stop their jobs), then podsched, then SIGKILL to
# anything of this run still alive. Each stage waits with a deadline, never forever.
stop_all() {
  local names=() pids=() line pid
  if [[ -f $pids_file ]]; then
    while read -r line; do
      [[ $line =~ ^([a-z0-9-]+)\ ([0-9]+)$ ]] || continue
      names+=("${BASH_REMATCH[1]}"); pids+=("${BASH_REMATCH[2]}")
    done <"$pids_file"
  fi
  local i stage
  for stage in worker podsched; do
    local group=()
    for i in "${!pids[@]}"; do
      [[ ${names[$i]} == "$stage"* ]] || continue
      alive "${pids[$i]}" && kill -TERM "${pids[$i]}" 2>/dev/null && group+=("${pids[$i]}")
    done
    local deadline=$((SECONDS + 15))
    for pid in "${group[@]}"; do
      while alive "$pid" && ((SECONDS < deadline)); do sleep 0.1; done
    done
  done
  local left
  for _ in 1 2 3 4 5; do
    left=$(marked_pids)
    [[ -z $left ]] && break
    # shellcheck disable=SC2086
    kill -KILL $left 2>/dev/null || true
    sleep 0.2
  done
  rm -f "$pids_file"
  left=$(marked_pids)
  if [[ -n $left ]]; then
    echo "up.sh: processes still alive after SIGKILL: $left" >&2
    return 1
  fi
  return 0
}

if [[ $mode == down ]]; then
  if [[ ! -f $pids_file ]] && [[ -z "$(marked_pids)" ]]; then
    echo "up.sh: nothing running for $var"
    exit 0
  fi
  step "stopping the cluster of $var"
  stop_all && step "stopped; nothing left running"
  exit $?
fi

# --- install and build -----------------------------------------------------------------------
targets=(podsched podctl podworker podtrain podsim)
if [[ -z $skip_deps ]]; then
  deploy/deps.sh
fi
if [[ -z $skip_build ]]; then
  step "building ${targets[*]} in $build (the first build takes several minutes on 2 cores)"
  if [[ ! -f $build/CMakeCache.txt ]]; then
    launcher=()
    command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" >/dev/null
  fi
  cmake --build "$build" -j"$(nproc)" --target "${targets[@]}"
fi
bin() {  # path of a built target
  local f
  f=$(find "$build" -path '*/CMakeFiles' -prune -o -type f -name "$1" -perm -u+x -print -quit)
  [[ -n $f ]] || die "$1 is not built in $build (cmake --build $build --target $1)"
  echo "$f"
}

if [[ $mode == demo ]]; then
  exec "$(bin podsim)" place --demo
fi

podsched=$(bin podsched); podctl=$(bin podctl); podworker=$(bin podworker); podtrain=$(bin podtrain)

if [[ -f $pids_file ]]; then
  while read -r _ pid; do
    alive "$pid" && die "a cluster of $var is already running (pid $pid); deploy/up.sh --down first"
  done <"$pids_file"
  rm -f "$pids_file"
fi
for p in "$port" "$bus_port"; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
    die "port $p of 127.0.0.1 is in use (another podsched? use --port N)"
  fi
done

# --- configuration -----------------------------------------------------------------------------
# The pods, and the agents that serve them: agent ids, their pod and its hosts (by the pod's own
# ids: every device's agent serves its host 0).
agent_ids=(); agent_pods=(); agent_hosts=()
if [[ -n $fleet ]]; then
  pods_yaml='  - {name: v2-pod, generation: v2, host_rows: 4, host_cols: 4, zone: us-central1-b}
  - {name: v3-pod, generation: v3, host_rows: 4, host_cols: 4, zone: europe-west4-a}
  - {name: od, generation: v2, host_rows: 1, host_cols: 1, count: 2, zone: us-central1-f, class: on-demand}
  - {name: pre, generation: v2, host_rows: 1, host_cols: 1, count: 8, zone: us-central1-f, class: preemptible}'
  agent_ids=(fleet-v2-pod fleet-v3-pod); agent_pods=(v2-pod v3-pod); agent_hosts=(0-15 0-15)
  for dev in od-0 od-1 pre-0 pre-1 pre-2 pre-3 pre-4 pre-5 pre-6 pre-7; do
    agent_ids+=("fleet-$dev"); agent_pods+=("$dev"); agent_hosts+=(0)
  done
  total_hosts=42
  fleet_text="42 hosts of 12 pods (a v2 and a v3 pod of 4x4, 10 v2-8 devices)"
else
  pods_yaml='  - {name: pod0, generation: v2, host_rows: 8, host_cols: 8}'
  per=$((64 / agents))
  for ((i = 0; i < agents; i++)); do
    agent_ids+=("local-$i"); agent_pods+=(pod0); agent_hosts+=("$((i * per))-$((i * per + per - 1))")
  done
  total_hosts=64
  fleet_text="64 hosts of pod0 (v2, 8x8)"
fi
mkdir -p "$var/checkpoints" "$var/log" "$var/demo"
config=$var/podsched.yaml
cat >"$config" <<YAML
# Generated by deploy/up.sh (rewritten on every start).
listen: {address: 127.0.0.1, port: $port}
bus:
  address: tcp://127.0.0.1:$bus_port
  heartbeat_interval_ms: 1000
  heartbeat_timeout_ms: 10000
data_dir: $var
default_checkpoint_url: file://$var/checkpoints
pods:
$pods_yaml
scheduler:
  # Provider reclaims per preemptible allocation-hour: at 30, a preemptible job is taken back
  # about every 2 minutes, so the demo shows preemptions and resumes quickly.
  reclaim_rate_per_hour: $reclaim
  min_runtime_before_preemption_seconds: 30
YAML

# The marker goes to the daemons only, not to this script (stopping must not kill itself).
mark=(env "PODSCHED_UP_RUN=$var" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)
: >"$pids_file"

cleanup_on_error() {
  local rc=$?
  if [[ $rc -ne 0 && $mode != foreground_ready ]]; then
    if [[ $rc -eq 130 ]]; then
      echo "up.sh: interrupted; stopping what was started" >&2
    else
      echo "up.sh: start failed (exit $rc); stopping what was started. Logs: $var/log/" >&2
    fi
    stop_all || true
  fi
}
trap cleanup_on_error EXIT
trap 'exit 130' INT TERM

# setsid: the daemons are not in this terminal's process group (a detached run survives the
# terminal; Ctrl-C of a foreground run is handled here, which stops them in order).
step "starting podsched on $url (bus tcp://127.0.0.1:$bus_port, data in $var)"
"${mark[@]}" setsid "$podsched" --config "$config" </dev/null >>"$var/log/podsched.log" 2>&1 &
echo "podsched $!" >>"$pids_file"
sched_pid=$!
for _ in $(seq 300); do
  curl -sf "$url/healthz" >/dev/null 2>&1 && break
  alive "$sched_pid" || die "podsched exited at start: $(tail -5 "$var/log/podsched.log")"
  sleep 0.1
done
curl -sf "$url/healthz" >/dev/null || die "podsched did not answer on $url within 30 s"
token=$(cat "$var/admin.token")

# One machine, one person: every job runs as the account that started up.sh (podworker
# --jobs-as-agent-user; as root that must be allowed explicitly). A shared cluster runs podworker
# as root without it, so that each job runs as its user's Unix account (docs/podworker.md).
run_as=$(id -un); agent_user_flags=(--jobs-as-agent-user)
[[ $(id -u) -eq 0 ]] && agent_user_flags+=(--allow-root-jobs)
# The bus uses CURVE (the default): each agent is enrolled once (podsched agent enroll) for the
# hosts of its pod it serves, its key file (mode 0600) in $var/keys; a later start reuses them.
keys=$var/keys
mkdir -p "$keys"
for i in "${!agent_ids[@]}"; do
  id=${agent_ids[$i]}
  [[ -f $keys/$id.key ]] && continue
  "$podsched" --config "$config" agent enroll --out-dir "$keys" --agent-id "$id" \
    --pod "${agent_pods[$i]}" --hosts "${agent_hosts[$i]}" 2>>"$var/log/podsched.log" ||
    die "podsched agent enroll failed: $(tail -3 "$var/log/podsched.log")"
done
step "starting ${#agent_ids[@]} podworkers for $fleet_text"
for i in "${!agent_ids[@]}"; do
  id=${agent_ids[$i]}
  # Its own TMPDIR: the MPI session directories of its hosts stay apart from other agents'.
  mkdir -p "$var/tmp/$id"
  "${mark[@]}" TMPDIR="$var/tmp/$id" setsid "$podworker" --bus "tcp://127.0.0.1:$bus_port" \
    --pod "${agent_pods[$i]}" --hosts "${agent_hosts[$i]}" \
    --agent-id "$id" --bus-key-file "$keys/$id.key" --advertise 127.0.0.1 --state-dir "$var/worker/$id" \
    "${agent_user_flags[@]}" --pass-env PODSCHED_UP_RUN \
    </dev/null >>"$var/log/worker-$id.log" 2>&1 &
  echo "worker-$id $!" >>"$pids_file"
done

healthy_hosts() {
  curl -sf -H "Authorization: Bearer $token" "$url/api/v1/pods" |
    jq '[.pods[].hosts[] | select(.healthy)] | length' 2>/dev/null || echo 0
}
deadline=$((SECONDS + 120)); last=-1
while :; do
  n=$(healthy_hosts)
  [[ $n != "$last" ]] && step "hosts registered: $n/$total_hosts" && last=$n
  [[ $n -ge $total_hosts ]] && break
  while read -r name pid; do
    alive "$pid" || die "$name (pid $pid) exited: $(tail -5 "$var/log/${name}.log" 2>/dev/null)"
  done <"$pids_file"
  ((SECONDS < deadline)) || die "only $n of $total_hosts hosts registered after 120 s; logs in $var/log/"
  sleep 0.5
done

# --- demo workload -------------------------------------------------------------------------------
ctl() { "$podctl" --server "$url" --token "$token" "$@"; }
# spec NAME ACCELERATOR PREEMPTIBLE STEPS: writes var/demo/NAME.yaml and submits it.
submit_demo() {
  local name=$1 acc=$2 pre=$3 steps=$4 file=$var/demo/$1.yaml
  cat >"$file" <<YAML
name: $name
accelerator: $acc
preemptible: $pre
command: $podtrain
args: [--steps, "$steps", --checkpoint-every, "25", --min-step-ms, "100", --progress-every, "5"]
env: {POD_TOTAL_STEPS: "$steps"}
checkpoint_every_seconds: 3
grace_period_seconds: 15
max_restarts: 10
YAML
  printf '    job %s  %-12s %-6s %s\n' "$(ctl submit -f "$file")" "$name" "$acc" \
    "$([[ $pre == true ]] && echo preemptible || echo on-demand)"
}
if [[ -n $workload && -n $fleet ]]; then
  # Across the fleet: v2-8 sweeps on the devices, slices on the pods of their generation.
  step "submitting the demo workload (podtrain; specs in $var/demo/)"
  submit_demo resnet50 v2-32 false 3000
  submit_demo gan v2-32 true 3000
  # On-demand: 32 + 8 cores, the default quota of 40.
  submit_demo bert v3-8 false 2000
  submit_demo t5 v3-32 true 2000
  for s in a b c d e f; do submit_demo "sweep-$s" v2-8 true 2000; done
elif [[ -n $workload ]]; then
  step "submitting the demo workload (podtrain; specs in $var/demo/)"
  submit_demo resnet50 v2-32 false 3000
  submit_demo gan v2-32 true 3000
  submit_demo bert v2-8 false 2000
  submit_demo sweep-a v2-8 true 2000
  submit_demo sweep-b v2-8 true 2000
  submit_demo sweep-c v2-8 true 2000
fi

mode_done=$mode
[[ $mode == foreground ]] && mode=foreground_ready
[[ $mode == detach ]] && mode=foreground_ready
cat <<MSG

==> ready: podsched + ${#agent_ids[@]} podworkers serving $fleet_text
    dashboard:    $url/
    admin token:  $token   (also in $var/admin.token)
    worker bus:   CURVE, agents enrolled with podsched agent enroll (keys in $var/keys/)
    provider reclaim: $reclaim per preemptible allocation-hour (preemptions within minutes)
    jobs run as:  $run_as (uid $(id -u)), the account that started up.sh, for every user
  From another terminal, in $root:
    $podctl --server $url jobs --all
    $podctl --server $url pod
    $podctl --server $url fleet
    $podctl --server $url logs -f 2
    $podctl --server $url agents
  (podctl reads the token from var/admin.token in $root; elsewhere add --token or set POD_TOKEN)
  Logs: $var/log/   Checkpoints: $var/checkpoints/users/<user>/
MSG

if [[ $mode_done == detach ]]; then
  trap - EXIT INT TERM
  echo "    detached (pids in $pids_file); stop with: deploy/up.sh --down$([[ $var != "$root/var" ]] && echo " --var $var")"
  exit 0
fi

echo "    Ctrl-C stops everything."
trap - EXIT
on_stop() {
  trap - INT TERM
  echo
  step "stopping (agents first, then podsched)"
  stop_all && step "stopped; nothing left running"
  exit 0
}
trap on_stop INT TERM
# Foreground: stay until Ctrl-C, or until podsched dies (then stop the rest).
while alive "$sched_pid"; do sleep 1; done
echo "up.sh: podsched exited; see $var/log/podsched.log" >&2
stop_all || true
exit 1
