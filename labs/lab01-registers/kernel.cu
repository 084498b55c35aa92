// lab01: registers and local memory. This is the file you edit.
#include "lab.cuh"

// One thread per series walks its samples in time order and keeps the last
// WINDOW of them, so that each sample is read from device memory only once.
__global__ void moving_average_kernel(float* out, const float* in, int series, int steps) {
  const int s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= series) return;
  // TODO(step 1): keep `window` in registers: shift it by one place each step so that every index into it is a compile-time constant (~11 lines)
  // A ring buffer: window[head] is the newest sample, window[(head + WINDOW - k) % WINDOW]
  // the one k steps back. Nothing is moved, only `head`.
  float window[WINDOW] = {};
  int head = 0;
  for (int t = 0; t < steps; ++t) {
    window[head] = in[static_cast<size_t>(t) * series + s];
    float acc = 0.0f;
    for (int k = 0; k < WINDOW; ++k) acc += wma_weight(k) * window[(head + WINDOW - k) % WINDOW];
    out[static_cast<size_t>(t) * series + s] = acc;
    head = (head + 1) % WINDOW;
  }
}

void launch_moving_average(float* out, const float* in, int series, int steps, cudaStream_t stream) {
  const int blocks = (series + THREADS - 1) / THREADS;
  moving_average_kernel<<<blocks, THREADS, 0, stream>>>(out, in, series, steps);
}
