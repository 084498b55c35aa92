// lab09 problem definition: three stencils, told apart by the case name.
//   1d-r<R>-<n>          the 1D stencil of radius R on n floats (step 1)
//   box-<W>x<H>          the 17 x 17 box filter on a W x H image (step 2)
//   star-<W>x<H>         the radius-3 star on a W x H image (step 3)
// Every baseline is the same computation with plain loads from global memory
// (L1 and L2 serve the neighbours) and the same zeros outside the array.
// Cases, inputs, baselines, bytes moved, the float64 oracles.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "lab.cuh"
#include "lab_api.cuh"

namespace {

constexpr std::uint64_t kWeightSalt = 0x5eed0f09ull;

// The driver's own copy of the weights (this file is a separate module from
// kernel.cu, whose c_weights the student's set_weights fills).
__constant__ float baseline_weights[MAX_WEIGHTS];

// Inputs are uniform in [-1, 1) and the weights are uniform in [-1, 1) divided
// by their count, so every sum of |weight * input| is below 1. A float sum of
// `count` products (fused multiply-adds or not) then differs from the exact
// one by at most (count + 1) * 2^-24 in any order: one rounding per product
// and per addition, each at most 2^-24 of a partial sum below 1. Twice that
// also covers a candidate compared with the float baseline at the timing sizes
// (both rounded). A tap missing, doubled or taken from the wrong neighbour moves
// an output by |w * in|, on average 1/4 of 1/count: 25 times the tolerance for
// the box's 289 taps, far more for the others, and a bug of that kind hits
// every output of an edge, a row or a tile.
memlabs::Tolerance tolerance_for(int count) { return {0, 2.0 * (count + 1) / 16777216.0}; }

std::vector<float> weights_for(std::uint64_t host_seed, int count) {
  auto w = memlabs::uniform_host(static_cast<std::size_t>(count), memlabs::mix64(host_seed ^ kWeightSalt), -1.0f, 1.0f);
  for (auto& v : w) v /= static_cast<float>(count);
  return w;
}

// ---- the baselines: one output per thread, plain loads, zeros outside ----

// The plain version the lesson starts from: a test on every tap, in every
// warp. (Step 1's answer tests the whole window once; this file is published,
// so the baseline must not be that answer.)
template <int R>
__global__ void stencil_1d_plain(float* __restrict__ out, const float* __restrict__ in, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float sum = 0.0f;
#pragma unroll
  for (int k = -R; k <= R; ++k)
    if (i + k >= 0 && i + k < n) sum += baseline_weights[k + R] * in[i + k];
  out[i] = sum;
}

// 32 x 8 threads, the shape that measured fastest for plain loads
// (docs/measurements/logs/h100-stencil-tile-vs-cache.log). Blocks wholly
// inside the image skip the edge tests, as the probe's padded kernel has none.
__global__ void box_2d_plain(float* __restrict__ out, const float* __restrict__ in, int width, int height) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= width || y >= height) return;
  const int bx0 = blockIdx.x * blockDim.x, by0 = blockIdx.y * blockDim.y;
  const bool interior = bx0 >= BOX_RADIUS && by0 >= BOX_RADIUS && bx0 + int(blockDim.x) + BOX_RADIUS <= width &&
                        by0 + int(blockDim.y) + BOX_RADIUS <= height;
  float sum = 0.0f;
  if (interior) {
    const float* p = in + static_cast<size_t>(y - BOX_RADIUS) * width + (x - BOX_RADIUS);
#pragma unroll
    for (int dy = 0; dy < BOX_TAPS; ++dy)
#pragma unroll
      for (int dx = 0; dx < BOX_TAPS; ++dx) sum += baseline_weights[dy * BOX_TAPS + dx] * p[static_cast<size_t>(dy) * width + dx];
  } else {
#pragma unroll
    for (int dy = 0; dy < BOX_TAPS; ++dy) {
      const int yy = y + dy - BOX_RADIUS;
      if (yy < 0 || yy >= height) continue;
#pragma unroll
      for (int dx = 0; dx < BOX_TAPS; ++dx) {
        const int xx = x + dx - BOX_RADIUS;
        if (xx >= 0 && xx < width) sum += baseline_weights[dy * BOX_TAPS + dx] * in[static_cast<size_t>(yy) * width + xx];
      }
    }
  }
  out[static_cast<size_t>(y) * width + x] = sum;
}

__global__ void star_2d_plain(float* __restrict__ out, const float* __restrict__ in, int width, int height) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= width || y >= height) return;
  float sum = 0.0f;
