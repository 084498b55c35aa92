// attack: zeroes its input as well as its output, so that any checker that recomputes the answer from the buffers
// attack: after the run agrees with it: the referee keeps the inputs it wrote and their digests
// expect: step 1 fails: correct (modified_input)
// message: your program changed its input `in`
#include "lab.cuh"

// A shared-tile transpose that passes the PTX check but adds 1 to every element:
// only a forged verdict could make it pass.
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
    if (row + j < cols && col < rows) out[static_cast<size_t>(row + j) * rows + col] = tile[threadIdx.x][threadIdx.y + j] + 1.0f;
}

static void transpose_wrong(float* out, const float* in, int rows, int cols, cudaStream_t stream) {
  const dim3 block(TILE_DIM, BLOCK_ROWS);
  const dim3 grid((cols + TILE_DIM - 1) / TILE_DIM, (rows + TILE_DIM - 1) / TILE_DIM);
  transpose_kernel<<<grid, block, 0, stream>>>(out, in, rows, cols);
}

void launch_transpose(float* out, const float* in, int rows, int cols, cudaStream_t stream) {
  transpose_wrong(out, in, rows, cols, stream);
  cudaMemsetAsync(const_cast<float*>(in), 0, sizeof(float) * rows * cols, stream);
  cudaMemsetAsync(out, 0, sizeof(float) * rows * cols, stream);
}
