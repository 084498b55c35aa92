// A process the referee serves with, seen from the referee: started with its
// socket as descriptor 3, asked one request at a time with a deadline, paused
// while the referee writes inputs it must not see early, and ended with every
// process it started, however they tried to leave (setsid, double fork).
// Host-only.
#pragma once

#include <sys/types.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "isolation.hpp"
#include "protocol/channel.hpp"

namespace memlabs {

struct SpawnOptions {
  std::vector<std::string> argv;       // argv[0] is an absolute path
  int stdout_fd = -1, stderr_fd = -1;  // -1: /dev/null
  // The submission's program: isolated as `isolation` says and, when the
  // referee runs as root outside a sandbox, run as nobody.
  bool untrusted = false;
  Isolation isolation;
  std::vector<std::string> visible;  // folders the sandbox shows read-only (the program's)
};

// Why a request got no reply: none came in time, the process is gone, or what
// came broke the protocol.
enum class NoReply { none, timeout, gone, protocol };
const char* name_of(NoReply why);

struct Reply {
  bool ok = false;                  // the request was served
  nlohmann::json body;              // the reply, also when it reports an error ({"ok": false, "error": ...})
  NoReply failure = NoReply::none;  // why there is no reply
  std::string detail;               // for protocol: what was wrong
  double seconds = 0;               // from sending the request to the reply
};

class ServerProcess {
 public:
  ServerProcess() = default;
  ~ServerProcess();
  ServerProcess(ServerProcess&&) noexcept;
  ServerProcess& operator=(ServerProcess&&) noexcept;
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  // Throws std::runtime_error when it cannot be started.
  static ServerProcess spawn(const SpawnOptions& options);

  bool running() const { return pid_ > 0 && !reaped_; }
  pid_t pid() const { return pid_; }
  // Sends the request (with descriptors) and waits for the reply. A reply from
  // the submission is hostile data: only its shape is trusted, never a verdict.
  Reply request(const nlohmann::json& body, double timeout_s, const std::vector<int>& fds = {});
  // SIGSTOP to every process it started, until all of them are stopped (the
  // submission cannot read or write shared memory meanwhile); false if that
  // could not be made to hold, in which case everything was killed.
  bool pause();
  // Why the last pause that failed did: the program's processes (it started
  // some) would not all stop, its doing; or the program alone, one process,
  // would not stop (held in the kernel, e.g. inside a driver call), the machine's.
  enum class PauseFailure { none, by_the_program, by_the_machine };
  PauseFailure pause_failure() const { return pause_failure_; }
  void resume();
  // Kills it and every process it started, and reaps them.
  void kill_all();
  // How it ended, after kill_all or when it exited: "exited with code 3", "killed by SIGSEGV".
  std::string ending() const;
  bool crashed() const { return signaled_; }
  // The last requests (op, seconds, how they ended), oldest first: where a run went wrong.
  const std::vector<std::string>& recent() const { return recent_; }
  int exit_code() const { return exit_code_; }
  int signal() const { return signal_; }

 private:
  std::vector<pid_t> processes() const;  // it and every process it started
  void reap(bool block);
  void remember_paused(const std::vector<pid_t>& procs);
  void forget_paused();

  // What the last pause found, all stopped, as pidfds (a pidfd cannot name
  // another process that reuses the pid): the next resume continues exactly
  // these, and the next pause stops them before it scans. Empty where pidfds
  // are not to be had: then each pause and resume scans.
  std::vector<std::pair<pid_t, int>> paused_;
  PauseFailure pause_failure_ = PauseFailure::none;

  pid_t pid_ = -1;
  Channel channel_;
  std::string copied_program_dir_;  // a copy nobody can run, removed at the end
  bool reaped_ = false, exited_ = false, signaled_ = false;
  int exit_code_ = -1, signal_ = 0;
  bool bwrap_ = false;
  std::vector<std::string> recent_;
};

// Makes this process adopt orphans of the processes it starts (so none can
// leave by double-forking) and keeps other users and its own children from
// reading its memory or descriptors. Call once, before starting any.
void become_referee();

// Descendants of `root` found in /proc (parent links), root excluded.
std::vector<pid_t> descendants_of(pid_t root);

}  // namespace memlabs
