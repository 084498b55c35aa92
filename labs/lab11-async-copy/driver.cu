// lab11 problem definition: cases, inputs, the synchronous-tile baseline,
// bytes and flops, the float64 oracle.
//
// The baseline is the referee's alone: it is compiled under MEMLABS_REFEREE,
// so the student's program, built from this same file, neither contains nor
// can launch it, and is only ever asked for its own kernels; the referee's
// trusted server runs it. It is the technique of lab06's first step, written
// in a form of its own: `grader publish` refuses a copy in which any file holds
// a step's fix, lab06's included.
#include <cmath>
#include <stdexcept>
#include <string>

#include "lab.cuh"
#include "lab_api.cuh"

namespace {

#ifdef MEMLABS_REFEREE
// The baseline: the same blocks and strips as the student's kernels, with
// every element of a tile loaded into a register by its thread and stored from
// there to shared memory. Step 2's speed is measured against it, so what is
// measured is what the asynchronous copies and the second buffer gain.
__global__ void matmul_tiled(float* C, const float* A, const float* B, int M, int N, int K) {
  __shared__ float a_tile[TILE * TILE];
  __shared__ float b_tile[TILE * TILE];
  const int r = threadIdx.y, c = threadIdx.x;
  const int i = blockIdx.y * TILE + r, j = blockIdx.x * TILE + c;
  float acc = 0.0f;
  for (int strip = 0; strip * TILE < K; ++strip) {
    const int ka = strip * TILE + c, kb = strip * TILE + r;
    float a = 0.0f, b = 0.0f;  // outside A or B: zeros, which add nothing
    if (i < M && ka < K) a = A[static_cast<size_t>(i) * K + ka];
    if (kb < K && j < N) b = B[static_cast<size_t>(kb) * N + j];
    a_tile[r * TILE + c] = a;
    b_tile[r * TILE + c] = b;
    __syncthreads();
    for (int k = 0; k < TILE; ++k) acc += a_tile[r * TILE + k] * b_tile[k * TILE + c];
    __syncthreads();
  }
  if (i < M && j < N) C[static_cast<size_t>(i) * N + j] = acc;
}
#endif

enum class Kernel { async, pipelined, bulk };

struct Case {
  const char* name;
  const char* description;
  Kernel kernel;
  int M, N, K;  // C is M x N, A is M x K, B is K x N
};

// Names are <kernel>_<n> for n x n x n and <kernel>_<M>x<N>x<K> otherwise.
// Correctness cases stay small enough for the float64 oracle (M N K
// multiply-adds on the CPU); 512 is the middle size ncu profiles, 2048 the
// timing size. compute-sanitizer's cases (*_33, *_300x200x131 and, for bulk
// copies, *_36 and *_300x200x132) keep K short: every strip adds a tile's worth
// of watched accesses, and five strips still take a two- or three-buffer
// pipeline round its buffers more than once. The bulk cases keep K and N
// multiples of 4 (lab.cuh says why) and still end in partial tiles.
const Case kCases[] = {
    {"async_1000", "1000 x 1000 times 1000 x 1000: not a multiple of the tile", Kernel::async, 1000, 1000, 1000},
    {"async_33", "33 x 33 x 33: one past a tile in every direction", Kernel::async, 33, 33, 33},
    {"async_1", "1 x 1 times 1 x 1: a single product", Kernel::async, 1, 1, 1},
    {"async_300x200x500", "A 300 x 500 times B 500 x 200: three different sizes", Kernel::async, 300, 200, 500},
    {"async_300x200x131", "A 300 x 131 times B 131 x 200: K in five strips", Kernel::async, 300, 200, 131},
    {"async_17x1000x3", "A 17 x 3 times B 3 x 1000: K smaller than a tile", Kernel::async, 17, 1000, 3},
    {"async_512", "512 x 512 x 512: whole tiles only", Kernel::async, 512, 512, 512},
    {"async_2048", "2048 x 2048 x 2048: the timing size", Kernel::async, 2048, 2048, 2048},
    {"pipelined_1000", "1000 x 1000 times 1000 x 1000: not a multiple of the tile", Kernel::pipelined, 1000, 1000,
     1000},
    {"pipelined_33", "33 x 33 x 33: two strips, the second one element wide", Kernel::pipelined, 33, 33, 33},
    {"pipelined_1", "1 x 1 times 1 x 1: a single strip of one element", Kernel::pipelined, 1, 1, 1},
    {"pipelined_300x200x500", "A 300 x 500 times B 500 x 200: three different sizes", Kernel::pipelined, 300, 200,
     500},
    {"pipelined_300x200x131", "A 300 x 131 times B 131 x 200: K in five strips", Kernel::pipelined, 300, 200, 131},
    {"pipelined_17x1000x3", "A 17 x 3 times B 3 x 1000: K smaller than a tile", Kernel::pipelined, 17, 1000, 3},
    {"pipelined_512", "512 x 512 x 512: whole tiles only", Kernel::pipelined, 512, 512, 512},
    {"pipelined_2048", "2048 x 2048 x 2048: the timing size", Kernel::pipelined, 2048, 2048, 2048},
    {"bulk_1000", "1000 x 1000 times 1000 x 1000: rows a multiple of 16 bytes, not of a tile", Kernel::bulk, 1000,
     1000, 1000},
    {"bulk_36", "36 x 36 x 36: four past a tile in every direction", Kernel::bulk, 36, 36, 36},
    {"bulk_1x4x4", "A 1 x 4 times B 4 x 4: one row, the shortest bulk copy", Kernel::bulk, 1, 4, 4},
    {"bulk_300x200x500", "A 300 x 500 times B 500 x 200: three different sizes", Kernel::bulk, 300, 200, 500},
    {"bulk_300x200x132", "A 300 x 132 times B 132 x 200: K in five strips", Kernel::bulk, 300, 200, 132},
    {"bulk_36x100x68", "A 36 x 68 times B 68 x 100: partial tiles in M, N and K", Kernel::bulk, 36, 100, 68},
    {"bulk_17x1000x4", "A 17 x 4 times B 4 x 1000: K smaller than a tile", Kernel::bulk, 17, 1000, 4},
    {"bulk_512", "512 x 512 x 512: whole tiles only", Kernel::bulk, 512, 512, 512},
    {"bulk_2048", "2048 x 2048 x 2048: the timing size", Kernel::bulk, 2048, 2048, 2048},
};

// fp32 sums of K products in another order differ by rounding that grows with
// K; inputs in [-1, 1] keep it far below the error of one wrong or missing
// product, so a tile read while its copy is in flight, or a stale edge, shows.
memlabs::Tolerance tolerance_for(int K) { return {1e-4, 2e-5 * std::sqrt(static_cast<double>(K))}; }

class Matmul : public memlabs::Problem {
 public:
  explicit Matmul(const Case& c)
      : c_(c), a_(static_cast<size_t>(c.M) * c.K), b_(static_cast<size_t>(c.K) * c.N),
        out_("C", static_cast<size_t>(c.M) * c.N, {c.M, c.N}, tolerance_for(c.K)) {}

