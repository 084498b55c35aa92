#include "tool_run.hpp"

#include <gtest/gtest.h>
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
    // whether another process could take the profiler turn while it runs.
    tool = dir / "tool.sh";
    std::ofstream(tool) << "#!/bin/sh\necho \"$TMPDIR\" > " << (dir / "tmpdir").string()
                        << "\ntest -d \"$TMPDIR\" && echo yes > " << (dir / "existed").string() << "\nif flock -n -x "
                        << lock.string() << ".ncu true; then echo free; else echo held; fi > "
                        << (dir / "turn").string() << "\n";
    fs::permissions(tool, fs::perms::owner_all);
    call.tool = {tool.string()};
    call.worker = dir / "worker";  // never run: the stand-in ignores it
    call.work_dir = dir / "work";
    call.timeout_s = 20;
  }
  void TearDown() override {
    set_process_gpu_lock({});
    fs::remove_all(dir);
  }
  std::string said(const std::string& name) {
    std::ifstream in(dir / name);
    std::string line;
    std::getline(in, line);
    return line;
  }
  fs::path dir, lock, tool;
  ToolCall call;
};

// ncu runs in the machine's profiler turn with a TMPDIR of its own (so ncu's
// own lock file in /tmp, which a second user may not open, is never used),
// and that folder is gone after the run.
TEST_F(ToolRun, AProfilerRunsInTheProfilerTurnWithATmpdirOfItsOwn) {
  call.profiles = true;
  const RunnerOutcome out = call_tool(call);
  EXPECT_TRUE(out.ok()) << out.message;
  const std::string tmpdir = said("tmpdir");
  EXPECT_EQ(tmpdir.rfind("/tmp/cuda-memory-labs-tmp-", 0), 0u) << tmpdir;
  EXPECT_LT(tmpdir.size(), 40u);  // ncu may make sockets there: a short path
  EXPECT_EQ(said("existed"), "yes");
  EXPECT_FALSE(fs::exists(tmpdir));
  EXPECT_EQ(said("turn"), "held");
}

// A profile that waits for its turn holds no GPU turn meanwhile, so a timing
// (which needs the GPU alone) never waits behind a queue of profiles.
TEST_F(ToolRun, AProfileWaitingForItsTurnHoldsNoGpuTurn) {
  { const GpuTurn made(lock, memlabs::GpuUse::shared); }
  auto other = std::make_unique<ProfilerTurn>();  // another grade is profiling
  call.profiles = true;
  std::thread profile([&] { EXPECT_TRUE(call_tool(call).ok()); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(fs::exists(dir / "turn")) << "it ran beside another profile";
  EXPECT_EQ(std::system(("flock -n -x " + lock.string() + " true").c_str()), 0) << "it waits holding a GPU turn";
  other.reset();
  profile.join();
  EXPECT_EQ(said("turn"), "held");
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

}  // namespace
}  // namespace grader
