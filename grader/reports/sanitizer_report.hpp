// compute-sanitizer: how the grader runs each tool on the student's program
// and what the tool's log says. A report is one finding (a race, an
// out-of-bounds access, a leak, ...); passing needs none. The first report is
// shown with the student's file:line, which the program has because every
// kernel is built with -lineinfo.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "symptom.hpp"

namespace grader {

// memcheck, racecheck, synccheck, initcheck: the order a check runs them in.
const std::vector<std::string>& sanitizer_tools();

// The arguments that go before the program's own, for a run of at most `timeout_s`.
std::vector<std::string> sanitizer_arguments(const std::filesystem::path& sanitizer, const std::string& tool,
                                             const std::filesystem::path& log_file, double timeout_s);

struct SanitizerReport {
  std::string headline;  // one sentence: what, where, in which kernel
  std::string location;  // "kernel.cu:23", or "" when the log names no source line
  std::string kernel;    // "transpose_kernel", or ""
  Symptom symptom =
      Symptom::sanitizer;          // race, out_of_bounds, uninitialized, divergent_barrier, leak, api_error, sanitizer
  std::vector<std::string> lines;  // the tool's own lines for this report, without host backtraces
  bool warning = false;            // racecheck's "Warning:" hazards
};

struct SanitizerLog {
  std::vector<SanitizerReport> reports;  // in the order the tool printed them
  long long errors = 0;                  // from the tool's summary; may exceed reports.size() (print limit)
  bool summary_seen = false;             // false: the program (or the tool) stopped before the end
};

SanitizerLog parse_sanitizer_log(const std::string& tool, const std::string& log);

}  // namespace grader
