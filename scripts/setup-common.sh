# Shared by scripts/demo and scripts/test: install what is missing, then configure and build.
# Sourced, not run.

HEADROOM_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HEADROOM_PACKAGES=(cmake ninja-build g++ pkg-config libboost-graph-dev libeigen3-dev libtbb-dev
  libyaml-cpp-dev libhdf5-dev hdf5-tools zlib1g-dev libdeflate-dev libisal-dev libgtest-dev libbenchmark-dev libcli11-dev nlohmann-json3-dev qt6-base-dev qt6-charts-dev libqt6opengl6-dev qt6-svg-dev chromium
  python3-h5py python3-pandas
  slurmctld slurmd slurm-client munge
  libopenmpi-dev openmpi-bin)

# scripts/fuzz (run by scripts/test): Debian's clang and its libFuzzer and sanitizer runtimes.
HEADROOM_FUZZ_PACKAGES=(clang libclang-rt-14-dev llvm)

headroom_install_deps() {
  local missing=()
  for p in "${HEADROOM_PACKAGES[@]}" "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "headroom: installing ${missing[*]}" >&2
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
  fi
}

# headroom_build BUILD_DIR [cmake args...] -- [targets...]
headroom_build() {
  local dir="$1"; shift
  local cmake_args=() targets=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do cmake_args+=("$1"); shift; done
  [ "${1:-}" = "--" ] && shift
  targets=("$@")
  cmake -S "$HEADROOM_ROOT" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "${cmake_args[@]}" >/dev/null
  if [ ${#targets[@]} -gt 0 ]; then
    cmake --build "$dir" --parallel "$(nproc)" --target "${targets[@]}"
  else
    cmake --build "$dir" --parallel "$(nproc)"
  fi
}
