// lab06 problem definition: cases, inputs, the naive baseline, cuBLAS timed
// alongside, bytes and flops, the float64 oracle.
//
// cuBLAS is the referee's alone: its code is compiled under MEMLABS_REFEREE and
// lab.json's "link" links it into the referee only, where the trusted server
// times it. The submission's program neither contains nor links it, so
// kernel.cu cannot call it to compute C.
#ifdef MEMLABS_REFEREE
#include <cublas_v2.h>
#endif

#include <cmath>
#include <stdexcept>
#include <string>

#include "lab.cuh"
#include "lab_api.cuh"

namespace {

// The baseline: one output per thread, every operand straight from global
// memory. Same launch shape as matmul_static, so the only difference is where
// the reused operands come from. Within a warp, A[row][k] is one address (a
// broadcast) and B[k][col..col+31] one 128-byte line that the block's other
// warps then find in L1, which is why this kernel is not as slow as the
// arithmetic of its global loads suggests.
__global__ void matmul_naive(float* C, const float* A, const float* B, int M, int N, int K) {
  const int row = blockIdx.y * TILE + threadIdx.y;
  const int col = blockIdx.x * TILE + threadIdx.x;
  if (row >= M || col >= N) return;
  float sum = 0.0f;
  for (int k = 0; k < K; ++k) sum += A[static_cast<size_t>(row) * K + k] * B[static_cast<size_t>(k) * N + col];
  C[static_cast<size_t>(row) * N + col] = sum;
}

enum class Kernel { static_tiles, dynamic_tiles, regblock };

struct Case {
  const char* name;
  const char* description;
  Kernel kernel;
  int tile;     // the run-time tile of the dynamic kernel (0 for the others)
  int M, N, K;  // C is M x N, A is M x K, B is K x N
  bool timed;   // the timing size: cuBLAS is timed in the same rounds
};

// Names are <kernel>_<n> for n x n x n and <kernel>_<M>x<N>x<K> otherwise;
// dynamicT runs the dynamic kernel with a T x T tile. Correctness cases stay
// small enough for the float64 oracle (n^3 multiply-adds on the CPU).
// compute-sanitizer's non-square cases (*_300x200x131) keep the correctness
// cases' M and N but a shorter K: racecheck and memcheck watch every access,
// and each strip of K adds a tile's worth. 131 is a multiple of no tile and
// still gives five strips of 32, so a pipeline of up to four tile buffers
// wraps around within it and shows its hazards.
const Case kCases[] = {
    {"static_1000", "1000 x 1000 times 1000 x 1000: not a multiple of the tile", Kernel::static_tiles, 0, 1000, 1000, 1000, false},
    {"static_33", "33 x 33 x 33: one past a tile in every direction", Kernel::static_tiles, 0, 33, 33, 33, false},
    {"static_1", "1 x 1 times 1 x 1: a single product", Kernel::static_tiles, 0, 1, 1, 1, false},
    {"static_300x200x500", "A 300 x 500 times B 500 x 200: three different sizes", Kernel::static_tiles, 0, 300, 200, 500, false},
    {"static_300x200x131", "A 300 x 131 times B 131 x 200: three different sizes, K in five strips", Kernel::static_tiles, 0, 300, 200, 131, false},
    {"static_17x1000x3", "A 17 x 3 times B 3 x 1000: K smaller than a tile", Kernel::static_tiles, 0, 17, 1000, 3, false},
    {"static_512", "512 x 512 x 512: whole tiles only", Kernel::static_tiles, 0, 512, 512, 512, false},
    {"static_2048", "2048 x 2048 x 2048: the timing size", Kernel::static_tiles, 0, 2048, 2048, 2048, true},
    {"dynamic16_600", "600 x 600 x 600, 16 x 16 tiles", Kernel::dynamic_tiles, 16, 600, 600, 600, false},
    {"dynamic8_33", "33 x 33 x 33, 8 x 8 tiles", Kernel::dynamic_tiles, 8, 33, 33, 33, false},
    {"dynamic32_300x200x500", "A 300 x 500 times B 500 x 200, 32 x 32 tiles", Kernel::dynamic_tiles, 32, 300, 200, 500, false},
    {"dynamic32_300x200x131", "A 300 x 131 times B 131 x 200, 32 x 32 tiles", Kernel::dynamic_tiles, 32, 300, 200, 131, false},
    {"dynamic8_17x1000x3", "A 17 x 3 times B 3 x 1000, 8 x 8 tiles", Kernel::dynamic_tiles, 8, 17, 1000, 3, false},
    {"dynamic32_1", "a single product, 32 x 32 tiles", Kernel::dynamic_tiles, 32, 1, 1, 1, false},
    {"dynamic16_512", "512 x 512 x 512, 16 x 16 tiles: whole tiles only", Kernel::dynamic_tiles, 16, 512, 512, 512, false},
    {"regblock_600", "600 x 600 x 600: not a multiple of any block tile", Kernel::regblock, 0, 600, 600, 600, false},
    {"regblock_33", "33 x 33 x 33", Kernel::regblock, 0, 33, 33, 33, false},
    {"regblock_1", "a single product", Kernel::regblock, 0, 1, 1, 1, false},
    {"regblock_300x200x500", "A 300 x 500 times B 500 x 200: three different sizes", Kernel::regblock, 0, 300, 200, 500, false},
    {"regblock_300x200x131", "A 300 x 131 times B 131 x 200: K a multiple of no tile", Kernel::regblock, 0, 300, 200, 131, false},
    {"regblock_17x1000x3", "A 17 x 3 times B 3 x 1000: K smaller than a tile", Kernel::regblock, 0, 17, 1000, 3, false},
    {"regblock_512", "512 x 512 x 512: whole block tiles only", Kernel::regblock, 0, 512, 512, 512, false},
    {"regblock_2048", "2048 x 2048 x 2048: the timing size", Kernel::regblock, 0, 2048, 2048, 2048, true},
};

#ifdef MEMLABS_REFEREE
void cublas_check(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(call) + " failed: " + cublasGetStatusString(status));
}
#endif

