// A lab's lab.json as a Manifest: the file read and parsed, its top level
// (format version, student file, link libraries, hints) and its steps in
// order, then the rules that tie checks of different steps together. Each
// check is read in manifest_checks.cpp; the typed reads and their messages
// are manifest_reader.cpp's.
#include "manifest.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>
#include <system_error>

#include "manifest_reader.hpp"
#include "ncu_report.hpp"
#include "text.hpp"

namespace grader {
namespace fs = std::filesystem;

namespace manifest_detail {
namespace {

const std::vector<std::string> kTopKeys = {"format_version", "id",    "title",   "student_file", "timeout_s",
                                           "link",           "steps", "kernels", "bench_cases",  "symptom_hints",
                                           "teaches"};
const std::vector<std::string> kStepKeys = {
    "id", "title", "points", "checks", "hints", "symptom_hints", "min_compute_capability"};

// A compute capability as nvcc's arch names write it, major * 10 + minor: 90
// for 9.0 (sm_90). A major version alone (9), the dotted form (9.0) or an arch
// name ("sm_90") is an error that shows the form meant.
int read_compute_capability(const Reader& r, const json& v, const std::string& path) {
  const std::string expected = "an integer such as 90, major * 10 + minor (compute capability 9.0, sm_90)";
  if (v.is_number_float() && v.get<double>() > 0 && v.get<double>() < 100)
    r.fail(path, "expected " + expected + ", got " + v.dump() + " (write compute capability " + v.dump() + " as " +
                     std::to_string(static_cast<int>(std::lround(v.get<double>() * 10))) + ")");
  if (v.is_number_integer() && v.get<std::int64_t>() >= 1 && v.get<std::int64_t>() <= 9)
    r.fail(path, "expected " + expected + ", got " + v.dump() + " (a major version alone: write compute capability " +
                     v.dump() + ".0 as " + std::to_string(v.get<std::int64_t>() * 10) + ")");
  return r.integer(v, path, 10, 999, expected);
}

// A calibration keeps one threshold per step, timed kind and case (calibration.hpp's timed_check_id):
// two checks of a step that time the same kind at the same case, a fallback's included, must ask the same.
void reject_two_thresholds(const Reader& r, const Step& s, const std::string& checks_path) {
  std::map<std::pair<CheckKind, std::string>, double> asked;
  const auto note = [&](const Check& c) {
    if (!is_timed(c)) return;
    const auto [it, fresh] = asked.emplace(std::make_pair(c.kind, c.case_name), c.min);
    if (!fresh && it->second != c.min)
      r.fail(checks_path, "two " + name_of(c.kind) + " checks at case " + quote(c.case_name) + " ask different " +
                              "thresholds (" + json(it->second).dump() + " and " + json(c.min).dump() +
                              "): a step times one kind at one case once, so give both the same min");
  };
  for (const auto& c : s.checks) {
    note(c);
    for (const auto& f : c.fallback) note(f);
  }
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
  reject_two_thresholds(r, s, checks_path);

  if (auto* h = Reader::optional(v, "hints")) s.hints = r.text_list(*h, at(path, "hints"));
  if (auto* h = Reader::optional(v, "symptom_hints")) s.symptom_hints = r.text_map(*h, at(path, "symptom_hints"));
  if (auto* c = Reader::optional(v, "min_compute_capability"))
    s.min_compute_capability = read_compute_capability(r, *c, at(path, "min_compute_capability"));
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

// The version decides what every other key means, so it is read first.
void read_format_version(const Reader& r, const json& j) {
  const std::string version_expected =
      "an integer; this grader reads format_version " + std::to_string(kManifestFormatVersion);
  if (!j.contains("format_version")) r.reject_unknown_keys(j, "", kTopKeys, "the manifest");
  const json& version = r.required(j, "", "format_version", version_expected);
  r.expect(version.is_number_integer(), "format_version", version_expected, version);
  if (version != kManifestFormatVersion)
    r.fail("format_version", "unsupported format_version " + version.dump() + "; this grader reads format_version " +
                                 std::to_string(kManifestFormatVersion));
}

// Everything of the top level but the steps.
void read_lab_keys(const Reader& r, const json& j, Manifest& m) {
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
  // Red flags the lab's own technique raises (red_flags.hpp): not noted in its grades.
  if (auto* t = Reader::optional(j, "teaches")) m.teaches = r.text_list(*t, "teaches");
}

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
}  // namespace manifest_detail

const Step* Manifest::find_step(int step_id) const {
  for (const auto& s : steps)
    if (s.id == step_id) return &s;
  return nullptr;
}

namespace {

void add_once(std::vector<std::string>& out, const std::string& name) {
  if (!name.empty() && std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
}

}  // namespace

std::string dotted_compute_capability(int cc) { return std::to_string(cc / 10) + "." + std::to_string(cc % 10); }

std::vector<std::string> Step::cases() const {
  std::vector<std::string> out;
  for (const auto& c : checks) {
    for (const auto& name : c.cases) add_once(out, name);
    add_once(out, c.case_name);
    for (const auto& f : c.fallback) {
      for (const auto& name : f.cases) add_once(out, name);
      add_once(out, f.case_name);
    }
  }
  return out;
}

std::vector<std::string> Manifest::all_cases() const {
  std::vector<std::string> out;
  for (const auto& s : steps)
    for (const auto& name : s.cases()) add_once(out, name);
  return out;
}

std::vector<std::string> Manifest::cases_of_steps_naming(const std::string& case_name) const {
  std::vector<std::string> out;
  for (const auto& s : steps) {
    const std::vector<std::string> cases = s.cases();
    if (std::find(cases.begin(), cases.end(), case_name) != cases.end())
      for (const auto& name : cases) add_once(out, name);
  }
  return out;
}

Manifest parse_manifest(const nlohmann::json& j, const std::string& source_name) {
  namespace detail = manifest_detail;
  const detail::Reader r(source_name);
  r.expect(j.is_object(), "", "a JSON object at the top level", j);
  detail::read_format_version(r, j);
  r.reject_unknown_keys(j, "", detail::kTopKeys, "the manifest");

  Manifest m;
  m.format_version = kManifestFormatVersion;
  detail::read_lab_keys(r, j, m);
  detail::read_steps(r, r.required(j, "", "steps", "a non-empty array of steps"), m);
  return m;
}

Manifest load_manifest(const fs::path& file) {
  Manifest m = load_lab_manifest(file);
  // A lab's own hint for a symptom wins over the course's.
  for (const auto& [symptom, hint] :
       manifest_detail::course_symptom_hints(file.parent_path().parent_path() / kCourseSymptomHints))
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

  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
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