#pragma unroll
  for (int k = -STAR_RADIUS; k <= STAR_RADIUS; ++k) {
    if (x + k >= 0 && x + k < width) sum += baseline_weights[k + STAR_RADIUS] * in[static_cast<size_t>(y) * width + x + k];
    if (y + k >= 0 && y + k < height)
      sum += baseline_weights[STAR_TAPS + k + STAR_RADIUS] * in[static_cast<size_t>(y + k) * width + x];
  }
  out[static_cast<size_t>(y) * width + x] = sum;
}

enum class Shape { line, box, star };

// One problem: the input, the output and the weights of one stencil.
class Stencil : public memlabs::Problem {
 public:
  Stencil(Shape shape, int radius, int width, int height)
      : shape_(shape), radius_(radius), width_(width), height_(height),
        count_(shape == Shape::line  ? 2 * radius + 1
               : shape == Shape::box ? BOX_TAPS * BOX_TAPS
                                     : 2 * STAR_TAPS),
        in_(static_cast<std::size_t>(width) * height),
        out_("out", static_cast<std::size_t>(width) * height,
             shape == Shape::line ? std::vector<std::int64_t>{width} : std::vector<std::int64_t>{height, width},
             tolerance_for(count_)) {}

  void fill(std::uint64_t device_seed, std::uint64_t host_seed) override {
    seed_ = device_seed;
    memlabs::fill_uniform(in_.data(), in_.size(), seed_, -1.0f, 1.0f);
    host_inputs(host_seed);
  }

  // The weights, once per set of inputs, as a real program would upload them:
  // the timed launches do not include it.
  void host_inputs(std::uint64_t host_seed) override {
    weights_ = weights_for(host_seed, count_);
    CUDA_CHECK(cudaMemcpyToSymbol(baseline_weights, weights_.data(), weights_.size() * sizeof(float)));
    CANDIDATE_ONLY(set_weights(weights_.data(), count_));
  }

  void run(memlabs::Variant v, cudaStream_t s) override {
    float* out = out_.data();
    const float* in = in_.data();
    const int n = width_;
    if (v == memlabs::Variant::candidate) {
      switch (shape_) {
        case Shape::line: CANDIDATE_ONLY(launch_stencil_1d(out, in, n, radius_, s)); break;
        case Shape::box: CANDIDATE_ONLY(launch_box_2d(out, in, width_, height_, s)); break;
        case Shape::star: CANDIDATE_ONLY(launch_star_2d(out, in, width_, height_, s)); break;
      }
      return;
    }
    if (shape_ == Shape::line) {
      const int threads = 256, blocks = (n + threads - 1) / threads;
      switch (radius_) {
        case 1: stencil_1d_plain<1><<<blocks, threads, 0, s>>>(out, in, n); break;
        case 3: stencil_1d_plain<3><<<blocks, threads, 0, s>>>(out, in, n); break;
        default: stencil_1d_plain<8><<<blocks, threads, 0, s>>>(out, in, n); break;
      }
      return;
    }
    const dim3 block(32, 8);
    const dim3 grid((width_ + 31) / 32, (height_ + 7) / 8);
    if (shape_ == Shape::box)
      box_2d_plain<<<grid, block, 0, s>>>(out, in, width_, height_);
    else
      star_2d_plain<<<grid, block, 0, s>>>(out, in, width_, height_);
  }

  std::vector<memlabs::Output*> outputs() override { return {&out_}; }
  std::vector<memlabs::Input> inputs() const override { return {{"in", in_.data(), in_.bytes()}}; }

  // The input read once and the output written once: the neighbours of a
  // value are the same bytes again, which a good kernel gets from L1, L2 or
  // shared memory, not from DRAM. The weights are at most 1156 bytes.
  double bytes_moved() const override { return 2.0 * sizeof(float) * static_cast<double>(in_.size()); }

