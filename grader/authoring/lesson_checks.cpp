// The generated "Checked" list of each step of a lesson (lesson_checks.hpp).
#include "lesson_checks.hpp"

#include <cmath>
#include <cstdio>
#include <regex>

#include "ncu_report.hpp"
#include "sanitizer_report.hpp"
#include "text.hpp"

namespace grader {
namespace {

// 2.5 -> "2.5", 50 -> "50", 0.05 -> "0.05": as short as the number allows.
std::string plain_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f", v);
  std::string s = buf;
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

std::string percent(double fraction) { return plain_number(100 * fraction) + " %"; }

std::string code(const std::string& s) { return "`" + s + "`"; }

// "`a`", "`a` and `b`", "`a`, `b` and `c`"
std::string listed(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += i + 1 == items.size() ? " and " : ", ";
    out += code(items[i]);
  }
  return out;
}

std::string cases_phrase(const std::vector<std::string>& cases) {
  return (cases.size() == 1 ? "case " : "cases ") + listed(cases);
}

std::string open_marker(int step) {
  return "<!-- checks:" + std::to_string(step) + ": generated from lab.json by `grader check --write-lessons` -->";
}
std::string close_marker(int step) { return "<!-- /checks:" + std::to_string(step) + " -->"; }

// Where each step's block starts and ends in the lesson (npos when absent).
struct BlockPlace {
  std::size_t begin = std::string::npos, end = std::string::npos;  // end: just past the closing marker's line
  int count = 0;
};

BlockPlace find_block(const std::string& readme, int step) {
  BlockPlace p;
  const std::string open = "<!-- checks:" + std::to_string(step) + ":";
  const std::string close = close_marker(step);
  for (std::size_t at = readme.find(open); at != std::string::npos; at = readme.find(open, at + 1)) {
    if (at != 0 && readme[at - 1] != '\n') continue;
    ++p.count;
    if (p.count > 1) continue;
    const std::size_t c = readme.find(close, at);
    if (c == std::string::npos) continue;
    p.begin = at;
    const std::size_t eol = readme.find('\n', c);
    p.end = eol == std::string::npos ? readme.size() : eol + 1;
  }
  return p;
}

// Just past the line "### Step N..." and the blank line after it.
std::size_t after_step_heading(const std::string& readme, int step) {
  static const std::regex heading(R"((^|\n)### Step (\d+)\b[^\n]*\n)");
  for (auto it = std::sregex_iterator(readme.begin(), readme.end(), heading); it != std::sregex_iterator(); ++it) {
    if (std::stoi((*it)[2]) != step) continue;
    std::size_t at = static_cast<std::size_t>(it->position(0) + it->length(0));
    if (at < readme.size() && readme[at] == '\n') ++at;
    return at;
  }
  return std::string::npos;
}

std::string timed_value(const Check& c, double v) {
  if (c.kind == CheckKind::speedup) return plain_number(std::round(v * 100) / 100) + "×";
  return plain_number(std::round(v * 1000) / 10) + " %";
}

// "  - per GPU, ...: NVIDIA H200 asks 38.3 % (the reference reaches 53.3 %); ...", or "" when no
// calibration has a value made for this lab.json threshold (a stale one is not what a grade applies).
std::string per_gpu_line(int step, const Check& c, const ThresholdsPerGpu& per_gpu, const std::string& lead) {
  if (!is_timed(c)) return "";
  const std::string id = timed_check_id(step, c);
  std::vector<std::string> cards;
  for (const auto& [gpu, checks] : per_gpu) {
    const auto k = checks.find(id);
    if (k == checks.end() || k->second.design_min != c.min) continue;
    std::string card = gpu + " asks " + timed_value(c, k->second.min);
    if (k->second.reference) card += " (the reference reaches " + timed_value(c, *k->second.reference) + ")";
    cards.push_back(card);
  }
  if (cards.empty()) return "";
  return "  - " + lead + "per GPU, as `grader calibrate` measured it there: " + join(cards, "; ") + "\n";
}

}  // namespace

ThresholdsPerGpu thresholds_per_gpu(const std::vector<Calibration>& calibrations, const std::string& lab_folder) {
  ThresholdsPerGpu out;
  for (const auto& c : calibrations)
    if (const auto l = c.labs.find(lab_folder); l != c.labs.end()) out[c.gpu] = l->second;
  return out;
}

