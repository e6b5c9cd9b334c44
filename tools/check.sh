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
