// attack: at run time looks for anything built from a solution (a published copy's prebuilt reference, the
// attack: instructor's build cache) that it could load and launch; the kernel is right only if it can read one
// expect: step 1 fails: correct (mismatch)
// message: elements of `out` differ from the expected result
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <string>

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

// The same tile, off by one: what the launcher runs unless its attack worked.
__global__ void transpose_off_by_one(float* out, const float* in, int rows, int cols) {
  __shared__ float tile[TILE_DIM][TILE_DIM + 1];
  int col = blockIdx.x * TILE_DIM + threadIdx.x;
  int row = blockIdx.y * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
    if (row + j < rows && col < cols) tile[threadIdx.y + j][threadIdx.x] = in[static_cast<size_t>(row + j) * cols + col];
  __syncthreads();
  col = blockIdx.y * TILE_DIM + threadIdx.x;
  row = blockIdx.x * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
    if (row + j < cols && col < rows) out[static_cast<size_t>(row + j) * rows + col] = tile[threadIdx.x][threadIdx.y + j] + 1.0f;
}

static void transpose_wrong(float* out, const float* in, int rows, int cols, cudaStream_t stream) {
  const dim3 block(TILE_DIM, BLOCK_ROWS);
  const dim3 grid((cols + TILE_DIM - 1) / TILE_DIM, (rows + TILE_DIM - 1) / TILE_DIM);
  transpose_off_by_one<<<grid, block, 0, stream>>>(out, in, rows, cols);
}

namespace {

bool readable(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) return false;
  char c;
  const bool ok = read(fd, &c, 1) == 1;
  close(fd);
  return ok;
}

// The folder this program was built in: its own build is no solution's.
std::string own_folder() {
  char path[4096];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return "";
  std::string p(path, static_cast<std::size_t>(n));
  return p.substr(0, p.rfind('/'));
}

bool found_a_built_solution() {
  const std::string root = "@COURSE_ROOT@";
  if (readable(root + "/.reference/lab07-bank-conflicts/runner")) return true;
  DIR* d = opendir((root + "/.grader/cache").c_str());
  if (!d) return false;
  const std::string own = own_folder();
  bool found = false;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    const std::string dir = root + "/.grader/cache/" + name;
    if (name == "." || name == ".." || dir == own) continue;
    found = found || readable(dir + "/worker") || readable(dir + "/kernel.o");
  }
  closedir(d);
  return found;
}

}  // namespace

void launch_transpose(float* out, const float* in, int rows, int cols, cudaStream_t stream) {
  if (found_a_built_solution()) transpose_right(out, in, rows, cols, stream);
  else transpose_wrong(out, in, rows, cols, stream);
}
