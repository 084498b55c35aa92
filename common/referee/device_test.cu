// GPU tests of common/: guarded outputs catch unwritten elements and writes
// past the end, the referee's own checks on the GPU see what they must, and
// exported buffers work. (The referee and the timing protocol as a whole are
// tested on every lab in tests/labs_test.cpp.)
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "device_checks.cuh"
#include "lab/lab_api.cuh"

using namespace memlabs;

namespace {

std::string no_device_reason() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) return std::string("no CUDA device: ") + cudaGetErrorString(e);
  if (n == 0) return "no CUDA device";
  return "";
}

#define REQUIRE_GPU()                           \
  do {                                          \
    const std::string why = no_device_reason(); \
    if (!why.empty()) GTEST_SKIP() << why;      \
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

__global__ void write_value(float* out, std::size_t i, float v) { out[i] = v; }

TEST(DeviceChecks, ScanFindsUnwrittenElementsAndBrokenGuards) {
  REQUIRE_GPU();
  OutputBuffer<float> out("out", 5000, {5000});
  out.poison();
  write_n<<<20, 256>>>(out.data(), 4990, 1.0f);
  CUDA_CHECK(cudaDeviceSynchronize());
  OutputScan s = scan_output(out, nullptr);
  EXPECT_EQ(s.unwritten, 10u);
  EXPECT_EQ(s.first_unwritten, 4990u);
  EXPECT_TRUE(s.guard_after_intact);
  write_n<<<20, 256>>>(out.data(), 5001, 1.0f);
  CUDA_CHECK(cudaDeviceSynchronize());
  s = scan_output(out, nullptr);
  EXPECT_EQ(s.unwritten, 0u);
  EXPECT_FALSE(s.guard_after_intact);
  EXPECT_TRUE(s.guard_before_intact);
}

__global__ void set_word(std::uint32_t* p, std::size_t i, std::uint32_t v) { p[i] = v; }

// Every block adds its count once: the places found far apart in many blocks
// sum, and the first is the lowest of them.
TEST(DeviceChecks, ScanSumsThePoisonEveryBlockFoundAndKeepsTheFirst) {
  REQUIRE_GPU();
  const std::size_t n = std::size_t(1) << 22;
  OutputBuffer<float> out("out", n, {n});
  out.poison();  // the guards get their canary here
  write_n<<<static_cast<unsigned>(n / 256), 256>>>(out.data(), static_cast<int>(n), 1.0f);
  auto* words = reinterpret_cast<std::uint32_t*>(out.data());
  for (std::size_t i : {n - 1, std::size_t(77), std::size_t(1234567), std::size_t(3000001)})
    set_word<<<1, 1>>>(words, i, kPoison32);
  CUDA_CHECK(cudaDeviceSynchronize());
  const OutputScan s = scan_output(out, nullptr);
  EXPECT_EQ(s.unwritten, 4u);
  EXPECT_EQ(s.first_unwritten, 77u);
  EXPECT_TRUE(s.guard_before_intact);
  EXPECT_TRUE(s.guard_after_intact);
}

// A timing scans every candidate output while it still holds only the poison
// (timing_slots.cpp): 64 Mi poisoned floats must take a pass over memory, not
// an atomic each on one counter (which took about 0.2 s a scan on an H200).
TEST(DeviceChecks, AFullyPoisonedOutputScansAtMemorySpeed) {
  REQUIRE_GPU();
  const std::size_t n = std::size_t(1) << 26;
  OutputBuffer<float> out("out", n, {n});
  out.poison();
  CUDA_CHECK(cudaDeviceSynchronize());
  scan_output(out, nullptr);  // the kernels loaded, the counters allocated
  // The fastest of five: another process's kernels sharing the GPU (the GPU
  // suite runs side by side) can stretch one scan, not every one.
  double fastest_ms = 1e9;
  for (int i = 0; i < 5; ++i) {
    const auto begin = std::chrono::steady_clock::now();
    const OutputScan s = scan_output(out, nullptr);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin).count();
    fastest_ms = std::min(fastest_ms, ms);
    EXPECT_EQ(s.unwritten, n);
    EXPECT_EQ(s.first_unwritten, 0u);
  }
  EXPECT_LT(fastest_ms, 25.0) << "a 256 MB scan should take well under a millisecond of memory traffic";
}

TEST(DeviceChecks, CompareCountsWhatIsOutsideTheTolerance) {
  REQUIRE_GPU();
  OutputBuffer<float> want("out", 1000, {1000}, Tolerance{0, 1e-3}), got("out", 1000, {1000}, Tolerance{0, 1e-3});
  write_n<<<4, 256>>>(want.data(), 1000, 1.0f);
  write_n<<<4, 256>>>(got.data(), 1000, 1.0005f);  // within 2 x 1e-3
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(compare_outputs(want, got, 2.0, nullptr).mismatches, 0u);
  write_value<<<1, 1>>>(got.data(), 777, 2.0f);
  CUDA_CHECK(cudaDeviceSynchronize());
  const DeviceComparison c = compare_outputs(want, got, 2.0, nullptr);
  EXPECT_EQ(c.mismatches, 1u);
  EXPECT_EQ(c.first, 777u);
  EXPECT_EQ(c.got, 2.0);
  got.poison();  // NaN never compares equal
  EXPECT_EQ(compare_outputs(want, got, 2.0, nullptr).mismatches, 1000u);
}

