// lab07's "Count the conflicts yourself", measured: one 256 x 256 transpose (64 tiles of
// 32 x 32, blocks of 32 x 8 threads) through an unpadded [32][32] tile and through a padded
// [32][33] one, each its own kernel, so that ncu counts each apart.
// Build and profile: nvcc -arch=sm_90 -o wavefronts transpose_tile_wavefronts.cu && ncu --metrics ... ./wavefronts
// probe-ncu-metrics: l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,sm__sass_inst_executed_op_shared_ld.sum,sm__sass_inst_executed_op_shared_st.sum
// probe-nvcc-flags: -O3 -arch=sm_90
#include <cstdio>
#include <cuda_runtime.h>

constexpr int kTile = 32, kRows = 8, kN = 256;

template <int kPad>
__global__ void transpose(float* out, const float* in, int n) {
  __shared__ float tile[kTile][kTile + kPad];
  int x = blockIdx.x * kTile + threadIdx.x, y = blockIdx.y * kTile + threadIdx.y;
  for (int j = 0; j < kTile; j += kRows) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * n + x];
  __syncthreads();
  x = blockIdx.y * kTile + threadIdx.x;
  y = blockIdx.x * kTile + threadIdx.y;
  for (int j = 0; j < kTile; j += kRows) out[(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}

int main() {
  float *in, *out;
  if (cudaMalloc(&in, kN * kN * sizeof(float)) != cudaSuccess || cudaMalloc(&out, kN * kN * sizeof(float)) != cudaSuccess)
    return 1;
  cudaMemset(in, 0, kN * kN * sizeof(float));
  const dim3 grid(kN / kTile, kN / kTile), block(kTile, kRows);
  transpose<0><<<grid, block>>>(out, in, kN);  // unpadded: the first kernel in ncu's list
  transpose<1><<<grid, block>>>(out, in, kN);  // padded: the second
  const cudaError_t e = cudaDeviceSynchronize();
  std::printf("unpadded then padded transpose of %d x %d: %s\n", kN, kN, cudaGetErrorString(e));
  return e == cudaSuccess ? 0 : 1;
}
