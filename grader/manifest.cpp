#include "manifest.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <system_error>

#include "edit_distance.hpp"
#include "ncu_report.hpp"
#include "sanitizer_report.hpp"
#include "text.hpp"

namespace grader {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

}  // namespace

bool is_timed_kind(const std::string& kind) {
  return kind == "speedup" || kind == "fraction_of_peak" || kind == "fraction_of_library";
}

namespace {

const std::vector<std::string> kTopKeys = {"format_version", "id",    "title",   "student_file", "timeout_s",
                                           "link",           "steps", "kernels", "bench_cases",  "symptom_hints"};
const std::vector<std::string> kStepKeys = {"id", "title", "points", "checks", "hints", "symptom_hints"};

std::vector<std::string> keys_of_kind(const std::string& kind) {
  if (kind == "ptx") return {"kind", "kernel", "must_contain", "must_not_contain"};
  if (kind == "ptxas") return {"kind", "kernel", "max_stack_frame", "max_spill_bytes", "max_registers"};
  if (kind == "correct") return {"kind", "cases"};
  if (kind == "speedup") return {"kind", "case", "min", "over"};
  if (kind == "fraction_of_peak") return {"kind", "case", "min"};
  if (kind == "api") return {"kind", "case", "facts"};
  if (kind == "fraction_of_library") return {"kind", "case", "min"};
  if (kind == "ncu") return {"kind", "kernel", "case", "metric", "max", "min", "fallback"};
  if (kind == "sanitizer") return {"kind", "cases", "tools"};
  return {};
}

// Keys a check of any kind may hold: used to suggest a fix when "kind" itself is missing.
std::vector<std::string> all_check_keys() {
  std::set<std::string> all;
  for (const auto& kind : known_check_kinds())
    for (auto& key : keys_of_kind(kind)) all.insert(std::move(key));
  return {all.begin(), all.end()};
}

// Empty when nothing is close enough for the suggestion to help rather than confuse.
std::string closest(const std::string& word, const std::vector<std::string>& candidates) {
  std::size_t limit = std::max<std::size_t>(1, word.size() / 3);
  std::string best;
  std::size_t best_d = limit + 1;
  for (const auto& c : candidates) {
    std::size_t d = edit_distance(word, c);
    if (d < best_d) best_d = d, best = c;
  }
  return best;
}

std::string quote(const std::string& s) { return json(s).dump(); }

// How a wrong value reads in a message: short, and in the author's own JSON terms.
std::string describe(const json& v) {
  if (v.is_object()) return "an object";
  if (v.is_array()) return "an array";
  std::string s = v.dump();
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

bool is_comment_key(const std::string& key) { return !key.empty() && (key[0] == '_' || key[0] == '$'); }

std::string at(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }
std::string at(const std::string& path, std::size_t index) { return path + "[" + std::to_string(index) + "]"; }

class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& path, const std::string& msg) const {
    throw ManifestError(source_ + ": " + (path.empty() ? "" : path + ": ") + msg);
  }

  void expect(bool ok, const std::string& path, const std::string& expected, const json& got) const {
    if (!ok) fail(path, "expected " + expected + ", got " + describe(got));
  }

  void reject_unknown_keys(const json& obj, const std::string& path, const std::vector<std::string>& known,
                           const std::string& what) const {
    for (const auto& item : obj.items()) {
      const std::string& key = item.key();
      if (is_comment_key(key) || std::count(known.begin(), known.end(), key)) continue;
      std::string msg = "unknown key " + quote(key) + " in " + what;
      std::string guess = closest(key, known);
      if (!guess.empty())
        msg += " (did you mean " + quote(guess) + "?)";
      else
        msg += "; known keys: " + join(known, ", ") + " (keys starting with _ or $ are comments)";
      fail(path, msg);
    }
  }

  const json& required(const json& obj, const std::string& path, const std::string& key,
                       const std::string& expected) const {
    auto it = obj.find(key);
    if (it == obj.end()) fail(at(path, key), "required key is missing (expected " + expected + ")");
    return *it;
  }

  static const json* optional(const json& obj, const std::string& key) {
    auto it = obj.find(key);
    return it == obj.end() ? nullptr : &*it;
  }

