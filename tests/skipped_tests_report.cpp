// The last test of the README's test command: every test the run before it
// skipped, grouped by the reason the test gave. ctest marks a skipped test
// "***Skipped" and keeps its output to itself; the reasons are in the JUnit
// file that run wrote (its <system-out>: a GoogleTest skip prints the reason on
// the line after "<file>:<line>: Skipped").
//
//   skipped_tests_report JUNIT_FILE
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::string unescaped(std::string s) {
  const std::pair<const char*, const char*> entities[] = {
      {"&quot;", "\""}, {"&apos;", "'"}, {"&lt;", "<"}, {"&gt;", ">"}, {"&amp;", "&"}};
  for (const auto& [from, to] : entities)
    for (std::size_t at = 0; (at = s.find(from, at)) != std::string::npos; at += std::string(to).size())
      s.replace(at, std::string(from).size(), to);
  return s;
}

std::string attribute(const std::string& tag, const std::string& name) {
  const std::size_t at = tag.find(" " + name + "=\"");
  if (at == std::string::npos) return "";
  const std::size_t start = at + name.size() + 3;
  return unescaped(tag.substr(start, tag.find('"', start) - start));
}

// The reason a test's output gives for its skip: GoogleTest's message after
// "...: Skipped", else the output's last line that says something.
std::string reason_in(const std::string& output) {
  std::istringstream in(output);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
    const std::string& l = lines[i];
    if (l.size() > 9 && l.compare(l.size() - 9, 9, ": Skipped") == 0 && lines[i + 1].rfind("[  SKIPPED ]", 0) != 0)
      return lines[i + 1];
  }
  for (auto it = lines.rbegin(); it != lines.rend(); ++it)
    if (it->find_first_not_of(" \t") != std::string::npos) return *it;
  return "(the test gave no reason)";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: skipped_tests_report JUNIT_FILE\n");
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    std::cout << "no test results at " << argv[1] << ": the test step before this one did not write them\n";
    return 0;
  }
  const std::string xml((std::istreambuf_iterator<char>(in)), {});
  std::map<std::string, std::vector<std::string>> by_reason;
  std::size_t tests = 0, skipped = 0;
  for (std::size_t at = 0; (at = xml.find("<testcase ", at)) != std::string::npos;) {
    const std::size_t tag_end = xml.find('>', at);
    const std::size_t end = xml.find("</testcase>", at);
    const std::string tag = xml.substr(at, tag_end - at);
    ++tests;
    if (attribute(tag, "status") == "notrun" && end != std::string::npos) {
      ++skipped;
      const std::string body = xml.substr(tag_end, end - tag_end);
      const std::size_t out = body.find("<system-out>");
      const std::string output =
          out == std::string::npos ? "" : unescaped(body.substr(out + 12, body.find("</system-out>") - out - 12));
      by_reason[reason_in(output)].push_back(attribute(tag, "name"));
    }
    at = end == std::string::npos ? tag_end : end;
  }
  if (skipped == 0) {
    std::cout << "No test was skipped (" << tests << " ran).\n";
    return 0;
  }
  std::cout << skipped << " of " << tests << " tests were skipped, each for the reason it gave:\n";
  for (const auto& [reason, names] : by_reason) {
    std::cout << "\n  " << names.size() << " × " << reason << "\n";
    for (std::size_t i = 0; i < names.size() && i < 3; ++i) std::cout << "      " << names[i] << "\n";
    if (names.size() > 3) std::cout << "      ... and " << names.size() - 3 << " more\n";
  }
  return 0;
}
