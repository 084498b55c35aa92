#include <cmath>

#include "device_checks.cuh"
#include "random.cuh"

namespace memlabs {
namespace {

constexpr unsigned kThreads = 256;

unsigned blocks_for(std::size_t n) {
  return static_cast<unsigned>(std::min<std::size_t>(std::max<std::size_t>((n + kThreads - 1) / kThreads, 1), 4096));
}

struct Counters {
  unsigned long long count;
  unsigned long long first;
};

template <class Word>
__global__ void count_equal(const Word* p, std::size_t n, Word value, Counters* c) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    if (p[i] == value) {
      atomicAdd(&c->count, 1ull);
      atomicMin(&c->first, static_cast<unsigned long long>(i));
    }
}

template <class Word>
__global__ void count_different(const Word* p, std::size_t n, Word value, Counters* c) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    if (p[i] != value) atomicAdd(&c->count, 1ull);
}

__device__ bool within(double want, double got, double rtol, double atol, bool is_float) {
  if (!is_float) return want == got;
  if (isnan(got) || isnan(want)) return false;
  if (isinf(want) || isinf(got)) return want == got;
  return fabs(got - want) <= atol + rtol * fabs(want);
}

template <class T>
__global__ void count_mismatches(const T* want, const T* got, std::size_t n, double rtol, double atol, bool is_float,
                                 Counters* c) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    if (!within(static_cast<double>(want[i]), static_cast<double>(got[i]), rtol, atol, is_float)) {
      atomicAdd(&c->count, 1ull);
      atomicMin(&c->first, static_cast<unsigned long long>(i));
    }
}

__global__ void digest_words(const std::uint64_t* p, std::size_t n, unsigned long long* sum) {
  unsigned long long local = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    local += mix64(p[i] ^ mix64(i));
  atomicAdd(sum, local);
}

__global__ void digest_bytes(const unsigned char* p, std::size_t n, std::size_t offset, unsigned long long* sum) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) atomicAdd(sum, static_cast<unsigned long long>(mix64((std::uint64_t(p[i]) << 56) ^ mix64(offset + i))));
}

// A small counter block in device memory, read back after the kernels.
class DeviceCounters {
 public:
  DeviceCounters() : buffer_(sizeof(Counters)) {}
  Counters* reset(cudaStream_t s, unsigned long long first) {
    const Counters init{0, first};
    CUDA_CHECK(cudaMemcpyAsync(buffer_.data(), &init, sizeof init, cudaMemcpyHostToDevice, s));
    return reinterpret_cast<Counters*>(buffer_.data());
  }
  Counters read(cudaStream_t s) {
    Counters c{};
    CUDA_CHECK(cudaMemcpyAsync(&c, buffer_.data(), sizeof c, cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    return c;
  }

 private:
  DeviceBuffer<unsigned char> buffer_;
};

template <class Word>
OutputScan scan_words(const Output& out, cudaStream_t s, Word poison, Word canary) {
  OutputScan r;
  DeviceCounters counters;
  const Word* base = reinterpret_cast<const Word*>(out.storage());
  const std::size_t g = out.guard_words(), n = out.count();
  Counters* c = counters.reset(s, n);
  count_equal<Word><<<blocks_for(n), kThreads, 0, s>>>(base + g, n, poison, c);
  CUDA_CHECK_LAUNCH();
  Counters got = counters.read(s);
  r.unwritten = got.count;
  r.first_unwritten = got.count ? got.first : n;
  c = counters.reset(s, 0);
  count_different<Word><<<blocks_for(g), kThreads, 0, s>>>(base, g, canary, c);
  CUDA_CHECK_LAUNCH();
  r.guard_before_intact = counters.read(s).count == 0;
  c = counters.reset(s, 0);
  count_different<Word><<<blocks_for(g), kThreads, 0, s>>>(base + g + n, g, canary, c);
  CUDA_CHECK_LAUNCH();
  r.guard_after_intact = counters.read(s).count == 0;
  return r;
}

template <class T>
DeviceComparison compare_typed(const Output& want, const Output& got, double scale, cudaStream_t s) {
  DeviceComparison r;
  DeviceCounters counters;
  const std::size_t n = want.count();
  Counters* c = counters.reset(s, n);
  const T* w = static_cast<const T*>(want.raw_data());
  const T* g = static_cast<const T*>(got.raw_data());
  count_mismatches<T><<<blocks_for(n), kThreads, 0, s>>>(w, g, n, scale * want.tolerance().rtol,
                                                         scale * want.tolerance().atol, dtype_is_float(want.type()), c);
  CUDA_CHECK_LAUNCH();
  const Counters got_counts = counters.read(s);
  r.mismatches = got_counts.count;
  r.first = got_counts.count ? got_counts.first : n;
  if (r.mismatches) {
    T a{}, b{};
    CUDA_CHECK(cudaMemcpy(&a, w + r.first, sizeof(T), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&b, g + r.first, sizeof(T), cudaMemcpyDeviceToHost));
    r.expected = static_cast<double>(a);
    r.got = static_cast<double>(b);
  }
  return r;
}

}  // namespace

OutputScan scan_output(const Output& out, cudaStream_t stream) {
  if (dtype_size(out.type()) == 4) return scan_words<std::uint32_t>(out, stream, kPoison32, kCanary32);
  return scan_words<std::uint64_t>(out, stream, kPoison64, kCanary64);
}

DeviceComparison compare_outputs(const Output& expected, const Output& got, double scale, cudaStream_t s) {
  if (expected.type() != got.type() || expected.count() != got.count())
    throw std::logic_error("compare_outputs: outputs of different shapes");
  switch (expected.type()) {
    case DType::f32:
      return compare_typed<float>(expected, got, scale, s);
    case DType::f64:
      return compare_typed<double>(expected, got, scale, s);
    case DType::i32:
      return compare_typed<std::int32_t>(expected, got, scale, s);
    case DType::u32:
      return compare_typed<std::uint32_t>(expected, got, scale, s);
    case DType::i64:
      return compare_typed<std::int64_t>(expected, got, scale, s);
    case DType::u64:
      return compare_typed<std::uint64_t>(expected, got, scale, s);
  }
  return {};
}

std::uint64_t device_digest(const void* data, std::size_t bytes, cudaStream_t s) {
  DeviceBuffer<unsigned long long> sum(1);
  CUDA_CHECK(cudaMemsetAsync(sum.data(), 0, sizeof(unsigned long long), s));
  const std::size_t words = bytes / 8, tail = bytes % 8;
  if (words) {
    digest_words<<<blocks_for(words), kThreads, 0, s>>>(static_cast<const std::uint64_t*>(data), words, sum.data());
    CUDA_CHECK_LAUNCH();
  }
  if (tail) {
    digest_bytes<<<1, 8, 0, s>>>(static_cast<const unsigned char*>(data) + 8 * words, tail, 8 * words, sum.data());
    CUDA_CHECK_LAUNCH();
  }
  unsigned long long out = 0;
  CUDA_CHECK(cudaMemcpyAsync(&out, sum.data(), sizeof out, cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  return out;
}

}  // namespace memlabs
