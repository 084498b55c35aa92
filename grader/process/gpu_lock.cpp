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
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "phase_log.hpp"
#include "sandbox.hpp"

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

// The folder of every lock file: GRADER_GPU_LOCK_DIR, else /tmp.
fs::path lock_folder() {
  const char* dir = std::getenv(kGpuLockDirVar);
  return dir && *dir ? dir : "/tmp";
}

}  // namespace

fs::path gpu_lock_file(const std::string& gpu_uuid) {
  std::string key;
  for (char c : gpu_uuid)
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '-') key += c;
  if (key.empty()) key = "0";
  return lock_folder() / ("cuda-memory-labs-gpu-" + key + ".lock");
}

fs::path sandboxed_tools_lock_file() { return lock_folder() / "cuda-memory-labs-sandboxed-tools.lock"; }

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

GpuTurn::GpuTurn(const fs::path& file, memlabs::GpuUse use, const std::function<void(const std::string&)>& waiting,
                 memlabs::ExclusiveLength length) {
  if (file.empty()) return;
  files_ = std::make_unique<memlabs::GpuTurnFiles>(file.string());
  files_->take(
      use,
      [&] {
        if (waiting) waiting(lock_holder(files_->turn_fd()));
      },
      length);
}

namespace {
// The turns this process's threads hold: an exclusive one waits here until the
// process holds none, a shared one until it holds no exclusive one.
struct TurnsHeld {
  std::mutex mutex;
  std::condition_variable changed;
  int shared = 0, exclusive = 0;
};
TurnsHeld& turns_held() {
  static TurnsHeld* t = new TurnsHeld;  // never destroyed: threads may outlive statics at exit
  return *t;
}
}  // namespace

bool whole_grade_turns() {
  const char* turns = std::getenv(kSandboxedTurnsVar);
  if (turns && std::string(turns) == "per-run") return false;
  return isolation_from_environment().mode == memlabs::IsolationMode::bwrap;
}

namespace {
// The one exclusive turn the threads of a sandboxed grade share: the first takes
// it machine-wide, the last gives it back.
struct GradeTurn {
  std::mutex mutex;
  int holders = 0;
  std::unique_ptr<GpuTurn> turn;
};
GradeTurn& grade_turn() {
  static GradeTurn* g = new GradeTurn;  // never destroyed: threads may outlive statics at exit
  return *g;
}

// A turn on `file`; a wait says on stderr what it waits for (`before` the
// holder, `after` it) and is noted as the phase `phase`.
std::unique_ptr<GpuTurn> take_noting_the_wait(const fs::path& file, memlabs::GpuUse use, const std::string& before,
                                              const std::string& after, const std::string& phase,
                                              memlabs::ExclusiveLength length = memlabs::ExclusiveLength::short_turn) {
  const auto begin = std::chrono::steady_clock::now();
  bool waited = false;
  auto turn = std::make_unique<GpuTurn>(
      file, use,
      [&](const std::string& holder) {
        waited = true;
        std::cerr << before << (holder.empty() ? "" : ": " + holder) << after << std::endl;
      },
      length);
  if (waited) note_phase(phase, begin, std::chrono::steady_clock::now(), 1);
  return turn;
}

std::unique_ptr<GpuTurn> take_gpu_turn(memlabs::GpuUse use,
                                       memlabs::ExclusiveLength length = memlabs::ExclusiveLength::short_turn) {
  return take_noting_the_wait(process_gpu_lock(), use, "waiting for the GPU (held by another grade",
                              "); this grade goes on when that one is done with it",
                              "waiting for the GPU (another grade held it)", length);
}
}  // namespace

ProcessGpuTurn::ProcessGpuTurn(memlabs::GpuUse use) : use_(use), whole_grade_(whole_grade_turns()) {
  if (whole_grade_) {
    GradeTurn& g = grade_turn();
    const std::lock_guard<std::mutex> hold(g.mutex);  // the grade's other threads wait here, not on the file
    if (g.holders == 0) g.turn = take_gpu_turn(memlabs::GpuUse::exclusive, memlabs::ExclusiveLength::long_turn);
    ++g.holders;
    return;
  }
  TurnsHeld& t = turns_held();
  const bool exclusive = use == memlabs::GpuUse::exclusive;
  {
    std::unique_lock<std::mutex> hold(t.mutex);
    t.changed.wait(hold, [&] { return t.exclusive == 0 && (!exclusive || t.shared == 0); });
    ++(exclusive ? t.exclusive : t.shared);
  }
  try {
    turn_ = take_gpu_turn(use);
  } catch (...) {
    const std::lock_guard<std::mutex> hold(t.mutex);
    --(exclusive ? t.exclusive : t.shared);
    t.changed.notify_all();
    throw;
  }
}

