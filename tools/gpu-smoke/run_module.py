#!/usr/bin/env python3
"""gpu-smoke's loader: runs what kcached served on one device and checks the result.

  run_module.py so PATH DEVICE      dlopen a FlashInfer-style .so, call smoke_axpy(DEVICE)
  run_module.py cubin PATH DEVICE   cuModuleLoadData + cuLaunchKernel of smoke_cubin_axpy

Prints one line and exits 0 when every element is right, 1 otherwise.
"""
import ctypes
import sys

N = 1 << 16


def run_so(path, device):
    lib = ctypes.CDLL(path)
    lib.smoke_axpy.restype = ctypes.c_int
    wrong = lib.smoke_axpy(ctypes.c_int(device), ctypes.c_int(N))
    return wrong, "dlopen + smoke_axpy"


def check(cu, call, what):
    rc = call
    if rc != 0:
        raise RuntimeError(f"{what} failed with CUresult {rc}")


def run_cubin(path, device):
    cu = ctypes.CDLL("libcuda.so.1")
    check(cu, cu.cuInit(0), "cuInit")
    dev = ctypes.c_int()
    check(cu, cu.cuDeviceGet(ctypes.byref(dev), device), "cuDeviceGet")
    ctx = ctypes.c_void_p()
    check(cu, cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
    check(cu, cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    image = open(path, "rb").read()
    module = ctypes.c_void_p()
    check(cu, cu.cuModuleLoadData(ctypes.byref(module), ctypes.c_char_p(image)), "cuModuleLoadData")
    fn = ctypes.c_void_p()
    check(cu, cu.cuModuleGetFunction(ctypes.byref(fn), module, b"smoke_cubin_axpy"), "cuModuleGetFunction")
    size = N * 4
    x_host = (ctypes.c_float * N)(*[float(i) for i in range(N)])
    y_host = (ctypes.c_float * N)(*([1.0] * N))
    x, y = ctypes.c_uint64(), ctypes.c_uint64()
    check(cu, cu.cuMemAlloc_v2(ctypes.byref(x), ctypes.c_size_t(size)), "cuMemAlloc")
    check(cu, cu.cuMemAlloc_v2(ctypes.byref(y), ctypes.c_size_t(size)), "cuMemAlloc")
    check(cu, cu.cuMemcpyHtoD_v2(x, x_host, ctypes.c_size_t(size)), "cuMemcpyHtoD")
    check(cu, cu.cuMemcpyHtoD_v2(y, y_host, ctypes.c_size_t(size)), "cuMemcpyHtoD")
    a, n = ctypes.c_float(2.0), ctypes.c_int(N)
    args = (ctypes.c_void_p * 4)(*[ctypes.cast(ctypes.byref(v), ctypes.c_void_p) for v in (a, x, y, n)])
    check(cu, cu.cuLaunchKernel(fn, (N + 255) // 256, 1, 1, 256, 1, 1, 0, None, args, None), "cuLaunchKernel")
    check(cu, cu.cuCtxSynchronize(), "cuCtxSynchronize")
    check(cu, cu.cuMemcpyDtoH_v2(y_host, y, ctypes.c_size_t(size)), "cuMemcpyDtoH")
    wrong = sum(1 for i in range(N) if y_host[i] != 2.0 * i + 1.0)
    return wrong, "cuModuleLoadData + cuLaunchKernel"


def main():
    kind, path, device = sys.argv[1], sys.argv[2], int(sys.argv[3])
    try:
        wrong, how = (run_so if kind == "so" else run_cubin)(path, device)
    except (OSError, RuntimeError, AttributeError) as e:
        print(f"device {device}: {kind} {path}: FAILED: {e}")
        return 1
    verdict = "ok" if wrong == 0 else f"FAILED ({wrong} of {N} elements wrong)" if wrong > 0 else f"FAILED (CUDA error {wrong})"
    print(f"device {device}: {kind} via {how}: {N} elements {verdict}")
    return 0 if wrong == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
