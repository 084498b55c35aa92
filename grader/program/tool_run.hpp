// Runs the submission's program on its own under ncu or compute-sanitizer:
// `worker run --case C --seed S` builds and runs the cases in that process
// (no referee; the tool's report is the evidence, not the program's output).
// In isolated mode the tool runs outside the sandbox and only the program
// inside it, so the report file is written where the program cannot reach.
#pragma once

#include <atomic>
#include <filesystem>
#include <string>
#include <vector>

#include "referee_client.hpp"

namespace grader {

struct ToolCall {
  std::vector<std::string> tool;  // the tool and its options, up to the program
  std::filesystem::path worker;   // the submission's program
  std::vector<std::string> cases;
  std::uint64_t seed = 1;
  std::filesystem::path work_dir;  // private to this call
  double timeout_s = 60;
  std::string who = "your program";
  const std::atomic<bool>* cancel = nullptr;  // ChildOptions::cancel: stop it when its result is not needed
  // ncu: outside a sandbox it runs in the machine's profiler turn
  // (ProfilerTurn, gpu_lock.hpp): shared where ncu's own lock file orders the
  // profiles, alone with a TMPDIR of its own where that file is another user's.
  bool profiles = false;
  // More of the program's environment ("NAME=value"): a library to inject
  // (CUDA_INJECTION64_PATH), whose folder the seal then lets the program read.
  std::vector<std::string> env;
};

// category ok when the program ran to its end under the tool; otherwise
// timeout, crash, cuda_error, error, cancelled or process_limit, with a sentence.
RunnerOutcome call_tool(const ToolCall& call);

// Why a tool run says nothing of the program, the grader's own failure: the
// seal could not be had, or compute-sanitizer could not attach. "" otherwise.
// `log` is the tool's report file.
std::string tool_machinery_failure(const RunnerOutcome& outcome, const std::string& log);

}  // namespace grader
