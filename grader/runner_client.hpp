// Runs a built runner as a child process and turns whatever happened (a
// result, a crash, a hang, a CUDA error, garbage) into one outcome with a
// sentence that names the likely cause.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "child_process.hpp"

namespace grader {

struct RunnerOutcome {
  // "ok", or what went wrong: "timeout", "crash", "no_result", "forged_result",
  // "cuda_error", "bad_output", "mismatch", "usage", "error", "no_device".
  std::string category = "ok";
  std::string message;  // one line for the student; empty when ok
  nlohmann::json result;
  std::string stdout_head, stderr_head;  // what the program printed, truncated
  ChildResult child;
  bool ok() const { return category == "ok"; }
};

struct RunnerCall {
  std::filesystem::path runner;
  std::vector<std::string> prefix;  // a tool that runs the runner: ncu or compute-sanitizer and its options
  std::vector<std::string> args;  // mode and options; --result and --nonce are added
  std::filesystem::path work_dir; // private to this call
  double timeout_s = 60;
  std::string who = "your program";  // "your program" or "the reference"
};

RunnerOutcome call_runner(const RunnerCall& call);

// The sentence for a CUDA error the runner reported.
std::string explain_cuda_error(const nlohmann::json& error, const std::string& who);

}  // namespace grader
