// fault: the launcher makes blocks of 8 * THREADS = 2048 threads, twice the 1024 a block may have: the launch itself fails
// expect: step 1 fails: correct (cuda_error)
// message: your program hit cudaErrorInvalidValue (invalid argument) in your kernel (case 1x1)
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
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k < WINDOW; ++k) acc += wma_weight(k) * window[k];
    out[static_cast<size_t>(t) * series + s] = acc;
  }
}

void launch_moving_average(float* out, const float* in, int series, int steps, cudaStream_t stream) {
  // Fewer, bigger blocks: eight times THREADS series each.
  const int per_block = 8 * THREADS;
  const int blocks = (series + per_block - 1) / per_block;
  moving_average_kernel<<<blocks, per_block, 0, stream>>>(out, in, series, steps);
}
