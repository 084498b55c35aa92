// The timing protocol of timing.cuh, in the order it runs: the baseline timed
// alone to size the batches, the buffer sets and the submission's program
// started, the warm-up, the rounds until every ratio converges (or a
// threshold is decided), and the baseline alone again. One round's slots and
// checks are timing_slots.cpp's; the result is timing_report.cpp's.
#include "timing.cuh"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "referee_phases.hpp"
#include "timing_session.cuh"

using nlohmann::json;

namespace memlabs {
namespace timing_detail {
namespace {

constexpr double kTargetBatchMs = 2.0;        // a batch this long makes N a small share of it
constexpr double kMaxBaselineBatchMs = 60;    // a slow baseline is timed on fewer sets
constexpr double kMaxCandidateBatchS = 0.25;  // and so is a slow candidate
constexpr std::size_t kMaxSets = 48;
constexpr double kMemoryShare = 0.6;  // of free device memory, for the buffer sets
// The fewest rounds that may decide every threshold before the intervals reach
// ±2 %: with 6 rounds the median's interval is the samples' whole range, which
// holds the median with 97 % confidence, so a verdict needs every round on its side.
constexpr std::size_t kMinDecidingRounds = 6;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string seconds_text(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f s", s);
  return text;
}

const std::vector<double>& samples_for(const Samples& s, TimedRatio r) {
  switch (r) {
    case TimedRatio::speedup:
      return s.speedup;
    case TimedRatio::fraction_of_peak:
      return s.fraction_of_peak;
    case TimedRatio::fraction_of_library:
      return s.fraction_of_library;
    case TimedRatio::aa:
      return s.aa;
  }
  return s.speedup;  // not reached: every TimedRatio is read above
}

}  // namespace

TimingSession::TimingSession(const LabDefinition& lab, const RefereeArgs& a, GpuTurnFiles* turn)
    : lab_(lab), a_(a), case_(a.cases.at(0)), turn_(turn) {
  CUDA_CHECK(cudaStreamCreate(&stream_));
}

void TimingSession::end_servers() {
  if (turn_) turn_->give_back();  // ending the servers times nothing
  worker_.kill_all();
  trusted_.kill_all();
}

TimingSession::~TimingSession() {
  if (turn_) turn_->give_back();  // after a failure too: ending the servers times nothing
  worker_.kill_all();
  trusted_.kill_all();
  trusted_sets_.clear();
  candidate_sets_.clear();
  cudaStreamDestroy(stream_);
}

void TimingSession::run(json& result) {
  const auto t_start = std::chrono::steady_clock::now();
  auto begin = t_start;
  const auto phase = [&](const std::string& what) {
    referee_phases().note(what, begin);
    begin = std::chrono::steady_clock::now();
  };
  const std::size_t set_bytes = open_first_set();
  phase("the trusted server and one buffer set");
  // From here to the baseline timed alone again, everything is timed or sized
  // by what was timed: no other grade's work may run on the GPU meanwhile.
  if (turn_) {
    take_gpu_turn(*turn_, GpuUse::exclusive);
    begin = std::chrono::steady_clock::now();
  }
  time_alone(set_bytes);
  phase("the trusted slots timed alone");
  open_sets();
  phase(std::to_string(k_) + " buffer sets in each process, your program started");
  if (!warm_up()) return fail(result);
  phase("warm-up");
  const auto t0 = std::chrono::steady_clock::now();
  parts_ = {};
  const bool sampled = sample_until_converged(t0);
  phase(std::to_string(s_.rounds) + " rounds (fresh inputs " + seconds_text(parts_.inputs_s) + ", timed slots " +
        seconds_text(parts_.slots_s) + ", checks " + seconds_text(parts_.checks_s) + ")");
  if (!sampled) return fail(result);
  const double wall = seconds_since(t0);
  time_baseline_alone_again();
  phase("the baseline alone again");
  if (turn_) turn_->give_back();  // freeing the buffers and ending the servers time nothing
  report(result, wall, seconds_since(t_start));
}

std::size_t TimingSession::open_first_set() {
  trusted_ = start_trusted_server(a_);
  std::size_t set_bytes = 0;
  trusted_sets_.push_back(open_shared(lab_, case_, 0, trusted_, a_.timeout_s, ServerRole::trusted, &set_bytes));
  Problem& first = *trusted_sets_[0];
  host_steps_ = first.host_steps();
  interference_limit_ = first.interference_limit();
  library_ = !first.library_name().empty();
  return set_bytes;
}

// Alone on the GPU: how long the trusted slots take, which sizes the batches.
void TimingSession::time_alone(std::size_t set_bytes) {
  k_ = k_baseline_ = 1;
  new_inputs(false);
  // After the first inputs: a lab whose sizes come from its host inputs
  // (lab03's text lengths) knows the bytes it moves only then.
  copy_bytes_ = static_cast<std::size_t>(trusted_sets_[0]->bytes_moved() / 2) / 256 * 256;
  std::vector<double> n0, a0, c0, l0;
  for (int i = 0; i < 4; ++i) {
    n0.push_back(slot_nop());
    a0.push_back(slot_baseline({0}));
    if (copy_bytes_ > 0) c0.push_back(slot_copy(1));
    if (library_) l0.push_back(slot_library());
    warmup_ms_ += 1e3 * (a0.back() + (c0.empty() ? 0 : c0.back()) + (l0.empty() ? 0 : l0.back()));
  }
  const double n = median_of({n0.begin() + 1, n0.end()});
  const double a1 = std::max(1e-6, median_of({a0.begin() + 1, a0.end()}) - n);
  double floor_s = copy_bytes_ > 0 ? std::max(1e-6, median_of({c0.begin() + 1, c0.end()}) - n) : a1;
  if (library_) floor_s = std::min(floor_s, std::max(1e-6, median_of({l0.begin() + 1, l0.end()}) - n));
  for (std::size_t i = 1; i < a0.size(); ++i) solo_baseline_.push_back(1e3 * (a0[i] - n));

  std::size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::size_t by_memory =
      set_bytes > 0 ? static_cast<std::size_t>(kMemoryShare * free_bytes / (2.0 * set_bytes)) : kMaxSets;
  k_ = host_steps_ ? 1
                   : std::clamp<std::size_t>(static_cast<std::size_t>(std::ceil(kTargetBatchMs / (1e3 * floor_s))), 1,
                                             std::max<std::size_t>(1, std::min(by_memory, kMaxSets)));
  k_baseline_ =
      std::clamp<std::size_t>(static_cast<std::size_t>(std::ceil(kTargetBatchMs / (1e3 * a1))), 1,
                              std::max<std::size_t>(1, static_cast<std::size_t>(kMaxBaselineBatchMs / (1e3 * a1))));
  k_baseline_ = std::min(k_baseline_, k_);
}

void TimingSession::open_sets() {
  for (std::size_t k = 1; k < k_; ++k)
    trusted_sets_.push_back(open_shared(lab_, case_, static_cast<int>(k), trusted_, a_.timeout_s, ServerRole::trusted));
  worker_ = start_worker(a_);
  for (std::size_t k = 0; k < k_; ++k)
    candidate_sets_.push_back(open_shared(lab_, case_, static_cast<int>(k), worker_, a_.timeout_s, ServerRole::worker));
  pause_worker();
}

// Clocks ramp, caches and TLBs settle, lazy module loading is done. The GPU
// works through the whole of a round (fresh inputs, the timed slots, every
// output checked), so the rounds' own time is the GPU's warm-up: at least
// a_.warmup_ms of it, and two rounds.
bool TimingSession::warm_up() {
  Samples warm;
  const auto t0 = std::chrono::steady_clock::now();
  const double alone_ms = warmup_ms_;  // the GPU time of the slots timed alone
  do {
    if (!round(warm)) return false;
    warmup_ms_ = alone_ms + 1e3 * seconds_since(t0);
    // A very slow candidate gets fewer launches per batch, so rounds still fit the cap.
    const double batch_s = 1e-3 * warm.candidate_ms.back() * k_;
    if (warm.rounds == 1 && batch_s > kMaxCandidateBatchS) {
      k_ = std::max<std::size_t>(1, static_cast<std::size_t>(kMaxCandidateBatchS / (batch_s / k_)));
      k_baseline_ = std::min(k_baseline_, k_);
    }
  } while (warm.rounds < 2 || warmup_ms_ < a_.warmup_ms);
  return true;
}

bool TimingSession::sample_until_converged(std::chrono::steady_clock::time_point t0) {
  for (;;) {
    if (!round(s_)) return false;
    // Every threshold the grader will judge is decided: more rounds would
    // narrow the intervals, not change a verdict.
    if (!a_.decide.empty() && s_.rounds >= kMinDecidingRounds && !any_undecided()) {
      decided_early_ = true;
      break;
    }
    const bool over_cap = seconds_since(t0) > a_.cap_s;
    if (s_.rounds < a_.min_rounds && !(over_cap && s_.rounds >= 3)) continue;
    converged_ = all_converged();
    if (converged_ || over_cap) break;
  }
  // A threshold inside the interval: sample more (up to the cap again) before deciding.
  while (any_undecided() && seconds_since(t0) < 2 * a_.cap_s) {
    extended_ = true;
    for (int i = 0; i < 3; ++i)
      if (!round(s_)) return false;
  }
  converged_ = all_converged();
  return true;
}

// With the submission's program and all it started gone.
void TimingSession::time_baseline_alone_again() {
  worker_.kill_all();
  for (int i = 0; i < 3; ++i) {
    new_inputs(false);
    const double nop = slot_nop();
    solo_baseline_.push_back(1e3 * (slot_baseline(sample_sets(k_baseline_)) - nop) / k_baseline_);
  }
}

bool TimingSession::round(Samples& s) {
  double t[2][5] = {};  // per half: A, B, C, L, N
  for (int half = 0; half < 2; ++half) {
    auto t_part = std::chrono::steady_clock::now();
    const auto part = [&t_part](double& into) {
      into += seconds_since(t_part);
      t_part = std::chrono::steady_clock::now();
    };
    new_inputs(true);
    part(parts_.inputs_s);
    // The baseline's sample: before the candidate ran in the first half
    // (the paused worker cannot learn it), after it in the second.
    std::vector<std::size_t> sample;
    const auto A = [&] { t[half][0] = slot_baseline(sample); };
    const auto B = [&] { t[half][1] = slot_candidate(); };
    const auto C = [&] { t[half][2] = copy_bytes_ > 0 ? slot_copy(k_) : 0; };
    const auto L = [&] { t[half][3] = library_ ? slot_library() : 0; };
    const auto N = [&] { t[half][4] = slot_nop(); };
    if (half == 0) {
      sample = sample_sets(k_baseline_);
      A(), B(), C(), L(), N();
    } else {
      N(), L(), C(), B();
      sample = sample_sets(k_baseline_);
      A();
    }
    part(parts_.slots_s);
    ++candidate_batches_;
    const bool verified = !unfinished_ && verify(sample);
    part(parts_.checks_s);
    if (!verified) {
      failure_.round = s.rounds + 1;
      return false;
    }
  }
  const double n = 0.5 * (t[0][4] + t[1][4]);
  const auto per = [&](int slot, std::size_t launches, int half) {
    return std::max(1e-9, (t[half][slot] - n) / static_cast<double>(launches));
  };
  const double a = 0.5 * (per(0, k_baseline_, 0) + per(0, k_baseline_, 1));
  const double b = 0.5 * (per(1, k_, 0) + per(1, k_, 1));
  s.overhead_ms.push_back(1e3 * n);
  s.baseline_ms.push_back(1e3 * a);
  s.candidate_ms.push_back(1e3 * b);
  s.speedup.push_back(a / b);
  s.aa.push_back(per(0, k_baseline_, 0) / per(0, k_baseline_, 1));
  if (copy_bytes_ > 0) {
    const double c = 0.5 * (per(2, k_, 0) + per(2, k_, 1));
    s.memcpy_ms.push_back(1e3 * c);
    s.fraction_of_peak.push_back(c / b);
  }
  if (library_) {
    const double l = 0.5 * (per(3, k_, 0) + per(3, k_, 1));
    s.library_ms.push_back(1e3 * l);
    s.fraction_of_library.push_back(l / b);
  }
  ++s.rounds;
  return true;
}

bool TimingSession::all_converged() const {
  const double target = 0.02;
  if (median_interval(s_.speedup).relative_half_width() > target) return false;
  for (const std::vector<double>* v : {&s_.fraction_of_peak, &s_.fraction_of_library})
    if (!v->empty() && median_interval(*v).relative_half_width() > target) return false;
  return true;
}

bool TimingSession::any_undecided() const {
  for (const auto& [ratio, threshold] : a_.decide) {
    const auto& v = samples_for(s_, ratio);
    if (!v.empty() && decide(median_interval(v), threshold) == Decision::undecided) return true;
  }
  return false;
}

}  // namespace timing_detail

void take_gpu_turn(GpuTurnFiles& turn, GpuUse use) {
  const auto begin = RefereePhases::Clock::now();
  bool waited = false;
  turn.take(use, [&] { waited = true; });
  if (waited)
    referee_phases().note(use == GpuUse::exclusive ? "waiting for the GPU alone (other grades' work was running)"
                                                   : "waiting for the GPU (another grade was timing)",
                          begin);
}

void time_mode(const LabDefinition& lab, const RefereeArgs& a, json& result, GpuTurnFiles* turn) {
  // Never destroyed: freeing the buffer sets (gigabytes, a synchronisation
  // each) and the context is left to the driver when the referee exits, after
  // the grader has the result (referee_main.cpp). Its servers end here.
  auto* session = new timing_detail::TimingSession(lab, a, turn);
  try {
    session->run(result);
  } catch (const RunFailure& f) {
    result["status"] = RefereeStatus::failed;
    result["failure"] = f.failure();
  }
  session->end_servers();
}

}  // namespace memlabs
