// A cheap look at kernel.cu for what a program that games its grade tends to
// hold: reading /proc or the environment (to tell a profiled run from a timed
// one), processes, threads and streams of its own, CUDA graphs, lines kept in
// L2 across launches, library calls that do the step's work, code run before
// main. None of it decides anything: the grade's checks do. Each is a note in
// the report, for the student and for an instructor reading a batch.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace grader {

struct RedFlag {
  std::size_t line = 0;  // 1-based, in the source as written
  std::string kind;      // "proc", "streams", ...: one of red_flag_kinds()
  std::string what;      // "reads /proc (how it was started, or another process)"
};

// The red flags of `source`, in line order, one per kind and line; comments
// are not read (a comment that names cudaStreamCreate is no red flag). Kinds
// in `taught` are left out: what the lab itself teaches (lab.json's "teaches":
// lab10's pipeline makes streams of its own) is no red flag there.
std::vector<RedFlag> red_flags(const std::string& source, const std::vector<std::string>& taught = {});

// Every kind red_flags can raise, in the order it looks for them.
const std::vector<std::string>& red_flag_kinds();

}  // namespace grader
