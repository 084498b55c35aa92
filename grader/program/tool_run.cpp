#include "tool_run.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

#include "gpu_lock.hpp"
#include "host/hardware_queues.hpp"
#include "host/isolation.hpp"
#include "sandbox.hpp"
#include "sealed_run.hpp"

namespace fs = std::filesystem;

namespace grader {

namespace {
// A fresh folder /tmp/cuda-memory-labs-tmp-XXXXXX (short: ncu may make sockets
// in it), removed with everything in it when this goes.
class PrivateTmpdir {
 public:
  PrivateTmpdir() {
    std::string name = "/tmp/cuda-memory-labs-tmp-XXXXXX";
    if (!::mkdtemp(name.data()))
      throw std::runtime_error("cannot make a folder in /tmp: " + std::string(std::strerror(errno)));
    path_ = name;
  }
  ~PrivateTmpdir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  PrivateTmpdir(const PrivateTmpdir&) = delete;
  PrivateTmpdir& operator=(const PrivateTmpdir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// The most tasks a sealed run's user had at once, sampled while it runs: what
// it leaves at the end says little, since the orphans are swept as the run ends.
class TaskPeak {
 public:
  explicit TaskPeak(const SealedRun* run) {
    if (!run || !run->own_identity()) return;
    sampler_ = std::thread([this, run] {
      while (!stop_.load()) {
        most_ = std::max(most_.load(), run->tasks());
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait_for(lock, std::chrono::milliseconds(200), [this] { return stop_.load(); });
      }
    });
  }
  ~TaskPeak() {
    stop_ = true;
    wake_.notify_all();
    if (sampler_.joinable()) sampler_.join();
  }
  TaskPeak(const TaskPeak&) = delete;
  TaskPeak& operator=(const TaskPeak&) = delete;
  std::size_t most() const { return most_.load(); }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<std::size_t> most_{0};
  std::mutex mutex_;
  std::condition_variable wake_;
  std::thread sampler_;
};

// The run's category and sentence from how the tool's process ended.
void describe_tool_outcome(const ToolCall& call, RunnerOutcome& out) {
  if (!out.child.started) {
    out.category = RunCategory::error;
    out.message = "could not start " + (call.tool.empty() ? call.worker.string() : call.tool.front()) + ": " +
                  out.child.start_error;
  } else if (out.child.interrupted) {
    throw Interrupted();
  } else if (out.child.cancelled) {
    out.category = RunCategory::cancelled;
    out.message = call.who + " was stopped: no check needed its result any more";
  } else if (out.child.timed_out) {
    out.category = RunCategory::timeout;
    out.message = call.who + " did not finish within " + std::to_string(static_cast<int>(call.timeout_s)) +
                  " s and was stopped: an endless loop, or threads waiting at a barrier that others never reach?";
  } else if (out.child.signaled) {
    out.category = RunCategory::crash;
    out.message = call.who + " " + out.child.describe();
  } else if (out.child.exit_code != 0) {
    // The program exits 10 after a CUDA error and prints it last.
    std::string last = out.stderr_head;
    while (!last.empty() && last.back() == '\n') last.pop_back();
    last = last.substr(last.find_last_of('\n') == std::string::npos ? 0 : last.find_last_of('\n') + 1);
    out.category = out.child.exit_code == 10 ? RunCategory::cuda_error : RunCategory::error;
    out.message = call.who + " " + out.child.describe() + (last.empty() ? "" : ": " + last);
  }
}

// The tool's command line: the tool, then the program it starts. Outside
// bwrap that program is sealed (sealed_run.hpp): a user of its own, a copy of
// itself in a folder of its own, and nothing else of the filesystem. The tool
// itself is trusted and runs as the grader.
std::vector<std::string> tool_command(const ToolCall& call, const memlabs::Isolation& sandbox,
                                      std::optional<SealedRun>& sealed) {
  std::vector<std::string> program = {call.worker.string(), "run", "--seed", std::to_string(call.seed)};
  for (const auto& c : call.cases) program.insert(program.end(), {"--case", c});
  if (sandbox.mode == memlabs::IsolationMode::bwrap) {
    // The tool's injection libraries are bound by grader-seal, which sees where
    // the tool put them (bwrap mounts an allow-list).
    program = memlabs::bwrap_command(sandbox, {call.worker.parent_path().string()}, {}, program, /*under_tool=*/true);
    program.insert(program.begin(), {seal_launcher().string(), "--bwrap-under-tool"});
  } else {
    sealed.emplace();
    program[0] = sealed->copy_program(call.worker).string();
    memlabs::SealSpec spec = sealed->spec(sandbox, {}, {});
    spec.under_tool = true;
    program = memlabs::seal_command(seal_launcher().string(), spec, program);
  }
  std::vector<std::string> argv = call.tool;
  argv.insert(argv.end(), program.begin(), program.end());
  return argv;
}

// Where ncu orders its profiles, set as the program's TMPDIR in `env`. In a
// sandbox /tmp is a fresh one of the program's own, where no folder of the
// grader's exists (ncu's injection in the program fails on one), and the
// grade's one exclusive GPU turn keeps every other profile off the GPU: ncu
// keeps TMPDIR=/tmp there and takes no profiler turn. Elsewhere ncu's own lock
// orders the profiles, unless another user's lock file keeps this ncu from it:
// then a TMPDIR of its own (`tmpdir`), and the profiler turn alone. A sealed
// program may write only its own folder, and ncu's injection in it takes ncu's
// lock there: the seal's folder is then ncu's TMPDIR, as a private one is.
struct ProfilerPlace {
  bool turn = false;        // the run takes a profiler turn (ProfilerTurn, gpu_lock.hpp)
  bool own_tmpdir = false;  // ... alone: ncu's lock is not shared with other profiles
};
ProfilerPlace place_the_profiles(const ToolCall& call, std::optional<SealedRun>& sealed,
                                 std::optional<PrivateTmpdir>& tmpdir, std::vector<std::string>& env) {
  ProfilerPlace place;
  place.turn = call.profiles && !whole_grade_turns();
  place.own_tmpdir = place.turn && (sealed || !ncu_lock_usable());
  if (place.own_tmpdir && !sealed) tmpdir.emplace();
  const fs::path folder = !place.own_tmpdir ? ncu_lock_folder() : sealed ? sealed->folder() : tmpdir->path();
  if (sealed && place.turn) {
    // ncu (the grader's user) and its injection (the seal's) both take the
    // lock in this folder: it is the seal's user's, which ncu may enter as root.
    for (const fs::path& d : {folder / "nvidia", folder / "nvidia" / "nsight_compute"}) {
      fs::create_directories(d);
      sealed->hand_over(d);
    }
  }
  for (auto& kv : env)
    if (place.turn && kv.rfind("TMPDIR=", 0) == 0) kv = "TMPDIR=" + folder.string();
  return place;
}

// The program's environment under a tool: the submission's, then the call's own.
std::vector<std::string> tool_environment(const ToolCall& call) {
  std::vector<std::string> env = memlabs::submission_environment(memlabs::this_process_environment());
  // Under ncu and compute-sanitizer, one hardware queue: the context starts sooner, and
  // neither tool's checks depend on streams overlapping (hardware_queues.hpp). Not for
  // a traced run (no tool): its check is whether streams overlap.
  if (!call.tool.empty()) env.push_back(memlabs::kOneHardwareQueue);
  env.insert(env.end(), call.env.begin(), call.env.end());
  return env;
}
}  // namespace

RunnerOutcome call_tool(const ToolCall& call) {
  RunnerOutcome out;
  fs::create_directories(call.work_dir);
  const IsolationSettings isolation = isolation_from_environment();
  const memlabs::Isolation sandbox = submission_isolation(isolation, call.timeout_s);
  std::optional<SealedRun> sealed;
  ChildOptions o;
  o.argv = tool_command(call, sandbox, sealed);
  o.cwd = call.work_dir;
  o.timeout_s = call.timeout_s;
  o.cancel = call.cancel;
  o.stdout_file = call.work_dir / "stdout.txt";
  o.stderr_file = call.work_dir / "stderr.txt";
  o.env = tool_environment(call);
  std::optional<PrivateTmpdir> tmpdir;
  const ProfilerPlace profiles = place_the_profiles(call, sealed, tmpdir, *o.env);
  if (isolation.enabled()) {
    o.max_cpu_seconds = isolated_cpu_seconds(call.timeout_s);
    // A sealed program has a limit of its own user's (the seal's); the tool's
    // would be inherited as a lower hard limit, which a container's root may not raise.
    if (!sealed) o.max_processes = isolated_process_limit();
  }
  std::size_t most_tasks = 0;
  {
    // ncu waits for its profiler turn before it takes a GPU turn, so that a
    // queue of profiles holds no GPU turn a timing would wait for.
    std::optional<ProfilerTurn> profiler;
    if (profiles.turn) profiler.emplace(profiles.own_tmpdir ? memlabs::GpuUse::exclusive : memlabs::GpuUse::shared);
    // A tool times nothing: it shares the GPU (in a sandbox, only with its own
    // grade's runs: whole_grade_turns()).
    const ProcessGpuTurn turn(memlabs::GpuUse::shared);
    // A sandboxed program is pid 2 in a pid namespace of its own, so sandboxed tool runs
    // take turns machine-wide, this process's threads included (SandboxedToolTurn,
    // gpu_lock.hpp). After the GPU turn: a grade waits here holding only its own GPU,
    // so no two wait on each other.
    std::optional<SandboxedToolTurn> machine_wide;
    if (sandbox.mode == memlabs::IsolationMode::bwrap) machine_wide.emplace();
    const TaskPeak peak(sealed ? &*sealed : nullptr);
    out.child = run_child(o);
    most_tasks = peak.most();
  }
  // A program that used up its own process limit leaves the tool no room to
  // work in it (ncu: "Failed to profile"): that is the program's doing. What
  // is left at the end is a little short of the limit (the program itself may
  // be gone); an honest program has a few dozen tasks, CUDA's threads included.
  const bool at_process_limit = sandbox.processes > 0 && most_tasks * 10 >= sandbox.processes * 9;
  if (sealed) sealed->end_processes();
  out.stdout_head = read_head(o.stdout_file, 4000);
  out.stderr_head = read_head(o.stderr_file, 4000);
  describe_tool_outcome(call, out);
  if (at_process_limit && out.category != RunCategory::timeout && out.category != RunCategory::crash) {
    out.category = RunCategory::process_limit;
    out.message = call.who + " started as many processes and threads as a program may (" +
                  std::to_string(sandbox.processes) + "), so the tool could not work in it";
  }
  return out;
}

std::string tool_machinery_failure(const RunnerOutcome& outcome, const std::string& log) {
  if (outcome.category == RunCategory::process_limit) return "";  // the program's own doing
  const std::string all = log + "\n" + outcome.stderr_head + "\n" + outcome.stdout_head;
  static const std::string seal = "grader-seal: cannot seal the submission's code: ";
  if (const std::size_t at = all.find(seal); at != std::string::npos) {
    const std::size_t end = all.find('\n', at);
    return "could not be sealed in (" + all.substr(at + seal.size(), end - at - seal.size()) + ")";
  }
  if (all.find("No attachable process found") != std::string::npos)
    return "could not attach to the program (\"No attachable process found\")";
  return "";
}

}  // namespace grader
