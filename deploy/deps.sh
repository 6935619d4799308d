#!/usr/bin/env bash
# Installs the Debian 12 packages podsched needs to build, test and run. Idempotent: packages
# already installed are skipped, and `apt-get update` runs only when something is missing.
# Works as root, or through sudo otherwise.
#
#   deploy/deps.sh            build + run + test dependencies
#   deploy/deps.sh --print    list the packages and exit
#
# Then installs the dashboard's npm packages (web/node_modules, from the committed
# web/package-lock.json) with `npm ci` when they are missing or older than the lockfile.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

packages=(
  # toolchain
  g++ cmake ninja-build pkg-config git
  # fuzzing (tests/fuzz, docs/fuzzing.md): libFuzzer with ASan + UBSan. clang-19, the oldest
  # Debian 12 clang whose __cpp_concepts lets libstdc++ 12's <expected> compile (clang-14..16
  # cannot); llvm-19 for llvm-symbolizer-19 (readable sanitizer stack traces)
  clang-19 libclang-rt-19-dev libfuzzer-19-dev llvm-19
  # required stack
  libboost-dev libboost-system-dev           # Asio, Beast (header-only) + Boost.System
  libzmq3-dev cppzmq-dev                      # ZeroMQ worker bus
  libopenmpi-dev openmpi-bin                  # MPI training jobs (mpirun, mpicxx)
  libprotobuf-dev protobuf-compiler           # wire and API schemas
  libsqlite3-dev                              # job store
  libgtest-dev libgmock-dev                   # unit tests
  # well-kept helpers
  nlohmann-json3-dev libcli11-dev libspdlog-dev libyaml-cpp-dev
  libssl-dev libcurl4-openssl-dev libbenchmark-dev
  zlib1g-dev                                  # libz.a: podctl and the helpers link statically
  ccache                                      # check.sh's builds reuse earlier compiles
  # tests: network namespaces, process tools, HTTP tests of the daemon
  iproute2 procps curl jq python3
  # tests: `systemd-analyze verify` of deploy/systemd's units (no systemd needs to run)
  systemd
  # tests: a real S3 server on 127.0.0.1 (OpenStack Swift + s3api, deploy/s3-server.sh) and a
  # real S3 client for interop tests and benchmarks
  swift swift-proxy swift-object swift-container swift-account awscli
  # the dashboard: its npm packages (uPlot, playwright-core) and the browser for its tests
  nodejs chromium
  # tests: users' own jobs (PyTorch DDP with gloo, mpi4py) run through podsched
  python3-torch python3-mpi4py python3-numpy
  # the peer of tests/bench/slurm_bench.py (Slurm side by side; its daemons run from the bench)
  slurm-wlm munge
)
# Debian's nodejs ships npm separately; NodeSource's nodejs bundles it (and conflicts with the
# Debian package), so ask for npm only when there is none.
command -v npm >/dev/null || packages+=(npm)

# web/node_modules from the lockfile, when missing or stale (npm ci writes
# node_modules/.package-lock.json; an older copy than web/package-lock.json means stale).
web_deps() {
  local web="$root/web"
  [[ -f "$web/package-lock.json" ]] || return 0
  if [[ ! -f "$web/node_modules/.package-lock.json" ||
        "$web/package-lock.json" -nt "$web/node_modules/.package-lock.json" ]]; then
    echo "deps: npm ci in web/ (dashboard packages)"
    (cd "$web" && npm ci --no-audit --no-fund)
  fi
}

if [[ "${1:-}" == "--print" ]]; then
  printf '%s\n' "${packages[@]}"
  exit 0
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
    missing+=("$p")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "deps: all ${#packages[@]} packages already installed"
  web_deps
  exit 0
fi

sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null; then
    sudo_cmd=(sudo)
  else
    echo "deps: need root or sudo to install: ${missing[*]}" >&2
    exit 1
  fi
fi

echo "deps: installing ${#missing[@]} missing packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -q
"${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
web_deps
echo "deps: done"
