// GPU tests of common/: guarded outputs catch unwritten elements and writes
// past the end, the L2 flush and timers work, and an A/A timing is ~1.
#include <gtest/gtest.h>

#include "lab_api.cuh"
#include "timing.cuh"

using namespace memlabs;

namespace {

std::string no_device_reason() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) return std::string("no CUDA device: ") + cudaGetErrorString(e);
  if (n == 0) return "no CUDA device";
  return "";
}

#define REQUIRE_GPU()                                   \
  do {                                                  \
    const std::string why = no_device_reason();         \
    if (!why.empty()) GTEST_SKIP() << why;              \
  } while (0)

__global__ void write_n(float* out, int n, float v) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = v;
}

TEST(OutputBuffer, FullyWrittenOutputIsClean) {
  REQUIRE_GPU();
  OutputBuffer<float> out("out", 1000, {1000});
  out.poison();
  write_n<<<4, 256>>>(out.data(), 1000, 1.0f);
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto s = out.snapshot();
  EXPECT_EQ(s.unwritten, 0u);
  EXPECT_TRUE(s.guard_before_intact);
  EXPECT_TRUE(s.guard_after_intact);
}

TEST(OutputBuffer, CountsUnwrittenElements) {
  REQUIRE_GPU();
  OutputBuffer<float> out("out", 1000, {1000});
  out.poison();
  write_n<<<4, 256>>>(out.data(), 990, 1.0f);
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto s = out.snapshot();
  EXPECT_EQ(s.unwritten, 10u);
  EXPECT_EQ(s.first_unwritten, 990u);
}

TEST(OutputBuffer, DetectsAWritePastTheEnd) {
  REQUIRE_GPU();
  OutputBuffer<float> out("out", 1000, {1000});
  out.poison();
  write_n<<<4, 256>>>(out.data(), 1001, 1.0f);
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto s = out.snapshot();
  EXPECT_EQ(s.unwritten, 0u);
  EXPECT_FALSE(s.guard_after_intact);
}

TEST(Random, DeviceAndHostAgree) {
  REQUIRE_GPU();
  DeviceBuffer<float> d(4099);
  fill_uniform(d.data(), d.size(), 42, -1.0f, 1.0f);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(d.copy_to_host(), uniform_host(4099, 42, -1.0f, 1.0f));
  EXPECT_NE(uniform_host(8, 1, 0, 1), uniform_host(8, 2, 0, 1));
}

// Baseline and candidate are the same kernel: the ratio must come out ~1.
class CopyTwice : public Problem {
 public:
  explicit CopyTwice(std::size_t n) : in_(n), out_("out", n, {static_cast<std::int64_t>(n)}) {
    fill_uniform(in_.data(), n, 3, 0, 1);
  }
  void run(Variant, cudaStream_t s) override {
    CUDA_CHECK(cudaMemcpyAsync(out_.data(), in_.data(), in_.bytes(), cudaMemcpyDeviceToDevice, s));
  }
  std::vector<Output*> outputs() override { return {&out_}; }
  double bytes_moved() const override { return 2.0 * in_.bytes(); }
  std::vector<std::vector<double>> oracle() const override { return {}; }

 private:
  DeviceBuffer<float> in_;
  OutputBuffer<float> out_;
};

TEST(Timing, IdenticalVariantsGiveARatioNearOne) {
  REQUIRE_GPU();
  CopyTwice p(64u << 20);
  TimingOptions o;
  o.cap_s = 1.0;
  const auto r = time_interleaved(p, o, nullptr);
  const auto speedup = median_interval(r.speedup);
  EXPECT_GE(r.rounds, o.min_rounds);
  EXPECT_NEAR(speedup.median, 1.0, 0.05);
  EXPECT_NEAR(median_interval(r.aa).median, 1.0, 0.05);
  ASSERT_TRUE(r.memcpy_available);
  EXPECT_NEAR(median_interval(r.fraction).median, 1.0, 0.1);
}

}  // namespace

LabDefinition memlabs::define_lab() { return {}; }
