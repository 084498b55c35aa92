// ServerProcess (server_process.hpp): a server started and held by the
// referee, one request at a time, paused and resumed with everything it
// started, and ended and reaped however its processes tried to leave. How the
// process is started is server_launch.cpp's; the /proc scan, process_table.cpp's.
#include "server_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>
#include <stdexcept>

#include "process_table.hpp"
#include "secure_random.hpp"
#include "server_launch.hpp"

namespace fs = std::filesystem;

namespace memlabs {
namespace {

// Every process a ServerProcess started itself; any other child of the
// referee is an orphan a submission left behind.
std::mutex g_mutex;
std::set<pid_t> g_started;

void nap_us(long us) {
  const timespec ts{us / 1000000, (us % 1000000) * 1000};
  ::nanosleep(&ts, nullptr);
}

const char* signal_name(int sig) {
  switch (sig) {
    case SIGSEGV:
      return "SIGSEGV (segmentation fault)";
    case SIGBUS:
      return "SIGBUS (bus error)";
    case SIGFPE:
      return "SIGFPE (arithmetic error)";
    case SIGILL:
      return "SIGILL (illegal instruction)";
    case SIGABRT:
      return "SIGABRT (aborted)";
    case SIGKILL:
      return "SIGKILL";
    case SIGXCPU:
      return "SIGXCPU (CPU time limit)";
    case SIGXFSZ:
      return "SIGXFSZ (file size limit)";
    case SIGTERM:
      return "SIGTERM";
    case SIGPIPE:
      return "SIGPIPE";
    default:
      return nullptr;
  }
}

}  // namespace

void become_referee() {
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  ::prctl(PR_SET_DUMPABLE, 0);
}

ServerProcess::~ServerProcess() { kill_all(); }

ServerProcess::ServerProcess(ServerProcess&& o) noexcept { *this = std::move(o); }

ServerProcess& ServerProcess::operator=(ServerProcess&& o) noexcept {
  if (this == &o) return *this;
  kill_all();
  pid_ = std::exchange(o.pid_, -1);
  channel_ = std::move(o.channel_);
  copied_program_dir_ = std::exchange(o.copied_program_dir_, "");
  reaped_ = o.reaped_;
  exited_ = o.exited_;
  signaled_ = o.signaled_;
  exit_code_ = o.exit_code_;
  signal_ = o.signal_;
  bwrap_ = o.bwrap_;
  recent_ = std::move(o.recent_);
  paused_ = std::exchange(o.paused_, {});
  return *this;
}

ServerProcess ServerProcess::spawn(const SpawnOptions& o) {
  if (o.argv.empty()) throw std::runtime_error("nothing to start");
  ServerProcess sp;
  auto [mine, theirs] = channel_pair();
  server_detail::ChildLaunch p;
  server_detail::prepare_launch(o, p, sp.copied_program_dir_, sp.bwrap_);
  const int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull < 0) throw std::runtime_error("cannot open /dev/null");
  p.in = devnull;
  p.out = o.stdout_fd >= 0 ? o.stdout_fd : devnull;
  p.err = o.stderr_fd >= 0 ? o.stderr_fd : devnull;
  p.sock = theirs.fd();

  std::lock_guard<std::mutex> lock(g_mutex);
  const pid_t pid = ::fork();
  if (pid == 0) server_detail::exec_child(p);
  const int fork_errno = errno;
  ::close(devnull);
  if (pid < 0) throw std::runtime_error(std::string("cannot fork: ") + std::strerror(fork_errno));
  g_started.insert(pid);
  sp.pid_ = pid;
  sp.channel_ = std::move(mine);
  return sp;
}

std::vector<pid_t> ServerProcess::processes() const {
  if (pid_ <= 0) return {};
  const auto table = server_detail::all_processes();
  std::vector<pid_t> roots;
  std::set<pid_t> started;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    started = g_started;
  }
  const pid_t self = ::getpid();
  bool alive = false;
  for (const auto& s : table) {
    if (s.pid == pid_ && s.state != 'Z' && s.state != 'X') alive = true;
    // Adopted orphans: children of the referee it did not start.
    if (s.ppid == self && !started.count(s.pid)) roots.push_back(s.pid);
  }
  std::vector<pid_t> out = server_detail::descendants(table, {pid_});
  const auto orphans = server_detail::descendants(table, roots);
  out.insert(out.end(), roots.begin(), roots.end());
  out.insert(out.end(), orphans.begin(), orphans.end());
  if (alive) out.push_back(pid_);
  return out;
}

