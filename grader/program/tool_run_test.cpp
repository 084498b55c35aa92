#include "tool_run.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <thread>

#include "gpu_lock.hpp"
#include "sandbox.hpp"

namespace fs = std::filesystem;

namespace grader {
namespace {

class ToolRun : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::temp_directory_path() / ("tool_run_test-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    lock = dir / "gpu.lock";
    set_process_gpu_lock(lock);
    // A stand-in tool: where its TMPDIR is, whether that folder exists, and
    // whether another process could take the profiler turn while it runs; it
    // leaves a file in a private TMPDIR, which must go with the folder.
    tool = dir / "tool.sh";
    const std::string ncu_turn = lock.string() + ".ncu";
    std::ofstream(tool) << "#!/bin/sh\necho \"$TMPDIR\" > " << (dir / "tmpdir").string()
                        << "\ntest -d \"$TMPDIR\" && echo yes > " << (dir / "existed").string()
                        << "\ncase \"$TMPDIR\" in /tmp/cuda-memory-labs-tmp-*) echo left > \"$TMPDIR/a-file\";; esac"
                        << "\nif flock -n -x " << ncu_turn << " true; then echo free; elif flock -n -s " << ncu_turn
                        << " true; then echo shared; else echo alone; fi > " << (dir / "turn").string()
                        << "\necho \"queues=$CUDA_DEVICE_MAX_CONNECTIONS\" > " << (dir / "queues").string() << "\n";
    fs::permissions(tool, fs::perms::owner_all);
    call.tool = {tool.string()};
    call.worker = dir / "worker";  // never run: the stand-in ignores it
    call.work_dir = dir / "work";
    call.timeout_s = 20;
    ncu_folder = dir / "ncu-tmp";
    fs::create_directories(ncu_folder);
    set_ncu_lock_folder(ncu_folder);
  }
  void TearDown() override {
    set_process_gpu_lock({});
    set_ncu_lock_folder("/tmp");
    fs::remove_all(dir);
  }
  std::string said(const std::string& name) {
    std::ifstream in(dir / name);
    std::string line;
    std::getline(in, line);
    return line;
  }
  fs::path dir, lock, tool, ncu_folder;
  ToolCall call;
};

// Outside bwrap the profiled program is sealed and may write only its own
// folder, where ncu's injection in it takes ncu's lock: that folder is the
// profile's TMPDIR, and the profile takes the profiler turn alone.
// As root a sealed program has a user of its own, whose tasks its process limit
// counts: one that uses them all up leaves the tool no room to work, and that
// is the program's doing, not the grader's.
TEST_F(ToolRun, AProgramThatUsesUpItsProcessesIsToBlameForItsToolRun) {
  if (::geteuid() != 0) GTEST_SKIP() << "not root: the seal keeps the grader's user, whose tasks are not the program's";
  std::ofstream(call.worker) << "#!/bin/sh\ni=0\nwhile [ $i -lt 480 ]; do sleep 20 & i=$((i+1)); done\nsleep 1\n";
  fs::permissions(call.worker, fs::perms::owner_all);
  const fs::path runs_it = dir / "runs_it.sh";
  std::ofstream(runs_it) << "#!/bin/sh\n\"$@\"\nexit 1\n";
  fs::permissions(runs_it, fs::perms::owner_all);
  call.tool = {runs_it.string()};
  ::setenv(kIsolateVar, "rlimits", 1);
  const RunnerOutcome out = call_tool(call);
  ::unsetenv(kIsolateVar);
  EXPECT_EQ(out.category, RunCategory::process_limit) << out.message;
  EXPECT_EQ(tool_machinery_failure(out, ""), "");
}

TEST_F(ToolRun, ASealedProfileRunsAloneWithTheSealsFolderAsTmpdir) {
  call.profiles = true;
  const RunnerOutcome out = call_tool(call);
  EXPECT_TRUE(out.ok()) << out.message;
  EXPECT_EQ(said("tmpdir").rfind("/tmp/memlabs-sealed-", 0), 0u) << said("tmpdir");
  EXPECT_EQ(said("turn"), "alone");
}

// Another user's lock file (here: a link, which neither ncu nor the grader
// follows) would fail ncu: the run gets a TMPDIR of its own, gone after it,
// and holds the profiler turn alone.
TEST_F(ToolRun, AProfileThatCannotOpenNcusLockRunsAloneWithATmpdirOfItsOwn) {
  fs::create_symlink(dir / "elsewhere", ncu_folder / "nsight-compute-lock");
  EXPECT_FALSE(ncu_lock_usable());
  call.profiles = true;
  const RunnerOutcome out = call_tool(call);
  EXPECT_TRUE(out.ok()) << out.message;
  const std::string tmpdir = said("tmpdir");
  EXPECT_EQ(tmpdir.rfind("/tmp/memlabs-sealed-", 0), 0u) << tmpdir;  // the seal's own folder
  EXPECT_LT(tmpdir.size(), 40u);                                     // ncu may make sockets there: a short path
  EXPECT_EQ(said("existed"), "yes");
  EXPECT_FALSE(fs::exists(tmpdir));
  EXPECT_EQ(said("turn"), "alone");
  EXPECT_FALSE(fs::exists(dir / "elsewhere"));
  // Every run has a fresh one.
  EXPECT_TRUE(call_tool(call).ok());
  EXPECT_NE(said("tmpdir"), tmpdir);
  EXPECT_FALSE(fs::exists(said("tmpdir")));
}

// Nor is a planted FIFO ncu's lock file: it must be a plain file.
TEST_F(ToolRun, AFifoIsNoLockFileForNcu) {
  ASSERT_EQ(::mkfifo((ncu_folder / "nsight-compute-lock").c_str(), 0666), 0);
  EXPECT_FALSE(ncu_lock_usable());
  fs::remove(ncu_folder / "nsight-compute-lock");
  EXPECT_TRUE(ncu_lock_usable());
}

// A profile that waits for its turn holds no GPU turn meanwhile, so a timing
// (which needs the GPU alone) never waits behind a queue of profiles.
TEST_F(ToolRun, AProfileWaitingForItsTurnHoldsNoGpuTurn) {
  { const GpuTurn made(lock, memlabs::GpuUse::shared); }
  // Another grade profiles alone (its ncu cannot use ncu's lock file).
  auto other = std::make_unique<ProfilerTurn>(memlabs::GpuUse::exclusive);
  call.profiles = true;
  std::thread profile([&] { EXPECT_TRUE(call_tool(call).ok()); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(fs::exists(dir / "turn")) << "it ran beside another profile";
  EXPECT_EQ(std::system(("flock -n -x " + lock.string() + " true").c_str()), 0) << "it waits holding a GPU turn";
  other.reset();
  profile.join();
  EXPECT_EQ(said("turn"), "alone");  // a sealed profile runs alone
}

// In a sandbox the program's /tmp is its own: a folder of the grader's there
// does not exist (ncu's injection fails on it). The grade's one exclusive GPU
// turn keeps other profiles off the GPU instead.
TEST_F(ToolRun, ASandboxedProfileKeepsTmpAndTakesNoProfilerTurn) {
  ::setenv(kIsolateVar, "bwrap", 1);
  call.profiles = true;
  const RunnerOutcome out = call_tool(call);
  ::unsetenv(kIsolateVar);
  EXPECT_TRUE(out.ok()) << out.message;
  EXPECT_EQ(said("tmpdir"), "/tmp");
  EXPECT_EQ(said("turn"), "free");
}

TEST_F(ToolRun, ASanitizerRunTakesNoProfilerTurnAndKeepsTheUsualTmpdir) {
  const RunnerOutcome out = call_tool(call);
  EXPECT_TRUE(out.ok()) << out.message;
  EXPECT_EQ(said("tmpdir"), "/tmp");
  EXPECT_EQ(said("turn"), "free");
}

// A tool run's program asks for one hardware queue, whatever the grader's
// own environment says (hardware_queues.hpp).
TEST_F(ToolRun, AToolRunsProgramAsksForOneHardwareQueue) {
  ::setenv("CUDA_DEVICE_MAX_CONNECTIONS", "8", 1);
  for (const bool profiles : {true, false}) {
    call.profiles = profiles;
    const RunnerOutcome out = call_tool(call);
    EXPECT_TRUE(out.ok()) << out.message;
    EXPECT_EQ(said("queues"), "queues=1") << (profiles ? "ncu" : "compute-sanitizer");
  }
  ::unsetenv("CUDA_DEVICE_MAX_CONNECTIONS");
}

}  // namespace
}  // namespace grader
