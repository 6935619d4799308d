#!/usr/bin/env bash
# Runs the libFuzzer targets of a PODSCHED_FUZZ build (docs/fuzzing.md), in one of two modes.
#
#   tests/fuzz/run.sh BUILD_DIR --gate [NAME...]
#       What deploy/check.sh runs: deterministic. Each target replays every input of its
#       committed corpus (tests/fuzz/corpus/<name>/), then explores a fixed number of mutations
#       (PODSCHED_FUZZ_RUNS, default 20000) from a fixed seed (PODSCHED_FUZZ_SEED, default 1).
#       The same build sees the same inputs on every run and every machine, so the verdict
#       changes only when the code does.
#
#   tests/fuzz/run.sh BUILD_DIR --campaign SECONDS [NAME...]
#       Exploration, never part of the test command: each target fuzzes for SECONDS of CPU time
#       from a random seed (run it under `nice` beside other work). Every crashing input is
#       copied into the target's corpus directory in the checkout (corpus/<name>/crash-<sha1>),
#       so the gate replays it from then on: fix the parser, add a unit test, commit both. After
#       a crash the target starts again for the time left (at most 5 crashes per target). New
#       inputs that are not crashes stay in the output directory; merge them with -merge=1
#       (docs/fuzzing.md).
#
# One line per target: runs, corpus size, result. Exits 1 if any target crashed, leaked, timed
# out (10 s per input), ran out of memory (2 GiB) or hit a UBSan report; the line names the input
# and the log. NAME... limits the run to those targets.
#
# Environment: PODSCHED_FUZZ_JOBS targets at once (default 1); PODSCHED_FUZZ_FLAGS extra
# libFuzzer flags; PODSCHED_FUZZ_OUT the directory for new inputs, logs and crashes (default: a
# new one under /tmp, removed when everything passed).
set -uo pipefail

