// What every subcommand shares: the global options, the exit codes, and the
// table of subcommands (one file each: cmd_<name>.cpp).
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

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

struct Command {
  const char* name;
  const char* summary;
  // Adds the subcommand's options; returns the function that runs it.
  std::function<std::function<int()>(CLI::App& sub, GlobalOptions& global)> setup;
};

const std::vector<Command>& commands();

// One table of subcommands, defined in each cmd_*.cpp.
Command grade_command();
Command list_command();
Command hint_command();
Command bench_command();
Command doctor_command();
Command check_command();
Command publish_command();
Command verify_command();
Command batch_command();
Command gradescope_command();
Command collect_command();
Command batch_task_command();
Command watch_command();
Command reset_command();

}  // namespace grader
