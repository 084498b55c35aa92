// The submission's program under compute-sanitizer or ncu, in one grade. These
// runs time nothing: each starts on a thread of its own, side by side with the
// correctness run, keyed by what it runs (a tool, its cases), and a check takes
// the result when its step comes. A student's own grade reuses the report an
// earlier grade made of the very same program (kept_tool_runs.hpp).
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <string>

#include "referee_client.hpp"
#include "tool_run.hpp"

namespace grader {

struct ToolOutput {
  RunnerOutcome outcome;
  std::string log;        // the tool's report file
  std::string kept_from;  // when the report is an earlier grade's of this very program: when it ran
};

class ToolRuns {
 public:
  // Whether a report measured the program, so that it may be kept for the very
  // same program's next grade.
  using ReportCheck = std::function<bool(const std::string& report)>;
  // Where reports are kept, and what names this machine's reports besides the
  // call (the GPU); an empty `kept_tag` keeps and reuses nothing (a sandboxed grade).
  ToolRuns(std::filesystem::path cache_dir, std::string kept_tag)
      : cache_dir_(std::move(cache_dir)), kept_tag_(std::move(kept_tag)) {}
  ToolRuns(const ToolRuns&) = delete;
  ToolRuns& operator=(const ToolRuns&) = delete;
  ~ToolRuns() { stop(); }

  bool started(const std::string& key) const { return runs_.count(key) > 0; }
  // The run of `key`, started (as `call`, whose report is `report_file` in its
  // work folder) unless it runs already; `label` names it in the grade's phases.
  std::shared_future<ToolOutput> start(const std::string& key, ToolCall call, const std::string& report_file,
                                       const std::string& label, const ReportCheck& worth_keeping);
  // Waits until every run has ended.
  void finish();
  // Tells every run still going to stop (a program that hangs would hang under every tool).
  void cancel();
  // Tells the runs still going that run any of `cases` to stop: the program hung
  // in one of them, and runs of other cases go on.
  void cancel_runs_of(const std::vector<std::string>& cases);
  // cancel(), then finish().
  void stop();

 private:
  std::filesystem::path cache_dir_;
  std::string kept_tag_;
  struct Run {
    std::shared_future<ToolOutput> result;
    std::vector<std::string> cases;
    std::shared_ptr<std::atomic<bool>> cancel;  // its call points at it; the run's thread holds it too
  };
  std::map<std::string, Run> runs_;
};

}  // namespace grader
