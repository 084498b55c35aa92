// The correctness run and what it shows: outputs against the reference
// (check_correct) and the facts the program reports (check_api).
#include <algorithm>
#include <sstream>

#include "activity.hpp"
#include "lab/compare.hpp"
#include "lab_grader.hpp"
#include "ncu_report.hpp"
#include "phase_log.hpp"
#include "text.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace grader {

namespace {

using memlabs::CaseReport;
using memlabs::OutputReport;

const CaseReport* find_case(const std::vector<CaseReport>& cases, const std::string& name) {
  for (const auto& c : cases)
    if (c.name == name) return &c;
  return nullptr;
}

// What is wrong with an output the referee checked: unwritten elements or broken guards.
std::optional<std::pair<std::string, Symptom>> output_problem(const OutputReport& out) {
  if (!out.guard_after_intact)
    return std::make_pair("wrote past the end of `" + out.name + "` (the guard zone after it was overwritten)",
                          Symptom::canary);
  if (!out.guard_before_intact)
    return std::make_pair("wrote before the start of `" + out.name + "` (the guard zone before it was overwritten)",
                          Symptom::canary);
  if (out.unwritten > 0)
    return std::make_pair(std::to_string(out.unwritten) + " of " + std::to_string(out.count) + " elements of `" +
                              out.name + "` were never written (first at " + out.first_unwritten + ")",
                          Symptom::unwritten);
  return std::nullopt;
}

// True when one of the first mismatches is a NaN where the reference has a number.
bool nan_where_a_number_was_expected(const std::vector<memlabs::MismatchAt>& first) {
  const auto is_nan = [](const json& v) { return v.is_null() || (v.is_string() && v.get<std::string>() == "nan"); };
  for (const auto& mm : first)
    if (is_nan(mm.got) && !is_nan(mm.expected)) return true;
  return false;
}

// True when every dimension of every output is a whole number of 32-wide tiles.
bool tile_aligned(const std::vector<OutputReport>& outputs) {
  for (const auto& o : outputs)
    for (const auto d : o.dims)
      if (d <= 0 || d % 32 != 0) return false;
  return !outputs.empty();
}

}  // namespace

