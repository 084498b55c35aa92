// Two stencil shapes lab09's lesson names but does not time: the tile that holds only the
// block's own inputs and takes its halo taps from global memory through the caches ("interior
// in shared, halo from the caches"), for the 17 x 17 box; and the star with its vertical taps
// kept in registers, each thread walking down a column of outputs with a rolling window.
// Each beside the plain-load kernel and the full tile with its halo, at 8192 x 8192 on a padded
// input (no bounds tests), timed with events: median of 30 runs after 5 to warm up, the kernels
// of one stencil interleaved, against a device-to-device copy of the same bytes.
// Build and run: nvcc -O3 -arch=sm_90 -o halo stencil_interior_tile_and_register_star.cu && ./halo
// probe-nvcc-flags: -O3 -arch=sm_90
#include <algorithm>
#include <cstdio>
#include <functional>
#include <vector>
#include <cuda_runtime.h>

#define CHECK(x)                                                  \
  do {                                                            \
    cudaError_t e = (x);                                          \
    if (e != cudaSuccess) {                                       \
      std::printf("%s failed: %s\n", #x, cudaGetErrorString(e)); \
      return 1;                                                   \
    }                                                             \
  } while (0)

constexpr int kW = 8192, kH = 8192;
constexpr int BR = 8, BT = 2 * BR + 1;  // the box: radius 8, 17 taps a row
constexpr int SR = 3;                   // the star: radius 3, 13 taps
constexpr int BX = 32, BY = 8;          // blocks of 32 x 8 threads
constexpr int ROWS = 8;                 // outputs a thread in the register star

__constant__ float c_box[BT * BT];
__constant__ float c_star[4 * SR + 1];

// in is (kH + 2R) x (kW + 2R): output (x, y) reads in[y + dy][x + dx], dy, dx in [0, 2R].

__global__ void box_plain(const float* __restrict__ in, float* __restrict__ out) {
  const int x = blockIdx.x * BX + threadIdx.x, y = blockIdx.y * BY + threadIdx.y;
  const int pw = kW + 2 * BR;
  float s = 0;
#pragma unroll
  for (int dy = 0; dy < BT; ++dy)
#pragma unroll
    for (int dx = 0; dx < BT; ++dx) s += c_box[dy * BT + dx] * in[(y + dy) * pw + x + dx];
  out[y * kW + x] = s;
}

// The full tile: the block's 32 x 8 outputs need (32 + 16) x (8 + 16) inputs.
__global__ void box_halo_tile(const float* __restrict__ in, float* __restrict__ out) {
  __shared__ float t[BY + 2 * BR][BX + 2 * BR];
  const int x0 = blockIdx.x * BX, y0 = blockIdx.y * BY;
  const int pw = kW + 2 * BR;
  for (int ty = threadIdx.y; ty < BY + 2 * BR; ty += BY)
    for (int tx = threadIdx.x; tx < BX + 2 * BR; tx += BX) t[ty][tx] = in[(y0 + ty) * pw + x0 + tx];
  __syncthreads();
  float s = 0;
#pragma unroll
  for (int dy = 0; dy < BT; ++dy)
#pragma unroll
    for (int dx = 0; dx < BT; ++dx) s += c_box[dy * BT + dx] * t[threadIdx.y + dy][threadIdx.x + dx];
  out[(y0 + threadIdx.y) * kW + x0 + threadIdx.x] = s;
}

// Interior only: the tile holds the inputs at the block's own output positions (each thread
// loads one); a tap inside it comes from shared memory, a tap outside from global memory,
// where the neighbouring blocks' loads of the same values have left them in L1 or L2.
__global__ void box_interior_tile(const float* __restrict__ in, float* __restrict__ out) {
  __shared__ float t[BY][BX];
  const int x0 = blockIdx.x * BX, y0 = blockIdx.y * BY;
  const int pw = kW + 2 * BR;
  t[threadIdx.y][threadIdx.x] = in[(y0 + threadIdx.y + BR) * pw + x0 + threadIdx.x + BR];
  __syncthreads();
  float s = 0;
#pragma unroll
  for (int dy = 0; dy < BT; ++dy)
#pragma unroll
    for (int dx = 0; dx < BT; ++dx) {
      const int ty = threadIdx.y + dy - BR, tx = threadIdx.x + dx - BR;
      const float v = ty >= 0 && ty < BY && tx >= 0 && tx < BX
                          ? t[ty][tx]
                          : in[(y0 + threadIdx.y + dy) * pw + x0 + threadIdx.x + dx];
      s += c_box[dy * BT + dx] * v;
    }
  out[(y0 + threadIdx.y) * kW + x0 + threadIdx.x] = s;
}

// The star: the row taps at x - 3 .. x + 3 and the column taps at y - 3 .. y + 3.
__device__ float star_weight_row(int dx) { return c_star[dx + SR]; }
__device__ float star_weight_col(int dy) { return dy == 0 ? 0.0f : c_star[2 * SR + 1 + (dy < 0 ? dy + SR : dy + SR - 1)]; }

__global__ void star_plain(const float* __restrict__ in, float* __restrict__ out) {
  const int x = blockIdx.x * BX + threadIdx.x, y = blockIdx.y * BY + threadIdx.y;
  const int pw = kW + 2 * SR;
  const float* c = in + (y + SR) * pw + x + SR;
  float s = 0;
#pragma unroll
  for (int d = -SR; d <= SR; ++d) s += star_weight_row(d) * c[d];
#pragma unroll
  for (int d = -SR; d <= SR; ++d) s += star_weight_col(d) * c[d * pw];
  out[y * kW + x] = s;
}

// Each thread walks down ROWS outputs of one column: the 2R + 1 values of the column window
// stay in registers and move up by one at each step, so a step loads one new column value and
// the six row taps, not twelve taps.
__global__ void star_register_column(const float* __restrict__ in, float* __restrict__ out) {
  const int x = blockIdx.x * BX + threadIdx.x, y0 = (blockIdx.y * BY + threadIdx.y) * ROWS;
  const int pw = kW + 2 * SR;
  const float* col = in + x + SR;  // the column through x, in padded coordinates
  float w[2 * SR + 1];
#pragma unroll
  for (int k = 0; k < 2 * SR + 1; ++k) w[k] = col[(y0 + k) * pw];
#pragma unroll
  for (int r = 0; r < ROWS; ++r) {
    const float* c = in + (y0 + r + SR) * pw + x + SR;
    float s = 0;
#pragma unroll
    for (int d = -SR; d <= SR; ++d) s += star_weight_row(d) * (d == 0 ? w[SR] : c[d]);
#pragma unroll
    for (int d = -SR; d <= SR; ++d) s += star_weight_col(d) * w[d + SR];
    out[(y0 + r) * kW + x] = s;
#pragma unroll
    for (int k = 0; k < 2 * SR; ++k) w[k] = w[k + 1];
    if (r + 1 < ROWS) w[2 * SR] = col[(y0 + r + 2 * SR + 1) * pw];
  }
}

__global__ void fill(float* p, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    p[i] = 1.0f + 1e-3f * float(i % 977);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Median milliseconds of each launch, interleaved round by round; 0 where a launch failed.
std::vector<double> time_interleaved(const std::vector<std::function<void()>>& launches) {
  std::vector<std::vector<double>> ms(launches.size());
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  for (int round = 0; round < 35; ++round)
    for (size_t k = 0; k < launches.size(); ++k) {
      cudaEventRecord(a);
      launches[k]();
      cudaEventRecord(b);
      cudaEventSynchronize(b);
      float t = 0;
      cudaEventElapsedTime(&t, a, b);
      if (round >= 5) ms[k].push_back(t);
    }
  std::vector<double> out;
  for (auto& m : ms) out.push_back(cudaGetLastError() == cudaSuccess ? median(m) : 0.0);
  return out;
}

int main() {
  // One padded input serves both: the box's padding is the wider.
  const size_t box_in = size_t(kH + 2 * BR) * (kW + 2 * BR);
  const size_t outs = size_t(kW) * kH;
  float *in = nullptr, *out = nullptr, *copy = nullptr;
  CHECK(cudaMalloc(&in, box_in * sizeof(float)));
  CHECK(cudaMalloc(&out, outs * sizeof(float)));
  CHECK(cudaMalloc(&copy, outs * sizeof(float)));
  fill<<<1024, 256>>>(in, box_in);
  std::vector<float> wb(BT * BT, 1.0f / (BT * BT)), ws(4 * SR + 1, 1.0f / (4 * SR + 1));
  CHECK(cudaMemcpyToSymbol(c_box, wb.data(), wb.size() * sizeof(float)));
  CHECK(cudaMemcpyToSymbol(c_star, ws.data(), ws.size() * sizeof(float)));
  CHECK(cudaDeviceSynchronize());
  cudaDeviceProp p;
  CHECK(cudaGetDeviceProperties(&p, 0));
  std::printf("%s, %d SMs, %d x %d outputs, blocks of %d x %d\n", p.name, p.multiProcessorCount, kW, kH, BX, BY);

  const dim3 block(BX, BY), grid(kW / BX, kH / BY), star_column_grid(kW / BX, kH / (BY * ROWS));
  const std::vector<double> box = time_interleaved({
      [&] { cudaMemcpy(copy, out, outs * sizeof(float), cudaMemcpyDeviceToDevice); },
      [&] { box_plain<<<grid, block>>>(in, out); },
      [&] { box_halo_tile<<<grid, block>>>(in, out); },
      [&] { box_interior_tile<<<grid, block>>>(in, out); },
  });
  std::printf("box r=%d  memcpy %.3f ms  plain %.3f ms  halo_tile %.3f ms  interior_tile %.3f ms  "
              "halo_tile/plain speed %.2f  interior_tile/plain speed %.2f\n",
              BR, box[0], box[1], box[2], box[3], box[1] / box[2], box[1] / box[3]);
  const std::vector<double> star = time_interleaved({
      [&] { cudaMemcpy(copy, out, outs * sizeof(float), cudaMemcpyDeviceToDevice); },
      [&] { star_plain<<<grid, block>>>(in, out); },
      [&] { star_register_column<<<star_column_grid, block>>>(in, out); },
  });
  std::printf("star r=%d  memcpy %.3f ms  plain %.3f ms  register_column(%d rows) %.3f ms  "
              "register_column/plain speed %.2f\n",
              SR, star[0], star[1], ROWS, star[2], star[1] / star[2]);
  return 0;
}
