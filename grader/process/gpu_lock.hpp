// Taking turns on a GPU. Every run that uses the GPU (the referee, a tool run
// of the submission's program) holds an exclusive flock on one lock file per
// GPU, named after the GPU's UUID, in a folder every user reaches: /tmp, or
// GRADER_GPU_LOCK_DIR where /tmp is private to each user. So the grades of
// different users, course copies and batch tasks on one machine never use a
// GPU at the same moment, and a timing is never shared with another grade.
//
// The file is opened read-only (flock needs no write access), without
// following links, and never written: a file planted by another user can
// make a grade wait (the wait names its holder) but can change nothing.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>

namespace grader {

inline constexpr const char* kGpuLockDirVar = "GRADER_GPU_LOCK_DIR";

// <GRADER_GPU_LOCK_DIR or /tmp>/cuda-memory-labs-gpu-<uuid>.lock
std::filesystem::path gpu_lock_file(const std::string& gpu_uuid);

// This process grades on the GPU whose lock file this is (set once the device
// is known); empty: no GPU, no turns.
void set_process_gpu_lock(const std::filesystem::path& file);
const std::filesystem::path& process_gpu_lock();

// Who holds the flock on the file open at `fd`, as "pid 4242, user alice,
// grader", from /proc/locks; empty when that cannot be told.
std::string lock_holder(int fd);

class GpuTurn {
 public:
  // Blocks until the GPU is free. `waiting` is called once, with the holder,
  // when it must wait. An empty file takes no turn. Throws
  // std::runtime_error when the lock file cannot be opened or locked.
  explicit GpuTurn(const std::filesystem::path& file,
                   const std::function<void(const std::string& holder)>& waiting = {});
  ~GpuTurn();
  GpuTurn(const GpuTurn&) = delete;
  GpuTurn& operator=(const GpuTurn&) = delete;

 private:
  int fd_ = -1;
};

// A turn on this process's GPU, saying on stderr that it waits and for whom.
// The threads of one grade share it (its compute-sanitizer tools run side by
// side and time nothing): the first takes the machine-wide lock, the last
// gives it back. Only one grade runs in a process; a batch grades each
// submission in a process of its own, so grades still take turns.
class ProcessGpuTurn {
 public:
  ProcessGpuTurn();
  ~ProcessGpuTurn();
  ProcessGpuTurn(const ProcessGpuTurn&) = delete;
  ProcessGpuTurn& operator=(const ProcessGpuTurn&) = delete;
};

}  // namespace grader
