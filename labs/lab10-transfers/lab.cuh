// lab10 interface: shared by kernel.cu (yours), the solution and driver.cu.
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>

#include "cuda_check.cuh"  // CUDA_CHECK(call): throws on an error, which the grader reports

// The work the GPU does on every value: kSteps dependent multiply-adds, so that
// computing a chunk takes a time of the same order as copying it over the host
// link, and overlapping the two pays. fmaf on both sides: the host's oracle and
// the GPU round alike.
constexpr int kSteps = 1024;
__host__ __device__ inline float transform(float x) {
  for (int k = 0; k < kSteps; ++k) x = fmaf(x, 0.9990234375f, 0.0009765625f * (k & 1 ? 1.0f : -1.0f));
  return x;
}

// The host side of a run: n floats in, n floats out, in host memory the host
// writes and reads with ordinary loads and stores.
struct HostBuffers {
  float* in = nullptr;
  float* out = nullptr;
  std::size_t n = 0;
};

// Allocates the host arrays for n >= 1 floats each. The driver writes `in`
// before every process() and reads `out` after it, from the host.
HostBuffers create_host_buffers(std::size_t n);

// Frees what create_host_buffers allocated and resets `b`.
void destroy_host_buffers(HostBuffers& b);

// out[i] = transform(in[i]) for every i < b.n, on the GPU: copy in to the device
// array d_in, compute into d_out, copy d_out back to out. d_in and d_out are
// device arrays of b.n floats. Use `stream` and any streams of your own; when
// process() returns, the host reads every value of b.out with no
// synchronisation of its own.
void process(HostBuffers& b, float* d_in, float* d_out, cudaStream_t stream);
