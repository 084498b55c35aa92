#include <cmath>

#include "device_checks.cuh"
#include "lab/random.cuh"

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

// The block's values combined by `Op`: each warp's by shuffles, then the
// warps' by thread 0, whose result alone is the block's. Every thread of the
// block must call it. The barrier first keeps a second call from overwriting
// the warps' values while thread 0 still reads the first call's.
struct Sum {
  __device__ unsigned long long operator()(unsigned long long a, unsigned long long b) const { return a + b; }
};
struct Min {
  __device__ unsigned long long operator()(unsigned long long a, unsigned long long b) const { return min(a, b); }
};
template <class Op>
__device__ unsigned long long block_combine(unsigned long long v, Op op) {
  for (int offset = 16; offset > 0; offset /= 2) v = op(v, __shfl_down_sync(0xffffffffu, v, offset));
  __shared__ unsigned long long per_warp[kThreads / 32];
  __syncthreads();
  if (threadIdx.x % 32 == 0) per_warp[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x == 0)
    for (unsigned w = 1; w < blockDim.x / 32; ++w) v = op(v, per_warp[w]);
  return v;
}

// A block's count and lowest index, summed and taken into `c` with one atomic
// each. A scan meets a fully poisoned output at every candidate request (it
// must still be untouched then): one atomic per element on one address took
// its turns for each of them, about a second per slot for 17 sets of 64 Mi
// floats, most of a grade's time.
__device__ void add_block_counts(unsigned long long count, unsigned long long first, Counters* c) {
  count = block_combine(count, Sum{});
  first = block_combine(first, Min{});
  if (threadIdx.x != 0 || count == 0) return;
  atomicAdd(&c->count, count);
  atomicMin(&c->first, first);
}

// The words equal to `value` (or, with kEqual false, different from it): how
// many, and the first one's index.
template <class Word, bool kEqual>
__global__ void count_words(const Word* p, std::size_t n, Word value, Counters* c) {
  unsigned long long count = 0, first = ~0ull;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    if ((p[i] == value) == kEqual) {
      ++count;
      first = min(first, static_cast<unsigned long long>(i));
    }
  add_block_counts(count, first, c);
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
  unsigned long long count = 0, first = ~0ull;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    if (!within(static_cast<double>(want[i]), static_cast<double>(got[i]), rtol, atol, is_float)) {
      ++count;
      first = min(first, static_cast<unsigned long long>(i));
    }
  add_block_counts(count, first, c);
}

// The sum wraps modulo 2^64, so the order it is added up in changes nothing.
// One atomic per block, not one per thread: a million atomics on one address
// take their turns, and made the digests most of a timing round (on an H100,
// 0.92 s of lab06's 0.99 s of fresh inputs over six rounds).
__global__ void digest_words(const std::uint64_t* p, std::size_t n, unsigned long long* sum) {
  unsigned long long local = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    local += mix64(p[i] ^ mix64(i));
  local = block_combine(local, Sum{});
  if (threadIdx.x == 0) atomicAdd(sum, local);
}

__global__ void digest_bytes(const unsigned char* p, std::size_t n, std::size_t offset, unsigned long long* sum) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) atomicAdd(sum, static_cast<unsigned long long>(mix64((std::uint64_t(p[i]) << 56) ^ mix64(offset + i))));
}

// A few counters in device memory, read back after the kernels. One block for
// the process, made at the first check and kept: a cudaMalloc and a cudaFree
// (which waits for the whole device) for every digest and scan of every batch
// cost a timing session more than the checks themselves. The referee checks
// from one thread.
constexpr int kCounterSlots = 4;
Counters* counter_block() {
  static Counters* block = [] {
    void* p = nullptr;
    CUDA_CHECK(cudaMalloc(&p, kCounterSlots * sizeof(Counters)));
    return static_cast<Counters*>(p);
  }();
  return block;
}

// The first `n` counters set to `init`, on `s`.
Counters* reset_counters(cudaStream_t s, const Counters* init, int n) {
  Counters* c = counter_block();
  CUDA_CHECK(cudaMemcpyAsync(c, init, n * sizeof(Counters), cudaMemcpyHostToDevice, s));
  return c;
}