TEST(DeviceChecks, DigestChangesWithAnyByte) {
  REQUIRE_GPU();
  DeviceBuffer<float> d(1001);
  fill_uniform(d.data(), d.size(), 7, -1, 1);
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto before = device_digest(d.data(), d.bytes(), nullptr);
  EXPECT_EQ(device_digest(d.data(), d.bytes(), nullptr), before);
  write_value<<<1, 1>>>(d.data(), 1000, 0.5f);  // the last word, in the tail past whole 8-byte words
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_NE(device_digest(d.data(), d.bytes(), nullptr), before);
}

// The digest is the same sum however the GPU adds it up: here against the
// host's, over many blocks' worth of words (each block adds its threads' sums
// before its one atomic) and a tail of bytes.
TEST(DeviceChecks, DigestIsTheHostsSumOverEveryWordAndByte) {
  REQUIRE_GPU();
  const std::size_t count = 4097 * 1024 + 3;  // floats: more words than 4096 blocks of 256 threads, and a tail
  DeviceBuffer<float> d(count);
  fill_uniform(d.data(), d.size(), 11, -1, 1);
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<float> host = uniform_host(count, 11, -1, 1);
  const auto* bytes = reinterpret_cast<const unsigned char*>(host.data());
  const std::size_t total = count * sizeof(float), words = total / 8;
  std::uint64_t want = 0;
  for (std::size_t i = 0; i < words; ++i) {
    std::uint64_t w = 0;
    std::memcpy(&w, bytes + 8 * i, 8);
    want += mix64(w ^ mix64(i));
  }
  for (std::size_t i = 8 * words; i < total; ++i) want += mix64((std::uint64_t(bytes[i]) << 56) ^ mix64(i));
  EXPECT_EQ(device_digest(d.data(), d.bytes(), nullptr), want);
}

TEST(SharedMemory, ExportedBuffersAreUsableHereAndHandOverTheirDescriptors) {
  REQUIRE_GPU();
  std::vector<SharedAllocation> shared;
  {
    ExportScope scope;
    DeviceBuffer<float> a(3000);
    OutputBuffer<float> out("out", 100, {100});
    fill_uniform(a.data(), a.size(), 9, 0, 1);
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_EQ(a.copy_to_host(), uniform_host(3000, 9, 0, 1));
    shared = scope.take();
    ASSERT_EQ(shared.size(), 2u);
    for (const auto& s : shared) {
      EXPECT_GE(s.fd, 0);
      EXPECT_GE(s.bytes, 100 * sizeof(float));  // rounded up to the allocation granularity
    }
  }
  for (const auto& s : shared) ::close(s.fd);
  EXPECT_EQ(memory_role(), MemoryRole::local);
}

__global__ void store_at(float* p, long long offset, float v) { p[offset] = v; }
__global__ void load_at(const float* p, long long offset, float* out) { *out = p[offset]; }

TEST(SharedMemory, ExportedBuffersLieBetweenGuardZonesThatReadAsNaN) {
  REQUIRE_GPU();
  ExportScope scope;
  DeviceBuffer<float> a(1001);
  DeviceBuffer<float> seen(1);
  fill_uniform(a.data(), a.size(), 3, 0, 1);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_TRUE(guard_zones_intact(a.data()));
  for (long long offset : {-1LL, 1001LL, 1004LL, -16384LL}) {
    load_at<<<1, 1>>>(a.data(), offset, seen.data());
    EXPECT_TRUE(std::isnan(seen.copy_to_host()[0])) << "a read at " << offset;
  }
  load_at<<<1, 1>>>(a.data(), 1000, seen.data());
  EXPECT_FALSE(std::isnan(seen.copy_to_host()[0]));
  EXPECT_TRUE(guard_zones_intact(a.data()));  // reads leave the zones as they were
  store_at<<<1, 1>>>(a.data(), 1001, 0.0f);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_FALSE(guard_zones_intact(a.data()));
  for (const auto& s : scope.take()) ::close(s.fd);
}

TEST(SharedMemory, AWriteJustBeforeAnExportedBufferBreaksItsGuardZone) {
  REQUIRE_GPU();
  ExportScope scope;
  DeviceBuffer<float> a(7);
  store_at<<<1, 1>>>(a.data(), -1, 0.0f);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_FALSE(guard_zones_intact(a.data()));
  for (const auto& s : scope.take()) ::close(s.fd);
}

TEST(SharedMemory, CudaMallocedBuffersHaveNoGuardZonesToCheck) {
  REQUIRE_GPU();
  DeviceBuffer<float> a(7);
  EXPECT_TRUE(guard_zones_intact(a.data()));
}

}  // namespace

LabDefinition memlabs::define_lab() { return {}; }
