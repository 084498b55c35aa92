#include "sandbox.hpp"
#include "runner_client.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <thread>

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

  ChildResult run_sh(const IsolationSettings& s, const std::string& script) {
    ChildOptions o;
    o.argv = {"/bin/sh", "-c", script};
    o.cwd = base / "own";
    o.timeout_s = 20;
    o.stdout_file = base / "own" / "out.txt";
    o.stderr_file = base / "own" / "err.txt";
    isolate_launch(o, s, base / "own");
    ChildResult r = run_child(o);
    if (s.mode == "bwrap") undo_sandbox_exit_code(r);
    return r;
  }
  fs::path base;
};

}  // namespace

TEST(Sandbox, SettingsTravelThroughTheEnvironment) {
  IsolationSettings s;
  s.mode = "bwrap";
  s.hide = {"/a", "/b c"};
  s.writable = {"/w"};
  s.gpu_lock = "/course/.grader/gpu.lock";
  for (const auto& kv : isolation_environment(s)) {
    const auto eq = kv.find('=');
    ::setenv(kv.substr(0, eq).c_str(), kv.substr(eq + 1).c_str(), 1);
  }
  const IsolationSettings back = isolation_from_environment();
  EXPECT_EQ(back.mode, "bwrap");
  EXPECT_EQ(back.hide, s.hide);
  EXPECT_EQ(back.writable, s.writable);
  EXPECT_EQ(back.gpu_lock, s.gpu_lock);
  for (const char* v : {kIsolateVar, kIsolateHideVar, kIsolateWritableVar, kGpuLockVar}) ::unsetenv(v);
  EXPECT_FALSE(isolation_from_environment().enabled());
}

TEST(Sandbox, NotIsolatedMeansUnchanged) {
  ChildOptions o;
  o.argv = {"/bin/true"};
  isolate_launch(o, IsolationSettings{}, "/tmp");
  EXPECT_EQ(o.argv, std::vector<std::string>{"/bin/true"});
  EXPECT_EQ(o.max_processes, 0u);
  EXPECT_EQ(o.max_cpu_seconds, 0u);
}

TEST(Sandbox, SandboxExitCodeBecomesTheSignal) {
  ChildResult r;
  r.exited = true;
  r.exit_code = 128 + 11;
  undo_sandbox_exit_code(r);
  EXPECT_TRUE(r.signaled);
  EXPECT_EQ(r.signal, 11);
  ChildResult ok;
  ok.exited = true;
  ok.exit_code = 1;
  undo_sandbox_exit_code(ok);
  EXPECT_TRUE(ok.exited);
  EXPECT_EQ(ok.exit_code, 1);
}