namespace {

// What is wrong with `reply` as the answer to `sent`, or "" when nothing is.
std::string reply_problem(const nlohmann::json& reply, const nlohmann::json& sent) {
  if (!reply.contains("ok") || !reply["ok"].is_boolean()) return "a reply without \"ok\"";
  if (!reply.contains("id") || reply["id"] != sent["id"])
    return "a reply to another request than the one it was sent (its id differs)";
  return "";
}

}  // namespace

const char* name_of(NoReply why) {
  switch (why) {
    case NoReply::none:
      return "none";
    case NoReply::timeout:
      return "timeout";
    case NoReply::gone:
      return "gone";
    case NoReply::protocol:
      return "protocol";
  }
  return "none";  // not reached: every NoReply is named above
}

Reply ServerProcess::request(const nlohmann::json& body, double timeout_s, const std::vector<int>& fds) {
  Reply r;
  if (pid_ <= 0 || reaped_) {
    r.failure = NoReply::gone;
    return r;
  }
  const auto t0 = std::chrono::steady_clock::now();
  struct Note {  // one line of recent_, written however the request ends
    std::vector<std::string>& recent;
    const nlohmann::json& body;
    Reply& r;
    std::chrono::steady_clock::time_point t0;
    ~Note() {
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (recent.size() >= 12) recent.erase(recent.begin());
      recent.push_back(body.value("op", std::string("?")) + " " + std::to_string(s) + " s " +
                       (r.ok ? "ok" : name_of(r.failure)));
    }
  } note{recent_, body, r, t0};
  try {
    // A reply nobody asked for: one queued ahead of its request would end the
    // next request at once, before its work is done.
    if (channel_.has_message()) {
      r.failure = NoReply::protocol;
      r.detail = "a message it sent before the request (a reply queued ahead of what it answers)";
      return r;
    }
    // Each request carries a number no one can guess, which its reply must give back.
    nlohmann::json sent = body;
    sent["id"] = secure_random_u64();
    channel_.send(sent, fds);
    auto m = channel_.receive(timeout_s, /*accept_fds=*/false);
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!m) {
      r.failure = NoReply::timeout;
      return r;
    }
    if (std::string problem = reply_problem(m->body, sent); !problem.empty()) {
      r.failure = NoReply::protocol;
      r.detail = std::move(problem);
      return r;
    }
    m->body.erase("id");
    r.body = std::move(m->body);
    r.ok = true;
  } catch (const ChannelClosed&) {
    r.failure = NoReply::gone;
    // The channel closes a moment before the process can be reaped (under
    // bwrap, bwrap exits only after its child): wait up to 2 s, so a crash
    // reads as a crash and not as a process the referee stopped.
    for (int i = 0; i < 400 && !reaped_; ++i) {
      reap(false);
      if (!reaped_) nap_us(5000);
    }
  } catch (const ChannelError& e) {
    r.failure = NoReply::protocol;
    r.detail = e.what();
  }
  return r;
}

namespace {

int open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  return -1;
#endif
}

bool signal_pidfd(int fd, int sig) {
#ifdef SYS_pidfd_send_signal
  return ::syscall(SYS_pidfd_send_signal, fd, sig, nullptr, 0) == 0;
#else
  (void)fd, (void)sig;
  return false;
#endif
}

// Gives the processes just signalled a millisecond at most to stop: looking
// at a few processes' threads costs far less than scanning the machine again
// (a scan reads every process's stat, about 7 µs each).
void wait_until_stopped(const std::vector<pid_t>& procs) {
  for (int i = 0; i < 20; ++i) {
    if (std::all_of(procs.begin(), procs.end(), server_detail::is_stopped)) return;
    nap_us(50);
  }
}

}  // namespace

