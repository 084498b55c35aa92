// "The solution is the skeleton with the TODO regions filled in, nothing else
// changed." A TODO region starts at a `// TODO(step N): ...` line and runs to
// the first blank line or the end of the enclosing block (a line indented
// less than the marker). Every difference between skeleton and solution must
// fall in a region; anything else is a stray hunk the course lint reports.
#pragma once

#include <string>
#include <vector>

namespace grader {

struct Hunk {
  int skeleton_line = 0;  // 1-based first line in the skeleton (or the line it is inserted before)
  std::vector<std::string> removed, added;
};

std::vector<Hunk> diff_lines(const std::vector<std::string>& skeleton, const std::vector<std::string>& solution);
// Which skeleton lines (0-based) belong to some TODO region.
std::vector<bool> todo_region_lines(const std::vector<std::string>& skeleton);
std::vector<Hunk> stray_hunks(const std::string& skeleton_text, const std::string& solution_text);
std::vector<std::string> split_lines(const std::string& text);

}  // namespace grader
