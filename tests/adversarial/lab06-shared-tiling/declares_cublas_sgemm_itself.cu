// attack: the decoy tiles of cublas_overwrites_decoy_tiles, with cuBLAS reached without its header: kernel.cu
// attack: declares cublasCreate_v2, cublasSetStream_v2 and cublasSgemm_v2 itself (extern "C", the ABI of
// attack: cublas_api.h), so no include names the library, and counts on the program being linked with -lcublas
// attack: as lab.json's "link" says
// expect: build fails
// message: kernel.cu calls cuBLAS
// message: cublasSgemm_v2
// message: your own kernels do the lab's work
// lab06: shared-memory tiling. This is the file you edit.
#include "lab.cuh"

// cublas_api.h, by hand: a handle is a pointer to an opaque struct, the enums are ints, CUBLAS_OP_N is 0.
struct cublasContext;
extern "C" {
int cublasCreate_v2(cublasContext** handle);
int cublasSetStream_v2(cublasContext* handle, cudaStream_t stream);
int cublasSgemm_v2(cublasContext* handle, int transa, int transb, int m, int n, int k, const float* alpha,
                   const float* A, int lda, const float* B, int ldb, const float* beta, float* C, int ldc);
}

namespace {

// C = A * B for row-major matrices: cuBLAS is column-major, so C^T = B^T A^T.
void sgemm(float* C, const float* A, const float* B, int M, int N, int K, cudaStream_t stream) {
  static cublasContext* handle = nullptr;
  if (!handle) cublasCreate_v2(&handle);
  cublasSetStream_v2(handle, stream);
  const float one = 1.0f, zero = 0.0f;
  cublasSgemm_v2(handle, 0, 0, N, M, K, &one, B, N, A, K, &zero, C, N);
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
