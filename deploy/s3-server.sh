#!/usr/bin/env bash
# A real S3 server on 127.0.0.1 for tests and benchmarks: OpenStack Swift (Debian 12 packages,
# installed by deploy/deps.sh) with its s3api and tempauth middleware. Everything lives in DIR:
# configs, rings, data, logs and PIDs. Nothing is created outside DIR and no bucket is created.
#
#   deploy/s3-server.sh start  DIR [PORT]   start the 4 servers; S3 on http://127.0.0.1:PORT
#                                           (default: a free port); returns when they answer
#                                           (bounded: S3_SERVER_START_TIMEOUT, default 120 s)
#   deploy/s3-server.sh stop   DIR          stop them (TERM, then KILL after 10 s)
#   deploy/s3-server.sh status DIR          exit 0 when all 4 run and the proxy is healthy
#   deploy/s3-server.sh env    DIR          print the endpoint and credentials as exports
#
# S3_SERVER_BIND=ADDR makes the S3 endpoint (the proxy) listen on ADDR instead of 127.0.0.1
# (0.0.0.0: every address, e.g. inside a network namespace of the cluster tests); the storage
# servers behind it stay on 127.0.0.1. The health checks still go to 127.0.0.1, so ADDR must
# be 127.0.0.1 or 0.0.0.0.
#
# Credentials: access key test:tester, secret key testing, region us-east-1, path-style URLs
# (virtual-host style works with http://localhost:PORT as the endpoint: storage_domain=localhost).
set -euo pipefail

