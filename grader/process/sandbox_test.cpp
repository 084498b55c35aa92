#include "sandbox.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <thread>

#include "host/isolation.hpp"
#include "sealed_run.hpp"

namespace fs = std::filesystem;
using namespace grader;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class SandboxDir : public ::testing::Test {
 protected:
  void SetUp() override {
    // Not under /tmp: isolation hides /tmp, and this folder plays the course.
    base = fs::current_path() / ("sandbox_test-" + std::to_string(::getpid()));
    fs::remove_all(base);
    fs::create_directories(base / "solutions");
    fs::create_directories(base / "own");
    std::ofstream(base / "solutions" / "kernel.cu") << "the answer";
  }
  void TearDown() override { fs::remove_all(base); }

  // Runs a shell script as the referee runs a submission's program in bwrap mode.
  ChildResult run_sandboxed(const std::string& script, const BwrapStatus& bw) {
    memlabs::Isolation iso;
    iso.mode = memlabs::IsolationMode::bwrap;
    iso.bwrap = bw.program.string();
    iso.hide = {(base / "solutions").string()};
    ChildOptions o;
    o.argv = memlabs::bwrap_command(iso, {}, {(base / "own").string()}, {"/bin/sh", "-c", script});
    o.timeout_s = 20;
    o.stdout_file = base / "out.txt";
    o.stderr_file = base / "err.txt";
    return run_child(o);
  }
  fs::path base;
};

}  // namespace

TEST(Sandbox, SettingsTravelThroughTheEnvironment) {
  IsolationSettings s;
  s.mode = memlabs::IsolationMode::bwrap;
  s.hide = {"/a", "/b c"};
  s.writable = {"/w"};
  for (const auto& kv : isolation_environment(s)) {
    const auto eq = kv.find('=');
    ::setenv(kv.substr(0, eq).c_str(), kv.substr(eq + 1).c_str(), 1);
  }
  const IsolationSettings back = isolation_from_environment();
  EXPECT_EQ(back.mode, memlabs::IsolationMode::bwrap);
  EXPECT_EQ(back.hide, s.hide);
  EXPECT_EQ(back.writable, s.writable);
  for (const char* v : {kIsolateVar, kIsolateHideVar, kIsolateWritableVar}) ::unsetenv(v);
  EXPECT_FALSE(isolation_from_environment().enabled());
}

// GRADER_ISOLATE is set only to isolate: any value but bwrap (a typo, "none")
// still gets the limits and the seal, never no isolation at all.
TEST(Sandbox, AnyIsolateValueButBwrapStillIsolates) {
  for (const char* v : {"rlimits", "none", "bwarp", "1"}) {
    ::setenv(kIsolateVar, v, 1);
    EXPECT_EQ(isolation_from_environment().mode, memlabs::IsolationMode::rlimits) << v;
  }
  ::setenv(kIsolateVar, "bwrap", 1);
  EXPECT_EQ(isolation_from_environment().mode, memlabs::IsolationMode::bwrap);
  ::setenv(kIsolateVar, "", 1);
  EXPECT_FALSE(isolation_from_environment().enabled()) << "set but empty: not asked";
  ::unsetenv(kIsolateVar);
}

TEST_F(SandboxDir, CpuLimitStopsASpinningProgram) {
  ChildOptions o;
  o.argv = {"/bin/sh", "-c", "while :; do :; done"};
  o.timeout_s = 30;
  o.max_cpu_seconds = 1;
  const ChildResult r = run_child(o);
  EXPECT_TRUE(r.signaled) << r.describe();
  EXPECT_FALSE(r.timed_out);
}

