// lab08 problem definition: cases, inputs, the atomic baseline, CUB, bytes moved, oracle.
//
// CUB is the referee's alone: its code is compiled under MEMLABS_REFEREE, so
// that only the referee's trusted server, which times it, holds it. The
// submission's program neither contains nor links it, so kernel.cu cannot
// hand the dot product to it (and may not include it: builder_checks.cpp).
#ifdef MEMLABS_REFEREE
#include <cub/cub.cuh>
#include <cuda/std/functional>
#include <thrust/iterator/counting_iterator.h>
#endif

#include <algorithm>
#include <cstdlib>
#include <string>

#include "lab.cuh"
#include "lab_api.cuh"

namespace {

// The baseline, and the skeleton's starting point: every product is its own
// atomicAdd on the one result. Correct in exact arithmetic, but the atomics on
// one address are applied one at a time, so the whole GPU waits on one queue.
__global__ void dot_atomic(float* result, const float* a, const float* b, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(result, a[i] * b[i]);
}

// The two inputs a case can have.
//  - uniform: a and b in [0.5, 1). Every product is positive, so there is no
//    cancellation and every summation order lands close to the exact sum; and
//    every product is at least 0.25, so one element missing or counted twice
//    shows clearly at the small sizes.
//  - bits: a and b each 0 or 1. Every product and every partial sum is a whole
//    number, and the total (about n / 4) stays below 2^24, where float holds
//    every integer exactly: the sum comes out exactly the same in any order.
//    The timing size uses this, because the runner first checks the candidate
//    against the baseline there, and the baseline's one-at-a-time float sum of
//    uniform inputs drifts by far more than any tolerance (see the README).
enum class Inputs { uniform, bits };

constexpr float kLow = 0.5f, kHigh = 1.0f;

__host__ __device__ inline float bit_at(std::uint64_t seed, std::uint64_t i) {
  return static_cast<float>(memlabs::uint_at(seed, i) & 1u);
}

__global__ void fill_bits(float* out, std::size_t n, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    out[i] = bit_at(seed, i);
}

#ifdef MEMLABS_REFEREE
// CUB reads the products through this: element i of the reduced sequence.
struct Product {
  const float* a;
  const float* b;
  __device__ float operator()(int i) const { return a[i] * b[i]; }
};
#endif

// Tolerance on the one output, relative to the exact (float64) sum. All
// products are >= 0, so the condition number of the sum is 1 and only the
// rounding of the additions matters: each one is off by at most 2^-24 of the
// running sum. A tree adds each product into about log2(n) partial sums; the
// blocks' totals then reach *result one atomicAdd after another, where the
// roundings behave like a random walk, about sqrt(blocks) * 2^-24. At
// n = 10^7 with one atomic per warp or per block that is 1e-5 or less (a
// float model of the kernels, on the CPU, gives 1e-6 to 1e-5), so 1e-4 leaves
// a tenfold margin. It still rejects a missing or doubled product at n <= 257
// (at least 0.25 of a sum below 260: 1e-3), and it rejects a one-at-a-time
// float sum of 10^7 products, which drifts by about 3e-3 (see the README).
constexpr memlabs::Tolerance kTolerance{1e-4, 0};

class Dot : public memlabs::Problem {
 public:
  Dot(int n, Inputs inputs) : n_(n), inputs_(inputs), a_(n), b_(n), result_("result", 1, {1}, kTolerance) {}

  void fill(std::uint64_t seed, std::uint64_t) override {
    seed_a_ = seed;
    seed_b_ = memlabs::mix64(seed);
    if (inputs_ == Inputs::uniform) {
      memlabs::fill_uniform(a_.data(), a_.size(), seed_a_, kLow, kHigh);
      memlabs::fill_uniform(b_.data(), b_.size(), seed_b_, kLow, kHigh);
    } else {
      fill_bits<<<1024, 256>>>(a_.data(), a_.size(), seed_a_);
      CUDA_CHECK_LAUNCH();
      fill_bits<<<1024, 256>>>(b_.data(), b_.size(), seed_b_);
      CUDA_CHECK_LAUNCH();
    }
  }

