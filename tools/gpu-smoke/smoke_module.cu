// gpu-smoke's FlashInfer-style module: a host .so whose embedded kernel computes y = a*x + y.
// smoke_axpy runs it on one device end to end and returns the number of wrong elements
// (negative: a CUDA error), so the loader needs nothing but dlopen.
#include <cuda_runtime.h>

__global__ void smoke_axpy_kernel(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

extern "C" int smoke_axpy(int device, int n) {
  if (cudaSetDevice(device) != cudaSuccess) return -1;
  float *x = nullptr, *y = nullptr;
  float* host = new float[2 * n];
  for (int i = 0; i < n; ++i) host[i] = static_cast<float>(i), host[n + i] = 1.0f;
  if (cudaMalloc(&x, n * sizeof(float)) != cudaSuccess || cudaMalloc(&y, n * sizeof(float)) != cudaSuccess)
    return -2;
  cudaMemcpy(x, host, n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(y, host + n, n * sizeof(float), cudaMemcpyHostToDevice);
  smoke_axpy_kernel<<<(n + 255) / 256, 256>>>(2.0f, x, y, n);
  if (cudaDeviceSynchronize() != cudaSuccess) return -3;
  cudaMemcpy(host + n, y, n * sizeof(float), cudaMemcpyDeviceToHost);
  int wrong = 0;
  for (int i = 0; i < n; ++i) wrong += host[n + i] != 2.0f * static_cast<float>(i) + 1.0f;
  cudaFree(x);
  cudaFree(y);
  delete[] host;
  return wrong;
}
