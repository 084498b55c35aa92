// lab04 problem definition: cases, inputs, the two baselines, bytes moved, oracles.
//
// Cases: "poly_N" evaluates the degree-63 polynomial on N values (launch_poly against
// a kernel that reads its coefficients from global memory); "ramps_N" evaluates the sum
// of ramps on N values (launch_ramps against the lane-staggered constant-memory kernel).
#include <algorithm>
#include <string>

#include "lab.cuh"
#include "lab_api.cuh"

namespace {

constexpr int kBlock = 256;

std::uint64_t input_seed(std::uint64_t seed, std::uint64_t which) { return memlabs::mix64(seed + which); }

// Both parts: |x| < 1, and terms small enough that no partial sum exceeds about 8 in size.
// Float results then differ from the float64 oracle, and from a float kernel that adds in
// another order, by at most about 64 roundings of such a sum (~3e-5), and in practice by
// far less; a wrong coefficient, a missing term or a swapped index moves results by 1e-3
// or (much) more for most inputs.
constexpr memlabs::Tolerance kTolerance{1e-4, 5e-5};

// ---- Part 1: the polynomial ----

// c[k] = u_k / (k + 1), u_k uniform in [-1, 1): the sum of |c[k]| is below 5, so for
// |x| < 1 neither the result nor any Horner partial sum grows large.
std::vector<float> poly_coefficients(std::uint64_t seed) {
  auto c = memlabs::uniform_host(POLY_TERMS, input_seed(seed, 2), -1.0f, 1.0f);
  for (int k = 0; k < POLY_TERMS; ++k) c[k] /= static_cast<float>(k + 1);
  return c;
}

// The baseline: the same Horner loop with the coefficients behind a plain pointer, so
// every thread loads all 64 of them from global memory (through L1) with ld.global.
__global__ void poly_global(float* y, const float* x, const float* coeffs, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float xi = x[i];
  float acc = coeffs[POLY_TERMS - 1];
#pragma unroll
  for (int k = POLY_TERMS - 2; k >= 0; --k) acc = acc * xi + coeffs[k];
  y[i] = acc;
}

class Poly : public memlabs::Problem {
 public:
  explicit Poly(int n)
      : n_(n), x_(static_cast<std::size_t>(n)), coeffs_dev_(POLY_TERMS),
        y_("y", static_cast<std::size_t>(n), {n}, kTolerance) {}

  void fill(std::uint64_t device_seed, std::uint64_t host_seed) override {
    seed_ = device_seed;
    memlabs::fill_uniform(x_.data(), x_.size(), input_seed(seed_, 1), -1.0f, 1.0f);
    host_inputs(host_seed);
  }

  // The coefficients, once per set of inputs as a real program would: the
  // timed launches do not include setting them.
  void host_inputs(std::uint64_t seed) override {
    coeffs_ = poly_coefficients(seed);
    coeffs_dev_.copy_from_host(coeffs_);
    CANDIDATE_ONLY(set_poly_coefficients(coeffs_.data()));
  }

  void run(memlabs::Variant v, cudaStream_t s) override {
    if (v == memlabs::Variant::candidate) {
      CANDIDATE_ONLY(launch_poly(y_.data(), x_.data(), n_, s));
    } else {
      poly_global<<<(n_ + kBlock - 1) / kBlock, kBlock, 0, s>>>(y_.data(), x_.data(), coeffs_dev_.data(), n_);
    }
  }

  std::vector<memlabs::Output*> outputs() override { return {&y_}; }
  std::vector<memlabs::Input> inputs() const override { return {{"x", x_.data(), x_.bytes()}}; }

  // x read once, y written once; the coefficients are 256 bytes.
  double bytes_moved() const override { return 2.0 * n_ * sizeof(float); }
  double flops() const override { return 2.0 * (POLY_TERMS - 1) * n_; }

  std::vector<std::vector<double>> oracle() const override {
    const auto x = memlabs::uniform_host(static_cast<std::size_t>(n_), input_seed(seed_, 1), -1.0f, 1.0f);
    std::vector<double> y(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      double acc = coeffs_[POLY_TERMS - 1];
      for (int k = POLY_TERMS - 2; k >= 0; --k) acc = acc * x[i] + coeffs_[k];
      y[i] = acc;
    }
    return {y};
  }

