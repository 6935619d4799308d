#!/usr/bin/env bash
# Integration test of podsched and podctl (see tests/integration/daemon.cmake).
# Usage: daemon_test.sh PODSCHED PODCTL
set -uo pipefail
PODSCHED=$(realpath "$1")
PODCTL=$(realpath "$2")
for tool in curl jq; do command -v $tool >/dev/null || { echo "needs $tool"; exit 1; }; done
WORK=$(mktemp -d)
PID=
cleanup() { [[ -n $PID ]] && kill -9 "$PID" 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT
FAILS=0
ok() { echo "ok   - $*"; }
fail() { echo "FAIL - $*"; FAILS=$((FAILS + 1)); }
check() { local what=$1; shift; if "$@"; then ok "$what"; else fail "$what"; fi; }
# Polls a condition (a command) up to ~10 s.
wait_for() { local i; for i in $(seq 200); do "$@" && return 0; sleep 0.05; done; return 1; }

ALICE=alice-token-1; BOB=bob-token-2
sha() { printf %s "$1" | sha256sum | cut -d' ' -f1; }
cat > "$WORK/podsched.yaml" <<YAML
pods: [{name: pod0, generation: v2, host_rows: 8, host_cols: 8}]
users:
  - {name: alice, token_sha256: $(sha $ALICE), role: user}
  - {name: bob, token_sha256: $(sha $BOB), role: user}
quotas:
  bob: {on_demand_cores: 8, preemptible_cores: 8}   # one v2-8 at a time: bob's others wait
limits: {requests_per_second: 10000, burst: 10000, max_connections: 40}
bus: {address: "tcp://127.0.0.1:*", require_agents: false}   # API tests without podworker
YAML

start() {
  : > "$WORK/out"
  "$PODSCHED" --config "$WORK/podsched.yaml" --data-dir "$WORK/var" --port 0 \
    > "$WORK/out" 2>> "$WORK/err" &
  PID=$!
  wait_for grep -q '^podsched listening on ' "$WORK/out" || { cat "$WORK/err"; exit 1; }
  URL=$(sed -n 's/^podsched listening on \(http[^ ]*\)$/\1/p' "$WORK/out")
  ADMIN=$(cat "$WORK/var/admin.token")
}
# req METHOD PATH TOKEN [BODY-FILE]: prints "STATUS BODY".
req() {
  local auth=()
  [[ -n $3 ]] && auth=(-H "Authorization: Bearer $3")
  local data=()
  [[ $# -ge 4 ]] && data=(--data-binary "@$4")
  local code
  code=$(curl -s -o "$WORK/body" -w '%{http_code}' -X "$1" "${auth[@]}" "${data[@]}" "$URL$2")
  echo "$code $(cat "$WORK/body")"
}
body() { printf %s "$1" > "$WORK/req"; echo "$WORK/req"; }
status_of() { req "$@" | cut -d' ' -f1; }
is_json_error() { jq -e '.code and .message' >/dev/null 2>&1 <<< "${1#* }"; }
ctl() { "$PODCTL" --server "$URL" "$@"; }

start
# 40 connections fill limits.max_connections. Idle ones (nothing sent) make room: the oldest is
# closed and the next request is served (audit M4). Ones in the middle of a request do not: the
# next one gets 503 at once (no hang, no spinning accept loop), and once they close the API
# answers again.
conn_limit() {
  /usr/bin/python3 - "$URL" "$ADMIN" <<'PY'
import socket, sys, time, urllib.request, urllib.error
url, token = sys.argv[1], sys.argv[2]
host, port = url.split("//")[1].split(":")
def status():
    req = urllib.request.Request(url + "/healthz")
    try:
        return urllib.request.urlopen(req, timeout=5).status
    except urllib.error.HTTPError as e:
        return e.code
idle = [socket.create_connection((host, int(port))) for _ in range(40)]
time.sleep(0.3)  # let the server accept them
if status() != 200:
    sys.exit("40 idle connections locked the API out")
idle[0].settimeout(5)
if idle[0].recv(100) != b"":
    sys.exit("the oldest idle connection was not the one closed")
for s in idle:
    s.close()
busy = [socket.create_connection((host, int(port))) for _ in range(40)]
for s in busy:
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # a header not finished yet
time.sleep(0.3)
full = [status() for _ in range(3)]
for s in busy:
    s.close()
for _ in range(100):
    if status() == 200:
        break
    time.sleep(0.05)
else:
    sys.exit("API did not recover after the connections closed")
sys.exit(0 if 503 in full else "no 503 while full of busy connections: %s" % full)
PY
}
check "max_connections: idle ones make room; 503 when full of busy ones, serving again after" conn_limit
check "admin token file is mode 0600" test "$(stat -c %a "$WORK/var/admin.token")" = 600
check "job database is private (0600; the data dir 0711: traversable to the users' checkpoint prefixes, not listable)" bash -c "test \$(stat -c %a '$WORK/var/podsched.db') = 600 && test \$(stat -c %a '$WORK/var') = 711"
check "healthz" test "$(status_of GET /healthz '')" = 200

# --- podctl: submit / jobs / describe / events / cancel / preempt / quota / pod -----------------
cat > "$WORK/job.yaml" <<YAML
name: resnet50
accelerator: v2-32
priority: 3
command: [python3, train.py]
checkpoint_every_seconds: 600
YAML
J1=$(ctl --token $ALICE submit -f "$WORK/job.yaml"); rc=$?
check "podctl submit -f prints an id" test $rc = 0 -a -n "$J1"
J2=$(ctl --token $ALICE submit --accelerator v2-8 --preemptible --priority 2 --name gan -- ./gan --steps 100)
check "podctl submit with flags" test -n "$J2"
check "podctl jobs lists both" bash -c "'$PODCTL' --server $URL --token $ALICE jobs | grep -q resnet50 && '$PODCTL' --server $URL --token $ALICE jobs | grep -q gan"
check "podctl jobs -o json" bash -c "'$PODCTL' --server $URL --token $ALICE jobs -o json | jq -e '.jobs | length == 2' >/dev/null"
check "podctl jobs -o yaml" bash -c "'$PODCTL' --server $URL --token $ALICE jobs -o yaml | grep -q 'name: gan'"
placed() { ctl --token $ALICE describe "$J1" -o json | jq -e '.state == "PLACED"' >/dev/null; }
check "job gets placed" wait_for placed
check "podctl describe shows placement and cost" bash -c "'$PODCTL' --server $URL --token $ALICE describe $J1 | grep -q 'placement:' && '$PODCTL' --server $URL --token $ALICE describe $J1 | grep -q 'cost so far'"
check "podctl events" bash -c "'$PODCTL' --server $URL --token $ALICE events $J1 | grep -q 'QUEUED -> PLACED'"
check "podctl logs (empty, with a note)" bash -c "'$PODCTL' --server $URL --token $ALICE logs $J1 2>&1 | grep -q podworker"
ctl --token $ALICE pod --no-color > "$WORK/pod.txt"
check "podctl pod draws the grid and legend" bash -c "grep -q 'job $J1 alice v2-32' '$WORK/pod.txt' && grep -q 'lower case preemptible' '$WORK/pod.txt'"
check "podctl preempt" bash -c "'$PODCTL' --server $URL --token $ALICE preempt $J2 | grep -q PREEMPTING"
check "podctl cancel" bash -c "'$PODCTL' --server $URL --token $ALICE cancel $J1 | grep -qE 'PREEMPTING|CANCELLED'"
check "podctl quota" bash -c "'$PODCTL' --server $URL --token $ALICE quota | grep -q alice"
check "admin sees every user's quota" bash -c "'$PODCTL' --server $URL --token $ADMIN quota | grep -q bob"
check "podctl uses var/admin.token in the working directory" bash -c "cd '$WORK' && '$PODCTL' --server $URL jobs --all | grep -q resnet50"
# Audit L7: a token file another user planted in a shared directory is not used.
mkdir -p "$WORK/shared/var" && cp "$WORK/var/admin.token" "$WORK/shared/var/admin.token"
chmod 0622 "$WORK/shared/var/admin.token"
check "podctl ignores a var/admin.token others can write, saying why" bash -c "cd '$WORK/shared' && ! '$PODCTL' --server $URL jobs --all > /dev/null 2> '$WORK/planted.err' && grep -q 'ignoring var/admin.token: .*mode 622' '$WORK/planted.err'"
if [ "$(id -u)" = 0 ]; then
  chmod 0600 "$WORK/shared/var/admin.token" && chown 65534 "$WORK/shared/var/admin.token"
  check "podctl ignores a var/admin.token it does not own, saying why" bash -c "cd '$WORK/shared' && ! '$PODCTL' --server $URL jobs --all > /dev/null 2> '$WORK/planted.err' && grep -q 'ignoring var/admin.token: owned by uid 65534 (not you)' '$WORK/planted.err'"
fi

# podctl exit codes
ctl --token wrong jobs 2>/dev/null; check "podctl: auth error exits 3" test $? = 3
ctl --token $BOB describe "$J1" 2>/dev/null; check "podctl: another user's job exits 4" test $? = 4
ctl --token $ALICE submit --accelerator v2-12 -- x 2>/dev/null; check "podctl: invalid exits 5" test $? = 5
"$PODCTL" --server http://127.0.0.1:1 --token x jobs 2>/dev/null; check "podctl: unreachable exits 6" test $? = 6
ctl --frobnicate 2>/dev/null; check "podctl: usage error exits 2" test $? = 2
check "podctl: --server/--token after the verb" bash -c "'$PODCTL' jobs --server $URL --token $ALICE | grep -q resnet50"
check "podctl: POD_SERVER / POD_TOKEN" bash -c "POD_SERVER=$URL POD_TOKEN=$ALICE '$PODCTL' jobs | grep -q resnet50"
mkdir -p "$WORK/home/.config/podctl"
printf 'server: %s\ntoken: %s\n' "$URL" "$BOB" > "$WORK/home/.config/podctl/config.yaml"
check "podctl: ~/.config/podctl/config.yaml" bash -c "cd / && HOME='$WORK/home' '$PODCTL' quota | grep -q bob"
check "podctl submit --help" bash -c "'$PODCTL' submit --help | grep -q accelerator"

# --- raw HTTP -----------------------------------------------------------------------------------
r=$(req POST /api/v1/jobs $ALICE "$(body '{"name":"raw","accelerator":"v2-8","command":"x"}')")
check "raw submit 201" test "${r%% *}" = 201
R1=$(jq -r .job.id <<< "${r#* }")
check "raw get" test "$(status_of GET /api/v1/jobs/$R1 $ALICE)" = 200
check "raw list with filters" bash -c "test \"\$(curl -s -H 'Authorization: Bearer $ALICE' '$URL/api/v1/jobs?class=on-demand&page_size=1' | jq '.jobs | length')\" = 1"
check "raw events" test "$(status_of GET /api/v1/jobs/$R1/events $ALICE)" = 200
check "raw preempt" test "$(status_of POST /api/v1/jobs/$R1/preempt $ALICE)" = 200
check "raw cancel" test "$(status_of POST /api/v1/jobs/$R1/cancel $ALICE)" = 200
check "raw pods" test "$(status_of GET /api/v1/pods $ALICE)" = 200
check "raw quotas" test "$(status_of GET /api/v1/quotas $ALICE)" = 200
check "raw PUT quotas (admin)" test "$(status_of PUT /api/v1/quotas $ADMIN "$(body '{"user":"carol","on_demand_cores":8,"preemptible_cores":16}')")" = 200
check "raw PUT quotas (user) is 403" test "$(status_of PUT /api/v1/quotas $ALICE "$(body '{"user":"alice","on_demand_cores":800}')")" = 403
check "raw users (admin)" test "$(status_of GET /api/v1/users $ADMIN)" = 200

# --- auth ---------------------------------------------------------------------------------------
r=$(req GET /api/v1/jobs ''); check "no token: 401 JSON" bash -c "test '${r%% *}' = 401"; is_json_error "$r" || fail "401 body is JSON"
r=$(req GET /api/v1/jobs wrong-token); check "wrong token: 401" test "${r%% *}" = 401
check "other user's job: 404" test "$(status_of GET /api/v1/jobs/$J1 $BOB)" = 404
check "other user's job cannot be cancelled: 404" test "$(status_of POST /api/v1/jobs/$J2/cancel $BOB)" = 404
check "bob lists none of alice's jobs" bash -c "test \"\$(curl -s -H 'Authorization: Bearer $BOB' '$URL/api/v1/jobs?user=alice' | jq '.jobs | length')\" = 0"
check "admin sees alice's job" test "$(status_of GET /api/v1/jobs/$J1 $ADMIN)" = 200

# --- bad input: each a 4xx JSON error, and the server answers the next request ------------------
head -c $((10 * 1024 * 1024)) /dev/zero | tr '\0' 'a' > "$WORK/big"
deep=$(printf '%.0s[' $(seq 100))$(printf '%.0s]' $(seq 100))
declare -a BAD=(
  '{"name":"x",'
  '{"name":"x","accelerator":"v2-8","command":"c","colour":"red"}'
  '{"name":"x","accelerator":"v2-8","command":"c","priority":"high"}'
  '{"name":"x","accelerator":"v2-12","command":"c"}'
  '{"name":"x","accelerator":"v2-8","command":"c","priority":-1}'
  '{"name":"a\u0001b","accelerator":"v2-8","command":"c"}'
  "$deep"
)
for b in "${BAD[@]}"; do
  r=$(req POST /api/v1/jobs $ALICE "$(body "$b")")
  code=${r%% *}
  if [[ $code =~ ^4[0-9][0-9]$ ]] && is_json_error "$r"; then ok "bad input -> $code: ${b:0:40}"; else fail "bad input ${b:0:40} -> $r"; fi
  check "  server still answers" test "$(status_of GET /healthz '')" = 200
done
r=$(req POST /api/v1/jobs $ALICE "$WORK/big")
check "10 MB body -> 413 JSON" bash -c "test '${r%% *}' = 413"
is_json_error "$r" || fail "413 body is JSON"
check "  server still answers" test "$(status_of GET /healthz '')" = 200

# --- live stream: a submitted and cancelled job's transitions, in order -------------------------
curl -s -N -H "Authorization: Bearer $BOB" "$URL/api/v1/events/stream" > "$WORK/sse" &
SSE=$!
check "stream opens" wait_for grep -q 'podsched event stream' "$WORK/sse"
ctl --token $BOB submit --accelerator v2-8 --name holder -- x > /dev/null   # takes bob's quota
ctl --token $BOB wait "$(ctl --token $BOB submit --accelerator v2-8 --name waited -- x)" > /dev/null &
WAITER=$!
B1=$(ctl --token $BOB submit --accelerator v2-8 --name streamed -- sleep 1)
queued() { ctl --token $BOB describe "$B1" -o json | jq -e '.reason | test("quota")' >/dev/null; }
check "bob's job waits on quota" wait_for queued
ctl --token $BOB cancel "$B1" > /dev/null
cancelled_seen() { grep -q "\"job_id\":\"$B1\".*\"to\":\"CANCELLED\"" "$WORK/sse"; }
check "stream delivers CANCELLED" wait_for cancelled_seen
grep '^data: ' "$WORK/sse" | sed 's/^data: //' | jq -r "select(.event.job_id == \"$B1\") | .event.to" > "$WORK/b1"
check "stream order QUEUED then CANCELLED" test "$(tr '\n' ' ' < "$WORK/b1")" = "QUEUED CANCELLED "
ids=$(grep '^id: ' "$WORK/sse" | cut -d' ' -f2 | tr '\n' ' ')
check "stream ids increase" bash -c "echo $ids | tr ' ' '\n' | sort -n -c"
check "stream carries no other user's job" bash -c "! grep -q '\"user\":\"alice\"' '$WORK/sse'"
kill $SSE 2>/dev/null
W1=$(ctl --token $BOB jobs -o json | jq -r '.jobs[] | select(.name == "waited") | .id')
ctl --token $BOB cancel "$W1" > /dev/null
wait $WAITER; check "podctl wait exits 11 for a cancelled job" test $? = 11

# --- /metrics parses as Prometheus text exposition ----------------------------------------------
curl -s "$URL/metrics" > "$WORK/metrics"
check_prometheus() {
  awk '
    /^# HELP [a-zA-Z_:][a-zA-Z0-9_:]* / { next }
    /^# TYPE [a-zA-Z_:][a-zA-Z0-9_:]* (counter|gauge|histogram|summary|untyped)$/ { types[$3] = $4; next }
    /^#/ { print "bad comment: " $0; bad = 1; next }
    /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="[^"]*",?)*\})? [-+]?([0-9.]+([eE][-+]?[0-9]+)?|Inf|NaN)$/ {
      name = $1; sub(/\{.*/, "", name); base = name; sub(/_(bucket|sum|count)$/, "", base)
      if (!(name in types) && !(base in types)) { print "no TYPE for " name; bad = 1 }
      n++; next }
    { print "bad line: " $0; bad = 1 }
    END { exit (bad || n == 0) }' "$1"
}
check "/metrics is valid exposition" check_prometheus "$WORK/metrics"
for fam in podsched_jobs podsched_cores_in_use podsched_queue_length podsched_preemptions_total \
           podsched_scheduling_pass_seconds_bucket podsched_api_requests_total; do
  check "/metrics has $fam" grep -q "^$fam" "$WORK/metrics"
done
check "/metrics counts manual preemptions" grep -q 'podsched_preemptions_total{cause="manual"} [1-9]' "$WORK/metrics"

# --- kill -9 after N acknowledged submissions, restart: all there, unchanged --------------------
N=25
for i in $(seq $N); do
  tok=$ALICE; [[ $((i % 2)) = 0 ]] && tok=$BOB
  r=$(req POST /api/v1/jobs $tok "$(body "{\"name\":\"k$i\",\"accelerator\":\"v2-8\",\"preemptible\":true,\"command\":\"x\"}")")
  [[ ${r%% *} = 201 ]] && jq -r .job.id <<< "${r#* }" >> "$WORK/acked"
done
check "$N submissions acknowledged" test "$(wc -l < "$WORK/acked")" = $N
snapshot() { curl -s -H "Authorization: Bearer $ADMIN" "$URL/api/v1/jobs?page_size=500" | jq -c '[.jobs[] | {id, state, reason, epoch}]'; }
stable() { a=$(snapshot); b=$(snapshot); [[ $a == "$b" ]] && echo "$a" > "$WORK/before"; }
check "state settles before the kill" wait_for stable
kill -9 $PID; wait $PID 2>/dev/null; PID=
start
snapshot > "$WORK/after"
missing=0
while read -r id; do jq -e --arg id "$id" 'map(select(.id == $id)) | length == 1' "$WORK/after" >/dev/null || missing=$((missing + 1)); done < "$WORK/acked"
check "all $N acknowledged jobs survive kill -9" test $missing = 0
check "states and reasons unchanged after restart" cmp -s "$WORK/before" "$WORK/after"
[[ -f "$WORK/var/podsched.db" ]] || fail "jobs are stored in var/podsched.db"

# --- clean shutdown on SIGTERM ------------------------------------------------------------------
kill -TERM $PID; wait $PID; rc=$?; PID=
check "SIGTERM: clean exit 0" test $rc = 0

if [[ $FAILS -gt 0 ]]; then
  echo "$FAILS check(s) failed"; echo "--- podsched stderr"; tail -20 "$WORK/err"; exit 1
fi
echo "all checks passed"
