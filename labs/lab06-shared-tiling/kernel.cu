// lab06: shared-memory tiling. This is the file you edit.
#include "lab.cuh"

// Step 1. A block of TILE x TILE threads computes one TILE x TILE block of C,
// one element per thread: threadIdx.x walks along a row of C, threadIdx.y down
// a column.
__global__ void matmul_static(float* C, const float* A, const float* B, int M, int N, int K) {
  // TODO(step 1): stage TILE x TILE tiles of A and B in __shared__ arrays As and Bs, with a __syncthreads() after loading and after using them (~16 lines)
  const int row = blockIdx.y * TILE + threadIdx.y;
  const int col = blockIdx.x * TILE + threadIdx.x;
  if (row >= M || col >= N) return;
  // Each thread reads a whole row of A and column of B from global memory,
  // although the block's other threads need the same values.
  float sum = 0.0f;
  for (int k = 0; k < K; ++k) sum += A[static_cast<size_t>(row) * K + k] * B[static_cast<size_t>(k) * N + col];
  C[static_cast<size_t>(row) * N + col] = sum;
}

// Step 3. The same algorithm with the tile size known only at run time:
// blocks of tile x tile threads.
__global__ void matmul_dynamic(float* C, const float* A, const float* B, int M, int N, int K, int tile) {
  // TODO(step 3): carve the tiles As and Bs out of one extern __shared__ float array and run the step 1 loop with `tile` in place of TILE (~18 lines)
  const int row = blockIdx.y * tile + threadIdx.y;
  const int col = blockIdx.x * tile + threadIdx.x;
  if (row >= M || col >= N) return;
  float sum = 0.0f;
  for (int k = 0; k < K; ++k) sum += A[static_cast<size_t>(row) * K + k] * B[static_cast<size_t>(k) * N + col];
  C[static_cast<size_t>(row) * N + col] = sum;
}

// Step 4. A block computes a BM x BN block of C with REGBLOCK_THREADS threads,
// each holding TM x TN outputs in registers, and stages BK columns of A and BK
// rows of B in shared memory per iteration. This shape works well on an H100;
// other shapes are yours to try.
constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8;
constexpr int REGBLOCK_THREADS = (BM / TM) * (BN / TN);
static_assert(BM * BK % REGBLOCK_THREADS == 0 && BK * BN % REGBLOCK_THREADS == 0,
              "the threads of a block share the loading of each tile evenly");

// At most REGBLOCK_THREADS threads per block and at least two blocks per SM:
// ptxas then keeps each thread within 128 registers, so two blocks fit.
__global__ void __launch_bounds__(REGBLOCK_THREADS, 2)
    matmul_regblock(float* C, const float* A, const float* B, int M, int N, int K) {
  // TODO(step 4): stage a BM x BK tile of A and a BK x BN tile of B in shared memory and accumulate a TM x TN block of C per thread in registers, acc (~45 lines)
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= M || col >= N) return;
  float sum = 0.0f;
  for (int k = 0; k < K; ++k) sum += A[static_cast<size_t>(row) * K + k] * B[static_cast<size_t>(k) * N + col];
  C[static_cast<size_t>(row) * N + col] = sum;
}

void launch_matmul_static(float* C, const float* A, const float* B, int M, int N, int K,
                          cudaStream_t stream) {
  const dim3 block(TILE, TILE);
  const dim3 grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
  matmul_static<<<grid, block, 0, stream>>>(C, A, B, M, N, K);
}

void launch_matmul_dynamic(float* C, const float* A, const float* B, int M, int N, int K,
                           int tile, cudaStream_t stream) {
  const dim3 block(tile, tile);
  const dim3 grid((N + tile - 1) / tile, (M + tile - 1) / tile);
  // TODO(step 3): pass the bytes of both tiles, shared_bytes, as the launch's third argument (~2 lines)
  matmul_dynamic<<<grid, block, 0, stream>>>(C, A, B, M, N, K, tile);
}

void launch_matmul_regblock(float* C, const float* A, const float* B, int M, int N, int K,
                            cudaStream_t stream) {
  // TODO(step 4): launch REGBLOCK_THREADS threads per block and one block per BM x BN block of C (~3 lines)
  const dim3 block(16, 16);
  const dim3 grid((N + 15) / 16, (M + 15) / 16);
  matmul_regblock<<<grid, block, 0, stream>>>(C, A, B, M, N, K);
}
