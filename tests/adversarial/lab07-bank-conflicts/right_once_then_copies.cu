// attack: right for its first 24 launches at the timing size (what a grader that checks once, then times, would see),
// attack: then a plain copy of the input, which moves the same bytes as fast as memory allows
// expect: step 2 fails: speedup (timed_mismatch)
// message: batches of launches that were right
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
  static int big_launches = 0;
  if (static_cast<long long>(rows) * cols >= 8192LL * 8192 && ++big_launches > 24) {
    cudaMemcpyAsync(out, in, sizeof(float) * rows * cols, cudaMemcpyDeviceToDevice, stream);
    return;
  }
  transpose_right(out, in, rows, cols, stream);
}
