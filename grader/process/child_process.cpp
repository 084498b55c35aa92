#include "child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <set>
#include <vector>

#include "host/process_table.hpp"

namespace grader {
namespace {

// ---- SIGINT/SIGTERM while waiting --------------------------------------
// The child leads its own process group, so a Ctrl-C at the terminal reaches
// only the grader; the grader must pass it on or the child would outlive it.

std::atomic<int> g_interrupt{0};
static_assert(std::atomic<int>::is_always_lock_free, "written from a signal handler");

extern "C" void note_interrupt(int sig) { g_interrupt.store(sig); }

// Handlers are process-wide while children run in several threads: the first
// waiter installs them, the last restores what was there before.
class InterruptHandlers {
 public:
  InterruptHandlers() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (waiters_++ > 0) return;
    g_interrupt.store(0);
    struct sigaction sa {};
    sa.sa_handler = note_interrupt;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: a sleeping wait loop wakes at once
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~InterruptHandlers() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (--waiters_ > 0) return;
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  InterruptHandlers(const InterruptHandlers&) = delete;
  InterruptHandlers& operator=(const InterruptHandlers&) = delete;

 private:
  static std::mutex mutex_;
  static int waiters_;
  static struct sigaction old_int_, old_term_;
};

std::mutex InterruptHandlers::mutex_;
int InterruptHandlers::waiters_ = 0;
struct sigaction InterruptHandlers::old_int_, InterruptHandlers::old_term_;

// ---- the child's side of fork ------------------------------------------
// Between fork and exec only async-signal-safe calls are allowed (the grader
// may have other threads), so everything is prepared beforehand.

enum Stage : int { kRedirect = 1, kLimits, kChdir, kExec };

struct Prepared {
  std::vector<char*> argv, envp;
  const char* cwd = nullptr;
  int in_fd = -1, out_fd = -1, err_fd = -1;
  rlimit fsize{}, cpu{}, nproc{};
  bool limit_cpu = false, limit_nproc = false;
  int max_fd = 1024;
};

[[noreturn]] void child_fail(int report_fd, Stage stage) {
  const int msg[2] = {stage, errno};
  (void)!::write(report_fd, msg, sizeof msg);
  ::_exit(127);
}

void close_inherited_fds(int keep, int max_fd) {
#ifdef SYS_close_range
  const bool closed = (keep <= 3 || ::syscall(SYS_close_range, 3u, keep - 1u, 0u) == 0) &&
                      ::syscall(SYS_close_range, keep + 1u, ~0u, 0u) == 0;
  if (closed) return;
#endif
  for (int fd = 3; fd < max_fd; ++fd)
    if (fd != keep) ::close(fd);
}

[[noreturn]] void exec_child(const Prepared& p, int report_fd) {
  ::setpgid(0, 0);
  // Ignored signals survive exec; the program must get the defaults (a shell
  // pipeline needs SIGPIPE, the size limit needs SIGXFSZ).
  for (int sig = 1; sig < NSIG; ++sig)
    if (sig != SIGKILL && sig != SIGSTOP) ::signal(sig, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);

  if (::dup2(p.in_fd, 0) < 0 || ::dup2(p.out_fd, 1) < 0 || ::dup2(p.err_fd, 2) < 0) child_fail(report_fd, kRedirect);
  close_inherited_fds(report_fd, p.max_fd);

  const rlimit no_core{0, 0};  // a crash must not drop core files in the lab folder
  if (::setrlimit(RLIMIT_FSIZE, &p.fsize) != 0 || ::setrlimit(RLIMIT_CORE, &no_core) != 0 ||
      (p.limit_cpu && ::setrlimit(RLIMIT_CPU, &p.cpu) != 0) ||
      (p.limit_nproc && ::setrlimit(RLIMIT_NPROC, &p.nproc) != 0))
    child_fail(report_fd, kLimits);
  if (p.cwd && ::chdir(p.cwd) != 0) child_fail(report_fd, kChdir);

  if (p.envp.empty())
    ::execvp(p.argv[0], p.argv.data());
  else
    ::execvpe(p.argv[0], p.argv.data(), p.envp.data());
  child_fail(report_fd, kExec);
}

// ---- the parent's side ---------------------------------------------------

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void close_now() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

int open_output(const std::filesystem::path& file) {
  const char* path = file.empty() ? "/dev/null" : file.c_str();
  return ::open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}

std::string stage_message(int stage, const ChildOptions& o) {
  switch (stage) {
    case kRedirect:
      return "cannot redirect the program's input and output";
    case kLimits:
      return "cannot set resource limits";
    case kChdir:
      return "cannot enter " + o.cwd.string();
    default:
      return "cannot run " + o.argv[0];
  }
}

// Exit of the child without reaping it: while its zombie exists its pid
// cannot be reused, so killing the group afterwards cannot hit a stranger.
bool has_exited(pid_t pid, bool block) {
  for (;;) {
    siginfo_t info{};
    const int r = ::waitid(P_PID, pid, &info, WEXITED | WNOWAIT | (block ? 0 : WNOHANG));
    if (r == 0) return info.si_pid == pid;
    if (errno != EINTR) return true;  // not our child any more: nothing to wait for
  }
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Every child run_child started and has not reaped yet: any other child of
// this process is an orphan it adopted (see become_subreaper). A fork and its
// entry here happen under one hold of the mutex, as do a reap and its removal,
// so a sweep in another thread never takes a child just forked for an orphan
// (it once killed a compile of another thread before its first line of
// output), nor a pid just freed and given to a stranger.
std::mutex g_children_mutex;
std::set<pid_t> g_children;

// One sweep kills and reaps at a time: only a sweep reaps orphans, so a pid it
// has killed stays an unreaped zombie, and never a stranger's, until that sweep
// reaps it. Reading /proc needs no turn: each sweep checks again under the lock.
std::mutex g_sweep_mutex;

// The parent of a process, or -1 when it is gone.
pid_t parent_of(pid_t pid) {
  memlabs::server_detail::ProcStat s;
  return memlabs::server_detail::read_stat("/proc/" + std::to_string(pid) + "/stat", s) ? s.ppid : -1;
}

// Kills and reaps the processes this one adopted: what a program left behind
// by setsid or a double fork, which its process group's kill cannot reach.
void sweep_adopted_orphans() {
  const pid_t self = ::getpid();
  for (int pass = 0; pass < 50; ++pass) {
    std::vector<pid_t> children;
    for (const auto& p : memlabs::server_detail::all_processes())
      if (p.ppid == self) children.push_back(p.pid);
    std::vector<pid_t> orphans;
    const std::lock_guard<std::mutex> one_sweep(g_sweep_mutex);
    {
      // Under the lock, a child not in g_children that is still ours is an
      // orphan: run_child's own children are entered with their fork.
      std::lock_guard<std::mutex> lock(g_children_mutex);
      for (pid_t pid : children) {
        if (g_children.count(pid) || parent_of(pid) != self) continue;
        ::kill(pid, SIGKILL);
        orphans.push_back(pid);
      }
    }
    if (orphans.empty()) return;
    for (pid_t p : orphans) {
      int status;
      ::waitpid(p, &status, 0);
    }
  }
}

// Reaps a child of run_child's that has exited (has_exited said so, so this
// does not block) and removes it from g_children in the same hold of the lock.
bool reap(pid_t pid, int* status = nullptr) {
  std::lock_guard<std::mutex> lock(g_children_mutex);
  int st = 0;
  pid_t r;
  do r = ::waitpid(pid, &st, 0);
  while (r < 0 && errno == EINTR);
  g_children.erase(pid);
  if (status) *status = st;
  return r == pid;
}

}  // namespace

void become_subreaper() {
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  ::prctl(PR_SET_DUMPABLE, 0);
}

// Long (about 150 lines) on purpose: the pipes, the fork, the child's side up
// to exec (only async-signal-safe calls there) and the parent's wait loop share
// descriptors and limits that must be opened, handed over and closed in one
// order, and reading that order in one place is what keeps it right.
ChildResult run_child(const ChildOptions& o) {
  ChildResult result;
  if (o.argv.empty() || o.argv[0].empty()) {
    result.start_error = "no program to run";
    return result;
  }
  const auto t0 = std::chrono::steady_clock::now();

  Prepared p;
  for (const auto& a : o.argv) p.argv.push_back(const_cast<char*>(a.c_str()));
  p.argv.push_back(nullptr);
  if (o.env) {
    for (const auto& e : *o.env) p.envp.push_back(const_cast<char*>(e.c_str()));
    p.envp.push_back(nullptr);
  }
  if (!o.cwd.empty()) p.cwd = o.cwd.c_str();
  p.fsize.rlim_cur = p.fsize.rlim_max = o.max_file_bytes > 0 ? o.max_file_bytes : RLIM_INFINITY;
  p.limit_cpu = o.max_cpu_seconds > 0;
  p.cpu.rlim_cur = o.max_cpu_seconds;
  p.cpu.rlim_max = o.max_cpu_seconds + 1;  // SIGXCPU at the soft limit, SIGKILL a second later
  p.limit_nproc = o.max_processes > 0;
  p.nproc.rlim_cur = p.nproc.rlim_max = o.max_processes;
  rlimit nofile{};
  if (::getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur != RLIM_INFINITY)
    p.max_fd = static_cast<int>(std::min<rlim_t>(nofile.rlim_cur, 1 << 16));

  const auto cannot_open = [&](const std::string& what) {
    result.start_error = "cannot open " + what + ": " + std::strerror(errno);
    return result;
  };
  const Fd in(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (in.get() < 0) return cannot_open("/dev/null");
  int capture[2] = {-1, -1};
  if (o.capture_stdout_bytes > 0 && ::pipe2(capture, O_CLOEXEC) != 0) {
    result.start_error = std::string("cannot create a pipe: ") + std::strerror(errno);
    return result;
  }
  const Fd capture_read(capture[0]);
  Fd out(o.capture_stdout_bytes > 0 ? capture[1] : open_output(o.stdout_file));
  if (out.get() < 0) return cannot_open(o.stdout_file.string());
  const bool shared = o.capture_stdout_bytes == 0 && !o.stdout_file.empty() && o.stdout_file == o.stderr_file;
  const Fd err(shared ? -1 : open_output(o.stderr_file));
  if (!shared && err.get() < 0) return cannot_open(o.stderr_file.string());
  p.in_fd = in.get();
  p.out_fd = out.get();
  p.err_fd = shared ? out.get() : err.get();

  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) {
    result.start_error = std::string("cannot create a pipe: ") + std::strerror(errno);
    return result;
  }
  const Fd report_read(report[0]);

  InterruptHandlers handlers;  // before fork: no window where Ctrl-C is lost
  // The fork and its entry in g_children are one step for any sweep.
  std::unique_lock<std::mutex> entering(g_children_mutex);
  const pid_t pid = ::fork();
  if (pid == 0) exec_child(p, report[1]);
  if (pid > 0) g_children.insert(pid);
  entering.unlock();
  ::close(report[1]);
  if (capture_read.get() >= 0) {
    // Only the child may hold the write end, or the pipe never reaches end of file.
    out.close_now();
    ::fcntl(capture_read.get(), F_SETFL, O_NONBLOCK);
  }
  if (pid < 0) {
    result.start_error = std::string("cannot fork: ") + std::strerror(errno);
    return result;
  }
  ::setpgid(pid, pid);  // also here, so the group exists before we might kill it
  result.pid = pid;

  int failure[2];
  ssize_t got;
  do got = ::read(report_read.get(), failure, sizeof failure);
  while (got < 0 && errno == EINTR);
  if (got == static_cast<ssize_t>(sizeof failure)) {
    has_exited(pid, /*block=*/true);
    reap(pid);
    result.start_error = stage_message(failure[0], o) + ": " + std::strerror(failure[1]);
    result.wall_s = seconds_since(t0);
    return result;
  }
  result.started = true;

  bool killed = false;
  int nap_ms = 1;
  const auto drain = [&] {
    if (capture_read.get() < 0) return;
    char buf[65536];
    for (;;) {
      const ssize_t n = ::read(capture_read.get(), buf, sizeof buf);
      if (n <= 0) break;
      const std::size_t room = o.capture_stdout_bytes - std::min(o.capture_stdout_bytes, result.stdout_text.size());
      result.stdout_text.append(buf, std::min<std::size_t>(room, static_cast<std::size_t>(n)));
      if (static_cast<std::size_t>(n) > room) result.stdout_truncated = true;
    }
  };
  while (!has_exited(pid, killed)) {
    drain();
    if (const int sig = g_interrupt.load()) {
      result.interrupted = true;
      result.interrupt_signal = sig;
    } else if (o.timeout_s > 0 && seconds_since(t0) >= o.timeout_s) {
      result.timed_out = true;
    } else if (o.cancel && o.cancel->load()) {
      result.cancelled = true;
    }
    if (result.interrupted || result.timed_out || result.cancelled) {
      ::kill(-pid, SIGKILL);
      killed = true;
      continue;
    }
    if (capture_read.get() >= 0) {
      pollfd p{capture_read.get(), POLLIN, 0};
      ::poll(&p, 1, nap_ms);  // wakes for output; SIGINT/SIGTERM cut it short
    } else {
      const timespec ts{0, static_cast<long>(nap_ms * 1000000)};
      ::nanosleep(&ts, nullptr);  // a single call: SIGINT/SIGTERM cut it short
    }
    nap_ms = std::min(nap_ms * 2, 10);
  }
  drain();
  // Whatever the program left running in its group goes with it.
  ::kill(-pid, SIGKILL);
  int status = 0;
  const bool reaped = reap(pid, &status);
  sweep_adopted_orphans();
  result.wall_s = seconds_since(t0);
  if (!reaped) return result;  // someone else reaped it (SIGCHLD ignored): no status to report

  const bool our_kill = killed && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
  if (!our_kill) result.timed_out = result.cancelled = false;  // it ended on its own just before
  if (our_kill) return result;
  if (WIFEXITED(status)) {
    result.exited = true;
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signaled = true;
    result.signal = WTERMSIG(status);
  }
  return result;
}

}  // namespace grader
