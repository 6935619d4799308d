#!/usr/bin/env bash
# The one test command: installs what is missing, builds, and runs every test with ctest.
# Then builds the unit tests once more under AddressSanitizer + UndefinedBehaviorSanitizer and
# runs them. Exits non-zero if any test failed.
#
#   deploy/check.sh                 everything
#   deploy/check.sh -L unit         only tests with this ctest label (any ctest arguments)
#   PODSCHED_SKIP_ASAN=1 deploy/check.sh   skip the sanitizer pass (quicker local runs)
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
jobs=$(nproc)

step() { printf '\n==> %s\n' "$*"; }

step "dependencies"
deploy/deps.sh || exit 1

step "configure + build (build/)"
cmake -S "$root" -B "$root/build" -G Ninja >/dev/null || exit 1
cmake --build "$root/build" -j"$jobs" || exit 1

step "tests (ctest in build/)"
ctest --test-dir "$root/build" --output-on-failure -j"$jobs" "$@"
status=$?

if [[ -z "${PODSCHED_SKIP_ASAN:-}" ]]; then
  step "unit tests under ASan + UBSan (build-asan/)"
  cmake -S "$root" -B "$root/build-asan" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DPODSCHED_SANITIZE=ON -DPODSCHED_UNIT_ONLY=ON >/dev/null || exit 1
  cmake --build "$root/build-asan" -j"$jobs" || exit 1
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir "$root/build-asan" -L unit --output-on-failure -j"$jobs"
  asan_status=$?
  [[ $status -eq 0 ]] && status=$asan_status
fi

if [[ $status -eq 0 ]]; then
  step "all tests passed"
else
  step "TESTS FAILED (exit $status)"
fi
exit $status
