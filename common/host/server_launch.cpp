// The start of a server's process (server_launch.hpp): its command line (a
// copy nobody can run, or under bwrap), its environment and rlimits, prepared
// before fork; then the child's side, from fork to exec.
#include "server_launch.hpp"

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace fs = std::filesystem;

namespace memlabs::server_detail {
namespace {

constexpr uid_t kNobody = 65534;
constexpr gid_t kNogroup = 65534;

// Run as nobody, from a copy nobody can read: the original may sit in a
// folder only root can enter. Returns the copy's path.
std::string copy_for_nobody(const std::string& program, std::string& copied_program_dir) {
  // Under /tmp, not $TMPDIR: a grader's TMPDIR may be a folder nobody cannot enter.
  std::error_code ec;
  const fs::path tmp = fs::is_directory("/tmp", ec) ? fs::path("/tmp") : fs::temp_directory_path();
  std::string tmpl = (tmp / "memlabs-program-XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error(std::string("cannot create a folder: ") + std::strerror(errno));
  copied_program_dir = tmpl;
  const fs::path copy = fs::path(tmpl) / fs::path(program).filename();
  fs::copy_file(program, copy);
  fs::permissions(tmpl, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read |
                            fs::perms::others_exec);
  fs::permissions(copy, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read |
                            fs::perms::others_exec);
  return copy.string();
}

void set_limits(const SpawnOptions& o, ChildLaunch& p) {
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
}

}  // namespace

void prepare_launch(const SpawnOptions& o, ChildLaunch& p, std::string& copied_program_dir, bool& bwrap) {
  p.parent = ::getpid();
  std::vector<std::string> argv = o.argv;
  const bool sandboxed = o.untrusted && o.isolation.mode == IsolationMode::bwrap;
  if (o.untrusted && !sandboxed && !o.isolation.seal.empty()) {
    // The grader made the seal's folder, with the program in it, and its user.
    std::vector<std::string> sealed = o.isolation.seal;
    sealed.insert(sealed.end(), argv.begin(), argv.end());
    argv = sealed;
  } else if (o.untrusted && !sandboxed && ::geteuid() == 0) {
    argv[0] = copy_for_nobody(argv[0], copied_program_dir);
    p.drop_privileges = true;
  }
  if (sandboxed) {
    std::vector<std::string> visible = o.visible;
    visible.push_back(fs::path(argv[0]).parent_path().string());
    argv = bwrap_command(o.isolation, visible, {}, argv);
    bwrap = true;
  }
  p.argv_s = argv;
  p.env_s = o.untrusted ? submission_environment(this_process_environment()) : this_process_environment();
  for (auto& s : p.argv_s) p.argv.push_back(s.data());
  p.argv.push_back(nullptr);
  for (auto& s : p.env_s) p.envp.push_back(s.data());
  p.envp.push_back(nullptr);
  set_limits(o, p);
  p.cwd = "/";
}

[[noreturn]] void exec_child(const ChildLaunch& p) {
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

}  // namespace memlabs::server_detail
