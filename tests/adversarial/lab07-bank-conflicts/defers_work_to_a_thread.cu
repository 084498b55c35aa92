// attack: at the timing size the launcher returns at once and a thread of its own launches the transpose a second later,
// attack: after the request was answered. The timing size is profiled too, and there the kernel is never launched
// attack: before the program ends (in a timed request the probe after the reply would find the outputs unwritten)
// expect: step 1 fails: ncu
// message: never launched transpose_kernel in case 8192x8192
#include <chrono>
#include <thread>

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
  if (static_cast<long long>(rows) * cols < 8192LL * 8192) {
    transpose_right(out, in, rows, cols, stream);
    return;
  }
  std::thread([=] {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    transpose_right(out, in, rows, cols, nullptr);
  }).detach();
}