usage() {
  sed -n '6,11p' "$0" >&2
  exit 2
}
[[ $# -ge 2 ]] || usage
cmd=$1
dir=$2
port=${3:-}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
servers=(account container object proxy)
py=/usr/bin/python3  # a pyenv python first on PATH cannot import swift

die() {
  echo "s3-server: $*" >&2
  exit 1
}

check_installed() {
  local missing=()
  for p in swift swift-proxy swift-object swift-container swift-account; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
  done
  [[ ${#missing[@]} -eq 0 ]] ||
    die "missing Debian packages: ${missing[*]}; run deploy/deps.sh (it installs them)"
}

# Prints N free TCP ports of 127.0.0.1 (held open together so they differ).
free_ports() {
  "$py" - "$1" <<'EOF'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
}

alive() { [[ -n "${1:-}" ]] && kill -0 "$1" 2>/dev/null; }

pid_of() { cat "$dir/run/$1.pid" 2>/dev/null || true; }

healthy() {  # PORT
  [[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$1/healthcheck")" == 200 ]]
}

load_ports() {
  [[ -f "$dir/run/ports" ]] || die "no server was started in $dir (no $dir/run/ports)"
  # shellcheck disable=SC1091
  source "$dir/run/ports"
}

write_configs() {
  local etc=$dir/etc
  mkdir -p "$etc" "$dir/srv/d0" "$dir/run" "$dir/log"
  cat >"$etc/swift.conf" <<EOF
[swift-hash]
swift_hash_path_suffix = podsched-test
swift_hash_path_prefix = podsched-test
[storage-policy:0]
name = Policy-0
default = yes
EOF
  local name p
  for name in account container object; do
    p=${name}_port
    cat >"$etc/$name-server.conf" <<EOF
[DEFAULT]
bind_ip = 127.0.0.1
bind_port = ${!p}
workers = 0
swift_dir = $etc
devices = $dir/srv
mount_check = false
log_level = WARNING
[pipeline:main]
pipeline = healthcheck $name-server
[filter:healthcheck]
use = egg:swift#healthcheck
[app:$name-server]
use = egg:swift#$name
EOF
  done
  cat >"$etc/proxy-server.conf" <<EOF
[DEFAULT]
bind_ip = ${S3_SERVER_BIND:-127.0.0.1}
bind_port = $proxy_port
workers = 0
swift_dir = $etc
log_level = WARNING
[pipeline:main]
pipeline = catch_errors gatekeeper healthcheck proxy-logging cache listing_formats bulk s3api tempauth copy slo dlo versioned_writes symlink proxy-logging proxy-server
[app:proxy-server]
use = egg:swift#proxy
account_autocreate = true
[filter:catch_errors]
use = egg:swift#catch_errors
[filter:gatekeeper]
use = egg:swift#gatekeeper
[filter:healthcheck]
use = egg:swift#healthcheck
[filter:proxy-logging]
use = egg:swift#proxy_logging
[filter:cache]
use = egg:swift#memcache
[filter:listing_formats]
use = egg:swift#listing_formats
[filter:bulk]
use = egg:swift#bulk
[filter:s3api]
use = egg:swift#s3api
location = us-east-1
storage_domain = localhost
[filter:tempauth]
use = egg:swift#tempauth
user_test_tester = testing .admin
[filter:copy]
use = egg:swift#copy
[filter:slo]
use = egg:swift#slo
[filter:dlo]
use = egg:swift#dlo
[filter:versioned_writes]
use = egg:swift#versioned_writes
[filter:symlink]
use = egg:swift#symlink
EOF
  # One replica, one device per ring (swift-ring-builder takes ~9 s for this; the library 1 s).
  "$py" - "$etc" "$account_port" "$container_port" "$object_port" <<'EOF'
import sys
from swift.common.ring import RingBuilder
etc = sys.argv[1]
for name, port in zip(("account", "container", "object"), sys.argv[2:5]):
    b = RingBuilder(6, 1, 1)
    b.add_dev({"id": 0, "region": 1, "zone": 1, "ip": "127.0.0.1", "port": int(port),
               "device": "d0", "weight": 100, "meta": ""})
    b.rebalance()
    b.get_ring().save(f"{etc}/{name}.ring.gz")
EOF
}

start() {
  check_installed
  case "${S3_SERVER_BIND:-127.0.0.1}" in
    127.0.0.1 | 0.0.0.0) ;;
    *) die "S3_SERVER_BIND must be 127.0.0.1 or 0.0.0.0, not '${S3_SERVER_BIND}'" ;;
  esac
  if (status) >/dev/null 2>&1; then
    echo "s3-server: already running in $dir"
    env_exports
    return 0
  fi
  stop >/dev/null 2>&1 || true  # leftovers of a half-started server
  local ports
  read -r -a ports <<<"$(free_ports 4)"
  account_port=${ports[0]} container_port=${ports[1]} object_port=${ports[2]}
  proxy_port=${port:-${ports[3]}}
  if healthy "$proxy_port" 2>/dev/null || ! "$py" -c "import socket; socket.socket().bind(('127.0.0.1', $proxy_port))" 2>/dev/null; then
    die "port $proxy_port of 127.0.0.1 is in use"
  fi
  write_configs
  printf 'account_port=%s\ncontainer_port=%s\nobject_port=%s\nproxy_port=%s\n' \
    "$account_port" "$container_port" "$object_port" "$proxy_port" >"$dir/run/ports"
  local name
  for name in "${servers[@]}"; do
    # setsid: the servers outlive this script and the caller's terminal or test runner;
    # their output goes to files so that no pipe of the caller stays open.
    setsid "/usr/bin/swift-$name-server" "$dir/etc/$name-server.conf" -v \
      </dev/null >"$dir/log/$name.log" 2>&1 &
    echo $! >"$dir/run/$name.pid"
  done
  local deadline=$((SECONDS + ${S3_SERVER_START_TIMEOUT:-120})) p ok
  while :; do
    ok=1
    for name in "${servers[@]}"; do
      alive "$(pid_of "$name")" || {
        stop >/dev/null 2>&1 || true
        die "swift-$name-server exited at start; see $dir/log/$name.log: $(tail -5 "$dir/log/$name.log")"
      }
      p=${name}_port
      healthy "${!p}" || ok=0
    done
    [[ $ok -eq 1 ]] && break
    if ((SECONDS > deadline)); then
      stop >/dev/null 2>&1 || true
      die "servers did not answer /healthcheck within ${S3_SERVER_START_TIMEOUT:-120} s; logs in $dir/log"
    fi
    sleep 0.2
  done
  echo "s3-server: S3 endpoint http://127.0.0.1:$proxy_port (data in $dir)"
}

stop() {
  local name pid pids=()
  for name in "${servers[@]}"; do
    pid=$(pid_of "$name")
    if alive "$pid" && grep -q "swift-$name-server" "/proc/$pid/cmdline" 2>/dev/null; then
      kill -TERM "$pid" 2>/dev/null || true
      pids+=("$pid")
    fi
  done
  local deadline=$((SECONDS + 10))
  for pid in "${pids[@]}"; do
    while alive "$pid" && ((SECONDS < deadline)); do sleep 0.1; done
    if alive "$pid"; then kill -KILL "$pid" 2>/dev/null || true; fi
  done
  for pid in "${pids[@]}"; do
    while alive "$pid"; do sleep 0.1; done
  done
  rm -f "$dir"/run/*.pid
  echo "s3-server: stopped (${#pids[@]} processes)"
}

status() {
  load_ports
  local name rc=0
  for name in "${servers[@]}"; do
    if alive "$(pid_of "$name")"; then
      echo "$name: running (pid $(pid_of "$name"))"
    else
      echo "$name: not running"
      rc=1
    fi
  done
  if healthy "$proxy_port"; then echo "proxy: healthy on 127.0.0.1:$proxy_port"; else rc=1; fi
  return $rc
}

env_exports() {
  load_ports
  cat <<EOF
export AWS_ENDPOINT_URL=http://127.0.0.1:$proxy_port
export AWS_ACCESS_KEY_ID=test:tester
export AWS_SECRET_ACCESS_KEY=testing
export AWS_REGION=us-east-1
export AWS_DEFAULT_REGION=us-east-1
EOF
}

case "$cmd" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  env) env_exports ;;
  *) usage ;;
esac
