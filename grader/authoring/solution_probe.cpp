#include "solution_probe.hpp"

#include <algorithm>

#include "text.hpp"
#include "todo_regions.hpp"

namespace grader {
namespace {

// Trimmed, non-blank lines, each followed by '\n', after a leading '\n': a
// block is found only as whole lines, whatever its indentation.
std::string normalise_lines(const std::string& text) {
  std::string out = "\n";
  for (const auto& l : split_lines(text)) {
    const std::string t = trim(l);
    if (!t.empty()) out += t + "\n";
  }
  return out;
}

}  // namespace

SolutionProbe make_solution_probe(const std::string& name, const std::string& skeleton, const std::string& solution) {
  SolutionProbe p;
  p.name = name;
  p.whole = solution;
  for (const auto& h : diff_lines(split_lines(skeleton), split_lines(solution))) {
    std::string block;
    for (const auto& l : h.added) block += l + "\n";
    const std::string n = normalise_lines(block);
    if (n != "\n") p.blocks.push_back(n.substr(1));
  }
  return p;
}

bool contains_solution(const std::string& content, const SolutionProbe& probe) {
  if (!probe.whole.empty() && content.find(probe.whole) != std::string::npos) return true;
  if (probe.blocks.empty()) return false;
  const std::string text = normalise_lines(content);
  return std::all_of(probe.blocks.begin(), probe.blocks.end(),
                     [&](const std::string& b) { return text.find("\n" + b) != std::string::npos; });
}

}  // namespace grader
