// lab02 problem definition: cases, inputs, baselines, bytes moved, oracle, and the
// leak check of the two host-side vector adds.
//
// Cases: "dynamic_N" and "static_N" run vector_add_dynamic / vector_add_static on N
// floats; "ROWSxCOLS" runs launch_scale_shift; "drift_N" runs launch_drift on N particles.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "lab.cuh"
#include "lab_api.cuh"

namespace {

constexpr int kBlock = 256;

// Each input gets its own stream of random numbers from the one seed.
std::uint64_t input_seed(std::uint64_t seed, std::uint64_t which) { return memlabs::mix64(seed + which); }

// ---- Part A ----

__global__ void vector_add_baseline(float* c, const float* a, const float* b, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

float float_from_bits(std::uint32_t w) {
  float f;
  std::memcpy(&f, &w, sizeof f);
  return f;
}

std::uint32_t bits_of(float f) {
  std::uint32_t w;
  std::memcpy(&w, &f, sizeof w);
  return w;
}

std::string mib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / (1024.0 * 1024.0));
  return buf;
}

// Free device memory, after every queued operation (and every stream-ordered free,
// which the runtime hands back at a synchronization) has finished.
double free_device_bytes() {
  CUDA_CHECK(cudaDeviceSynchronize());
  std::size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return static_cast<double>(free_bytes);
}

// The student's functions take host arrays, so the result is produced in host memory.
// It is staged in a host buffer laid out like the Output's device storage (guard, data,
// guard, filled with the same poison and canary patterns) and the whole buffer is then
// copied over that storage: unwritten elements and writes just outside `c` reach the
// runner's checks exactly as a kernel's would.
class VectorAdd : public memlabs::Problem {
 public:
  enum class Path { dynamic, fixed };

  VectorAdd(Path path, int n)
      : path_(path), n_(n), staging_(kGuardWords + static_cast<std::size_t>(n) + kTailWords),
        // a + b of two such inputs is exact in float, so everyone agrees bit for bit.
        c_("c", n, {n}, memlabs::Tolerance{0, 0}) {}

  // The inputs are host arrays: every process makes them from the seed.
  void fill(std::uint64_t, std::uint64_t host_seed) override { host_inputs(host_seed); }
  void host_inputs(std::uint64_t seed) override {
    a_ = memlabs::uniform_host(n_, input_seed(seed, 1), -1.0f, 1.0f);
    b_ = memlabs::uniform_host(n_, input_seed(seed, 2), -1.0f, 1.0f);
  }

  void run(memlabs::Variant v, cudaStream_t s) override {
    if (v == memlabs::Variant::baseline) {
      run_baseline(s);
      return;
    }
    std::fill(staging_.begin(), staging_.end(), float_from_bits(memlabs::kCanary32));
    std::fill_n(staging_.begin() + kGuardWords, n_, float_from_bits(memlabs::kPoison32));
    if (n_ >= kLeakCheckMinN) {
      check_for_leaks();
    } else {
      call_candidate();
    }
    // A write far past the end of c (say, STATIC_CAPACITY floats copied back) lands
    // beyond the part of the tail that is copied to the device: mark the copied guard.
    const std::size_t tail = kGuardWords + static_cast<std::size_t>(n_);
    for (std::size_t i = tail + kGuardWords; i < staging_.size(); ++i) {
      if (bits_of(staging_[i]) != memlabs::kCanary32) {
        staging_[tail] = 0.0f;
        break;
      }
    }
    unsigned char* storage = static_cast<unsigned char*>(c_.raw_data()) - memlabs::kGuardBytes;
    CUDA_CHECK(cudaMemcpyAsync(storage, staging_.data(), (2 * kGuardWords + n_) * sizeof(float),
                               cudaMemcpyHostToDevice, s));
  }

  std::vector<memlabs::Output*> outputs() override { return {&c_}; }
  // Host arrays: the student's functions take them as const float*.
  std::vector<memlabs::Input> inputs() const override {
    return {{"a", a_.data(), a_.size() * sizeof(float)}, {"b", b_.data(), b_.size() * sizeof(float)}};
  }

  // Read a and b once, write c once (the host copies are not device traffic).
  double bytes_moved() const override { return 3.0 * n_ * sizeof(float); }

  std::vector<std::vector<double>> oracle() const override {
    std::vector<double> c(n_);
    for (int i = 0; i < n_; ++i) c[i] = double(a_[i]) + double(b_[i]);
    return {c};
  }

