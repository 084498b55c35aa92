// attack: launch_dot is thrust::inner_product on the caller's stream (Thrust's CUDA backend is CUB, the library the
// attack: grader times beside the kernels); dot_tree_kernel and dot_shuffle_kernel are kept, never launched, for the
// attack: PTX checks: right at every size and, timed on an H100 outside the grader, 451 times the baseline at 2^25
// attack: (steps 1 and 2; the sum's trip to the host keeps it at 71 % of CUB, short of step 3's 75 %)
// expect: build fails
// message: thrust/execution_policy.h (Thrust)
// message: your own kernels do the lab's work
#include <thrust/execution_policy.h>
#include <thrust/inner_product.h>

// lab08: reduction in shared memory and warps. This is the file you edit.
#include "lab.cuh"

// Steps 1 and 2: one product per thread. The block adds its BLOCK_SIZE products
// in shared memory, so *result sees one atomicAdd per block, not one per element.
__global__ void dot_tree_kernel(float* result, const float* a, const float* b, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  __shared__ float partial[BLOCK_SIZE];
  // Threads past the end add 0 but stay: every thread must reach every __syncthreads().
  partial[threadIdx.x] = i < n ? a[i] * b[i] : 0.0f;
  __syncthreads();
  // Each round adds the upper half onto the lower half: log2(BLOCK_SIZE) rounds.
  for (int half = BLOCK_SIZE / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();  // this round's sums must be written before the next round reads them
  }
  if (threadIdx.x == 0) atomicAdd(result, partial[0]);
}

// The sum of `v` over the 32 lanes of the calling warp, complete in lane 0.
__device__ float warp_sum(float v) {
  // Each lane adds the value `offset` lanes above it, read straight from that lane's register.
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

// Step 3: only as many threads as the GPU holds at once, each walking the vectors
// in float4 steps. Shuffles add within a warp; shared memory carries one value
// per warp across the block.
__global__ void dot_shuffle_kernel(float* result, const float* a, const float* b, int n) {
  float sum = 0.0f;
  const int first = blockIdx.x * blockDim.x + threadIdx.x;
  const int stride = gridDim.x * blockDim.x;
  // 16 bytes per load: a quarter of the load instructions for the same bytes.
  const float4* a4 = reinterpret_cast<const float4*>(a);
  const float4* b4 = reinterpret_cast<const float4*>(b);
  for (int i = first; i < n / 4; i += stride) {
    const float4 x = a4[i], y = b4[i];
    sum += x.x * y.x + x.y * y.y + x.z * y.z + x.w * y.w;
  }
  // The last n % 4 elements do not fill a float4: at most three, one thread each.
  for (int i = 4 * (n / 4) + first; i < n; i += stride) sum += a[i] * b[i];

  // Registers to registers within a warp: no shared memory and no barrier.
  sum = warp_sum(sum);
  // Only one value per warp has to cross to another warp.
  __shared__ float warp_totals[BLOCK_SIZE / 32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warp_totals[warp] = sum;
  __syncthreads();
  if (warp == 0) {
    sum = warp_sum(lane < BLOCK_SIZE / 32 ? warp_totals[lane] : 0.0f);
    if (lane == 0) atomicAdd(result, sum);
  }
}

namespace {

__global__ void add_value(float* result, float sum) { *result += sum; }

}  // namespace

void launch_dot(float* result, const float* a, const float* b, int n, cudaStream_t stream) {
  // The sum comes back to the host; the caller zeroed *result, which one thread then adds it to.
  const float sum = thrust::inner_product(thrust::cuda::par.on(stream), a, a + n, b, 0.0f);
  add_value<<<1, 1, 0, stream>>>(result, sum);
}
