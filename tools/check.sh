#!/usr/bin/env bash
# The test command: installs the dependencies, builds with warnings as errors, runs every
# test. README's second set-up command and .ci/run are this script.
set -euo pipefail
cd "$(dirname "$0")/.."

tools/install-deps.sh
builddir=${KCACHE_BUILDDIR:-build-check}
if [ ! -d "$builddir" ]; then
  meson setup "$builddir" -Dwerror=true --buildtype=debugoptimized
fi
ninja -C "$builddir" -j "$(nproc)"
meson test -C "$builddir" --print-errorlogs --num-processes "$(nproc)"

# Fuzzing: every parser's libFuzzer target (clang, ASan+UBSan), a bounded run each over its
# seed corpus (20 s; docs/fuzzing.md). KCACHE_SKIP_FUZZ=1 skips it (quick local runs).
if [ "${KCACHE_SKIP_FUZZ:-0}" != 1 ]; then
  fuzzdir=${KCACHE_FUZZ_BUILDDIR:-build-fuzz}
  if [ ! -d "$fuzzdir" ]; then
    CC=clang-14 CXX=clang++-14 meson setup "$fuzzdir" -Dfuzzing=true --buildtype=debugoptimized \
      -Db_sanitize=address,undefined -Db_lundef=false
  fi
  mapfile -t fuzzers < <(cd "$fuzzdir" && ninja -t targets all |
    sed -n 's|^\(tests/fuzz/fuzz_[a-z]*\): .*|\1|p' | sort -u)
  ninja -C "$fuzzdir" -j "$(nproc)" "${fuzzers[@]}"
  meson test -C "$fuzzdir" --no-rebuild --suite fuzz --print-errorlogs --num-processes 1
fi
