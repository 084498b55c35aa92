// A vector add on __device__ arrays against the same add on cudaMalloc buffers: the measurement
// behind lab02's "Same memory, same speed". 16 Mi floats each (the size of lab02's static case),
// each kernel timed with events, median of 50 runs after 5 to warm up, the two interleaved so
// that a clock change or a neighbour on the GPU touches both alike; a device-to-device copy of
// the same 192 MiB (two reads, one write) beside them.
// Build and run: nvcc -O3 -arch=sm_90 -o arrays static_vs_dynamic_arrays.cu && ./arrays
// probe-nvcc-flags: -O3 -arch=sm_90
#include <algorithm>
#include <cstdio>
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

constexpr int kN = 1 << 24;
__device__ float static_a[kN], static_b[kN], static_c[kN];

// The same body for both: only where the arrays live differs.
__global__ void add_static(int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) static_c[i] = static_a[i] + static_b[i];
}
__global__ void add_dynamic(float* __restrict__ c, const float* __restrict__ a, const float* __restrict__ b, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
__global__ void fill(float* p, int n, float v) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = v + 1e-7f * (i % 1000);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main() {
  float *a, *b, *c, *sa, *sb, *sc;
  CHECK(cudaMalloc(&a, kN * sizeof(float)));
  CHECK(cudaMalloc(&b, kN * sizeof(float)));
  CHECK(cudaMalloc(&c, kN * sizeof(float)));
  CHECK(cudaGetSymbolAddress(reinterpret_cast<void**>(&sa), static_a));
  CHECK(cudaGetSymbolAddress(reinterpret_cast<void**>(&sb), static_b));
  CHECK(cudaGetSymbolAddress(reinterpret_cast<void**>(&sc), static_c));
  const int threads = 256, blocks = (kN + threads - 1) / threads;
  for (float* p : {a, b, sa, sb}) fill<<<blocks, threads>>>(p, kN, 1.0f);
  CHECK(cudaDeviceSynchronize());
  cudaEvent_t t0, t1;
  CHECK(cudaEventCreate(&t0));
  CHECK(cudaEventCreate(&t1));
  std::vector<double> st, dy, cp;
  // A copy of 96 MiB reads 96 and writes 96: the 192 MiB the add moves.
  const size_t copy_bytes = 3ull * kN * sizeof(float) / 2;
  float *src, *dst;
  CHECK(cudaMalloc(&src, copy_bytes));
  CHECK(cudaMalloc(&dst, copy_bytes));
  for (int r = 0; r < 55; ++r) {
    float ms = 0;
    CHECK(cudaEventRecord(t0));
    add_static<<<blocks, threads>>>(kN);
    CHECK(cudaEventRecord(t1));
    CHECK(cudaEventSynchronize(t1));
    CHECK(cudaEventElapsedTime(&ms, t0, t1));
    if (r >= 5) st.push_back(ms);
    CHECK(cudaEventRecord(t0));
    add_dynamic<<<blocks, threads>>>(c, a, b, kN);
    CHECK(cudaEventRecord(t1));
    CHECK(cudaEventSynchronize(t1));
    CHECK(cudaEventElapsedTime(&ms, t0, t1));
    if (r >= 5) dy.push_back(ms);
    CHECK(cudaEventRecord(t0));
    CHECK(cudaMemcpyAsync(dst, src, copy_bytes, cudaMemcpyDeviceToDevice));
    CHECK(cudaEventRecord(t1));
    CHECK(cudaEventSynchronize(t1));
    CHECK(cudaEventElapsedTime(&ms, t0, t1));
    if (r >= 5) cp.push_back(ms);
  }
  // Both adds must give the same sums.
  std::vector<float> hs(kN), hd(kN);
  CHECK(cudaMemcpy(hs.data(), sc, kN * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(hd.data(), c, kN * sizeof(float), cudaMemcpyDeviceToHost));
  const bool same = std::equal(hs.begin(), hs.end(), hd.begin());
  const double bytes = 3.0 * kN * sizeof(float);
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s, %d floats per array, median of 50 runs\n", prop.name, kN);
  std::printf("__device__ arrays:  %.4f ms  %.0f GB/s\n", median(st), bytes / median(st) / 1e6);
  std::printf("cudaMalloc buffers: %.4f ms  %.0f GB/s\n", median(dy), bytes / median(dy) / 1e6);
  std::printf("copy of the same bytes: %.4f ms  %.0f GB/s\n", median(cp), 2.0 * copy_bytes / median(cp) / 1e6);
  std::printf("__device__ over cudaMalloc time: %.3f; sums identical: %s\n", median(st) / median(dy), same ? "yes" : "NO");
  return same ? 0 : 1;
}
