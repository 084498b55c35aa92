// lab06 interface: shared by kernel.cu (yours), the solution and driver.cu.
#pragma once

#include <cuda_runtime.h>

// Every launcher computes C = A * B in fp32, all three row-major:
//   A is M x K, B is K x N, C is M x N.
// Any M, N, K >= 1: none of them needs to be a multiple of a tile.
// Each launcher writes every element of C and nothing outside it, and
// launches on `stream`.

// The static tile: matmul_static runs blocks of TILE x TILE threads, one
// output element per thread (the driver's naive baseline uses the same shape).
constexpr int TILE = 32;

// Step 1: tiles in statically sized __shared__ arrays.
void launch_matmul_static(float* C, const float* A, const float* B, int M, int N, int K,
                          cudaStream_t stream);

// Step 3: the tile size is chosen at run time (tile is 8, 16 or 32): blocks of
// tile x tile threads, tiles in dynamically sized (extern __shared__) memory.
void launch_matmul_dynamic(float* C, const float* A, const float* B, int M, int N, int K,
                           int tile, cudaStream_t stream);

// Step 4: register blocking; the block shape is yours to choose.
void launch_matmul_regblock(float* C, const float* A, const float* B, int M, int N, int K,
                            cudaStream_t stream);