TEST_F(SandboxDir, RlimitsHold) {
  IsolationSettings s;
  s.mode = "rlimits";
  const ChildResult r = run_sh(s, "cat /proc/self/limits");
  ASSERT_TRUE(r.exited) << r.describe();
  const std::string limits = slurp(base / "own" / "out.txt");
  const std::string nproc = std::to_string(isolated_process_limit());
  EXPECT_NE(limits.find("Max processes"), std::string::npos);
  // The limit is computed again per launch, so allow for tasks that came or went in between.
  const auto at = limits.find("Max processes");
  const long applied = std::atol(limits.substr(at + 13).c_str() + limits.substr(at + 13).find_first_not_of(' '));
  EXPECT_NEAR(applied, std::atol(nproc.c_str()), 64) << limits;
  EXPECT_NE(limits.find("Max cpu time              " + std::to_string(isolated_cpu_seconds(20))), std::string::npos) << limits;
  EXPECT_NE(limits.find("Max file size             " + std::to_string(256ull << 20)), std::string::npos) << limits;
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

TEST_F(SandboxDir, BwrapHidesSolutionsAndKeepsWritesInside) {
  const BwrapStatus bw = probe_bwrap();
  if (!bw.works) GTEST_SKIP() << bw.reason;
  IsolationSettings s;
  s.mode = "bwrap";
  s.hide = {base / "solutions"};
  const std::string sol = (base / "solutions" / "kernel.cu").string();
  const ChildResult r = run_sh(s, "if cat " + sol + "; then echo READ; fi; "
                                   "if echo x > " + (base / "escaped").string() + "; then echo WROTE; fi; "
                                   "echo mine > " + (base / "own" / "mine").string() + "; "
                                   "echo ifaces=$(grep -c : /proc/net/dev); echo pid=$$");
  ASSERT_TRUE(r.exited) << r.describe();
  const std::string out = slurp(base / "own" / "out.txt");
  EXPECT_EQ(out.find("READ"), std::string::npos) << out;
  EXPECT_EQ(out.find("the answer"), std::string::npos) << out;
  EXPECT_EQ(out.find("WROTE"), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(base / "escaped"));
  EXPECT_TRUE(fs::exists(base / "own" / "mine"));
  EXPECT_NE(out.find("ifaces=1\n"), std::string::npos) << "only the loopback interface: " << out;
  EXPECT_NE(out.find("pid=2"), std::string::npos) << "a pid namespace of its own: " << out;
  EXPECT_TRUE(fs::exists(base / "solutions" / "kernel.cu"));  // hidden, not touched
}

TEST_F(SandboxDir, BwrapCrashIsReportedAsACrash) {
  const BwrapStatus bw = probe_bwrap();
  if (!bw.works) GTEST_SKIP() << bw.reason;
  IsolationSettings s;
  s.mode = "bwrap";
  const ChildResult r = run_sh(s, "kill -SEGV $$");
  EXPECT_TRUE(r.signaled) << r.describe();
  EXPECT_EQ(r.signal, 11);
}

TEST_F(SandboxDir, GpuLockSerialises) {
  const fs::path lock = base / "gpu.lock";
  std::atomic<int> inside{0}, most{0};
  auto worker = [&] {
    FileLock l(lock);
    const int now = ++inside;
    most = std::max(most.load(), now);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    --inside;
  };
  std::thread a(worker), b(worker), c(worker);
  a.join();
  b.join();
  c.join();
  EXPECT_EQ(most.load(), 1);
  EXPECT_THROW(FileLock(base / "solutions" / "kernel.cu" / "gpu.lock"), std::runtime_error);  // under a file
}

// The path the batch uses: a child grader with GRADER_ISOLATE set calls its
// runner through call_runner, which must sandbox it, keep the result protocol
// working, and still report a crash as a crash.
TEST_F(SandboxDir, RunnerLaunchInIsolatedMode) {
  const BwrapStatus bw = probe_bwrap();
  const std::string mode = bw.works ? "bwrap" : "rlimits";
  const fs::path runner = base / "bin" / "runner.sh";
  fs::create_directories(runner.parent_path());
  std::ofstream(runner) << "#!/bin/sh\n"
                           "while [ $# -gt 0 ]; do case \"$1\" in --result) r=$2; shift;; --nonce) n=$2; shift;; "
                           "--crash) kill -SEGV $$;; esac; shift; done\n"
                           "if cat " << (base / "solutions" / "kernel.cu").string() << " >/dev/null 2>&1; then s=leaked; else s=hidden; fi\n"
                           "printf '{\"nonce\":\"%s\",\"status\":\"ok\",\"saw\":\"%s\"}' \"$n\" \"$s\" > \"$r\"\n";
  fs::permissions(runner, fs::perms::owner_all);
  ::setenv(kIsolateVar, mode.c_str(), 1);
  ::setenv(kIsolateHideVar, (base / "solutions").c_str(), 1);
  ::setenv(kGpuLockVar, (base / "gpu.lock").c_str(), 1);
  RunnerCall call;
  call.runner = runner;
  call.args = {"run"};
  call.work_dir = base / "run1";
  call.timeout_s = 20;
  const RunnerOutcome ok = call_runner(call);
  call.args = {"run", "--crash"};
  call.work_dir = base / "run2";
  const RunnerOutcome crash = call_runner(call);
  for (const char* v : {kIsolateVar, kIsolateHideVar, kGpuLockVar}) ::unsetenv(v);

  ASSERT_TRUE(ok.ok()) << ok.message << ok.stderr_head;
  EXPECT_EQ(ok.result.value("saw", ""), bw.works ? "hidden" : "leaked");  // rlimits alone hide nothing
  EXPECT_TRUE(fs::exists(base / "gpu.lock"));
  EXPECT_EQ(crash.category, "crash") << crash.message;
}
