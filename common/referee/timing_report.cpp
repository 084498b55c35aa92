// What a timing session reports: the ratios with their intervals, the
// times, rates and batch sizes behind them, and the baseline beside the
// submission's program against alone (result["timing"]); or why the timed
// runs could not be trusted (result["timed_failure"]).
#include "timing_session.cuh"

using nlohmann::json;

namespace memlabs::timing_detail {
namespace {

// The baseline beside the program, against alone: slower by up to this is noise
// on every lab; beyond it the speedup is scaled down (see report()).
constexpr double kNoiseInterference = 1.10;

std::optional<RatioInterval> interval_of(const std::vector<double>& samples) {
  if (samples.empty()) return std::nullopt;
  return median_interval(samples);
}

// FP32 lanes per SM by compute capability: the peak a kernel cannot pass.
int fp32_lanes(int major, int minor) {
  if (major >= 9 || (major == 8 && minor >= 6)) return 128;
  if (major >= 7 || (major == 6 && minor == 0)) return 64;
  return 128;
}

double peak_gflops() {
  int dev = 0, sms = 0, khz = 0, major = 0, minor = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev);
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
  return 2.0 * sms * fp32_lanes(major, minor) * (khz * 1e3) / 1e9;
}

}  // namespace

void TimingSession::fail(json& result) {
  result["status"] = RefereeStatus::timed_failure;
  TimedFailure f = failure_;
  f.verified_batches = candidate_batches_ - 1;
  result["timed_failure"] = f;
}

// The plain copy's and the library's times, and the rates of every program timed.
void TimingSession::add_rates(TimingReport& t) const {
  const Problem& p = *trusted_sets_[0];
  if (copy_bytes_ > 0) {
    t.memcpy_ms = median_of(s_.memcpy_ms);
    t.memcpy_gbps = 2.0 * copy_bytes_ / (*t.memcpy_ms * 1e6);
    t.memcpy_over_host_link = p.peak_over_host_link();
  }
  if (library_) {
    t.library = p.library_name();
    t.library_ms = median_of(s_.library_ms);
    t.fraction_of_library = interval_of(s_.fraction_of_library);
  }
  if (p.flops() > 0) {
    t.baseline_gflops = p.flops() / (t.baseline_ms * 1e6);
    t.candidate_gflops = p.flops() / (t.candidate_ms * 1e6);
    if (library_) t.library_gflops = p.flops() / (*t.library_ms * 1e6);
  }
  t.baseline_gbps = t.bytes_moved / (t.baseline_ms * 1e6);
  t.candidate_gbps = t.bytes_moved / (t.candidate_ms * 1e6);
}

void TimingSession::report(json& result, double wall, double total) {
  const Problem& p = *trusted_sets_[0];
  const double base = median_of(s_.baseline_ms), cand = median_of(s_.candidate_ms);
  const double solo = median_of(solo_baseline_);
  const double slowdown = solo > 0 ? base / solo : 0.0;
  // Beyond what any lab allows for noise, the baseline's slowdown beside the
  // program does not count in the program's favour: the speedup is taken
  // against the baseline as fast as it ran alone.
  double speedup_scale = 1.0;
  if (slowdown > kNoiseInterference) {
    speedup_scale = kNoiseInterference / slowdown;
    for (double& x : s_.speedup) x *= speedup_scale;
  }
  TimingReport t;
  t.rounds = s_.rounds;
  t.warmup_ms = warmup_ms_;
  t.wall_s = wall;
  t.total_s = total;
  t.converged = converged_;
  t.decided_early = decided_early_;
  t.extended = extended_;
  t.bytes_moved = p.bytes_moved();
  t.flops = p.flops();
  t.batch = k_;
  t.baseline_batch = k_baseline_;
  t.overhead_ms = median_of(s_.overhead_ms);
  t.fresh_input_batches = fresh_input_sets_;
  t.verified_launches = verified_launches_;
  t.baseline_ms = base;
  t.candidate_ms = cand;
  t.speedup = interval_of(s_.speedup);
  t.aa = interval_of(s_.aa);
  t.fraction_of_peak = interval_of(s_.fraction_of_peak);
  t.peak_gflops = peak_gflops();
  t.speedup_samples = s_.speedup;
  t.fraction_of_peak_samples = s_.fraction_of_peak;
  t.aa_samples = s_.aa;
  add_rates(t);
  t.interference = {solo, base, slowdown, interference_limit_, speedup_scale};
  result["timing"] = t;
  result["status"] = slowdown > interference_limit_ ? RefereeStatus::interference : RefereeStatus::ok;
}

}  // namespace memlabs::timing_detail
