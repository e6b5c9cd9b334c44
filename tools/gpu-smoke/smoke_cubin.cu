// gpu-smoke's NVRTC module: served as a cubin, loaded with cuModuleLoadData.
extern "C" __global__ void smoke_cubin_axpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