// fp32 sums of K products in another order differ by rounding that grows with
// K; inputs in [-1, 1] keep it far below the error of one wrong or missing
// product, so a bad tile index or edge guard still shows.
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
#ifdef MEMLABS_REFEREE
  ~Matmul() override {
    if (cublas_) cublasDestroy(cublas_);
  }
#endif
  Matmul(const Matmul&) = delete;
  Matmul& operator=(const Matmul&) = delete;

  void run(memlabs::Variant v, cudaStream_t s) override {
    float* C = out_.data();
    const float* A = a_.data();
    const float* B = b_.data();
    if (v == memlabs::Variant::baseline) {
      const dim3 block(TILE, TILE);
      const dim3 grid((c_.N + TILE - 1) / TILE, (c_.M + TILE - 1) / TILE);
      matmul_naive<<<grid, block, 0, s>>>(C, A, B, c_.M, c_.N, c_.K);
      return;
    }
    switch (c_.kernel) {
      case Kernel::static_tiles: CANDIDATE_ONLY(launch_matmul_static(C, A, B, c_.M, c_.N, c_.K, s)); break;
      case Kernel::dynamic_tiles: CANDIDATE_ONLY(launch_matmul_dynamic(C, A, B, c_.M, c_.N, c_.K, c_.tile, s)); break;
      case Kernel::regblock: CANDIDATE_ONLY(launch_matmul_regblock(C, A, B, c_.M, c_.N, c_.K, s)); break;
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

  std::string library_name() const override { return c_.timed ? "cuBLAS" : ""; }

#ifdef MEMLABS_REFEREE
  // cuBLAS is column-major, and a row-major matrix read column-major is its
  // transpose: C^T = B^T A^T, so B goes first and M, N swap places. The result
  // goes to a scratch buffer; only its time is used.
  void run_library(cudaStream_t s) override {
    if (!c_.timed) return;
    if (!cublas_) {  // made where the library runs (the referee's trusted server), at its first call
      cublas_check(cublasCreate(&cublas_), "cublasCreate");
      // Plain FP32, as the kernels compute: the default math mode never uses
      // TF32 tensor cores for an SGEMM (CUBLAS_TF32_TENSOR_OP_MATH would).
      cublas_check(cublasSetMathMode(cublas_, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
      library_out_ = memlabs::DeviceBuffer<float>(static_cast<size_t>(c_.M) * c_.N);
    }
    const float one = 1.0f, zero = 0.0f;
    cublas_check(cublasSetStream(cublas_, s), "cublasSetStream");
    cublas_check(cublasSgemm(cublas_, CUBLAS_OP_N, CUBLAS_OP_N, c_.N, c_.M, c_.K, &one, b_.data(), c_.N,
                             a_.data(), c_.K, &zero, library_out_.data(), c_.N),
                 "cublasSgemm");
  }
#endif

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
#ifdef MEMLABS_REFEREE
  cublasHandle_t cublas_ = nullptr;
  memlabs::DeviceBuffer<float> library_out_;
#endif
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
