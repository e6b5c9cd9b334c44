#!/usr/bin/env bash
# gpu-smoke: on a host with NVIDIA GPUs, loads what a private kcached serves for each local
# device and runs a kernel from it, checking the result (docs/gpu-smoke.md):
#  * a FlashInfer-style module: nvcc builds tools/gpu-smoke/smoke_module.cu as a host .so
#    (-shared -Xfatbin=-compress-all) for each device's target, laid out as a pip-installed
#    flashinfer-jit-cache-<tag> wheel; kcached serves it; the loader dlopens it and calls its
#    launch function;
#  * a cubin: kcached compiles tools/gpu-smoke/smoke_cubin.cu with NVRTC for the device; the
#    loader runs it with cuModuleLoadData + cuLaunchKernel.
# Without a GPU (or the driver) it says so and exits 0; nothing in CI depends on a GPU.
# KCACHE_SMOKE_DEVICES=sm_90a,sm_86 is a dry run without a GPU: kcached gets those devices,
# serves the wheel and the cubin, and the loader is not run (checks the serving half).
# Usage: tools/gpu-smoke.sh [BUILD_DIR]   (default: build; run after ninja -C build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
here=tools/gpu-smoke

dry=${KCACHE_SMOKE_DEVICES:-}
device_args=()
if [ -n "$dry" ]; then
  device_args=(--devices "$dry")
  echo "gpu-smoke: dry run for devices $dry: modules are served, not run"
elif ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu-smoke: no NVIDIA GPU on this host (nvidia-smi missing or finds none): nothing to run"
  exit 0
elif ! python3 -c 'import ctypes; ctypes.CDLL("libcuda.so.1")' 2>/dev/null; then
  echo "gpu-smoke: libcuda.so.1 (the NVIDIA driver) cannot be loaded: nothing to run"
  exit 0
fi
# run_module KIND PATH INDEX: the loader, or a note in a dry run.
run_module() {
  if [ -n "$dry" ]; then echo "device $3: $1 not run (dry run)"; return 0; fi
  python3 "$here/run_module.py" "$1" "$2" "$3"
}
nvcc=${KCACHE_NVCC:-/usr/local/cuda/bin/nvcc}
[ -x "$nvcc" ] || nvcc=$(command -v nvcc) || { echo "gpu-smoke: nvcc not found"; exit 1; }
kcached=$build/daemon/kcached
ctl=$build/tools/kcachectl/kcachectl
[ -x "$kcached" ] && [ -x "$ctl" ] || { echo "gpu-smoke: build first (ninja -C $build)"; exit 1; }

tmp=$(mktemp -d /tmp/kcache-gpu-smoke-XXXXXX)
sp=$tmp/site-packages
mkdir -p "$sp" "$tmp/cache"
export KCACHE_SOCKET=$tmp/kcache.sock
"$kcached" --cache-dir "$tmp/cache" --socket "$KCACHE_SOCKET" --provider-root "$sp" "${device_args[@]}" \
  >"$tmp/kcached.log" 2>&1 </dev/null &
pid=$!
cleanup() { kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
for _ in $(seq 100); do "$ctl" status >/dev/null 2>&1 && break; sleep 0.1; done
"$ctl" status >/dev/null || { echo "gpu-smoke: kcached did not start:"; cat "$tmp/kcached.log"; exit 1; }

# index and compile target of every CUDA device kcached discovered.
mapfile -t devices < <("$ctl" --json status | python3 -c '
import json, sys
for d in json.load(sys.stdin)["devices"]:
    if d["backend"] == "cuda":
        print(d["index"], d["compile_target"])')
[ ${#devices[@]} -gt 0 ] || { echo "gpu-smoke: kcached discovered no CUDA device"; exit 1; }

# One wheel per distinct target, as pip lays it out (RECORD last: the install is complete).
version=0.0.0+smoke
for target in $(printf '%s\n' "${devices[@]}" | awk '{print $2}' | sort -u); do
  tag=${target/_/}
  arch=${target#sm_}
  pkg=$sp/flashinfer_jit_cache/providers/$tag
  info=$sp/flashinfer_jit_cache_$tag-$version.dist-info
  mkdir -p "$pkg/jit_cache/smoke_axpy" "$info"
  "$nvcc" -shared -Xcompiler -fPIC -Xfatbin=-compress-all \
    -gencode "arch=compute_$arch,code=sm_$arch" -o "$pkg/jit_cache/smoke_axpy/smoke_axpy.so" \
    "$here/smoke_module.cu"
  : >"$pkg/__init__.py"
  printf '{"cuda_architectures": ["%s"], "distribution": "flashinfer-jit-cache-%s", "modules": ["smoke_axpy"], "provider_id": "%s", "schema_version": 1, "version": "%s"}\n' \
    "$tag" "$tag" "$tag" "$version" >"$pkg/manifest.json"
  printf '[flashinfer.jit_cache.providers]\n%s = flashinfer_jit_cache.providers.%s:get_provider\n' \
    "$tag" "$tag" >"$info/entry_points.txt"
  : >"$info/RECORD"
done

failed=0
for d in "${devices[@]}"; do
  read -r index target <<<"$d"
  so=""
  for _ in $(seq 50); do
    so=$("$ctl" get --name smoke_axpy --version "$version" --device "$index" 2>/dev/null) && break
    sleep 0.2
  done
  if [ -z "$so" ]; then
    echo "device $index ($target): kcached served no smoke_axpy.so:"
    "$ctl" get --name smoke_axpy --version "$version" --device "$index" || true
    failed=1
  else
    echo "device $index ($target): served $so"
    run_module so "$so" "$index" || failed=1
  fi
  if cubin=$("$ctl" get --name smoke_cubin --source "$here/smoke_cubin.cu" --device "$index"); then
    echo "device $index ($target): served $cubin"
    run_module cubin "$cubin" "$index" || failed=1
  else
    failed=1
  fi
done
"$ctl" providers
if [ $failed -ne 0 ]; then echo "gpu-smoke: FAILED"
elif [ -n "$dry" ]; then echo "gpu-smoke: every device was served (dry run: nothing loaded)"
else echo "gpu-smoke: every device ran what kcached served"; fi
exit $failed