  void run(memlabs::Variant v, cudaStream_t s) override {
    // Both variants add into *result with atomics: it must start at 0 on every
    // launch, or the second timed launch would report twice the sum.
    CUDA_CHECK(cudaMemsetAsync(result_.data(), 0, sizeof(float), s));
    if (v == memlabs::Variant::candidate) {
      CANDIDATE_ONLY(launch_dot(result_.data(), a_.data(), b_.data(), n_, s));
    } else {
      const int blocks = (n_ + BLOCK_SIZE - 1) / BLOCK_SIZE;
      dot_atomic<<<blocks, BLOCK_SIZE, 0, s>>>(result_.data(), a_.data(), b_.data(), n_);
    }
  }

  std::vector<memlabs::Output*> outputs() override { return {&result_}; }
  std::vector<memlabs::Input> inputs() const override {
    return {{"a", a_.data(), a_.bytes()}, {"b", b_.data(), b_.bytes()}};
  }

  // Each element of both vectors read once; the 4-byte result is negligible.
  double bytes_moved() const override { return 2.0 * static_cast<double>(n_) * sizeof(float); }

  std::vector<std::vector<double>> oracle() const override {
    double sum = 0;
    if (inputs_ == Inputs::uniform) {
      const auto a = memlabs::uniform_host(n_, seed_a_, kLow, kHigh);
      const auto b = memlabs::uniform_host(n_, seed_b_, kLow, kHigh);
      // The product of two floats is exact in double: only the sum is rounded here.
      for (int i = 0; i < n_; ++i) sum += static_cast<double>(a[i]) * b[i];
    } else {
      for (int i = 0; i < n_; ++i) sum += static_cast<double>(bit_at(seed_a_, i)) * bit_at(seed_b_, i);
    }
    return {{sum}};
  }

  // The same dot product by the library, timed alongside; its output is not
  // checked, so it goes to a scratch float of its own.
  std::string library_name() const override { return "CUB"; }
#ifdef MEMLABS_REFEREE
  // CUB's scratch is sized and allocated once, where the library runs (the
  // referee's trusted server), so a timed run_library only launches.
  void run_library(cudaStream_t s) override {
    if (library_result_.size() == 0) {
      library_result_ = memlabs::DeviceBuffer<float>(1);
      CUDA_CHECK(library_call(nullptr, nullptr));
      library_scratch_ = memlabs::DeviceBuffer<unsigned char>(std::max<std::size_t>(library_scratch_bytes_, 1));
    }
    CUDA_CHECK(library_call(library_scratch_.data(), s));
  }
#endif

 private:
#ifdef MEMLABS_REFEREE
  // A null scratch pointer only asks CUB how much scratch it needs.
  cudaError_t library_call(void* scratch, cudaStream_t s) {
    return cub::DeviceReduce::TransformReduce(scratch, library_scratch_bytes_, thrust::counting_iterator<int>(0),
                                              library_result_.data(), n_, cuda::std::plus<float>{},
                                              Product{a_.data(), b_.data()}, 0.0f, s);
  }
#endif

  int n_;
  Inputs inputs_;
  std::uint64_t seed_a_ = 0, seed_b_ = 0;
  memlabs::DeviceBuffer<float> a_, b_;
  memlabs::OutputBuffer<float> result_;
#ifdef MEMLABS_REFEREE
  memlabs::DeviceBuffer<float> library_result_;
  memlabs::DeviceBuffer<unsigned char> library_scratch_;
  std::size_t library_scratch_bytes_ = 0;
#endif
};

struct CaseSpec {
  const char* name;
  int n;
  Inputs inputs;
  const char* description;
};

const CaseSpec kCases[] = {
    {"1", 1, Inputs::uniform, "a single product"},
    {"255", 255, Inputs::uniform, "one block minus one thread"},
    {"257", 257, Inputs::uniform, "one block and one element: a second block with one product"},
    {"10000003", 10000003, Inputs::uniform, "10^7 + 3: many blocks, n % 4 = 3"},
    {"33554432", 33554432, Inputs::bits,
     "2^25 (two 128 MiB vectors) of 0s and 1s: the timing size, exact in any summation order"},
};

std::unique_ptr<memlabs::Problem> make(const std::string& name) {
  for (const auto& c : kCases)
    if (name == c.name) return std::make_unique<Dot>(c.n, c.inputs);
  throw std::invalid_argument("no case named " + name);
}

}  // namespace

memlabs::LabDefinition memlabs::define_lab() {
  std::vector<CaseInfo> cases;
  for (const auto& c : kCases) cases.push_back({c.name, c.description});
  return {cases, make};
}
