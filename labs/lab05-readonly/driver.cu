// lab05 problem definition: two problems, told apart by the case name.
//   acc-N                  the 16-tap filter of part 1; baseline: the same kernel with plain pointers
//   resample-WxH-to-W2xH2  bilinear resampling of part 2; baseline: bilinear by hand from global memory
// Cases, inputs, baselines, bytes moved, the float64 oracles and the leak check.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "lab.cuh"
#include "lab_api.cuh"

namespace {

// Every input is uniform in [kLo, kHi), so two neighbouring pixels differ by
// less than kHi - kLo: the bound the resample tolerance is built from.
constexpr float kLo = -1.0f, kHi = 1.0f;
constexpr std::uint64_t kWeightSalt = 0x7a9517e1ull, kImageSalt = 0x13a6e5a1ull;

// ---- part 1: accumulate into out[i] ----

// The baseline: the skeleton's kernel, plain pointers. The compiler must assume
// that out may overlap in and w, so every `out[i] +=` is a store, and the next
// tap's loads wait behind it.
__global__ void accumulate_plain(float* out, const float* in, const float* w, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = 0.0f;
  for (int k = 0; k < TAPS; ++k) out[i] += w[k] * in[i + k];
}

// Sums of 16 products of numbers below 1 in magnitude: float rounding stays
// near 16 * 16 * 2^-24 (1.5e-5) even in the worst order; a missing or shifted
// tap is off by about 0.3.
constexpr memlabs::Tolerance kAccumulateTolerance{0, 1e-4};

class Accumulate : public memlabs::Problem {
 public:
  explicit Accumulate(int n)
      : n_(n), in_(std::size_t(n) + TAPS - 1), w_(TAPS), out_("out", std::size_t(n), {n}, kAccumulateTolerance) {}

  void fill(std::uint64_t seed, std::uint64_t) override {
    seed_ = seed;
    memlabs::fill_uniform(in_.data(), in_.size(), seed, kLo, kHi);
    memlabs::fill_uniform(w_.data(), w_.size(), seed ^ kWeightSalt, kLo, kHi);
  }

  // Both variants overwrite every out[i] (starting from 0), so runs repeat.
  void run(memlabs::Variant v, cudaStream_t s) override {
    if (v == memlabs::Variant::candidate) {
      CANDIDATE_ONLY(launch_accumulate(out_.data(), in_.data(), w_.data(), n_, s));
    } else {
      const int threads = 256;
      accumulate_plain<<<(n_ + threads - 1) / threads, threads, 0, s>>>(out_.data(), in_.data(), w_.data(), n_);
    }
  }

  std::vector<memlabs::Output*> outputs() override { return {&out_}; }
  std::vector<memlabs::Input> inputs() const override {
    return {{"in", in_.data(), in_.bytes()}, {"w", w_.data(), w_.bytes()}};
  }

  // `in` and `w` read once, `out` written once: the loop's repeated stores to
  // out[i] are exactly what a good kernel does not pay for.
  double bytes_moved() const override {
    return sizeof(float) * (double(in_.size()) + double(w_.size()) + double(n_));
  }

  std::vector<std::vector<double>> oracle() const override {
    const auto in = memlabs::uniform_host(in_.size(), seed_, kLo, kHi);
    const auto w = memlabs::uniform_host(TAPS, seed_ ^ kWeightSalt, kLo, kHi);
    std::vector<double> out(n_);
    for (int i = 0; i < n_; ++i) {
      double sum = 0;
      for (int k = 0; k < TAPS; ++k) sum += double(w[k]) * double(in[std::size_t(i) + k]);
      out[i] = sum;
    }
    return {out};
  }

 private:
  int n_;
  std::uint64_t seed_ = 0;
  memlabs::DeviceBuffer<float> in_, w_;
  memlabs::OutputBuffer<float> out_;
};

// ---- part 2: bilinear resampling ----

// The baseline: bilinear by hand from global memory, the same arithmetic as
// the skeleton's kernel, with the read-only promise so that it is the best
// plain-memory version and not a straw man.
__global__ void resample_manual(float* __restrict__ out, int out_width, int out_height,
                                const float* __restrict__ in, int width, int height) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= out_width || y >= out_height) return;
  const float fx = (x + 0.5f) * (static_cast<float>(width) / out_width) - 0.5f;
  const float fy = (y + 0.5f) * (static_cast<float>(height) / out_height) - 0.5f;
  const float x0f = floorf(fx), y0f = floorf(fy);
  const float a = fx - x0f, b = fy - y0f;
  const int x0 = min(max(static_cast<int>(x0f), 0), width - 1);
  const int x1 = min(max(static_cast<int>(x0f) + 1, 0), width - 1);
  const int y0 = min(max(static_cast<int>(y0f), 0), height - 1);
  const int y1 = min(max(static_cast<int>(y0f) + 1, 0), height - 1);
  const float* row0 = in + static_cast<size_t>(y0) * width;
  const float* row1 = in + static_cast<size_t>(y1) * width;
  const float top = (1.0f - a) * row0[x0] + a * row0[x1];
  const float bottom = (1.0f - a) * row1[x0] + a * row1[x1];
  out[static_cast<size_t>(y) * out_width + x] = (1.0f - b) * top + b * bottom;
}

