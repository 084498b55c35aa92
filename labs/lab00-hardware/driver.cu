// lab00 problem definition: the device-facts case, the copy cases, the naive
// baseline, bytes moved, oracle.
#include <cstdio>
#include <string>

#include "lab.cuh"
#include "lab_api.cuh"

namespace {

// ---- step 1: device facts ----

// One reported value against the runtime's own answer, with the unit slips
// students make most often named in the detail.
memlabs::Fact compare_fact(const char* name, const char* attribute_name, long long want, long long got,
                           const char* unit) {
  memlabs::Fact f;
  f.name = name;
  f.ok = got == want;
  f.detail = "the runtime reports " + std::to_string(want) + unit + " (" + attribute_name + "), you reported " +
             std::to_string(got);
  if (f.ok) return f;
  if (got == 0) f.detail += ": not filled in yet";
  else if (got * 1024 == want) f.detail += ": that is the value in KiB, the field is in bytes";
  else if (got * 8 == want) f.detail += ": that is the value in bytes, the field is in bits";
  return f;
}

// The student's answers travel as facts whose detail is the number reported;
// the referee compares each with its own runtime's answer (judge), so the
// verdict never rests on a comparison made in the student's process.
class Properties : public memlabs::Problem {
 public:
  void fill(std::uint64_t, std::uint64_t) override {}

  void run(memlabs::Variant v, cudaStream_t) override {
    if (v != memlabs::Variant::candidate) return;
    CUDA_CHECK(cudaGetDevice(&device_));
    reported_ = DeviceFacts{};
    CANDIDATE_ONLY(query_device_facts(device_, &reported_));
  }

  std::vector<memlabs::Output*> outputs() override { return {}; }
  double bytes_moved() const override { return 0; }
  std::vector<std::vector<double>> oracle() const override { return {}; }

  std::vector<memlabs::Fact> facts() override {
    const DeviceFacts& r = reported_;
    const auto as_fact = [](const char* name, long long value) { return memlabs::Fact{name, false, std::to_string(value)}; };
    return {as_fact("sm_count", r.sm_count),
            as_fact("warp_size", r.warp_size),
            as_fact("l2_bytes", r.l2_bytes),
            as_fact("shared_per_block", static_cast<long long>(r.shared_per_block)),
            as_fact("shared_per_sm", static_cast<long long>(r.shared_per_sm)),
            as_fact("registers_per_sm", r.registers_per_sm),
            as_fact("max_threads_per_sm", r.max_threads_per_sm),
            as_fact("memory_bus_bits", r.memory_bus_bits),
            as_fact("constant_bytes", static_cast<long long>(r.constant_bytes)),
            as_fact("managed_memory", r.managed_memory ? 1 : 0)};
  }

  // Each reported number against cudaDeviceGetAttribute, asked here in the referee.
  std::vector<memlabs::Fact> judge(std::vector<memlabs::Fact> reported) override {
    int device = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    const auto attr = [device](cudaDeviceAttr a) {
      int value = 0;
      CUDA_CHECK(cudaDeviceGetAttribute(&value, a, device));
      return static_cast<long long>(value);
    };
    const auto got = [&](const char* name) -> long long {
      for (const auto& f : reported)
        if (f.name == name) {
          try {
            return std::stoll(f.detail);
          } catch (const std::exception&) {
            return 0;
          }
        }
      return 0;
    };
    std::vector<memlabs::Fact> f = {
        compare_fact("sm_count", "cudaDevAttrMultiProcessorCount", attr(cudaDevAttrMultiProcessorCount),
                     got("sm_count"), ""),
        compare_fact("warp_size", "cudaDevAttrWarpSize", attr(cudaDevAttrWarpSize), got("warp_size"), ""),
        compare_fact("l2_bytes", "cudaDevAttrL2CacheSize", attr(cudaDevAttrL2CacheSize), got("l2_bytes"), " bytes"),
        compare_fact("shared_per_block", "cudaDevAttrMaxSharedMemoryPerBlock",
                     attr(cudaDevAttrMaxSharedMemoryPerBlock), got("shared_per_block"), " bytes"),
        compare_fact("shared_per_sm", "cudaDevAttrMaxSharedMemoryPerMultiprocessor",
                     attr(cudaDevAttrMaxSharedMemoryPerMultiprocessor), got("shared_per_sm"), " bytes"),
        compare_fact("registers_per_sm", "cudaDevAttrMaxRegistersPerMultiprocessor",
                     attr(cudaDevAttrMaxRegistersPerMultiprocessor), got("registers_per_sm"), ""),
        compare_fact("max_threads_per_sm", "cudaDevAttrMaxThreadsPerMultiProcessor",
                     attr(cudaDevAttrMaxThreadsPerMultiProcessor), got("max_threads_per_sm"), ""),
        compare_fact("memory_bus_bits", "cudaDevAttrGlobalMemoryBusWidth", attr(cudaDevAttrGlobalMemoryBusWidth),
                     got("memory_bus_bits"), " bits"),
        compare_fact("constant_bytes", "cudaDevAttrTotalConstantMemory", attr(cudaDevAttrTotalConstantMemory),
                     got("constant_bytes"), " bytes"),
        compare_fact("managed_memory", "cudaDevAttrManagedMemory", attr(cudaDevAttrManagedMemory),
                     got("managed_memory") ? 1 : 0, ""),
    };
    // The three shared-memory limits are easy to mix up.
    const auto per_block = attr(cudaDevAttrMaxSharedMemoryPerBlock);
    const auto optin = attr(cudaDevAttrMaxSharedMemoryPerBlockOptin);
    memlabs::Fact& block = f[3];
    memlabs::Fact& sm = f[4];
    if (!block.ok && got("shared_per_block") == optin)
      block.detail += ": that is the opt-in maximum (cudaDevAttrMaxSharedMemoryPerBlockOptin), not the default";
    if (!sm.ok && got("shared_per_sm") == per_block)
      sm.detail += ": that is the limit for one block, not the whole SM";
    return f;
  }

