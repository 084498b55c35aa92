// The seal on this machine's kernel: what a sealed process can and cannot
// reach. Each case runs in a child of its own, since a seal never comes off.
#include "seal.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

namespace fs = std::filesystem;
using memlabs::SealSpec;

namespace {

class Seal : public ::testing::Test {
 protected:
  void SetUp() override {
    if (memlabs::landlock_abi() == 0) GTEST_SKIP() << "no Landlock on this kernel: the allow-list cannot be tested";
    char tmpl[] = "/tmp/seal-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    for (const char* d : {"readable", "writable", "hidden"}) fs::create_directories(root_ / d);
    for (const char* d : {"readable", "hidden"}) std::ofstream(root_ / d / "file") << "text\n";
  }
  void TearDown() override {
    std::error_code ec;
    if (!root_.empty()) fs::remove_all(root_, ec);
  }
  SealSpec spec() const {
    SealSpec s;
    s.read = memlabs::system_read_folders();
    s.read.push_back((root_ / "readable").string());
    s.write.push_back((root_ / "writable").string());
    s.require_landlock = true;
    return s;
  }
  // Runs `body` sealed by `s` in a child; its exit code.
  static int sealed(const SealSpec& s, const std::function<int()>& body) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      bool applied = false;
      if (!memlabs::seal_this_process(s, applied).empty() || !applied) ::_exit(100);
      ::_exit(body());
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 200;
  }
  // Runs the launcher's command line `argv` to its end (or until it is stopped:
  // then it is killed and `stopped` says so); its wait status.
  static int run_launcher(const std::vector<std::string>& argv, bool& stopped) {
    const pid_t launcher = ::fork();
    if (launcher == 0) {
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
    int status = 0;
    ::waitpid(launcher, &status, WUNTRACED);
    stopped = WIFSTOPPED(status);
    if (stopped) {
      ::kill(launcher, SIGKILL);
      ::waitpid(launcher, &status, 0);
    }
    return status;
  }
  static bool can_read(const fs::path& f) { return static_cast<bool>(std::ifstream(f)); }
  static bool can_write(const fs::path& f) { return static_cast<bool>(std::ofstream(f)); }
  fs::path root_;
};

TEST_F(Seal, ReadsOnlyTheAllowedFolders) {
  EXPECT_EQ(sealed(spec(), [&] { return can_read(root_ / "readable" / "file") ? 0 : 1; }), 0);
  EXPECT_EQ(sealed(spec(), [&] { return can_read(root_ / "hidden" / "file") ? 1 : 0; }), 0)
      << "a file the user may read by its mode, outside the allow-list, was read";
}

TEST_F(Seal, WritesOnlyTheWritableFolders) {
  EXPECT_EQ(sealed(spec(), [&] { return can_write(root_ / "writable" / "new") ? 0 : 1; }), 0);
  EXPECT_EQ(sealed(spec(), [&] { return can_write(root_ / "readable" / "new") ? 1 : 0; }), 0);
  EXPECT_EQ(sealed(spec(), [&] { return can_write(root_ / "hidden" / "file") ? 1 : 0; }), 0);
}

// The CUDA runtime names its threads (open with O_TRUNC): without that it
// fails every call with cudaErrorOperatingSystem.
TEST_F(Seal, LetsAThreadBeNamed) {
  EXPECT_EQ(sealed(spec(),
                   [] {
                     const std::string comm = "/proc/self/task/" + std::to_string(::gettid()) + "/comm";
                     const int fd = ::open(comm.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0666);
                     return fd >= 0 && ::write(fd, "sealed", 6) == 6 ? 0 : 1;
                   }),
            0);
}

TEST_F(Seal, SignalsNoProcessOutsideItsSandbox) {
  if (memlabs::landlock_abi() < 6) GTEST_SKIP() << "Landlock " << memlabs::landlock_abi() << " has no signal scope";
  const pid_t outside = ::fork();
  if (outside == 0) {
    ::pause();
    ::_exit(0);
  }
  EXPECT_EQ(sealed(spec(), [&] { return ::kill(outside, SIGKILL) == 0 ? 1 : 0; }), 0);
  ::kill(outside, SIGKILL);
  ::waitpid(outside, nullptr, 0);
}

// Under a tool the launcher stays as the program's parent, to end every process
// of the run's user once the program has ended. The program must reach it with
// no signal: a launcher it stopped or killed left the tool's run broken (a
// verdict the program chose) and its processes alive.
TEST_F(Seal, AProgramUnderAToolCanNeitherStopNorKillItsLauncher) {
  if (::geteuid() != 0) GTEST_SKIP() << "not root: the seal keeps the user";
  SealSpec s = spec();
  s.change_identity = true;
  s.uid = s.gid = 0x60000125;
  s.under_tool = true;
  const std::string script = "kill -KILL $PPID 2>/dev/null && exit 3; kill -STOP $PPID 2>/dev/null && exit 4; exit 7";
  const std::vector<std::string> argv = memlabs::seal_command(GRADER_SEAL, s, {"/bin/sh", "-c", script});
  bool stopped = false;
  const int status = run_launcher(argv, stopped);
  ASSERT_FALSE(stopped) << "the program stopped its launcher";
  ASSERT_FALSE(WIFSIGNALED(status)) << "the program killed its launcher (signal " << WTERMSIG(status) << ")";
  EXPECT_EQ(WEXITSTATUS(status), 7) << "the program's own exit status, after both signals were refused";
}

// Processes of `uid` that are alive: a zombie waits only for whoever adopted it to reap it.
std::size_t alive_processes_of(uid_t uid) {
  std::size_t alive = 0;
  for (const auto& e : fs::directory_iterator("/proc")) {
    struct stat st {};
    if (!std::isdigit(static_cast<unsigned char>(e.path().filename().string()[0])) ||
        ::stat(e.path().c_str(), &st) != 0 || st.st_uid != uid)
      continue;
    std::string stat_line;
    std::getline(std::ifstream(e.path() / "stat"), stat_line);
    const auto paren = stat_line.rfind(')');
    if (paren != std::string::npos && paren + 2 < stat_line.size() && stat_line[paren + 2] != 'Z') ++alive;
  }
  return alive;
}

// A daemon the program leaves (a new session, its parent gone) ends with the run.
TEST_F(Seal, NothingOfTheRunsUserOutlivesTheLauncherUnderATool) {
  if (::geteuid() != 0) GTEST_SKIP() << "not root: the seal keeps the user";
  SealSpec s = spec();
  s.change_identity = true;
  s.uid = s.gid = 0x60000126;
  s.under_tool = true;
  const std::vector<std::string> argv =
      memlabs::seal_command(GRADER_SEAL, s, {"/bin/sh", "-c", "(setsid sleep 60 &); exit 5"});
  bool stopped = false;
  const int status = run_launcher(argv, stopped);
  ASSERT_FALSE(stopped);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 5) << "the program's own exit status";
  // SIGKILL ends a process the next time it is scheduled: on a loaded machine one
  // may still be on its way out when the launcher returns (it runs no more of its
  // own code). Without the ending, the daemon lives its whole minute.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  std::size_t left = alive_processes_of(s.uid);
  while (left != 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    left = alive_processes_of(s.uid);
  }
  EXPECT_EQ(left, 0u) << "processes of the run's user outlived it";
}

