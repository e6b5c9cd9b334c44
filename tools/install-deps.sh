#!/usr/bin/env bash
# Installs what kcache needs to build and test on Debian bookworm (root or sudo).
# --bench also installs the benchmark's peers and plotting (tests/bench/kcache-bench):
# ccache and sccache (wrapping nvcc), gnuplot.
# NVRTC is not a Debian package: it comes from the CUDA toolkit in /usr/local/cuda where one
# is installed; without it kcached runs and reports "NVRTC not available", and the CUDA
# compile tests say so and skip.
set -euo pipefail

packages=(
  # build
  meson ninja-build pkg-config g++ python3
  libuv1-dev libsqlite3-dev libxxhash-dev libzstd-dev libspdlog-dev libfmt-dev
  libsystemd-dev nlohmann-json3-dev libtomlplusplus-dev libcli11-dev libseccomp-dev
  libssl-dev
  # tests
  libgtest-dev libgmock-dev sqlite3 xxhash zstd
  # fuzzing: libFuzzer with ASan/UBSan (docs/fuzzing.md)
  clang-14 libclang-rt-14-dev
  # the size lint: no function over 80 lines (tools/lint-sizes.sh)
  clang-tidy-14
  # hiprtc (AMD compiles, loaded at run time)
  libamdhip64-dev
)
if [ "${1:-}" = --bench ]; then
  packages+=(ccache sccache gnuplot-nox)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q </dev/null
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null