  int integer(const json& v, const std::string& path, std::int64_t lo, std::int64_t hi,
              const std::string& expected) const {
    // Non-negative JSON integers arrive unsigned and may exceed int64_t.
    bool ok = false;
    if (v.is_number_unsigned()) {
      auto u = v.get<std::uint64_t>();
      ok = u <= static_cast<std::uint64_t>(hi) && static_cast<std::int64_t>(u) >= lo;
    } else if (v.is_number_integer()) {
      auto s = v.get<std::int64_t>();
      ok = s >= lo && s <= hi;
    }
    expect(ok, path, expected, v);
    return static_cast<int>(v.get<std::int64_t>());
  }

  // Values in (lo, hi]: every numeric threshold in format 1 has that shape.
  double number(const json& v, const std::string& path, double lo, double hi, const std::string& expected) const {
    bool ok = v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() > lo && v.get<double>() <= hi;
    expect(ok, path, expected, v);
    return v.get<double>();
  }

  std::string text(const json& v, const std::string& path) const {
    expect(v.is_string() && !v.get<std::string>().empty(), path, "a non-empty string", v);
    return v.get<std::string>();
  }

  std::vector<std::string> text_list(const json& v, const std::string& path) const {
    expect(v.is_array(), path, "an array of strings", v);
    std::vector<std::string> out;
    for (std::size_t i = 0; i < v.size(); ++i) out.push_back(text(v[i], at(path, i)));
    return out;
  }

  std::map<std::string, std::string> text_map(const json& v, const std::string& path) const {
    expect(v.is_object(), path, "an object of strings", v);
    std::map<std::string, std::string> out;
    for (const auto& item : v.items())
      if (!is_comment_key(item.key())) out[item.key()] = text(item.value(), at(path, item.key()));
    return out;
  }

 private:
  std::string source_;
};

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
  if (c.kind == "speedup") {
    const std::string expected = "a number > 0";
    c.min = r.number(r.required(v, path, "min", expected), at(path, "min"), 0, inf, expected);
    if (auto* o = Reader::optional(v, "over")) {
      r.expect(o->is_string() && *o == "baseline", at(path, "over"),
               "\"baseline\" (the only reference format " + std::to_string(kManifestFormatVersion) + " knows)", *o);
    }
  } else if (c.kind == "fraction_of_library") {
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

Check read_check(const Reader& r, const json& v, const std::string& path);

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
    if (fb.kind == "ncu")
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

Check read_check(const Reader& r, const json& v, const std::string& path) {
  const std::string kinds = join(known_check_kinds(), ", ");
  r.expect(v.is_object(), path, "a check object", v);
  if (!v.contains("kind")) r.reject_unknown_keys(v, path, all_check_keys(), "a check");
  const json& kind = r.required(v, path, "kind", "one of " + kinds);
  r.expect(kind.is_string(), at(path, "kind"), "a string, one of " + kinds, kind);

  Check c;
  c.kind = kind.get<std::string>();
  const auto& known = known_check_kinds();
  if (std::find(known.begin(), known.end(), c.kind) == known.end()) {
    std::string guess = closest(c.kind, known);
    r.fail(at(path, "kind"), "unknown check kind " + quote(c.kind) +
                                 (guess.empty() ? "" : " (did you mean " + quote(guess) + "?)") +
                                 "; known kinds: " + kinds);
  }
  r.reject_unknown_keys(v, path, keys_of_kind(c.kind), "a " + quote(c.kind) + " check");

  if (c.kind == "ptx")
    read_ptx(r, v, path, c);
  else if (c.kind == "ptxas")
    read_ptxas(r, v, path, c);
  else if (c.kind == "correct")
    read_correct(r, v, path, c);
  else if (c.kind == "api")
    read_api(r, v, path, c);
  else if (c.kind == "ncu")
    read_ncu(r, v, path, c);
  else if (c.kind == "sanitizer")
    read_sanitizer(r, v, path, c);
  else
    read_timed(r, v, path, c);
  return c;
}

Step read_step(const Reader& r, const json& v, const std::string& path) {
  r.expect(v.is_object(), path, "a step object", v);
  r.reject_unknown_keys(v, path, kStepKeys, "a step");
  Step s;
  const std::string id_expected = "an integer >= 1";
  s.id = r.integer(r.required(v, path, "id", id_expected), at(path, "id"), 1, std::numeric_limits<int>::max(),
                   id_expected);
  s.title = r.text(r.required(v, path, "title", "a non-empty string"), at(path, "title"));
  if (auto* p = Reader::optional(v, "points"))
    s.points = r.integer(*p, at(path, "points"), 0, std::numeric_limits<int>::max(), "an integer >= 0");

  const std::string checks_path = at(path, "checks");
  const json& checks = r.required(v, path, "checks", "a non-empty array of checks");
  r.expect(checks.is_array(), checks_path, "a non-empty array of checks", checks);
  if (checks.empty()) r.fail(checks_path, "expected at least one check, got [] (a step with no checks always passes)");
  for (std::size_t i = 0; i < checks.size(); ++i) s.checks.push_back(read_check(r, checks[i], at(checks_path, i)));

  if (auto* h = Reader::optional(v, "hints")) s.hints = r.text_list(*h, at(path, "hints"));
  if (auto* h = Reader::optional(v, "symptom_hints")) s.symptom_hints = r.text_map(*h, at(path, "symptom_hints"));
  return s;
}

void read_steps(const Reader& r, const json& steps, Manifest& m) {
  r.expect(steps.is_array(), "steps", "a non-empty array of steps", steps);
  if (steps.empty()) r.fail("steps", "expected at least one step, got []");
  std::map<int, std::size_t> seen;  // step id -> index of the step that uses it
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const std::string path = at("steps", i);
    Step s = read_step(r, steps[i], path);
    auto prev = seen.find(s.id);
    if (prev != seen.end())
      r.fail(at(path, "id"),
             "duplicate step id " + std::to_string(s.id) + " (" + at("steps", prev->second) + " already uses it)");
    // The grader reports "step N" and students run steps in order, so ids
    // double as positions.
    if (s.id != static_cast<int>(i) + 1)
      r.fail(at(path, "id"), "expected " + std::to_string(i + 1) + " (step ids run 1, 2, 3, ... in file order), got " +
                                 std::to_string(s.id));
    seen[s.id] = i;
    m.steps.push_back(std::move(s));
  }
}

}  // namespace

