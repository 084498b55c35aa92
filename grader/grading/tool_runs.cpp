#include "tool_runs.hpp"

#include <algorithm>
#include <chrono>

#include "kept_tool_runs.hpp"
#include "phase_log.hpp"
#include "text.hpp"

namespace grader {

std::shared_future<ToolOutput> ToolRuns::start(const std::string& key, ToolCall call, const std::string& report_file,
                                               const std::string& label, const ReportCheck& worth_keeping) {
  if (auto it = runs_.find(key); it != runs_.end()) return it->second.result;
  auto cancel = std::make_shared<std::atomic<bool>>(false);
  call.cancel = cancel.get();
  const std::string kept_key = kept_tag_.empty() ? "" : tool_run_key(call, kept_tag_);
  if (auto kept = find_kept_tool_run(cache_dir_, kept_key)) {
    const auto now = std::chrono::steady_clock::now();
    note_phase(label + " (kept from " + kept->when + ")", now, now, 1);
    std::promise<ToolOutput> ready;
    ready.set_value(ToolOutput{RunnerOutcome{}, kept->log, kept->when});
    return runs_.emplace(key, Run{ready.get_future().share(), call.cases, cancel}).first->second.result;
  }
  std::shared_future<ToolOutput> f =
      std::async(std::launch::async, [call, cancel, report_file, label, cache_dir = cache_dir_, kept_key,
                                      worth_keeping] {
        const auto begin = std::chrono::steady_clock::now();
        ToolOutput out{call_tool(call), read_file(call.work_dir / report_file).value_or(""), ""};
        note_phase(label, begin, std::chrono::steady_clock::now(), 1);
        // Only a run that reached its end and measured: a crash, a hang or a tool
        // that could not read the counters may not happen the same way twice.
        if (!kept_key.empty() && out.outcome.ok() && worth_keeping(out.log))
          keep_tool_run(cache_dir, kept_key, out.log);
        return out;
      }).share();
  runs_.emplace(key, Run{f, call.cases, cancel});
  return f;
}

void ToolRuns::cancel() {
  for (auto& [key, run] : runs_) *run.cancel = true;
}

void ToolRuns::cancel_runs_of(const std::vector<std::string>& cases) {
  for (auto& [key, run] : runs_)
    for (const auto& c : run.cases)
      if (std::find(cases.begin(), cases.end(), c) != cases.end()) *run.cancel = true;
}

void ToolRuns::finish() {
  for (auto& [key, run] : runs_) run.result.wait();
}

void ToolRuns::stop() {
  cancel();
  finish();
}

}  // namespace grader
