// What ncu costs a program it is attached to but profiles (almost) nothing of: the measurement
// behind whether the timed process itself could run under ncu, so that a program could not tell
// a profiled run from a timed one (docs/security.md, "A program can tell a tool's run from a
// timed one"). A padded 8192 x 8192 transpose, timed as the referee times a request: a batch of
// 4 launches and a synchronisation, by the host's clock, 200 batches after 20 to warm up. Run
// plainly, then under ncu profiling no launch (--launch-skip past the end), then profiling one
// launch in the middle (the first of batch 140, the 120th timed): the median batch says what ncu's interception costs
// every launch, the slowest batch what one profiled launch costs its request.
// probe-nvcc-flags: -O3 -arch=sm_90
// probe-ncu-runs: --clock-control none --launch-skip 100000 --launch-count 1 | --clock-control none --metrics smsp__inst_executed.sum --launch-skip 560 --launch-count 1
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

constexpr int kTile = 32, kRows = 8, kN = 8192, kBatch = 4, kWarm = 20, kTimed = 200;

__global__ void transpose_padded(float* out, const float* in, int n) {
  __shared__ float tile[kTile][kTile + 1];
  int x = blockIdx.x * kTile + threadIdx.x, y = blockIdx.y * kTile + threadIdx.y;
  for (int j = 0; j < kTile; j += kRows) tile[threadIdx.y + j][threadIdx.x] = in[static_cast<size_t>(y + j) * n + x];
  __syncthreads();
  x = blockIdx.y * kTile + threadIdx.x;
  y = blockIdx.x * kTile + threadIdx.y;
  for (int j = 0; j < kTile; j += kRows) out[static_cast<size_t>(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}

int main() {
  float *in = nullptr, *out = nullptr;
  const size_t bytes = static_cast<size_t>(kN) * kN * sizeof(float);
  if (cudaMalloc(&in, bytes) != cudaSuccess || cudaMalloc(&out, bytes) != cudaSuccess) return 1;
  cudaMemset(in, 0, bytes);
  const dim3 grid(kN / kTile, kN / kTile), block(kTile, kRows);
  std::vector<double> ms;
  for (int b = 0; b < kWarm + kTimed; ++b) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int l = 0; l < kBatch; ++l) transpose_padded<<<grid, block>>>(out, in, kN);
    if (cudaDeviceSynchronize() != cudaSuccess) return 1;
    const double t = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (b >= kWarm) ms.push_back(t);
  }
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  const auto at = [&](double q) { return sorted[static_cast<size_t>(q * (sorted.size() - 1))]; };
  const auto slowest = std::max_element(ms.begin(), ms.end()) - ms.begin();
  std::printf("batch of %d launches, %d batches: median %.4f ms, p10 %.4f, p90 %.4f, slowest %.4f ms (batch %ld)\n",
              kBatch, kTimed, at(0.5), at(0.1), at(0.9), sorted.back(), static_cast<long>(slowest + kWarm));
  std::printf("per launch: %.1f GB/s moved (read + write) at the median\n", 2.0 * bytes / (at(0.5) / kBatch) / 1e6);
  return 0;
}
