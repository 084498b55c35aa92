#include "gpu_lock.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>

#include "phase_log.hpp"

namespace fs = std::filesystem;

namespace grader {
namespace {

fs::path g_process_lock;

std::string first_line_of(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string describe_process(long pid) {
  const fs::path proc = "/proc/" + std::to_string(pid);
  std::string who = "pid " + std::to_string(pid);
  std::ifstream status(proc / "status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("Uid:", 0) == 0) {
      std::istringstream fields(line.substr(4));
      unsigned long uid = 0;
      if (fields >> uid) {
        const passwd* pw = ::getpwuid(static_cast<uid_t>(uid));
        who += ", user " + (pw ? std::string(pw->pw_name) : std::to_string(uid));
      }
      break;
    }
  const std::string comm = first_line_of(proc / "comm");
  if (!comm.empty()) who += ", " + comm;
  return who;
}

}  // namespace

fs::path gpu_lock_file(const std::string& gpu_uuid) {
  const char* dir = std::getenv(kGpuLockDirVar);
  std::string key;
  for (char c : gpu_uuid)
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '-') key += c;
  if (key.empty()) key = "0";
  return fs::path(dir && *dir ? dir : "/tmp") / ("cuda-memory-labs-gpu-" + key + ".lock");
}

void set_process_gpu_lock(const fs::path& file) { g_process_lock = file; }
const fs::path& process_gpu_lock() { return g_process_lock; }

std::string lock_holder(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return {};
  char id[64];
  std::snprintf(id, sizeof id, "%02x:%02x:%llu", major(st.st_dev), minor(st.st_dev),
                static_cast<unsigned long long>(st.st_ino));
  // "1: FLOCK  ADVISORY  WRITE 4242 08:01:1234567 0 EOF"; waiters read "1: -> FLOCK ...".
  std::ifstream locks("/proc/locks");
  for (std::string line; std::getline(locks, line);) {
    std::istringstream f(line);
    std::string n, type, advisory, mode, dev;
    long pid = 0;
    if (!(f >> n >> type) || type == "->" || type != "FLOCK") continue;
    if (!(f >> advisory >> mode >> pid >> dev)) continue;
    if (dev == id && pid > 0) return describe_process(pid);
  }
  return {};
}

GpuTurn::GpuTurn(const fs::path& file, const std::function<void(const std::string&)>& waiting) {
  if (file.empty()) return;
  // Open the file whoever made it; make it if nobody has. Read-only is enough for flock.
  for (int attempt = 0; attempt < 5 && fd_ < 0; ++attempt) {
    fd_ = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd_ >= 0 || errno != ENOENT) break;
    fd_ = ::open(file.c_str(), O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0444);
    if (fd_ >= 0)
      ::fchmod(fd_, 0444);  // every user may open it, whatever the umask
    else if (errno != EEXIST)
      break;
  }
  if (fd_ < 0) {
    const int e = errno;
    std::string why = std::strerror(e);
    if (e == ELOOP) why = "it is a symbolic link (someone else's file; remove it)";
    if (e == ENOENT)
      why = "its folder does not exist (set " + std::string(kGpuLockDirVar) + " to a folder every user can reach)";
    throw std::runtime_error("cannot open the GPU lock " + file.string() + ": " + why);
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    fd_ = -1;
    throw std::runtime_error("the GPU lock " + file.string() + " is not a plain file; remove it");
  }
  if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) return;
  if (errno == EWOULDBLOCK && waiting) waiting(lock_holder(fd_));
  while (::flock(fd_, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    const int e = errno;
    ::close(fd_);
    fd_ = -1;
    throw std::runtime_error("cannot lock " + file.string() + ": " + std::strerror(e));
  }
}

GpuTurn::~GpuTurn() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the flock
}

namespace {
struct SharedTurn {
  std::mutex mutex;
  int holders = 0;
  std::unique_ptr<GpuTurn> turn;
};
SharedTurn& shared_turn() {
  static SharedTurn* s = new SharedTurn;  // never destroyed: threads may outlive statics at exit
  return *s;
}
}  // namespace

ProcessGpuTurn::ProcessGpuTurn() {
  SharedTurn& s = shared_turn();
  const std::lock_guard<std::mutex> hold(s.mutex);  // the process's other threads wait here, not on the file
  if (s.holders == 0) {
    const auto begin = std::chrono::steady_clock::now();
    bool waited = false;
    s.turn = std::make_unique<GpuTurn>(process_gpu_lock(), [&](const std::string& holder) {
      waited = true;
      std::cerr << "waiting for the GPU (held by another grade" << (holder.empty() ? "" : ": " + holder)
                << "); this grade goes on when that one is done with it" << std::endl;
    });
    if (waited) note_phase("waiting for the GPU (another grade held it)", begin, std::chrono::steady_clock::now(), 1);
  }
  ++s.holders;
}

ProcessGpuTurn::~ProcessGpuTurn() {
  SharedTurn& s = shared_turn();
  const std::lock_guard<std::mutex> hold(s.mutex);
  if (--s.holders == 0) s.turn.reset();
}

}  // namespace grader
