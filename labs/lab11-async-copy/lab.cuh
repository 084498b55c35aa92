// lab11 interface: shared by kernel.cu (yours), the solution and driver.cu.
#pragma once

#include <cuda_runtime.h>

// Every launcher computes C = A * B in fp32, all three row-major:
//   A is M x K, B is K x N, C is M x N.
// Each launcher writes every element of C and nothing outside it, and
// launches on `stream`.

// The tile: every kernel of this lab runs blocks of TILE x TILE threads, one
// output element per thread, and walks K one TILE-wide strip at a time (the
// grader's baseline uses the same shape, so only how the tiles arrive differs).
constexpr int TILE = 32;

// Step 1: the tiles reach shared memory by asynchronous copies (cp.async).
// Any M, N, K >= 1: none of them needs to be a multiple of TILE.
void launch_matmul_async(float* C, const float* A, const float* B, int M, int N, int K, cudaStream_t stream);

// Step 2: two (or more) tile buffers; the copies of the next strip are in
// flight while the block computes on this one. Any M, N, K >= 1.
void launch_matmul_pipelined(float* C, const float* A, const float* B, int M, int N, int K, cudaStream_t stream);

// Step 3 (compute capability 9.0 and later): each tile row arrives by one bulk
// copy (cp.async.bulk) that completes on an mbarrier. A bulk copy needs a
// global address, a shared address and a size that are all multiples of 16
// bytes, so this step's cases keep K and N multiples of 4: every row of A and
// of B then starts 16 bytes aligned, and so does every strip of it. M is any
// size >= 1, and the last strip and the last columns of a block can still be
// partial (300 x 200 x 500, 36 x 100 x 68).
void launch_matmul_bulk(float* C, const float* A, const float* B, int M, int N, int K, cudaStream_t stream);
