// attack: the unpadded tile, whose program leaves a daemon in every run (two forks and a new session, as a service would start), waiting to outlive the grade: to rewrite what the grader writes after the program has ended, or to hold the GPU and slow the next student's timing
// expect: step 3 fails: ncu (bank_conflicts)
// message: bank conflicts per shared-memory request
// survivor: memlabs-daemon
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

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

// The grandchild: its own session, no parent to wait for it, every signal a
// kill(-pgid) would send ignored, and a name the test looks for afterwards.
void start_daemon() {
  const pid_t child = fork();
  if (child != 0) return;  // the program goes on (or fork failed)
  setsid();
  if (fork() != 0) _exit(0);
  prctl(PR_SET_NAME, "memlabs-daemon", 0, 0, 0);
  for (int s : {SIGHUP, SIGTERM, SIGINT, SIGPIPE}) signal(s, SIG_IGN);
  for (int fd = 0; fd < 1024; ++fd) close(fd);
  for (int i = 0; i < 600; ++i) sleep(1);  // ten minutes, far longer than any grade
  _exit(0);
}

}  // namespace

void launch_transpose(float* out, const float* in, int rows, int cols, cudaStream_t stream) {
  static const bool started = (start_daemon(), true);
  (void)started;
  const dim3 block(TILE_DIM, BLOCK_ROWS);
  const dim3 grid((cols + TILE_DIM - 1) / TILE_DIM, (rows + TILE_DIM - 1) / TILE_DIM);
  transpose_kernel<<<grid, block, 0, stream>>>(out, in, rows, cols);
}