TEST_F(SandboxDir, BwrapHidesSolutionsKeepsWritesInsideAndDropsTheUser) {
  const BwrapStatus bw = probe_bwrap();
  if (!bw.works) GTEST_SKIP() << bw.reason;
  const std::string sol = (base / "solutions" / "kernel.cu").string();
  // Another checkout of the course, hidden by no one: the allow-list leaves it out.
  fs::create_directories(base / "another-checkout");
  std::ofstream(base / "another-checkout" / "kernel.cu") << "another answer";
  const ChildResult r = run_sandboxed("if cat " + sol +
                                          "; then echo READ; fi; "
                                          "if cat " +
                                          (base / "another-checkout" / "kernel.cu").string() +
                                          "; then echo READ_ELSEWHERE; fi; "
                                          "if echo x > " +
                                          (base / "escaped").string() +
                                          "; then echo WROTE; fi; "
                                          "echo mine > " +
                                          (base / "own" / "mine").string() +
                                          "; "
                                          "echo ifaces=$(grep -c : /proc/net/dev); echo pid=$$; echo uid=$(id -u)",
                                      bw);
  ASSERT_TRUE(r.exited) << r.describe() << slurp(base / "err.txt");
  const std::string out = slurp(base / "out.txt");
  EXPECT_EQ(out.find("READ"), std::string::npos) << out;
  EXPECT_EQ(out.find("the answer"), std::string::npos) << out;
  EXPECT_EQ(out.find("another answer"), std::string::npos) << out;
  EXPECT_EQ(out.find("READ_ELSEWHERE"), std::string::npos) << out;
  // Outside the writable folder a write fails, or (where this folder lies
  // under a hidden one, e.g. a checkout in /tmp) lands in a throwaway tmpfs:
  // either way nothing reaches the real file system.
  EXPECT_FALSE(fs::exists(base / "escaped")) << out;
  EXPECT_TRUE(fs::exists(base / "own" / "mine"));
  EXPECT_NE(out.find("ifaces=1\n"), std::string::npos) << "only the loopback interface: " << out;
  EXPECT_EQ(out.find("pid=1\n"), std::string::npos) << "bwrap's own init is pid 1: " << out;
  EXPECT_NE(out.find("uid=65534"), std::string::npos) << "nobody, in a user namespace of its own: " << out;
  EXPECT_TRUE(fs::exists(base / "solutions" / "kernel.cu"));  // hidden, not touched
}

TEST_F(SandboxDir, NothingStartedInsideOutlivesTheSandbox) {
  const BwrapStatus bw = probe_bwrap();
  if (!bw.works) GTEST_SKIP() << bw.reason;
  // A daemon that would write a file a second later: the pid namespace ends with the sandbox.
  const ChildResult r =
      run_sandboxed("setsid sh -c 'sleep 1; echo late > " + (base / "own" / "late").string() + "' & exit 0", bw);
  ASSERT_TRUE(r.exited) << r.describe();
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_FALSE(fs::exists(base / "own" / "late")) << "a process outlived its sandbox";
}

// Under ncu or compute-sanitizer, the tool's injection library (LD_PRELOAD) may
// live anywhere (ncu's in /opt/nvidia): grader-seal binds its folder into the
// sandbox, where the allow-list would leave it out and the program would start
// without it (the profile then saw no launch at all).
TEST_F(SandboxDir, AToolsInjectedLibraryLoadsInTheSandbox) {
  const BwrapStatus bw = probe_bwrap();
  if (!bw.works) GTEST_SKIP() << bw.reason;
  const fs::path lib = base / "tool" / "target" / "lib" / "libinjected.so.2";
  fs::create_directories(lib.parent_path());
  fs::copy_file("/lib/x86_64-linux-gnu/libdl.so.2", lib);
  memlabs::Isolation iso;
  iso.mode = memlabs::IsolationMode::bwrap;
  iso.bwrap = bw.program.string();
  ChildOptions o;
  o.argv = memlabs::bwrap_command(iso, {}, {(base / "own").string()},
                                  {"/bin/sh", "-c", "grep -c libinjected /proc/self/maps"}, /*under_tool=*/true);
  o.argv.insert(o.argv.begin(), {seal_launcher().string(), "--bwrap-under-tool"});
  o.env = std::vector<std::string>{"PATH=/usr/bin:/bin", "LD_PRELOAD=" + lib.string()};
  o.timeout_s = 20;
  o.stdout_file = base / "out.txt";
  o.stderr_file = base / "err.txt";
  const ChildResult r = run_child(o);
  ASSERT_TRUE(r.exited) << r.describe() << slurp(base / "err.txt");
  EXPECT_EQ(r.exit_code, 0) << slurp(base / "out.txt") << slurp(base / "err.txt");
  EXPECT_EQ(slurp(base / "err.txt").find("cannot be preloaded"), std::string::npos) << slurp(base / "err.txt");
}