void LabGrader::run_correctness() {
  if (correctness_done_) return;
  correctness_done_ = true;
  Activity activity("running your program");
  RefereeCall rc = referee_call("run");
  rc.request.mode = memlabs::RefereeMode::run;
  rc.request.seed = rep_.seed;
  std::size_t cases = 0;
  bool gathers_facts = false;
  for (const auto& step : m_.steps)
    for (const auto& c : step.checks) {
      if (!graded_here(step)) break;
      if (c.kind == CheckKind::correct)
        for (const auto& name : c.cases) rc.request.add_case(name), ++cases;
      if (c.kind == CheckKind::api) {
        rc.request.add_case(c.case_name);
        rc.request.fact_cases.push_back(c.case_name);
        ++cases;
        gathers_facts = true;
      }
    }
  // An ncu measure counted per output element at a case no correctness check
  // runs (a timed size, too large for the oracle): the referee counts its outputs.
  const auto listed = [](const std::vector<std::string>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  for (const auto& step : m_.steps)
    for (const auto& c : step.checks)
      if (c.kind == CheckKind::ncu && graded_here(step))
        if (const NcuMeasure* m = find_ncu_measure(c.metric); m && (m->per_element || m->per_stored_value))
          if (!listed(rc.request.cases, c.case_name) && !listed(rc.request.count_cases, c.case_name))
            rc.request.count_cases.push_back(c.case_name);
  // Every request may take the lab's timeout; a case makes a few requests.
  rc.timeout_s = m_.timeout_s * (4.0 * static_cast<double>(cases) + 2) + 30;
  // The tools run the program on their own, beside this run: none of them times
  // anything, and neither does this run, so they share the GPU (with other
  // grades' work of the kind too, never with a timing). Facts are another
  // matter: a fact may read the whole GPU's state (lab02's leak check reads free
  // device memory, which other runs of programs take and give back), so with
  // facts to gather this run has the GPU to itself and the tools start after it.
  rc.gpu_use = gathers_facts ? memlabs::GpuUse::exclusive : memlabs::GpuUse::shared;
  // The first timing starts here too: its referee waits for these runs (shared
  // turns) before it times anything, and is stopped if no step reaches it.
  if (!gathers_facts && o_.overlap_runs) {
    start_tool_runs();
    start_first_timing();
  }
  student_run_ = call_referee(rc);
  const bool hung = student_run_.category == RunCategory::timeout;
  // The runs of the steps it hung in would hang to their own limits; those of
  // other steps say what they would have said (hung_beside).
  if (hung) cancel_runs_beside_the_hang();
  if (gathers_facts && o_.overlap_runs) {
    start_tool_runs();  // not those beside the hang
    if (!hung) start_first_timing();
  }
  if (!student_run_.stdout_head.empty() || !student_run_.stderr_head.empty())
    rep_.program_output = student_run_.stdout_head + student_run_.stderr_head;
}

namespace {

// The first output of a case that differs from the expected result: how many
// elements, the first few, and whether a second run changed it (a race).
CheckResult mismatch_in(const Check& c, const CaseReport& got, const OutputReport& output) {
  CheckResult m;
  m.kind = c.kind;
  m.status = Outcome::fail;
  m.summary = "case " + got.name + ": " + std::to_string(output.mismatches) + " of " + std::to_string(output.count) +
              " elements of `" + output.name + "` differ from the expected result";
  for (const auto& mm : output.first)
    m.details.push_back("at " + mm.where + ": expected " + value_text(mm.expected) + ", got " + value_text(mm.got));
  if (nan_where_a_number_was_expected(output.first))
    m.details.push_back(
        "a NaN where a number was expected: the bytes just before and after every input read as NaN, so "
        "this is most often a read outside an input (an index off by one, or a vector load that reaches "
        "past the end)");
  m.data = {{"case", got.name}, {"mismatches", output.mismatches}, {"count", output.count}};
  m.symptom = Symptom::mismatch;
  // A result that changes from run to run is a race, not a wrong formula.
  if (got.rerun) {
    m.symptom = Symptom::nondeterministic;
    m.details.push_back("a second run with the same inputs gave a different result (" +
                        std::to_string(got.rerun->changed) + " of " + std::to_string(got.rerun->count) +
                        " elements of `" + got.rerun->output +
                        "` changed): some threads read values before others wrote them");
  }
  return m;
}

}  // namespace

// A case whose program changed an input or wrote just outside one.
std::optional<CheckResult> LabGrader::inputs_touched(const Check& c, const memlabs::CaseReport& got) {
  if (!got.modified_inputs.empty())
    return failed(c,
                  "case " + got.name + ": your program changed its input `" + join(got.modified_inputs, "`, `") +
                      "` (inputs are read-only)",
                  Symptom::modified_input);
  if (!got.written_around_inputs.empty())
    return failed(c,
                  "case " + got.name + ": your program wrote outside its input `" +
                      join(got.written_around_inputs, "`, `") +
                      "` (the guard zone just before or after it was overwritten)",
                  Symptom::canary);
  return std::nullopt;
}

// A case with no result: the program stopped in it or before it.
CheckResult LabGrader::case_did_not_run(const Check& c, const std::string& name) {
  const std::string crashed_in = student_run_.failure ? student_run_.failure->case_name : std::string();
  if (student_run_.category == RunCategory::referee || student_run_.category == RunCategory::no_device)
    return skipped(c, student_run_.message);
  CheckResult r;
  r.kind = c.kind;
  r.status = Outcome::fail;
  r.summary = student_run_.message.empty() ? "case " + name + " did not run" : student_run_.message;
  if (!crashed_in.empty() && crashed_in != name) r.summary = "case " + name + " did not run: " + r.summary;
  r.symptom = symptom_of(student_run_.category);  // a run that ended well yet failed: error
  return r;
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
    const memlabs::CaseReport* got = find_case(student_run_.cases, name);
    if (!got || !got->finished()) {
      if (first_mismatch) break;  // the earlier case's mismatch is the first thing wrong
      return case_did_not_run(c, name);
    }
    if (auto touched = inputs_touched(c, *got); touched && !first_mismatch) return *touched;
    const std::vector<OutputReport>& outputs = got->outputs;
    bool case_ok = true;
    for (const auto& g : outputs) {
      if (auto problem = output_problem(g)) {
        if (first_mismatch) break;
        r.status = Outcome::fail;
        r.summary = "case " + name + ": " + problem->first;
        r.symptom = problem->second;
        return r;
      }
      if (g.mismatches == 0) continue;
      case_ok = false;
      if (!first_mismatch) first_mismatch = mismatch_in(c, *got, g);
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
    if (r.symptom == Symptom::mismatch && !aligned_passed.empty() && mismatches_all_unaligned) {
      r.symptom = Symptom::edge_mismatch;
      r.details.push_back("wrong only at sizes that are not multiples of 32; right at " + join(aligned_passed, ", "));
    }
    r.data["mismatched_cases"] = mismatched;
    return r;
  }
  r.summary = "matches the expected result on " + join(passed, ", ") + " (seed " + std::to_string(rep_.seed) + ")";
  r.data = {{"cases", passed}};
  return r;
}

std::optional<double> LabGrader::output_elements(const std::string& case_name) {
  run_correctness();
  const memlabs::CaseReport* got = find_case(student_run_.cases, case_name);
  if (!got) {
    const auto counted = student_run_.output_elements.find(case_name);
    if (counted != student_run_.output_elements.end()) return counted->second;
  }
  if (!got || !got->finished()) return std::nullopt;
  double elements = 0;
  for (const auto& o : got->outputs) elements += static_cast<double>(o.count);
  if (elements > 0) return elements;
  return std::nullopt;
}

CheckResult LabGrader::check_api(const Check& c) {
  if (auto why = gpu_unavailable()) return skipped(c, *why);
  run_correctness();
  const memlabs::CaseReport* got = find_case(student_run_.cases, c.case_name);
  if (!got || !got->finished())
    return failed(c, student_run_.message.empty() ? "case " + c.case_name + " did not run" : student_run_.message,
                  symptom_of(student_run_.category));
  CheckResult r;
  r.kind = c.kind;
  std::vector<std::string> good;
  std::map<std::string, const memlabs::FactReport*> reported;
  const std::vector<memlabs::FactReport> facts = got->facts.value_or(std::vector<memlabs::FactReport>{});
  for (const auto& f : facts) reported[f.name] = &f;
  std::vector<std::string> wanted = c.facts;
  if (wanted.empty())
    for (const auto& [name, _] : reported) wanted.push_back(name);
  for (const auto& name : wanted) {
    const auto it = reported.find(name);
    if (it == reported.end()) {
      r.status = Outcome::fail;
      r.details.push_back(name + ": not reported by the driver (a course problem)");
    } else if (!it->second->ok) {
      r.status = Outcome::fail;
      r.details.push_back(name + ": " + (it->second->detail.empty() ? "does not hold" : it->second->detail));
    } else {
      good.push_back(name);
    }
  }
  r.data = {{"case", c.case_name}, {"facts", facts}};
  if (r.status == Outcome::pass)
    r.summary = join(good, ", ") + " (case " + c.case_name + ")";
  else
    r.summary = std::to_string(wanted.size() - good.size()) + " of " + std::to_string(wanted.size()) +
                " facts do not hold (case " + c.case_name + ")";
  if (r.status == Outcome::fail) r.symptom = Symptom::api;
  return r;
}

}  // namespace grader