ProcessGpuTurn::~ProcessGpuTurn() {
  if (whole_grade_) {
    GradeTurn& g = grade_turn();
    const std::lock_guard<std::mutex> hold(g.mutex);
    if (--g.holders == 0) g.turn.reset();
    return;
  }
  turn_.reset();  // the file's turn first, then the process's count
  TurnsHeld& t = turns_held();
  const std::lock_guard<std::mutex> hold(t.mutex);
  --(use_ == memlabs::GpuUse::exclusive ? t.exclusive : t.shared);
  t.changed.notify_all();
}

namespace {
// One of kProfilesAtOnce slot files beside `turn_file`, held alone; waits
// (polling: a profile takes seconds) until one is free, saying once who holds
// them. Returns its descriptor.
int take_profile_slot(const std::string& turn_file, const std::function<void(const std::string&)>& waiting) {
  std::vector<int> fds;
  try {
    for (int k = 0; k < kProfilesAtOnce; ++k)
      fds.push_back(memlabs::open_lock_file(turn_file + "." + std::to_string(k)));
  } catch (...) {
    for (int fd : fds) ::close(fd);
    throw;
  }
  for (bool said = false;; said = true) {
    for (std::size_t k = 0; k < fds.size(); ++k)
      if (::flock(fds[k], LOCK_EX | LOCK_NB) == 0) {
        for (std::size_t j = 0; j < fds.size(); ++j)
          if (j != k) ::close(fds[j]);
        return fds[k];
      }
    if (!said) {
      std::string holders;
      for (int fd : fds)
        if (const std::string h = lock_holder(fd); !h.empty()) holders += (holders.empty() ? "" : "; ") + h;
      waiting(holders);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}
}  // namespace

ProfilerTurn::ProfilerTurn(memlabs::GpuUse use) {
  if (process_gpu_lock().empty()) return;
  const std::string file = process_gpu_lock().string() + ".ncu";
  turn_ = take_noting_the_wait(file, use, "waiting for ncu (another grade is profiling", ")",
                               "waiting for ncu (another grade was profiling)");
  if (use != memlabs::GpuUse::shared) return;
  const auto begin = std::chrono::steady_clock::now();
  bool waited = false;
  slot_ = take_profile_slot(file, [&](const std::string& holders) {
    waited = true;
    std::cerr << "waiting for ncu (" << kProfilesAtOnce << " other profiles are running"
              << (holders.empty() ? "" : ": " + holders) << ")" << std::endl;
  });
  if (waited) note_phase("waiting for ncu (other profiles were running)", begin, std::chrono::steady_clock::now(), 1);
}

ProfilerTurn::~ProfilerTurn() {
  if (slot_ >= 0) ::close(slot_);
}

SandboxedToolTurn::SandboxedToolTurn()
    : turn_(take_noting_the_wait(sandboxed_tools_lock_file(), memlabs::GpuUse::exclusive,
                                 "waiting for another grade's tool run (a sandboxed program under a tool must be "
                                 "the only one on the machine",
                                 ")", "waiting for another grade's tool run")) {}

SandboxedToolTurn::~SandboxedToolTurn() = default;

namespace {
fs::path& ncu_folder() {
  static fs::path* folder = new fs::path("/tmp");  // never destroyed: threads may outlive statics at exit
  return *folder;
}
}  // namespace

const fs::path& ncu_lock_folder() { return ncu_folder(); }
void set_ncu_lock_folder(const fs::path& folder) { ncu_folder() = folder; }

bool ncu_lock_usable() {
  const fs::path file = ncu_lock_folder() / "nsight-compute-lock";
  int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd >= 0) {
    ::fchmod(fd, 0666);  // made here: every user's ncu may open it, whatever the umask
  } else if (errno == EEXIST) {
    fd = ::open(file.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
  }
  if (fd < 0) return false;
  struct stat st {};
  const bool plain = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);  // not a planted FIFO or device
  ::close(fd);
  return plain;
}

}  // namespace grader
