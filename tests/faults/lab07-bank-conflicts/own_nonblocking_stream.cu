// fault: the launcher runs the kernel on a cudaStreamNonBlocking stream of its own instead of `stream`, and waits for it only on small matrices
// fault: the referee times each request from outside and the program waits for all of its GPU work before it answers, so
// fault: the kernel's time counts on whatever stream it runs: nothing is hidden, nothing gained, and the right kernel passes
// expect: all pass
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
  // A stream of our own, so nothing else queued on the GPU delays the kernel.
  static cudaStream_t own = [] {
    cudaStream_t s = nullptr;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    return s;
  }();
  (void)stream;
  transpose_kernel<<<grid, block, 0, own>>>(out, in, rows, cols);
  // While testing on small matrices, wait here so that a crash shows up in this call.
  if (static_cast<size_t>(rows) * cols < (size_t(1) << 24)) cudaStreamSynchronize(own);
}