// Long (about 60 lines) on purpose: one case per check kind, so that this
// function is the table of how a lesson says each kind.
std::string check_in_words(const Check& c) {
  const std::string at = " at case " + code(c.case_name);
  switch (c.kind) {
    case CheckKind::correct:
      return "`correct`: the output matches the float64 reference on " + cases_phrase(c.cases) +
             ", with fresh random inputs each grade";
    case CheckKind::sanitizer: {
      const std::vector<std::string>& tools = c.tools.empty() ? sanitizer_tools() : c.tools;
      std::string names;
      for (std::size_t i = 0; i < tools.size(); ++i)
        names += (i == 0 ? "" : i + 1 == tools.size() ? " and " : ", ") + tools[i];
      return "`sanitizer`: compute-sanitizer's " + names + " report" + (tools.size() == 1 ? "s" : "") +
             " no error on " + cases_phrase(c.cases);
    }
    case CheckKind::speedup:
      return "`speedup`: at least " + plain_number(c.min) + "× the " + c.over + "'s speed" + at;
    case CheckKind::fraction_of_peak:
      return "`fraction_of_peak`: at least " + percent(c.min) +
             " of the bandwidth of a device-to-device copy of the same bytes" + at;
    case CheckKind::fraction_of_library:
      return "`fraction_of_library`: at least " + percent(c.min) + " of the library's speed on the same problem" + at;
    case CheckKind::ptx: {
      std::string s = "`ptx`: the PTX of " + code(c.kernel);
      if (!c.must_contain.empty()) s += " contains " + listed(c.must_contain);
      if (!c.must_not_contain.empty())
        s += std::string(c.must_contain.empty() ? "" : ", and") + " contains no " + listed(c.must_not_contain);
      return s;
    }
    case CheckKind::ptxas: {
      std::vector<std::string> limits;
      if (c.max_stack_frame)
        limits.push_back(*c.max_stack_frame == 0
                             ? "no stack frame"
                             : "a stack frame of at most " + std::to_string(*c.max_stack_frame) + " bytes");
      if (c.max_spill_bytes)
        limits.push_back(*c.max_spill_bytes == 0
                             ? "no spills"
                             : "at most " + std::to_string(*c.max_spill_bytes) + " bytes of spills");
      if (c.max_registers) limits.push_back("at most " + std::to_string(*c.max_registers) + " registers per thread");
      return "`ptxas`: for " + code(c.kernel) + ", " + join(limits, ", ");
    }
    case CheckKind::api:
      return "`api`: " +
             (c.facts.empty() ? std::string("every fact the program reports holds")
                              : (c.facts.size() == 1 ? "the fact " : "the facts ") + listed(c.facts) +
                                    (c.facts.size() == 1 ? " holds" : " hold")) +
             at;
    case CheckKind::ncu: {
      const NcuMeasure* m = find_ncu_measure(c.metric);
      const std::string unit = m ? m->unit : c.metric;
      const bool at_least = m && m->rule == NcuMeasure::at_least;
      // "at most 0 bank conflicts" reads as "no bank conflicts".
      const std::string bound = at_least     ? "at least " + plain_number(c.ncu_min)
                                : c.max == 0 ? std::string("no")
                                             : "at most " + plain_number(c.max);
      std::string s = "`ncu`: every launch of " + code(c.kernel) + at + " has " + bound + " " + unit;
      for (const auto& f : c.fallback) s += "; where ncu cannot read the GPU's counters, instead " + check_in_words(f);
      return s;
    }
  }
  return code(name_of(c.kind));  // not reached: every kind is said above
}

std::string step_checks_block(const Step& step, const ThresholdsPerGpu& per_gpu) {
  std::string s = open_marker(step.id) + "\n**Checked** (" + std::to_string(step.points) + " point" +
                  (step.points == 1 ? "" : "s") + "):\n\n";
  for (const auto& c : step.checks) {
    s += "- " + check_in_words(c) + "\n";
    s += per_gpu_line(step.id, c, per_gpu, "");
    for (const auto& f : c.fallback) s += per_gpu_line(step.id, f, per_gpu, "without the counters, ");
  }
  return s + close_marker(step.id) + "\n";
}

std::string with_current_checks(const std::string& readme, const Manifest& manifest, const ThresholdsPerGpu& per_gpu) {
  std::string out = readme;
  for (const auto& step : manifest.steps) {
    const std::string block = step_checks_block(step, per_gpu);
    const BlockPlace p = find_block(out, step.id);
    if (p.begin != std::string::npos) {
      out.replace(p.begin, p.end - p.begin, block);
      continue;
    }
    if (p.count > 0) continue;  // an opening marker without its end: the lint says so
    const std::size_t at = after_step_heading(out, step.id);
    if (at != std::string::npos) out.insert(at, block + "\n");
  }
  return out;
}

LintItem lint_lesson_checks(const std::string& readme, const Manifest& manifest, const ThresholdsPerGpu& per_gpu) {
  std::vector<std::string> problems;
  for (const auto& step : manifest.steps) {
    const std::string n = std::to_string(step.id);
    const BlockPlace p = find_block(readme, step.id);
    if (p.count > 1) {
      problems.push_back("step " + n + " has " + std::to_string(p.count) + " lists of checks; it needs one");
    } else if (p.count == 1 && p.begin == std::string::npos) {
      problems.push_back("step " + n + "'s list of checks has no closing " + close_marker(step.id));
    } else if (p.count == 0) {
      problems.push_back("step " + n + " has no list of checks" +
                         (after_step_heading(readme, step.id) == std::string::npos
                              ? " and no \"### Step " + n + "\" heading to put one under"
                              : ""));
    } else if (readme.compare(p.begin, p.end - p.begin, step_checks_block(step, per_gpu)) != 0) {
      problems.push_back("step " + n + "'s list of checks differs from lab.json and the course's calibrations");
    }
  }
  if (problems.empty())
    return make_item("lesson_checks", LintStatus::pass, "README.md lists every step's checks as lab.json states them");
  problems.push_back("`grader check --write-lessons` writes them from lab.json and calibration/*.json");
  return make_item("lesson_checks", LintStatus::fail, "README.md: " + problems.front(), problems);
}

}  // namespace grader