// The texture unit's linear filter keeps its weights in 9-bit fixed point with
// 8 bits of fraction (CUDA C++ Programming Guide, "Texture Fetching"). A weight
// off by up to 2^-8 moves the blend of two texels by up to 2^-8 times their
// difference, which is below kHi - kLo, once per axis: 2 * (kHi - kLo) * 2^-8
// in all. A quarter more covers the float rounding of the coordinates (about
// 2^-12 texels at 8192 pixels) and the product of the two weight errors. A
// half-pixel mistake moves the sample by a sixth of a texel or more in the
// graded cases, and so is off by several times this bound at most pixels.
constexpr double kResampleAtol = 1.25 * 2.0 * (double(kHi) - double(kLo)) / 256.0;

class Resample : public memlabs::Problem {
 public:
  Resample(int width, int height, int out_width, int out_height)
      : width_(width), height_(height), out_width_(out_width), out_height_(out_height),
        pixels_(std::size_t(width) * height),
        out_("out", std::size_t(out_width) * out_height, {out_height, out_width},
             memlabs::Tolerance{0, kResampleAtol}) {
    src_.pixels = pixels_.data();
    src_.width = width;
    src_.height = height;
  }

  ~Resample() override { release_source(); }

  void fill(std::uint64_t seed, std::uint64_t) override {
    seed_ = seed;
    memlabs::fill_uniform(pixels_.data(), pixels_.size(), seed ^ kImageSalt, kLo, kHi);
  }

  // New pixels are coming: the texture's copy of the old ones is stale.
  void host_inputs(std::uint64_t) override { release_source(); }

  // The source is made from the pixels before the launch, outside the timed
  // run, and kept: the timed work is the resample, not the copy into the
  // texture's array.
  bool host_steps() const override { return true; }
  void prepare(memlabs::Variant v) override {
    if (v != memlabs::Variant::candidate || created_) return;
    CANDIDATE_ONLY(create_resample_source(src_));
    created_ = true;
  }

  void run(memlabs::Variant v, cudaStream_t s) override {
    if (v == memlabs::Variant::candidate) {
      prepare(v);
      CANDIDATE_ONLY(launch_resample(out_.data(), out_width_, out_height_, src_, s));
    } else {
      const dim3 block(32, 8);
      const dim3 grid((out_width_ + block.x - 1) / block.x, (out_height_ + block.y - 1) / block.y);
      resample_manual<<<grid, block, 0, s>>>(out_.data(), out_width_, out_height_, pixels_.data(), width_,
                                             height_);
    }
  }

  std::vector<memlabs::Output*> outputs() override { return {&out_}; }
  std::vector<memlabs::Input> inputs() const override { return {{"src.pixels", pixels_.data(), pixels_.bytes()}}; }

  double bytes_moved() const override {
    return sizeof(float) * (double(width_) * height_ + double(out_width_) * out_height_);
  }

  // Exact bilinear in float64, with the convention of lab.cuh.
  std::vector<std::vector<double>> oracle() const override {
    const auto in = memlabs::uniform_host(pixels_.size(), seed_ ^ kImageSalt, kLo, kHi);
    const auto at = [&](long long i, long long j) {
      i = std::clamp<long long>(i, 0, width_ - 1);
      j = std::clamp<long long>(j, 0, height_ - 1);
      return double(in[std::size_t(j) * width_ + std::size_t(i)]);
    };
    std::vector<double> out(std::size_t(out_width_) * out_height_);
    for (int y = 0; y < out_height_; ++y) {
      const double fy = (y + 0.5) * height_ / out_height_ - 0.5;
      const double y0 = std::floor(fy), b = fy - y0;
      for (int x = 0; x < out_width_; ++x) {
        const double fx = (x + 0.5) * width_ / out_width_ - 0.5;
        const double x0 = std::floor(fx), a = fx - x0;
        const auto i = static_cast<long long>(x0), j = static_cast<long long>(y0);
        out[std::size_t(y) * out_width_ + x] = (1 - b) * ((1 - a) * at(i, j) + a * at(i + 1, j)) +
                                               b * ((1 - a) * at(i, j + 1) + a * at(i + 1, j + 1));
      }
    }
    return {out};
  }

