#include "grading.hpp"

#include <chrono>
#include <fstream>
#include <future>
#include <iterator>
#include <map>
#include <random>
#include <sstream>

#include "compare.hpp"
#include "compiler_report.hpp"
#include "prebuilt_reference.hpp"
#include "runner_client.hpp"
#include "stats.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace grader {
namespace {

std::string fmt(double v, int precision = 2) {
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(precision);
  os << v;
  return os.str();
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

std::string read_binary(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

bool is_timed(const Check& c) {
  return c.kind == "speedup" || c.kind == "fraction_of_peak" || c.kind == "fraction_of_library";
}

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
  bool use_prebuilt_reference();
  CheckResult check(const Check& c);
  CheckResult check_ptx(const Check& c);
  CheckResult check_ptxas(const Check& c);
  CheckResult check_correct(const Check& c);
  CheckResult check_timing(const Check& c);
  CheckResult check_api(const Check& c);
  void run_correctness();
  const RunnerOutcome& timing_for(const std::string& case_name);
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
  RunnerOutcome student_run_, reference_run_;
  std::map<std::string, RunnerOutcome> timing_;
};

std::optional<std::string> LabGrader::gpu_unavailable() const {
  if (!s_.device.present) return "skipped: needs a GPU";
  return std::nullopt;
}

bool LabGrader::build() {
  std::vector<RunnerSource> sources;
  RunnerSource student{lab_.dir, o_.submission.value_or(lab_.dir / m_.student_file), "kernel.cu", m_.link};
  sources.push_back(student);
  const fs::path solution = s_.course.solution_kernel(lab_);
  const bool have_solution = fs::exists(solution);
  if (have_solution) sources.push_back({lab_.dir, solution, "solution kernel.cu", m_.link});
  auto builds = s_.builder->build(sources);
  rep_.student_build = builds[0];
  if (have_solution) rep_.reference_build = builds[1];
  if (!rep_.student_build.kernel.ok && !rep_.student_build.ok) return false;
  if (rep_.student_build.kernel.ok) {
    ptx_ = parse_ptx(read_binary(rep_.student_build.kernel.ptx_file));
    resources_ = parse_ptxas_report(rep_.student_build.kernel.ptxas_log);
  }
  if (have_solution) rep_.reference_origin = "built";
  else if (!use_prebuilt_reference())
    rep_.notes.push_back("no reference solution at " + solution.string() + ": correctness checks cannot run");
  if (have_solution && !rep_.reference_build.ok)
    rep_.notes.push_back("the reference solution does not build (a course problem, not yours):\n" +
                         rep_.reference_build.diagnostics);
  return rep_.student_build.ok;
}

// A published class copy has no solutions/: its reference runner was built by
// `grader publish` and ships in .reference/<lab>/ (prebuilt_reference.hpp).
bool LabGrader::use_prebuilt_reference() {
  const auto pre = find_prebuilt_reference(s_.course.root(), lab_.folder);
  if (!pre) return false;
  rep_.reference_origin = "prebuilt";
  auto& b = rep_.reference_build;
  b.runner = pre->runner;
  b.cached = true;
  if (!pre->problem.empty()) {
    b.stage = "prebuilt";
    b.diagnostics = pre->problem;
    rep_.notes.push_back("the prebuilt reference runner cannot be used (a course problem, not yours): " + pre->problem);
    return true;
  }
  if (s_.device.present && !prebuilt_runs_on(pre->archs, pre->ptx, s_.device.arch)) {
    b.stage = "prebuilt";
    b.diagnostics = "built for " + join(pre->archs, ", ") + " and " + pre->ptx + ", which cannot run on this " +
                    s_.device.arch + " GPU";
    rep_.notes.push_back("the prebuilt reference runner was " + b.diagnostics +
                         ": correctness checks cannot run (publish the course again with --archs including " +
                         s_.device.arch + ")");
    return true;
  }
  b.ok = true;
  std::string now;
  try {
    now = reference_source_hash(s_.course.root(), lab_.dir);
  } catch (const std::exception& e) {
    now = std::string("unreadable: ") + e.what();
  }
  if (now != pre->source_sha256)
    rep_.notes.push_back("stale reference: lab " + lab_.folder + "'s driver.cu, its headers or common/ changed since " +
                         "the reference runner was built (" + pre->info_file.string() +
                         "); correctness verdicts compare against a runner built from the old sources. " +
                         "`grader verify` lists what changed");
  return true;
}

CheckResult LabGrader::check_ptx(const Check& c) {
  const auto k = ptx_.kernels.find(c.kernel);
  if (k == ptx_.kernels.end()) {
    std::vector<std::string> names;
    for (const auto& [n, _] : ptx_.kernels) names.push_back(n);
    return failed(c, "no kernel named " + c.kernel + " in kernel.cu (found: " +
                         (names.empty() ? "none" : join(names, ", ")) + ")");
  }
  const auto present = [&](const std::string& cls) {
    if (cls == "extern_shared") return k->second.uses_extern_shared;
    if (cls == "global_variable") return !ptx_.global_variables.empty();
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
  return r;
}

CheckResult LabGrader::check_ptxas(const Check& c) {
  const auto k = resources_.find(c.kernel);
  if (k == resources_.end()) return failed(c, "ptxas reported no kernel named " + c.kernel);
  const auto& kr = k->second;
  CheckResult r;
  r.kind = c.kind;
  r.data = {{"kernel", c.kernel}, {"registers", kr.registers}, {"stack_frame", kr.stack_frame},
            {"spill_stores", kr.spill_stores}, {"spill_loads", kr.spill_loads}};
  std::vector<std::string> bad;
  if (c.max_stack_frame && kr.stack_frame > *c.max_stack_frame)
    bad.push_back(std::to_string(kr.stack_frame) + " bytes stack frame (max " + std::to_string(*c.max_stack_frame) + ")");
  if (c.max_spill_bytes && std::max(kr.spill_stores, kr.spill_loads) > *c.max_spill_bytes)
    bad.push_back(std::to_string(kr.spill_stores) + " bytes spill stores, " + std::to_string(kr.spill_loads) +
                  " bytes spill loads (max " + std::to_string(*c.max_spill_bytes) + ")");
  if (c.max_registers && kr.registers > *c.max_registers)
    bad.push_back(std::to_string(kr.registers) + " registers (max " + std::to_string(*c.max_registers) + ")");
  const std::string facts = std::to_string(kr.registers) + " registers, " + std::to_string(kr.stack_frame) +
                            " bytes stack frame, " + std::to_string(kr.spill_stores + kr.spill_loads) + " bytes spilled";
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
  std::vector<std::string> args = {"run", "--seed", std::to_string(rep_.seed)};
  for (const auto& step : m_.steps)
    for (const auto& c : step.checks)
      for (const auto& name : c.kind == "correct" ? c.cases : c.kind == "api" ? std::vector<std::string>{c.case_name} : std::vector<std::string>{})
        if (std::find(args.begin(), args.end(), name) == args.end()) args.insert(args.end(), {"--case", name});
  auto call = [&](const fs::path& runner, const std::string& tag, const std::string& who) {
    RunnerCall rc;
    rc.runner = runner;
    rc.args = args;
    rc.args.insert(rc.args.end(), {"--dump-dir", (run_dir_ / tag / "dump").string()});
    rc.work_dir = run_dir_ / tag;
    rc.timeout_s = m_.timeout_s;
    rc.who = who;
    return call_runner(rc);
  };
  // Both on the GPU at once: correctness runs are small, and this halves the
  // wait. Not when an api check reads device-wide state (free memory for a
  // leak check), which the other process would disturb.
  bool device_wide_facts = false;
  for (const auto& step : m_.steps)
    for (const auto& c : step.checks) device_wide_facts = device_wide_facts || c.kind == "api";
  if (device_wide_facts) {
    student_run_ = call(rep_.student_build.runner, "student", "your program");
    reference_run_ = call(rep_.reference_build.runner, "reference", "the reference");
  } else {
    auto ref = std::async(std::launch::async, [&] { return call(rep_.reference_build.runner, "reference", "the reference"); });
    student_run_ = call(rep_.student_build.runner, "student", "your program");
    reference_run_ = ref.get();
  }
  if (!student_run_.stdout_head.empty() || !student_run_.stderr_head.empty())
    rep_.program_output = student_run_.stdout_head + student_run_.stderr_head;
}

const json* find_case(const json& result, const std::string& name) {
  if (!result.contains("cases")) return nullptr;
  for (const auto& c : result["cases"])
    if (c.value("case", "") == name) return &c;
  return nullptr;
}

// What is wrong with an output the runner checked itself: unwritten elements or broken guards.
std::optional<std::pair<std::string, std::string>> output_problem(const json& out) {
  const std::string name = out.value("name", "out");
  if (!out.value("guard_after_intact", true))
    return std::make_pair("wrote past the end of `" + name + "` (the guard zone after it was overwritten)", std::string("canary"));
  if (!out.value("guard_before_intact", true))
    return std::make_pair("wrote before the start of `" + name + "` (the guard zone before it was overwritten)", std::string("canary"));
  const auto unwritten = out.value("unwritten", 0ull);
  if (unwritten > 0)
    return std::make_pair(std::to_string(unwritten) + " of " + std::to_string(out.value("count", 0ull)) +
                              " elements of `" + name + "` were never written (first at " +
                              out.value("first_unwritten", std::string("?")) + ")",
                          std::string("unwritten"));
  return std::nullopt;
}

CheckResult LabGrader::check_correct(const Check& c) {
  if (auto why = gpu_unavailable()) return skipped(c, *why);
  if (!rep_.reference_build.ok) return skipped(c, "no reference runner to compare with");
  run_correctness();
  if (reference_run_.category != "ok")
    return failed(c, "the reference failed, which is a course problem: " + reference_run_.message);
  CheckResult r;
  r.kind = c.kind;
  std::vector<std::string> passed;
  for (const auto& name : c.cases) {
    const json* got = find_case(student_run_.result, name);
    const json* want = find_case(reference_run_.result, name);
    if (!got || got->value("status", "") == "running") {
      // The process stopped in (or before) this case.
      // No result at all after a hang or a crash: then no case is named.
      const json& res = student_run_.result;
      const std::string crashed_in = res.is_object() && res.contains("error") && res["error"].is_object()
                                         ? res["error"].value("case", std::string())
                                         : std::string();
      r.status = "fail";
      r.summary = student_run_.message.empty() ? "case " + name + " did not run" : student_run_.message;
      if (!crashed_in.empty() && crashed_in != name) r.summary = "case " + name + " did not run: " + r.summary;
      r.symptom = student_run_.category;
      return r;
    }
    const auto& got_outputs = (*got)["outputs"];
    const auto& want_outputs = (*want)["outputs"];
    for (std::size_t k = 0; k < want_outputs.size(); ++k) {
      const auto& w = want_outputs[k];
      const auto& g = got_outputs.at(k);
      if (auto problem = output_problem(g)) {
        r.status = "fail";
        r.summary = "case " + name + ": " + problem->first;
        r.symptom = problem->second;
        return r;
      }
      const auto dtype = memlabs::parse_dtype(w.value("dtype", ""));
      const std::string want_bytes = read_binary(w.value("file", ""));
      const std::string got_bytes = read_binary(g.value("file", ""));
      const std::size_t count = w.value("count", 0ull);
      if (!dtype || want_bytes.size() != count * memlabs::dtype_size(*dtype) || got_bytes.size() != want_bytes.size()) {
        r.status = "fail";
        r.summary = "case " + name + ": output `" + w.value("name", "") + "` has the wrong size";
        return r;
      }
      const auto cmp = memlabs::compare_values(*dtype, want_bytes.data(), *dtype, got_bytes.data(), count,
                                               w.value("dims", std::vector<std::int64_t>{}),
                                               {w.value("rtol", 0.0), w.value("atol", 0.0)});
      if (!cmp.ok()) {
        r.status = "fail";
        r.summary = "case " + name + ": " + std::to_string(cmp.mismatches) + " of " + std::to_string(cmp.count) +
                    " elements of `" + w.value("name", "") + "` differ from the reference";
        for (const auto& mm : cmp.first)
          r.details.push_back("at " + mm.where + ": expected " + fmt(mm.expected, 6) + ", got " + fmt(mm.got, 6));
        r.data = {{"case", name}, {"mismatches", cmp.mismatches}, {"count", cmp.count}};
        r.symptom = "mismatch";
        return r;
      }
    }
    passed.push_back(name);
  }
  r.summary = "matches the reference on " + join(passed, ", ") + " (seed " + std::to_string(rep_.seed) + ")";
  r.data = {{"cases", passed}};
  return r;
}

const RunnerOutcome& LabGrader::timing_for(const std::string& case_name) {
  auto it = timing_.find(case_name);
  if (it != timing_.end()) return it->second;
  std::vector<std::string> args = {"time", "--case", case_name, "--seed", std::to_string(rep_.seed),
                                   "--cap-s", fmt(o_.cap_s, 3)};
  // Every threshold any step puts on this case, so one session decides them all.
  for (const auto& step : m_.steps)
    for (const auto& c : step.checks)
      if (is_timed(c) && c.case_name == case_name)
        args.insert(args.end(), {"--decide", std::string(c.kind == "speedup" ? "speedup:" : c.kind == "fraction_of_peak" ? "fraction:" : "library:") + fmt(c.min, 4)});
  RunnerCall rc;
  rc.runner = rep_.student_build.runner;
  rc.args = args;
  rc.work_dir = run_dir_ / ("time-" + case_name);
  rc.timeout_s = m_.timeout_s + 4 * o_.cap_s;
  return timing_.emplace(case_name, call_runner(rc)).first->second;
}

CheckResult LabGrader::check_timing(const Check& c) {
  if (auto why = gpu_unavailable()) return skipped(c, *why);
  const RunnerOutcome& t = timing_for(c.case_name);
  if (t.category == "mismatch") {
    std::string detail;
    for (const auto& o : t.result.value("outputs", json::array())) {
      if (auto p = output_problem(o)) detail = p->first;
      else if (o.contains("vs_baseline") && !o["vs_baseline"].value("ok", true)) detail = o["vs_baseline"].value("detail", "");
    }
    return failed(c, "wrong result at the timing size " + c.case_name + " (so it is not timed): " + detail, "mismatch");
  }
  if (!t.ok()) return failed(c, t.message, t.category);
  const json& tj = t.result["timing"];
  const bool speedup = c.kind == "speedup";
  const bool library = c.kind == "fraction_of_library";
  const json& iv = tj[speedup ? "speedup" : library ? "library_fraction" : "fraction"];
  CheckResult r;
  r.kind = c.kind;
  r.data = tj;
  r.data.erase("samples");
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
  const std::string range = " [" + fmt(interval.lo) + ", " + fmt(interval.hi) + "]";
  if (speedup) {
    r.summary = "speedup over the baseline at " + c.case_name + ": " + fmt(interval.median) + "×" + range +
                ", needs ≥ " + fmt(c.min) + "×";
  } else if (library) {
    const std::string lib = tj.value("library", std::string("the library"));
    r.summary = "at " + c.case_name + ": " + fmt(100 * interval.median, 1) + " % of " + lib + "'s speed [" +
                fmt(100 * interval.lo, 1) + ", " + fmt(100 * interval.hi, 1) + "], needs ≥ " + fmt(100 * c.min, 1) + " %";
  } else {
    r.summary = "at " + c.case_name + ": " + fmt(100 * interval.median, 1) + " % of memcpy bandwidth [" +
                fmt(100 * interval.lo, 1) + ", " + fmt(100 * interval.hi, 1) + "], needs ≥ " + fmt(100 * c.min, 1) + " %";
  }
  r.details.push_back("baseline " + fmt(tj.value("baseline_gbps", 0.0), 0) + " GB/s, yours " +
                      fmt(tj.value("candidate_gbps", 0.0), 0) + " GB/s" +
                      (tj.contains("memcpy_gbps") ? ", memcpy " + fmt(tj.value("memcpy_gbps", 0.0), 0) + " GB/s" : "") +
                      "; A/A " + fmt(aa.value("median", 0.0), 3) + " over " + std::to_string(tj.value("rounds", 0)) +
                      " rounds");
  if (tj.contains("candidate_gflops"))
    r.details.push_back("baseline " + fmt(tj.value("baseline_gflops", 0.0), 0) + " GFLOP/s, yours " +
                        fmt(tj.value("candidate_gflops", 0.0), 0) + " GFLOP/s" +
                        (tj.contains("library_gflops") ? ", " + tj.value("library", std::string("library")) + " " +
                                                             fmt(tj.value("library_gflops", 0.0), 0) + " GFLOP/s"
                                                       : std::string()));
  if (!library && tj.contains("library_fraction") && tj["library_fraction"].is_object())
    r.details.push_back("yours runs at " + fmt(100 * tj["library_fraction"].value("median", 0.0), 1) + " % of " +
                        tj.value("library", std::string("the library")) + "'s speed");
  r.status = decision.pass ? "pass" : "fail";
  if (decision.noisy) {
    r.symptom = "noisy";
    r.details.push_back("the interval still straddled the threshold after sampling more: decided on the median; the machine was noisy");
  }
  // Faster than a plain copy of the same bytes: it cannot have done all the work.
  const json& fr = tj["fraction"];
  if (!fr.is_null() && fr.value("lo", 0.0) > 1.15) {
    r.status = "fail";
    r.symptom = "implausibly_fast";
    r.summary = "faster than memory allows at " + c.case_name + ": " + fmt(tj.value("candidate_gbps", 0.0), 0) +
                " GB/s for the bytes it must move, above the measured copy bandwidth " +
                fmt(tj.value("memcpy_gbps", 0.0), 0) + " GB/s. Does it do all the work?";
  }
  return r;
}

CheckResult LabGrader::check_api(const Check& c) {
  if (auto why = gpu_unavailable()) return skipped(c, *why);
  if (!rep_.reference_build.ok) return skipped(c, "no reference runner to run the case with");
  run_correctness();
  const json* got = find_case(student_run_.result, c.case_name);
  if (!got || got->value("status", "") == "running")
    return failed(c, student_run_.message.empty() ? "case " + c.case_name + " did not run" : student_run_.message,
                  student_run_.category);
  CheckResult r;
  r.kind = c.kind;
  std::vector<std::string> good;
  std::map<std::string, const json*> reported;
  static const json kNoFacts = json::array();
  const json& facts = got->contains("facts") ? (*got)["facts"] : kNoFacts;  // a reference: `reported` points into it
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
  if (r.status == "pass") r.summary = join(good, ", ") + " (case " + c.case_name + ")";
  else r.summary = std::to_string(wanted.size() - good.size()) + " of " + std::to_string(wanted.size()) +
                   " facts do not hold (case " + c.case_name + ")";
  if (r.status == "fail") r.symptom = "api";
  return r;
}

CheckResult LabGrader::check(const Check& c) {
  if (c.kind == "ptx") return check_ptx(c);
  if (c.kind == "ptxas") return check_ptxas(c);
  if (c.kind == "correct") return check_correct(c);
  if (c.kind == "api") return check_api(c);
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
        any_skip = any_skip || sr.checks.back().status == "skipped";
      }
      sr.status = any_fail ? "fail" : any_skip ? "skipped" : "pass";
      // The hint that matches what was measured beats the generic next hint.
      for (const auto& c : sr.checks) {
        const auto& hints = m_.steps[i].symptom_hints;
        const auto h = c.status == "fail" ? hints.find(c.symptom) : hints.end();
        if (h != hints.end() && sr.symptom_hint.empty()) sr.symptom_hint = h->second;
      }
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
  if (!s_.global.verbose) {
    std::error_code ec;
    fs::remove_all(run_dir_, ec);
  }
  rep_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rep_;
}

}  // namespace

GradeReport grade_lab(Session& session, const LabInfo& lab, const Manifest& manifest, const GradeOptions& options) {
  return LabGrader(session, lab, manifest, options).run();
}

}  // namespace grader
