// attack: every named kernel is a cheap decoy that stages one strip of A and B in shared memory and stores a partial
// attack: product into all of C (the PTX, shared-load and stored-bytes checks see tiling), then cublasSgemm, from the
// attack: cuBLAS that lab.json links for the library comparison, overwrites C with the right product: right at every
// attack: size and, timed on an H100 outside the grader at 2048, 7.1 times the naive kernel and 93 % of cuBLAS
// expect: build fails
// message: cublas_v2.h (cuBLAS)
// message: your own kernels do the lab's work
#include <cublas_v2.h>

// lab06: shared-memory tiling. This is the file you edit.
#include "lab.cuh"

namespace {

// C = A * B for row-major matrices: cuBLAS is column-major, so C^T = B^T A^T.
void sgemm(float* C, const float* A, const float* B, int M, int N, int K, cudaStream_t stream) {
  static cublasHandle_t handle = nullptr;
  if (!handle) cublasCreate(&handle);
  cublasSetStream(handle, stream);
  const float one = 1.0f, zero = 0.0f;
  cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, B, N, A, K, &zero, C, N);
}

}  // namespace

// One strip of K only, and every element of C stored once: what the checks count.
__global__ void matmul_static(float* C, const float* A, const float* B, int M, int N, int K) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  const int ty = threadIdx.y, tx = threadIdx.x;
  const int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
  As[ty][tx] = (row < M && tx < K) ? A[static_cast<size_t>(row) * K + tx] : 0.0f;
  Bs[ty][tx] = (ty < K && col < N) ? B[static_cast<size_t>(ty) * N + col] : 0.0f;
  __syncthreads();
  float sum = 0.0f;
  for (int k = 0; k < TILE; ++k) sum += As[ty][k] * Bs[k][tx];
  if (row < M && col < N) C[static_cast<size_t>(row) * N + col] = sum;
}

__global__ void matmul_dynamic(float* C, const float* A, const float* B, int M, int N, int K, int tile) {
  extern __shared__ float tiles[];
  float* As = tiles;
  float* Bs = tiles + tile * tile;
  const int ty = threadIdx.y, tx = threadIdx.x;
  const int row = blockIdx.y * tile + ty, col = blockIdx.x * tile + tx;
  As[ty * tile + tx] = (row < M && tx < K) ? A[static_cast<size_t>(row) * K + tx] : 0.0f;
  Bs[ty * tile + tx] = (ty < K && col < N) ? B[static_cast<size_t>(ty) * N + col] : 0.0f;
  __syncthreads();
  float sum = 0.0f;
  for (int k = 0; k < tile; ++k) sum += As[ty * tile + k] * Bs[k * tile + tx];
  if (row < M && col < N) C[static_cast<size_t>(row) * N + col] = sum;
}

// Four outputs per thread, the first strip only.
constexpr int RB = 64;
__global__ void __launch_bounds__(256) matmul_regblock(float* C, const float* A, const float* B, int M, int N, int K) {
  __shared__ float As[RB][TILE];
  __shared__ float Bs[TILE][RB];
  const int t = threadIdx.x, row0 = blockIdx.y * RB, col0 = blockIdx.x * RB;
  for (int i = t; i < RB * TILE; i += blockDim.x) {
    const int r = i / TILE, k = i % TILE;
    As[r][k] = (row0 + r < M && k < K) ? A[static_cast<size_t>(row0 + r) * K + k] : 0.0f;
    const int kb = i / RB, c = i % RB;
    Bs[kb][c] = (kb < K && col0 + c < N) ? B[static_cast<size_t>(kb) * N + col0 + c] : 0.0f;
  }
  __syncthreads();
  const int r = t / 16, c = (t % 16) * 4;
  for (int rr = r; rr < RB; rr += 16) {
    float acc[4] = {};
    for (int k = 0; k < TILE; ++k)
      for (int j = 0; j < 4; ++j) acc[j] += As[rr][k] * Bs[k][c + j];
    for (int j = 0; j < 4; ++j)
      if (row0 + rr < M && col0 + c + j < N) C[static_cast<size_t>(row0 + rr) * N + col0 + c + j] = acc[j];
  }
}

void launch_matmul_static(float* C, const float* A, const float* B, int M, int N, int K, cudaStream_t stream) {
  const dim3 block(TILE, TILE), grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
  matmul_static<<<grid, block, 0, stream>>>(C, A, B, M, N, K);
  sgemm(C, A, B, M, N, K, stream);
}

void launch_matmul_dynamic(float* C, const float* A, const float* B, int M, int N, int K, int tile,
                           cudaStream_t stream) {
  const dim3 block(tile, tile), grid((N + tile - 1) / tile, (M + tile - 1) / tile);
  matmul_dynamic<<<grid, block, 2 * tile * tile * sizeof(float), stream>>>(C, A, B, M, N, K, tile);
  sgemm(C, A, B, M, N, K, stream);
}

void launch_matmul_regblock(float* C, const float* A, const float* B, int M, int N, int K, cudaStream_t stream) {
  const dim3 grid((N + RB - 1) / RB, (M + RB - 1) / RB);
  matmul_regblock<<<grid, 256, 0, stream>>>(C, A, B, M, N, K);
  sgemm(C, A, B, M, N, K, stream);
}
