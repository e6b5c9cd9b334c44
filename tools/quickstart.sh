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

# The demo compiles for a CUDA target where NVRTC is there, else for an AMD one with hiprtc
# (Debian's, always installed): a machine without the CUDA toolkit still sees it work.
available=$("$kcachectl" --json status |
  python3 -c 'import json,sys; print(" ".join(c["backend"] for c in json.load(sys.stdin)["compilers"] if c["available"]))')
case " $available " in
  *" cuda "*) target=sm_90a ;;
  *" hip "*) target=gfx90a; echo "quickstart: NVRTC not available; the demo compiles for $target with hiprtc" ;;
  *) echo "quickstart: kcached found no compiler (NVRTC or hiprtc); see kcachectl status"; exit 1 ;;
esac
echo "== first request: compiles tools/demo/axpy.cu for $target"
"$kcachectl" get --name demo_axpy --source tools/demo/axpy.cu --target "$target" --json
echo "== second request: served from the cache"
"$kcachectl" get --name demo_axpy --source tools/demo/axpy.cu --target "$target" --json
echo "== kcachectl status"
"$kcachectl" status
echo
echo "kcached keeps running; stop it with: pkill -x kcached"