  // Creates and destroys a source kLeakRounds more times and watches the
  // device's free memory: a destroy that does not free the cudaArray leaves at
  // least one image behind every round. Other processes on the GPU (the
  // referee, another grade) move the device-wide free memory too (by a few
  // tens of MiB at most), so the allowance is well above that, the rounds
  // are many enough that a leak of the 1000 x 777 image (3 MiB) is three times
  // the allowance, and a batch over the allowance is tried once more before it
  // counts: a leak grows in every batch, another process's allocation rarely
  // twice. On much smaller images the check cannot see a leak, which is why
  // lab.json names that case.
  std::vector<memlabs::Fact> facts() override {
    constexpr int kLeakRounds = 64, kBatches = 2;
    constexpr double kAllowedBytes = 64.0 * (1 << 20);
    memlabs::Fact freed{"source_freed", false, ""};
    try {
      const double image_bytes = double(pixels_.size()) * sizeof(float);
      double grown = 0;
      for (int batch = 0; batch < kBatches && !freed.ok; ++batch) {
        std::size_t free_before = 0, free_after = 0, total = 0;
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaMemGetInfo(&free_before, &total));
        for (int r = 0; r < kLeakRounds; ++r) {
          ResampleSource s;
          s.pixels = pixels_.data();
          s.width = width_;
          s.height = height_;
          CANDIDATE_ONLY(create_resample_source(s));
          CANDIDATE_ONLY(destroy_resample_source(s));
        }
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaMemGetInfo(&free_after, &total));
        grown = free_before > free_after ? double(free_before - free_after) : 0.0;
        freed.ok = grown <= kAllowedBytes;
      }
      char detail[256];
      std::snprintf(detail, sizeof detail,
                    "%d create/destroy pairs left %.1f MiB more device memory in use (the image is %.1f MiB)%s",
                    kLeakRounds, grown / (1 << 20), image_bytes / (1 << 20),
                    freed.ok ? "" : ": destroy_resample_source must free the cudaArray");
      freed.detail = detail;
    } catch (const std::exception& e) {
      freed.detail = std::string("creating and destroying a source again failed: ") + e.what();
    }
    return {freed};
  }

 private:
  void release_source() {
    if (!created_) return;
    created_ = false;
    try {  // a destructor must not throw; the leak check reports a failing destroy
      cudaDeviceSynchronize();
      CANDIDATE_ONLY(destroy_resample_source(src_));
    } catch (...) {
    }
    src_.array = nullptr;
    src_.texture = 0;
  }

  int width_, height_, out_width_, out_height_;
  std::uint64_t seed_ = 0;
  memlabs::DeviceBuffer<float> pixels_;
  memlabs::OutputBuffer<float> out_;
  ResampleSource src_;
  bool created_ = false;
};

const memlabs::CaseInfo kCases[] = {
    {"acc-1", "n = 1: a single output"},
    {"acc-1000", "n = 1000: four blocks, the last one partly idle"},
    {"acc-1000003", "n = 1,000,003: not a multiple of the block size"},
    {"acc-67108864", "n = 64 Mi (256 MiB in, 256 MiB out): the timing size"},
    {"resample-1x1-to-3x2", "one pixel stretched to 3 x 2: clamping on every side"},
    {"resample-1000x777-to-1533x1201", "1000 x 777 up to 1533 x 1201: a different non-integer factor per axis"},
    {"resample-777x1000-to-500x640", "777 x 1000 down to 500 x 640: shrinking"},
    {"resample-4097x3-to-33x7", "a 4097 x 3 strip to 33 x 7: very different factors"},
    {"resample-1024x1024-to-2048x2048", "1024 x 1024 up to 2048 x 2048: exactly 2x, weights 1/4 and 3/4"},
    {"resample-4096x4096-to-8192x8192",
     "4096 x 4096 up to 8192 x 8192 (64 MiB in, 256 MiB out): the size of the lesson's measurement, not graded"},
};

std::unique_ptr<memlabs::Problem> make(const std::string& name) {
  int n = 0, w = 0, h = 0, ow = 0, oh = 0;
  char tail = 0;
  if (std::sscanf(name.c_str(), "acc-%d%c", &n, &tail) == 1 && n >= 1)
    return std::make_unique<Accumulate>(n);
  if (std::sscanf(name.c_str(), "resample-%dx%d-to-%dx%d%c", &w, &h, &ow, &oh, &tail) == 4 && w >= 1 && h >= 1 &&
      ow >= 1 && oh >= 1)
    return std::make_unique<Resample>(w, h, ow, oh);
  throw std::invalid_argument("case name is neither acc-N nor resample-WxH-to-WxH: " + name);
}

}  // namespace

memlabs::LabDefinition memlabs::define_lab() {
  memlabs::LabDefinition lab;
  for (const auto& c : kCases) lab.cases.push_back(c);
  lab.make = make;
  return lab;
}