  std::vector<memlabs::Fact> facts() override { return facts_; }

 private:
  static constexpr std::size_t kGuardWords = memlabs::kGuardBytes / sizeof(float);
  // Room for a whole __device__ array copied back into a short c.
  static constexpr std::size_t kTailWords = kGuardWords + STATIC_CAPACITY;
  // Leaks are measured only where one forgotten buffer is large next to what other
  // processes on the GPU (another grade, for one) allocate meanwhile.
  static constexpr int kLeakCheckMinN = 1 << 20;
  static constexpr int kLeakCalls = 16;

  float* c_host() { return staging_.data() + kGuardWords; }

  void call_candidate() {
    if (path_ == Path::dynamic)
      CANDIDATE_ONLY(vector_add_dynamic(c_host(), a_.data(), b_.data(), n_));
    else
      CANDIDATE_ONLY(vector_add_static(c_host(), a_.data(), b_.data(), n_));
  }

  // One call first, unmeasured: loading the module (which allocates the __device__
  // arrays) and first-launch reservations are not leaks. Then free memory is read
  // around each of kLeakCalls calls. A forgotten cudaFree loses at least one n-float
  // buffer on every call, so it shows both in the typical (median) call and in the
  // total; memory that another process allocates and frees meanwhile may move one
  // of the two, but not both.
  void check_for_leaks() {
    call_candidate();
    std::vector<double> drops;
    const double start = free_device_bytes();
    double before = start;
    for (int k = 0; k < kLeakCalls; ++k) {
      call_candidate();
      const double after = free_device_bytes();
      drops.push_back(before - after);
      before = after;
    }
    const double total = start - before;
    std::sort(drops.begin(), drops.end());
    const double median = 0.5 * (drops[kLeakCalls / 2 - 1] + drops[kLeakCalls / 2]);
    const double one_buffer = static_cast<double>(n_) * sizeof(float);
    const bool leaks = median >= 0.5 * one_buffer && total >= 0.5 * kLeakCalls * one_buffer;
    const std::string what = path_ == Path::dynamic ? "vector_add_dynamic" : "vector_add_static";
    std::string detail = "free device memory fell by " + mib(median) + " per call of " + what +
                         " (median of " + std::to_string(kLeakCalls) + " calls, " + mib(total) +
                         " in all; one " + std::to_string(n_) + "-float buffer is " + mib(one_buffer) + ")";
    if (leaks) detail += ": every cudaMalloc needs a cudaFree before the function returns";
    facts_ = {{"no_leak", !leaks, detail}};
  }

  void run_baseline(cudaStream_t s) {
    if (a_dev_.size() == 0) {  // only on request: the graded runs never launch this
      a_dev_ = memlabs::DeviceBuffer<float>(n_);
      b_dev_ = memlabs::DeviceBuffer<float>(n_);
    }
    a_dev_.copy_from_host(a_);
    b_dev_.copy_from_host(b_);
    vector_add_baseline<<<(n_ + kBlock - 1) / kBlock, kBlock, 0, s>>>(c_.data(), a_dev_.data(),
                                                                      b_dev_.data(), n_);
  }

  Path path_;
  int n_;
  std::vector<float> a_, b_;
  std::vector<float> staging_;
  memlabs::OutputBuffer<float> c_;
  memlabs::DeviceBuffer<float> a_dev_, b_dev_;
  std::vector<memlabs::Fact> facts_;
};

// ---- Part B ----

// The baseline: threadIdx.x runs down a column, so the 32 lanes of a warp touch 32
// different rows, `cols` floats apart: one 32-byte sector per lane, 4 bytes of it used.
__global__ void scale_shift_uncoalesced(float* out, const float* in, const float* row_scale,
                                        const float* col_shift, int rows, int cols) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  const int col = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < rows && col < cols) {
    const size_t idx = static_cast<size_t>(row) * cols + col;
    out[idx] = in[idx] * row_scale[row] + col_shift[col];
  }
}

class ScaleShift : public memlabs::Problem {
 public:
  ScaleShift(int rows, int cols)
      : rows_(rows), cols_(cols), in_(static_cast<std::size_t>(rows) * cols),
        row_scale_(rows), col_shift_(cols),
        // One multiply-add per element: float against float64 differs by half an ulp
        // of a result below 3 in size, and a kernel that rounds the product separately
        // (no FMA) by one more ulp of the product.
        out_("out", static_cast<std::size_t>(rows) * cols, {rows, cols}, memlabs::Tolerance{1e-6, 1e-6}) {}

