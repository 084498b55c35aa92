// attack: the named dot_shuffle_kernel does its block's sum with CUB's BlockReduce (whose PTX holds the shfl the
// attack: check looks for), so the library, not the student, writes the step's reduction, inside the kernel the
// attack: grader profiles: right at every size and, timed on an H100 outside the grader, as fast as CUB (104 %)
// attack: at 2^25
// expect: build fails
// message: cub/block/block_reduce.cuh (CUB)
// message: your own kernels do the lab's work
#include <cub/block/block_reduce.cuh>

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

// Step 3: a grid-stride loop over float4 steps; the block's sum is CUB's.
__global__ void dot_shuffle_kernel(float* result, const float* a, const float* b, int n) {
  float sum = 0.0f;
  const int first = blockIdx.x * blockDim.x + threadIdx.x;
  const int stride = gridDim.x * blockDim.x;
  const float4* a4 = reinterpret_cast<const float4*>(a);
  const float4* b4 = reinterpret_cast<const float4*>(b);
  for (int i = first; i < n / 4; i += stride) {
    const float4 x = a4[i], y = b4[i];
    sum += x.x * y.x + x.y * y.y + x.z * y.z + x.w * y.w;
  }
  for (int i = 4 * (n / 4) + first; i < n; i += stride) sum += a[i] * b[i];
  using BlockReduce = cub::BlockReduce<float, BLOCK_SIZE, cub::BLOCK_REDUCE_WARP_REDUCTIONS>;
  __shared__ typename BlockReduce::TempStorage scratch;
  sum = BlockReduce(scratch).Sum(sum);
  if (threadIdx.x == 0) atomicAdd(result, sum);
}

void launch_dot(float* result, const float* a, const float* b, int n, cudaStream_t stream) {
  // Exactly one wave: every SM full, no block waiting for a second round. The
  // grid-stride loop covers whatever n is, and *result sees one atomic per block.
  int device = 0, sms = 0, blocks_per_sm = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, dot_shuffle_kernel, BLOCK_SIZE, 0);
  const int blocks = sms * blocks_per_sm;
  dot_shuffle_kernel<<<blocks, BLOCK_SIZE, 0, stream>>>(result, a, b, n);
}
