#include <chrono>

#include "event_timer.cuh"
#include "l2_flush.cuh"
#include "timing.cuh"

namespace memlabs {
namespace {

enum Slot { kBaseline, kCandidate, kMemcpy, kLibrary };

class RoundRunner {
 public:
  RoundRunner(Problem& problem, cudaStream_t stream) : problem_(problem), stream_(stream) {
    // The memcpy moves the same bytes as the problem: half read, half written.
    const double half = problem.bytes_moved() / 2;
    copy_bytes_ = static_cast<std::size_t>(half) / 256 * 256;
    std::size_t free_bytes = 0, total_bytes = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    // Leave a margin so the scratch never crowds out anything else.
    if (copy_bytes_ > 0 && 2 * copy_bytes_ + (256u << 20) < free_bytes) {
      src_ = DeviceBuffer<unsigned char>(copy_bytes_);
      dst_ = DeviceBuffer<unsigned char>(copy_bytes_);
      CUDA_CHECK(cudaMemsetAsync(src_.data(), 1, copy_bytes_, stream_));
    }
    // Forward then backward, so drift within a round cancels in the ratios.
    std::vector<Slot> forward = {kBaseline, kCandidate};
    if (has_memcpy()) forward.push_back(kMemcpy);
    if (!problem.library_name().empty()) forward.push_back(kLibrary);
    order_ = forward;
    order_.insert(order_.end(), forward.rbegin(), forward.rend());
    timers_.resize(order_.size());
  }

  bool has_memcpy() const { return src_.size() > 0; }
  double copy_bytes() const { return has_memcpy() ? static_cast<double>(copy_bytes_) : 0; }

  // One round; returns the launch times in `order_`.
  std::vector<double> round() {
    std::vector<double> ms(order_.size());
    for (std::size_t k = 0; k < order_.size(); ++k) {
      const bool host = problem_.host_steps() && (order_[k] == kBaseline || order_[k] == kCandidate);
      const Variant v = order_[k] == kBaseline ? Variant::baseline : Variant::candidate;
      if (host) problem_.prepare(v);
      flush_.flush(stream_);
      timers_[k].start(stream_);
      launch(order_[k]);
      timers_[k].stop(stream_);
      // Right after run() returns, as a host program would: a run() that
      // returns before its GPU work is done hands finish() stale results.
      if (host) problem_.finish(v, stream_);
    }
    for (std::size_t k = 0; k < order_.size(); ++k) ms[k] = timers_[k].elapsed_ms();
    return ms;
  }

  const std::vector<Slot>& order() const { return order_; }

 private:
  void launch(Slot slot) {
    switch (slot) {
      case kBaseline: problem_.run(Variant::baseline, stream_); break;
      case kCandidate: problem_.run(Variant::candidate, stream_); break;
      case kMemcpy:
        CUDA_CHECK(cudaMemcpyAsync(dst_.data(), src_.data(), copy_bytes_, cudaMemcpyDeviceToDevice,
                                   stream_));
        break;
      case kLibrary: problem_.run_library(stream_); break;
    }
    CUDA_CHECK_LAUNCH();
  }

  Problem& problem_;
  cudaStream_t stream_;
  L2Flush flush_;
  std::size_t copy_bytes_ = 0;
  DeviceBuffer<unsigned char> src_, dst_;
  std::vector<Slot> order_;
  std::vector<EventTimer> timers_;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void record(TimingReport& r, const std::vector<Slot>& order, const std::vector<double>& ms) {
  double sum[4] = {0, 0, 0, 0};
  double first_baseline = -1, second_baseline = -1;
  int n[4] = {0, 0, 0, 0};
  for (std::size_t k = 0; k < order.size(); ++k) {
    sum[order[k]] += ms[k];
    ++n[order[k]];
    if (order[k] == kBaseline) (first_baseline < 0 ? first_baseline : second_baseline) = ms[k];
  }
  r.baseline_ms.push_back(sum[kBaseline] / n[kBaseline]);
  r.candidate_ms.push_back(sum[kCandidate] / n[kCandidate]);
  r.speedup.push_back(sum[kBaseline] / sum[kCandidate]);
  r.aa.push_back(first_baseline / second_baseline);
  if (n[kMemcpy]) {
    r.memcpy_ms.push_back(sum[kMemcpy] / n[kMemcpy]);
    r.fraction.push_back(sum[kMemcpy] / sum[kCandidate]);
  }
  if (n[kLibrary]) {
    r.library_ms.push_back(sum[kLibrary] / n[kLibrary]);
    r.library_fraction.push_back(sum[kLibrary] / sum[kCandidate]);
  }
  ++r.rounds;
}

const std::vector<double>& samples_for(const TimingReport& r, const std::string& what) {
  if (what == "fraction") return r.fraction;
  if (what == "library") return r.library_fraction;
  return r.speedup;
}

bool all_converged(const TimingReport& r, double target) {
  if (median_interval(r.speedup).relative_half_width() > target) return false;
  if (r.memcpy_available && median_interval(r.fraction).relative_half_width() > target) return false;
  if (!r.library_fraction.empty() && median_interval(r.library_fraction).relative_half_width() > target) return false;
  return true;
}

bool any_undecided(const TimingReport& r, const TimingOptions& o) {
  for (const auto& [what, threshold] : o.decide) {
    const auto& s = samples_for(r, what);
    if (!s.empty() && decide(median_interval(s), threshold) == Decision::undecided) return true;
  }
  return false;
}

}  // namespace

TimingReport time_interleaved(Problem& problem, const TimingOptions& o, cudaStream_t stream) {
  TimingReport r;
  RoundRunner runner(problem, stream);
  r.memcpy_available = runner.has_memcpy();
  r.library = problem.library_name();
  r.copy_bytes = runner.copy_bytes();

  // Warm-up: clocks ramp, caches and TLBs settle, lazy module loading is done.
  do {
    for (double ms : runner.round()) r.warmup_ms += ms;
  } while (r.warmup_ms < o.warmup_ms);

  const auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    record(r, runner.order(), runner.round());
    // A very slow candidate may not reach min_rounds within the cap; three
    // rounds still give a (wide) interval.
    const bool over_cap = seconds_since(t0) > o.cap_s;
    if (r.rounds < o.min_rounds && !(over_cap && r.rounds >= 3)) continue;
    r.converged = all_converged(r, o.target_relative_half_width);
    if (r.converged || over_cap) break;
  }
  // A threshold inside the interval: sample more (up to the cap again) before deciding.
  while (any_undecided(r, o) && seconds_since(t0) < 2 * o.cap_s) {
    r.extended = true;
    for (int i = 0; i < 5; ++i) record(r, runner.order(), runner.round());
  }
  r.converged = all_converged(r, o.target_relative_half_width);
  r.wall_s = seconds_since(t0);
  return r;
}

}  // namespace memlabs
