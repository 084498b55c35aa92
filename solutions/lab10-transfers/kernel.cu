// lab10: host <-> device transfers. This is the file you edit.
#include "lab.cuh"

// ---- Step 1: host memory the copy engines can reach ----

// new[] gives pageable memory: the operating system may move or swap its pages,
// so the GPU cannot copy from it directly, and every cudaMemcpy stages it
// through a pinned buffer of the driver's, piece by piece.
HostBuffers create_host_buffers(std::size_t n) {
  HostBuffers b;
  b.n = n;
  // Pinned (page-locked) memory stays where it is, so a copy engine reads and
  // writes it directly, at the link's full speed, and cudaMemcpyAsync from it
  // returns at once instead of waiting for the staging.
  CUDA_CHECK(cudaMallocHost(&b.in, n * sizeof(float)));
  CUDA_CHECK(cudaMallocHost(&b.out, n * sizeof(float)));
  return b;
}

void destroy_host_buffers(HostBuffers& b) {
  CUDA_CHECK(cudaFreeHost(b.in));
  CUDA_CHECK(cudaFreeHost(b.out));
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
  // Chunks in turn on a few streams: while chunk k computes, chunk k + 1 comes
  // in on one copy engine and chunk k - 1 goes out on the other. Each stream
  // keeps its own chunk's three steps in order; the streams run side by side.
  // The streams are made once, on the first call, and kept: making them is not
  // free, and process() runs many times.
  constexpr int kStreams = 4;
  constexpr std::size_t kChunk = std::size_t(1) << 22;  // 4 Mi floats, 16 MiB
  static cudaStream_t own[kStreams - 1] = {};
  if (own[0] == nullptr)
    for (auto& s : own) CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const cudaStream_t streams[kStreams] = {stream, own[0], own[1], own[2]};
  for (std::size_t first = 0, k = 0; first < b.n; first += kChunk, ++k) {
    const std::size_t count = b.n - first < kChunk ? b.n - first : kChunk;
    const cudaStream_t s = streams[k % kStreams];
    CUDA_CHECK(cudaMemcpyAsync(d_in + first, b.in + first, count * sizeof(float), cudaMemcpyHostToDevice, s));
    transform_kernel<<<(count + block - 1) / block, block, 0, s>>>(d_out + first, d_in + first, count);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpyAsync(b.out + first, d_out + first, count * sizeof(float), cudaMemcpyDeviceToHost, s));
  }
  for (const cudaStream_t s : streams) CUDA_CHECK(cudaStreamSynchronize(s));
}
