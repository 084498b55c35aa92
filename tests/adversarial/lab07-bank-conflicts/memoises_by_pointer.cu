// attack: remembers the buffers it was given and does no work when it sees them again, as if the inputs could not
// attack: have changed: every timed launch gets fresh inputs, its outputs are poisoned before the request and
// attack: sampled right after the reply
// expect: step 2 fails: speedup (early_reply)
// message: answered before its outputs were written
#include <set>
#include <utility>

#include "lab.cuh"

// The padded shared-tile transpose, right for any size.
__global__ void transpose_kernel(float* out, const float* in, int rows, int cols) {
  __shared__ float tile[TILE_DIM][TILE_DIM + 1];
  int col = blockIdx.x * TILE_DIM + threadIdx.x;
  int row = blockIdx.y * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
    if (row + j < rows && col < cols) tile[threadIdx.y + j][threadIdx.x] = in[static_cast<size_t>(row + j) * cols + col];
  __syncthreads();
  col = blockIdx.y * TILE_DIM + threadIdx.x;
  row = blockIdx.x * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
    if (row + j < cols && col < rows) out[static_cast<size_t>(row + j) * rows + col] = tile[threadIdx.x][threadIdx.y + j];
}

static void transpose_right(float* out, const float* in, int rows, int cols, cudaStream_t stream) {
  const dim3 block(TILE_DIM, BLOCK_ROWS);
  const dim3 grid((cols + TILE_DIM - 1) / TILE_DIM, (rows + TILE_DIM - 1) / TILE_DIM);
  transpose_kernel<<<grid, block, 0, stream>>>(out, in, rows, cols);
}

void launch_transpose(float* out, const float* in, int rows, int cols, cudaStream_t stream) {
  static std::set<std::pair<const void*, const void*>> seen;
  if (!seen.insert({out, in}).second) return;
  transpose_right(out, in, rows, cols, stream);
}
