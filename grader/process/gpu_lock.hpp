// Taking turns on a GPU. Every run that uses the GPU (the referee, a tool run
// of the submission's program) holds a turn on one lock file per GPU, named
// after the GPU's UUID, in a folder every user reaches: /tmp, or
// GRADER_GPU_LOCK_DIR where /tmp is private to each user. Work that times
// nothing shares the GPU; a timing has it alone (common/host/gpu_turn.hpp). So the
// grades of different users, course copies and batch tasks on one machine
// never time at the same moment, and a wait names who holds the GPU.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "host/gpu_turn.hpp"

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

// A turn on the GPU whose lock file this is: shared (work that times nothing)
// or exclusive (a timing, or a run that reads the whole GPU's state), as
// common/host/gpu_turn.hpp describes. Blocks until it holds it; `waiting` is called
// once, with the holder, when it must wait. An empty file takes no turn.
// Throws std::runtime_error when the lock file cannot be opened or locked.
class GpuTurn {
 public:
  explicit GpuTurn(const std::filesystem::path& file, memlabs::GpuUse use = memlabs::GpuUse::exclusive,
                   const std::function<void(const std::string& holder)>& waiting = {},
                   memlabs::ExclusiveLength length = memlabs::ExclusiveLength::short_turn);
  GpuTurn(const GpuTurn&) = delete;
  GpuTurn& operator=(const GpuTurn&) = delete;

 private:
  std::unique_ptr<memlabs::GpuTurnFiles> files_;
};

// In a bwrap sandbox (a class's batch, a Gradescope grade) a grade's runs take
// one exclusive turn together, as one grade: every sandboxed program is pid 2
// of its own pid namespace, and a compute-sanitizer or ncu run beside another
// grade's sandboxed programs cannot tell its target apart. Timings then take
// their turn in the grader, not in the referee, after the grade's tool runs.
//
// Since sandboxed tool runs take turns machine-wide (SandboxedToolTurn), a tool
// run no longer has another sandboxed program under a tool beside it, and the
// one turn for the whole grade may be more than is needed. GRADER_SANDBOXED_TURNS=per-run
// (kSandboxedTurnsVar) gives a sandboxed grade the per-run turns a sealed one
// takes, to measure on the GPU machine whether a batch stays sound and runs faster.
inline constexpr const char* kSandboxedTurnsVar = "GRADER_SANDBOXED_TURNS";
bool whole_grade_turns();

// A turn on this process's GPU, saying on stderr that it waits and for whom.
// Each run takes its own (the compute-sanitizer tools of one grade share the
// GPU as any shared turns do). Within the process an exclusive turn also waits
// for the process's own shared ones, and they for it, so that no thread waits
// on the file for a turn another thread of this process holds. With
// whole_grade_turns(), every thread shares the process's one exclusive turn.
class ProcessGpuTurn {
 public:
  explicit ProcessGpuTurn(memlabs::GpuUse use);
  ~ProcessGpuTurn();
  ProcessGpuTurn(const ProcessGpuTurn&) = delete;
  ProcessGpuTurn& operator=(const ProcessGpuTurn&) = delete;

 private:
  memlabs::GpuUse use_;
  bool whole_grade_ = false;
  std::unique_ptr<GpuTurn> turn_;
};

// Two profiles at once on one GPU fail ("An error was reported by the
// driver", measured on an H100), so ncu profiles one program at a time: it
// takes a lock file, $TMPDIR/nsight-compute-lock, for the part of its run that
// profiles (four runs at once took 3.7 s against 7.7 s one after another). The
// first user to profile makes that file in /tmp; where fs.protected_regular is
// set (Ubuntu's default) no other user may open it again, and their ncu fails.
//
// So a profile first asks whether ncu could open that file (ncu_lock_usable:
// the grader opens it as ncu would). If so, ncu's own lock orders it, and it
// holds a shared profiler turn; if not, it runs with a TMPDIR of its own
// (tool_run.cpp) and holds the profiler turn alone. The turn is a flock on
// <this process's GPU lock>.ncu, opened read-only as the GPU's turn is, so a
// profile that cannot use ncu's lock waits for every other profile, and they
// for it. Take it before the run's GPU turn: a run waiting for its profile
// then holds no shared turn a timing would wait for. No holder of a GPU turn
// waits for the profiler turn: a timing takes none, and neither does a
// sandboxed grade, whose one exclusive GPU turn keeps other profiles off.
//
// A shared profiler turn also holds one of kProfilesAtOnce slots
// (<lock>.ncu.0, .1, ...), alone. Profiles queued on ncu's own lock each hold
// a shared GPU turn, and a timing waits for every one of them to profile in
// turn; with a few slots a timing waits for a few, while ncu still starts the
// next program as one profiles.
class ProfilerTurn {
 public:
  explicit ProfilerTurn(memlabs::GpuUse use);
  ~ProfilerTurn();
  ProfilerTurn(const ProfilerTurn&) = delete;
  ProfilerTurn& operator=(const ProfilerTurn&) = delete;

 private:
  std::unique_ptr<GpuTurn> turn_;
  int slot_ = -1;  // the slot's file, held with LOCK_EX
};

inline constexpr int kProfilesAtOnce = 3;

// A sandboxed program is pid 2 in a pid namespace of its own, so compute-sanitizer
// and ncu runs started side by side cannot tell their targets apart ("No
// attachable process found", or a tool that waits out its launch timeout),
// whichever GPU each is for. So sandboxed tool runs take turns machine-wide,
// between grades and GPUs alike (two Slurm tasks on two GPUs of one node): an
// exclusive turn on <GRADER_GPU_LOCK_DIR or /tmp>/cuda-memory-labs-sandboxed-tools.lock.
std::filesystem::path sandboxed_tools_lock_file();
class SandboxedToolTurn {
 public:
  SandboxedToolTurn();
  ~SandboxedToolTurn();
  SandboxedToolTurn(const SandboxedToolTurn&) = delete;
  SandboxedToolTurn& operator=(const SandboxedToolTurn&) = delete;

 private:
  std::unique_ptr<GpuTurn> turn_;
};

// The folder ncu keeps its lock file in: /tmp (tests name another).
const std::filesystem::path& ncu_lock_folder();
void set_ncu_lock_folder(const std::filesystem::path& folder);

// Whether ncu can open <ncu_lock_folder()>/nsight-compute-lock: it is opened
// read-write, made if missing, never through a link, as ncu opens it, and
// must be a plain file.
bool ncu_lock_usable();

}  // namespace grader
