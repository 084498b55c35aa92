// fault: a __nanosleep(10000) left in the time loop (to "let the loads arrive"): right, but each thread sleeps 64 x 10 us
// expect: step 2 fails: speedup
// message: speedup over the baseline at 64x2097152
// message: needs ≥ 1.60×
// lab01: registers and local memory. This is the file you edit.
#include "lab.cuh"

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
    __nanosleep(10000);
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k < WINDOW; ++k) acc += wma_weight(k) * window[k];
    out[static_cast<size_t>(t) * series + s] = acc;
  }
}

void launch_moving_average(float* out, const float* in, int series, int steps, cudaStream_t stream) {
  const int blocks = (series + THREADS - 1) / THREADS;
  moving_average_kernel<<<blocks, THREADS, 0, stream>>>(out, in, series, steps);
}
