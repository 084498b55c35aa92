// The correctness run and what it shows: outputs against the reference
// (check_correct) and the facts the program reports (check_api).
#include <algorithm>
#include <sstream>

#include "activity.hpp"
#include "compare.hpp"
#include "lab_grader.hpp"
#include "phase_log.hpp"
#include "text.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace grader {

namespace {

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

// True when one of the first mismatches is a NaN where the reference has a number.
bool nan_where_a_number_was_expected(const json& first) {
  const auto is_nan = [](const json& v) { return v.is_null() || (v.is_string() && v.get<std::string>() == "nan"); };
  for (const auto& mm : first)
    if (mm.is_object() && is_nan(mm.value("got", json())) && !is_nan(mm.value("expected", json()))) return true;
  return false;
}

// True when every dimension of every output is a whole number of 32-wide tiles.
bool tile_aligned(const json& outputs) {
  for (const auto& o : outputs)
    for (const auto& d : o.value("dims", std::vector<std::int64_t>{}))
      if (d <= 0 || d % 32 != 0) return false;
  return !outputs.empty();
}

}  // namespace

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
      if (c.kind == CheckKind::correct)
        for (const auto& name : c.cases) add_case(name), ++cases;
      if (c.kind == CheckKind::api) {
        add_case(c.case_name);
        rc.args.insert(rc.args.end(), {"--facts", c.case_name});
        ++cases;
      }
    }
  // Every request may take the lab's timeout; a case makes a few requests.
  rc.timeout_s = m_.timeout_s * (4.0 * static_cast<double>(cases) + 2) + 30;
  // The tools run the program on their own, beside this run: none of them times
  // anything. Facts are another matter: a fact may read the whole GPU's state
  // (lab02's leak check reads free device memory, which the tools' own runs of the
  // program take and give back), so with facts to gather this run has the GPU to
  // itself and the tools start after it.
  const bool gathers_facts = std::find(rc.args.begin(), rc.args.end(), "--facts") != rc.args.end();
  if (!gathers_facts) start_tool_runs();
  student_run_ = call_referee(rc);
  if (student_run_.category == "timeout") cancel_tool_runs_ = true;  // each would hang to its own limit
  if (gathers_facts && student_run_.category != "timeout") start_tool_runs();
  if (!student_run_.stdout_head.empty() || !student_run_.stderr_head.empty())
    rep_.program_output = student_run_.stdout_head + student_run_.stderr_head;
}

namespace {

// The first output of a case that differs from the expected result: how many
// elements, the first few, and whether a second run changed it (a race).
CheckResult mismatch_in(const Check& c, const std::string& name, const json& got, const json& output) {
  const auto mismatches = output.value("mismatches", 0ull);
  CheckResult m;
  m.kind = name_of(c.kind);
  m.status = Outcome::fail;
  m.summary = "case " + name + ": " + std::to_string(mismatches) + " of " +
              std::to_string(output.value("count", 0ull)) + " elements of `" + output.value("name", "") +
              "` differ from the expected result";
  for (const auto& mm : output.value("first", json::array()))
    m.details.push_back("at " + mm.value("where", std::string("?")) + ": expected " +
                        value_text(mm.value("expected", json())) + ", got " + value_text(mm.value("got", json())));
  if (nan_where_a_number_was_expected(output.value("first", json::array())))
    m.details.push_back(
        "a NaN where a number was expected: the bytes just before and after every input read as NaN, so "
        "this is most often a read outside an input (an index off by one, or a vector load that reaches "
        "past the end)");
  m.data = {{"case", name}, {"mismatches", mismatches}, {"count", output.value("count", 0ull)}};
  m.symptom = "mismatch";
  // A result that changes from run to run is a race, not a wrong formula.
  if (got.contains("rerun") && got["rerun"].is_object()) {
    const json& rr = got["rerun"];
    m.symptom = "nondeterministic";
    m.details.push_back("a second run with the same inputs gave a different result (" +
                        std::to_string(rr.value("changed", 0ull)) + " of " + std::to_string(rr.value("count", 0ull)) +
                        " elements of `" + rr.value("output", std::string()) +
                        "` changed): some threads read values before others wrote them");
  }
  return m;
}

}  // namespace

