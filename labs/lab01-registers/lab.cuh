// lab01 interface: shared by kernel.cu (yours), the solution and driver.cu.
#pragma once

#include <cuda_runtime.h>

// Each output is a weighted sum of the last WINDOW samples of its series.
constexpr int WINDOW = 32;
// Threads per block, for the launcher and the driver's baseline alike.
constexpr int THREADS = 256;

// The weight of the sample k steps back: decreasing linearly from the newest
// (k = 0) to the oldest (k = WINDOW - 1) and summing to 1, a linearly weighted
// moving average. A compile-time constant wherever k is one.
__host__ __device__ constexpr float wma_weight(int k) {
  return static_cast<float>(WINDOW - k) / static_cast<float>(WINDOW * (WINDOW + 1) / 2);
}

// `in` and `out` are steps x series, row-major: row t holds sample t of every
// series, so the threads of a warp, one per series, read and write neighbours.
//   out[t][s] = sum over k in [0, WINDOW) of wma_weight(k) * in[t - k][s],
// where in[t - k][s] = 0 for t - k < 0. Any series >= 1, steps >= 1.
void launch_moving_average(float* out, const float* in, int series, int steps, cudaStream_t stream);
