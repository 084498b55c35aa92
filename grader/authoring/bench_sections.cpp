// A measurement file's sections, one per lab (bench_sections.hpp).
#include "bench_sections.hpp"

namespace grader {
namespace {

std::string begin_marker(const std::string& lab) { return "<!-- bench:" + lab + " -->"; }
std::string end_marker(const std::string& lab) { return "<!-- /bench:" + lab + " -->"; }

}  // namespace

std::optional<std::string> bench_section(const std::string& file_text, const std::string& lab) {
  const std::string begin = begin_marker(lab) + "\n", end = end_marker(lab);
  const std::size_t b = file_text.find(begin);
  if (b == std::string::npos) return std::nullopt;
  const std::size_t e = file_text.find(end, b + begin.size());
  if (e == std::string::npos) return std::nullopt;
  return file_text.substr(b + begin.size(), e - b - begin.size());
}

std::string with_bench_section(std::string text, const std::string& lab, const std::string& body) {
  const std::string begin = begin_marker(lab), end = end_marker(lab);
  if (text.empty()) text = "# Measurements\n\nWritten by `grader bench LAB --out FILE`; never edited by hand.\n";
  const std::string section = begin + "\n" + body + end + "\n";
  const auto b = text.find(begin), e = text.find(end);
  if (b != std::string::npos && e != std::string::npos && e > b) {
    text.replace(b, e + end.size() - b + (text.compare(e + end.size(), 1, "\n") == 0 ? 1 : 0), section);
  } else {
    text += "\n" + section;
  }
  return text;
}

}  // namespace grader
