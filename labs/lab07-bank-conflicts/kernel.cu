// lab07: bank conflicts. This is the file you edit.
#include "lab.cuh"

// Each block covers one TILE_DIM x TILE_DIM tile of `in` with TILE_DIM x BLOCK_ROWS
// threads; each thread handles TILE_DIM / BLOCK_ROWS elements, BLOCK_ROWS rows apart.
__global__ void transpose_kernel(float* out, const float* in, int rows, int cols) {
  // TODO(step 3): pad `tile` by one column so that reading a column touches 32 different banks (~1 line)
  // TODO(step 1): read the tile into a __shared__ float tile[TILE_DIM][TILE_DIM] with coalesced loads, __syncthreads(), then write it transposed with coalesced stores (~12 lines)
  const int col = blockIdx.x * TILE_DIM + threadIdx.x;
  const int row = blockIdx.y * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
    // Reads along a row (coalesced) but writes down a column: 32 threads of a
    // warp store to 32 different rows of `out`, one sector each.
    if (row + j < rows && col < cols)
      out[static_cast<size_t>(col) * rows + (row + j)] = in[static_cast<size_t>(row + j) * cols + col];
  }
}

void launch_transpose(float* out, const float* in, int rows, int cols, cudaStream_t stream) {
  const dim3 block(TILE_DIM, BLOCK_ROWS);
  const dim3 grid((cols + TILE_DIM - 1) / TILE_DIM, (rows + TILE_DIM - 1) / TILE_DIM);
  transpose_kernel<<<grid, block, 0, stream>>>(out, in, rows, cols);
}
