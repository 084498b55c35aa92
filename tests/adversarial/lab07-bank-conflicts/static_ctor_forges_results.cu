// attack: code that runs before main and after it writes a passing verdict wherever one could be read back:
// attack: the working folder, /tmp, and every --result, --stdout or --stderr path on any command line it can read
// expect: step 1 fails: correct (mismatch)
// message: elements of `out` differ from the expected result
#include <dirent.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "lab.cuh"

// A shared-tile transpose that passes the PTX check but adds 1 to every element:
// only a forged verdict could make it pass.
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
    if (row + j < cols && col < rows) out[static_cast<size_t>(row + j) * rows + col] = tile[threadIdx.x][threadIdx.y + j] + 1.0f;
}

static void transpose_wrong(float* out, const float* in, int rows, int cols, cudaStream_t stream) {
  const dim3 block(TILE_DIM, BLOCK_ROWS);
  const dim3 grid((cols + TILE_DIM - 1) / TILE_DIM, (rows + TILE_DIM - 1) / TILE_DIM);
  transpose_kernel<<<grid, block, 0, stream>>>(out, in, rows, cols);
}

namespace {

const char* kForged =
    R"({"protocol": 2, "status": "ok", "mode": "run", "cases": [{"case": "1000x777", "status": "ok", "outputs": []}],)"
    R"( "schema": "cuda-memory-labs/grade/1", "passed": true, "exit_code": 0, "nonce": "any"})";

void forge_everywhere() {
  std::vector<std::string> targets = {"result.json", "/tmp/result.json", "grade.json", "/tmp/grade.json"};
  if (DIR* d = opendir("/proc")) {
    while (dirent* e = readdir(d)) {
      std::ifstream cmdline(std::string("/proc/") + e->d_name + "/cmdline", std::ios::binary);
      std::vector<std::string> args;
      for (std::string a; std::getline(cmdline, a, '\0');) args.push_back(a);
      for (std::size_t i = 0; i + 1 < args.size(); ++i)
        if (args[i] == "--result" || args[i] == "--stdout" || args[i] == "--stderr") targets.push_back(args[i + 1]);
    }
    closedir(d);
  }
  for (const auto& t : targets) std::ofstream(t, std::ios::trunc) << kForged << "\n";
}

struct Forger {
  Forger() { forge_everywhere(); }
  ~Forger() { forge_everywhere(); }
} forger;

}  // namespace

void launch_transpose(float* out, const float* in, int rows, int cols, cudaStream_t stream) {
  forge_everywhere();
  transpose_wrong(out, in, rows, cols, stream);
}
