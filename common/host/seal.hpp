// The seal: what fences in a process that runs or compiles submission code
// outside bwrap (isolation modes rlimits and none). Host-only; used by the
// launcher `grader-seal` (seal_main.cpp), which the grader and the referee put
// in front of nvcc, of the submission's program, and of the program that ncu
// and compute-sanitizer start.
//
//   - its own identity: a user id of its own run, which owns nothing of the
//     course and no other process (when the launcher starts as root), so it
//     can signal, trace or read no process but its own, and every process it
//     leaves behind ends with one kill(-1) of that user (seal_identity.hpp);
//   - an allow-list of the filesystem (Landlock): read beneath the folders
//     named, write beneath the ones named writable, nothing else, whatever the
//     file modes say; with Landlock 6 and later, signals and abstract sockets
//     only within its own sandbox;
//   - rlimits: CPU time, file size, processes (counted for its own user), no core.
//
// Without Landlock the allow-list cannot hold; the launcher says so and exits
// kSealUnavailable when Landlock is required (grading for credit), or runs with
// identity and limits alone when it is not (a student's own grade).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace memlabs {

// The launcher's exit code when the seal that was asked for cannot be had.
inline constexpr int kSealUnavailable = 121;

// This kernel's Landlock ABI version; 0 when Landlock is missing, disabled, or
// refused by a seccomp filter (some container runtimes).
int landlock_abi();

struct SealSpec {
  std::vector<std::string> read;   // read and execute beneath each
  std::vector<std::string> write;  // every access beneath each
  bool change_identity = false;    // become uid/gid (the launcher must be root)
  uid_t uid = 0;
  gid_t gid = 0;
  bool require_landlock = false;  // no Landlock: refuse instead of running without the allow-list
  // The program runs under ncu or compute-sanitizer, which talk to it over TCP
  // on 127.0.0.1 and may use abstract sockets: those stay open (as bwrap's
  // network namespace stays shared for them).
  bool under_tool = false;
  double cpu_seconds = 0;        // RLIMIT_CPU when > 0
  std::uint64_t file_bytes = 0;  // RLIMIT_FSIZE when > 0
  std::uint64_t processes = 0;   // RLIMIT_NPROC when > 0, counted for the user it becomes
};

// The folders every sealed process may read: the system's programs, libraries
// and settings, /proc, /sys and /dev (devices: read, write and ioctl, which the
// GPU needs; /proc: write too, since the CUDA runtime names its threads).
std::vector<std::string> system_read_folders();

// The folders of every library in LD_PRELOAD, CUDA_INJECTION64_PATH and LD_LIBRARY_PATH of this
// process: a tool's injection library (ncu, compute-sanitizer) and the
// driver's libraries must load in the sealed program.
std::vector<std::string> library_folders_of_this_environment();

// Seals this process as `spec` says. Returns "" when done, else why not (then
// nothing further is applied, and the caller must not run submission code).
// `landlock_applied` says whether the allow-list holds.
std::string seal_this_process(const SealSpec& spec, bool& landlock_applied);

// Becomes spec's uid and gid for good (no groups, every id): the last part of
// seal_this_process when it changes identity. Returns "" when done, else why not.
std::string become_user(const SealSpec& spec);

// The launcher's command line for `spec` in front of `program_argv`.
std::vector<std::string> seal_command(const std::string& launcher, const SealSpec& spec,
                                      const std::vector<std::string>& program_argv);

// Reads the launcher's command line back (seal_main.cpp); throws
// std::invalid_argument on anything it does not know. `program` gets what follows "--".
SealSpec parse_seal_args(const std::vector<std::string>& args, std::vector<std::string>& program);

}  // namespace memlabs
