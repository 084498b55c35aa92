#include "child_process.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

namespace grader {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Processes of a group that are still alive (zombies are dead: they only
// wait for their parent to collect them).
int live_members(int pgid) {
  int n = 0;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    const auto close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 1));
    char state;
    int ppid, pgrp;
    if (rest >> state >> ppid >> pgrp && pgrp == pgid && state != 'Z') ++n;
  }
  return n;
}

// SIGKILL is delivered asynchronously: give the members a moment to die.
bool group_gone(int pgid) {
  for (int i = 0; i < 100; ++i) {
    if (live_members(pgid) == 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

class ChildProcess : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "child_process_test.XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  ChildOptions shell(const std::string& script, double timeout_s = 10) const {
    ChildOptions o;
    o.argv = {"sh", "-c", script};
    o.timeout_s = timeout_s;
    o.stdout_file = dir_ / "out.txt";
    o.stderr_file = dir_ / "err.txt";
    return o;
  }

  fs::path dir_;
};

TEST_F(ChildProcess, ExitCode) {
  const auto r = run_child(shell("echo to-out; echo to-err >&2; exit 3"));
  ASSERT_TRUE(r.started) << r.start_error;
  EXPECT_TRUE(r.exited);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(r.signaled);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.describe(), "exited with code 3");
  EXPECT_EQ(slurp(dir_ / "out.txt"), "to-out\n");
  EXPECT_EQ(slurp(dir_ / "err.txt"), "to-err\n");
}

TEST_F(ChildProcess, OneFileForBothStreamsKeepsTheirOrder) {
  auto o = shell("echo one; echo two >&2; echo three");
  o.stderr_file = o.stdout_file;
  const auto r = run_child(o);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(slurp(o.stdout_file), "one\ntwo\nthree\n");
}

TEST_F(ChildProcess, KilledBySignal) {
  const auto r = run_child(shell("kill -SEGV $$"));
  ASSERT_TRUE(r.started);
  EXPECT_FALSE(r.exited);
  EXPECT_TRUE(r.signaled);
  EXPECT_EQ(r.signal, SIGSEGV);
  EXPECT_EQ(r.describe(), "killed by SIGSEGV (segmentation fault)");
  EXPECT_FALSE(fs::exists(dir_ / "core")) << "core dumps are off in the child";
}

TEST_F(ChildProcess, TimeoutKillsPromptly) {
  ChildOptions o = shell("");
  o.argv = {"sleep", "30"};
  o.timeout_s = 0.5;
  const auto r = run_child(o);
  ASSERT_TRUE(r.started);
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.signaled) << "our own kill is not the program's crash";
  EXPECT_GE(r.wall_s, 0.5);
  EXPECT_LT(r.wall_s, 2.0);
  EXPECT_EQ(r.describe(), "timed out after 0.5 s");
  EXPECT_TRUE(group_gone(r.pid));
}

TEST_F(ChildProcess, TimeoutKillsGrandchildrenToo) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = run_child(shell("sleep 30 & sleep 30", 0.5));
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 2.0);
  EXPECT_TRUE(r.timed_out);
  EXPECT_TRUE(group_gone(r.pid)) << "the background sleep survived the timeout";
}

// A tool run whose answer is no longer needed (the program hung in its
// correctness run, or the grade is decided) stops at once, with its group.
TEST_F(ChildProcess, CancelStopsTheChildAndItsGroup) {
  std::atomic<bool> cancel{false};
  ChildOptions o = shell("sleep 30 & sleep 30", 60);
  o.cancel = &cancel;
  std::thread later([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    cancel = true;
  });
  const auto r = run_child(o);
  later.join();
  ASSERT_TRUE(r.started);
  EXPECT_TRUE(r.cancelled);
  EXPECT_FALSE(r.timed_out);
  EXPECT_FALSE(r.signaled) << "our own kill is not the program's crash";
  EXPECT_LT(r.wall_s, 3.0);
  EXPECT_EQ(r.describe(), "stopped: its result was no longer needed");
  EXPECT_TRUE(group_gone(r.pid));
}

TEST_F(ChildProcess, AnUnsetCancelChangesNothing) {
  std::atomic<bool> cancel{false};
  ChildOptions o = shell("exit 3");
  o.cancel = &cancel;
  const auto r = run_child(o);
  EXPECT_TRUE(r.exited);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(r.cancelled);
}

TEST_F(ChildProcess, NothingOutlivesANormalExit) {
  const auto r = run_child(shell("sleep 30 & exit 0"));
  EXPECT_TRUE(r.exited);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_LT(r.wall_s, 2.0);
  EXPECT_TRUE(group_gone(r.pid));
}

