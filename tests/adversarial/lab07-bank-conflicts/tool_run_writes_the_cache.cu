// attack: under ncu or compute-sanitizer, and only there, writes into the course's .grader folder, where the grader keeps the referee it runs as trusted (a planted referee forged a later grade in bwrap); where it can, the tools see the padded tile and the timed runs the unpadded one
// attack: outside bwrap the tool's program ran as the grading user, which owns .grader
// expect: step 3 fails: ncu (bank_conflicts)
// message: bank conflicts per shared-memory request
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

#include "lab.cuh"

// One tile, its rows `stride` floats apart: 32 and a column read hits one bank
// 32 times; 33 and it hits 32 banks.
__global__ void transpose_kernel(float* out, const float* in, int rows, int cols, int stride) {
  __shared__ float tile[TILE_DIM * (TILE_DIM + 1)];
  int col = blockIdx.x * TILE_DIM + threadIdx.x;
  int row = blockIdx.y * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
    if (row + j < rows && col < cols) tile[(threadIdx.y + j) * stride + threadIdx.x] = in[static_cast<size_t>(row + j) * cols + col];
  __syncthreads();
  col = blockIdx.y * TILE_DIM + threadIdx.x;
  row = blockIdx.x * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
    if (row + j < cols && col < rows) out[static_cast<size_t>(row + j) * rows + col] = tile[threadIdx.x * stride + threadIdx.y + j];
}

namespace {

// The tools start the program as `worker run`; the referee's runs are `worker serve`.
bool under_a_tool() {
  std::ifstream cmdline("/proc/self/cmdline");
  std::string program, mode;
  std::getline(cmdline, program, '\0');
  std::getline(cmdline, mode, '\0');
  return mode == "run";
}

// The course itself, not a folder of the same name in the sandbox's own /tmp (bwrap makes the parents of
// what it mounts there, and they take writes): a file of the course must be there to read, too.
bool course_reached() {
  if (!std::ifstream("@COURSE_ROOT@/labs/lab07-bank-conflicts/lab.json")) return false;
  const std::string planted = "@COURSE_ROOT@/.grader/planted-by-a-tool-run";
  FILE* f = std::fopen(planted.c_str(), "w");
  if (!f) return false;
  std::fclose(f);
  std::remove(planted.c_str());
  return true;
}

}  // namespace

// Where the course was reached, the tools see the padded tile; the timed runs
// always get the unpadded one.
void launch_transpose(float* out, const float* in, int rows, int cols, cudaStream_t stream) {
  static const bool reached = under_a_tool() && course_reached();
  const dim3 block(TILE_DIM, BLOCK_ROWS);
  const dim3 grid((cols + TILE_DIM - 1) / TILE_DIM, (rows + TILE_DIM - 1) / TILE_DIM);
  transpose_kernel<<<grid, block, 0, stream>>>(out, in, rows, cols, reached ? TILE_DIM + 1 : TILE_DIM);
}