  void fill(std::uint64_t seed, std::uint64_t) override {
    seed_ = seed;
    memlabs::fill_uniform(in_.data(), in_.size(), input_seed(seed_, 1), -1.0f, 1.0f);
    memlabs::fill_uniform(row_scale_.data(), row_scale_.size(), input_seed(seed_, 2), 0.5f, 2.0f);
    memlabs::fill_uniform(col_shift_.data(), col_shift_.size(), input_seed(seed_, 3), -1.0f, 1.0f);
  }

  void run(memlabs::Variant v, cudaStream_t s) override {
    if (v == memlabs::Variant::candidate) {
      CANDIDATE_ONLY(launch_scale_shift(out_.data(), in_.data(), row_scale_.data(), col_shift_.data(), rows_, cols_, s));
    } else {
      const dim3 block(32, 8);
      const dim3 grid((rows_ + block.x - 1) / block.x, (cols_ + block.y - 1) / block.y);
      scale_shift_uncoalesced<<<grid, block, 0, s>>>(out_.data(), in_.data(), row_scale_.data(),
                                                     col_shift_.data(), rows_, cols_);
    }
  }

  std::vector<memlabs::Output*> outputs() override { return {&out_}; }
  std::vector<memlabs::Input> inputs() const override {
    return {{"in", in_.data(), in_.bytes()},
            {"row_scale", row_scale_.data(), row_scale_.bytes()},
            {"col_shift", col_shift_.data(), col_shift_.bytes()}};
  }

  // The matrix read once and written once, plus the two short vectors.
  double bytes_moved() const override {
    return (2.0 * rows_ * cols_ + rows_ + cols_) * sizeof(float);
  }

  std::vector<std::vector<double>> oracle() const override {
    const auto in = memlabs::uniform_host(static_cast<std::size_t>(rows_) * cols_, input_seed(seed_, 1), -1.0f, 1.0f);
    const auto scale = memlabs::uniform_host(rows_, input_seed(seed_, 2), 0.5f, 2.0f);
    const auto shift = memlabs::uniform_host(cols_, input_seed(seed_, 3), -1.0f, 1.0f);
    std::vector<double> out(in.size());
    for (int r = 0; r < rows_; ++r)
      for (int c = 0; c < cols_; ++c) {
        const std::size_t i = static_cast<std::size_t>(r) * cols_ + c;
        out[i] = double(in[i]) * double(scale[r]) + double(shift[c]);
      }
    return {out};
  }

 private:
  int rows_, cols_;
  std::uint64_t seed_ = 0;
  memlabs::DeviceBuffer<float> in_, row_scale_, col_shift_;
  memlabs::OutputBuffer<float> out_;
};

// ---- Part C ----

constexpr float kDriftDt = 0.125f;  // a power of two: x + vx * dt differs from float64 only in the sum
constexpr int kFields = 8;          // the floats of a Particle

// The baseline: the same drift over an array of structures. A warp's 32 loads of x fall
// 32 bytes apart, one sector each, and bring in the 28 bytes of each particle it does not use.
__global__ void drift_aos(float* out, const Particle* p, int n, float dt) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = p[i].x + p[i].vx * dt;
}

// The structure of arrays interleaved into particles, once per fill (untimed).
__global__ void interleave(Particle* aos, Particles soa, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  aos[i] = Particle{soa.x[i],  soa.y[i],  soa.z[i],    soa.vx[i],
                    soa.vy[i], soa.vz[i], soa.mass[i], soa.charge[i]};
}

class Drift : public memlabs::Problem {
 public:
  explicit Drift(int n)
      : n_(n), aos_(n),
        // One multiply-add per particle: float against float64 differs by half an ulp of a
        // result below 3 in size, one more where the product is rounded apart (no FMA).
        out_("out", n, {n}, memlabs::Tolerance{1e-6, 1e-6}) {
    for (auto& f : fields_) f = memlabs::DeviceBuffer<float>(n);
  }

  void fill(std::uint64_t seed, std::uint64_t) override {
    seed_ = seed;
    for (int f = 0; f < kFields; ++f)
      memlabs::fill_uniform(field(f), n_, input_seed(seed_, 10 + f), -1.0f, 1.0f);
    interleave<<<(n_ + kBlock - 1) / kBlock, kBlock>>>(aos_.data(), soa(), n_);
    CUDA_CHECK(cudaGetLastError());
  }

