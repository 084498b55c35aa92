// lab11: asynchronous copies into shared memory. This is the file you edit.
#include <cuda/barrier>     // cuda::barrier, cuda::memcpy_async: bulk copies that complete on an mbarrier (step 3)
#include <cuda_pipeline.h>  // __pipeline_memcpy_async, __pipeline_commit, __pipeline_wait_prior (steps 1 and 2)

#include "lab.cuh"

// Step 1. A block of TILE x TILE threads computes one TILE x TILE block of C,
// one element per thread: threadIdx.x walks along a row of C, threadIdx.y down
// a column.
__global__ void matmul_async(float* C, const float* A, const float* B, int M, int N, int K) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  const int ty = threadIdx.y, tx = threadIdx.x;
  const int row = blockIdx.y * TILE + ty;
  const int col = blockIdx.x * TILE + tx;
  float sum = 0.0f;
  // No early return: threads outside C still copy their part of the tiles and
  // must reach every __syncthreads().
  for (int k0 = 0; k0 < K; k0 += TILE) {
    // Each element goes from global memory straight into the tile, no register
    // in between. Outside A or B the copy reads nothing: its last argument says
    // how many of its bytes to fill with zeros instead, here all four.
    const bool a_in = row < M && k0 + tx < K;
    const bool b_in = k0 + ty < K && col < N;
    __pipeline_memcpy_async(&As[ty][tx], a_in ? A + static_cast<size_t>(row) * K + k0 + tx : A, sizeof(float),
                            a_in ? 0 : sizeof(float));
    __pipeline_memcpy_async(&Bs[ty][tx], b_in ? B + static_cast<size_t>(k0 + ty) * N + col : B, sizeof(float),
                            b_in ? 0 : sizeof(float));
    __pipeline_commit();
    __pipeline_wait_prior(0);  // this thread's copies have landed...
    __syncthreads();           // ...and so have everyone else's
    for (int k = 0; k < TILE; ++k) sum += As[ty][k] * Bs[k][tx];
    __syncthreads();  // everyone done reading before the next strip's copies land
  }
  if (row < M && col < N) C[static_cast<size_t>(row) * N + col] = sum;
}

// Step 2. The same block and tiles, with two buffers for each: while the
// block computes on one strip, the copies of the next one are in flight.
__global__ void matmul_pipelined(float* C, const float* A, const float* B, int M, int N, int K) {
  constexpr int STAGES = 2;
  __shared__ float As[STAGES][TILE][TILE];
  __shared__ float Bs[STAGES][TILE][TILE];
  const int ty = threadIdx.y, tx = threadIdx.x;
  const int row = blockIdx.y * TILE + ty;
  const int col = blockIdx.x * TILE + tx;
  // This thread's two copies of strip s, into buffer s % STAGES (zeros outside A and B).
  const auto copy_strip = [&](int s) {
    const int k0 = s * TILE, b = s % STAGES;
    const bool a_in = row < M && k0 + tx < K;
    const bool b_in = k0 + ty < K && col < N;
    __pipeline_memcpy_async(&As[b][ty][tx], a_in ? A + static_cast<size_t>(row) * K + k0 + tx : A, sizeof(float),
                            a_in ? 0 : sizeof(float));
    __pipeline_memcpy_async(&Bs[b][ty][tx], b_in ? B + static_cast<size_t>(k0 + ty) * N + col : B, sizeof(float),
                            b_in ? 0 : sizeof(float));
  };
  const int strips = (K + TILE - 1) / TILE;
  float sum = 0.0f;
  copy_strip(0);
  __pipeline_commit();
  for (int s = 0; s < strips; ++s) {
    // Strip s + 1 is on its way into the other buffer while this one is used.
    if (s + 1 < strips) copy_strip(s + 1);
    // One group per strip, empty past the last one, so that "all but the
    // newest group" is always "every strip up to s".
    __pipeline_commit();
    __pipeline_wait_prior(1);
    __syncthreads();  // every thread's copies of strip s have landed
    const int b = s % STAGES;
    for (int k = 0; k < TILE; ++k) sum += As[b][ty][k] * Bs[b][k][tx];
    __syncthreads();  // nobody reads buffer b any more: the next iteration may copy into it
  }
  if (row < M && col < N) C[static_cast<size_t>(row) * N + col] = sum;
}

