// Isolation settings of batch grading. The batch grader starts one `grader
// grade` child per submission with GRADER_ISOLATE set; the child reads these
// settings and passes them on to everything that runs the submission's code:
// nvcc on kernel.cu (builder.cpp), the referee, which starts the submission's
// program (referee_client.cpp, common/host/isolation.hpp), and ncu or
// compute-sanitizer (tool_run.cpp). Student host code never runs with the
// instructor's files, network or process table in reach.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "child_process.hpp"
#include "host/isolation.hpp"

namespace grader {

// Environment variables of isolated mode (set by `grader batch`, read by whatever runs a submission's code).
inline constexpr const char* kIsolateVar = "GRADER_ISOLATE";             // "bwrap" or "rlimits"
inline constexpr const char* kIsolateHideVar = "GRADER_ISOLATE_HIDE";    // ':'-separated folders to hide
inline constexpr const char* kIsolateWritableVar = "GRADER_ISOLATE_RW";  // ':'-separated folders left writable

struct IsolationSettings {
  memlabs::IsolationMode mode = memlabs::IsolationMode::none;  // none: not isolated
  std::vector<std::filesystem::path> hide;                     // tmpfs over each (bwrap only)
  std::vector<std::filesystem::path> writable;                 // read-write besides the call's own folder (bwrap only)
  bool enabled() const { return mode != memlabs::IsolationMode::none; }
};

IsolationSettings isolation_from_environment();
// The "K=V" entries that make a child grader run its runners with these settings.
std::vector<std::string> isolation_environment(const IsolationSettings& s);

struct BwrapStatus {
  bool works = false;
  std::filesystem::path program;  // found on PATH
  std::string reason;             // why it cannot be used (not installed, fails here: ...)
};
// Runs bwrap once with the options isolation uses; containers often forbid the namespaces.
BwrapStatus probe_bwrap();

// The limits of an isolated runner: CPU seconds from the call's timeout, and a
// process cap a little above what the user already runs (RLIMIT_NPROC counts all
// of the user's tasks, CUDA's threads included).
std::uint64_t isolated_cpu_seconds(double timeout_s);
std::uint64_t isolated_process_limit();

// What these settings ask of whatever runs a submission's code
// (common/host/isolation.hpp), with limits for a run of `timeout_s`: bwrap when
// asked and it works here, the limits alone when bwrap has gone missing since
// the batch checked it, mode "none" when not isolated.
memlabs::Isolation submission_isolation(const IsolationSettings& settings, double timeout_s);

}  // namespace grader
