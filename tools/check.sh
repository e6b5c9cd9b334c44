#!/usr/bin/env bash
# The test command: installs the dependencies, builds with warnings as errors, checks the size
# limits (tools/lint-sizes.sh), runs every test. README's second set-up command and .ci/run
# are this script.
#
# Where NVRTC is found, the suite runs a second time with it hidden (the loader pointed at a
# path that does not exist), so a test that needs CUDA without saying so fails here too and
# not only on a machine without the toolkit. KCACHE_CHECK_ONE_PASS=1 skips that pass. The end
# of the output summarises each pass: compilers found and used, programs and cases skipped
# and why (tools/test-summary.py).
set -euo pipefail
cd "$(dirname "$0")/.."

summaries=()
print_summaries() {
  [ ${#summaries[@]} -eq 0 ] || { echo; cat "${summaries[@]}"; }
}
trap print_summaries EXIT

# suite_pass NAME LABEL [meson test arguments…]: one run of the suite, summarised before the
# next run overwrites meson's logs (kept as meson-logs/testlog-NAME.txt).
suite_pass() {
  local name=$1 label=$2 rc=0
  shift 2
  meson test -C "$builddir" --no-rebuild --print-errorlogs --num-processes "$(nproc)" "$@" || rc=$?
  local logs="$builddir/meson-logs"
  cp "$logs/testlog.txt" "$logs/testlog-$name.txt"
  tools/test-summary.py "$builddir" "$label" >"$logs/summary-$name.txt"
  summaries+=("$logs/summary-$name.txt")
  return $rc
}

tools/install-deps.sh
builddir=${KCACHE_BUILDDIR:-build-check}
if [ ! -d "$builddir" ]; then
  meson setup "$builddir" -Dwerror=true --buildtype=debugoptimized
fi
ninja -C "$builddir" -j "$(nproc)"
# The size limits (no file over 500 lines, no function over 80) fail the check like a test.
tools/lint-sizes.sh "$builddir"
suite_pass found "pass 1: compilers as found"

if [ "${KCACHE_CHECK_ONE_PASS:-0}" = 1 ]; then
  echo "pass 2 (NVRTC hidden) not run: KCACHE_CHECK_ONE_PASS=1" >"$builddir/meson-logs/summary-no-nvrtc.txt"
  summaries+=("$builddir/meson-logs/summary-no-nvrtc.txt")
elif tools/test-summary.py --nvrtc-found "$builddir"; then
  # The fuzz replays compile nothing: the same in both passes.
  KCACHE_NVRTC_LIBRARY=/nonexistent/libnvrtc.so \
    suite_pass no-nvrtc "pass 2: NVRTC hidden (KCACHE_NVRTC_LIBRARY=/nonexistent/libnvrtc.so)" \
    --no-suite fuzz-replay
else
  echo "pass 2 (NVRTC hidden) not run: pass 1 found no NVRTC, so it already ran without it" \
    >"$builddir/meson-logs/summary-no-nvrtc.txt"
  summaries+=("$builddir/meson-logs/summary-no-nvrtc.txt")
fi

# Fuzzing: every parser's libFuzzer target (clang, ASan+UBSan), a bounded run each over its
# seed corpus (20 s; docs/fuzzing.md). KCACHE_SKIP_FUZZ=1 skips it (quick local runs).
if [ "${KCACHE_SKIP_FUZZ:-0}" != 1 ]; then
  fuzzdir=${KCACHE_FUZZ_BUILDDIR:-build-fuzz}
  if [ ! -d "$fuzzdir" ]; then
    CC=clang-14 CXX=clang++-14 meson setup "$fuzzdir" -Dfuzzing=true --buildtype=debugoptimized \
      -Db_sanitize=address,undefined -Db_lundef=false
  fi
  mapfile -t fuzzers < <(cd "$fuzzdir" && ninja -t targets all |
    sed -n 's|^\(tests/fuzz/fuzz_[a-z_]*\): .*|\1|p' | sort -u)
  ninja -C "$fuzzdir" -j "$(nproc)" "${fuzzers[@]}"
  meson test -C "$fuzzdir" --no-rebuild --suite fuzz --print-errorlogs --num-processes 1
fi
