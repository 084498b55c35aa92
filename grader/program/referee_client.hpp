// Runs the referee (common/referee/referee.cuh) for one request of a grade and turns
// whatever happened into one outcome with a sentence that names the likely
// cause. The referee starts the submission's program itself, in isolation; its
// verdict reaches the grader only through the referee's stdout, a pipe no other
// process holds. What the submission's program printed is shown, never trusted.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "child_process.hpp"
#include "host/gpu_turn.hpp"
#include "protocol/referee_protocol.hpp"
#include "run_category.hpp"
#include "sandbox.hpp"

namespace grader {

struct RunnerOutcome {
  RunCategory category = RunCategory::ok;
  std::string message;  // one line for the student; empty when ok
  nlohmann::json result;
  std::optional<memlabs::TimingReport> timing;         // a timing session's report, read from result["timing"]
  std::optional<memlabs::TimedFailure> timed_failure;  // why its timed launches cannot count: result["timed_failure"]
  std::optional<memlabs::RunFailureReport> failure;    // why the run could not finish: result["failure"]
  std::vector<memlabs::CaseReport> cases;              // a correctness run's cases, read from result["cases"]
  std::map<std::string, double> output_elements;       // a correctness run's --count cases: outputs of each
  std::vector<memlabs::RefereePhase> phases;           // where the referee's time went: result["phases"]
  std::string stdout_head, stderr_head;                // what the submission's program printed, truncated
  ChildResult child;
  bool ok() const { return category == RunCategory::ok; }
};

struct RefereeCall {
  std::filesystem::path referee;    // the lab's referee
  std::filesystem::path worker;     // the submission's program (or empty with --variant baseline)
  memlabs::RefereeRequest request;  // what is asked: run or time, the cases, the seed, the thresholds
  std::filesystem::path work_dir;   // private to this call
  double timeout_s = 60;            // the whole call
  double request_timeout_s = 60;    // one request to the submission's program
  std::string who = "your program";
  // How the call uses the GPU (gpu_lock.hpp): alone unless it times nothing and
  // reads nothing of the whole GPU's state.
  memlabs::GpuUse gpu_use = memlabs::GpuUse::exclusive;
  // A timing: the referee takes its own turns (shared while it starts, alone
  // for what it times), so it can start beside a grade's other runs.
  bool referee_takes_turns = false;
  // Becomes true when nobody needs the answer any more: the referee is stopped.
  const std::atomic<bool>* cancel = nullptr;
};

RunnerOutcome call_referee(const RefereeCall& call);

// Makes `call` a `referee time` session of one case (common/referee/timing.cuh): its
// arguments and its time limits, the same for a grade, `grader bench` and
// `grader check`'s margins. Callers add `--decide` for the thresholds they judge.
void make_timing_call(RefereeCall& call, const std::string& case_name, std::uint64_t seed, double cap_s,
                      double lab_timeout_s);

// The sentence for a CUDA error the submission's program reported.
std::string explain_cuda_error(const memlabs::ProgramError& error, const std::string& phase,
                               const std::string& case_name, const std::string& who);

// The isolation a referee gives the submission's program in this process's
// mode (sandbox.hpp), with limits from the call's timeout.
std::vector<std::string> referee_isolation_args(const IsolationSettings& settings, double timeout_s);

}  // namespace grader
