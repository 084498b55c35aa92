// One grade of one lab, as grading.cpp and the grading_*.cpp files beside it
// implement it: the static checks (grading_static.cpp), the correctness run and
// the facts (grading_outputs.cpp), the ncu and compute-sanitizer runs
// (grading_tools.cpp), the timing (grading_timing.cpp), and the order of the
// steps (grading.cpp). Private to those files.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <optional>
#include <random>
#include <string>

#include "compiler_report.hpp"
#include "grading.hpp"
#include "ncu_report.hpp"
#include "referee_client.hpp"
#include "timing_sessions.hpp"
#include "tool_run.hpp"
#include "tool_runs.hpp"

namespace grader {

class LabGrader {
 public:
  LabGrader(Session& s, const LabInfo& lab, const Manifest& m, const GradeOptions& o);

  GradeReport run();

 private:
  // A check's result when it could not run, or failed before measuring anything.
  static CheckResult skipped(const Check& c, const std::string& why);
  static CheckResult failed(const Check& c, const std::string& summary, std::optional<Symptom> symptom = std::nullopt);
  // Whether the step is graded here: its cases run, its tools and timings start, only then.
  bool graded_here(const Step& step) const { return !shortfalls_.count(step.id); }

  bool build();
  CheckResult check(const Check& c);
  std::vector<CheckResult> grade_step(const Step& step);
  CheckResult check_ptx(const Check& c);
  CheckResult check_ptxas(const Check& c);
  std::string student_source() const;     // kernel.cu as submitted, to quote a line a check points at
  std::string student_file_name() const;  // "kernel.cu"
  void name_source_lines(CheckResult& r, const std::string& kernel, const std::vector<std::string>& classes) const;
  void name_kernel_lines(CheckResult& r, const PtxKernel& kernel, nlohmann::json& lines) const;
  std::string kernel_named(const std::string& name) const;  // as kernel.cu's PTX names it
  CheckResult check_correct(const Check& c);
  CheckResult case_did_not_run(const Check& c, const std::string& case_name);
  static std::optional<CheckResult> inputs_touched(const Check& c, const memlabs::CaseReport& got);
  CheckResult check_timing(const Check& c);
  CheckResult check_api(const Check& c);
  CheckResult check_ncu(const Check& c);
  CheckResult ncu_run_failed(const Check& c, const NcuLog& log, const RunnerOutcome& out);
  CheckResult instead_of_ncu(const Check& c, const std::string& why);
  CheckResult check_sanitizer(const Check& c);
  CheckResult check_overlap(const Check& c);
  ToolCall trace_call(const Check& c, const std::filesystem::path& library);
  void run_correctness();
  // The output elements of `case_name` as the referee counted them in the
  // correctness run; nothing when that run did not report the case.
  std::optional<double> output_elements(const std::string& case_name);
  const RunnerOutcome& timing_for(const std::string& case_name);
  // The referee's timing session of a case (timings_), with every threshold the
  // steps put on it. The referee takes its own GPU turns (shared while it
  // starts, alone for what it times), so the first timed case starts beside the
  // correctness run: its start is over by the time the step that reads it comes.
  void start_timing(const std::string& case_name);
  void start_first_timing();

  // The submission's program under compute-sanitizer or ncu (tool_runs_): every
  // run the lab asks for starts, side by side, with the correctness run
  // (start_tool_runs), and their checks take the results when their step comes.
  // A program that hangs in the correctness run would hang under every tool
  // too, so they are stopped then, and so are runs no check read once the grade
  // is decided. A timing has the GPU to itself all the same: its referee takes
  // the GPU alone (gpu_lock.hpp) only once these runs, shared turns all, are
  // done; in a sandbox, where the grade's runs hold one turn together,
  // timing_for waits for them (finish_tool_runs).
  // The inputs' seed of the tool runs: drawn apart from the grade's seed, so a
  // program started by a tool (`worker run --seed S`) learns nothing of the inputs
  // the correctness run and the timings give it. No tool's verdict reads values.
  std::uint64_t tool_seed_ = (std::uint64_t{std::random_device{}()} << 32) | std::random_device{}();
  ToolCall sanitizer_call(const Check& c, const std::string& tool);
  ToolCall ncu_call(const Check& c);
  std::shared_future<ToolOutput> start_sanitizer_run(const Check& c, const std::string& tool);
  // again: a second run after ncu itself failed on the first (whose_failure).
  std::shared_future<ToolOutput> start_ncu_run(const Check& c, bool again = false);
  ToolOutput ncu_profile(const Check& c, NcuLog& log);
  void start_tool_runs();
  void finish_tool_runs();
  void stop_tool_runs();  // the ones still running: no check will read them
  bool sanitizer_available() const;
  // Whether the correctness run hung in a case of c's step (or where, it cannot
  // say): a tool would hang there too. A hang in a later step's case says
  // nothing of this one, whose checks run as if it had not happened.
  bool hung_beside(const Check& c) const;
  std::optional<std::vector<std::string>> cases_beside_the_hang() const;
  void cancel_runs_beside_the_hang();
  RefereeCall referee_call(const std::string& tag) const;
  std::optional<std::string> gpu_unavailable() const;

  Session& s_;
  const LabInfo& lab_;
  const Manifest& m_;
  GradeOptions o_;
  GradeReport rep_;
  std::filesystem::path run_dir_;
  PtxModule ptx_;
  // Mangled names the submission's program defines twice (kernel_stubs.hpp), read once, when an ncu check first needs them.
  std::optional<std::vector<std::string>> kernels_defined_twice_;
  std::map<std::string, KernelResources> resources_;
  std::map<int, std::string> shortfalls_;  // step id -> why this GPU or build does not grade it
  bool correctness_done_ = false;
  RunnerOutcome student_run_;
  TimingSessions timings_;   // by case
  int tool_run_number_ = 0;  // numbers the work folders of ncu and sanitizer runs
  ToolRuns tool_runs_;       // by what ran: tool, cases
};

}  // namespace grader
