// The build cache's entries and the runs of nvcc that fill them: what every
// compile and link of Builder goes through (see builder_steps.hpp).
#include "builder_steps.hpp"

#include <unistd.h>

#include <atomic>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <random>

#include "child_process.hpp"
#include "isolation.hpp"
#include "sandbox.hpp"
#include "text.hpp"

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

}  // namespace

CacheEntry cached_build(const fs::path& cache_dir, const std::string& name, const std::string& key,
                        const std::function<bool(const fs::path& work, std::string& log)>& make) {
  CacheEntry e;
  e.dir = cache_dir / (name + "-" + key);
  std::error_code ec;
  if (fs::exists(e.dir / ".complete", ec)) {
    e.cached = e.ok = true;
    return e;
  }
  const std::lock_guard<std::mutex> one_build(entry_turn(e.dir));
  if (fs::exists(e.dir / ".complete", ec)) {  // another thread built it while this one waited
    e.cached = e.ok = true;
    return e;
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
  std::ofstream(work / ".complete") << "ok\n";
  fs::rename(work, e.dir, ec);
  if (ec) fs::remove_all(work, ec);  // another grader won the race: its entry is as good
  return e;
}

bool run_tool(std::vector<std::string> argv, const fs::path& work, std::string& log, bool verbose, bool sandboxed,
              std::string* stdout_text) {
  if (sandboxed) {
    const memlabs::Isolation sandbox = submission_isolation(isolation_from_environment(), kCompileTimeout);
    if (sandbox.mode == "bwrap") {
      const fs::path nvcc_root = fs::weakly_canonical(argv.at(0)).parent_path().parent_path();
      argv = memlabs::bwrap_command(sandbox, {nvcc_root.string()}, {work.string()}, argv);
    }
  }
  ChildOptions o;
  o.argv = argv;
  o.cwd = work;
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
  if (stdout_text)
    *stdout_text = r.stdout_text;
  else
    log += read_file(o.stdout_file).value_or("");
  log += read_file(o.stderr_file).value_or("");
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
