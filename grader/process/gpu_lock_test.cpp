#include "gpu_lock.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <thread>
#include <vector>

#include "sandbox.hpp"

namespace fs = std::filesystem;
using namespace grader;
using memlabs::GpuUse;

namespace {

class GpuLock : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::temp_directory_path() / ("gpu_lock_test-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    fs::permissions(dir, fs::perms::all, fs::perm_options::replace);  // as /tmp: every user may enter
    file = dir / "gpu.lock";
  }
  void TearDown() override { fs::remove_all(dir); }
  fs::path dir, file;
};

// Runs `body` in a child process; its exit status.
template <class F>
int in_child(F body) {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(body());
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

TEST_F(GpuLock, OneFilePerGpuInTmpOrTheFolderTheEnvironmentNames) {
  ::unsetenv(kGpuLockDirVar);
  EXPECT_EQ(gpu_lock_file("GPU-5e4a1b2c-0000-1111-2222-333344445555"),
            fs::path("/tmp/cuda-memory-labs-gpu-GPU-5e4a1b2c-0000-1111-2222-333344445555.lock"));
  EXPECT_EQ(gpu_lock_file(""), fs::path("/tmp/cuda-memory-labs-gpu-0.lock"));
  // Whatever a probe reports, the name stays inside the folder.
  EXPECT_EQ(gpu_lock_file("../../etc/x"), fs::path("/tmp/cuda-memory-labs-gpu-etcx.lock"));
  ::setenv(kGpuLockDirVar, dir.c_str(), 1);
  EXPECT_EQ(gpu_lock_file("GPU-1").parent_path(), dir);
  ::unsetenv(kGpuLockDirVar);
}

namespace {
// How many of three threads were inside at once, each holding what `take`
// returns for 40 ms.
template <class Take>
int most_at_once(Take take, int threads = 3) {
  std::atomic<int> inside{0}, most{0};
  auto hold = [&] {
    const auto turn = take();
    const int now = ++inside;
    most = std::max(most.load(), now);
    std::this_thread::sleep_for(std::chrono::milliseconds(40));
    --inside;
  };
  std::vector<std::thread> all;
  for (int i = 0; i < threads; ++i) all.emplace_back(hold);
  for (auto& t : all) t.join();
  return most.load();
}
}  // namespace

TEST_F(GpuLock, TurnsNeverOverlap) {
  EXPECT_EQ(most_at_once([&] { return std::make_unique<GpuTurn>(file); }), 1);
  EXPECT_EQ(fs::status(file).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
}

TEST_F(GpuLock, AWaitSaysWhoHoldsTheGpu) {
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t holder = ::fork();
  if (holder == 0) {
    const GpuTurn turn(file);
    char c = 1;
    if (::write(ready[1], &c, 1) != 1) ::_exit(1);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    ::_exit(0);
  }
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  std::string said;
  int calls = 0;
  const auto t0 = std::chrono::steady_clock::now();
  {
    const GpuTurn turn(file, GpuUse::exclusive, [&](const std::string& who) {
      said = who;
      ++calls;
    });
  }
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  int status = 0;
  ::waitpid(holder, &status, 0);
  EXPECT_EQ(calls, 1);
  EXPECT_NE(said.find("pid " + std::to_string(holder)), std::string::npos) << said;
  EXPECT_NE(said.find("user "), std::string::npos) << said;
  EXPECT_GT(waited, 0.2);
}

// A profile waiting for one of the slots says who holds them, as a wait for
// the GPU does.
TEST_F(GpuLock, AProfileWaitingForASlotSaysWhoHoldsThem) {
  set_process_gpu_lock(file);
  const std::string ncu = file.string() + ".ncu";
  std::vector<int> slots;
  for (int k = 0; k < kProfilesAtOnce; ++k) {
    slots.push_back(memlabs::open_lock_file(ncu + "." + std::to_string(k)));
    ASSERT_EQ(::flock(slots.back(), LOCK_EX | LOCK_NB), 0);
  }
  std::thread done([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    for (int fd : slots) ::close(fd);
  });
  ::testing::internal::CaptureStderr();
  { const ProfilerTurn turn(GpuUse::shared); }
  const std::string said = ::testing::internal::GetCapturedStderr();
  done.join();
  EXPECT_NE(
      said.find(std::to_string(kProfilesAtOnce) + " other profiles are running: pid " + std::to_string(::getpid())),
      std::string::npos)
      << said;
  EXPECT_NE(said.find("user "), std::string::npos) << said;
  set_process_gpu_lock({});
}

// The defect this replaces: each course copy had a lock of its own, so two
// students on one server timed at the same moment.
TEST_F(GpuLock, UsersTakeTurnsOnOneFileWhoeverMadeIt) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to act as a second user";
  for (const bool root_first : {true, false}) {
    fs::remove(file);
    auto as_nobody = [&](auto body) {
      return in_child([&] {
        if (::setgid(65534) != 0 || ::setuid(65534) != 0) return 90;
        return body();
      });
    };
    auto hold_and_check = [&]() -> int {
      try {
        const GpuTurn turn(file);
        return 0;
      } catch (const std::exception&) {
        return 1;
      }
    };
    if (root_first) {
      { const GpuTurn turn(file); }
      EXPECT_EQ(as_nobody(hold_and_check), 0) << "nobody could not take a turn on root's lock file";
    } else {
      EXPECT_EQ(as_nobody(hold_and_check), 0);
      EXPECT_EQ(hold_and_check(), 0) << "root could not take a turn on nobody's lock file";
    }
    // And the turn is exclusive across the two users.
    int ready[2];
    ASSERT_EQ(::pipe(ready), 0);
    const pid_t holder = ::fork();
    if (holder == 0) {
      if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(90);
      const GpuTurn turn(file);
      char c = 1;
      if (::write(ready[1], &c, 1) != 1) ::_exit(1);
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      ::_exit(0);
    }
    char c = 0;
    ASSERT_EQ(::read(ready[0], &c, 1), 1);
    bool waited = false;
    {
      const GpuTurn turn(file, GpuUse::exclusive, [&](const std::string&) { waited = true; });
    }
    ::waitpid(holder, nullptr, 0);
    ::close(ready[0]);
    ::close(ready[1]);
    EXPECT_TRUE(waited) << "root's grade did not wait for nobody's";
  }
}

TEST_F(GpuLock, APlantedLinkIsRefusedAndNothingIsWritten) {
  const fs::path target = dir / "victim";
  std::ofstream(target) << "keep";
  fs::create_symlink(target, file);
  try {
    const GpuTurn turn(file);
    FAIL() << "a symbolic link was taken as the lock";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("symbolic link"), std::string::npos) << e.what();
  }
  std::ifstream in(target);
  std::string text;
  in >> text;
  EXPECT_EQ(text, "keep");
}