// A case whose program changed an input or wrote just outside one.
std::optional<CheckResult> LabGrader::inputs_touched(const Check& c, const std::string& name, const json& got) {
  const auto modified = got.value("modified_inputs", std::vector<std::string>{});
  if (!modified.empty())
    return failed(
        c, "case " + name + ": your program changed its input `" + join(modified, "`, `") + "` (inputs are read-only)",
        "modified_input");
  const auto written_around = got.value("written_around_inputs", std::vector<std::string>{});
  if (!written_around.empty())
    return failed(c,
                  "case " + name + ": your program wrote outside its input `" + join(written_around, "`, `") +
                      "` (the guard zone just before or after it was overwritten)",
                  "canary");
  return std::nullopt;
}

// A case with no result: the program stopped in it or before it.
CheckResult LabGrader::case_did_not_run(const Check& c, const std::string& name) {
  const json failure =
      student_run_.result.is_object() ? student_run_.result.value("failure", json::object()) : json::object();
  const std::string crashed_in = failure.is_object() ? failure.value("case", std::string()) : std::string();
  if (student_run_.category == "referee" || student_run_.category == "no_device")
    return skipped(c, student_run_.message);
  CheckResult r;
  r.kind = name_of(c.kind);
  r.status = Outcome::fail;
  r.summary = student_run_.message.empty() ? "case " + name + " did not run" : student_run_.message;
  if (!crashed_in.empty() && crashed_in != name) r.summary = "case " + name + " did not run: " + r.summary;
  r.symptom = student_run_.category == "ok" ? "error" : student_run_.category;
  if (student_run_.category == "referee") r.symptom = "referee";
  return r;
}

CheckResult LabGrader::check_correct(const Check& c) {
  if (auto why = gpu_unavailable()) return skipped(c, *why);
  run_correctness();
  CheckResult r;
  r.kind = name_of(c.kind);
  std::vector<std::string> passed, aligned_passed, mismatched;
  std::optional<CheckResult> first_mismatch;
  bool mismatches_all_unaligned = true;
  for (const auto& name : c.cases) {
    const json* got = find_case(student_run_.result, name);
    if (!got || got->value("status", "") == "running") {
      if (first_mismatch) break;  // the earlier case's mismatch is the first thing wrong
      return case_did_not_run(c, name);
    }
    if (auto touched = inputs_touched(c, name, *got); touched && !first_mismatch) return *touched;
    const json outputs = got->value("outputs", json::array());
    bool case_ok = true;
    for (const auto& g : outputs) {
      if (auto problem = output_problem(g)) {
        if (first_mismatch) break;
        r.status = Outcome::fail;
        r.summary = "case " + name + ": " + problem->first;
        r.symptom = problem->second;
        return r;
      }
      const auto mismatches = g.value("mismatches", 0ull);
      if (mismatches == 0) continue;
      case_ok = false;
      if (!first_mismatch) first_mismatch = mismatch_in(c, name, *got, g);
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

std::optional<double> LabGrader::output_elements(const std::string& case_name) {
  run_correctness();
  const json* got = find_case(student_run_.result, case_name);
  if (!got || !got->contains("outputs") || !(*got)["outputs"].is_array()) return std::nullopt;
  double elements = 0;
  for (const auto& o : (*got)["outputs"]) elements += o.value("count", 0.0);
  if (elements > 0) return elements;
  return std::nullopt;
}

CheckResult LabGrader::check_api(const Check& c) {
  if (auto why = gpu_unavailable()) return skipped(c, *why);
  run_correctness();
  const json* got = find_case(student_run_.result, c.case_name);
  if (!got || got->value("status", "") == "running")
    return failed(c, student_run_.message.empty() ? "case " + c.case_name + " did not run" : student_run_.message,
                  student_run_.category == "ok" ? "error" : student_run_.category);
  CheckResult r;
  r.kind = name_of(c.kind);
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
      r.status = Outcome::fail;
      r.details.push_back(name + ": not reported by the driver (a course problem)");
    } else if (!it->second->value("ok", false)) {
      r.status = Outcome::fail;
      r.details.push_back(name + ": " + it->second->value("detail", std::string("does not hold")));
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
  if (r.status == Outcome::fail) r.symptom = "api";
  return r;
}

}  // namespace grader