 private:
  int n_;
  std::uint64_t seed_ = 0;
  memlabs::DeviceBuffer<float> x_;
  std::vector<float> coeffs_;
  memlabs::DeviceBuffer<float> coeffs_dev_;
  memlabs::OutputBuffer<float> y_;
};

// ---- Part 2: the sum of ramps ----

// Weights in [-1/16, 1/16), knots in [-1, 1): each term is below 1/8 in size, the sum
// below 8. Both are exact in float, and so is x - knot for such inputs.
std::vector<Ramp> ramp_table(std::uint64_t seed) {
  const auto w = memlabs::uniform_host(RAMPS, input_seed(seed, 2), -0.0625f, 0.0625f);
  const auto k = memlabs::uniform_host(RAMPS, input_seed(seed, 3), -1.0f, 1.0f);
  std::vector<Ramp> t(RAMPS);
  for (int i = 0; i < RAMPS; ++i) t[i] = {w[i], k[i]};
  return t;
}

// The driver's own copy of the table (this file is a separate module from kernel.cu).
__constant__ Ramp baseline_ramps[RAMPS];

// The baseline: each lane starts at its own entry, so at every step the 32 lanes of a
// warp read 32 different constant addresses, which the constant cache serves one at a time.
__global__ void ramps_staggered(float* y, const float* x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float xi = x[i];
  float acc = 0.0f;
  for (int j = 0; j < RAMPS; ++j) {
    const Ramp r = baseline_ramps[(j + threadIdx.x) % RAMPS];
    acc = fmaf(r.weight, fmaxf(xi - r.knot, 0.0f), acc);
  }
  y[i] = acc;
}

class Ramps : public memlabs::Problem {
 public:
  explicit Ramps(int n) : n_(n), x_(static_cast<std::size_t>(n)), y_("y", static_cast<std::size_t>(n), {n}, kTolerance) {}

  void fill(std::uint64_t device_seed, std::uint64_t host_seed) override {
    seed_ = device_seed;
    memlabs::fill_uniform(x_.data(), x_.size(), input_seed(seed_, 1), -1.0f, 1.0f);
    host_inputs(host_seed);
  }

  // The table, in this process's copy for the baseline and through set_ramps for the student's.
  void host_inputs(std::uint64_t seed) override {
    table_ = ramp_table(seed);
    CUDA_CHECK(cudaMemcpyToSymbol(baseline_ramps, table_.data(), sizeof(Ramp) * RAMPS));
    CANDIDATE_ONLY(set_ramps(table_.data()));
  }

  void run(memlabs::Variant v, cudaStream_t s) override {
    if (v == memlabs::Variant::candidate) {
      CANDIDATE_ONLY(launch_ramps(y_.data(), x_.data(), n_, s));
    } else {
      ramps_staggered<<<(n_ + kBlock - 1) / kBlock, kBlock, 0, s>>>(y_.data(), x_.data(), n_);
    }
  }

  std::vector<memlabs::Output*> outputs() override { return {&y_}; }
  std::vector<memlabs::Input> inputs() const override { return {{"x", x_.data(), x_.bytes()}}; }

  double bytes_moved() const override { return 2.0 * n_ * sizeof(float); }
  double flops() const override { return 4.0 * RAMPS * n_; }  // subtract, max, multiply, add

  std::vector<std::vector<double>> oracle() const override {
    const auto x = memlabs::uniform_host(static_cast<std::size_t>(n_), input_seed(seed_, 1), -1.0f, 1.0f);
    std::vector<double> y(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      double acc = 0;
      for (const Ramp& r : table_) acc += double(r.weight) * std::max(double(x[i]) - double(r.knot), 0.0);
      y[i] = acc;
    }
    return {y};
  }

 private:
  int n_;
  std::uint64_t seed_ = 0;
  memlabs::DeviceBuffer<float> x_;
  std::vector<Ramp> table_;
  memlabs::OutputBuffer<float> y_;
};

// "prefix123" -> 123; false unless the rest is all digits.
bool parse_count(const std::string& name, const std::string& prefix, int& n) {
  if (name.compare(0, prefix.size(), prefix) != 0) return false;
  const std::string digits = name.substr(prefix.size());
  if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos)
    return false;
  n = std::stoi(digits);
  return n >= 1;
}

std::unique_ptr<memlabs::Problem> make(const std::string& name) {
  int n = 0;
  if (parse_count(name, "poly_", n)) return std::make_unique<Poly>(n);
  if (parse_count(name, "ramps_", n)) return std::make_unique<Ramps>(n);
  throw std::invalid_argument("case name is not poly_N or ramps_N: " + name);
}

}  // namespace

memlabs::LabDefinition memlabs::define_lab() {
  return {{{"poly_1", "polynomial, a single value"},
           {"poly_4097", "polynomial, 4097 values: one past a multiple of the block"},
           {"poly_1000003", "polynomial, 1,000,003 values"},
           {"poly_67108864", "polynomial, 64 Mi values (256 MiB each way): the timing size"},
           {"ramps_1", "sum of ramps, a single value"},
           {"ramps_4097", "sum of ramps, 4097 values"},
           {"ramps_1000003", "sum of ramps, 1,000,003 values"},
           {"ramps_33554432", "sum of ramps, 32 Mi values (128 MiB each way): the timing size"}},
          make};
}
