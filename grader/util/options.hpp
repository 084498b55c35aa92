// What every part of the grader may know of the command line: the exit codes
// and the global options. The command-line parser itself (CLI11) stays in
// cli/: app.hpp.
#pragma once

#include <filesystem>
#include <string>

namespace grader {

// Exit codes (docs/architecture.md): scripts and the batch grader depend on them.
enum ExitCode : int {
  kExitPass = 0,         // every step passed (or the command succeeded)
  kExitStepFailed = 1,   // a step failed: the student has work to do
  kExitUsage = 2,        // bad command line, unknown lab, malformed manifest
  kExitBuildFailed = 3,  // the student's code did not compile or link
  kExitEnvironment = 4,  // no CUDA toolkit, or a GPU step with no GPU
};

struct GlobalOptions {
  bool json = false;
  bool no_color = false;
  bool verbose = false;
  std::string arch;            // --arch sm_XX; empty = the GPU's, else sm_90
  std::filesystem::path root;  // --root; empty = discover
};

}  // namespace grader
