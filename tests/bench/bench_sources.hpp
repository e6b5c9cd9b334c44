// bench_sources.hpp — the CUDA sources every compile benchmark uses, for kcache, in-process
// NVRTC and nvcc (through ccache and sccache) alike, so their times compare the same work.
//
// Contract: `bench_source(kind, nonce)` is deterministic. The nonce is part of every kernel's
// name, so two nonces give two different modules for every cache (a comment would not do:
// sccache hashes the preprocessed text). Kinds:
//   small  — one 4-line axpy kernel (the hit benchmarks' module; NVRTC ~30 ms);
//   medium — GEMM tiles, reductions, softmax and layer norm, 9 kernels (~0.3–0.5 s).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kcache::bench {

// Empty if `kind` is neither "small" nor "medium".
std::string bench_source(std::string_view kind, std::uint64_t nonce);

// The name the module is requested under ("bench_small_<nonce>").
std::string bench_module_name(std::string_view kind, std::uint64_t nonce);

}  // namespace kcache::bench
