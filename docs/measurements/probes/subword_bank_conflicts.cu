// Shared-memory bank conflicts of sub-word (char, short) accesses, against 32-bit controls: the
// measurement behind lab07's "Bytes and halves" (log: ../logs/h100-subword-bank-conflicts.log).
// Build and profile: nvcc -arch=sm_90 -o subword subword_bank_conflicts.cu && ncu --metrics ... ./subword
// scripts/run-probes runs it under ncu with these counters, then prints the SASS of its shared accesses:
// probe-ncu-metrics: l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,sm__sass_inst_executed_op_shared_ld.sum,sm__sass_inst_executed_op_shared_st.sum
// probe-nvcc-flags: -arch=sm_90
#include <cstdio>
#include <cuda_runtime.h>

constexpr int kThreads = 256;

// Each thread stores its byte at s[t], then loads its neighbour's (t ^ 1): four threads share a word.
__global__ void char_consecutive(const char* in, char* out) {
  __shared__ char s[kThreads];
  const int t = threadIdx.x, g = blockIdx.x * kThreads + t;
  s[t] = in[g];
  __syncthreads();
  out[g] = s[t ^ 1];
}

// The "fix" some lessons give for the kernel above: one byte every four, plus a skew.
__global__ void char_spread(const char* in, char* out) {
  __shared__ char s[4 * kThreads + kThreads / 16];
  const int t = threadIdx.x, g = blockIdx.x * kThreads + t;
  s[t * 4 + t / 16] = in[g];
  __syncthreads();
  const int u = t ^ 1;
  out[g] = s[u * 4 + u / 16];
}

// Two threads share a word.
__global__ void short_consecutive(const short* in, short* out) {
  __shared__ short s[kThreads];
  const int t = threadIdx.x, g = blockIdx.x * kThreads + t;
  s[t] = in[g];
  __syncthreads();
  out[g] = s[t ^ 1];
}

// Controls: 32-bit words, one per thread (no conflict), and every second word (2-way).
__global__ void float_consecutive(const float* in, float* out) {
  __shared__ float s[kThreads];
  const int t = threadIdx.x, g = blockIdx.x * kThreads + t;
  s[t] = in[g];
  __syncthreads();
  out[g] = s[t ^ 1];
}

__global__ void float_stride2(const float* in, float* out) {
  __shared__ float s[2 * kThreads];
  const int t = threadIdx.x, g = blockIdx.x * kThreads + t;
  s[2 * t] = in[g];
  __syncthreads();
  out[g] = s[2 * (t ^ 1)];
}

int main() {
  const int blocks = 4096, n = blocks * kThreads;
  void *in = nullptr, *out = nullptr;
  cudaMalloc(&in, n * 4);
  cudaMalloc(&out, n * 4);
  cudaMemset(in, 1, n * 4);
  char_consecutive<<<blocks, kThreads>>>(static_cast<const char*>(in), static_cast<char*>(out));
  char_spread<<<blocks, kThreads>>>(static_cast<const char*>(in), static_cast<char*>(out));
  short_consecutive<<<blocks, kThreads>>>(static_cast<const short*>(in), static_cast<short*>(out));
  float_consecutive<<<blocks, kThreads>>>(static_cast<const float*>(in), static_cast<float*>(out));
  float_stride2<<<blocks, kThreads>>>(static_cast<const float*>(in), static_cast<float*>(out));
  const cudaError_t e = cudaDeviceSynchronize();
  std::printf("done: %s\n", cudaGetErrorString(e));
  return e == cudaSuccess ? 0 : 1;
}