const std::vector<std::string>& known_check_kinds() {
  static const std::vector<std::string> kinds = {
      "correct", "speedup", "fraction_of_peak", "ptxas", "ptx", "api", "fraction_of_library", "ncu", "sanitizer"};
  return kinds;
}

bool Check::is_static() const { return kind == "ptx" || kind == "ptxas"; }

const Step* Manifest::find_step(int step_id) const {
  for (const auto& s : steps)
    if (s.id == step_id) return &s;
  return nullptr;
}

std::vector<std::string> Manifest::all_cases() const {
  std::vector<std::string> out;
  auto add = [&](const std::string& name) {
    if (!name.empty() && std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  };
  for (const auto& s : steps)
    for (const auto& c : s.checks) {
      for (const auto& name : c.cases) add(name);
      add(c.case_name);
      for (const auto& f : c.fallback) add(f.case_name);
    }
  return out;
}

Manifest parse_manifest(const json& j, const std::string& source_name) {
  const Reader r(source_name);
  r.expect(j.is_object(), "", "a JSON object at the top level", j);

  // The version decides what every other key means, so it is read first.
  const std::string version_expected =
      "an integer; this grader reads format_version " + std::to_string(kManifestFormatVersion);
  if (!j.contains("format_version")) r.reject_unknown_keys(j, "", kTopKeys, "the manifest");
  const json& version = r.required(j, "", "format_version", version_expected);
  r.expect(version.is_number_integer(), "format_version", version_expected, version);
  if (version != kManifestFormatVersion)
    r.fail("format_version", "unsupported format_version " + version.dump() + "; this grader reads format_version " +
                                 std::to_string(kManifestFormatVersion));
  r.reject_unknown_keys(j, "", kTopKeys, "the manifest");

  Manifest m;
  m.format_version = kManifestFormatVersion;
  m.id = r.text(r.required(j, "", "id", "a non-empty string such as \"lab07\""), "id");
  m.title = r.text(r.required(j, "", "title", "a non-empty string"), "title");
  if (auto* f = Reader::optional(j, "student_file")) {
    m.student_file = r.text(*f, "student_file");
    // The student edits one file inside the lab folder; a path could point anywhere.
    if (m.student_file.find_first_of("/\\") != std::string::npos || m.student_file == "." || m.student_file == "..")
      r.fail("student_file",
             "expected a file name inside the lab folder such as \"kernel.cu\", got " + quote(m.student_file));
  }
  if (auto* t = Reader::optional(j, "timeout_s"))
    m.timeout_s = r.number(*t, "timeout_s", 0, 3600, "a number of seconds in (0, 3600]");
  if (auto* l = Reader::optional(j, "link")) {
    m.link = r.text_list(*l, "link");
    for (std::size_t i = 0; i < m.link.size(); ++i)
      if (m.link[i][0] == '-' || m.link[i].find_first_of(" \t\n") != std::string::npos)
        r.fail(at("link", i), "expected a library name such as \"cublas\" (without -l), got " + quote(m.link[i]));
  }
  if (auto* k = Reader::optional(j, "kernels")) r.text_map(*k, "kernels");
  // Cases `grader bench` times besides those a speed check names: a lesson may
  // quote an effect that is too small to grade.
  if (auto* b = Reader::optional(j, "bench_cases")) m.bench_cases = r.text_list(*b, "bench_cases");
  if (auto* h = Reader::optional(j, "symptom_hints")) m.symptom_hints = r.text_map(*h, "symptom_hints");
  read_steps(r, r.required(j, "", "steps", "a non-empty array of steps"), m);
  // A per-element measure divides by the case's output size as the referee
  // counted it in the correctness run, so the case must be one that run has.
  for (std::size_t s = 0; s < m.steps.size(); ++s)
    for (std::size_t k = 0; k < m.steps[s].checks.size(); ++k) {
      const Check& c = m.steps[s].checks[k];
      const NcuMeasure* measure = c.kind == "ncu" ? find_ncu_measure(c.metric) : nullptr;
      if (!measure || !measure->per_element) continue;
      const bool checked = std::any_of(m.steps.begin(), m.steps.end(), [&](const Step& st) {
        return std::any_of(st.checks.begin(), st.checks.end(), [&](const Check& o) {
          return o.kind == "correct" && std::find(o.cases.begin(), o.cases.end(), c.case_name) != o.cases.end();
        });
      });
      if (!checked)
        r.fail(at(at(at("steps", s), "checks"), k) + ".case",
               "measure " + quote(c.metric) + " counts per output element of " + quote(c.case_name) +
                   ", which must be a case of a \"correct\" check (the referee counts its outputs there)");
    }
  return m;
}

namespace {

// labs/symptom_hints.json: the hints every lab shares, one copy for the course.
std::map<std::string, std::string> course_symptom_hints(const fs::path& file) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) return {};
  const std::string name = file.string();
  const Reader r(name);
  json j;
  try {
    j = json::parse(read_file(file).value_or(""));
  } catch (const json::parse_error& e) {
    throw ManifestError(name + ": invalid JSON: " + e.what());
  }
  r.expect(j.is_object(), "", "a JSON object at the top level", j);
  r.reject_unknown_keys(j, "", {"format_version", "symptom_hints"}, "the course's symptom hints");
  const json& version = r.required(j, "", "format_version", "1");
  r.expect(version == kManifestFormatVersion, "format_version", "1", version);
  return r.text_map(r.required(j, "", "symptom_hints", "an object of symptom -> hint"), "symptom_hints");
}

}  // namespace

