#!/usr/bin/env bash
# README's first set-up command: installs the dependencies, builds, starts kcached with its
# embedded defaults (DESIGN §8) and shows it serving: one compile, one hit, the status.
set -euo pipefail
cd "$(dirname "$0")/.."

tools/install-deps.sh
[ -d build ] || meson setup build --buildtype=release
ninja -C build -j "$(nproc)"

kcached=build/daemon/kcached
kcachectl=build/tools/kcachectl/kcachectl
if [ "$(id -u)" -ne 0 ] && [ -z "${XDG_RUNTIME_DIR:-}" ]; then
  # A login session sets XDG_RUNTIME_DIR; a bare shell may not. Make a private one.
  export XDG_RUNTIME_DIR="/tmp/kcache-runtime-$(id -u)"
  mkdir -p -m 0700 "$XDG_RUNTIME_DIR"
fi
log="${XDG_RUNTIME_DIR:-/run}/kcached.log"
[ "$(id -u)" -eq 0 ] && mkdir -p /run/kcache && log=/run/kcache/kcached.log

if "$kcachectl" status >/dev/null 2>&1; then
  echo "quickstart: kcached is already running"
else
  nohup "$kcached" >"$log" 2>&1 </dev/null &
  pid=$!
  for _ in $(seq 100); do
    "$kcachectl" status >/dev/null 2>&1 && break
    kill -0 "$pid" 2>/dev/null || { echo "quickstart: kcached exited:"; cat "$log"; exit 1; }
    sleep 0.1
  done
  echo "quickstart: kcached started (pid $pid, log $log)"
fi

echo "== first request: compiles tools/demo/axpy.cu for sm_90a"
"$kcachectl" get --name demo_axpy --source tools/demo/axpy.cu --target sm_90a --json
echo "== second request: served from the cache"
"$kcachectl" get --name demo_axpy --source tools/demo/axpy.cu --target sm_90a --json
echo "== kcachectl status"
"$kcachectl" status
echo
echo "kcached keeps running; stop it with: pkill -x kcached"