TEST_F(ChildProcess, MissingProgram) {
  ChildOptions o = shell("");
  o.argv = {(dir_ / "no-such-runner").string()};
  auto r = run_child(o);
  EXPECT_FALSE(r.started);
  EXPECT_NE(r.start_error.find("No such file or directory"), std::string::npos) << r.start_error;
  EXPECT_NE(r.start_error.find("no-such-runner"), std::string::npos) << r.start_error;
  EXPECT_EQ(r.describe().rfind("could not start: ", 0), 0u);

  o.argv = {"no-such-program-on-path-42"};
  r = run_child(o);
  EXPECT_FALSE(r.started);
  EXPECT_NE(r.start_error.find("No such file or directory"), std::string::npos) << r.start_error;
}

TEST_F(ChildProcess, UnopenableOutputFileIsAStartError) {
  auto o = shell("exit 0");
  o.stdout_file = dir_ / "missing-dir" / "out.txt";
  const auto r = run_child(o);
  EXPECT_FALSE(r.started);
  EXPECT_NE(r.start_error.find("missing-dir"), std::string::npos) << r.start_error;
}

TEST_F(ChildProcess, HugeOutputGoesToTheFileWithoutDeadlock) {
  const auto r = run_child(shell("yes | head -c 50000000", 30));
  ASSERT_TRUE(r.exited) << r.describe();
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(fs::file_size(dir_ / "out.txt"), 50000000u);

  const std::string head = read_head(dir_ / "out.txt", 1000);
  std::string expected;
  for (int i = 0; i < 500; ++i) expected += "y\n";
  EXPECT_EQ(head, expected + "... [truncated: 50.0 MB more]");
}

// The end of a file, from a whole line on, printable, never through a link.
TEST_F(ChildProcess, ReadTailStartsAtALineAndSaysWhatCameBefore) {
  {
    std::ofstream f(dir_ / "err.txt");
    for (int i = 0; i < 1000; ++i) f << "line " << i << "\n";
    f << "waiting for the GPU \033[2J(held by another grade)\n";
  }
  const std::string tail = read_tail(dir_ / "err.txt", 60);
  EXPECT_EQ(tail.rfind("[", 0), 0u) << tail;
  EXPECT_NE(tail.find("before] ...\n"), std::string::npos) << tail;
  EXPECT_NE(tail.find("waiting for the GPU"), std::string::npos) << tail;
  EXPECT_EQ(tail.find('\033'), std::string::npos) << "a control character came through";
  EXPECT_EQ(read_tail(dir_ / "err.txt", 1 << 20).rfind("line 0\n", 0), 0u) << "a short file comes whole";
  fs::create_symlink(dir_ / "err.txt", dir_ / "link.txt");
  EXPECT_EQ(read_tail(dir_ / "link.txt", 100), "");
  EXPECT_EQ(read_tail(dir_ / "missing.txt", 100), "");
}

TEST_F(ChildProcess, FileSizeLimitStopsARunawayWriter) {
  ChildOptions o = shell("");
  o.argv = {"yes"};
  o.max_file_bytes = 1 << 20;
  const auto r = run_child(o);
  EXPECT_TRUE(r.signaled) << r.describe();
  EXPECT_EQ(r.signal, SIGXFSZ);
  EXPECT_EQ(r.describe(), "killed by SIGXFSZ (output file size limit exceeded)");
  EXPECT_EQ(fs::file_size(dir_ / "out.txt"), 1u << 20);
}

TEST_F(ChildProcess, CpuLimit) {
  auto o = shell("while :; do :; done", 20);
  o.max_cpu_seconds = 1;
  const auto r = run_child(o);
  EXPECT_TRUE(r.signaled) << r.describe();
  EXPECT_EQ(r.signal, SIGXCPU);
  EXPECT_FALSE(r.timed_out);
}

TEST_F(ChildProcess, EnvironmentAndWorkingDirectory) {
  fs::create_directory(dir_ / "lab");
  auto o = shell("echo \"$GREETING\"; echo \"${HOME:-no home}\"; pwd");
  o.env = std::vector<std::string>{"GREETING=hello", "PATH=/usr/bin:/bin"};
  o.cwd = dir_ / "lab";
  const auto r = run_child(o);
  ASSERT_TRUE(r.exited) << r.describe();
  EXPECT_EQ(slurp(o.stdout_file), "hello\nno home\n" + fs::canonical(dir_ / "lab").string() + "\n");

  // Without env the grader's own environment is inherited.
  ::setenv("CHILD_PROCESS_TEST_MARK", "inherited", 1);
  o.env.reset();
  o.argv = {"sh", "-c", "echo $CHILD_PROCESS_TEST_MARK"};
  run_child(o);
  EXPECT_EQ(slurp(o.stdout_file), "inherited\n");
  ::unsetenv("CHILD_PROCESS_TEST_MARK");
}

