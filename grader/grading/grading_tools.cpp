// The submission's program under ncu and compute-sanitizer: the runs, started
// side by side with the correctness run, and the checks that read their
// reports (check_ncu, check_sanitizer).
#include <algorithm>
#include <chrono>
#include <future>
#include <vector>

#include "activity.hpp"
#include "kept_tool_runs.hpp"
#include "kernel_stubs.hpp"
#include "lab_grader.hpp"
#include "launch_record.hpp"
#include "ncu_report.hpp"
#include "phase_log.hpp"
#include "sandbox.hpp"
#include "sanitizer_report.hpp"
#include "text.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace grader {

namespace {

std::string sanitizer_key(const Check& c, const std::string& tool) {
  return "sanitizer " + tool + " " + join(c.cases, ",");
}
// One profile per case: it sees every launch, whichever kernel a check names.
std::string ncu_key(const Check& c) { return "ncu " + c.case_name; }

// One compute-sanitizer tool's run, as check_sanitizer reads it.
struct SanitizerRun {
  std::string tool;
  RunnerOutcome outcome;
  SanitizerLog log;
  std::string kept_from;  // an earlier grade's report of this very program: when it ran
};

// The detail line of a check whose tools' reports an earlier grade of this very program made.
std::string kept_from_note(const std::vector<std::string>& tools, const std::string& when) {
  return join(tools, ", ") + ": the report" + (tools.size() > 1 ? "s" : "") +
         " of this very program from an earlier grade (" + when +
         "), not run again; `grader grade --fresh` runs every tool again";
}

// The verdict of an ncu check once its launches are judged: the worst launch's
// value in words, every launch's counters, and what a failing one misses.
CheckResult ncu_result(const Check& c, const NcuMeasure& measure, const std::vector<NcuLaunch>& launches,
                       const NcuJudgement& j, double bound, const std::string& kept_from) {
  const bool at_least = measure.rule == NcuMeasure::at_least;
  json counters = json::array();
  for (const auto& l : launches) counters.push_back(l.metrics);
  CheckResult r;
  r.kind = c.kind;
  r.details = j.worst.details;
  r.data = {{"kernel", c.kernel}, {"case", c.case_name},         {"metric", c.metric},  {"value", j.worst.value},
            {"values", j.values}, {"launches", launches.size()}, {"counters", counters}};
  r.data[at_least ? "min" : "max"] = bound;
  r.summary = c.kernel + " at " + c.case_name + ": " + j.worst.summary;
  if (!kept_from.empty()) {
    r.details.push_back(kept_from_note({"ncu"}, kept_from));
    r.data["kept_from"] = kept_from;
  }
  if (j.judged > 1)
    r.summary += " (the " + std::string(at_least ? "lowest" : "highest") + " of " + std::to_string(j.judged) +
                 " launches: launch " + std::to_string(j.worst_launch + 1) + ")";
  else if (launches.size() > 1)
    r.details.push_back("over all " + std::to_string(launches.size()) + " launches of " + c.kernel +
                        " in the case together");
  if (j.status == NcuJudgement::fails) {
    r.status = Outcome::fail;
    r.symptom = measure.symptom;
    r.summary += ", needs " + ncu_bound_in_words(measure, bound);
    if (j.judged > 1)
      r.details.push_back(std::to_string(j.failing) + " of " + std::to_string(j.judged) +
                          " launches miss it; every launch of " + c.kernel + " in the case must meet it");
  }
  return r;
}

// The verdict of a sanitizer check from its tools' finished runs: the first
// report (or a run that never reached its summary) fails it, the others follow.
CheckResult sanitizer_result(const Check& c, const std::vector<SanitizerRun>& done) {
  CheckResult r;
  r.kind = c.kind;
  r.data = {{"cases", c.cases}, {"tools", json::object()}};
  std::vector<std::string> clean, kept;
  for (const auto& t : done) {
    json& tj = r.data["tools"][t.tool];
    tj = {{"reports", t.log.errors}, {"outcome", category_name(t.outcome.category)}};
    if (!t.kept_from.empty()) {
      kept.push_back(t.tool);
      tj["kept_from"] = t.kept_from;
    }
    if (t.log.errors > 0 || !t.log.reports.empty()) {
      const std::string first =
          t.log.reports.empty() ? std::to_string(t.log.errors) + " errors" : t.log.reports.front().headline;
      const std::string more = t.log.errors > 1 ? " (" + std::to_string(t.log.errors) + " reports)" : "";
      tj["first"] = first;
      if (r.status == Outcome::pass) {
        r.status = Outcome::fail;
        r.summary = t.tool + ": " + first + more;
        r.symptom = t.log.reports.empty() ? Symptom::sanitizer : t.log.reports.front().symptom;
        if (!t.log.reports.empty())
          for (std::size_t i = 0; i < t.log.reports.front().lines.size() && i < 8; ++i)
            r.details.push_back(t.log.reports.front().lines[i]);
      } else {
        r.details.push_back("also " + t.tool + ": " + first + more);
      }
    } else if (!t.log.summary_seen || !t.outcome.ok()) {
      // The tool did not get to the end: the program crashed or hung under it.
      if (r.status == Outcome::pass) {
        r.status = Outcome::fail;
        r.summary = t.tool + ": " + (t.outcome.message.empty() ? "stopped before its summary" : t.outcome.message);
        r.symptom = t.outcome.ok() ? Symptom::sanitizer : symptom_of(t.outcome.category);
      }
    } else {
      clean.push_back(t.tool);
    }
  }
  if (r.status == Outcome::pass) r.summary = join(clean, ", ") + ": no reports on " + join(c.cases, ", ");
  if (!kept.empty()) r.details.push_back(kept_from_note(kept, done.front().kept_from));
  return r;
}

}  // namespace

