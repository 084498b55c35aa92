// Runs a student's program as a child process. Whatever the program does
// (crash, hang, fork, print gigabytes, fill the disk) the grader must stay up and
// say what happened, so the child gets its own process group, resource limits,
// a timeout, and files instead of pipes for its output.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace grader {

// Thrown when the grader itself was interrupted (Ctrl-C) while a child ran:
// the child's process group is already gone, and the command stops without
// recording anything.
class Interrupted : public std::runtime_error {
 public:
  Interrupted() : std::runtime_error("interrupted") {}
};

struct ChildOptions {
  std::vector<std::string> argv;  // argv[0] is the program; without a '/' it is looked up in PATH (no shell)
  std::filesystem::path cwd;      // empty = inherit
  std::optional<std::vector<std::string>> env;  // "K=V" list; nullopt = inherit
  double timeout_s = 60;                        // <= 0: none
  // The child's output goes to these files (never a pipe: no deadlock on huge
  // output). Empty = /dev/null; one path for both interleaves them as a terminal would.
  std::filesystem::path stdout_file, stderr_file;
  // Read stdout through a pipe into ChildResult::stdout_text instead (at most
  // this many bytes are kept; 0 = a file as above). For a trusted program whose
  // output must not pass through a file anyone else could write.
  std::size_t capture_stdout_bytes = 0;
  std::uint64_t max_file_bytes = 256ull << 20;  // RLIMIT_FSIZE (0 = none); past it the child gets SIGXFSZ
  std::uint64_t max_cpu_seconds = 0;            // RLIMIT_CPU if > 0
  // RLIMIT_NPROC if > 0. It counts every task of the user (not just the child's),
  // and the kernel does not enforce it for root.
  std::uint64_t max_processes = 0;
  // When this becomes true the child's group is killed and the result says
  // `cancelled`: a run whose answer nobody needs any more. Must outlive the call.
  const std::atomic<bool>* cancel = nullptr;
};

struct ChildResult {
  int pid = 0;  // also the id of the child's process group
  bool started = false;
  std::string start_error;  // e.g. "cannot run ./runner: No such file or directory"
  bool exited = false;      // normal exit
  int exit_code = -1;
  bool signaled = false;  // killed by a signal (not by us)
  int signal = 0;
  bool timed_out = false;  // we killed it at the timeout
  bool cancelled = false;  // we killed it because ChildOptions::cancel became true
  // The grader got SIGINT/SIGTERM while waiting; the child's group was killed.
  // interrupt_signal says which, so the grader can exit as that signal asks.
  bool interrupted = false;
  int interrupt_signal = 0;
  double wall_s = 0;
  std::string stdout_text;  // with capture_stdout_bytes
  bool stdout_truncated = false;

  // One line: "exited with code 3", "killed by SIGSEGV (segmentation fault)",
  // "timed out after 5.0 s", ...
  std::string describe() const;
};

// Blocks until the child is gone, and with it every process it left behind
// that this process adopted (see become_subreaper). Safe to call from several
// threads at once.
ChildResult run_child(const ChildOptions& options);

// Makes this process adopt the orphans of the programs it runs, so run_child
// can end them too (setsid and double fork leave the process group), and keeps
// other processes of the same user from reading its memory and descriptors
// (a submission's program must not reach the grader's pipes). Call once, early.
void become_subreaper();

// At most max_bytes from the head of a file, with a note of how much was cut
// ("... [truncated: 12.3 MB more]"). Bytes that are not printable UTF-8 become
// '?' (newlines and tabs stay), so garbage output cannot wreck the terminal.
// A missing file reads as "".
std::string read_head(const std::filesystem::path& file, std::size_t max_bytes);
// The last max_bytes of the file from a whole line on, read and made printable as
// read_head does ("[12.3 MB before] ..." first where it was cut): what a program
// that ran out of time was doing at the end.
std::string read_tail(const std::filesystem::path& file, std::size_t max_bytes);

}  // namespace grader