// Step 3 (compute capability 9.0 and later). The same block and tiles; each
// row of a tile arrives by one bulk copy, and the block waits for all of them
// on one barrier that counts the bytes still to come. K and N are multiples
// of 4 in this step's cases (lab.cuh).
__global__ void matmul_bulk(float* C, const float* A, const float* B, int M, int N, int K) {
  // Rows of a tile are the bulk copies' destinations: 16-byte aligned.
  __shared__ alignas(16) float As[TILE][TILE];
  __shared__ alignas(16) float Bs[TILE][TILE];
  // The barrier every strip's copies complete on. Shared memory is never
  // constructed (hence the pragma: no constructor runs); init() sets it up.
#pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ cuda::barrier<cuda::thread_scope_block> copied;
  const int ty = threadIdx.y, tx = threadIdx.x;
  const int t = ty * TILE + tx;
  const int row0 = blockIdx.y * TILE, col0 = blockIdx.x * TILE;
  const int row = row0 + ty, col = col0 + tx;
  if (t == 0) {
    init(&copied, TILE * TILE);  // each thread arrives once per strip
    // The copies complete on the barrier from outside the threads (the async
    // proxy): the fence makes its initialisation visible there.
    NV_IF_TARGET(NV_PROVIDES_SM_90, (cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);));
  }
  __syncthreads();
  float sum = 0.0f;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    // Warp 0 asks for the rows of A's tile, warp 1 for those of B's: one bulk
    // copy per row, of the part of it inside the matrix. With K and N
    // multiples of 4, every such part starts and ends on a 16-byte boundary.
    if (t < TILE && row0 + t < M) {
      const int floats = min(TILE, K - k0);
      cuda::memcpy_async(&As[t][0], A + static_cast<size_t>(row0 + t) * K + k0,
                         cuda::aligned_size_t<16>(floats * sizeof(float)), copied);
    } else if (t >= TILE && t < 2 * TILE && k0 + t - TILE < K) {
      const int floats = min(TILE, N - col0);
      cuda::memcpy_async(&Bs[t - TILE][0], B + static_cast<size_t>(k0 + t - TILE) * N + col0,
                         cuda::aligned_size_t<16>(floats * sizeof(float)), copied);
    }
    // No copy writes the tile outside A and B: each element's own thread puts
    // a zero there, which adds nothing.
    if (row >= M || k0 + tx >= K) As[ty][tx] = 0.0f;
    if (k0 + ty >= K || col >= N) Bs[ty][tx] = 0.0f;
    // Returns once every thread has arrived (its zeros written) and every
    // byte the copies announced has landed.
    copied.arrive_and_wait();
    for (int k = 0; k < TILE; ++k) sum += As[ty][k] * Bs[k][tx];
    __syncthreads();  // everyone done reading before the next strip's copies land
  }
  if (row < M && col < N) C[static_cast<size_t>(row) * N + col] = sum;
}

// The launches stay as they are: TILE x TILE threads, one block per TILE x
// TILE block of C, in every step.
namespace {
dim3 blocks_for(int M, int N) { return dim3((N + TILE - 1) / TILE, (M + TILE - 1) / TILE); }
}  // namespace

void launch_matmul_async(float* C, const float* A, const float* B, int M, int N, int K, cudaStream_t stream) {
  matmul_async<<<blocks_for(M, N), dim3(TILE, TILE), 0, stream>>>(C, A, B, M, N, K);
}

void launch_matmul_pipelined(float* C, const float* A, const float* B, int M, int N, int K, cudaStream_t stream) {
  matmul_pipelined<<<blocks_for(M, N), dim3(TILE, TILE), 0, stream>>>(C, A, B, M, N, K);
}

void launch_matmul_bulk(float* C, const float* A, const float* B, int M, int N, int K, cudaStream_t stream) {
  matmul_bulk<<<blocks_for(M, N), dim3(TILE, TILE), 0, stream>>>(C, A, B, M, N, K);
}
