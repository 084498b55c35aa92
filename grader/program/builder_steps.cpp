// The build cache's entries and the runs of nvcc that fill them: what every
// compile and link of Builder goes through (see builder_steps.hpp).
#include "builder_steps.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>

#include "cache_manifest.hpp"
#include "child_process.hpp"
#include "host/isolation.hpp"
#include "sandbox.hpp"
#include "sealed_run.hpp"
#include "text.hpp"
#include "toolchain.hpp"

namespace fs = std::filesystem;

namespace grader::builder_detail {
namespace {

constexpr double kCompileTimeout = 600;

// Threads of one grader that need the same entry at once (`grader check`'s
// items of one lab, building one program) build it once: the others wait for
// it here and then find it complete. Other processes race through the rename.
std::mutex& entry_turn(const fs::path& dir) {
  static std::mutex guard;
  static auto* turns = new std::map<std::string, std::unique_ptr<std::mutex>>;  // never destroyed: see gpu_lock.cpp
  const std::lock_guard<std::mutex> hold(guard);
  auto& turn = (*turns)[dir.string()];
  if (!turn) turn = std::make_unique<std::mutex>();
  return *turn;
}

std::string unique_suffix() {
  thread_local std::mt19937_64 rng{std::random_device{}()};  // builds of several threads ask at once
  return std::to_string(getpid()) + "-" + std::to_string(rng() % 1000000000);
}

// `text` with every `from` made `to`.
std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = 0; !from.empty() && (at = text.find(from, at)) != std::string::npos; at += to.size())
    text.replace(at, from.size(), to);
  return text;
}

// The install of the host compiler nvcc runs (the first g++ on PATH): /usr for
// a system one, already on the allow-list; its own folder for one in /opt.
std::string host_compiler_install() {
  std::error_code ec;
  if (const auto gxx = find_on_path("g++")) {
    const fs::path real = fs::weakly_canonical(*gxx, ec);
    if (!ec && real.parent_path().filename() == "bin") return real.parent_path().parent_path().string();
  }
  return "/usr";
}

// This process's environment with HOME and TMPDIR in `dir`: a sandboxed nvcc
// sees no other folder it may write (a batch's child grader has its TMPDIR in
// a private folder that no sandbox mounts, and nvcc failed without a word).
std::vector<std::string> scratch_in(const fs::path& dir) {
  std::vector<std::string> env;
  for (const auto& kv : memlabs::this_process_environment())
    if (kv.rfind("TMPDIR=", 0) != 0 && kv.rfind("HOME=", 0) != 0) env.push_back(kv);
  env.push_back("TMPDIR=" + dir.string());
  env.push_back("HOME=" + dir.string());
  return env;
}

// Graders building the same entry at once (a test suite's parallel grades, a
// check's) wait for one build instead of each making its own: common/'s objects
// took 4 × 2.5 min on a 2-core machine when four grades started together. The
// lock is an flock on a file beside the entry, let go when its process ends.
class EntryLock {
 public:
  explicit EntryLock(const fs::path& file)
      : fd_(::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600)) {
    if (fd_ >= 0)
      while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
      }
  }
  ~EntryLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  EntryLock(const EntryLock&) = delete;
  EntryLock& operator=(const EntryLock&) = delete;

 private:
  int fd_;
};

// A sealed compile ran in `staged`, and its text outputs (preprocessed code,
// host assembly, PTX, dependency lists) name that folder: they name `work`
// instead, as an unsealed compile's do, for the checks that read them.
void name_the_work_folder(const fs::path& work, const fs::path& staged) {
  std::error_code ec;
  for (fs::recursive_directory_iterator it(work, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string ext = it->path().extension().string();
    if (!it->is_regular_file() || (ext != ".ii" && ext != ".s" && ext != ".ptx" && ext != ".d")) continue;
    if (auto text = read_file(it->path()))
      if (text->find(staged.string()) != std::string::npos)
        std::ofstream(it->path(), std::ios::binary | std::ios::trunc)
            << replace_all(*text, staged.string(), work.string());
  }
}

// `argv` wrapped in the sandbox a submission's compile runs in, and the
// environment it gets. Outside bwrap, nvcc on a submission is sealed
// (sealed_run.hpp): it works on a copy of `work` (`staged`) in a folder of its
// own and sees nothing else but the system and the toolkit, so no directive can
// make it read a course file.
std::optional<std::vector<std::string>> sandbox_the_compile(std::vector<std::string>& argv, const fs::path& work,
                                                            std::optional<SealedRun>& sealed, fs::path& staged) {
  const memlabs::Isolation sandbox = submission_isolation(isolation_from_environment(), kCompileTimeout);
  const fs::path nvcc_root = fs::weakly_canonical(argv.at(0)).parent_path().parent_path();
  const std::vector<std::string> toolchain = {nvcc_root.string(), host_compiler_install()};
  if (sandbox.mode == memlabs::IsolationMode::bwrap) {
    argv = memlabs::bwrap_command(sandbox, toolchain, {work.string()}, argv);
    return scratch_in(work);
  }
  sealed.emplace();
  staged = sealed->folder() / "work";
  sealed->stage_in(work, staged);
  for (auto& a : argv) a = replace_all(a, work.string(), staged.string());
  argv = memlabs::seal_command(seal_launcher().string(), sealed->spec(sandbox, toolchain, {}), argv);
  return scratch_in(staged);
}

}  // namespace

