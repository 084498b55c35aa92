// fault: the __syncthreads() sits before the load loop instead of after it: the PTX has its bar.sync, but nothing orders the tile's stores before other threads' reads
// expect: step 1 fails: sanitizer (race)
// message: race on shared memory between a
// message: in transpose_kernel (no __syncthreads() between them)
// lab07: bank conflicts. This is the file you edit.
#include "lab.cuh"

// Each block covers one TILE_DIM x TILE_DIM tile of `in` with TILE_DIM x BLOCK_ROWS
// threads; each thread handles TILE_DIM / BLOCK_ROWS elements, BLOCK_ROWS rows apart.
__global__ void transpose_kernel(float* out, const float* in, int rows, int cols) {
  // One extra column shifts each row by one bank, so tile[0..31][c] are in 32 different banks.
  __shared__ float tile[TILE_DIM][TILE_DIM + 1];
  // Load: consecutive threadIdx.x read consecutive columns of one row of `in`.
  int col = blockIdx.x * TILE_DIM + threadIdx.x;
  int row = blockIdx.y * TILE_DIM + threadIdx.y;
  __syncthreads();  // everyone ready before the tile is filled
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
    if (row + j < rows && col < cols)
      tile[threadIdx.y + j][threadIdx.x] = in[static_cast<size_t>(row + j) * cols + col];
  // Store: the tile goes to the mirrored block position; consecutive threadIdx.x
  // write consecutive columns of one row of `out`, reading a column of `tile`.
  col = blockIdx.y * TILE_DIM + threadIdx.x;
  row = blockIdx.x * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
    if (row + j < cols && col < rows)
      out[static_cast<size_t>(row + j) * rows + col] = tile[threadIdx.x][threadIdx.y + j];
}

void launch_transpose(float* out, const float* in, int rows, int cols, cudaStream_t stream) {
  const dim3 block(TILE_DIM, BLOCK_ROWS);
  const dim3 grid((cols + TILE_DIM - 1) / TILE_DIM, (rows + TILE_DIM - 1) / TILE_DIM);
  transpose_kernel<<<grid, block, 0, stream>>>(out, in, rows, cols);
}
