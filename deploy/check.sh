#!/usr/bin/env bash
# The one test command: installs what is missing, builds, and runs every test with ctest.
# Then builds the unit tests once more under AddressSanitizer + UndefinedBehaviorSanitizer and
# runs them, and runs every libFuzzer target deterministically: its committed corpus replayed, then a
# fixed number of mutations from a fixed seed (the same inputs on every run; exploring campaigns
# are tests/fuzz/run.sh --campaign, outside this command). Exits non-zero if any test failed.
#
#   deploy/check.sh                 everything
#   deploy/check.sh -L unit         only tests with this ctest label (any ctest arguments)
#   PODSCHED_SKIP_ASAN=1 deploy/check.sh   skip the sanitizer pass (quicker local runs)
#   PODSCHED_SKIP_FUZZ=1 deploy/check.sh   skip the fuzz targets (tests/fuzz, docs/fuzzing.md)
#   PODSCHED_FUZZ_RUNS=100000 deploy/check.sh  more fixed-seed mutations per target (default 20000)
#   PODSCHED_MIN_FREE_GB=8 deploy/check.sh     refuse to start with less disk free (default 8)
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
jobs=$(nproc)

step() { printf '\n==> %s\n' "$*"; }

step "dependencies"
deploy/deps.sh || exit 1

# Disk: a run from a clean clone writes about 4.5 GB (measured 2026-12-05: build/ 1.9 GB,
# build-asan/ 1.7 GB, build-fuzz/ 0.3 GB, ccache 0.35 GB) plus the tests' temporary files; 8 GB
# leaves room for both. A full disk otherwise fails half-way, in a linker or a test, with "No
# space left on device" (as a CI run did); say it first.
need_gb=${PODSCHED_MIN_FREE_GB:-8}
free_gb=$(df -P -BG "$root" | awk 'NR == 2 { sub("G", "", $4); print $4 }')
if [[ -n "$free_gb" && "$free_gb" -lt "$need_gb" ]]; then
  echo "check.sh: only ${free_gb} GB free under $root; a full run needs about ${need_gb} GB" \
       "(build trees, ccache, test files). Free some space, or set PODSCHED_MIN_FREE_GB=0 to" \
       "try anyway." >&2
  exit 1
fi

# ccache for all three builds, keyed by paths relative to the checkout (and not by the build
# directory's path), so that a fresh clone anywhere reuses what an earlier one compiled.
launcher=()
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi

step "configure + build (build/)"
cmake -S "$root" -B "$root/build" -G Ninja "${launcher[@]}" >/dev/null || exit 1
cmake --build "$root/build" -j"$jobs" || exit 1

step "tests (ctest in build/)"
ctest --test-dir "$root/build" --output-on-failure -j"$jobs" "$@"
status=$?

if [[ -z "${PODSCHED_SKIP_ASAN:-}" ]]; then
  step "unit tests under ASan + UBSan (build-asan/)"
  cmake -S "$root" -B "$root/build-asan" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DPODSCHED_SANITIZE=ON -DPODSCHED_UNIT_ONLY=ON "${launcher[@]}" >/dev/null || exit 1
  cmake --build "$root/build-asan" -j"$jobs" || exit 1
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir "$root/build-asan" -L unit --output-on-failure -j"$jobs"
  asan_status=$?
  [[ $status -eq 0 ]] && status=$asan_status
fi

if [[ -z "${PODSCHED_SKIP_FUZZ:-}" ]]; then
  step "fuzz targets: corpus replay + fixed-seed runs, under ASan + UBSan (build-fuzz/)"
  CC=clang-19 CXX=clang++-19 cmake -S "$root" -B "$root/build-fuzz" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPODSCHED_FUZZ=ON "${launcher[@]}" >/dev/null || exit 1
  cmake --build "$root/build-fuzz" -j"$jobs" || exit 1
  PODSCHED_FUZZ_JOBS=$jobs tests/fuzz/run.sh "$root/build-fuzz" --gate
  fuzz_status=$?
  [[ $status -eq 0 ]] && status=$fuzz_status
fi

if [[ $status -eq 0 ]]; then
  step "all tests passed"
else
  step "TESTS FAILED (exit $status)"
fi
exit $status