CacheEntry cached_build(const fs::path& cache_dir, const std::string& name, const std::string& key,
                        const std::function<bool(const fs::path& work, std::string& log)>& make) {
  CacheEntry e;
  e.dir = cache_dir / (name + "-" + key);
  std::error_code ec;
  if (fs::exists(e.dir / ".complete", ec) && entry_problem(e.dir).empty()) {
    e.cached = e.ok = true;
    return e;
  }
  const std::lock_guard<std::mutex> one_build(entry_turn(e.dir));
  fs::create_directories(cache_dir, ec);
  const EntryLock other_graders(cache_dir / (name + "-" + key + ".lock"));
  if (fs::exists(e.dir, ec)) {
    // Another thread built it while this one waited; else it is half-gone,
    // from an older grader, or tampered with: moved aside and rebuilt, never used.
    if (entry_problem(e.dir).empty()) {
      e.cached = e.ok = true;
      return e;
    }
    const fs::path aside = cache_dir / (name + "-" + key + ".untrusted-" + unique_suffix());
    fs::rename(e.dir, aside, ec);
    fs::remove_all(aside, ec);
  }
  fs::create_directories(cache_dir);
  const fs::path work = cache_dir / (name + "-" + key + ".tmp-" + unique_suffix());
  fs::create_directories(work);
  try {
    e.ok = make(work, e.log);
  } catch (...) {
    fs::remove_all(work, ec);  // interrupted: leave no half-built entry behind
    throw;
  }
  if (!e.ok) {
    fs::remove_all(work, ec);
    return e;
  }
  write_entry_manifest(work);
  fs::rename(work, e.dir, ec);
  if (ec) fs::remove_all(work, ec);  // another grader won the race: its entry is as good
  return e;
}

bool run_tool(std::vector<std::string> argv, const fs::path& work, std::string& log, bool verbose, bool sandboxed,
              std::string* stdout_text) {
  std::optional<SealedRun> sealed;
  fs::path staged;
  std::optional<std::vector<std::string>> env;
  if (sandboxed) env = sandbox_the_compile(argv, work, sealed, staged);
  ChildOptions o;
  o.argv = argv;
  o.cwd = staged.empty() ? work : staged;
  o.env = env;
  o.timeout_s = kCompileTimeout;
  // Files of this call's own: common/'s units compile side by side in one folder,
  // and a shared name lost one compile's errors to another's clean-up.
  static std::atomic<unsigned> calls{0};
  const std::string name = "tool-" + std::to_string(calls++);
  if (stdout_text)
    o.capture_stdout_bytes = 16u << 20;
  else
    o.stdout_file = work / (name + ".stdout");
  o.stderr_file = work / (name + ".stderr");
  if (verbose) {
    std::string line = "$";
    for (const auto& a : argv) line += " " + a;
    std::fprintf(stderr, "%s\n", line.c_str());
  }
  const ChildResult r = run_child(o);
  if (r.interrupted) throw Interrupted();
  std::string out_text = stdout_text ? r.stdout_text : read_file(o.stdout_file).value_or("");
  std::string err_text = read_file(o.stderr_file).value_or("");
  if (sealed) {
    sealed->end_processes();
    sealed->stage_out(staged, work);
    name_the_work_folder(work, staged);
    out_text = replace_all(out_text, staged.string(), work.string());
    err_text = replace_all(err_text, staged.string(), work.string());
  }
  if (stdout_text)
    *stdout_text = out_text;
  else
    log += out_text;
  log += err_text;
  std::error_code ec;
  if (!o.stdout_file.empty()) fs::remove(o.stdout_file, ec);
  fs::remove(o.stderr_file, ec);
  if (!r.started) {
    log += "could not start " + argv[0] + ": " + r.start_error + "\n";
    return false;
  }
  if (r.timed_out) log += argv[0] + " " + r.describe() + "\n";
  return r.exited && r.exit_code == 0;
}

}  // namespace grader::builder_detail