bool LabGrader::sanitizer_available() const { return !gpu_unavailable() && s_.builder->toolchain().compute_sanitizer; }

// Every case of the steps that name the case the correctness run hung in;
// nullopt where it cannot say which case that was (every step's then).
std::optional<std::vector<std::string>> LabGrader::cases_beside_the_hang() const {
  if (!student_run_.failure || student_run_.failure->case_name.empty()) return std::nullopt;
  return m_.cases_of_steps_naming(student_run_.failure->case_name);
}

bool LabGrader::hung_beside(const Check& c) const {
  if (!correctness_done_ || student_run_.category != RunCategory::timeout) return false;
  const auto beside = cases_beside_the_hang();
  if (!beside) return true;
  const auto listed = [&](const std::string& name) {
    return std::find(beside->begin(), beside->end(), name) != beside->end();
  };
  return listed(c.case_name) || std::any_of(c.cases.begin(), c.cases.end(), listed);
}

void LabGrader::cancel_runs_beside_the_hang() {
  if (const auto beside = cases_beside_the_hang())
    tool_runs_.cancel_runs_of(*beside);
  else
    tool_runs_.cancel();
}

ToolCall LabGrader::sanitizer_call(const Check& c, const std::string& tool) {
  const fs::path dir = run_dir_ / ("sanitizer-" + std::to_string(++tool_run_number_) + "-" + tool);
  ToolCall tc;
  tc.timeout_s = 3 * m_.timeout_s + 30;
  tc.tool = sanitizer_arguments(*s_.builder->toolchain().compute_sanitizer, tool, dir / "log.txt", tc.timeout_s);
  tc.worker = rep_.student_build.worker;
  tc.cases = c.cases;
  tc.seed = tool_seed_;
  tc.work_dir = dir;
  tc.who = "your program under " + tool;
  return tc;
}

// One profiling run per case serves every ncu check on it, whichever kernel
// it names (lab07's shared-load evidence and its bank conflicts): the union of their metrics.
ToolCall LabGrader::ncu_call(const Check& c) {
  const fs::path dir = run_dir_ / ("ncu-" + std::to_string(++tool_run_number_));
  std::vector<std::string> metrics;
  for (const auto& step : m_.steps)
    for (const auto& other : step.checks)
      if (other.kind == CheckKind::ncu && other.case_name == c.case_name)
        if (const NcuMeasure* m = find_ncu_measure(other.metric))
          for (const auto& name : m->metrics)
            if (std::find(metrics.begin(), metrics.end(), name) == metrics.end()) metrics.push_back(name);
  ToolCall tc;
  tc.tool = ncu_arguments(*s_.builder->toolchain().ncu, metrics, dir / "ncu.csv");
  tc.worker = rep_.student_build.worker;
  tc.cases = {c.case_name};
  tc.seed = tool_seed_;
  tc.work_dir = dir;
  tc.timeout_s = 3 * m_.timeout_s + 60;  // ncu replays the launch once per group of counters
  tc.who = "your program under ncu";
  tc.profiles = true;
  return tc;
}

