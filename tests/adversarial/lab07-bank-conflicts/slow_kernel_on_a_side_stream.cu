// attack: at the timing size it launches a slow transpose (uncoalesced stores) on a stream of its own and returns at
// attack: once, hoping the timing sees only the stream it handed over; the time of the whole request counts
// attack: step 1 now finds it first: ncu profiles the timing size too, where the kernel the step names never runs
// expect: step 1 fails: ncu
// message: your program never launched transpose_kernel in case 8192x8192
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

__global__ void transpose_by_columns(float* out, const float* in, int rows, int cols) {
  const int col = blockIdx.x * TILE_DIM + threadIdx.x;
  const int row = blockIdx.y * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
    if (row + j < rows && col < cols) out[static_cast<size_t>(col) * rows + (row + j)] = in[static_cast<size_t>(row + j) * cols + col];
}

void launch_transpose(float* out, const float* in, int rows, int cols, cudaStream_t stream) {
  if (static_cast<long long>(rows) * cols < 8192LL * 8192) {
    transpose_right(out, in, rows, cols, stream);
    return;
  }
  static cudaStream_t side = nullptr;
  if (!side) cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
  const dim3 block(TILE_DIM, BLOCK_ROWS);
  const dim3 grid((cols + TILE_DIM - 1) / TILE_DIM, (rows + TILE_DIM - 1) / TILE_DIM);
  transpose_by_columns<<<grid, block, 0, side>>>(out, in, rows, cols);
}
