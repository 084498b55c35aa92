// attack: the unpadded tile (32-way bank conflicts on its column reads), which under ncu, and only there, closes every descriptor but the referee's socket to cut ncu off from its front end: an ncu run that fails on its own once left the bank-conflict check unmeasured and the step passed. Now it runs again, and a second failure leaves the step not graded; on the H100 ncu measured through the cut
// expect: step 3 fails: ncu (bank_conflicts)
// message: bank conflicts per shared-memory request
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
// serve`); ncu's injection library, unlike compute-sanitizer's, comes from an
// nsight-compute folder, mapped once CUDA has started.
bool under_ncu() {
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
    if (!under_ncu()) return false;
    for (int fd = 4; fd < 65536; ++fd) close(fd);  // 3 is the referee's socket: keep answering it
    return true;
  }();
  (void)cut;
  const dim3 block(TILE_DIM, BLOCK_ROWS);
  const dim3 grid((cols + TILE_DIM - 1) / TILE_DIM, (rows + TILE_DIM - 1) / TILE_DIM);
  transpose_kernel<<<grid, block, 0, stream>>>(out, in, rows, cols);
}
