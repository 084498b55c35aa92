#include "grading.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <future>
#include <iterator>
#include <map>
#include <random>
#include <sstream>

#include "activity.hpp"
#include "compare.hpp"
#include "compiler_report.hpp"
#include "ncu_report.hpp"
#include "phase_log.hpp"
#include "plausibility.hpp"
#include "referee_client.hpp"
#include "sanitizer_report.hpp"
#include "stats.hpp"
#include "text.hpp"
#include "tool_run.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace grader {
namespace {

CheckResult skipped(const Check& c, const std::string& why) {
  CheckResult r;
  r.kind = c.kind;
  r.status = "skipped";
  r.summary = why;
  return r;
}

CheckResult failed(const Check& c, const std::string& summary, const std::string& symptom = "") {
  CheckResult r;
  r.kind = c.kind;
  r.status = "fail";
  r.summary = summary;
  r.symptom = symptom;
  return r;
}

// One grade of one lab. Work that several checks share (the correctness runs,
// a timing session per case) is done once, when the first check needs it.
class LabGrader {
 public:
  LabGrader(Session& s, const LabInfo& lab, const Manifest& m, const GradeOptions& o)
      : s_(s), lab_(lab), m_(m), o_(o) {}

  GradeReport run();

 private:
  bool build();
  CheckResult check(const Check& c);
  CheckResult check_ptx(const Check& c);
  CheckResult check_ptxas(const Check& c);
  CheckResult check_correct(const Check& c);
  CheckResult check_timing(const Check& c);
  CheckResult check_api(const Check& c);
  CheckResult check_ncu(const Check& c);
  CheckResult instead_of_ncu(const Check& c, const std::string& why);
  CheckResult check_sanitizer(const Check& c);
  void run_correctness();
  const RunnerOutcome& timing_for(const std::string& case_name);

  // The submission's program under compute-sanitizer or ncu. These runs time
  // nothing: every one the lab asks for starts, side by side, as soon as the
  // correctness run is done (start_tool_runs), and their checks take the
  // results when their step comes. Nothing is timed until they have ended
  // (finish_tool_runs): a timing has the GPU to itself.
  struct ToolOutput {
    RunnerOutcome outcome;
    std::string log;  // the tool's report file
  };
  ToolCall sanitizer_call(const Check& c, const std::string& tool);
  ToolCall ncu_call(const Check& c);
  std::shared_future<ToolOutput> start_tool_run(const std::string& key, const ToolCall& call,
                                                const std::string& report_file, const std::string& label);
  ToolOutput tool_output(const std::string& key, const ToolCall& call, const std::string& report_file,
                         const std::string& label);
  void start_tool_runs();
  void finish_tool_runs();
  bool sanitizer_runs() const;
  RefereeCall referee_call(const std::string& tag) const;
  std::optional<std::string> gpu_unavailable() const;

