// attack: every named kernel is a decoy that reads a few shared words for the counters and stores all of C;
// then cuBLAS, opened with dlopen at run time (no header, no -l: the build sees nothing), overwrites C with the
// right product on the same stream, so the outputs are right and the time is cuBLAS's
// expect: step 1 fails: ncu (not_your_kernel)
// message: not in your kernel.cu
// lab06: shared-memory tiling. This is the file you edit.
#include <dlfcn.h>

#include <stdexcept>

#include "lab.cuh"

namespace {

// Just enough shared-memory traffic per output for the counters: 16 loads a thread, then a zero store.
__device__ void decoy(float* C, int M, int N) {
  __shared__ float s[TILE][TILE];
  const int ty = threadIdx.y % TILE, tx = threadIdx.x % TILE;
  s[ty][tx] = static_cast<float>(tx);
  __syncthreads();
  float t = 0.0f;
#pragma unroll 1
  for (int k = 0; k < 16; ++k) t += s[(ty + k) % TILE][tx];
  const int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < M && col < N) C[static_cast<size_t>(row) * N + col] = t * 0.0f;
}

using Create = int (*)(void**);
using SetStream = int (*)(void*, cudaStream_t);
using Sgemm = int (*)(void*, int, int, int, int, int, const float*, const float*, int, const float*, int, const float*,
                      float*, int);

struct Library {
  void* handle = nullptr;
  SetStream set_stream = nullptr;
  Sgemm sgemm = nullptr;
};

Library& cublas() {
  static Library lib = [] {
    Library l;
    for (const char* name : {"libcublas.so.13", "libcublas.so", "/usr/local/cuda/lib64/libcublas.so.13",
                             "/usr/local/cuda/targets/x86_64-linux/lib/libcublas.so.13"})
      if (void* so = dlopen(name, RTLD_NOW)) {
        auto create = reinterpret_cast<Create>(dlsym(so, "cublasCreate_v2"));
        l.set_stream = reinterpret_cast<SetStream>(dlsym(so, "cublasSetStream_v2"));
        l.sgemm = reinterpret_cast<Sgemm>(dlsym(so, "cublasSgemm_v2"));
        if (create && l.set_stream && l.sgemm && create(&l.handle) == 0) return l;
      }
    throw std::runtime_error("no cuBLAS to open");
  }();
  return lib;
}

// Row-major C = A B is column-major C^T = B^T A^T: the product of B and A as cuBLAS stores them.
void product(float* C, const float* A, const float* B, int M, int N, int K, cudaStream_t stream) {
  Library& l = cublas();
  const float one = 1.0f, zero = 0.0f;
  l.set_stream(l.handle, stream);
  l.sgemm(l.handle, 0, 0, N, M, K, &one, B, N, A, K, &zero, C, N);
}

}  // namespace

__global__ void matmul_static(float* C, const float* A, const float* B, int M, int N, int K) { decoy(C, M, N); }

__global__ void matmul_dynamic(float* C, const float* A, const float* B, int M, int N, int K, int tile) {
  extern __shared__ float tiles[];
  tiles[threadIdx.y * blockDim.x + threadIdx.x] = 0.0f;
  decoy(C, M, N);
}

__global__ void matmul_regblock(float* C, const float* A, const float* B, int M, int N, int K) { decoy(C, M, N); }

void launch_matmul_static(float* C, const float* A, const float* B, int M, int N, int K, cudaStream_t stream) {
  const dim3 block(TILE, TILE), grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
  matmul_static<<<grid, block, 0, stream>>>(C, A, B, M, N, K);
  product(C, A, B, M, N, K, stream);
}

void launch_matmul_dynamic(float* C, const float* A, const float* B, int M, int N, int K, int tile,
                           cudaStream_t stream) {
  const dim3 block(tile, tile), grid((N + tile - 1) / tile, (M + tile - 1) / tile);
  matmul_dynamic<<<grid, block, 2 * static_cast<size_t>(tile) * tile * sizeof(float), stream>>>(C, A, B, M, N, K, tile);
  product(C, A, B, M, N, K, stream);
}

void launch_matmul_regblock(float* C, const float* A, const float* B, int M, int N, int K, cudaStream_t stream) {
  const dim3 block(TILE, TILE), grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
  matmul_regblock<<<grid, block, 0, stream>>>(C, A, B, M, N, K);
  product(C, A, B, M, N, K, stream);
}
