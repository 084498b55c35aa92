// When does a shared-memory tile with a halo beat plain loads that L1/L2 serve? 1D and 2D
// stencils at radii 1, 3 and 8, each written both ways, timed with events (median of 30 runs,
// after 5 warm-up runs), against a device-to-device cudaMemcpy of the same bytes.
// Build and run: nvcc -O3 -arch=sm_90 -o stencil stencil_tile_vs_cache.cu && ./stencil
// probe-nvcc-flags: -O3 -arch=sm_90
#include <algorithm>
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

#define CHECK(x)                                                                   \
  do {                                                                             \
    cudaError_t e = (x);                                                           \
    if (e != cudaSuccess) {                                                        \
      std::printf("%s failed: %s\n", #x, cudaGetErrorString(e));                  \
      return 1;                                                                    \
    }                                                                              \
  } while (0)

constexpr int kMaxR = 8;
__constant__ float c_w1[2 * kMaxR + 1];
__constant__ float c_w2[(2 * kMaxR + 1) * (2 * kMaxR + 1)];

// ---- 1D: out[i] = sum_k w[k] * in[i + k], in holds n + 2R values ----
template <int R>
__global__ void direct_1d(const float* __restrict__ in, float* __restrict__ out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float s = 0;
#pragma unroll
  for (int k = 0; k <= 2 * R; ++k) s += c_w1[k] * in[i + k];
  out[i] = s;
}

template <int R, int B>
__global__ void tiled_1d(const float* __restrict__ in, float* __restrict__ out, int n) {
  __shared__ float t[B + 2 * R];
  const int base = blockIdx.x * B;
  for (int j = threadIdx.x; j < B + 2 * R; j += B)
    if (base + j < n + 2 * R) t[j] = in[base + j];
  __syncthreads();
  const int i = base + threadIdx.x;
  if (i >= n) return;
  float s = 0;
#pragma unroll
  for (int k = 0; k <= 2 * R; ++k) s += c_w1[k] * t[threadIdx.x + k];
  out[i] = s;
}

// ---- 2D box: out[y][x] = sum w[dy][dx] * in[y + dy][x + dx], in is (h + 2R) x (w + 2R) ----
template <int R>
__global__ void direct_2d(const float* __restrict__ in, float* __restrict__ out, int w, int h) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  const int pw = w + 2 * R;
  float s = 0;
#pragma unroll
  for (int dy = 0; dy <= 2 * R; ++dy)
#pragma unroll
    for (int dx = 0; dx <= 2 * R; ++dx) s += c_w2[dy * (2 * R + 1) + dx] * in[(y + dy) * pw + x + dx];
  out[y * w + x] = s;
}

template <int R, int BX, int BY>
__global__ void tiled_2d(const float* __restrict__ in, float* __restrict__ out, int w, int h) {
  __shared__ float t[BY + 2 * R][BX + 2 * R];
  const int x0 = blockIdx.x * BX, y0 = blockIdx.y * BY, pw = w + 2 * R, ph = h + 2 * R;
  for (int ty = threadIdx.y; ty < BY + 2 * R; ty += BY)
    for (int tx = threadIdx.x; tx < BX + 2 * R; tx += BX)
      if (y0 + ty < ph && x0 + tx < pw) t[ty][tx] = in[(y0 + ty) * pw + x0 + tx];
  __syncthreads();
  const int x = x0 + threadIdx.x, y = y0 + threadIdx.y;
  if (x >= w || y >= h) return;
  float s = 0;
#pragma unroll
  for (int dy = 0; dy <= 2 * R; ++dy)
#pragma unroll
    for (int dx = 0; dx <= 2 * R; ++dx) s += c_w2[dy * (2 * R + 1) + dx] * t[threadIdx.y + dy][threadIdx.x + dx];
  out[y * w + x] = s;
}

// ---- 2D star (a cross, 4R + 1 points, the finite-difference shape): same padding as the box ----
template <int R>
__global__ void direct_star(const float* __restrict__ in, float* __restrict__ out, int w, int h) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  const int pw = w + 2 * R;
  const float* c = in + (y + R) * pw + x + R;
  float s = c_w1[R] * c[0];
#pragma unroll
  for (int k = 1; k <= R; ++k) s += c_w1[R + k] * (c[k] + c[-k] + c[k * pw] + c[-k * pw]);
  out[y * w + x] = s;
}

template <int R, int BX, int BY>
__global__ void tiled_star(const float* __restrict__ in, float* __restrict__ out, int w, int h) {
  __shared__ float t[BY + 2 * R][BX + 2 * R];
  const int x0 = blockIdx.x * BX, y0 = blockIdx.y * BY, pw = w + 2 * R, ph = h + 2 * R;
  for (int ty = threadIdx.y; ty < BY + 2 * R; ty += BY)
    for (int tx = threadIdx.x; tx < BX + 2 * R; tx += BX)
      if (y0 + ty < ph && x0 + tx < pw) t[ty][tx] = in[(y0 + ty) * pw + x0 + tx];
  __syncthreads();
  const int x = x0 + threadIdx.x, y = y0 + threadIdx.y;
  if (x >= w || y >= h) return;
  const int cy = threadIdx.y + R, cx = threadIdx.x + R;
  float s = c_w1[R] * t[cy][cx];
#pragma unroll
  for (int k = 1; k <= R; ++k) s += c_w1[R + k] * (t[cy][cx + k] + t[cy][cx - k] + t[cy + k][cx] + t[cy - k][cx]);
  out[y * w + x] = s;
}

