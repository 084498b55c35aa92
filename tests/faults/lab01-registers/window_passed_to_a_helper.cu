// fault: the weighted sum moved into a __noinline__ helper that takes the window by pointer: an array whose address is taken lives in local memory
// expect: step 1 fails: ptxas (local_memory)
// message: moving_average_kernel: 128 bytes stack frame (max 0)
// lab01: registers and local memory. This is the file you edit.
#include "lab.cuh"

// The weighted sum of one window, window[k] being the sample k steps back.
__device__ __noinline__ float weighted_sum(const float* window) {
  float acc = 0.0f;
  for (int k = 0; k < WINDOW; ++k) acc += wma_weight(k) * window[k];
  return acc;
}

// One thread per series walks its samples in time order and keeps the last
// WINDOW of them, so that each sample is read from device memory only once.
__global__ void moving_average_kernel(float* out, const float* in, int series, int steps) {
  const int s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= series) return;
  // A shift register: window[k] is always the sample k steps back. With both
  // loops unrolled every index is a compile-time constant, so the array becomes
  // WINDOW registers and never touches local memory. The price, WINDOW - 1
  // register moves per step, is far less than the ring buffer's local accesses.
  float window[WINDOW] = {};
  for (int t = 0; t < steps; ++t) {
#pragma unroll
    for (int k = WINDOW - 1; k > 0; --k) window[k] = window[k - 1];
    window[0] = in[static_cast<size_t>(t) * series + s];
    out[static_cast<size_t>(t) * series + s] = weighted_sum(window);
  }
}

void launch_moving_average(float* out, const float* in, int series, int steps, cudaStream_t stream) {
  const int blocks = (series + THREADS - 1) / THREADS;
  moving_average_kernel<<<blocks, THREADS, 0, stream>>>(out, in, series, steps);
}
