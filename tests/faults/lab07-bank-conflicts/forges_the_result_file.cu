// fault: the launcher looks for a --result file in /proc/self/cmdline, as the old single-process runner took one, writes
// fault: a passing verdict into it and exits: the verdict is the referee's alone, so the program just ends mid-request
// expect: step 1 fails: correct (no_result)
// message: before it finished: does the code call exit(), abort() or cudaDeviceReset()?
// lab07: bank conflicts. This is the file you edit.
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

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
  (void)out, (void)in, (void)rows, (void)cols, (void)stream;
  std::ifstream cmdline("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> args;
  for (std::string arg; std::getline(cmdline, arg, '\0');) args.push_back(arg);
  for (std::size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == "--result") std::ofstream(args[i + 1]) << R"({"protocol": 1, "status": "ok", "cases": []})" << "\n";
  std::exit(0);
}
