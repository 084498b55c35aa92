// The referee's control of the processes it starts, on ordinary programs: a
// submission's program that leaves by setsid or a double fork still ends with
// its run, and a paused one is really stopped.
#include "server_process.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

namespace memlabs {
namespace {

class ServerProcessTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { become_referee(); }
};

SpawnOptions shell(const std::string& script) {
  SpawnOptions o;
  o.argv = {"/bin/sh", "-c", script};
  return o;
}

bool alive(pid_t p) { return ::kill(p, 0) == 0; }

// The state letter of /proc/<pid>/stat ('T' stopped, 'Z' zombie, ...).
char state_of(pid_t p) {
  std::ifstream in("/proc/" + std::to_string(p) + "/stat");
  std::string line;
  std::getline(in, line);
  const auto close = line.rfind(')');
  return close == std::string::npos || close + 2 >= line.size() ? '?' : line[close + 2];
}

void wait_for(const std::function<bool()>& done) {
  for (int i = 0; i < 200 && !done(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

TEST_F(ServerProcessTest, KillAllEndsProcessesThatLeftBySetsidAndDoubleFork) {
  // A daemon in a new session, and a grandchild orphaned by its parent's exit.
  ServerProcess p = ServerProcess::spawn(shell("setsid sleep 300 & (sleep 300 &) ; sleep 300"));
  std::vector<pid_t> seen;
  wait_for([&] {
    seen = descendants_of(::getpid());
    return seen.size() >= 4;  // sh, setsid'd sleep, orphaned sleep, sleep
  });
  ASSERT_GE(seen.size(), 3u);
  p.kill_all();
  for (pid_t q : seen) EXPECT_FALSE(alive(q) && state_of(q) != 'Z') << "process " << q << " outlived kill_all";
}

TEST_F(ServerProcessTest, PauseStopsEveryProcessAndResumeContinuesThem) {
  ServerProcess p = ServerProcess::spawn(shell("sleep 300 & while :; do :; done"));
  std::vector<pid_t> seen;
  wait_for([&] {
    seen = descendants_of(::getpid());
    return seen.size() >= 2;
  });
  ASSERT_TRUE(p.pause());
  for (pid_t q : seen) EXPECT_EQ(state_of(q), 'T') << q;
  p.resume();
  wait_for([&] { return state_of(p.pid()) != 'T'; });
  EXPECT_NE(state_of(p.pid()), 'T');
  p.kill_all();
}

// A pause stops what the last one found before it scans, and a resume
// continues what the last pause found without scanning: processes started
// while the program ran (here orphans, busy from the start) must still be
// stopped by the next pause and continued by the next resume.
// bash, not /bin/sh: dash starts `sleep` with vfork, and a pause that stops the
// vforked child before its exec leaves the shell waiting in the kernel, never
// stopped: the pause fails, charged to the program (server_process.cpp), which
// a loaded machine made this test do now and then.
TEST_F(ServerProcessTest, EachPauseStopsWhatStartedSinceTheLastAndResumeContinuesItAll) {
  SpawnOptions o = shell(
      "i=0; while [ $i -lt 4 ]; do (while :; do :; done &); i=$((i+1)); sleep 0.1; done; "
      "while :; do :; done");
  o.argv.front() = "/bin/bash";
  ServerProcess p = ServerProcess::spawn(o);
  std::vector<pid_t> seen;
  wait_for([&] { return descendants_of(::getpid()).size() >= 2; });
  ASSERT_TRUE(p.pause());
  const std::size_t first = descendants_of(::getpid()).size();
  p.resume();
  wait_for([&] {
    seen = descendants_of(::getpid());
    return seen.size() >= first + 2;
  });
  ASSERT_GE(seen.size(), first + 2) << "no process started while the program ran";
  ASSERT_TRUE(p.pause());
  seen = descendants_of(::getpid());
  // A zombie (a `sleep` that ended just before the pause, its shell stopped
  // before reaping it) runs nothing either.
  for (pid_t q : seen) EXPECT_TRUE(state_of(q) == 'T' || state_of(q) == 'Z') << q << " runs after the second pause";
  p.resume();
  std::vector<pid_t> busy;  // the loops: never stopped for long, never gone
  for (pid_t q : seen)
    if (alive(q) && state_of(q) != 'Z') busy.push_back(q);
  wait_for([&] {
    for (pid_t q : busy)
      if (state_of(q) == 'T') return false;
    return true;
  });
  for (pid_t q : busy) EXPECT_NE(state_of(q), 'T') << q << " still stopped after resume";
  p.kill_all();
  for (pid_t q : seen) EXPECT_FALSE(alive(q) && state_of(q) != 'Z') << q << " outlived kill_all";
}

TEST_F(ServerProcessTest, ARequestToAProgramThatNeverAnswersTimesOut) {
  ServerProcess p = ServerProcess::spawn(shell("sleep 300"));
  const Reply r = p.request({{"op", "nop"}}, 0.2);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.failure, NoReply::timeout);
}

TEST_F(ServerProcessTest, AProgramThatExitsIsGoneWithItsStatus) {
  ServerProcess p = ServerProcess::spawn(shell("exit 7"));
  const Reply r = p.request({{"op", "nop"}}, 5);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.failure, NoReply::gone);
  p.kill_all();
  EXPECT_EQ(p.ending(), "exited with code 7");
}

TEST_F(ServerProcessTest, AProgramThatCrashesSaysBySignal) {
  ServerProcess p = ServerProcess::spawn(shell("kill -SEGV $$"));
  p.request({{"op", "nop"}}, 5);
  p.kill_all();
  EXPECT_TRUE(p.crashed());
  EXPECT_NE(p.ending().find("SIGSEGV"), std::string::npos);
}

// Under bwrap the socket closes when the program dies, a moment before bwrap
// itself exits with 128 + the signal: the crash must still read as a crash.
TEST_F(ServerProcessTest, AProgramThatCrashesInsideBwrapSaysBySignal) {
  if (::access("/usr/bin/bwrap", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/bwrap";
  SpawnOptions o = shell("kill -SEGV $$");
  o.untrusted = true;
  o.isolation.mode = memlabs::IsolationMode::bwrap;
  o.isolation.bwrap = "/usr/bin/bwrap";
  for (int i = 0; i < 5; ++i) {
    ServerProcess p = ServerProcess::spawn(o);
    const Reply r = p.request({{"op", "nop"}}, 10);
    if (r.failure == NoReply::gone && !p.running() && !p.crashed() && p.ending().find("code 1") != std::string::npos)
      GTEST_SKIP() << "bwrap cannot run here: " << p.ending();
    EXPECT_EQ(r.failure, NoReply::gone);
    p.kill_all();
    EXPECT_TRUE(p.crashed()) << p.ending();
    EXPECT_NE(p.ending().find("SIGSEGV"), std::string::npos) << p.ending();
  }
}

TEST_F(ServerProcessTest, TheProgramGetsItsSocketAsDescriptor3AndNothingElse) {
  // A child of the shell lists the shell's open descriptors while the shell
  // only waits (running a pipeline itself, it would hold the pipe's descriptors
  // while ls looks); then the shell closes 3, which ends the request.
  const std::string script = "(ls /proc/$$/fd | sort -n | tr '\\n' ' ') & wait; exec 3>&-; sleep 1";
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  SpawnOptions o = shell(script);
  o.stdout_fd = p[1];
  ServerProcess sp = ServerProcess::spawn(o);
  ::close(p[1]);
  EXPECT_EQ(sp.request({{"op", "nop"}}, 5).failure, NoReply::gone);
  sp.kill_all();
  char buf[256] = {};
  const ssize_t n = ::read(p[0], buf, sizeof buf - 1);
  ::close(p[0]);
  ASSERT_GT(n, 0);
  EXPECT_EQ(std::string(buf), "0 1 2 3 ") << "stdin, stdout, stderr and the socket: nothing else is inherited";
}

// A submission's program may not fill the disk, isolated or not; and when the
// referee runs as root, the program does not.
TEST_F(ServerProcessTest, ASubmissionsProgramHasAFileSizeLimitAndIsNotRoot) {
  char name[] = "/tmp/server_process_test-XXXXXX";
  const int fd = ::mkstemp(name);
  ASSERT_GE(fd, 0);
  SpawnOptions o = shell("id -u; exec head -c 3000000 /dev/zero");
  o.untrusted = true;
  o.isolation.file_bytes = 1 << 20;
  o.stdout_fd = fd;
  ServerProcess p = ServerProcess::spawn(o);
  p.request({{"op", "nop"}}, 10);
  p.kill_all();
  struct stat st {};
  ::fstat(fd, &st);
  ::close(fd);
  std::ifstream in(name);
  std::string uid;
  std::getline(in, uid);
  ::unlink(name);
  EXPECT_TRUE(p.crashed()) << p.ending();
  EXPECT_EQ(p.signal(), SIGXFSZ) << p.ending();
  EXPECT_LE(st.st_size, 1 << 20);
  if (::geteuid() == 0) EXPECT_EQ(uid, "65534");
}

}  // namespace
}  // namespace memlabs

namespace memlabs {
namespace {

// A server on descriptor 3 that answers each request as `answer` says (Python,
// which every machine the tests run on has): "echo" gives back the request's
// id, "other" gives another, "ahead" first sends a reply nobody asked for.
SpawnOptions fake_server(const std::string& answer) {
  SpawnOptions o;
  o.argv = {"/usr/bin/python3", "-c",
            "import json, socket, sys, time\n"
            "s = socket.socket(fileno=3)\n"
            "mode = sys.argv[1]\n"
            "if mode == 'ahead':\n"
            "    s.send(b'{\"ok\": true}')\n"
            "while True:\n"
            "    m = s.recv(1 << 20)\n"
            "    if not m: break\n"
            "    q = json.loads(m)\n"
            "    i = q.get('id') if mode != 'other' else 12345\n"
            "    s.send(json.dumps({'ok': True, 'id': i}).encode())\n",
            answer};
  return o;
}

class RequestIdTest : public ServerProcessTest {
 protected:
  void SetUp() override {
    if (::access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3 for the fake server";
  }
};

TEST_F(RequestIdTest, AReplyThatGivesBackTheRequestsIdIsTaken) {
  ServerProcess p = ServerProcess::spawn(fake_server("echo"));
  const Reply r = p.request({{"op", "nop"}}, 10);
  EXPECT_TRUE(r.ok) << name_of(r.failure) << ": " << r.detail;
  EXPECT_FALSE(r.body.contains("id"));  // checked, then dropped
  EXPECT_TRUE(p.request({{"op", "nop"}}, 10).ok);
  p.kill_all();
}

TEST_F(RequestIdTest, AReplyWithAnotherIdIsOutsideTheProtocol) {
  ServerProcess p = ServerProcess::spawn(fake_server("other"));
  const Reply r = p.request({{"op", "nop"}}, 10);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.failure, NoReply::protocol);
  EXPECT_NE(r.detail.find("id"), std::string::npos) << r.detail;
  p.kill_all();
}

TEST_F(RequestIdTest, AReplyQueuedAheadOfItsRequestIsOutsideTheProtocol) {
  // The early reply would end the next request at once, before its work was done.
  ServerProcess p = ServerProcess::spawn(fake_server("ahead"));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // python starts and sends it
  const Reply r = p.request({{"op", "run"}}, 10);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.failure, NoReply::protocol);
  EXPECT_NE(r.detail.find("before the request"), std::string::npos) << r.detail;
  p.kill_all();
}

}  // namespace
}  // namespace memlabs