// A timing pauses and resumes the submission's program four times a round, so
// a pause costs one scan of the machine's processes where it can: what the last
// pause stopped is stopped again first, and the scan that must follow (to find
// any process started since) then finds everything stopped.
bool ServerProcess::pause() {
  if (pid_ <= 0 || reaped_) return true;
  std::vector<pid_t> known;
  for (const auto& [pid, fd] : paused_)
    if (signal_pidfd(fd, SIGSTOP)) known.push_back(pid);
  wait_until_stopped(known);
  // Seconds, not passes: on a loaded machine (a class's batch, a 2-core CI box) a busy process can
  // take many scheduler turns to take its SIGSTOP, and a pause given up is the program's failure.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  std::set<pid_t> seen;  // every process of the program this pause found
  for (int pass = 0; pass < 200 || std::chrono::steady_clock::now() < deadline; ++pass) {
    const auto procs = processes();
    std::vector<pid_t> running;
    for (pid_t p : procs) {
      seen.insert(p);
      if (!server_detail::is_stopped(p)) {
        running.push_back(p);
        ::kill(p, SIGSTOP);
      }
    }
    if (running.empty()) {
      pause_failure_ = PauseFailure::none;
      remember_paused(procs);
      return true;
    }
    // A process forked between the scan and the signal shows up in the next scan.
    if (pass >= 20) nap_us(1000);
    wait_until_stopped(running);
  }
  // The program alone, one process that would not take its SIGSTOP for 5 s (held
  // in the kernel): the machine's failure. With any process of its own it is the
  // program's, even when none was new in the last second: a vforked child that
  // never execs keeps its parent from stopping, on purpose.
  pause_failure_ = seen.size() == 1 ? PauseFailure::by_the_machine : PauseFailure::by_the_program;
  kill_all();
  return false;
}

// Everything the last pause found stopped, and nothing else: a stopped
// process starts none, so no scan is needed to find them.
void ServerProcess::resume() {
  if (paused_.empty()) {
    for (pid_t p : processes()) ::kill(p, SIGCONT);
    return;
  }
  for (const auto& [pid, fd] : paused_) signal_pidfd(fd, SIGCONT);
}

void ServerProcess::remember_paused(const std::vector<pid_t>& procs) {
  forget_paused();
  for (pid_t p : procs) {
    const int fd = open_pidfd(p);
    if (fd < 0) {  // one missing would stay stopped at the next resume: keep none
      forget_paused();
      return;
    }
    paused_.emplace_back(p, fd);
  }
}

void ServerProcess::forget_paused() {
  for (const auto& [pid, fd] : paused_) ::close(fd);
  paused_.clear();
}

void ServerProcess::reap(bool block) {
  if (pid_ <= 0 || reaped_) return;
  int status = 0;
  pid_t r;
  do r = ::waitpid(pid_, &status, block ? 0 : WNOHANG);
  while (r < 0 && errno == EINTR);
  if (r != pid_) return;
  reaped_ = true;
  if (WIFEXITED(status)) {
    exited_ = true;
    exit_code_ = WEXITSTATUS(status);
    // bwrap reports a child killed by signal n as 128 + n.
    if (bwrap_ && exit_code_ > 128 && exit_code_ < 128 + 65) {
      exited_ = false;
      signaled_ = true;
      signal_ = exit_code_ - 128;
    }
  } else if (WIFSIGNALED(status)) {
    signaled_ = true;
    signal_ = WTERMSIG(status);
  }
}

void ServerProcess::kill_all() {
  forget_paused();
  if (pid_ > 0) {
    reap(false);
    const bool ended_on_its_own = reaped_;
    for (int pass = 0; pass < 400; ++pass) {
      const auto procs = processes();
      if (procs.empty()) break;
      for (pid_t p : procs) {
        ::kill(p, SIGCONT);
        ::kill(p, SIGKILL);
      }
      // Reap what is ours to reap: the process itself and adopted orphans.
      for (pid_t p : procs) {
        if (p == pid_) continue;
        int st;
        ::waitpid(p, &st, WNOHANG);
      }
      reap(false);
      nap_us(pass < 20 ? 200 : 2000);
    }
    reap(true);
    if (!ended_on_its_own && signaled_ && signal_ == SIGKILL) {
      // Our kill, not a crash of its own.
      signaled_ = false;
    }
    std::lock_guard<std::mutex> lock(g_mutex);
    g_started.erase(pid_);
  }
  if (!copied_program_dir_.empty()) {
    std::error_code ec;
    fs::remove_all(copied_program_dir_, ec);
    copied_program_dir_.clear();
  }
}

std::string ServerProcess::ending() const {
  if (exited_) return "exited with code " + std::to_string(exit_code_);
  if (signaled_) {
    const char* n = signal_name(signal_);
    return std::string("was killed by ") + (n ? n : "signal " + std::to_string(signal_));
  }
  if (reaped_) return "was stopped";
  return "is still running";
}

}  // namespace memlabs
