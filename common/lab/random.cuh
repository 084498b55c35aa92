// Seeded inputs. Every value is a pure function of (seed, index), computed the
// same way on the GPU (to fill large inputs fast) and on the CPU (for the
// float64 oracle), so both sides agree without copying inputs around.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "cuda_check.cuh"

namespace memlabs {

// splitmix64 finaliser: a good 64-bit mix, cheap on both host and device.
__host__ __device__ inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// The host seed of a grade's correctness run, from its seed: the program is sent
// this one (for the host-side inputs it makes itself), never the seed of the
// device inputs, so it cannot rebuild the driver's own answer (Problem::oracle
// works from the device seed). A sum of two mixes, which no single inverse
// undoes; --seed still repeats every input.
inline std::uint64_t host_seed_of(std::uint64_t seed) { return mix64(seed) + mix64(seed ^ 0x686f73745f736565ull); }

// Uniform in [lo, hi), with 24 random bits: exactly representable as float.
__host__ __device__ inline float uniform_at(std::uint64_t seed, std::uint64_t i, float lo, float hi) {
  const std::uint64_t bits = mix64(seed ^ mix64(i)) >> 40;
  const float unit = static_cast<float>(bits) * (1.0f / 16777216.0f);
  return lo + (hi - lo) * unit;
}

__host__ __device__ inline std::uint32_t uint_at(std::uint64_t seed, std::uint64_t i) {
  return static_cast<std::uint32_t>(mix64(seed ^ mix64(i)) >> 32);
}

// The uniform_at values of indices [0, n), written on the GPU (support_kernels.cu).
void fill_uniform(float* device_out, std::size_t n, std::uint64_t seed, float lo, float hi,
                  cudaStream_t stream = nullptr);

inline std::vector<float> uniform_host(std::size_t n, std::uint64_t seed, float lo, float hi) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = uniform_at(seed, i, lo, hi);
  return v;
}

}  // namespace memlabs
