#include "bench_sources.hpp"

namespace kcache::bench {

namespace {

constexpr std::string_view kSmall = R"(extern "C" __global__ void axpy_@(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
)";

// A realistic inference-kernel mix: templated shared-memory GEMM tiles in three sizes, a
// warp-shuffle reduction, a row softmax and a layer norm.
constexpr std::string_view kMedium = R"(template <int TILE>
__device__ void gemm_tile(const float* A, const float* B, float* C, int M, int N, int K) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
  float acc = 0.f;
  for (int t = 0; t < (K + TILE - 1) / TILE; ++t) {
    int ac = t * TILE + threadIdx.x, br = t * TILE + threadIdx.y;
    As[threadIdx.y][threadIdx.x] = (row < M && ac < K) ? A[row * K + ac] : 0.f;
    Bs[threadIdx.y][threadIdx.x] = (br < K && col < N) ? B[br * N + col] : 0.f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = acc;
}
extern "C" __global__ void gemm8_@(const float* A, const float* B, float* C, int M, int N, int K) { gemm_tile<8>(A, B, C, M, N, K); }
extern "C" __global__ void gemm16_@(const float* A, const float* B, float* C, int M, int N, int K) { gemm_tile<16>(A, B, C, M, N, K); }
extern "C" __global__ void gemm32_@(const float* A, const float* B, float* C, int M, int N, int K) { gemm_tile<32>(A, B, C, M, N, K); }

__device__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}
__device__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_down_sync(0xffffffffu, v, o));
  return v;
}
__device__ float block_sum(float v) {
  __shared__ float part[32];
  v = warp_sum(v);
  if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = v;
  __syncthreads();
  v = threadIdx.x < (blockDim.x >> 5) ? part[threadIdx.x] : 0.f;
  if (threadIdx.x < 32) v = warp_sum(v);
  __shared__ float total;
  if (threadIdx.x == 0) total = v;
  __syncthreads();
  return total;
}
extern "C" __global__ void reduce_sum_@(const float* x, float* out, int n) {
  float v = 0.f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) v += x[i];
  v = block_sum(v);
  if (threadIdx.x == 0) atomicAdd(out, v);
}
extern "C" __global__ void softmax_rows_@(const float* x, float* y, int cols) {
  const float* row = x + blockIdx.x * cols;
  float m = -3.402823466e38f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, row[c]);
  m = warp_max(m);
  m = __shfl_sync(0xffffffffu, m, 0);
  float s = 0.f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) s += __expf(row[c] - m);
  s = block_sum(s);
  for (int c = threadIdx.x; c < cols; c += blockDim.x) y[blockIdx.x * cols + c] = __expf(row[c] - m) / s;
}
extern "C" __global__ void layer_norm_@(const float* x, const float* g, const float* b, float* y, int cols, float eps) {
  const float* row = x + blockIdx.x * cols;
  float s = 0.f, sq = 0.f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) { s += row[c]; sq += row[c] * row[c]; }
  s = block_sum(s);
  sq = block_sum(sq);
  float mean = s / cols, inv = rsqrtf(sq / cols - mean * mean + eps);
  for (int c = threadIdx.x; c < cols; c += blockDim.x) y[blockIdx.x * cols + c] = (row[c] - mean) * inv * g[c] + b[c];
}
extern "C" __global__ void gelu_@(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float v = x[i]; y[i] = 0.5f * v * (1.f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v))); }
}
extern "C" __global__ void rope_@(float* q, const float* cosv, const float* sinv, int dim, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i * 2 + 1 < n) {
    int p = (i % (dim / 2));
    float a = q[2 * i], b = q[2 * i + 1];
    q[2 * i] = a * cosv[p] - b * sinv[p];
    q[2 * i + 1] = a * sinv[p] + b * cosv[p];
  }
}
)";

std::string substitute(std::string_view text, std::uint64_t nonce) {
  const std::string n = std::to_string(nonce);
  std::string out;
  out.reserve(text.size() + 16 * n.size());
  for (char c : text) {
    if (c == '@') out += n;
    else out += c;
  }
  return out;
}

}  // namespace

std::string bench_source(std::string_view kind, std::uint64_t nonce) {
  if (kind == "small") return substitute(kSmall, nonce);
  if (kind == "medium") return substitute(kMedium, nonce);
  return {};
}

std::string bench_module_name(std::string_view kind, std::uint64_t nonce) {
  return "bench_" + std::string(kind) + "_" + std::to_string(nonce);
}

}  // namespace kcache::bench
