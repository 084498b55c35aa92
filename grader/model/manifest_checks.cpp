// The checks a manifest's steps hold: which kinds format 1 knows, the keys
// each kind takes, and the reading of each kind with its own rules (a ptx
// check must test something, a sanitizer's tools are known ones, an ncu
// measure takes its bound on the right side). The file and its steps are
// read in manifest.cpp.
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "manifest_reader.hpp"
#include "ncu_report.hpp"
#include "sanitizer_report.hpp"
#include "text.hpp"

namespace grader {

const CheckKindTraits* check_kind_traits(const std::string& name) {
  for (const auto& t : check_kinds())
    if (t.name == name) return &t;
  return nullptr;
}

const CheckKindTraits& traits_of(CheckKind kind) {
  for (const auto& t : check_kinds())
    if (t.kind == kind) return t;
  throw std::logic_error("check kind " + std::to_string(static_cast<int>(kind)) + " has no row in check_kinds()");
}

const std::string& name_of(CheckKind kind) { return traits_of(kind).name; }

void to_json(nlohmann::json& j, CheckKind kind) { j = name_of(kind); }

bool is_timed_kind(CheckKind kind) { return traits_of(kind).ratio.has_value(); }

memlabs::TimedRatio timed_ratio(CheckKind kind) {
  const auto& ratio = traits_of(kind).ratio;
  if (!ratio) throw std::logic_error("a " + name_of(kind) + " check is not timed");
  return *ratio;
}

const std::vector<std::string>& known_check_kinds() {
  static const std::vector<std::string> kinds = [] {
    std::vector<std::string> out;
    for (const auto& t : check_kinds()) out.push_back(t.name);
    return out;
  }();
  return kinds;
}

bool Check::is_static() const { return traits_of(kind).is_static; }

std::string check_in_words(const Check& c) { return traits_of(c.kind).in_words(c); }

namespace manifest_detail {
namespace {

// Keys a check of any kind may hold: used to suggest a fix when "kind" itself is missing.
std::vector<std::string> all_check_keys() {
  std::set<std::string> all;
  for (const auto& t : check_kinds()) all.insert(t.keys.begin(), t.keys.end());
  return {all.begin(), all.end()};
}

void read_ptx(const Reader& r, const json& v, const std::string& path, Check& c) {
  c.kernel = r.text(r.required(v, path, "kernel", "the name of a kernel"), at(path, "kernel"));
  if (auto* m = Reader::optional(v, "must_contain")) c.must_contain = r.text_list(*m, at(path, "must_contain"));
  if (auto* m = Reader::optional(v, "must_not_contain"))
    c.must_not_contain = r.text_list(*m, at(path, "must_not_contain"));
  if (c.must_contain.empty() && c.must_not_contain.empty())
    r.fail(path,
           "a \"ptx\" check needs a non-empty \"must_contain\" or \"must_not_contain\" "
           "list of PTX text, or it checks nothing");
}

void read_ptxas(const Reader& r, const json& v, const std::string& path, Check& c) {
  c.kernel = r.text(r.required(v, path, "kernel", "the name of a kernel"), at(path, "kernel"));
  const std::string expected = "an integer >= 0";
  auto limit = [&](const char* key, std::optional<int>& out) {
    if (auto* m = Reader::optional(v, key))
      out = r.integer(*m, at(path, key), 0, std::numeric_limits<int>::max(), expected);
  };
  limit("max_stack_frame", c.max_stack_frame);
  limit("max_spill_bytes", c.max_spill_bytes);
  limit("max_registers", c.max_registers);
  if (!c.max_stack_frame && !c.max_spill_bytes && !c.max_registers)
    r.fail(path,
           "a \"ptxas\" check needs at least one of \"max_stack_frame\", "
           "\"max_spill_bytes\", \"max_registers\", or it checks nothing");
}

void read_correct(const Reader& r, const json& v, const std::string& path, Check& c) {
  const std::string cases_path = at(path, "cases");
  const json& cases = r.required(v, path, "cases", "a non-empty array of case names");
  c.cases = r.text_list(cases, cases_path);
  if (c.cases.empty()) r.fail(cases_path, "expected a non-empty array of case names, got []");
  for (std::size_t i = 0; i < c.cases.size(); ++i)
    if (std::find(c.cases.begin(), c.cases.begin() + i, c.cases[i]) != c.cases.begin() + i)
      r.fail(at(cases_path, i), "case " + quote(c.cases[i]) + " is listed twice");
}

void read_timed(const Reader& r, const json& v, const std::string& path, Check& c) {
  c.case_name = r.text(r.required(v, path, "case", "the name of a case"), at(path, "case"));
  const double inf = std::numeric_limits<double>::infinity();
  if (c.kind == CheckKind::speedup) {
    const std::string expected = "a number > 0";
    c.min = r.number(r.required(v, path, "min", expected), at(path, "min"), 0, inf, expected);
    if (auto* o = Reader::optional(v, "over")) {
      r.expect(o->is_string() && *o == "baseline", at(path, "over"),
               "\"baseline\" (the only reference format " + std::to_string(kManifestFormatVersion) + " knows)", *o);
    }
  } else if (c.kind == CheckKind::fraction_of_library) {
    // The library's time over the candidate's: 0.8 means "within 1.25x of the library".
    const std::string expected = "a number > 0 (the library's time over yours: 0.8 = within 1.25x)";
    c.min = r.number(r.required(v, path, "min", expected), at(path, "min"), 0, inf, expected);
  } else {
    const std::string expected = "a number in (0, 1] (a fraction, not a percentage)";
    c.min = r.number(r.required(v, path, "min", expected), at(path, "min"), 0, 1, expected);
  }
}

// Facts the driver reports about the student's run (a pointer is managed, no
// memory leaked, a device property matches the runtime's): every named fact
// must hold, or every reported one when "facts" is absent.
void read_api(const Reader& r, const json& v, const std::string& path, Check& c) {
  c.case_name = r.text(r.required(v, path, "case", "the name of a case"), at(path, "case"));
  if (auto* f = Reader::optional(v, "facts")) {
    c.facts = r.text_list(*f, at(path, "facts"));
    if (c.facts.empty())
      r.fail(at(path, "facts"), "expected a non-empty array of fact names (or leave it out: every fact)");
  }
}

// A traced run of `case` (grader/probe/trace_injection.cpp): at least `min` of
// the span of the program's copies and kernels must have two kinds of work at once.
void read_overlap(const Reader& r, const json& v, const std::string& path, Check& c) {
  c.case_name = r.text(r.required(v, path, "case", "the name of a case"), at(path, "case"));
  const std::string expected = "a number in (0, 1] (a fraction of the span, not a percentage)";
  c.min = r.number(r.required(v, path, "min", expected), at(path, "min"), 0, 1, expected);
}

// A hardware-counter check: one launch of `kernel` in `case`, profiled by ncu;
// the measure must not exceed `max`. Where ncu cannot run, `fallback` (a
// check of another kind) grades the step instead.
void read_ncu(const Reader& r, const json& v, const std::string& path, Check& c) {
  c.kernel = r.text(r.required(v, path, "kernel", "the name of a kernel"), at(path, "kernel"));
  c.case_name = r.text(r.required(v, path, "case", "the name of a (small) case"), at(path, "case"));
  std::vector<std::string> names;
  for (const auto& m : ncu_measures()) names.push_back(m.name);
  c.metric = r.text(r.required(v, path, "metric", "one of " + join(names, ", ")), at(path, "metric"));
  if (!find_ncu_measure(c.metric)) {
    const std::string guess = closest(c.metric, names);
    r.fail(at(path, "metric"), "unknown measure " + quote(c.metric) +
                                   (guess.empty() ? "" : " (did you mean " + quote(guess) + "?)") +
                                   "; known: " + join(names, ", "));
  }
  const NcuMeasure* measure = find_ncu_measure(c.metric);
  // A cost has a ceiling ("max"); evidence that something ran has a floor ("min").
  const char* bound = measure && measure->rule == NcuMeasure::at_least ? "min" : "max";
  const json& limit = r.required(v, path, bound, "a number >= 0");
  r.expect(limit.is_number() && std::isfinite(limit.get<double>()) && limit.get<double>() >= 0, at(path, bound),
           "a number >= 0", limit);
  (std::string(bound) == "min" ? c.ncu_min : c.max) = limit.is_number() ? limit.get<double>() : 0;
  const char* other = std::string(bound) == "min" ? "max" : "min";
  if (Reader::optional(v, other))
    r.fail(at(path, other), "measure " + quote(c.metric) + " takes \"" + bound + "\", not \"" + other + "\"");
  if (auto* f = Reader::optional(v, "fallback")) {
    Check fb = read_check(r, *f, at(path, "fallback"));
    if (fb.kind == CheckKind::ncu)
      r.fail(at(path, "fallback.kind"), "a fallback stands in for ncu, so it cannot be an ncu check");
    c.fallback.push_back(std::move(fb));
  }
}

// compute-sanitizer on the student's program for `cases`: every tool must report nothing.
void read_sanitizer(const Reader& r, const json& v, const std::string& path, Check& c) {
  read_correct(r, v, path, c);
  const auto& all = sanitizer_tools();
  if (auto* t = Reader::optional(v, "tools")) {
    c.tools = r.text_list(*t, at(path, "tools"));
    if (c.tools.empty())
      r.fail(at(path, "tools"), "expected a non-empty array of tools (or leave it out: all of them)");
    for (std::size_t i = 0; i < c.tools.size(); ++i) {
      if (std::find(all.begin(), all.end(), c.tools[i]) == all.end())
        r.fail(at(at(path, "tools"), i), "unknown tool " + quote(c.tools[i]) + "; known: " + join(all, ", "));
      if (std::find(c.tools.begin(), c.tools.begin() + i, c.tools[i]) != c.tools.begin() + i)
        r.fail(at(at(path, "tools"), i), "tool " + quote(c.tools[i]) + " is listed twice");
    }
  } else {
    c.tools = all;
  }
}

// How a lesson says each kind (CheckKindTraits::in_words).
std::string cases_phrase(const std::vector<std::string>& cases) {
  return (cases.size() == 1 ? "case " : "cases ") + listed_code(cases);
}
std::string percent(double fraction) { return plain_number(100 * fraction) + " %"; }
std::string at_case(const Check& c) { return " at case `" + c.case_name + "`"; }

std::string correct_in_words(const Check& c) {
  return "`correct`: the output matches the float64 reference on " + cases_phrase(c.cases) +
         ", with fresh random inputs each grade";
}

std::string sanitizer_in_words(const Check& c) {
  const std::vector<std::string>& tools = c.tools.empty() ? sanitizer_tools() : c.tools;
  return "`sanitizer`: compute-sanitizer's " + in_a_sentence(tools) + " report" + (tools.size() == 1 ? "s" : "") +
         " no error on " + cases_phrase(c.cases);
}

std::string speedup_in_words(const Check& c) {
  return "`speedup`: at least " + plain_number(c.min) + "× the " + c.over + "'s speed" + at_case(c);
}

std::string fraction_of_peak_in_words(const Check& c) {
  return "`fraction_of_peak`: at least " + percent(c.min) +
         " of the bandwidth of a device-to-device copy of the same bytes" + at_case(c);
}

std::string fraction_of_library_in_words(const Check& c) {
  return "`fraction_of_library`: at least " + percent(c.min) + " of the library's speed on the same problem" +
         at_case(c);
}

std::string ptx_in_words(const Check& c) {
  std::string s = "`ptx`: the PTX of `" + c.kernel + "`";
  if (!c.must_contain.empty()) s += " contains " + listed_code(c.must_contain);
  if (!c.must_not_contain.empty())
    s += std::string(c.must_contain.empty() ? "" : ", and") + " contains no " + listed_code(c.must_not_contain);
  return s;
}

std::string ptxas_in_words(const Check& c) {
  std::vector<std::string> limits;
  if (c.max_stack_frame)
    limits.push_back(*c.max_stack_frame == 0
                         ? "no stack frame"
                         : "a stack frame of at most " + std::to_string(*c.max_stack_frame) + " bytes");
  if (c.max_spill_bytes)
    limits.push_back(*c.max_spill_bytes == 0 ? "no spills"
                                             : "at most " + std::to_string(*c.max_spill_bytes) + " bytes of spills");
  if (c.max_registers) limits.push_back("at most " + std::to_string(*c.max_registers) + " registers per thread");
  return "`ptxas`: for `" + c.kernel + "`, " + join(limits, ", ");
}

std::string api_in_words(const Check& c) {
  return "`api`: " +
         (c.facts.empty() ? std::string("every fact the program reports holds")
                          : (c.facts.size() == 1 ? "the fact " : "the facts ") + listed_code(c.facts) +
                                (c.facts.size() == 1 ? " holds" : " hold")) +
         at_case(c);
}

std::string overlap_in_words(const Check& c) {
  return "`overlap`: in a traced run" + at_case(c) +
         ", copies to the GPU, copies back and kernels run side by side for at least " + percent(c.min) +
         " of the time from the first copy to the last";
}

std::string ncu_in_words(const Check& c) {
  const NcuMeasure* m = find_ncu_measure(c.metric);
  const std::string unit = m ? m->unit : c.metric;
  const bool at_least = m && m->rule == NcuMeasure::at_least;
  // "at most 0 bank conflicts" reads as "no bank conflicts".
  const std::string bound = at_least     ? "at least " + plain_number(c.ncu_min)
                            : c.max == 0 ? std::string("no")
                                         : "at most " + plain_number(c.max);
  std::string s = "`ncu`: every launch of `" + c.kernel + "`" + at_case(c) + " has " + bound + " " + unit;
  for (const auto& f : c.fallback) s += "; where ncu cannot read the GPU's counters, instead " + check_in_words(f);
  return s;
}

}  // namespace

Check read_check(const Reader& r, const json& v, const std::string& path) {
  const std::string kinds = join(known_check_kinds(), ", ");
  r.expect(v.is_object(), path, "a check object", v);
  if (!v.contains("kind")) r.reject_unknown_keys(v, path, all_check_keys(), "a check");
  const json& kind = r.required(v, path, "kind", "one of " + kinds);
  r.expect(kind.is_string(), at(path, "kind"), "a string, one of " + kinds, kind);

  const std::string name = kind.get<std::string>();
  const CheckKindTraits* t = check_kind_traits(name);
  if (!t) {
    std::string guess = closest(name, known_check_kinds());
    r.fail(at(path, "kind"), "unknown check kind " + quote(name) +
                                 (guess.empty() ? "" : " (did you mean " + quote(guess) + "?)") +
                                 "; known kinds: " + kinds);
  }
  Check c;
  c.kind = t->kind;
  r.reject_unknown_keys(v, path, t->keys, "a " + quote(name) + " check");
  t->read(r, v, path, c);
  return c;
}

}  // namespace manifest_detail
// The one table of check kinds: every fact about a kind is read from here.
// Long (a row per kind) on purpose: adding a kind is adding its row.
const std::vector<CheckKindTraits>& check_kinds() {
  using namespace manifest_detail;
  static const std::vector<CheckKindTraits> kinds = {
      {CheckKind::correct, "correct", {"kind", "cases"}, read_correct, false, std::nullopt, 1, correct_in_words},
      {CheckKind::speedup,
       "speedup",
       {"kind", "case", "min", "over"},
       read_timed,
       false,
       memlabs::TimedRatio::speedup,
       4,
       speedup_in_words},
      {CheckKind::fraction_of_peak,
       "fraction_of_peak",
       {"kind", "case", "min"},
       read_timed,
       false,
       memlabs::TimedRatio::fraction_of_peak,
       4,
       fraction_of_peak_in_words},
      {CheckKind::ptxas,
       "ptxas",
       {"kind", "kernel", "max_stack_frame", "max_spill_bytes", "max_registers"},
       read_ptxas,
       true,
       std::nullopt,
       0,
       ptxas_in_words},
      {CheckKind::ptx,
       "ptx",
       {"kind", "kernel", "must_contain", "must_not_contain"},
       read_ptx,
       true,
       std::nullopt,
       0,
       ptx_in_words},
      {CheckKind::api, "api", {"kind", "case", "facts"}, read_api, false, std::nullopt, 1, api_in_words},
      {CheckKind::fraction_of_library,
       "fraction_of_library",
       {"kind", "case", "min"},
       read_timed,
       false,
       memlabs::TimedRatio::fraction_of_library,
       4,
       fraction_of_library_in_words},
      {CheckKind::ncu,
       "ncu",
       {"kind", "kernel", "case", "metric", "max", "min", "fallback"},
       read_ncu,
       false,
       std::nullopt,
       3,
       ncu_in_words},
      {CheckKind::sanitizer,
       "sanitizer",
       {"kind", "cases", "tools"},
       read_sanitizer,
       false,
       std::nullopt,
       2,
       sanitizer_in_words},
      // A traced run costs about what a compute-sanitizer run does: the program once, with CUPTI.
      {CheckKind::overlap, "overlap", {"kind", "case", "min"}, read_overlap, false, std::nullopt, 2, overlap_in_words},
  };
  return kinds;
}

}  // namespace grader