// A sanitizer's report that reached its summary; ncu's that read the counters, or
// saw that the kernel never launched.
std::shared_future<ToolOutput> LabGrader::start_sanitizer_run(const Check& c, const std::string& tool) {
  return tool_runs_.start(sanitizer_key(c, tool), sanitizer_call(c, tool), "log.txt", tool,
                          [tool](const std::string& report) { return parse_sanitizer_log(tool, report).summary_seen; });
}

std::shared_future<ToolOutput> LabGrader::start_ncu_run(const Check& c, bool again) {
  return tool_runs_.start(ncu_key(c) + (again ? " again" : ""), ncu_call(c), "ncu.csv",
                          "ncu: " + c.case_name + (again ? " (again: ncu failed)" : ""),
                          [](const std::string& report) { return parse_ncu_log(report).measured(); });
}

void LabGrader::start_tool_runs() {
  if (gpu_unavailable()) return;
  const auto& ncu = s_.builder->toolchain().ncu;
  for (const auto& step : m_.steps)
    for (const auto& c : step.checks) {
      if (!graded_here(step)) break;
      if (hung_beside(c)) continue;
      if (c.kind == CheckKind::sanitizer && sanitizer_available())
        for (const auto& tool : c.tools)
          if (!tool_runs_.started(sanitizer_key(c, tool))) start_sanitizer_run(c, tool);
      if (c.kind == CheckKind::ncu && ncu && !tool_runs_.started(ncu_key(c)) && find_ncu_measure(c.metric))
        start_ncu_run(c);
    }
}

void LabGrader::finish_tool_runs() { tool_runs_.finish(); }

void LabGrader::stop_tool_runs() {
  tool_runs_.cancel();
  timings_.cancel();
  tool_runs_.finish();
  timings_.stop();
}

// An ncu run that measured nothing, after its second try where ncu itself
// failed (whose_failure, ncu_report.hpp): the machine's (a fallback stands in),
// the program's (the check fails), or ncu's, which is never a pass.
CheckResult LabGrader::ncu_run_failed(const Check& c, const NcuLog& log, const RunnerOutcome& out) {
  switch (whose_failure(log, out.category)) {
    case NcuFailure::machine:
      return instead_of_ncu(c, "ncu " + log.message);
    case NcuFailure::program:
      if (log.status == NcuLog::no_kernel)
        return failed(c, "your program never launched " + c.kernel + " in case " + c.case_name +
                             (log.launched.empty() ? std::string() : " (ncu saw: " + join(log.launched, ", ") + ")"));
      return failed(c, out.message, symptom_of(out.category));
    case NcuFailure::tool:
      break;
  }
  const std::string why = log.message.empty() ? out.message : log.message;
  CheckResult r = skipped(c, "not graded: ncu failed twice on your program (" + why +
                                 "); nothing was measured, so this step counts for nothing yet: grade again");
  r.data["ncu_failed"] = why;
  return r;  // not advisory: the step is not passed on a measurement that never happened
}

// The profile of c's kernel and case, read into `log`. Where ncu failed on its
// own it runs once more: such failures under load seldom come twice.
ToolOutput LabGrader::ncu_profile(const Check& c, NcuLog& log) {
  ToolOutput run = start_ncu_run(c).get();
  log = parse_ncu_log(run.log);
  if (log.status != NcuLog::ok && whose_failure(log, run.outcome.category) == NcuFailure::tool) {
    run = start_ncu_run(c, /*again=*/true).get();
    log = parse_ncu_log(run.log);
  }
  return run;
}

