#include "session.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>

#include "activity.hpp"
#include "calibration.hpp"
#include "gpu_lock.hpp"

namespace fs = std::filesystem;

namespace grader {

namespace {
constexpr const char* kDefaultArch = "sm_90";  // Hopper: what the course is measured on

// .grader/ holds every build, the solutions' too when an instructor grades
// them: only its owner may enter it (a submission's program runs as another
// user when the grader runs as root, and must not load a solution's build).
void make_state_dir_private(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);  // a folder of this user's: Course::open chose it (state_dir_for)
  fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace, ec);
}

}  // namespace

Session Session::open(const GlobalOptions& global, bool measure_bandwidth) {
  Session s{global, Course::discover(global.root), {}, nullptr, {}};
  make_state_dir_private(s.course.state_dir());
  {
    Activity a("finding the CUDA toolkit");
    s.toolchain = detect_toolchain();
  }
  if (!global.arch.empty()) check_arch(s.toolchain, global.arch);
  BuildSettings b;
  b.course_root = s.course.root();
  b.cache_dir = s.course.state_dir() / "cache";
  b.verbose = global.verbose;
  s.builder = std::make_unique<Builder>(s.toolchain, b);
  {
    Activity a("looking for the GPU");
    s.device = probe_device(*s.builder, s.new_run_dir("probe"), measure_bandwidth);
  }
  if (s.device.present) set_process_gpu_lock(gpu_lock_file(s.device.uuid));
  b.arch = !global.arch.empty() ? global.arch : (s.device.present ? s.device.arch : kDefaultArch);
  s.builder = std::make_unique<Builder>(s.toolchain, b);
  return s;
}

fs::path Session::new_run_dir(const std::string& tag) const {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now).count();
  static std::atomic<int> counter{0};  // run folders are made on several threads (grader check)
  const fs::path dir =
      course.state_dir() / "runs" /
      (tag + "-" + std::to_string(ms) + "-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
  fs::create_directories(dir);
  return dir;
}

std::optional<fs::path> Session::user_calibration() const {
  if (!device.present) return std::nullopt;
  return user_calibration_file(course.state_dir(), device.name, toolchain.version);
}

}  // namespace grader
