// An array of structures against a structure of arrays, for a kernel that reads two of a
// record's eight fields (lab02's drift: x + vx * dt) and for one that reads all eight (their
// sum): the measurement behind lab02 step 4's "the array of structures is not always the slow
// layout". 32 Mi particles of 32 bytes (1 GiB either way), each kernel timed with events,
// median of 30 runs after 5 to warm up, the four kernels interleaved so that a clock change or
// a neighbour on the GPU touches all alike, and L2 flushed before each run (a 256 MiB write)
// so that no run starts with the last one's lines. Each line: the kernel, its median time, the
// bytes it needs (what it reads and writes of the fields it uses) over that time, and the
// time over the structure of arrays' for the same work.
// Build and run: nvcc -O3 -arch=sm_90 -o aos_soa aos_soa_fields.cu && ./aos_soa
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

constexpr int kN = 1 << 25;
constexpr int kFields = 8;

struct Particle {
  float x, y, z, vx, vy, vz, mass, charge;
};
struct Fields {
  const float* f[kFields];  // x, y, z, vx, vy, vz, mass, charge
};

__global__ void drift_aos(float* out, const Particle* p, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = p[i].x + p[i].vx * 0.125f;
}
__global__ void drift_soa(float* out, Fields p, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = p.f[0][i] + p.f[3][i] * 0.125f;
}
__global__ void all_aos(float* out, const Particle* p, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const Particle q = p[i];
  out[i] = q.x + q.y + q.z + q.vx + q.vy + q.vz + q.mass + q.charge;
}
__global__ void all_soa(float* out, Fields p, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float s = 0.0f;
#pragma unroll
  for (int f = 0; f < kFields; ++f) s += p.f[f][i];
  out[i] = s;
}
__global__ void fill(float* p, size_t n, float v) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    p[i] = v + 1e-7f * float(i % 1000);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main() {
  float *soa = nullptr, *out = nullptr, *flush = nullptr;
  Particle* aos = nullptr;
  const size_t flush_floats = size_t(64) << 20;  // 256 MiB, more than any L2
  CHECK(cudaMalloc(&soa, size_t(kN) * kFields * sizeof(float)));
  CHECK(cudaMalloc(&aos, size_t(kN) * sizeof(Particle)));
  CHECK(cudaMalloc(&out, size_t(kN) * sizeof(float)));
  CHECK(cudaMalloc(&flush, flush_floats * sizeof(float)));
  fill<<<1024, 256>>>(soa, size_t(kN) * kFields, 1.0f);
  fill<<<1024, 256>>>(reinterpret_cast<float*>(aos), size_t(kN) * kFields, 1.0f);
  CHECK(cudaDeviceSynchronize());
  Fields fields;
  for (int f = 0; f < kFields; ++f) fields.f[f] = soa + size_t(f) * kN;
  const int blocks = (kN + 255) / 256;

  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  const char* names[4] = {"drift_aos (2 of 8 fields)", "drift_soa (2 of 8 fields)", "all_aos (8 of 8 fields)",
                          "all_soa (8 of 8 fields)"};
  // Bytes each needs: the fields it reads and the float it writes, per particle.
  const double needed[4] = {12.0 * kN, 12.0 * kN, 36.0 * kN, 36.0 * kN};
  std::vector<double> ms[4];
  for (int round = 0; round < 35; ++round)
    for (int k = 0; k < 4; ++k) {
      CHECK(cudaMemset(flush, round & 1, flush_floats * sizeof(float)));
      CHECK(cudaEventRecord(a));
      if (k == 0) drift_aos<<<blocks, 256>>>(out, aos, kN);
      if (k == 1) drift_soa<<<blocks, 256>>>(out, fields, kN);
      if (k == 2) all_aos<<<blocks, 256>>>(out, aos, kN);
      if (k == 3) all_soa<<<blocks, 256>>>(out, fields, kN);
      CHECK(cudaEventRecord(b));
      CHECK(cudaEventSynchronize(b));
      float t = 0;
      CHECK(cudaEventElapsedTime(&t, a, b));
      if (round >= 5) ms[k].push_back(t);
    }
  CHECK(cudaGetLastError());
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s, %d particles of %zu bytes, median of %zu runs each\n", prop.name, kN, sizeof(Particle),
              ms[0].size());
  for (int k = 0; k < 4; ++k) {
    const double t = median(ms[k]);
    const double soa_t = median(ms[k | 1]);
    std::printf("%-26s %8.3f ms  %7.0f GB/s of the bytes it needs  %.2fx the structure of arrays' time\n", names[k], t,
                needed[k] / (t * 1e6), t / soa_t);
  }
  return 0;
}