// The first `n` counters, once the kernels before on `s` are done.
void read_counters(cudaStream_t s, Counters* out, int n) {
  CUDA_CHECK(cudaMemcpyAsync(out, counter_block(), n * sizeof(Counters), cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
}

template <class Word>
OutputScan scan_words(const Output& out, cudaStream_t s, Word poison, Word canary) {
  OutputScan r;
  const Word* base = reinterpret_cast<const Word*>(out.storage());
  const std::size_t g = out.guard_words(), n = out.count();
  // [0] the poison still in the data, [1] and [2] the guards before and after it changed.
  const Counters init[3] = {{0, n}, {0, g}, {0, g}};
  Counters* c = reset_counters(s, init, 3);
  count_words<Word, true><<<blocks_for(n), kThreads, 0, s>>>(base + g, n, poison, c);
  CUDA_CHECK_LAUNCH();
  count_words<Word, false><<<blocks_for(g), kThreads, 0, s>>>(base, g, canary, c + 1);
  CUDA_CHECK_LAUNCH();
  count_words<Word, false><<<blocks_for(g), kThreads, 0, s>>>(base + g + n, g, canary, c + 2);
  CUDA_CHECK_LAUNCH();
  Counters got[3];
  read_counters(s, got, 3);
  r.unwritten = got[0].count;
  r.first_unwritten = got[0].count ? got[0].first : n;
  r.guard_before_intact = got[1].count == 0;
  r.guard_after_intact = got[2].count == 0;
  return r;
}

template <class T>
DeviceComparison compare_typed(const Output& want, const Output& got, double scale, cudaStream_t s) {
  DeviceComparison r;
  const std::size_t n = want.count();
  const Counters init{0, n};
  Counters* c = reset_counters(s, &init, 1);
  const T* w = static_cast<const T*>(want.raw_data());
  const T* g = static_cast<const T*>(got.raw_data());
  count_mismatches<T><<<blocks_for(n), kThreads, 0, s>>>(w, g, n, scale * want.tolerance().rtol,
                                                         scale * want.tolerance().atol, dtype_is_float(want.type()), c);
  CUDA_CHECK_LAUNCH();
  Counters got_counts{};
  read_counters(s, &got_counts, 1);
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

// One output's place in memory, as the sampling kernel reads it.
struct SampledOutput {
  const unsigned char* data;  // its first element, past the guard
  unsigned long long count;
  unsigned word;  // 4 or 8 bytes
};

// Block b samples output b: each thread one place, drawn from the seed.
__global__ void count_poison_sampled(const SampledOutput* outs, std::uint64_t seed, unsigned long long* unwritten) {
  const SampledOutput o = outs[blockIdx.x];
  if (o.count == 0) return;
  const std::uint64_t at = mix64(seed ^ mix64((std::uint64_t(blockIdx.x) << 32) | threadIdx.x)) % o.count;
  const bool poisoned = o.word == 4 ? reinterpret_cast<const std::uint32_t*>(o.data)[at] == kPoison32
                                    : reinterpret_cast<const std::uint64_t*>(o.data)[at] == kPoison64;
  if (poisoned) atomicAdd(unwritten, 1ull);
}

}  // namespace

std::size_t sampled_unwritten(const std::vector<const Output*>& outputs, std::uint64_t seed, unsigned samples,
                              cudaStream_t s) {
  if (outputs.empty() || samples == 0) return 0;
  // The descriptors live beside the counters, made once for the most outputs seen.
  static SampledOutput* table = nullptr;
  static std::size_t capacity = 0;
  if (outputs.size() > capacity) {
    if (table) CUDA_CHECK(cudaFree(table));
    CUDA_CHECK(cudaMalloc(&table, outputs.size() * sizeof(SampledOutput)));
    capacity = outputs.size();
  }
  std::vector<SampledOutput> host;
  for (const Output* o : outputs) {
    const unsigned word = static_cast<unsigned>(dtype_size(o->type()));
    host.push_back({static_cast<const unsigned char*>(o->storage()) + o->guard_words() * word, o->count(), word});
  }
  CUDA_CHECK(cudaMemcpyAsync(table, host.data(), host.size() * sizeof(SampledOutput), cudaMemcpyHostToDevice, s));
  const Counters init{0, 0};
  Counters* c = reset_counters(s, &init, 1);
  count_poison_sampled<<<static_cast<unsigned>(outputs.size()), std::min(samples, 1024u), 0, s>>>(table, seed,
                                                                                                  &c->count);
  CUDA_CHECK_LAUNCH();
  Counters got{};
  read_counters(s, &got, 1);
  return got.count;
}

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
  const Counters init{0, 0};
  unsigned long long* sum = &reset_counters(s, &init, 1)->count;
  const std::size_t words = bytes / 8, tail = bytes % 8;
  if (words) {
    digest_words<<<blocks_for(words), kThreads, 0, s>>>(static_cast<const std::uint64_t*>(data), words, sum);
    CUDA_CHECK_LAUNCH();
  }
  if (tail) {
    digest_bytes<<<1, 8, 0, s>>>(static_cast<const unsigned char*>(data) + 8 * words, tail, 8 * words, sum);
    CUDA_CHECK_LAUNCH();
  }
  Counters out{};
  read_counters(s, &out, 1);
  return out.count;
}

}  // namespace memlabs
