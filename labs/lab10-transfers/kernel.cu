// lab10: host <-> device transfers. This is the file you edit.
#include "lab.cuh"

// ---- Step 1: host memory the copy engines can reach ----

// new[] gives pageable memory: the operating system may move or swap its pages,
// so the GPU cannot copy from it directly, and every cudaMemcpy stages it
// through a pinned buffer of the driver's, piece by piece.
HostBuffers create_host_buffers(std::size_t n) {
  HostBuffers b;
  b.n = n;
  // TODO(step 1): allocate in and out as pinned host memory with cudaMallocHost, n floats each (~2 lines)
  b.in = new float[n];
  b.out = new float[n];
  return b;
}

void destroy_host_buffers(HostBuffers& b) {
  // TODO(step 1): free in and out with cudaFreeHost, as they were allocated (~2 lines)
  delete[] b.in;
  delete[] b.out;
  b = HostBuffers{};
}

// ---- Step 2: copies and kernels that overlap ----

__global__ void transform_kernel(float* out, const float* in, std::size_t n) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = transform(in[i]);
}

// One thing at a time: all of the input over, the kernel, all of the output back.
// While a copy runs the GPU's SMs wait, and while the kernel runs both copy
// engines do.
void process(HostBuffers& b, float* d_in, float* d_out, cudaStream_t stream) {
  const int block = 256;
  // TODO(step 2): split the work into chunks and give each chunk's copy in, kernel and copy out to one of a few streams (cudaMemcpyAsync, each launch on its stream), then wait for all of them (~20 lines)
  const std::size_t bytes = b.n * sizeof(float);
  CUDA_CHECK(cudaMemcpyAsync(d_in, b.in, bytes, cudaMemcpyHostToDevice, stream));
  transform_kernel<<<(b.n + block - 1) / block, block, 0, stream>>>(d_out, d_in, b.n);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaMemcpyAsync(b.out, d_out, bytes, cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
}
