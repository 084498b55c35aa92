// How a submission's code is fenced in when it runs. Shared by the referee
// (which starts the submission's program) and the grader (which starts nvcc
// on a submission, and the submission's program under ncu or
// compute-sanitizer). Host-only.
//
//   none     its own session, no inherited descriptors, a clean environment;
//            when the grader runs as root, the program runs as nobody
//   rlimits  the same, plus CPU-time, file-size and process-count limits
//   bwrap    the same limits inside a bubblewrap sandbox: a user, pid, network
//            and IPC namespace of its own, / read-only, /tmp private, and the
//            course, home folders and every folder in `hide` replaced by empty ones
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace memlabs {

enum class IsolationMode { none, rlimits, bwrap };
inline constexpr IsolationMode kEveryIsolationMode[] = {IsolationMode::none, IsolationMode::rlimits,
                                                        IsolationMode::bwrap};
// Its name on a command line, in GRADER_ISOLATE and in a batch's files: "bwrap".
const char* name_of(IsolationMode mode);
std::optional<IsolationMode> isolation_mode_named(const std::string& name);

struct Isolation {
  IsolationMode mode = IsolationMode::none;
  std::string bwrap;                                    // the bwrap program (bwrap mode)
  std::vector<std::string> hide;                        // folders made empty inside the sandbox
  double cpu_seconds = 0;                               // RLIMIT_CPU when > 0
  std::uint64_t file_bytes = std::uint64_t(256) << 20;  // RLIMIT_FSIZE
  std::uint64_t processes = 0;                          // RLIMIT_NPROC when > 0 (not enforced for root)
  // Outside bwrap: the seal's launcher and its options up to "--" (seal.hpp),
  // put in front of the program, which is then a copy in the seal's own
  // folder. Empty: the program runs as nobody when the referee is root.
  std::vector<std::string> seal;
  bool limited() const { return mode != IsolationMode::none; }
};

// Folders every sandbox hides besides isolation.hide: home folders, temporary
// folders and the usual places for data (where a course or its solutions may live).
std::vector<std::string> default_hidden_folders();

// The bwrap command that runs `program_argv` sandboxed, with `visible` folders
// (the program's own, a build folder) bound read-only and `writable` ones
// read-write after the hidden folders are emptied. The program's working
// folder is the first writable one, else /tmp. Descriptors stay inherited.
// under_tool: the program runs under ncu or compute-sanitizer outside the
// sandbox, which attach to it through the network and IPC namespaces, so
// those two are shared (the course stays hidden, the user and pids its own).
std::vector<std::string> bwrap_command(const Isolation& isolation, const std::vector<std::string>& visible,
                                       const std::vector<std::string>& writable,
                                       const std::vector<std::string>& program_argv, bool under_tool = false);

// This process's environment, as NAME=VALUE entries.
std::vector<std::string> this_process_environment();

// The environment a submission's program gets: PATH, LANG and what CUDA needs to
// find its driver and devices (LD_LIBRARY_PATH, CUDA_*, NVIDIA_*), nothing else.
// Never CUDA_DEVICE_MAX_CONNECTIONS: the program's context gets the driver's
// default queues, whoever runs the grade (hardware_queues.hpp).
std::vector<std::string> submission_environment(const std::vector<std::string>& parent_environment);

// Parses "--isolate MODE", "--hide DIR", "--cpu-seconds S", "--seal-arg A"... (as the grader
// passes them to the referee) from args, removing what it consumed.
Isolation take_isolation_args(std::vector<std::string>& args);
std::vector<std::string> isolation_args(const Isolation& isolation);

}  // namespace memlabs