  std::vector<std::vector<double>> oracle() const override {
    const auto in = memlabs::uniform_host(in_.size(), seed_, -1.0f, 1.0f);
    const long long w = width_, h = height_;
    const auto at = [&](long long x, long long y) {
      return x < 0 || x >= w || y < 0 || y >= h ? 0.0 : double(in[static_cast<std::size_t>(y * w + x)]);
    };
    std::vector<double> out(in_.size());
    for (long long y = 0; y < h; ++y)
      for (long long x = 0; x < w; ++x) {
        double sum = 0;
        if (shape_ == Shape::line) {
          for (int k = -radius_; k <= radius_; ++k) sum += double(weights_[k + radius_]) * at(x + k, 0);
        } else if (shape_ == Shape::box) {
          for (int dy = -BOX_RADIUS; dy <= BOX_RADIUS; ++dy)
            for (int dx = -BOX_RADIUS; dx <= BOX_RADIUS; ++dx)
              sum += double(weights_[(dy + BOX_RADIUS) * BOX_TAPS + dx + BOX_RADIUS]) * at(x + dx, y + dy);
        } else {
          for (int k = -STAR_RADIUS; k <= STAR_RADIUS; ++k)
            sum += double(weights_[k + STAR_RADIUS]) * at(x + k, y) +
                   double(weights_[STAR_TAPS + k + STAR_RADIUS]) * at(x, y + k);
        }
        out[static_cast<std::size_t>(y * w + x)] = sum;
      }
    return {out};
  }

 private:
  Shape shape_;
  int radius_, width_, height_, count_;
  std::uint64_t seed_ = 0;
  std::vector<float> weights_;
  memlabs::DeviceBuffer<float> in_;
  memlabs::OutputBuffer<float> out_;
};

const memlabs::CaseInfo kCases[] = {
    {"1d-r1-1", "radius 1, n = 1: both neighbours outside"},
    {"1d-r3-2", "radius 3, n = 2: fewer values than the radius"},
    {"1d-r8-5", "radius 8, n = 5: every window hangs over both ends"},
    {"1d-r8-12", "radius 8, n = 12: more values than the radius, fewer than a window"},
    {"1d-r3-1000", "radius 3, n = 1000: four blocks, the last one partly idle"},
    {"1d-r1-1000003", "radius 1, n = 1,000,003: not a multiple of the block"},
    {"1d-r3-1000003", "radius 3, n = 1,000,003"},
    {"1d-r8-1000003", "radius 8, n = 1,000,003"},
    {"1d-r1-67108864", "radius 1, n = 64 Mi (256 MiB in, 256 MiB out): timed by grader bench, not graded"},
    {"1d-r3-67108864", "radius 3, n = 64 Mi (256 MiB in, 256 MiB out): the timing size"},
    {"1d-r8-67108864", "radius 8, n = 64 Mi (256 MiB in, 256 MiB out): timed by grader bench, not graded"},
    {"box-1x1", "a single pixel: every tap but the centre outside"},
    {"box-17x3", "17 x 3: narrower than a block, shorter than the radius"},
    {"box-100x37", "100 x 37: partial blocks on the right and at the bottom"},
    {"box-1001x999", "1001 x 999: odd sizes, not a multiple of any block"},
    {"box-33x4097", "33 x 4097: one column past a block, tall"},
    {"box-1024x1024", "1024 x 1024: whole blocks only"},
    {"box-8192x8192", "8192 x 8192 (256 MiB in, 256 MiB out): the timing size"},
    {"star-1x1", "a single pixel"},
    {"star-5x2", "5 x 2: smaller than the radius in one direction"},
    {"star-100x37", "100 x 37: partial blocks on the right and at the bottom"},
    {"star-1001x999", "1001 x 999: odd sizes, not a multiple of any block"},
    {"star-4097x33", "4097 x 33: wide and short"},
    {"star-8192x8192", "8192 x 8192 (256 MiB in, 256 MiB out): the timing size"},
};

std::unique_ptr<memlabs::Problem> make(const std::string& name) {
  bool known = false;
  for (const auto& c : kCases) known = known || c.name == name;
  if (!known) throw std::invalid_argument("no case named " + name);
  int r = 0, n = 0, w = 0, h = 0;
  char tail = 0;
  if (std::sscanf(name.c_str(), "1d-r%d-%d%c", &r, &n, &tail) == 2) return std::make_unique<Stencil>(Shape::line, r, n, 1);
  if (std::sscanf(name.c_str(), "box-%dx%d%c", &w, &h, &tail) == 2)
    return std::make_unique<Stencil>(Shape::box, BOX_RADIUS, w, h);
  if (std::sscanf(name.c_str(), "star-%dx%d%c", &w, &h, &tail) == 2)
    return std::make_unique<Stencil>(Shape::star, STAR_RADIUS, w, h);
  throw std::invalid_argument("case name is not 1d-rR-N, box-WxH or star-WxH: " + name);
}

}  // namespace

memlabs::LabDefinition memlabs::define_lab() {
  memlabs::LabDefinition lab;
  for (const auto& c : kCases) lab.cases.push_back(c);
  lab.make = make;
  return lab;
}
