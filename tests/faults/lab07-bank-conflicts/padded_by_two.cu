// fault: the tile is padded by two floats per row instead of one: a column's 32 words then fall into 16 banks, two per bank (a 2-way conflict)
// expect: step 3 fails: ncu (bank_conflicts)
// message: transpose_kernel at 1024x1024: 1.0 bank conflicts per shared-memory request (loads), needs at most 0.050
// lab07: bank conflicts. This is the file you edit.
#include "lab.cuh"

// Each block covers one TILE_DIM x TILE_DIM tile of `in` with TILE_DIM x BLOCK_ROWS
// threads; each thread handles TILE_DIM / BLOCK_ROWS elements, BLOCK_ROWS rows apart.
__global__ void transpose_kernel(float* out, const float* in, int rows, int cols) {
  // Extra columns shift each row by some banks, so a column's words spread out.
  __shared__ float tile[TILE_DIM][TILE_DIM + 2];
  // Load: consecutive threadIdx.x read consecutive columns of one row of `in`.
  int col = blockIdx.x * TILE_DIM + threadIdx.x;
  int row = blockIdx.y * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
    if (row + j < rows && col < cols)
      tile[threadIdx.y + j][threadIdx.x] = in[static_cast<size_t>(row + j) * cols + col];
  __syncthreads();  // the whole tile must be loaded before anyone reads a column of it
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
