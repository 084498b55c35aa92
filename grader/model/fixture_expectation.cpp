#include "fixture_expectation.hpp"

#include <fstream>
#include <iterator>
#include <regex>

#include "text.hpp"

namespace grader {
namespace {

// Every symptom's name, for an error that names one nothing knows.
std::string symptom_names() {
  std::vector<std::string> all;
  for (Symptom x : kEverySymptom) all.push_back(name_of(x));
  return join(all, ", ");
}

}  // namespace

bool FixtureExpectation::is_static() const {
  return kind == build_fails || (kind == step_fails && traits_of(check).is_static);
}

std::string FixtureExpectation::verdict() const {
  return name_of(check) + (symptom ? std::string(" (") + name_of(*symptom) + ")" : "");
}

FixtureExpectation parse_expectation(const std::string& source, const std::string& source_name) {
  static const std::regex line_re(R"(// expect: ([^\n]*))");
  static const std::regex step_re(R"(step (\d+) fails: ([a-z_]+)(?: \(([a-z_]+)\))?)");
  static const std::regex message_re(R"((?:^|\n)// message: ([^\n]*))");
  std::smatch m;
  if (!std::regex_search(source, m, line_re))
    throw ExpectationError(source_name +
                           " has no \"// expect: \" line (e.g. // expect: step 1 fails: correct (mismatch))");
  FixtureExpectation e;
  e.text = m[1];
  // A trailing space or a CRLF line end is not part of the verdict.
  while (!e.text.empty() && (e.text.back() == ' ' || e.text.back() == '\r' || e.text.back() == '\t')) e.text.pop_back();
  std::smatch s;
  if (e.text == "all pass") {
    e.kind = FixtureExpectation::all_pass;
  } else if (e.text == "build fails") {
    e.kind = FixtureExpectation::build_fails;
  } else if (std::regex_match(e.text, s, step_re)) {
    e.kind = FixtureExpectation::step_fails;
    e.step = std::stoi(s[1]);
    const CheckKindTraits* check = check_kind_traits(s[2]);
    if (!check)
      throw ExpectationError(source_name + ": \"" + e.text + "\" names the check kind " + s[2].str() +
                             ", which no lab has (known: " + join(known_check_kinds(), ", ") + ")");
    e.check = check->kind;
    if (s[3].matched) {
      e.symptom = symptom_named(s[3]);
      if (!e.symptom)
        throw ExpectationError(source_name + ": \"" + e.text + "\" names the symptom " + s[3].str() +
                               ", which no check reports (known: " + symptom_names() + ")");
    }
  } else {
    throw ExpectationError(source_name + ": cannot read the expectation \"" + e.text +
                           "\" (want \"build fails\", \"all pass\" or \"step N fails: KIND[ (SYMPTOM)]\")");
  }
  for (auto it = std::sregex_iterator(source.begin(), source.end(), message_re); it != std::sregex_iterator(); ++it) {
    std::string m = (*it)[1];
    while (!m.empty() && (m.back() == ' ' || m.back() == '\r' || m.back() == '\t')) m.pop_back();
    if (m.empty()) throw ExpectationError(source_name + ": an empty \"// message: \" line (it would match anything)");
    e.messages.push_back(m);
  }
  if (!e.messages.empty() && e.kind == FixtureExpectation::all_pass)
    throw ExpectationError(source_name + ": \"// message: \" lines with \"all pass\": no failure shows them");
  return e;
}

FixtureExpectation read_expectation(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ExpectationError("cannot read " + file.string());
  return parse_expectation(std::string(std::istreambuf_iterator<char>(in), {}), file.string());
}

std::string expectation_problem(const FixtureExpectation& e, const Manifest& manifest) {
  if (e.kind != FixtureExpectation::step_fails) return "";
  const Step* step = manifest.find_step(e.step);
  if (!step) {
    std::string ids;
    for (const auto& st : manifest.steps) ids += (ids.empty() ? "" : ", ") + std::to_string(st.id);
    return "\"" + e.text + "\" names step " + std::to_string(e.step) + ", but the lab's steps are " + ids;
  }
  std::string kinds;
  bool found = false;
  for (const auto& c : step->checks) {
    found = found || c.kind == e.check;
    const std::string& name = name_of(c.kind);
    if (kinds.find(name) == std::string::npos) kinds += (kinds.empty() ? "" : ", ") + name;
  }
  if (!found)
    return "\"" + e.text + "\" names a " + name_of(e.check) + " check, but step " + std::to_string(e.step) +
           " checks only " + kinds;
  return "";
}

}  // namespace grader