TEST_F(ChildProcess, RelativeProgramRunsFromCwd) {
  std::ofstream(dir_ / "runner.sh") << "#!/bin/sh\nexit 7\n";
  fs::permissions(dir_ / "runner.sh", fs::perms::owner_all);
  auto o = shell("");
  o.argv = {"./runner.sh"};
  o.cwd = dir_;
  const auto r = run_child(o);
  EXPECT_TRUE(r.exited) << r.describe();
  EXPECT_EQ(r.exit_code, 7);
}

TEST_F(ChildProcess, InterruptKillsTheChildAndRestoresTheHandler) {
  struct sigaction before {};
  sigaction(SIGINT, nullptr, &before);
  // The child interrupts the grader itself, as a Ctrl-C would, then hangs.
  const auto r = run_child(shell("kill -INT $PPID; sleep 30 & sleep 30", 20));
  EXPECT_TRUE(r.interrupted);
  EXPECT_EQ(r.interrupt_signal, SIGINT);
  EXPECT_FALSE(r.timed_out);
  EXPECT_LT(r.wall_s, 2.0);
  EXPECT_EQ(r.describe(), "stopped because the grader got SIGINT");
  EXPECT_TRUE(group_gone(r.pid));
  struct sigaction after {};
  sigaction(SIGINT, nullptr, &after);
  EXPECT_EQ(after.sa_handler, before.sa_handler);
}

TEST_F(ChildProcess, IgnoredSigpipeIsNotInherited) {
  // A grader that ignores SIGPIPE must not leave `yes | head` spinning forever.
  struct sigaction ignore {
  }, old{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &old);
  // The shell's echo ignores write errors: only SIGPIPE ends the loop.
  const auto r = run_child(shell("while :; do echo y; done | head -c 10", 5));
  sigaction(SIGPIPE, &old, nullptr);
  EXPECT_TRUE(r.exited) << r.describe();
  EXPECT_EQ(slurp(dir_ / "out.txt"), "y\ny\ny\ny\ny\n");
}

TEST_F(ChildProcess, ThreadsRunChildrenSideBySide) {
  std::vector<ChildResult> results(4);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&, i] {
      ChildOptions o;
      o.argv = {"sh", "-c", "sleep 0.2; exit " + std::to_string(i)};
      results[i] = run_child(o);
    });
  for (auto& t : threads) t.join();
  for (int i = 0; i < 4; ++i) EXPECT_EQ(results[i].exit_code, i);
}

// A daemon leaves the child's process group (the pause lets it get out before
// the program ends), so the group's kill misses it; as a subreaper the grader
// adopts it, and the run's sweep ends it.
TEST_F(ChildProcess, AnOrphanLeftBySetsidIsSweptUp) {
  become_subreaper();
  const fs::path late = dir_ / "late";
  const auto r = run_child(shell("setsid sh -c 'sleep 1; echo late > " + late.string() + "' & sleep 0.3; exit 0"));
  ASSERT_TRUE(r.exited) << r.describe();
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_FALSE(fs::exists(late)) << "a daemon outlived its run";
}

// Each run sweeps up the orphans it adopted; another thread's child, forked a
// moment before and not yet reaped, is no orphan and must run to its end (a
// sweep once killed such a child before it printed a line).
TEST_F(ChildProcess, ASweepNeverTakesAnotherThreadsChildForAnOrphan) {
  constexpr int kThreads = 8, kRuns = 40;
  std::atomic<int> wrong{0};
  std::string first_wrong;
  std::mutex first_wrong_mutex;
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      for (int run = 0; run < kRuns; ++run) {
        ChildOptions o;
        o.argv = {"sh", "-c", "exit " + std::to_string(i + 1)};
        const ChildResult r = run_child(o);
        if (r.exited && r.exit_code == i + 1) continue;
        if (wrong++ == 0) {
          const std::lock_guard<std::mutex> hold(first_wrong_mutex);
          first_wrong = r.describe();
        }
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0) << "of " << kThreads * kRuns << " runs; the first: " << first_wrong;
}

}  // namespace
}  // namespace grader
