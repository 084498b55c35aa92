// lab08 interface: shared by kernel.cu (yours), the solution and driver.cu.
#pragma once

#include <cuda_runtime.h>

// Threads per block for every kernel of this lab: a power of two (the tree
// halves it each round) and a multiple of the 32-thread warp.
constexpr int BLOCK_SIZE = 256;

// *result += sum of a[i] * b[i] for i in [0, n). Any n >= 1. The caller sets
// *result to 0 before every call, so atomicAdd into it is enough. Both vectors
// come from cudaMalloc, so both are 16-byte aligned (float4 loads are legal).
void launch_dot(float* result, const float* a, const float* b, int n, cudaStream_t stream);