TEST_F(Seal, BecomesItsOwnUserAsRoot) {
  if (::geteuid() != 0) GTEST_SKIP() << "not root: the seal keeps the user";
  SealSpec s = spec();
  s.change_identity = true;
  s.uid = s.gid = 0x60000123;
  EXPECT_EQ(sealed(s, [] { return ::getuid() == 0x60000123 && ::geteuid() == 0x60000123 ? 0 : 1; }), 0);
  // Root's files, mode 0600, stay closed to it.
  const fs::path secret = root_ / "writable" / "secret";
  std::ofstream(secret) << "x";
  fs::permissions(secret, fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(sealed(s, [&] { return can_read(secret) ? 1 : 0; }), 0);
}

TEST(SealArgs, ReadBackAsWritten) {
  SealSpec s;
  s.read = {"/a", "/b"};
  s.write = {"/w"};
  s.change_identity = true;
  s.uid = 1610612737;
  s.gid = 1610612737;
  s.require_landlock = true;
  s.under_tool = true;
  s.cpu_seconds = 30;
  s.file_bytes = 1 << 20;
  s.processes = 64;
  const auto argv = memlabs::seal_command("/bin/grader-seal", s, {"/bin/prog", "--", "x"});
  std::vector<std::string> program;
  const SealSpec r = memlabs::parse_seal_args({argv.begin() + 1, argv.end()}, program);
  EXPECT_EQ(r.read, s.read);
  EXPECT_EQ(r.write, s.write);
  EXPECT_TRUE(r.change_identity);
  EXPECT_EQ(r.uid, s.uid);
  EXPECT_EQ(r.gid, s.gid);
  EXPECT_TRUE(r.require_landlock);
  EXPECT_TRUE(r.under_tool);
  EXPECT_EQ(r.cpu_seconds, 30);
  EXPECT_EQ(r.file_bytes, 1u << 20);
  EXPECT_EQ(r.processes, 64u);
  EXPECT_EQ(program, (std::vector<std::string>{"/bin/prog", "--", "x"}));
}

TEST(SealArgs, RefuseWhatTheyDoNotKnow) {
  std::vector<std::string> program;
  EXPECT_THROW(memlabs::parse_seal_args({"--bogus", "1", "--", "p"}, program), std::invalid_argument);
  EXPECT_THROW(memlabs::parse_seal_args({"--uid", "5", "--", "p"}, program), std::invalid_argument);
  EXPECT_THROW(memlabs::parse_seal_args({"--read", "/x"}, program), std::invalid_argument);
}

}  // namespace
