#include "server_process.hpp"

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

extern char** environ;

namespace fs = std::filesystem;

namespace memlabs {
namespace {

constexpr uid_t kNobody = 65534;
constexpr gid_t kNogroup = 65534;

// Every process a ServerProcess started itself; any other child of the
// referee is an orphan a submission left behind.
std::mutex g_mutex;
std::set<pid_t> g_started;

struct ProcStat {
  pid_t pid = 0, ppid = 0;
  char state = '?';
};

// /proc/<pid>/stat: "pid (comm) state ppid ..."; comm may hold spaces and ')'.
bool read_stat(const fs::path& file, ProcStat& out) {
  std::ifstream in(file);
  std::string line;
  if (!std::getline(in, line)) return false;
  const auto close = line.rfind(')');
  if (close == std::string::npos || close + 4 > line.size()) return false;
  std::istringstream rest(line.substr(close + 2));
  long ppid = 0;
  rest >> out.state >> ppid;
  out.ppid = static_cast<pid_t>(ppid);
  out.pid = static_cast<pid_t>(std::atol(line.c_str()));
  return true;
}

std::vector<ProcStat> all_processes() {
  std::vector<ProcStat> out;
  std::error_code ec;
  for (fs::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    ProcStat s;
    if (read_stat(it->path() / "stat", s)) out.push_back(s);
  }
  return out;
}

std::vector<pid_t> descendants(const std::vector<ProcStat>& table, const std::vector<pid_t>& roots) {
  std::multimap<pid_t, pid_t> children;
  for (const auto& p : table) children.emplace(p.ppid, p.pid);
  std::vector<pid_t> out, todo = roots;
  std::set<pid_t> seen(roots.begin(), roots.end());
  while (!todo.empty()) {
    const pid_t p = todo.back();
    todo.pop_back();
    const auto range = children.equal_range(p);
    for (auto it = range.first; it != range.second; ++it)
      if (seen.insert(it->second).second) {
        out.push_back(it->second);
        todo.push_back(it->second);
      }
  }
  return out;
}

// Whether every thread of `pid` is stopped or gone.
bool is_stopped(pid_t pid) {
  std::error_code ec;
  const fs::path tasks = fs::path("/proc") / std::to_string(pid) / "task";
  bool any = false;
  for (fs::directory_iterator it(tasks, ec), end; !ec && it != end; it.increment(ec)) {
    ProcStat s;
    if (!read_stat(it->path() / "stat", s)) continue;
    any = true;
    if (s.state != 'T' && s.state != 't' && s.state != 'Z' && s.state != 'X') return false;
  }
  return any || ec;  // a process without tasks is gone
}

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

// Everything the child does between fork and exec is prepared here: the
// referee has CUDA's threads, so the child may only make async-signal-safe calls.
struct Prepared {
  std::vector<std::string> argv_s, env_s;
  std::vector<char*> argv, envp;
  int sock = -1, out = -1, err = -1, in = -1;
  bool drop_privileges = false;
  bool limit = false;
  rlimit cpu{}, fsize{}, nproc{};
  bool limit_cpu = false, limit_nproc = false;
  pid_t parent = 0;
  const char* cwd = "/";
};

[[noreturn]] void exec_child(const Prepared& p) {
  ::setsid();
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != p.parent) ::_exit(126);  // the referee died before the line above
  for (int sig = 1; sig < NSIG; ++sig)
    if (sig != SIGKILL && sig != SIGSTOP) ::signal(sig, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  if (::dup2(p.in, 0) < 0 || ::dup2(p.out, 1) < 0 || ::dup2(p.err, 2) < 0) ::_exit(125);
  if (p.sock == 3) {
    ::fcntl(3, F_SETFD, 0);
  } else if (::dup2(p.sock, 3) < 0) {
    ::_exit(125);
  }
#ifdef SYS_close_range
  if (::syscall(SYS_close_range, 4u, ~0u, 0u) != 0)
#endif
    for (int fd = 4; fd < 65536; ++fd) ::close(fd);
  const rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  if (p.limit) {
    if (::setrlimit(RLIMIT_FSIZE, &p.fsize) != 0) ::_exit(124);
    if (p.limit_cpu && ::setrlimit(RLIMIT_CPU, &p.cpu) != 0) ::_exit(124);
  }
  if (p.drop_privileges) {
    if (::setgroups(0, nullptr) != 0 || ::setgid(kNogroup) != 0 || ::setuid(kNobody) != 0) ::_exit(123);
    if (::getuid() == 0 || ::geteuid() == 0) ::_exit(123);
  }
  // After the drop: the count is the unprivileged user's, which the kernel enforces.
  if (p.limit && p.limit_nproc) ::setrlimit(RLIMIT_NPROC, &p.nproc);
  if (::chdir(p.cwd) != 0) ::_exit(122);
  ::execve(p.argv[0], p.argv.data(), p.envp.data());
  ::_exit(127);
}

}  // namespace

void become_referee() {
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  ::prctl(PR_SET_DUMPABLE, 0);
}

std::vector<pid_t> descendants_of(pid_t root) { return descendants(all_processes(), {root}); }

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
  return *this;
}

