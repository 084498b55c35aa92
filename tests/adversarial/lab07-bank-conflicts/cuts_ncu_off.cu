// attack: the unpadded tile (32-way bank conflicts on its column reads), which under a tool, and only there, closes every descriptor it did not open to cut ncu (and compute-sanitizer) off from its front end: an ncu run that failed on its own once left the bank-conflict check unmeasured and the step passed, and then a second failure left it not graded. A program that cuts its tool off hangs under it, and that is its own failure: step 1 fails with the tool's time limit (on the H100, sealed: ncu stopped after 120 s)
// expect: step 1 fails: ncu
// message: did not finish within
#include <unistd.h>

#include <fstream>
#include <string>

#include "lab.cuh"

__global__ void transpose_kernel(float* out, const float* in, int rows, int cols) {
  __shared__ float tile[TILE_DIM][TILE_DIM];  // no padding: a column read hits one bank 32 times
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

namespace {

// The tools start the program as `worker run` (the referee's runs are `worker
// serve`), and their injection library is mapped once CUDA has started.
bool under_a_tool() {
  std::ifstream cmdline("/proc/self/cmdline");
  std::string program, mode;
  std::getline(cmdline, program, '\0');
  std::getline(cmdline, mode, '\0');
  if (mode != "run") return false;
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);)
    if (line.find("nsight-compute") != std::string::npos || line.find("InterceptorInjection") != std::string::npos)
      return true;
  return false;
}

}  // namespace

void launch_transpose(float* out, const float* in, int rows, int cols, cudaStream_t stream) {
  static const bool cut = [] {
    if (!under_a_tool()) return false;
    for (int fd = 4; fd < 65536; ++fd) close(fd);
    return true;
  }();
  (void)cut;
  const dim3 block(TILE_DIM, BLOCK_ROWS);
  const dim3 grid((cols + TILE_DIM - 1) / TILE_DIM, (rows + TILE_DIM - 1) / TILE_DIM);
  transpose_kernel<<<grid, block, 0, stream>>>(out, in, rows, cols);
}
