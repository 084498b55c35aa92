// The timing session of timing.cuh, shared by the files that implement it:
// timing.cpp (the protocol: timed alone, warm-up, rounds until the ratios
// converge, timed alone again), timing_slots.cpp (one timed request each, the
// fresh inputs before a batch and the checks after it) and timing_report.cpp
// (the result the grader reads). Private to those files.
#pragma once

#include <cuda_runtime.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "host/gpu_turn.hpp"
#include "host/secure_random.hpp"
#include "l2_flush.cuh"
#include "protocol/stats.hpp"
#include "referee.cuh"

namespace memlabs::timing_detail {

inline double median_of(std::vector<double> v) { return v.empty() ? 0 : median_interval(std::move(v)).median; }

// The ratio samples of the rounds so far, per-launch times with N taken off.
struct Samples {
  std::vector<double> baseline_ms, candidate_ms, memcpy_ms, library_ms, overhead_ms;
  std::vector<double> speedup, fraction_of_peak, fraction_of_library, aa;
  std::size_t rounds = 0;
};

class TimingSession {
 public:
  TimingSession(const LabDefinition& lab, const RefereeArgs& a, GpuTurnFiles* turn);
  ~TimingSession();

  void run(nlohmann::json& result);
  // Gives the GPU turn back and ends the trusted server and the submission's
  // program (and all they started); the buffers stay until the process exits.
  void end_servers();

 private:
  // ---- the protocol's phases (timing.cpp) ----
  std::size_t open_first_set();  // returns the bytes of one buffer set
  void time_alone(std::size_t set_bytes);
  void open_sets();
  bool warm_up();
  bool sample_until_converged(std::chrono::steady_clock::time_point t0);
  void time_baseline_alone_again();

  // ---- slots: one timed request each (timing_slots.cpp) ----
  // Stops the submission's program between requests; throws RunFailure where
  // it cannot be stopped: "pause" when it kept starting processes (its
  // doing), "pause_stuck" when its processes would not stop (the machine's).
  void pause_worker();
  double flushed(ServerProcess& server, const nlohmann::json& request, ServerRole who);
  // The outputs of the sets a candidate request fills, which every slot's completion probe samples.
  std::vector<const Output*> candidate_outputs() const;
  static constexpr unsigned kCompletionSamples = 256;  // places sampled in each output
  nlohmann::json sets_json(const std::vector<std::size_t>& sets) const;
  std::vector<std::size_t> all_sets() const;
  double run_variant(ServerProcess& server, const std::vector<std::size_t>& sets, const char* variant, ServerRole who);
  double slot_baseline(const std::vector<std::size_t>& sets);
  double slot_candidate();
  // Right after the candidate's reply: every output already written, or failure_
  // says how much was not (a reply that came before its GPU work was done).
  bool finished_at_reply();
  // Right before the candidate's request: nothing written yet, or failure_ says
  // how much was (GPU work queued earlier that ran before the timed request).
  bool untouched_before_request();
  double slot_copy(std::size_t times);
  double slot_library();
  double slot_nop();
  std::vector<std::size_t> all_sets_trusted() const;
  std::vector<std::size_t> sample_sets(std::size_t count);

  // ---- inputs and the checks of every batch (timing_slots.cpp) ----
  void new_inputs(bool candidate);
  bool verify(const std::vector<std::size_t>& sample);

  // ---- rounds (timing.cpp) ----
  bool round(Samples& s);
  bool all_converged() const;
  bool any_undecided() const;

  // ---- the result (timing_report.cpp) ----
  void fail(nlohmann::json& result);
  void report(nlohmann::json& result, double wall, double total);
  void add_rates(TimingReport& t) const;

  const LabDefinition& lab_;
  const RefereeArgs& a_;
  const std::string case_;
  SecureRandom rng_;  // seeds and slot orders the program cannot predict (secure_random.hpp)
  cudaStream_t stream_ = nullptr;
  L2Flush flush_;
  ServerProcess trusted_, worker_;
  std::vector<std::unique_ptr<Problem>> trusted_sets_, candidate_sets_;
  std::vector<std::vector<std::uint64_t>> input_digests_;
  std::size_t k_ = 1, k_baseline_ = 1, copy_bytes_ = 0;
  bool host_steps_ = false, library_ = false, converged_ = false, extended_ = false;
  double interference_limit_ = 1.10;  // the lab's: baseline slower by this beside the submission, not trusted
  double warmup_ms_ = 0;
  bool decided_early_ = false;  // stopped once every threshold was decided
  std::vector<double> solo_baseline_;
  Samples s_;
  std::size_t candidate_batches_ = 0, verified_launches_ = 0, verified_outputs_ = 0, fresh_input_sets_ = 0;
  TimedFailure failure_;
  bool unfinished_ = false;  // a candidate reply came before its outputs were written (failure_ says)
  GpuTurnFiles* turn_;       // this referee's turn on the GPU, or none
  // Where the sampled rounds' time went, for the referee's phases.
  struct RoundParts {
    double inputs_s = 0, slots_s = 0, checks_s = 0;
  } parts_;
};

}  // namespace memlabs::timing_detail
