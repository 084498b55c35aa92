#include "todo_regions.hpp"

#include <sstream>

namespace grader {
namespace {

bool is_marker(const std::string& line) { return line.find("// TODO(step ") != std::string::npos; }

std::size_t indentation(const std::string& line) {
  const auto first = line.find_first_not_of(" \t");
  return first == std::string::npos ? line.size() : first;
}

bool is_blank(const std::string& line) { return line.find_first_not_of(" \t\r") == std::string::npos; }

}  // namespace

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream ss(text);
  for (std::string l; std::getline(ss, l);) lines.push_back(l);
  return lines;
}

std::vector<Hunk> diff_lines(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  // Longest common subsequence of lines; files are small, so O(n·m) is fine.
  std::vector<std::vector<int>> lcs(a.size() + 1, std::vector<int>(b.size() + 1, 0));
  for (std::size_t i = a.size(); i-- > 0;)
    for (std::size_t j = b.size(); j-- > 0;)
      lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
  std::vector<Hunk> hunks;
  std::size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (i < a.size() && j < b.size() && a[i] == b[j]) {
      ++i, ++j;
      continue;
    }
    Hunk h;
    h.skeleton_line = static_cast<int>(i) + 1;
    while ((i < a.size() || j < b.size()) && !(i < a.size() && j < b.size() && a[i] == b[j])) {
      if (j >= b.size() || (i < a.size() && lcs[i + 1][j] >= lcs[i][j + 1]))
        h.removed.push_back(a[i++]);
      else
        h.added.push_back(b[j++]);
    }
    hunks.push_back(std::move(h));
  }
  return hunks;
}

std::vector<bool> todo_region_lines(const std::vector<std::string>& lines) {
  std::vector<bool> in(lines.size(), false);
  for (std::size_t m = 0; m < lines.size(); ++m) {
    if (!is_marker(lines[m])) continue;
    in[m] = true;
    const std::size_t indent = indentation(lines[m]);
    for (std::size_t k = m + 1; k < lines.size(); ++k) {
      if (is_marker(lines[k]) || is_blank(lines[k]) || indentation(lines[k]) < indent) break;
      in[k] = true;
    }
  }
  return in;
}

std::vector<Hunk> stray_hunks(const std::string& skeleton_text, const std::string& solution_text) {
  const auto a = split_lines(skeleton_text);
  const auto in = todo_region_lines(a);
  const auto covered = [&](int zero_based) {
    return zero_based >= 0 && zero_based < static_cast<int>(a.size()) && in[zero_based];
  };
  std::vector<Hunk> stray;
  for (auto& h : diff_lines(a, split_lines(solution_text))) {
    const int first = h.skeleton_line - 1;
    bool ok = true;
    if (!h.removed.empty()) {
      for (int k = 0; k < static_cast<int>(h.removed.size()); ++k) ok = ok && covered(first + k);
    } else {
      // A pure insertion must touch a region: right after one of its lines, or right before.
      ok = covered(first - 1) || covered(first);
    }
    if (!ok) stray.push_back(std::move(h));
  }
  return stray;
}

}  // namespace grader
