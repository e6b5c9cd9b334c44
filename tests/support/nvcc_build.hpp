// nvcc_build.hpp — host shared objects with embedded device code, built at test time with the
// CUDA toolkit's nvcc exactly as FlashInfer builds its JIT-cache modules
// (`nvcc -shared -Xcompiler -fPIC -Xfatbin=-compress-all -gencode …`).
//
// Contract:
//  * `nvcc_host_object(gencodes)` compiles a small kernel with a `launch_axpy` C entry point
//    (y = a*x + y) for each `-gencode` value given ("arch=compute_90a,code=sm_90a") and returns
//    the `.so`'s bytes. Results are cached per gencode list for the process.
//  * nvcc is $KCACHE_NVCC, else /usr/local/cuda/bin/nvcc, else `nvcc` on PATH. Where none
//    runs, `available` is false and `message` says what was tried (the test should
//    GTEST_SKIP with it); a compile that fails is reported with nvcc's output.
//  * `compress` false builds without -Xfatbin=-compress-all (uncompressed entries).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace kcache::testing {

struct HostObject {
  bool available = false;
  bool ok = false;
  std::string message;
  std::vector<std::byte> bytes;
};

const HostObject& nvcc_host_object(const std::vector<std::string>& gencodes, bool compress = true);

}  // namespace kcache::testing
