// What identifies a solution's source in another file, for publishing a class
// copy without it: the lines the solution adds to its skeleton, hunk by hunk
// and whitespace-trimmed, and its whole text.
#pragma once

#include <string>
#include <vector>

namespace grader {

struct SolutionProbe {
  std::string name;  // "solutions/lab07-bank-conflicts/kernel.cu"
  std::string whole;
  std::vector<std::string> blocks;
};

SolutionProbe make_solution_probe(const std::string& name, const std::string& skeleton, const std::string& solution);

// Whether `content` carries the solution: the whole file, or every filled-in
// TODO region of it (a hint quoting one line is not a leak; all of them is).
bool contains_solution(const std::string& content, const SolutionProbe& probe);

}  // namespace grader