Manifest load_manifest(const fs::path& file) {
  Manifest m = load_lab_manifest(file);
  // A lab's own hint for a symptom wins over the course's.
  for (const auto& [symptom, hint] : course_symptom_hints(file.parent_path().parent_path() / kCourseSymptomHints))
    m.symptom_hints.emplace(symptom, hint);
  return m;
}

Manifest load_lab_manifest(const fs::path& file) {
  const std::string name = file.string();
  std::error_code ec;
  if (!fs::exists(file, ec)) throw ManifestError(name + ": cannot read the manifest: no such file");
  if (fs::is_directory(file, ec)) throw ManifestError(name + ": is a folder; expected the lab's lab.json file");
  std::ifstream in(file, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) throw ManifestError(name + ": cannot read the manifest");

  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    // nlohmann's message starts with its own error id and position; keep only the reason.
    std::string reason = e.what();
    auto pos = reason.find("parse error");
    if (pos != std::string::npos && (pos = reason.find(": ", pos)) != std::string::npos)
      reason = reason.substr(pos + 2);
    std::size_t byte = std::min<std::size_t>(e.byte, text.size());
    std::size_t line = 1, column = 1;
    for (std::size_t i = 0; i + 1 < byte; ++i) {
      if (text[i] == '\n')
        ++line, column = 1;
      else
        ++column;
    }
    throw ManifestError(name + ": invalid JSON at byte " + std::to_string(e.byte) + " (line " + std::to_string(line) +
                        ", column " + std::to_string(column) + "): " + reason);
  }
  return parse_manifest(j, name);
}

}  // namespace grader