  Session& s_;
  const LabInfo& lab_;
  const Manifest& m_;
  GradeOptions o_;
  GradeReport rep_;
  fs::path run_dir_;
  PtxModule ptx_;
  std::map<std::string, KernelResources> resources_;
  bool correctness_done_ = false;
  RunnerOutcome student_run_;
  std::map<std::string, RunnerOutcome> timing_;
  int tool_runs_ = 0;  // numbers the work folders of ncu and sanitizer runs
  std::map<std::string, std::shared_future<ToolOutput>> tool_outputs_;  // by what ran: tool, kernel, cases
};

std::optional<std::string> LabGrader::gpu_unavailable() const {
  if (!s_.device.present) return "skipped: needs a GPU";
  return std::nullopt;
}

bool LabGrader::build() {
  Activity activity("building " + (o_.submission ? o_.submission->filename().string() : m_.student_file));
  const RunnerSource student{lab_.dir, o_.submission.value_or(lab_.dir / m_.student_file), "kernel.cu", m_.link};
  rep_.student_build = s_.builder->build({student})[0];
  if (rep_.student_build.kernel.ok) {
    ptx_ = parse_ptx(read_file(rep_.student_build.kernel.ptx_file).value_or(""));
    resources_ = parse_ptxas_report(rep_.student_build.kernel.ptxas_log);
  }
  return rep_.student_build.ok;
}

// The referee of this lab grading the student's program: `tag` names the work folder.
RefereeCall LabGrader::referee_call(const std::string& tag) const {
  RefereeCall rc;
  rc.referee = rep_.student_build.referee;
  rc.worker = rep_.student_build.worker;
  rc.work_dir = run_dir_ / tag;
  rc.request_timeout_s = m_.timeout_s;
  return rc;
}

CheckResult LabGrader::check_ptx(const Check& c) {
  const auto k = ptx_.kernels.find(c.kernel);
  if (k == ptx_.kernels.end()) {
    std::vector<std::string> names;
    for (const auto& [n, _] : ptx_.kernels) names.push_back(n);
    return failed(c, "no kernel named " + c.kernel +
                         " in kernel.cu (found: " + (names.empty() ? "none" : join(names, ", ")) + ")");
  }
  const auto present = [&](const std::string& cls) {
    if (cls == "extern_shared") return k->second.uses_extern_shared;
    // Named in the module is not enough: the kernel must read or write the
    // array through its own address (a __device__ counter it bumps, or a
    // pointer kept in a __device__ variable, is not a __device__ array).
    if (cls == "global_variable") return !k->second.accessed_global_variables.empty();
    if (cls == "const_variable") return !ptx_.const_variables.empty();
    return has_instruction(k->second, cls);
  };
  std::vector<std::string> missing, forbidden, shown;
  for (const auto& cls : c.must_contain) {
    (present(cls) ? shown : missing).push_back(cls);
  }
  for (const auto& cls : c.must_not_contain) {
    if (present(cls)) forbidden.push_back(cls + " (" + std::to_string(count_instruction(k->second, cls)) + "×)");
  }
  CheckResult r;
  r.kind = c.kind;
  r.data = {{"kernel", c.kernel}, {"missing", missing}, {"forbidden", forbidden}};
  if (missing.empty() && forbidden.empty()) {
    std::vector<std::string> parts = shown;
    for (const auto& cls : c.must_not_contain) parts.push_back("no " + cls);
    r.summary = c.kernel + " PTX: " + join(parts, ", ");
    return r;
  }
  r.status = "fail";
  std::vector<std::string> why;
  if (!missing.empty()) why.push_back("no " + join(missing, ", no "));
  if (!forbidden.empty()) why.push_back("still has " + join(forbidden, ", "));
  r.summary = c.kernel + " PTX: " + join(why, "; ");
  if (std::find(missing.begin(), missing.end(), "ld.shared") != missing.end())
    r.details.push_back("the kernel does not read shared memory yet");
  if (std::find(missing.begin(), missing.end(), "bar.sync") != missing.end())
    r.details.push_back("no __syncthreads(): threads would read shared memory that other threads have not written yet");
  if (std::find(missing.begin(), missing.end(), "global_variable") != missing.end())
    r.details.push_back(ptx_.global_variables.empty()
                            ? "the module declares no __device__ array"
                            : c.kernel +
                                  " never reads or writes a __device__ array through its own address (declared: " +
                                  join(ptx_.global_variables, ", ") + ")");
  return r;
}

CheckResult LabGrader::check_ptxas(const Check& c) {
  const auto k = resources_.find(c.kernel);
  if (k == resources_.end()) return failed(c, "ptxas reported no kernel named " + c.kernel);
  const auto& kr = k->second;
  CheckResult r;
  r.kind = c.kind;
  r.data = {{"kernel", c.kernel},
            {"registers", kr.registers},
            {"stack_frame", kr.stack_frame},
            {"spill_stores", kr.spill_stores},
            {"spill_loads", kr.spill_loads}};
  std::vector<std::string> bad;
  if (c.max_stack_frame && kr.stack_frame > *c.max_stack_frame)
    bad.push_back(std::to_string(kr.stack_frame) + " bytes stack frame (max " + std::to_string(*c.max_stack_frame) +
                  ")");
  if (c.max_spill_bytes && std::max(kr.spill_stores, kr.spill_loads) > *c.max_spill_bytes)
    bad.push_back(std::to_string(kr.spill_stores) + " bytes spill stores, " + std::to_string(kr.spill_loads) +
                  " bytes spill loads (max " + std::to_string(*c.max_spill_bytes) + ")");
  if (c.max_registers && kr.registers > *c.max_registers)
    bad.push_back(std::to_string(kr.registers) + " registers (max " + std::to_string(*c.max_registers) + ")");
  const std::string facts = std::to_string(kr.registers) + " registers, " + std::to_string(kr.stack_frame) +
                            " bytes stack frame, " + std::to_string(kr.spill_stores + kr.spill_loads) +
                            " bytes spilled";
  if (bad.empty()) {
    r.summary = c.kernel + ": " + facts;
  } else {
    r.status = "fail";
    r.summary = c.kernel + ": " + join(bad, "; ");
    if (kr.stack_frame > 0 || kr.spill_stores > 0) r.symptom = "local_memory";
  }
  return r;
}

void LabGrader::run_correctness() {
  if (correctness_done_) return;
  correctness_done_ = true;
  Activity activity("running your program");
  RefereeCall rc = referee_call("run");
  rc.args = {"run", "--seed", std::to_string(rep_.seed)};
  const auto add_case = [&](const std::string& name) {
    for (std::size_t i = 0; i + 1 < rc.args.size(); ++i)
      if (rc.args[i] == "--case" && rc.args[i + 1] == name) return;
    rc.args.insert(rc.args.end(), {"--case", name});
  };
  std::size_t cases = 0;
  for (const auto& step : m_.steps)
    for (const auto& c : step.checks) {
      if (c.kind == "correct")
        for (const auto& name : c.cases) add_case(name), ++cases;
      if (c.kind == "api") {
        add_case(c.case_name);
        rc.args.insert(rc.args.end(), {"--facts", c.case_name});
        ++cases;
      }
    }
  // Every request may take the lab's timeout; a case makes a few requests.
  rc.timeout_s = m_.timeout_s * (4.0 * static_cast<double>(cases) + 2) + 30;
  student_run_ = call_referee(rc);
  if (!student_run_.stdout_head.empty() || !student_run_.stderr_head.empty())
    rep_.program_output = student_run_.stdout_head + student_run_.stderr_head;
  start_tool_runs();
}

bool LabGrader::sanitizer_runs() const {
  // A program that hangs would hang under every tool, only more slowly.
  return !gpu_unavailable() && s_.builder->toolchain().compute_sanitizer &&
         !(correctness_done_ && student_run_.category == "timeout");
}

ToolCall LabGrader::sanitizer_call(const Check& c, const std::string& tool) {
  const fs::path dir = run_dir_ / ("sanitizer-" + std::to_string(++tool_runs_) + "-" + tool);
  ToolCall tc;
  tc.tool = sanitizer_arguments(*s_.builder->toolchain().compute_sanitizer, tool, dir / "log.txt");
  tc.worker = rep_.student_build.worker;
  tc.cases = c.cases;
  tc.seed = rep_.seed;
  tc.work_dir = dir;
  tc.timeout_s = 3 * m_.timeout_s + 30;
  tc.who = "your program under " + tool;
  return tc;
}

// One profiling run per kernel and case serves every ncu check on them
// (lab07's shared-load evidence and its bank conflicts): the union of their metrics.
ToolCall LabGrader::ncu_call(const Check& c) {
  const fs::path dir = run_dir_ / ("ncu-" + std::to_string(++tool_runs_));
  std::vector<std::string> metrics;
  for (const auto& step : m_.steps)
    for (const auto& other : step.checks)
      if (other.kind == "ncu" && other.kernel == c.kernel && other.case_name == c.case_name)
        if (const NcuMeasure* m = find_ncu_measure(other.metric))
          for (const auto& name : m->metrics)
            if (std::find(metrics.begin(), metrics.end(), name) == metrics.end()) metrics.push_back(name);
  ToolCall tc;
  tc.tool = ncu_arguments(*s_.builder->toolchain().ncu, metrics, c.kernel, dir / "ncu.csv");
  tc.worker = rep_.student_build.worker;
  tc.cases = {c.case_name};
  tc.seed = rep_.seed;
  tc.work_dir = dir;
  tc.timeout_s = 3 * m_.timeout_s + 60;  // ncu replays the launch once per group of counters
  tc.who = "your program under ncu";
  return tc;
}

std::shared_future<LabGrader::ToolOutput> LabGrader::start_tool_run(const std::string& key, const ToolCall& call,
                                                                    const std::string& report_file,
                                                                    const std::string& label) {
  auto it = tool_outputs_.find(key);
  if (it != tool_outputs_.end()) return it->second;
  std::shared_future<ToolOutput> f =
      std::async(std::launch::async, [call, report_file, label] {
        const auto begin = std::chrono::steady_clock::now();
        ToolOutput out{call_tool(call), read_file(call.work_dir / report_file).value_or("")};
        note_phase(label, begin, std::chrono::steady_clock::now(), 1);
        return out;
      }).share();
  tool_outputs_.emplace(key, f);
  return f;
}

LabGrader::ToolOutput LabGrader::tool_output(const std::string& key, const ToolCall& call,
                                             const std::string& report_file, const std::string& label) {
  return start_tool_run(key, call, report_file, label).get();  // an Interrupted rethrows here
}

std::string sanitizer_key(const Check& c, const std::string& tool) {
  return "sanitizer " + tool + " " + join(c.cases, ",");
}
std::string ncu_key(const Check& c) { return "ncu " + c.kernel + " " + c.case_name; }

void LabGrader::start_tool_runs() {
  // A program that hung stays for its own steps: started now, each tool would
  // hang to its time limit even where a failed step means no check needs it.
  if (gpu_unavailable() || student_run_.category == "timeout") return;
  const auto& ncu = s_.builder->toolchain().ncu;
  for (const auto& step : m_.steps)
    for (const auto& c : step.checks) {
      if (c.kind == "sanitizer" && sanitizer_runs())
        for (const auto& tool : c.tools)
          if (!tool_outputs_.count(sanitizer_key(c, tool)))
            start_tool_run(sanitizer_key(c, tool), sanitizer_call(c, tool), "log.txt", tool);
      if (c.kind == "ncu" && ncu && !tool_outputs_.count(ncu_key(c)) && find_ncu_measure(c.metric))
        start_tool_run(ncu_key(c), ncu_call(c), "ncu.csv", "ncu: " + c.kernel);
    }
}

void LabGrader::finish_tool_runs() {
  for (auto& [key, f] : tool_outputs_) f.wait();
}

const json* find_case(const json& result, const std::string& name) {
  if (!result.is_object() || !result.contains("cases") || !result["cases"].is_array()) return nullptr;
  for (const auto& c : result["cases"])
    if (c.value("case", "") == name) return &c;
  return nullptr;
}

// What is wrong with an output the referee checked: unwritten elements or broken guards.
std::optional<std::pair<std::string, std::string>> output_problem(const json& out) {
  const std::string name = out.value("name", "out");
  if (!out.value("guard_after_intact", true))
    return std::make_pair("wrote past the end of `" + name + "` (the guard zone after it was overwritten)",
                          std::string("canary"));
  if (!out.value("guard_before_intact", true))
    return std::make_pair("wrote before the start of `" + name + "` (the guard zone before it was overwritten)",
                          std::string("canary"));
  const auto unwritten = out.value("unwritten", 0ull);
  if (unwritten > 0)
    return std::make_pair(std::to_string(unwritten) + " of " + std::to_string(out.value("count", 0ull)) +
                              " elements of `" + name + "` were never written (first at " +
                              out.value("first_unwritten", std::string("?")) + ")",
                          std::string("unwritten"));
  return std::nullopt;
}

// True when every dimension of every output is a whole number of 32-wide tiles.
bool tile_aligned(const json& outputs) {
  for (const auto& o : outputs)
    for (const auto& d : o.value("dims", std::vector<std::int64_t>{}))
      if (d <= 0 || d % 32 != 0) return false;
  return !outputs.empty();
}

CheckResult LabGrader::check_correct(const Check& c) {
  if (auto why = gpu_unavailable()) return skipped(c, *why);
  run_correctness();
  CheckResult r;
  r.kind = c.kind;
  std::vector<std::string> passed, aligned_passed, mismatched;
  std::optional<CheckResult> first_mismatch;
  bool mismatches_all_unaligned = true;
  for (const auto& name : c.cases) {
    const json* got = find_case(student_run_.result, name);
    if (!got || got->value("status", "") == "running") {
      if (first_mismatch) break;  // the earlier case's mismatch is the first thing wrong
      // The program stopped in (or before) this case.
      const json failure =
          student_run_.result.is_object() ? student_run_.result.value("failure", json::object()) : json::object();
      const std::string crashed_in = failure.is_object() ? failure.value("case", std::string()) : std::string();
      if (student_run_.category == "referee" || student_run_.category == "no_device")
        return skipped(c, student_run_.message);
      r.status = "fail";
      r.summary = student_run_.message.empty() ? "case " + name + " did not run" : student_run_.message;
      if (!crashed_in.empty() && crashed_in != name) r.summary = "case " + name + " did not run: " + r.summary;
      r.symptom = student_run_.category == "ok" ? "error" : student_run_.category;
      if (student_run_.category == "referee") r.symptom = "referee";
      return r;
    }
    const auto modified = got->value("modified_inputs", std::vector<std::string>{});
    if (!modified.empty() && !first_mismatch)
      return failed(
          c,
          "case " + name + ": your program changed its input `" + join(modified, "`, `") + "` (inputs are read-only)",
          "modified_input");
    const json outputs = got->value("outputs", json::array());
    bool case_ok = true;
    for (const auto& g : outputs) {
      if (auto problem = output_problem(g)) {
        if (first_mismatch) break;
        r.status = "fail";
        r.summary = "case " + name + ": " + problem->first;
        r.symptom = problem->second;
        return r;
      }
      const auto mismatches = g.value("mismatches", 0ull);
      if (mismatches == 0) continue;
      case_ok = false;
      if (!first_mismatch) {
        CheckResult m;
        m.kind = c.kind;
        m.status = "fail";
        m.summary = "case " + name + ": " + std::to_string(mismatches) + " of " +
                    std::to_string(g.value("count", 0ull)) + " elements of `" + g.value("name", "") +
                    "` differ from the expected result";
        for (const auto& mm : g.value("first", json::array()))
          m.details.push_back("at " + mm.value("where", std::string("?")) + ": expected " +
                              value_text(mm.value("expected", json())) + ", got " +
                              value_text(mm.value("got", json())));
        m.data = {{"case", name}, {"mismatches", mismatches}, {"count", g.value("count", 0ull)}};
        m.symptom = "mismatch";
        // A result that changes from run to run is a race, not a wrong formula.
        if (got->contains("rerun") && (*got)["rerun"].is_object()) {
          const json& rr = (*got)["rerun"];
          m.symptom = "nondeterministic";
          m.details.push_back("a second run with the same inputs gave a different result (" +
                              std::to_string(rr.value("changed", 0ull)) + " of " +
                              std::to_string(rr.value("count", 0ull)) + " elements of `" +
                              rr.value("output", std::string()) +
                              "` changed): some threads read values before others wrote them");
        }
        first_mismatch = m;
      }
      break;
    }
    if (case_ok) {
      passed.push_back(name);
      if (tile_aligned(outputs)) aligned_passed.push_back(name);
    } else {
      mismatched.push_back(name);
      mismatches_all_unaligned = mismatches_all_unaligned && !tile_aligned(outputs);
    }
  }
  if (first_mismatch) {
    r = *first_mismatch;
    if (mismatched.size() > 1)
      r.details.push_back("also wrong: " + join({mismatched.begin() + 1, mismatched.end()}, ", "));
    if (!passed.empty()) r.details.push_back("right: " + join(passed, ", "));
    if (r.symptom == "mismatch" && !aligned_passed.empty() && mismatches_all_unaligned) {
      r.symptom = "edge_mismatch";
      r.details.push_back("wrong only at sizes that are not multiples of 32; right at " + join(aligned_passed, ", "));
    }
    r.data["mismatched_cases"] = mismatched;
    return r;
  }
  r.summary = "matches the expected result on " + join(passed, ", ") + " (seed " + std::to_string(rep_.seed) + ")";
  r.data = {{"cases", passed}};
  return r;
}

const RunnerOutcome& LabGrader::timing_for(const std::string& case_name) {
  auto it = timing_.find(case_name);
  if (it != timing_.end()) return it->second;
  finish_tool_runs();  // a timing has the GPU to itself
  Activity activity("timing " + case_name + " (baseline, yours, memcpy)");
  RefereeCall rc = referee_call("time-" + case_name);
  rc.args = {"time", "--case", case_name, "--seed", std::to_string(rep_.seed), "--cap-s", fixed(o_.cap_s, 3)};
  // Every threshold any step puts on this case, so one session decides them all.
  const auto decide = [&](const Check& c) {
    if (is_timed(c) && c.case_name == case_name)
      rc.args.insert(rc.args.end(), {"--decide", std::string(c.kind == "speedup"            ? "speedup:"
                                                             : c.kind == "fraction_of_peak" ? "fraction:"
                                                                                            : "library:") +
                                                     fixed(c.min, 4)});
  };
  for (const auto& step : m_.steps)
    for (const auto& c : step.checks) {
      decide(c);
      for (const auto& f : c.fallback) decide(f);
    }
  rc.timeout_s = 3 * m_.timeout_s + 6 * o_.cap_s + 60;
  return timing_.emplace(case_name, call_referee(rc)).first->second;
}

// Why the candidate's timed launches cannot be counted: what the referee found
// when it checked them (common/timing.cuh), as a sentence and a symptom.
std::pair<std::string, std::string> describe_timed_failure(const json& tf, const std::string& case_name) {
  const std::string kind = tf.value("kind", "");
  const json d = tf.value("detail", json::object());
  const long long earlier = tf.value("verified_batches", 0ll);
  const std::string when =
      earlier > 0 ? "after " + std::to_string(earlier) + " batches of launches that were right, a batch on fresh inputs"
                  : "the first timed launches";
  if (kind == "mismatch")
    return {"wrong result at the timing size " + case_name + " (" + when +
                "): " + std::to_string(d.value("mismatches", 0ull)) + " of " + std::to_string(d.value("count", 0ull)) +
                " elements of `" + d.value("output", std::string()) + "` differ from the baseline, first at " +
                d.value("where", std::string("?")) + ": expected " + value_text(d.value("expected", json())) +
                ", got " + value_text(d.value("got", json())),
            earlier > 0 ? "timed_mismatch" : "mismatch"};
  if (kind == "unwritten")
    return {"at the timing size " + case_name + " (" + when + "), " + std::to_string(d.value("unwritten", 0ull)) +
                " of " + std::to_string(d.value("count", 0ull)) + " elements of `" + d.value("output", std::string()) +
                "` were never written (first at " + d.value("first", std::string("?")) + ")",
            earlier > 0 ? "timed_mismatch" : "unwritten"};
  if (kind == "canary")
    return {"at the timing size " + case_name + " (" + when + "), a write landed " +
                (d.value("before", false) ? "before the start" : "past the end") + " of `" +
                d.value("output", std::string()) + "`",
            "canary"};
  if (kind == "modified_input")
    return {"at the timing size " + case_name + " (" + when + "), your program changed its input `" +
                d.value("input", std::string()) + "` (inputs are read-only)",
            "modified_input"};
  return {"the timed launches at " + case_name + " could not be checked", "error"};
}

CheckResult LabGrader::check_timing(const Check& c) {
  if (auto why = gpu_unavailable()) return skipped(c, *why);
  const RunnerOutcome& t = timing_for(c.case_name);
  if (t.category == "timed_failure") {
    const auto [summary, symptom] =
        describe_timed_failure(t.result.value("timed_failure", json::object()), c.case_name);
    CheckResult r = failed(c, summary, symptom);
    if (symptom == "timed_mismatch")
      r.details.push_back(
          "every timed launch gets fresh inputs and is checked: a kernel that skips work, or "
          "reuses what it computed for earlier inputs, is found out there");
    return r;
  }
  if (t.category == "referee" || t.category == "no_device") return skipped(c, t.message);
  if (!t.ok() && t.category != "interference") {
    CheckResult r = failed(c, t.message, t.category);
    if (t.result.is_object() && t.result.contains("failure")) r.data["failure"] = t.result["failure"];
    return r;
  }
  const json& tj = t.result["timing"];
  const bool speedup = c.kind == "speedup";
  const bool library = c.kind == "fraction_of_library";
  const json& iv = tj[speedup ? "speedup" : library ? "library_fraction" : "fraction"];
  CheckResult r;
  r.kind = c.kind;
  r.data = tj;
  r.data.erase("samples");
  if (t.category == "interference") {
    const json& i = tj["interference"];
    return failed(c,
                  "the baseline ran " + fixed(i.value("ratio", 0.0), 2) + "× slower beside your program than alone (" +
                      fixed(i.value("baseline_ms", 0.0), 3) + " ms against " +
                      fixed(i.value("solo_baseline_ms", 0.0), 3) +
                      " ms): something kept the GPU busy between your requests, so these times are not used. If "
                      "your program starts no GPU work of its own outside the launcher, grade again",
                  "interference");
  }
  if (iv.is_null())
    return skipped(c, library ? "the driver has no library version to compare with (a course problem)"
                              : "no memcpy reference could be timed (not enough free GPU memory)");
  memlabs::Interval interval;
  interval.median = iv.value("median", 0.0);
  interval.lo = iv.value("lo", 0.0);
  interval.hi = iv.value("hi", 0.0);
  interval.n = iv.value("n", 0ull);
  const auto decision = memlabs::decide_final(interval, c.min);
  const auto aa = tj.value("aa", json::object());
  const std::string range = " [" + fixed(interval.lo) + ", " + fixed(interval.hi) + "]";
  if (speedup) {
    r.summary = "speedup over the baseline at " + c.case_name + ": " + fixed(interval.median) + "×" + range +
                ", needs ≥ " + fixed(c.min) + "×";
  } else if (library) {
    const std::string lib = tj.value("library", std::string("the library"));
    r.summary = "at " + c.case_name + ": " + fixed(100 * interval.median, 1) + " % of " + lib + "'s speed [" +
                fixed(100 * interval.lo, 1) + ", " + fixed(100 * interval.hi, 1) + "], needs ≥ " +
                fixed(100 * c.min, 1) + " %";
  } else {
    r.summary = "at " + c.case_name + ": " + fixed(100 * interval.median, 1) + " % of memcpy bandwidth [" +
                fixed(100 * interval.lo, 1) + ", " + fixed(100 * interval.hi, 1) + "], needs ≥ " +
                fixed(100 * c.min, 1) + " %";
  }
  r.details.push_back(
      "baseline " + fixed(tj.value("baseline_gbps", 0.0), 0) + " GB/s, yours " +
      fixed(tj.value("candidate_gbps", 0.0), 0) + " GB/s" +
      (tj.contains("memcpy_gbps") ? ", memcpy " + fixed(tj.value("memcpy_gbps", 0.0), 0) + " GB/s" : "") + "; A/A " +
      fixed(aa.value("median", 0.0), 3) + " over " + std::to_string(tj.value("rounds", 0)) + " rounds, " +
      std::to_string(tj.value("verified_launches", 0)) + " timed launches checked");
  if (speedup && tj.contains("interference") && tj["interference"].value("speedup_scale", 1.0) < 1.0)
    r.details.push_back("the baseline ran " + fixed(tj["interference"].value("ratio", 0.0), 2) +
                        "× slower beside your program than alone: the speedup is scaled by " +
                        fixed(tj["interference"].value("speedup_scale", 1.0), 3) +
                        " so that no more than 10 % of it counts");
  if (tj.contains("candidate_gflops"))
    r.details.push_back("baseline " + fixed(tj.value("baseline_gflops", 0.0), 0) + " GFLOP/s, yours " +
                        fixed(tj.value("candidate_gflops", 0.0), 0) + " GFLOP/s" +
                        (tj.contains("library_gflops") ? ", " + tj.value("library", std::string("library")) + " " +
                                                             fixed(tj.value("library_gflops", 0.0), 0) + " GFLOP/s"
                                                       : std::string()));
  if (!library && tj.contains("library_fraction") && tj["library_fraction"].is_object())
    r.details.push_back("yours runs at " + fixed(100 * tj["library_fraction"].value("median", 0.0), 1) + " % of " +
                        tj.value("library", std::string("the library")) + "'s speed");
  r.status = decision.pass ? "pass" : "fail";
  if (decision.noisy) {
    r.symptom = "noisy";
    r.details.push_back(
        "the interval still straddled the threshold after sampling more: decided on the median; the machine was noisy");
  }
  if (auto why = implausible(tj)) {
    r.status = "fail";
    r.symptom = "implausibly_fast";
    r.summary = "faster than the hardware allows at " + c.case_name + ": " + *why + ". Does it do all the work?";
  }
  return r;
}

CheckResult LabGrader::check_api(const Check& c) {
  if (auto why = gpu_unavailable()) return skipped(c, *why);
  run_correctness();
  const json* got = find_case(student_run_.result, c.case_name);
  if (!got || got->value("status", "") == "running")
    return failed(c, student_run_.message.empty() ? "case " + c.case_name + " did not run" : student_run_.message,
                  student_run_.category == "ok" ? "error" : student_run_.category);
  CheckResult r;
  r.kind = c.kind;
  std::vector<std::string> good;
  std::map<std::string, const json*> reported;
  static const json kNoFacts = json::array();
  const json& facts = got->contains("facts") && (*got)["facts"].is_array() ? (*got)["facts"] : kNoFacts;
  for (const auto& f : facts) reported[f.value("name", "")] = &f;
  std::vector<std::string> wanted = c.facts;
  if (wanted.empty())
    for (const auto& [name, _] : reported) wanted.push_back(name);
  for (const auto& name : wanted) {
    const auto it = reported.find(name);
    if (it == reported.end()) {
      r.status = "fail";
      r.details.push_back(name + ": not reported by the driver (a course problem)");
    } else if (!it->second->value("ok", false)) {
      r.status = "fail";
      r.details.push_back(name + ": " + it->second->value("detail", std::string("does not hold")));
    } else {
      good.push_back(name);
    }
  }
  r.data = {{"case", c.case_name}, {"facts", facts}};
  if (r.status == "pass")
    r.summary = join(good, ", ") + " (case " + c.case_name + ")";
  else
    r.summary = std::to_string(wanted.size() - good.size()) + " of " + std::to_string(wanted.size()) +
                " facts do not hold (case " + c.case_name + ")";
  if (r.status == "fail") r.symptom = "api";
  return r;
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
  const ToolOutput run = tool_output(ncu_key(c), ncu_call(c), "ncu.csv", "ncu: " + c.kernel);
  const RunnerOutcome& out = run.outcome;
  const NcuLog log = parse_ncu_log(run.log);
  if (log.status == NcuLog::not_permitted) return instead_of_ncu(c, "ncu " + log.message);
  if (log.status == NcuLog::no_kernel)
    return failed(c, "your program never launched " + c.kernel + " in case " + c.case_name +
                         (log.launched.empty() ? std::string() : " (ncu saw: " + join(log.launched, ", ") + ")"));
  if (log.status != NcuLog::ok) {
    if (out.category == "timeout" || out.category == "crash" || out.category == "cuda_error")
      return failed(c, out.message, out.category);
    return instead_of_ncu(c, "ncu failed: " + (log.message.empty() ? out.message : log.message));
  }
  const bool at_least = measure->rule == NcuMeasure::at_least;
  const double bound = at_least ? c.ncu_min : c.max;
  const NcuJudgement j = judge_launches(*measure, log.launches, bound, c.elements);
  if (j.status == NcuJudgement::too_many_launches)
    return failed(c,
                  c.kernel + " was launched more than " + std::to_string(kMaxProfiledLaunches) + " times in case " +
                      c.case_name + "; one case needs a launch or a few",
                  measure->symptom);
  if (j.status == NcuJudgement::not_measured)
    return instead_of_ncu(c, "ncu did not report every counter " + c.metric + " needs");
  json counters = json::array();
  for (const auto& l : log.launches) counters.push_back(l.metrics);
  CheckResult r;
  r.kind = c.kind;
  r.details = j.worst.details;
  r.data = {{"kernel", c.kernel},     {"case", c.case_name}, {"metric", c.metric},
            {"value", j.worst.value}, {"values", j.values},  {"launches", log.launches.size()},
            {"counters", counters}};
  r.data[at_least ? "min" : "max"] = bound;
  r.summary = c.kernel + " at " + c.case_name + ": " + j.worst.summary;
  if (j.judged > 1)
    r.summary += " (the " + std::string(at_least ? "lowest" : "highest") + " of " + std::to_string(j.judged) +
                 " launches: launch " + std::to_string(j.worst_launch + 1) + ")";
  else if (log.launches.size() > 1)
    r.details.push_back("over all " + std::to_string(log.launches.size()) + " launches of " + c.kernel +
                        " in the case together");
  if (j.status == NcuJudgement::fails) {
    r.status = "fail";
    r.symptom = measure->symptom;
    r.summary += ", needs " + (at_least     ? "at least " + readable_amount(bound)
                               : bound == 0 ? std::string("0")
                                            : "at most " + readable_amount(bound));
    if (j.judged > 1)
      r.details.push_back(std::to_string(j.failing) + " of " + std::to_string(j.judged) +
                          " launches miss it; every launch of " + c.kernel + " in the case must meet it");
  }
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
  if (!sanitizer_runs()) return skipped(c, "not run: your program did not finish its correctness run");
  Activity activity("compute-sanitizer: " + join(c.tools, ", "));
  struct ToolRun {
    std::string tool;
    RunnerOutcome outcome;
    SanitizerLog log;
  };
  // Every tool at once (started with the lab's other tool runs, unless this
  // check came first): independent processes that time nothing.
  std::vector<std::pair<std::string, std::shared_future<ToolOutput>>> runs;
  for (const auto& tool : c.tools)
    runs.emplace_back(tool, start_tool_run(sanitizer_key(c, tool), sanitizer_call(c, tool), "log.txt", tool));
  std::vector<ToolRun> done;
  for (auto& [tool, f] : runs) {
    const ToolOutput& out = f.get();  // an Interrupted rethrows here; the other runs join as they go
    done.push_back(ToolRun{tool, out.outcome, parse_sanitizer_log(tool, out.log)});
  }
  CheckResult r;
  r.kind = c.kind;
  r.data = {{"cases", c.cases}, {"tools", json::object()}};
  std::vector<std::string> clean;
  for (const auto& t : done) {
    json& tj = r.data["tools"][t.tool];
    tj = {{"reports", t.log.errors}, {"outcome", t.outcome.category}};
    if (t.log.errors > 0 || !t.log.reports.empty()) {
      const std::string first =
          t.log.reports.empty() ? std::to_string(t.log.errors) + " errors" : t.log.reports.front().headline;
      const std::string more = t.log.errors > 1 ? " (" + std::to_string(t.log.errors) + " reports)" : "";
      tj["first"] = first;
      if (r.status == "pass") {
        r.status = "fail";
        r.summary = t.tool + ": " + first + more;
        r.symptom = t.log.reports.empty() ? "sanitizer" : t.log.reports.front().symptom;
        if (!t.log.reports.empty())
          for (std::size_t i = 0; i < t.log.reports.front().lines.size() && i < 8; ++i)
            r.details.push_back(t.log.reports.front().lines[i]);
      } else {
        r.details.push_back("also " + t.tool + ": " + first + more);
      }
    } else if (!t.log.summary_seen ||
               (!t.outcome.ok() && t.outcome.category != "bad_output" && t.outcome.category != "mismatch")) {
      // The tool did not get to the end: the program crashed or hung under it.
      if (r.status == "pass") {
        r.status = "fail";
        r.summary = t.tool + ": " + (t.outcome.message.empty() ? "stopped before its summary" : t.outcome.message);
        r.symptom = t.outcome.ok() ? "sanitizer" : t.outcome.category;
      }
    } else {
      clean.push_back(t.tool);
    }
  }
  if (r.status == "pass") r.summary = join(clean, ", ") + ": no reports on " + join(c.cases, ", ");
  return r;
}

CheckResult LabGrader::check(const Check& c) {
  if (c.kind == "ptx") return check_ptx(c);
  if (c.kind == "ptxas") return check_ptxas(c);
  if (c.kind == "correct") return check_correct(c);
  if (c.kind == "api") return check_api(c);
  if (c.kind == "ncu") return check_ncu(c);
  if (c.kind == "sanitizer") return check_sanitizer(c);
  return check_timing(c);
}

GradeReport LabGrader::run() {
  const auto t0 = std::chrono::steady_clock::now();
  rep_.lab_folder = lab_.folder;
  rep_.lab_id = lab_.id;
  rep_.title = m_.title;
  rep_.submission = o_.submission ? o_.submission->string() : (lab_.dir / m_.student_file).string();
  rep_.arch = s_.builder->settings().arch;
  rep_.device = s_.device;
  rep_.seed = o_.seed.value_or(std::random_device{}());  // fresh inputs every grade
  run_dir_ = s_.new_run_dir(lab_.id);

  for (const auto& step : m_.steps) rep_.steps.push_back({step.id, step.title, step.points, "locked", {}, ""});
  if (!build()) {
    rep_.exit_code = kExitBuildFailed;
    rep_.current_step = m_.steps.front().id;
  } else {
    bool blocked = false;
    for (std::size_t i = 0; i < m_.steps.size(); ++i) {
      if (blocked && !o_.all_steps) break;
      auto& sr = rep_.steps[i];
      bool any_fail = false, any_skip = false;
      for (const auto& c : m_.steps[i].checks) {
        sr.checks.push_back(check(c));
        any_fail = any_fail || sr.checks.back().status == "fail";
        any_skip = any_skip || (sr.checks.back().status == "skipped" && !sr.checks.back().advisory);
      }
      sr.status = any_fail ? "fail" : any_skip ? "skipped" : "pass";
      sr.symptom_hint = symptom_hint(m_, m_.steps[i], sr.checks);
      if (sr.status != "pass" && !rep_.current_step) rep_.current_step = sr.id;
      blocked = blocked || any_fail;
    }
    bool failed_step = false, skipped_step = false;
    for (const auto& st : rep_.steps) {
      failed_step = failed_step || st.status == "fail";
      skipped_step = skipped_step || st.status == "skipped";
    }
    rep_.exit_code = failed_step ? kExitStepFailed : skipped_step ? kExitEnvironment : kExitPass;
    if (!s_.device.present) rep_.notes.push_back("no GPU: only the static checks ran (" + s_.device.reason + ")");
  }
  finish_tool_runs();  // runs of steps a failed step locked: their folders are removed next
  if (!s_.global.verbose) {
    std::error_code ec;
    fs::remove_all(run_dir_, ec);
  }
  rep_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rep_;
}

}  // namespace