// Hardware counters of every launch of the student's kernel in the profiled
// case (ncu_report.hpp): each must meet the rule, so a harmless launch first
// cannot speak for the ones that do the work.
CheckResult LabGrader::check_ncu(const Check& c) {
  if (auto why = gpu_unavailable()) return skipped(c, *why);
  const auto& ncu = s_.builder->toolchain().ncu;
  if (!ncu) return instead_of_ncu(c, "ncu was not found next to nvcc or on PATH");
  const NcuMeasure* measure = find_ncu_measure(c.metric);
  if (!measure) return failed(c, "unknown ncu measure " + c.metric + " (a course problem)");
  Activity activity("ncu: " + c.metric + " of " + c.kernel + " at " + c.case_name);
  run_correctness();  // starts this run too, beside it
  // A program that hung in this step would hang under ncu: that run was stopped.
  if (hung_beside(c)) return failed(c, student_run_.message, Symptom::timeout);
  NcuLog log;
  const ToolOutput run = ncu_profile(c, log);  // an Interrupted rethrows here
  if (log.status != NcuLog::ok) return ncu_run_failed(c, log, run.outcome);
  if (log.launches.size() > static_cast<std::size_t>(kMaxLaunchesInARun))
    return failed(c, "more than " + std::to_string(kMaxLaunchesInARun) + " kernels ran in case " + c.case_name +
                         "; one case needs a launch or a few");
  // Only what ran after the harness's marker, and only kernel.cu's kernels (launch_record.hpp).
  // nm missing or failing leaves the names unchecked; the record still tells kernel.cu's entries from others.
  if (!kernels_defined_twice_)
    kernels_defined_twice_ = kernels_defined_twice_in(rep_.student_build.worker).value_or(std::vector<std::string>{});
  const LaunchRecord record =
      read_launch_record(log.launches, ptx_.entries, kernel_named(c.kernel), *kernels_defined_twice_);
  if (const std::string why = launch_record_problem(record, c.case_name); !why.empty())
    return failed(c, why, Symptom::not_your_kernel);
  if (record.named.empty())
    return failed(c, "your program never launched " + c.kernel + " in case " + c.case_name +
                         (record.own.empty() ? std::string() : " (it launched: " + join(record.own, ", ") + ")"));
  const std::vector<NcuLaunch>& launches = record.named;
  const bool at_least = measure->rule == NcuMeasure::at_least;
  const double bound = at_least ? c.ncu_min : c.max;
  double elements = 0;
  if (measure->per_element || measure->per_stored_value) {
    const auto n = output_elements(c.case_name);
    if (!n) return instead_of_ncu(c, "the correctness run did not count the outputs of " + c.case_name);
    elements = *n;
  }
  const NcuJudgement j = judge_launches(*measure, launches, bound, elements);
  if (j.status == NcuJudgement::too_many_launches)
    return failed(c,
                  c.kernel + " was launched more than " + std::to_string(kMaxProfiledLaunches) + " times in case " +
                      c.case_name + "; one case needs a launch or a few",
                  measure->symptom);
  if (j.status == NcuJudgement::not_measured)
    return instead_of_ncu(c, "ncu did not report every counter " + c.metric + " needs");
  CheckResult r = ncu_result(c, *measure, launches, j, bound, run.kept_from);
  // The counters are the kernel's; the lines that have the instructions they count are where to look.
  if (r.status == Outcome::fail) name_source_lines(r, c.kernel, j.worst.look_at);
  return r;
}

// Where ncu cannot run, the manifest's fallback grades the step and says so;
// without one, the step's other checks decide it.
CheckResult LabGrader::instead_of_ncu(const Check& c, const std::string& why) {
  if (c.fallback.empty()) {
    CheckResult r = skipped(c, "not measured: " + why);
    r.advisory = true;
    return r;
  }
  CheckResult r = check(c.fallback.front());
  r.details.insert(r.details.begin(),
                   "in place of the hardware-counter check (" + c.metric + " of " + c.kernel + "): " + why);
  r.data["in_place_of"] = {{"kind", "ncu"}, {"metric", c.metric}, {"why", why}};
  return r;
}

// Every tool of the check on the student's program, at once (they are
// independent processes); passing needs zero reports from each.
CheckResult LabGrader::check_sanitizer(const Check& c) {
  if (auto why = gpu_unavailable()) return skipped(c, *why);
  if (!s_.builder->toolchain().compute_sanitizer)
    return skipped(c, "compute-sanitizer was not found next to nvcc or on PATH");
  run_correctness();  // starts these runs too, beside it
  if (hung_beside(c)) return skipped(c, "not run: your program did not finish its correctness run");
  Activity activity("compute-sanitizer: " + join(c.tools, ", "));
  // Every tool at once (started with the lab's other tool runs, unless this
  // check came first): independent processes that time nothing.
  std::vector<std::pair<std::string, std::shared_future<ToolOutput>>> runs;
  for (const auto& tool : c.tools) runs.emplace_back(tool, start_sanitizer_run(c, tool));
  std::vector<SanitizerRun> done;
  for (auto& [tool, f] : runs) {
    const ToolOutput& out = f.get();  // an Interrupted rethrows here; the other runs join as they go
    done.push_back(SanitizerRun{tool, out.outcome, parse_sanitizer_log(tool, out.log), out.kept_from});
  }
  // A tool that could not run the program is the grader's failure, never the student's.
  for (const auto& [tool, f] : runs)
    if (const std::string why = tool_machinery_failure(f.get().outcome, f.get().log); !why.empty())
      return skipped(c, "not graded: compute-sanitizer's " + tool + " " + why +
                            ": the grader's own failure, not your program's; grade again");
  return sanitizer_result(c, done);
}

}  // namespace grader
