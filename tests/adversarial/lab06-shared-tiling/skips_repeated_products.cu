// attack: the register-blocked launcher skips a product whose buffers it has seen before, as if they still held the
// attack: same matrices: on a grader that times one set of buffers it reports ten times cuBLAS
// expect: step 4 fails: speedup (early_reply)
// message: answered before its outputs were written
#include <set>
#include <tuple>

// lab06: shared-memory tiling. This is the file you edit.
#include "lab.cuh"

// Step 1. A block of TILE x TILE threads computes one TILE x TILE block of C,
// one element per thread: threadIdx.x walks along a row of C, threadIdx.y down
// a column.
__global__ void matmul_static(float* C, const float* A, const float* B, int M, int N, int K) {
  // Each block walks the K dimension one TILE-wide strip at a time: every
  // element of a tile is read from global memory once and then used TILE times.
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  const int ty = threadIdx.y, tx = threadIdx.x;
  const int row = blockIdx.y * TILE + ty;
  const int col = blockIdx.x * TILE + tx;
  float sum = 0.0f;
  // No early return: threads outside C still load their part of the tiles and
  // must reach every __syncthreads(). Outside A or B they load zeros, which add nothing.
  for (int k0 = 0; k0 < K; k0 += TILE) {
    As[ty][tx] = (row < M && k0 + tx < K) ? A[static_cast<size_t>(row) * K + k0 + tx] : 0.0f;
    Bs[ty][tx] = (k0 + ty < K && col < N) ? B[static_cast<size_t>(k0 + ty) * N + col] : 0.0f;
    __syncthreads();  // both tiles complete before anyone reads them
    for (int k = 0; k < TILE; ++k) sum += As[ty][k] * Bs[k][tx];
    __syncthreads();  // everyone done reading before the next strip overwrites them
  }
  if (row < M && col < N) C[static_cast<size_t>(row) * N + col] = sum;
}

// Step 3. The same algorithm with the tile size known only at run time:
// blocks of tile x tile threads.
__global__ void matmul_dynamic(float* C, const float* A, const float* B, int M, int N, int K, int tile) {
  // One allocation, sized by the launch: As is its first tile * tile floats, Bs the next.
  extern __shared__ float tiles[];
  float* As = tiles;
  float* Bs = tiles + tile * tile;
  const int ty = threadIdx.y, tx = threadIdx.x;
  const int row = blockIdx.y * tile + ty;
  const int col = blockIdx.x * tile + tx;
  float sum = 0.0f;
  for (int k0 = 0; k0 < K; k0 += tile) {
    As[ty * tile + tx] = (row < M && k0 + tx < K) ? A[static_cast<size_t>(row) * K + k0 + tx] : 0.0f;
    Bs[ty * tile + tx] = (k0 + ty < K && col < N) ? B[static_cast<size_t>(k0 + ty) * N + col] : 0.0f;
    __syncthreads();
    // The trip count is a run-time value now, so this loop is not fully unrolled.
    for (int k = 0; k < tile; ++k) sum += As[ty * tile + k] * Bs[k * tile + tx];
    __syncthreads();
  }
  if (row < M && col < N) C[static_cast<size_t>(row) * N + col] = sum;
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
  static_assert(TM % 4 == 0 && TN % 4 == 0, "fragments are read as float4");
  // As holds the A tile transposed (k-major), so a thread's rows lie side by side
  // for float4 reads; 4 floats of padding per row spread the transposing stores
  // over all 32 banks and keep every row 16-byte aligned.
  __shared__ __align__(16) float As[BK][BM + 4];
  __shared__ __align__(16) float Bs[BK][BN];
  // Thread (ty, tx) owns TM / 4 runs of 4 rows, (BM / TM) * 4 rows apart, and
  // likewise for columns: a warp's float4 reads then cover whole 256-byte runs.
  const int ty = threadIdx.x / (BN / TN), tx = threadIdx.x % (BN / TN);
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  float acc[TM][TN] = {};
  for (int k0 = 0; k0 < K; k0 += BK) {
    // A warp loads 4 rows x BK consecutive floats of A (a 32-byte sector each)
    // and 32 consecutive floats of one row of B; zeros outside the matrices.
    #pragma unroll
    for (int p = 0; p < BM * BK / REGBLOCK_THREADS; ++p) {
      const int i = threadIdx.x + p * REGBLOCK_THREADS;
      const int r = row0 + i / BK, k = k0 + i % BK;
      As[i % BK][i / BK] = (r < M && k < K) ? A[static_cast<size_t>(r) * K + k] : 0.0f;
    }
    #pragma unroll
    for (int p = 0; p < BK * BN / REGBLOCK_THREADS; ++p) {
      const int i = threadIdx.x + p * REGBLOCK_THREADS;
      const int k = k0 + i / BN, c = col0 + i % BN;
      Bs[i / BN][i % BN] = (k < K && c < N) ? B[static_cast<size_t>(k) * N + c] : 0.0f;
    }
    __syncthreads();
    // Per k: TM + TN floats from shared memory feed TM * TN multiply-adds.
    #pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[TM], b[TN];
      #pragma unroll
      for (int s = 0; s < TM / 4; ++s) {
        const float4 v = *reinterpret_cast<const float4*>(&As[k][s * (BM / TM) * 4 + ty * 4]);
        a[4 * s] = v.x, a[4 * s + 1] = v.y, a[4 * s + 2] = v.z, a[4 * s + 3] = v.w;
      }
      #pragma unroll
      for (int s = 0; s < TN / 4; ++s) {
        const float4 v = *reinterpret_cast<const float4*>(&Bs[k][s * (BN / TN) * 4 + tx * 4]);
        b[4 * s] = v.x, b[4 * s + 1] = v.y, b[4 * s + 2] = v.z, b[4 * s + 3] = v.w;
      }
      #pragma unroll
      for (int i = 0; i < TM; ++i) {
        #pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
      }
    }
    __syncthreads();
  }
  #pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int r = row0 + (i / 4) * (BM / TM) * 4 + ty * 4 + i % 4;
    #pragma unroll
    for (int j = 0; j < TN; ++j) {
      const int c = col0 + (j / 4) * (BN / TN) * 4 + tx * 4 + j % 4;
      if (r < M && c < N) C[static_cast<size_t>(r) * N + c] = acc[i][j];
    }
  }
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
  // The size is known only now, so the launch carries it: two tile x tile tiles of float.
  const size_t shared_bytes = 2 * static_cast<size_t>(tile) * tile * sizeof(float);
  matmul_dynamic<<<grid, block, shared_bytes, stream>>>(C, A, B, M, N, K, tile);
}

void launch_matmul_regblock(float* C, const float* A, const float* B, int M, int N, int K,
                            cudaStream_t stream) {
  // A product it has computed into these buffers before is "still there".
  static std::set<std::tuple<float*, const float*, const float*>> done;
  if (!done.insert({C, A, B}).second) return;
  const dim3 block(REGBLOCK_THREADS);
  const dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
  matmul_regblock<<<grid, block, 0, stream>>>(C, A, B, M, N, K);
}