std::string value_text(const json& v) {
  if (v.is_number()) return fixed(v.get<double>(), 6);
  if (v.is_string()) return v.get<std::string>();
  return v.is_null() ? "nan" : v.dump();  // null: a non-finite value written by nlohmann
}

// When several checks of a step fail, the symptom closest to the cause
// chooses the hint: a race explains a mismatch, not the other way round.
const std::vector<std::string>& symptom_priority() {
  static const std::vector<std::string> p = {"race",
                                             "out_of_bounds",
                                             "uninitialized",
                                             "divergent_barrier",
                                             "nondeterministic",
                                             "modified_input",
                                             "leak",
                                             "api_error",
                                             "canary",
                                             "unwritten",
                                             "timed_mismatch",
                                             "edge_mismatch",
                                             "not_the_named_kernel",
                                             "memory_space",
                                             "bank_conflicts",
                                             "uncoalesced",
                                             "local_memory",
                                             "implausibly_fast",
                                             "interference"};
  return p;
}

// The hint that matches what was measured beats the generic next hint: the
// step's own symptom_hints first, then the lab's.
std::string symptom_hint(const Manifest& m, const Step& step, const std::vector<CheckResult>& checks) {
  const auto lookup = [&](const std::string& symptom) -> std::string {
    if (symptom.empty()) return "";
    if (auto h = step.symptom_hints.find(symptom); h != step.symptom_hints.end()) return h->second;
    if (auto h = m.symptom_hints.find(symptom); h != m.symptom_hints.end()) return h->second;
    return "";
  };
  std::vector<std::string> seen;
  for (const auto& c : checks)
    if (c.status == "fail") seen.push_back(c.symptom);
  const auto& order = symptom_priority();
  std::stable_sort(seen.begin(), seen.end(), [&](const std::string& a, const std::string& b) {
    return std::find(order.begin(), order.end(), a) < std::find(order.begin(), order.end(), b);
  });
  for (const auto& symptom : seen)
    if (auto h = lookup(symptom); !h.empty()) return h;
  return "";
}

GradeReport grade_lab(Session& session, const LabInfo& lab, const Manifest& manifest, const GradeOptions& options) {
  if (!options.sanitize) return LabGrader(session, lab, manifest, options).run();
  const Manifest sanitized = with_sanitizer_checks(manifest);
  return LabGrader(session, lab, sanitized, options).run();
}

Manifest with_sanitizer_checks(Manifest manifest) {
  for (auto& step : manifest.steps) {
    const auto has = [&](const std::string& kind) {
      return std::any_of(step.checks.begin(), step.checks.end(), [&](const Check& c) { return c.kind == kind; });
    };
    if (has("sanitizer")) continue;
    for (std::size_t i = 0; i < step.checks.size(); ++i) {
      if (step.checks[i].kind != "correct") continue;
      Check c;
      c.kind = "sanitizer";
      c.cases = step.checks[i].cases;
      c.tools = sanitizer_tools();
      step.checks.insert(step.checks.begin() + static_cast<std::ptrdiff_t>(i) + 1, c);
      break;
    }
  }
  return manifest;
}

}  // namespace grader