 private:
  int device_ = 0;
  DeviceFacts reported_{};
};

// ---- steps 2 and 3: the copy ----

// The baseline: one element per thread, a grid sized to n. Correct for any n,
// but each thread has a single 4-byte load in flight.
__global__ void copy_one_per_thread(float* __restrict__ dst, const float* __restrict__ src, size_t n) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) dst[i] = src[i];
}

class Copy : public memlabs::Problem {
 public:
  explicit Copy(size_t n)
      : n_(n), src_(n), dst_("dst", n, {static_cast<std::int64_t>(n)}, memlabs::Tolerance{0, 0}) {}

  void fill(std::uint64_t seed, std::uint64_t) override {
    seed_ = seed;
    memlabs::fill_uniform(src_.data(), n_, seed, -1.0f, 1.0f);
  }

  void run(memlabs::Variant v, cudaStream_t s) override {
    if (v == memlabs::Variant::candidate) {
      CANDIDATE_ONLY(launch_copy(dst_.data(), src_.data(), n_, s));
    } else {
      constexpr unsigned kThreads = 256;
      const unsigned blocks = static_cast<unsigned>((n_ + kThreads - 1) / kThreads);
      copy_one_per_thread<<<blocks, kThreads, 0, s>>>(dst_.data(), src_.data(), n_);
    }
  }

  std::vector<memlabs::Output*> outputs() override { return {&dst_}; }
  std::vector<memlabs::Input> inputs() const override { return {{"src", src_.data(), src_.bytes()}}; }

  // Every element read once and written once: exactly what cudaMemcpy moves.
  double bytes_moved() const override { return 2.0 * static_cast<double>(n_) * sizeof(float); }

  std::vector<std::vector<double>> oracle() const override {
    const auto src = memlabs::uniform_host(n_, seed_, -1.0f, 1.0f);
    return {std::vector<double>(src.begin(), src.end())};
  }

 private:
  size_t n_;
  std::uint64_t seed_ = 0;
  memlabs::DeviceBuffer<float> src_;
  memlabs::OutputBuffer<float> dst_;
};

// "1000003" is 1000003 floats; a trailing M multiplies by 2^20.
size_t parse_length(const std::string& name) {
  unsigned long long n = 0;
  char suffix = 0;
  const int got = std::sscanf(name.c_str(), "%llu%c", &n, &suffix);
  if (got == 2 && suffix == 'M') n <<= 20;
  else if (got != 1 || n == 0) throw std::invalid_argument("case name is not a length: " + name);
  return static_cast<size_t>(n);
}

std::unique_ptr<memlabs::Problem> make(const std::string& name) {
  if (name == "properties") return std::make_unique<Properties>();
  return std::make_unique<Copy>(parse_length(name));
}

}  // namespace

memlabs::LabDefinition memlabs::define_lab() {
  return {{{"properties", "the current device's facts, reported by query_device_facts"},
           {"1", "1 float: no whole float4 at all"},
           {"3", "3 floats: the largest length with no whole float4"},
           {"7", "7 floats: one float4 and three left over"},
           {"4096", "4096 floats: whole float4s only"},
           {"1000003", "1000003 floats: n % 4 == 3"},
           {"128M", "128 Mi floats (512 MiB each way): the timing size"}},
          make};
}