template <typename F>
float median_ms(F launch) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  for (int i = 0; i < 5; ++i) launch();
  std::vector<float> t;
  for (int i = 0; i < 30; ++i) {
    cudaEventRecord(a);
    launch();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    t.push_back(ms);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

float* g_in;
float* g_out;
float* g_copy;

template <int R>
void one_d(int n) {
  const double bytes = 8.0 * n;
  const float copy = median_ms([&] { cudaMemcpyAsync(g_copy, g_in, 4.0 * n, cudaMemcpyDeviceToDevice); });
  const float d = median_ms([&] { direct_1d<R><<<(n + 255) / 256, 256>>>(g_in, g_out, n); });
  const float t = median_ms([&] { tiled_1d<R, 256><<<(n + 255) / 256, 256>>>(g_in, g_out, n); });
  std::printf("1d  r=%d n=%d  memcpy %.3f ms (%.0f GB/s)  direct %.3f ms (%.0f GB/s, %.1f %%)  tiled %.3f ms (%.0f GB/s, %.1f %%)  tiled/direct speed %.2f\n",
              R, n, copy, bytes / copy / 1e6, d, bytes / d / 1e6, 100 * copy / d, t, bytes / t / 1e6, 100 * copy / t, d / t);
}

template <int R>
void two_d(int w, int h) {
  const double bytes = 8.0 * w * h;
  const float copy = median_ms([&] { cudaMemcpyAsync(g_copy, g_in, 4.0 * w * h, cudaMemcpyDeviceToDevice); });
  const dim3 block(32, 8), grid((w + 31) / 32, (h + 7) / 8);
  const float d = median_ms([&] { direct_2d<R><<<grid, block>>>(g_in, g_out, w, h); });
  const float t = median_ms([&] { tiled_2d<R, 32, 8><<<grid, block>>>(g_in, g_out, w, h); });
  const dim3 block16(16, 16), grid16((w + 15) / 16, (h + 15) / 16);
  const float d16 = median_ms([&] { direct_2d<R><<<grid16, block16>>>(g_in, g_out, w, h); });
  const float t16 = median_ms([&] { tiled_2d<R, 16, 16><<<grid16, block16>>>(g_in, g_out, w, h); });
  std::printf("2d  r=%d %dx%d  memcpy %.3f ms  direct32x8 %.3f ms (%.1f %%)  tiled32x8 %.3f ms (%.1f %%)  direct16x16 %.3f  tiled16x16 %.3f  best tiled/best direct speed %.2f\n",
              R, w, h, copy, d, 100 * copy / d, t, 100 * copy / t, d16, t16, std::min(d, d16) / std::min(t, t16));
}

template <int R>
void star(int w, int h) {
  const float copy = median_ms([&] { cudaMemcpyAsync(g_copy, g_in, 4.0 * w * h, cudaMemcpyDeviceToDevice); });
  const dim3 block(32, 8), grid((w + 31) / 32, (h + 7) / 8);
  const float d = median_ms([&] { direct_star<R><<<grid, block>>>(g_in, g_out, w, h); });
  const float t = median_ms([&] { tiled_star<R, 32, 8><<<grid, block>>>(g_in, g_out, w, h); });
  const dim3 block16(32, 16), grid16((w + 31) / 32, (h + 15) / 16);
  const float d16 = median_ms([&] { direct_star<R><<<grid16, block16>>>(g_in, g_out, w, h); });
  const float t16 = median_ms([&] { tiled_star<R, 32, 16><<<grid16, block16>>>(g_in, g_out, w, h); });
  std::printf("star r=%d %dx%d  memcpy %.3f ms  direct32x8 %.3f ms (%.1f %%)  tiled32x8 %.3f ms (%.1f %%)  direct32x16 %.3f  tiled32x16 %.3f  best tiled/best direct speed %.2f\n",
              R, w, h, copy, d, 100 * copy / d, t, 100 * copy / t, d16, t16, std::min(d, d16) / std::min(t, t16));
}

int main() {
  const int n = 1 << 26, w = 8192, h = 8192;
  const size_t elems = static_cast<size_t>(w + 2 * kMaxR) * (h + 2 * kMaxR) + 64;
  CHECK(cudaMalloc(&g_in, elems * 4));
  CHECK(cudaMalloc(&g_out, elems * 4));
  CHECK(cudaMalloc(&g_copy, elems * 4));
  CHECK(cudaMemset(g_in, 0, elems * 4));
  std::vector<float> w1(2 * kMaxR + 1, 1.0f / 17), w2((2 * kMaxR + 1) * (2 * kMaxR + 1), 1.0f / 289);
  CHECK(cudaMemcpyToSymbol(c_w1, w1.data(), w1.size() * 4));
  CHECK(cudaMemcpyToSymbol(c_w2, w2.data(), w2.size() * 4));
  cudaDeviceProp p;
  CHECK(cudaGetDeviceProperties(&p, 0));
  std::printf("%s, %d SMs\n", p.name, p.multiProcessorCount);
  one_d<1>(n);
  one_d<3>(n);
  one_d<8>(n);
  one_d<1>(n + 12345);
  two_d<1>(w, h);
  two_d<3>(w, h);
  two_d<8>(w, h);
  two_d<3>(w - 3, h - 5);
  star<1>(w, h);
  star<3>(w, h);
  star<8>(w, h);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  return 0;
}
