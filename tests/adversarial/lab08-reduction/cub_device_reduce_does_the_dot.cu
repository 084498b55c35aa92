// attack: launch_dot is driver.cu's run_library, copied: CUB's DeviceReduce::TransformReduce over the products (the
// attack: library the grader times beside the kernels); dot_tree_kernel and dot_shuffle_kernel are kept, never
// attack: launched, for the PTX checks: right at every size and, timed on an H100 outside the grader, 96 % of CUB's
// attack: speed at 2^25 (2.8 TB/s)
// expect: build fails
// message: cub/cub.cuh (CUB)
// message: thrust/iterator/counting_iterator.h (Thrust)
// message: your own kernels do the lab's work
#include <cub/cub.cuh>
#include <cuda/std/functional>
#include <thrust/iterator/counting_iterator.h>

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

// Element i of the sequence CUB reduces.
struct Product {
  const float* a;
  const float* b;
  __device__ float operator()(int i) const { return a[i] * b[i]; }
};

// CUB writes its sum into a float of its own, which one atomicAdd then adds to *result.
__global__ void add_into(float* result, const float* sum) { atomicAdd(result, *sum); }

}  // namespace

void launch_dot(float* result, const float* a, const float* b, int n, cudaStream_t stream) {
  // Scratch sized for the largest n seen, allocated once: a timed call only launches.
  static void* scratch = nullptr;
  static size_t scratch_bytes = 0;
  static float* sum = nullptr;
  if (!sum) cudaMalloc(&sum, sizeof(float));
  size_t needed = 0;
  cub::DeviceReduce::TransformReduce(nullptr, needed, thrust::counting_iterator<int>(0), sum, n,
                                     cuda::std::plus<float>{}, Product{a, b}, 0.0f, stream);
  if (needed > scratch_bytes) {
    cudaFree(scratch);
    cudaMalloc(&scratch, needed);
    scratch_bytes = needed;
  }
  cub::DeviceReduce::TransformReduce(scratch, scratch_bytes, thrust::counting_iterator<int>(0), sum, n,
                                     cuda::std::plus<float>{}, Product{a, b}, 0.0f, stream);
  add_into<<<1, 1, 0, stream>>>(result, sum);
}
