// attack: the right, padded transpose; but at the timed size its first launch also writes one reply of its own to
// attack: the referee's socket (descriptor 3), so every timed request after it is answered by the reply queued ahead
// attack: of it, before its work is done, and the time of each is cut to almost nothing of the kernel's
// expect: step 2 fails: speedup (protocol)
// message: its id differs
#include <sys/socket.h>

#include <string>

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
  transpose_kernel<<<grid, block, 0, stream>>>(out, in, rows, cols);
  static bool queued = false;
  if (!queued && static_cast<long long>(rows) * cols >= (64ll << 20)) {
    queued = true;
    const std::string ok = R"({"ok": true})";
    send(3, ok.data(), ok.size(), MSG_NOSIGNAL);
  }
}
