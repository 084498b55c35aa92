#include "sealed_run.hpp"

#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>
#include <thread>

namespace fs = std::filesystem;

namespace grader {
namespace {

// Ids far above any account's: a run's user owns no file and no process but its own.
constexpr uid_t kFirstSealedId = 0x60000000;
constexpr uid_t kSealedIdCount = 0x10000000;

// The real user of process `pid`, or -1 when it is gone.
long real_uid_of(const std::string& pid) {
  std::ifstream in("/proc/" + pid + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("Uid:", 0) == 0) return std::stol(line.substr(4));
  return -1;
}

std::vector<std::string> processes_of(uid_t uid) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (real_uid_of(name) == static_cast<long>(uid)) out.push_back(name);
  }
  return out;
}

uid_t unused_id() {
  static std::mutex mutex;
  static std::set<uid_t> given;
  static std::mt19937_64 random{std::random_device{}()};
  std::lock_guard<std::mutex> lock(mutex);
  for (;;) {
    const uid_t id = kFirstSealedId + static_cast<uid_t>(random() % kSealedIdCount);
    if (given.count(id) || ::getpwuid(id) != nullptr || !processes_of(id).empty()) continue;
    given.insert(id);
    return id;
  }
}

}  // namespace

std::size_t tasks_of_user(uid_t uid) {
  std::size_t n = 0;
  for (const auto& pid : processes_of(uid)) {
    std::error_code ec;
    for (fs::directory_iterator t("/proc/" + pid + "/task", ec), end; !ec && t != end; t.increment(ec)) ++n;
  }
  return n;
}

namespace {
// `name` in the folder of the grader's own binary, where its build puts the files
// it hands a sealed program (empty path: /proc/self/exe could not be read).
fs::path beside_the_grader(const fs::path& name) {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe.parent_path() / name;
}
}  // namespace

fs::path seal_launcher() {
  const fs::path launcher = beside_the_grader("grader-seal");
  if (launcher.empty() || ::access(launcher.c_str(), X_OK) != 0)
    throw std::runtime_error("grader-seal, which fences in a submission's code, is missing next to the grader (" +
                             launcher.string() + "): build it with `cmake --build build`");
  return launcher;
}

fs::path trace_library() {
  const fs::path library = beside_the_grader(fs::path("trace") / "libmemlabs-trace.so");
  std::error_code ec;
  return !library.empty() && fs::is_regular_file(library, ec) ? library : fs::path();
}

std::string seal_refusal(const IsolationSettings& s) {
  if (!s.enabled() || s.mode == memlabs::IsolationMode::bwrap) return "";
  if (memlabs::landlock_abi() > 0) return "";
  return "cannot grade for credit with --isolation rlimits here: this kernel has no Landlock (Linux 5.13 or later "
         "with Landlock enabled, and no seccomp filter refusing it), so a submission's code could read any file its "
         "user can, the course's solutions included. Use --isolation bwrap (install bubblewrap where user "
         "namespaces are allowed) or a kernel with Landlock.";
}

SealedRun::SealedRun() {
  own_identity_ = ::geteuid() == 0;
  uid_ = own_identity_ ? unused_id() : ::getuid();
  gid_ = own_identity_ ? static_cast<gid_t>(uid_) : ::getgid();
  // Under /tmp, not $TMPDIR: the run's user must be able to enter it.
  std::string tmpl = "/tmp/memlabs-sealed-XXXXXX";
  if (!::mkdtemp(tmpl.data()))
    throw std::runtime_error(std::string("cannot create a folder in /tmp: ") + std::strerror(errno));
  folder_ = tmpl;
  hand_over(folder_);
}

SealedRun::~SealedRun() {
  end_processes();
  std::error_code ec;
  fs::remove_all(folder_, ec);
}

void SealedRun::hand_over(const fs::path& dir) const {
  if (own_identity_ && ::chown(dir.c_str(), uid_, gid_) != 0)
    throw std::runtime_error("cannot hand " + dir.string() + " to the sealed run: " + std::strerror(errno));
  ::chmod(dir.c_str(), 0700);
}

fs::path SealedRun::copy_program(const fs::path& program) const {
  std::error_code ec;
  if (!fs::is_regular_file(program, ec)) return program;  // nothing to copy: starting it fails as it would have
  const fs::path copy = folder_ / program.filename();
  fs::copy_file(program, copy, fs::copy_options::overwrite_existing);
  if (own_identity_ && ::chown(copy.c_str(), uid_, gid_) != 0)
    throw std::runtime_error("cannot hand the program to the sealed run: " + std::string(std::strerror(errno)));
  ::chmod(copy.c_str(), 0500);
  return copy;
}

memlabs::SealSpec SealedRun::spec(const memlabs::Isolation& isolation, const std::vector<std::string>& readable,
                                  const std::vector<std::string>& writable) const {
  memlabs::SealSpec s;
  s.read = readable;
  s.write = writable;
  s.write.push_back(folder_.string());
  s.change_identity = own_identity_;
  s.uid = uid_;
  s.gid = gid_;
  s.require_landlock = isolation.limited();
  s.file_bytes = isolation.file_bytes;
  if (isolation.limited()) {
    s.cpu_seconds = isolation.cpu_seconds;
    s.processes = isolation.processes;
  }
  return s;
}

void SealedRun::stage_in(const fs::path& from, const fs::path& to) const {
  fs::create_directories(to);
  fs::copy(from, to, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
  hand_over(to);
  for (auto it = fs::recursive_directory_iterator(to); it != fs::recursive_directory_iterator(); ++it)
    if (own_identity_) ::lchown(it->path().c_str(), uid_, gid_);
}

void SealedRun::stage_out(const fs::path& from, const fs::path& to) const {
  std::error_code ec;
  fs::create_directories(to, ec);
  for (fs::directory_iterator it(from, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::file_status st = it->symlink_status();
    const fs::path target = to / it->path().filename();
    if (fs::is_directory(st)) {
      stage_out(it->path(), target);
    } else if (fs::is_regular_file(st)) {
      std::error_code copy_ec;
      fs::copy_file(it->path(), target, fs::copy_options::overwrite_existing, copy_ec);
    }
  }
}

std::size_t SealedRun::tasks() const { return own_identity_ ? tasks_of_user(uid_) : 0; }

void SealedRun::end_processes() const {
  if (!own_identity_) return;  // the grader's own user: its sweep of adopted orphans ends them
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!processes_of(uid_).empty() && std::chrono::steady_clock::now() < deadline) {
    // kill(-1) from the run's own user reaches every process of it, however it
    // left its group or session, and no other.
    const pid_t pid = ::fork();
    if (pid == 0) {
      if (::syscall(SYS_setresgid, gid_, gid_, gid_) != 0 || ::syscall(SYS_setresuid, uid_, uid_, uid_) != 0)
        ::_exit(1);
      ::kill(-1, SIGKILL);
      ::_exit(0);
    }
    if (pid > 0) ::waitpid(pid, nullptr, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace grader