  void run(memlabs::Variant v, cudaStream_t s) override {
    if (v == memlabs::Variant::candidate) {
      CANDIDATE_ONLY(launch_drift(out_.data(), soa(), n_, kDriftDt, s));
    } else {
      drift_aos<<<(n_ + kBlock - 1) / kBlock, kBlock, 0, s>>>(out_.data(), aos_.data(), n_, kDriftDt);
    }
  }

  std::vector<memlabs::Output*> outputs() override { return {&out_}; }
  // Each field an input of its own, so that a read past one array's end is a read past an input.
  std::vector<memlabs::Input> inputs() const override {
    static const char* names[kFields] = {"x", "y", "z", "vx", "vy", "vz", "mass", "charge"};
    std::vector<memlabs::Input> in;
    for (int f = 0; f < kFields; ++f)
      in.push_back({names[f], fields_[f].data(), fields_[f].bytes()});
    return in;
  }

  // What the drift needs: x and vx read, out written, 12 bytes a particle.
  double bytes_moved() const override { return 3.0 * n_ * sizeof(float); }

  std::vector<std::vector<double>> oracle() const override {
    const auto x = memlabs::uniform_host(n_, input_seed(seed_, 10 + 0), -1.0f, 1.0f);
    const auto vx = memlabs::uniform_host(n_, input_seed(seed_, 10 + 3), -1.0f, 1.0f);
    std::vector<double> out(n_);
    for (int i = 0; i < n_; ++i) out[i] = double(x[i]) + double(vx[i]) * double(kDriftDt);
    return {out};
  }

 private:
  float* field(int f) { return fields_[f].data(); }
  const float* field(int f) const { return fields_[f].data(); }
  Particles soa() const {
    return Particles{field(0), field(1), field(2), field(3), field(4), field(5), field(6), field(7)};
  }

  int n_;
  std::uint64_t seed_ = 0;
  // The eight field arrays, each an allocation of its own: a read past one is a read past an input.
  memlabs::DeviceBuffer<float> fields_[kFields];
  memlabs::DeviceBuffer<Particle> aos_;  // the same particles interleaved, for the baseline
  memlabs::OutputBuffer<float> out_;
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
  if (parse_count(name, "dynamic_", n)) return std::make_unique<VectorAdd>(VectorAdd::Path::dynamic, n);
  if (parse_count(name, "static_", n)) {
    if (n > STATIC_CAPACITY) throw std::invalid_argument("static case larger than STATIC_CAPACITY: " + name);
    return std::make_unique<VectorAdd>(VectorAdd::Path::fixed, n);
  }
  if (parse_count(name, "drift_", n)) return std::make_unique<Drift>(n);
  int rows = 0, cols = 0;
  char rest = 0;
  if (std::sscanf(name.c_str(), "%dx%d%c", &rows, &cols, &rest) == 2 && rows >= 1 && cols >= 1)
    return std::make_unique<ScaleShift>(rows, cols);
  throw std::invalid_argument("case name is not dynamic_N, static_N, drift_N or ROWSxCOLS: " + name);
}

}  // namespace

memlabs::LabDefinition memlabs::define_lab() {
  return {{{"dynamic_1", "cudaMalloc path, 1 float"},
           {"dynamic_1000003", "cudaMalloc path, 1,000,003 floats: not a multiple of any block"},
           {"dynamic_4194303", "cudaMalloc path, 4,194,303 floats (16 MiB per array): the leak check"},
           {"static_1", "__device__ path, 1 float"},
           {"static_1000003", "__device__ path, 1,000,003 floats: far fewer than the arrays hold"},
           {"static_4194304", "__device__ path, STATIC_CAPACITY floats: the arrays full, and the leak check"},
           {"1000x777", "1000 x 777: neither side a multiple of the block"},
           {"33x4097", "33 x 4097: short and very wide"},
           {"4097x33", "4097 x 33: tall and narrow"},
           {"1x1", "a single element"},
           {"1024x1024", "1024 x 1024: whole blocks only"},
           {"8192x8192", "8192 x 8192 (256 MiB each way): the timing size"},
           {"drift_1", "one particle"},
           {"drift_4097", "4097 particles: one more than a multiple of any block"},
           {"drift_1000003", "1,000,003 particles"},
           {"drift_33554432", "32 Mi particles (128 MiB a field, 1 GiB as structures): the timing size"}},
          make};
}