usage() {
  echo "usage: $0 BUILD_DIR --gate [NAME...]" >&2
  echo "       $0 BUILD_DIR --campaign SECONDS [NAME...]" >&2
  exit 2
}
[[ $# -ge 2 ]] || usage
build_dir=$(cd "$1" && pwd) || exit 2
mode=$2
shift 2
case $mode in
  --gate) seconds=0 ;;
  --campaign)
    [[ $# -ge 1 && "$1" =~ ^[1-9][0-9]*$ ]] || usage
    seconds=$1
    shift
    ;;
  *) usage ;;
esac
runs=${PODSCHED_FUZZ_RUNS:-20000}
seed=${PODSCHED_FUZZ_SEED:-1}
[[ "$runs" =~ ^[1-9][0-9]*$ && "$seed" =~ ^[1-9][0-9]*$ ]] || {
  echo "PODSCHED_FUZZ_RUNS and PODSCHED_FUZZ_SEED must be positive integers" >&2
  exit 2
}
corpus_root=$(cd "$(dirname "$0")" && pwd)/corpus
jobs=${PODSCHED_FUZZ_JOBS:-1}
out_given=${PODSCHED_FUZZ_OUT:-}
out=${out_given:-$(mktemp -d /tmp/podsched-fuzz.XXXXXX)}
mkdir -p "$out"

# Stack traces need a symbolizer that reads the compiler's debug info: llvm-symbolizer-19 (package
# llvm-19) for clang-19's; an older one prints bare addresses.
if symbolizer=$(command -v llvm-symbolizer-19); then export ASAN_SYMBOLIZER_PATH=$symbolizer; fi

names=("$@")
if [[ ${#names[@]} -eq 0 ]]; then
  for corpus in "$corpus_root"/*/; do names+=("$(basename "$corpus")"); done
fi

# One libFuzzer process; its log in $log. -timeout: one input running this long is a hang.
# -rss_limit_mb: a parser allocating this much on a small input is a bug. UBSan reports abort
# (-fno-sanitize-recover), so libFuzzer saves the input like a crash. -reload=0: the corpus is
# read once, never re-read on a timer.
#
# The gate must explore the same inputs every time. Coverage feedback includes the values of
# compared operands, so pointers must be the same from run to run: no address-space
# randomization (setarch -R). The fuzz build also takes the randomness out of the code under
# test (CMakeLists.txt: GOOGLE_PROTOBUF_NO_RDTSC, a fixed RandomBytes). Checked: two gate runs
# add the same new inputs, byte for byte, for every target (docs/fuzzing.md).
fuzz_once() {
  local bin=$1 new=$2 seeds=$3 log=$4 artifacts=$5
  shift 5
  local wrap=()
  if [[ $mode == --gate ]] && setarch "$(uname -m)" -R true 2>/dev/null; then
    wrap=(setarch "$(uname -m)" -R)
  fi
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:symbolize=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "${wrap[@]}" "$bin" "$@" -timeout=10 -rss_limit_mb=2048 -reload=0 -print_final_stats=1 \
      -artifact_prefix="$artifacts" ${PODSCHED_FUZZ_FLAGS:-} "$new" "$seeds" >"$log" 2>&1
}

# One target: prints its line and leaves "ok" or "fail" in $out/<name>.result.
run_one() {
  local name=$1 bin="$build_dir/tests/fuzz/$1_fuzz" seeds="$corpus_root/$1"
  local new="$out/$name/new" log="$out/$name/log"
  mkdir -p "$new"
  if [[ ! -x "$bin" ]]; then
    printf '%-22s FAIL: %s is not built\n' "$name" "$bin"
    echo fail >"$out/$name.result"
    return
  fi
  local rc total_runs=0 crashes=0 kind="" input="" cpu_s=0
  if [[ $mode == --gate ]]; then
    fuzz_once "$bin" "$new" "$seeds" "$log" "$out/$name/" -seed="$seed" -runs="$runs"
    rc=$?
    total_runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  else
    # SECONDS of CPU time, not of wall time: a campaign run beside other work (nice) still
    # fuzzes each target that long. libFuzzer's bound is wall time, so the target runs again
    # for what is left until its CPU time is reached.
    local start=0
    printf '%-22s fuzzing for %s CPU-s from a random seed (started %s)\n' "$name" "$seconds" "$(date +%H:%M:%S)"
    rc=0
    while ((cpu_s < seconds && start < 50 && crashes < 5)); do
      start=$((start + 1))
      local this_log="$log.$start"
      local TIMEFORMAT='%3U %3S'  # the CPU time of the run, for the campaign's report
      { time fuzz_once "$bin" "$new" "$seeds" "$this_log" "$out/$name/" \
        -max_total_time=$((seconds - cpu_s)); } 2>"$this_log.cpu"
      local this_rc=$?
      cpu_s=$(awk -v sum="$cpu_s" '{ printf "%.0f", sum + $1 + $2 }' "$this_log.cpu")
      local this_runs
      this_runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$this_log" | tail -1)
      total_runs=$((total_runs + ${this_runs:-0}))
      cat "$this_log" >>"$log"
      [[ $this_rc -eq 0 ]] && continue
      local found
      found=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$this_log" | tail -1)
      # A timeout is wall-clock: a campaign starved of CPU (niced beside a build) reports inputs
      # that are not slow. Kept only when the input alone times out again.
      if [[ "$(basename "${found:-x}")" == timeout-* ]] &&
        ASAN_OPTIONS=detect_leaks=0 "$bin" -timeout=10 "$found" >"$this_log.retry" 2>&1; then
        echo "$name: $(basename "$found") ran in time alone: a starved run, not kept" >>"$log"
        continue
      fi
      rc=$this_rc
      if [[ -n "$found" && -f "$found" ]]; then
        crashes=$((crashes + 1))
        cp "$found" "$seeds/$(basename "$found")"
        input="$seeds/$(basename "$found")"
        kind=$(grep -m1 -oE 'ERROR: libFuzzer: [a-z -]+|ERROR: (AddressSanitizer|LeakSanitizer): [a-z -]+|runtime error: .*' "$this_log" | head -1)
      else
        break  # no input to keep (a crash outside an input): starting again would repeat it
      fi
    done
  fi
  local corpus
  corpus=$(($(find "$seeds" -type f | wc -l) + $(find "$new" -type f | wc -l)))
  local cpu=""
  [[ $mode == --campaign ]] && cpu=" cpu ${cpu_s} s,"
  if [[ $rc -eq 0 ]]; then
    printf '%-22s runs %-9s corpus %-5s%s ok\n' "$name" "${total_runs:-?}" "$corpus" "$cpu"
    echo ok >"$out/$name.result"
    return
  fi
  if [[ $mode == --gate ]]; then
    kind=$(grep -m1 -oE 'ERROR: libFuzzer: [a-z -]+|ERROR: (AddressSanitizer|LeakSanitizer): [a-z -]+|runtime error: .*' "$log" | head -1)
    input=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
    printf '%-22s runs %-9s corpus %-5s FAIL (%s) input: %s log: %s\n' "$name" "${total_runs:-?}" \
      "$corpus" "${kind:-exit $rc}" "${input:-none}" "$log"
  else
    printf '%-22s runs %-9s corpus %-5s%s FAIL: %s crash(es), last (%s) kept as %s; log: %s\n' \
      "$name" "${total_runs:-?}" "$corpus" "$cpu" "$crashes" "${kind:-exit $rc}" "${input:-none}" "$log"
  fi
  echo fail >"$out/$name.result"
}
export -f run_one fuzz_once
export build_dir mode seconds runs seed corpus_root out

printf '%s\n' "${names[@]}" | xargs -P "$jobs" -I{} bash -c 'run_one "$1"' _ {}

failed=0
for name in "${names[@]}"; do
  [[ "$(cat "$out/$name.result" 2>/dev/null)" == ok ]] || failed=$((failed + 1))
done
if [[ $failed -gt 0 ]]; then
  echo "fuzz: $failed of ${#names[@]} targets failed; inputs and logs in $out"
  [[ $mode == --campaign ]] &&
    echo "fuzz: crashing inputs were added to tests/fuzz/corpus/; fix each, add a unit test, commit both"
  exit 1
fi
if [[ $mode == --gate ]]; then
  echo "fuzz: all ${#names[@]} targets replayed their corpus and ran $runs runs from seed $seed without a finding"
else
  echo "fuzz: all ${#names[@]} targets ran ${seconds} s without a finding; new inputs in $out"
  exit 0
fi
[[ -z "$out_given" ]] && rm -rf "$out"
exit 0