TEST_F(GpuLock, AMissingFolderSaysWhatToSet) {
  try {
    const GpuTurn turn(dir / "no-such-folder" / "gpu.lock");
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(kGpuLockDirVar), std::string::npos) << e.what();
  }
}

TEST_F(GpuLock, NoFileNoTurn) {
  const GpuTurn a{fs::path()};
  const GpuTurn b{fs::path()};  // would block if it locked anything
  SUCCEED();
}

// Whether another process could take the turn on `file` as `use` right now.
bool other_process_can_take(const fs::path& file, GpuUse use) {
  return in_child([&] {
           const int fd = ::open(file.c_str(), O_RDONLY);
           return fd >= 0 && ::flock(fd, (use == GpuUse::exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) == 0 ? 0 : 1;
         }) == 0;
}

// Correctness runs and tools of several grades share the GPU; a timing has it alone.
TEST_F(GpuLock, SharedTurnsOverlapAnExclusiveOneIsAlone) {
  std::atomic<int> inside{0}, most{0};
  auto run = [&](GpuUse use) {
    const GpuTurn turn(file, use);
    const int now = ++inside;
    most = std::max(most.load(), now);
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    --inside;
  };
  {
    std::thread a(run, GpuUse::shared), b(run, GpuUse::shared);
    a.join();
    b.join();
  }
  EXPECT_EQ(most.load(), 2) << "two shared turns did not overlap";
  {
    const GpuTurn shared(file, GpuUse::shared);
    EXPECT_TRUE(other_process_can_take(file, GpuUse::shared));
    EXPECT_FALSE(other_process_can_take(file, GpuUse::exclusive)) << "a timing could start beside shared work";
  }
  {
    const GpuTurn alone(file, GpuUse::exclusive);
    EXPECT_FALSE(other_process_can_take(file, GpuUse::shared)) << "shared work could start beside a timing";
  }
  // An older grader takes a plain exclusive flock on the same file: it still excludes a shared turn.
  EXPECT_TRUE(other_process_can_take(file, GpuUse::exclusive));
}

// flock alone would let a stream of shared turns keep a timing waiting for
// ever: a shared request that comes after a waiting exclusive one waits behind it.
TEST_F(GpuLock, AWaitingTimingGoesBeforeSharedWorkThatCameAfterIt) {
  auto first = std::make_unique<GpuTurn>(file, GpuUse::shared);
  std::atomic<int> order{0};
  std::atomic<int> exclusive_at{0}, late_shared_at{0};
  std::atomic<bool> exclusive_waiting{false};
  std::thread timing([&] {
    const GpuTurn t(file, GpuUse::exclusive, [&](const std::string&) { exclusive_waiting = true; });
    exclusive_at = ++order;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  });
  while (!exclusive_waiting) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::thread late([&] {
    const GpuTurn t(file, GpuUse::shared);
    late_shared_at = ++order;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(late_shared_at.load(), 0) << "shared work passed a timing that was waiting before it";
  first.reset();
  timing.join();
  late.join();
  EXPECT_EQ(exclusive_at.load(), 1);
  EXPECT_EQ(late_shared_at.load(), 2);
}

// Timings that ask while another waits go before shared work that asked between
// them: the shared work already running drains once for the batch, not once
// for each timing (with the gate closed only until a timing holds the turn,
// the shared request would slip in between the two timings).
TEST_F(GpuLock, TimingsAskingTogetherGoBeforeSharedWorkThatAskedBetweenThem) {
  auto running = std::make_unique<GpuTurn>(file, GpuUse::shared);
  std::atomic<int> order{0}, first_at{0}, second_at{0}, shared_at{0};
  std::atomic<bool> first_waiting{false}, second_waiting{false};
  auto timing = [&](std::atomic<bool>& waiting, std::atomic<int>& at) {
    const GpuTurn t(file, GpuUse::exclusive, [&](const std::string&) { waiting = true; });
    at = ++order;
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
  };
  std::thread first(timing, std::ref(first_waiting), std::ref(first_at));
  while (!first_waiting) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::thread shared([&] {
    const GpuTurn t(file, GpuUse::shared);
    shared_at = ++order;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the shared request waits at the gate
  std::thread second(timing, std::ref(second_waiting), std::ref(second_at));
  while (!second_waiting) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  running.reset();
  first.join();
  second.join();
  shared.join();
  EXPECT_EQ(shared_at.load(), 3) << "shared work went between two timings that were waiting together";
  EXPECT_EQ(first_at.load() + second_at.load(), 3);
}

// A sandboxed grade holds its exclusive turn for the whole grade: other users'
// shared work that asked before the next such grade goes before it.
TEST_F(GpuLock, ALongExclusiveTurnLetsSharedWorkThatAskedFirstGoFirst) {
  auto grade = std::make_unique<GpuTurn>(file, GpuUse::exclusive, nullptr, memlabs::ExclusiveLength::long_turn);
  std::atomic<int> order{0}, shared_at{0}, next_grade_at{0};
  std::atomic<bool> shared_waiting{false}, next_waiting{false};
  std::thread shared([&] {
    const GpuTurn t(file, GpuUse::shared, [&](const std::string&) { shared_waiting = true; });
    shared_at = ++order;
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
  });
  while (!shared_waiting) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::thread next([&] {
    const GpuTurn t(
        file, GpuUse::exclusive, [&](const std::string&) { next_waiting = true; }, memlabs::ExclusiveLength::long_turn);
    next_grade_at = ++order;
  });
  while (!next_waiting) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  grade.reset();
  shared.join();
  next.join();
  EXPECT_EQ(shared_at.load(), 1);
  EXPECT_EQ(next_grade_at.load(), 2);
}

// The referee holds a shared turn while it starts and takes the GPU alone for
// its measured part: changing a turn never waits on a request that waits on it.
TEST_F(GpuLock, ATurnChangesWithoutDeadlockWhileAnotherWaits) {
  memlabs::GpuTurnFiles referee(file.string());
  referee.take(GpuUse::shared);
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t other = ::fork();
  if (other == 0) {
    ::alarm(10);
    char c = 1;
    if (::write(ready[1], &c, 1) != 1) ::_exit(1);
    const GpuTurn t(file, GpuUse::exclusive);  // waits at the turn, holding the gate
    ::_exit(0);
  }
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ::alarm(10);  // a deadlock ends the test, not the suite's time
  referee.take(GpuUse::exclusive);
  EXPECT_FALSE(other_process_can_take(file, GpuUse::shared));
  referee.take(GpuUse::shared);
  EXPECT_TRUE(other_process_can_take(file, GpuUse::shared));
  referee.give_back();
  ::alarm(0);
  int status = 0;
  ::waitpid(other, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ::close(ready[0]);
  ::close(ready[1]);
}

// Within one process (a grade's tool runs on their threads, `grader check`'s
// margins) an exclusive turn waits for the process's own shared ones instead
// of waiting on the file for a turn the process itself holds.
TEST_F(GpuLock, AProcessExclusiveTurnWaitsForItsOwnSharedOnes) {
  set_process_gpu_lock(file);
  auto shared = std::make_unique<ProcessGpuTurn>(GpuUse::shared);
  auto second = std::make_unique<ProcessGpuTurn>(GpuUse::shared);  // shared turns do not wait on each other
  std::atomic<bool> exclusive_in{false};
  std::thread timing([&] {
    const ProcessGpuTurn t(GpuUse::exclusive);
    exclusive_in = true;
    EXPECT_FALSE(other_process_can_take(file, GpuUse::shared)) << "the timing's turn is not exclusive";
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(exclusive_in.load());
  shared.reset();
  second.reset();
  timing.join();
  EXPECT_TRUE(exclusive_in.load());
  EXPECT_TRUE(other_process_can_take(file, GpuUse::exclusive)) << "the turn was not given back";
  set_process_gpu_lock({});
}

// In a bwrap sandbox a grade's runs share one exclusive turn, as before the
// turns were shared or exclusive: a tool run beside another grade's sandboxed
// program cannot tell its target (pid 2 in its own namespace) apart.
TEST_F(GpuLock, ASandboxedGradesRunsShareOneExclusiveTurn) {
  set_process_gpu_lock(file);
  ::setenv(kIsolateVar, "bwrap", 1);
  EXPECT_TRUE(whole_grade_turns());
  {
    auto run = std::make_unique<ProcessGpuTurn>(GpuUse::shared);
    std::atomic<bool> tool_in{false};
    std::thread tool([&] {
      const ProcessGpuTurn t(GpuUse::shared);  // the grade's own: no wait
      tool_in = true;
    });
    tool.join();
    EXPECT_TRUE(tool_in.load());
    EXPECT_FALSE(other_process_can_take(file, GpuUse::shared))
        << "another grade's run started beside a sandboxed grade";
    run.reset();
  }
  EXPECT_TRUE(other_process_can_take(file, GpuUse::exclusive)) << "the grade's turn was not given back";
  ::unsetenv(kIsolateVar);
  EXPECT_FALSE(whole_grade_turns());
  set_process_gpu_lock({});
}

// The measurement switch: a sandboxed grade with per-run turns, as a sealed one
// takes them; any other value keeps the one turn for the whole grade.
TEST_F(GpuLock, PerRunTurnsInASandboxOnlyWhenAskedFor) {
  ::setenv(kIsolateVar, "bwrap", 1);
  ::setenv(kSandboxedTurnsVar, "per-run", 1);
  EXPECT_FALSE(whole_grade_turns());
  ::setenv(kSandboxedTurnsVar, "whole-grade", 1);
  EXPECT_TRUE(whole_grade_turns());
  ::unsetenv(kSandboxedTurnsVar);
  EXPECT_TRUE(whole_grade_turns());
  ::unsetenv(kIsolateVar);
}

// Profiles that cannot use ncu's own lock take turns machine-wide on a file
// beside the GPU's, one at a time, whichever process or thread asks; those that
// can run a few at once (kProfilesAtOnce), never more; without a GPU lock
// there is no turn.
TEST_F(GpuLock, ProfilerTurnsAreOneAtATimeOnAFileBesideTheGpus) {
  set_process_gpu_lock(file);
  EXPECT_EQ(most_at_once([] { return std::make_unique<ProfilerTurn>(GpuUse::exclusive); }, 5), 1);
  EXPECT_EQ(most_at_once([] { return std::make_unique<ProfilerTurn>(GpuUse::shared); }, kProfilesAtOnce + 2),
            kProfilesAtOnce)
      << "profiles that use ncu's own lock wait for a lone one, or for kProfilesAtOnce others";
  const fs::path ncu = file.string() + ".ncu";
  EXPECT_EQ(fs::status(ncu).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  { const GpuTurn made(file, GpuUse::shared); }
  {
    const ProfilerTurn held(GpuUse::exclusive);
    EXPECT_FALSE(other_process_can_take(ncu, GpuUse::shared)) << "another grade's ncu could start";
    EXPECT_TRUE(other_process_can_take(file, GpuUse::shared)) << "the profiler turn is not the GPU's";
  }
  EXPECT_TRUE(other_process_can_take(ncu, GpuUse::exclusive)) << "the turn was not given back";
  {
    const ProfilerTurn held(GpuUse::shared);
    EXPECT_TRUE(other_process_can_take(ncu, GpuUse::shared)) << "a shared profiler turn is exclusive";
    EXPECT_FALSE(other_process_can_take(ncu.string() + ".0", GpuUse::shared)) << "it holds no slot";
  }
  EXPECT_TRUE(other_process_can_take(ncu.string() + ".0", GpuUse::exclusive)) << "the slot was not given back";
  set_process_gpu_lock({});
  fs::remove(ncu);
  { const ProfilerTurn none(GpuUse::shared); }
  EXPECT_FALSE(fs::exists(ncu));
}

// Sandboxed tool runs take turns machine-wide, not per GPU: two grades on two GPUs
// (each with its own GPU's lock file) still run their tools one at a time.
TEST_F(GpuLock, SandboxedToolRunsAreOneAtATimeWhateverTheGpu) {
  ::setenv(kGpuLockDirVar, dir.c_str(), 1);
  EXPECT_EQ(sandboxed_tools_lock_file(), dir / "cuda-memory-labs-sandboxed-tools.lock");
  EXPECT_EQ(most_at_once([] { return std::make_unique<SandboxedToolTurn>(); }, 4), 1);
  { const GpuTurn made(gpu_lock_file("GPU-b")); }
  {
    const SandboxedToolTurn held;
    EXPECT_FALSE(other_process_can_take(sandboxed_tools_lock_file(), GpuUse::exclusive))
        << "a grade on another GPU could start a sandboxed tool run beside this one";
    EXPECT_TRUE(other_process_can_take(gpu_lock_file("GPU-b"), GpuUse::exclusive)) << "it holds no GPU's turn";
  }
  EXPECT_TRUE(other_process_can_take(sandboxed_tools_lock_file(), GpuUse::exclusive)) << "the turn was not given back";
  ::unsetenv(kGpuLockDirVar);
}