  void fill(std::uint64_t seed, std::uint64_t) override {
    seed_ = seed;
    memlabs::fill_uniform(a_.data(), a_.size(), seed_a(), -1.0f, 1.0f);
    memlabs::fill_uniform(b_.data(), b_.size(), seed_b(), -1.0f, 1.0f);
  }

  void run(memlabs::Variant v, cudaStream_t s) override {
    float* C = out_.data();
    const float* A = a_.data();
    const float* B = b_.data();
    if (v == memlabs::Variant::baseline) {
#ifdef MEMLABS_REFEREE
      const dim3 block(TILE, TILE);
      const dim3 grid((c_.N + TILE - 1) / TILE, (c_.M + TILE - 1) / TILE);
      matmul_tiled<<<grid, block, 0, s>>>(C, A, B, c_.M, c_.N, c_.K);
      return;
#else
      throw std::logic_error("the baseline runs in the referee only");
#endif
    }
    switch (c_.kernel) {
      case Kernel::async: CANDIDATE_ONLY(launch_matmul_async(C, A, B, c_.M, c_.N, c_.K, s)); break;
      case Kernel::pipelined: CANDIDATE_ONLY(launch_matmul_pipelined(C, A, B, c_.M, c_.N, c_.K, s)); break;
      case Kernel::bulk: CANDIDATE_ONLY(launch_matmul_bulk(C, A, B, c_.M, c_.N, c_.K, s)); break;
    }
  }

  std::vector<memlabs::Output*> outputs() override { return {&out_}; }
  std::vector<memlabs::Input> inputs() const override {
    return {{"A", a_.data(), a_.bytes()}, {"B", b_.data(), b_.bytes()}};
  }

  // A and B read once, C written once.
  double bytes_moved() const override {
    return (static_cast<double>(c_.M) * c_.K + static_cast<double>(c_.K) * c_.N +
            static_cast<double>(c_.M) * c_.N) * sizeof(float);
  }

  double flops() const override { return 2.0 * c_.M * c_.N * c_.K; }

  std::vector<std::vector<double>> oracle() const override {
    const auto a = memlabs::uniform_host(a_.size(), seed_a(), -1.0f, 1.0f);
    const auto bf = memlabs::uniform_host(b_.size(), seed_b(), -1.0f, 1.0f);
    const std::vector<double> b(bf.begin(), bf.end());
    // i-k-j order: the innermost loop runs along rows of B and C, contiguous.
    std::vector<double> c(static_cast<size_t>(c_.M) * c_.N, 0.0);
    for (int i = 0; i < c_.M; ++i) {
      double* crow = &c[static_cast<size_t>(i) * c_.N];
      for (int k = 0; k < c_.K; ++k) {
        const double aik = a[static_cast<size_t>(i) * c_.K + k];
        const double* brow = &b[static_cast<size_t>(k) * c_.N];
        for (int j = 0; j < c_.N; ++j) crow[j] += aik * brow[j];
      }
    }
    return {c};
  }

 private:
  std::uint64_t seed_a() const { return seed_; }
  std::uint64_t seed_b() const { return memlabs::mix64(seed_); }

  const Case c_;
  std::uint64_t seed_ = 0;
  memlabs::DeviceBuffer<float> a_, b_;
  memlabs::OutputBuffer<float> out_;
};

std::unique_ptr<memlabs::Problem> make(const std::string& name) {
  for (const auto& c : kCases)
    if (name == c.name) return std::make_unique<Matmul>(c);
  throw std::invalid_argument("no case named " + name);
}

}  // namespace

memlabs::LabDefinition memlabs::define_lab() {
  memlabs::LabDefinition lab;
  for (const auto& c : kCases) lab.cases.push_back({c.name, c.description});
  lab.make = make;
  return lab;
}
