// lab01 problem definition: cases, inputs, the local-memory baseline, bytes moved, oracle.
#include <cstdio>
#include <string>

#include "lab.cuh"
#include "lab_api.cuh"

namespace {

// The baseline is the skeleton's kernel: a ring buffer indexed by the run-time
// `head`, which ptxas can only place in local memory (128 bytes of stack frame).
__global__ void moving_average_ring(float* out, const float* in, int series, int steps) {
  const int s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= series) return;
  float window[WINDOW] = {};
  int head = 0;
  for (int t = 0; t < steps; ++t) {
    window[head] = in[static_cast<size_t>(t) * series + s];
    float acc = 0.0f;
    for (int k = 0; k < WINDOW; ++k) acc += wma_weight(k) * window[(head + WINDOW - k) % WINDOW];
    out[static_cast<size_t>(t) * series + s] = acc;
    head = (head + 1) % WINDOW;
  }
}

class MovingAverage : public memlabs::Problem {
 public:
  MovingAverage(int steps, int series)
      : steps_(steps), series_(series), in_(size_t(steps) * series),
        // 32 fused multiply-adds of terms below 1 in magnitude: a summation order
        // other than the reference's moves the result by well under 1e-5.
        out_("out", size_t(steps) * series, {steps, series}, memlabs::Tolerance{1e-5, 1e-5}) {}

  void fill(std::uint64_t seed, std::uint64_t) override {
    seed_ = seed;
    memlabs::fill_uniform(in_.data(), in_.size(), seed, -1.0f, 1.0f);
  }

  void run(memlabs::Variant v, cudaStream_t s) override {
    if (v == memlabs::Variant::candidate) {
      CANDIDATE_ONLY(launch_moving_average(out_.data(), in_.data(), series_, steps_, s));
    } else {
      const int blocks = (series_ + THREADS - 1) / THREADS;
      moving_average_ring<<<blocks, THREADS, 0, s>>>(out_.data(), in_.data(), series_, steps_);
    }
  }

  std::vector<memlabs::Output*> outputs() override { return {&out_}; }
  std::vector<memlabs::Input> inputs() const override { return {{"in", in_.data(), in_.bytes()}}; }

  // Each sample read once and each output written once; the window itself
  // should never leave the SM.
  double bytes_moved() const override { return 2.0 * steps_ * series_ * sizeof(float); }

  std::vector<std::vector<double>> oracle() const override {
    const auto in = memlabs::uniform_host(size_t(steps_) * series_, seed_, -1.0f, 1.0f);
    std::vector<double> out(in.size());
    for (int t = 0; t < steps_; ++t)
      for (int s = 0; s < series_; ++s) {
        double acc = 0;
        for (int k = 0; k < WINDOW && k <= t; ++k)
          acc += static_cast<double>(wma_weight(k)) * in[size_t(t - k) * series_ + s];
        out[size_t(t) * series_ + s] = acc;
      }
    return {out};
  }

 private:
  int steps_, series_;
  std::uint64_t seed_ = 0;
  memlabs::DeviceBuffer<float> in_;
  memlabs::OutputBuffer<float> out_;
};

// "STEPSxSERIES": the shape of the row-major in and out arrays.
std::unique_ptr<memlabs::Problem> make(const std::string& name) {
  int steps = 0, series = 0;
  if (std::sscanf(name.c_str(), "%dx%d", &steps, &series) != 2 || steps < 1 || series < 1)
    throw std::invalid_argument("case name is not STEPSxSERIES: " + name);
  return std::make_unique<MovingAverage>(steps, series);
}

}  // namespace

memlabs::LabDefinition memlabs::define_lab() {
  return {{{"1x1", "one series of one sample"},
           {"5x33", "5 steps (fewer than the window) of 33 series (one past a warp)"},
           {"77x1000", "77 steps of 1000 series: neither a multiple of 32 nor of the block"},
           {"64x4096", "64 steps of 4096 series: whole blocks only"},
           {"300x257", "300 steps of 257 series: a long run, one series past a block"},
           {"64x2097152", "64 steps of 2 Mi series (512 MiB each way): the timing size"}},
          make};
}
