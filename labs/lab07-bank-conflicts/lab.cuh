// lab07 interface: shared by kernel.cu (yours), the solution and driver.cu.
#pragma once

#include <cuda_runtime.h>

// A block transposes one TILE_DIM x TILE_DIM tile using TILE_DIM x BLOCK_ROWS
// threads, so each thread moves TILE_DIM / BLOCK_ROWS = 4 elements.
constexpr int TILE_DIM = 32;
constexpr int BLOCK_ROWS = 8;

// out (cols x rows, row-major) = transpose of in (rows x cols, row-major).
// Any rows, cols >= 1: neither needs to be a multiple of TILE_DIM.
void launch_transpose(float* out, const float* in, int rows, int cols, cudaStream_t stream);
