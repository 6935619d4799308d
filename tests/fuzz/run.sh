#!/usr/bin/env bash
# Runs every libFuzzer target of a PODSCHED_FUZZ build on its seed corpus (docs/fuzzing.md).
#
#   tests/fuzz/run.sh BUILD_DIR SECONDS [NAME...]   e.g. tests/fuzz/run.sh build-fuzz 10
#
# Each target fuzzes for SECONDS (-max_total_time) starting from tests/fuzz/corpus/<name>/; the
# new inputs it finds go to a temporary directory, never into the repository. One line per
# target: runs, corpus size (seeds + new inputs), result. Exits 1 if any target crashed, leaked,
# timed out, ran out of memory or hit a UBSan report; its line names the input that did it (kept
# in the temporary directory, with the target's log). NAME... limits the run to those targets.
#
# Environment: PODSCHED_FUZZ_JOBS targets at once (default 1); PODSCHED_FUZZ_FLAGS extra
# libFuzzer flags (e.g. "-max_len=65536 -dict=..."); PODSCHED_FUZZ_OUT the directory for new
# inputs, logs and crashes (default: a new one under /tmp, removed when everything passed).
set -uo pipefail

if [[ $# -lt 2 || ! "$2" =~ ^[0-9]+$ ]]; then
  echo "usage: $0 BUILD_DIR SECONDS [NAME...]" >&2
  exit 2
fi
build_dir=$(cd "$1" && pwd) || exit 2
seconds=$2
shift 2
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

# One target: fuzz, then print its line and leave "ok" or "fail" in $out/<name>.result.
run_one() {
  local name=$1 bin="$build_dir/tests/fuzz/$1_fuzz" seeds="$corpus_root/$1"
  local new="$out/$name/new" log="$out/$name/log"
  mkdir -p "$new"
  if [[ ! -x "$bin" ]]; then
    printf '%-22s FAIL: %s is not built\n' "$name" "$bin"
    echo fail >"$out/$name.result"
    return
  fi
  # -timeout: one input running this long is a hang. -rss_limit_mb: a parser allocating this
  # much on a small input is a bug. UBSan reports abort (-fno-sanitize-recover), so libFuzzer
  # saves the input like a crash.
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:symbolize=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$out/$name/" ${PODSCHED_FUZZ_FLAGS:-} "$new" "$seeds" >"$log" 2>&1
  local rc=$?
  local runs corpus
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  corpus=$(($(find "$seeds" -type f | wc -l) + $(find "$new" -type f | wc -l)))
  if [[ $rc -eq 0 ]]; then
    printf '%-22s runs %-9s corpus %-5s ok\n' "$name" "${runs:-?}" "$corpus"
    echo ok >"$out/$name.result"
    return
  fi
  local kind input
  kind=$(grep -m1 -oE 'ERROR: libFuzzer: [a-z -]+|ERROR: (AddressSanitizer|LeakSanitizer): [a-z -]+|runtime error: .*' "$log" |
    head -1)
  input=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
  printf '%-22s runs %-9s corpus %-5s FAIL (%s) input: %s log: %s\n' "$name" "${runs:-?}" \
    "$corpus" "${kind:-exit $rc}" "${input:-none}" "$log"
  echo fail >"$out/$name.result"
}
export -f run_one
export build_dir seconds corpus_root out

printf '%s\n' "${names[@]}" | xargs -P "$jobs" -I{} bash -c 'run_one "$1"' _ {}

failed=0
for name in "${names[@]}"; do
  [[ "$(cat "$out/$name.result" 2>/dev/null)" == ok ]] || failed=$((failed + 1))
done
if [[ $failed -gt 0 ]]; then
  echo "fuzz: $failed of ${#names[@]} targets failed; inputs and logs in $out"
  exit 1
fi
echo "fuzz: all ${#names[@]} targets ran ${seconds} s without a finding"
[[ -z "$out_given" ]] && rm -rf "$out"
exit 0