ServerProcess ServerProcess::spawn(const SpawnOptions& o) {
  if (o.argv.empty()) throw std::runtime_error("nothing to start");
  ServerProcess sp;
  auto [mine, theirs] = channel_pair();
  Prepared p;
  p.parent = ::getpid();
  std::vector<std::string> argv = o.argv;
  const bool sandboxed = o.untrusted && o.isolation.mode == "bwrap";
  if (o.untrusted && !sandboxed && ::geteuid() == 0) {
    // Run as nobody, from a copy nobody can read: the original may sit in a
    // folder only root can enter.
    // Under /tmp, not $TMPDIR: a grader's TMPDIR may be a folder nobody cannot enter.
    std::error_code ec;
    const fs::path tmp = fs::is_directory("/tmp", ec) ? fs::path("/tmp") : fs::temp_directory_path();
    std::string tmpl = (tmp / "memlabs-program-XXXXXX").string();
    if (!::mkdtemp(tmpl.data()))
      throw std::runtime_error(std::string("cannot create a folder: ") + std::strerror(errno));
    sp.copied_program_dir_ = tmpl;
    const fs::path copy = fs::path(tmpl) / fs::path(argv[0]).filename();
    fs::copy_file(argv[0], copy);
    fs::permissions(tmpl, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                              fs::perms::others_read | fs::perms::others_exec);
    fs::permissions(copy, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                              fs::perms::others_read | fs::perms::others_exec);
    argv[0] = copy.string();
    p.drop_privileges = true;
  }
  if (sandboxed) {
    std::vector<std::string> visible = o.visible;
    visible.push_back(fs::path(argv[0]).parent_path().string());
    argv = bwrap_command(o.isolation, visible, {}, argv);
    sp.bwrap_ = true;
  }
  p.argv_s = argv;
  std::vector<std::string> parent_env;
  for (char** e = environ; *e; ++e) parent_env.emplace_back(*e);
  p.env_s = o.untrusted ? submission_environment(parent_env) : parent_env;
  for (auto& s : p.argv_s) p.argv.push_back(s.data());
  p.argv.push_back(nullptr);
  for (auto& s : p.env_s) p.envp.push_back(s.data());
  p.envp.push_back(nullptr);
  if (o.untrusted) {
    // The file-size limit always: a program that prints in a loop must not fill
    // the disk, isolated or not. The others only when isolation asks for them.
    p.limit = true;
    p.fsize.rlim_cur = p.fsize.rlim_max = o.isolation.file_bytes;
  }
  if (o.untrusted && o.isolation.limited()) {
    if (o.isolation.cpu_seconds > 0) {
      p.limit_cpu = true;
      p.cpu.rlim_cur = static_cast<rlim_t>(o.isolation.cpu_seconds);
      p.cpu.rlim_max = p.cpu.rlim_cur + 1;
    }
    if (o.isolation.processes > 0) {
      p.limit_nproc = true;
      p.nproc.rlim_cur = p.nproc.rlim_max = o.isolation.processes;
    }
  }
  p.cwd = "/";
  const int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull < 0) throw std::runtime_error("cannot open /dev/null");
  p.in = devnull;
  p.out = o.stdout_fd >= 0 ? o.stdout_fd : devnull;
  p.err = o.stderr_fd >= 0 ? o.stderr_fd : devnull;
  p.sock = theirs.fd();

  std::lock_guard<std::mutex> lock(g_mutex);
  const pid_t pid = ::fork();
  if (pid == 0) exec_child(p);
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
  const auto table = all_processes();
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
  std::vector<pid_t> out = descendants(table, {pid_});
  const auto orphans = descendants(table, roots);
  out.insert(out.end(), roots.begin(), roots.end());
  out.insert(out.end(), orphans.begin(), orphans.end());
  if (alive) out.push_back(pid_);
  return out;
}

Reply ServerProcess::request(const nlohmann::json& body, double timeout_s, const std::vector<int>& fds) {
  Reply r;
  if (pid_ <= 0 || reaped_) {
    r.failure = "gone";
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
                       (r.ok ? std::string("ok") : r.failure));
    }
  } note{recent_, body, r, t0};
  try {
    channel_.send(body, fds);
    auto m = channel_.receive(timeout_s, /*accept_fds=*/false);
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!m) {
      r.failure = "timeout";
      return r;
    }
    if (!m->body.contains("ok") || !m->body["ok"].is_boolean()) {
      r.failure = "protocol";
      r.detail = "a reply without \"ok\"";
      return r;
    }
    r.body = std::move(m->body);
    r.ok = true;
  } catch (const ChannelClosed&) {
    r.failure = "gone";
    // The channel closes a moment before the process can be reaped (under
    // bwrap, bwrap exits only after its child): wait up to 2 s, so a crash
    // reads as a crash and not as a process the referee stopped.
    for (int i = 0; i < 400 && !reaped_; ++i) {
      reap(false);
      if (!reaped_) nap_us(5000);
    }
  } catch (const ChannelError& e) {
    r.failure = "protocol";
    r.detail = e.what();
  }
  return r;
}

bool ServerProcess::pause() {
  if (pid_ <= 0 || reaped_) return true;
  for (int pass = 0; pass < 200; ++pass) {
    const auto procs = processes();
    bool all = true;
    for (pid_t p : procs)
      if (!is_stopped(p)) {
        all = false;
        ::kill(p, SIGSTOP);
      }
    // A process forked between the scan and the signal shows up in the next scan.
    if (all) return true;
    nap_us(pass < 20 ? 50 : 1000);
  }
  kill_all();
  return false;
}

void ServerProcess::resume() {
  for (pid_t p : processes()) ::kill(p, SIGCONT);
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
