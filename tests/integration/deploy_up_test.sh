#!/usr/bin/env bash
# Smoke test of deploy/up.sh (tests/integration/deploy.cmake): --detach starts podsched and 64
# podworkers (64 hosts) on an alternate port and var dir, the demo workload runs (a job reaches
# RUNNING), podctl works against it, and --down leaves no process and frees the ports.
# With --fleet: the grant-shaped fleet (a v2 and a v3 pod, 10 devices: 42 hosts, 12 agents), its
# demo workload (a sweep's v2-8s on the devices) and `podctl fleet`.
# Usage: deploy_up_test.sh SOURCE_DIR BUILD_DIR [--fleet]
set -uo pipefail
SRC=$(realpath "$1"); BUILD=$(realpath "$2"); FLEET=${3:-}
for tool in curl jq; do command -v $tool >/dev/null || { echo "needs $tool"; exit 1; }; done
WORK=$(mktemp -d)
PORT=$(/usr/bin/python3 -c 'import socket
for _ in range(50):
    a, b = socket.socket(), socket.socket()
    try:
        a.bind(("127.0.0.1", 0)); p = a.getsockname()[1]; b.bind(("127.0.0.1", p + 1)); print(p); break
    except OSError: pass
    finally: a.close(); b.close()')
UP=("$SRC/deploy/up.sh" --var "$WORK/var" --port "$PORT" --build-dir "$BUILD" --skip-deps --skip-build $FLEET)
cleanup() { "${UP[@]}" --down >/dev/null 2>&1; rm -rf "$WORK"; }
trap cleanup EXIT
FAILS=0
ok() { echo "ok   - $*"; }
fail() { echo "FAIL - $*"; FAILS=$((FAILS + 1)); }
check() { local what=$1; shift; if "$@"; then ok "$what"; else fail "$what"; fi; }
wait_for() { local n=$1; shift; local i; for ((i = 0; i < n * 5; i++)); do "$@" && return 0; sleep 0.2; done; return 1; }
marked() {  # processes of this run (up.sh marks them PODSCHED_UP_RUN=<var>)
  grep -lxsF "PODSCHED_UP_RUN=$WORK/var" --null-data /proc/[0-9]*/environ 2>/dev/null | wc -l
}

start=$SECONDS
"${UP[@]}" --detach > "$WORK/up.out" 2>&1; rc=$?
check "up.sh --detach exits 0 (in $((SECONDS - start)) s)" test $rc = 0
[[ $rc = 0 ]] || { cat "$WORK/up.out"; tail -20 "$WORK"/var/log/*.log; exit 1; }
check "prints the dashboard URL" grep -q "dashboard: *http://127.0.0.1:$PORT/" "$WORK/up.out"
TOKEN=$(cat "$WORK/var/admin.token")
check "prints the admin token" grep -qF "$TOKEN" "$WORK/up.out"
if [[ -n $FLEET ]]; then AGENTS=12 HOSTS=42 JOBS=10; else AGENTS=64 HOSTS=64 JOBS=6; fi
check "pids file lists podsched and $AGENTS agents" test "$(wc -l < "$WORK/var/up.pids")" = $((AGENTS + 1))
api() { curl -sf -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$PORT$1"; }
check "$HOSTS healthy hosts" test "$(api /api/v1/pods | jq '[.pods[].hosts[] | select(.healthy)] | length')" = $HOSTS
check "demo workload submitted ($JOBS jobs)" test "$(api /api/v1/jobs | jq '.jobs | length')" = $JOBS
running() { api /api/v1/jobs | jq -e '[.jobs[] | select(.state == "RUNNING")] | length > 0' >/dev/null; }
check "a demo job runs within 120 s" wait_for 120 running
PODCTL=$(find "$BUILD" -name podctl -type f -perm -u+x | head -1)
check "podctl jobs against it" bash -c "'$PODCTL' --server http://127.0.0.1:$PORT --token $TOKEN jobs --all | grep -q resnet50"
if [[ -n $FLEET ]]; then
  check "podctl fleet lists the 12 pods and devices" bash -c "'$PODCTL' --server http://127.0.0.1:$PORT --token $TOKEN fleet | grep -q 'total (12 pods)'"
  # The six preemptible v2-8s of the sweep: on the ten devices before any pod is broken.
  check "the sweep's v2-8s are placed on devices" test "$(api /api/v1/jobs | jq '[.jobs[] | select(.accelerator == "v2-8" and (.pod // "") != "") | .pod] | length > 0 and all(test("^(od|pre)-"))')" = true
  check "the on-demand v3-8 is on the v3 pod" test "$(api /api/v1/jobs | jq -r '.jobs[] | select(.name == "bert") | .pod')" = v3-pod
fi
check "processes of the run exist" test "$(marked)" -gt 9
check "a second up.sh on the same var dir refuses" bash -c "! '${UP[0]}' --var '$WORK/var' --port $PORT --build-dir '$BUILD' --skip-deps --skip-build --detach >/dev/null 2>&1"

"${UP[@]}" --down > "$WORK/down.out" 2>&1; rc=$?
check "up.sh --down exits 0" test $rc = 0
check "no process of the run left" test "$(marked)" = 0
check "pids file removed" test ! -e "$WORK/var/up.pids"
check "HTTP port free" bash -c "! curl -s --max-time 1 http://127.0.0.1:$PORT/healthz >/dev/null"
check "up.sh --down again: nothing running" bash -c "'${UP[0]}' --var '$WORK/var' --down | grep -q 'nothing running'"
[[ $FAILS -eq 0 ]] || { cat "$WORK/up.out" "$WORK/down.out"; }
echo "$FAILS failure(s)"
exit $((FAILS > 0))
