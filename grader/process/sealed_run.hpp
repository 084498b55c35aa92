// One sealed run of submission code outside bwrap (common/host/seal.hpp): a user
// id of its own, a private folder that user owns, the launcher in front of the
// program, and, when the run is over, every process of that user ended.
// Used for nvcc on kernel.cu (builder_steps.cpp), the program under ncu and
// compute-sanitizer (tool_run.cpp), and the referee's program (referee_client.cpp).
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

#include "host/seal.hpp"
#include "sandbox.hpp"

namespace grader {

// The launcher, next to this grader (build/bin/grader-seal). Throws
// EnvironmentError-like std::runtime_error when it is missing.
std::filesystem::path seal_launcher();
// The overlap check's injection library (grader/probe/trace_injection.cpp), alone
// in bin/trace/ next to the grader, so that a sealed program reading it reads
// nothing else of the build; empty when it was not built (no CUPTI).
std::filesystem::path trace_library();

// Whether a grade with these settings may run submission code here, and if
// not why: isolation for credit (a batch, Gradescope, Slurm) outside bwrap
// needs Landlock for its allow-list. "" when it may.
std::string seal_refusal(const IsolationSettings& settings);

// How many tasks (processes and threads) user `uid` has, as RLIMIT_NPROC
// counts them: by each process's real user.
std::size_t tasks_of_user(uid_t uid);

class SealedRun {
 public:
  // A fresh identity when this process is root (else its own user, sealed by
  // Landlock alone), and a private folder in /tmp owned by it.
  SealedRun();
  // Ends every process of the run's user (when it has one of its own), then removes the folder.
  ~SealedRun();
  SealedRun(const SealedRun&) = delete;
  SealedRun& operator=(const SealedRun&) = delete;

  const std::filesystem::path& folder() const { return folder_; }
  bool own_identity() const { return own_identity_; }
  uid_t uid() const { return uid_; }
  gid_t gid() const { return gid_; }

  // A copy of `program` in the folder, which the run's user may execute.
  std::filesystem::path copy_program(const std::filesystem::path& program) const;
  // Hands a folder made by this process over to the run's user (chown), so it may write there.
  void hand_over(const std::filesystem::path& dir) const;
  // The seal for this run: the identity, the folder readable and writable,
  // the toolkit and `readable` readable, the limits of `isolation`.
  memlabs::SealSpec spec(const memlabs::Isolation& isolation, const std::vector<std::string>& readable,
                         const std::vector<std::string>& writable) const;

  // Copies the folder `from` (made by the grader) to `to` in the run's folder,
  // handed over to the run's user, so that a program that may write only its
  // own folder can work in it.
  void stage_in(const std::filesystem::path& from, const std::filesystem::path& to) const;
  // Copies back what the run left in `from` to `to`: plain files and folders
  // only, never through a link it planted. Call after end_processes().
  void stage_out(const std::filesystem::path& from, const std::filesystem::path& to) const;

  // How many tasks (processes and threads) the run's user has now; 0 when the
  // run has no user of its own, whose count would be the grader's too.
  std::size_t tasks() const;

  // Ends every process of the run's user now (the destructor does it too).
  void end_processes() const;

 private:
  bool own_identity_ = false;
  uid_t uid_ = 0;
  gid_t gid_ = 0;
  std::filesystem::path folder_;
};

}  // namespace grader
