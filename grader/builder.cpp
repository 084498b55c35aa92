#include "builder.hpp"

#include <unistd.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <future>
#include <iterator>
#include <random>

#include "child_process.hpp"
#include "content_hash.hpp"
#include "diagnostics.hpp"

namespace fs = std::filesystem;

namespace grader {
namespace {

constexpr double kCompileTimeout = 600;
const std::vector<std::string> kSourceExtensions = {".cu", ".cuh", ".hpp", ".h"};

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (std::size_t pos = 0; (pos = s.find(from, pos)) != std::string::npos; pos += to.size())
    s.replace(pos, from.size(), to);
  return s;
}

std::string unique_suffix() {
  static std::mt19937_64 rng{std::random_device{}()};
  return std::to_string(getpid()) + "-" + std::to_string(rng() % 1000000000);
}

// One cache entry: <cache>/<name>-<key>/ holds the outputs once complete.
// It is built in a private temporary folder and renamed into place, so a
// half-built entry is never seen, and two graders building the same entry at
// once both end up with a complete one.
struct CacheEntry {
  fs::path dir;
  bool cached = false;
  bool ok = false;
  std::string log;
};

CacheEntry cached_build(const fs::path& cache_dir, const std::string& name, const std::string& key,
                        const std::function<bool(const fs::path& work, std::string& log)>& make) {
  CacheEntry e;
  e.dir = cache_dir / (name + "-" + key);
  std::error_code ec;
  if (fs::exists(e.dir / ".complete", ec)) {
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

// Runs nvcc (or the linker through it); returns success and the combined output.
bool run_tool(const std::vector<std::string>& argv, const fs::path& work, std::string& log,
              bool verbose) {
  ChildOptions o;
  o.argv = argv;
  o.cwd = work;
  o.timeout_s = kCompileTimeout;
  o.stdout_file = work / "tool.stdout";
  o.stderr_file = work / "tool.stderr";
  if (verbose) {
    std::string line = "$";
    for (const auto& a : argv) line += " " + a;
    std::fprintf(stderr, "%s\n", line.c_str());
  }
  const ChildResult r = run_child(o);
  if (r.interrupted) throw Interrupted();
  log += read_file(o.stdout_file) + read_file(o.stderr_file);
  std::error_code ec;
  fs::remove(o.stdout_file, ec);
  fs::remove(o.stderr_file, ec);
  if (!r.started) {
    log += "could not start " + argv[0] + ": " + r.start_error + "\n";
    return false;
  }
  if (r.timed_out) log += argv[0] + " " + r.describe() + "\n";
  return r.exited && r.exit_code == 0;
}

}  // namespace

Builder::Builder(Toolchain toolchain, BuildSettings settings)
    : toolchain_(std::move(toolchain)), settings_(std::move(settings)) {}

std::vector<std::string> Builder::compile_flags() const {
  return {"-std=c++17", "-O3", "-lineinfo", "-Xptxas", "-v", "-arch=" + settings_.arch};
}

std::string Builder::common_key() const {
  ContentHash h;
  h.add(toolchain_.version).add(settings_.arch);
  for (const auto& f : compile_flags()) h.add(f);
  h.add_tree(settings_.course_root / "common", kSourceExtensions);
  return h.hex();
}

bool Builder::common_objects(std::vector<fs::path>& objects, std::string& log, bool& cached) {
  const fs::path common = settings_.course_root / "common";
  const std::vector<std::string> units = {"runner_main", "timing"};
  auto entry = cached_build(settings_.cache_dir, "common", common_key(), [&](const fs::path& work, std::string& out) {
    std::vector<std::future<std::pair<bool, std::string>>> jobs;
    for (const auto& u : units) {
      jobs.push_back(std::async(std::launch::async, [&, u] {
        std::string l;
        auto argv = std::vector<std::string>{toolchain_.nvcc.string()};
        for (const auto& f : compile_flags()) argv.push_back(f);
        argv.insert(argv.end(), {"-I" + common.string(), "-c", (common / (u + ".cu")).string(), "-o",
                                 (work / (u + ".o")).string()});
        const bool ok = run_tool(argv, work, l, settings_.verbose);
        return std::make_pair(ok, l);
      }));
    }
    bool ok = true;
    for (auto& j : jobs) {
      auto [good, l] = j.get();
      ok = ok && good;
      if (!good) out += l;
    }
    return ok;
  });
  log = entry.log;
  cached = entry.cached;
  for (const auto& u : units) objects.push_back(entry.dir / (u + ".o"));
  return entry.ok;
}

fs::path Builder::probe() {
  const fs::path common = settings_.course_root / "common";
  ContentHash h;
  h.add(toolchain_.version).add_tree(common, kSourceExtensions);
  auto entry = cached_build(settings_.cache_dir, "probe", h.hex(), [&](const fs::path& work, std::string& log) {
    return run_tool({toolchain_.nvcc.string(), "-std=c++17", "-O2", "-I" + common.string(),
                     (common / "probe_main.cu").string(), "-o", (work / "probe").string()},
                    work, log, settings_.verbose);
  });
  if (!entry.ok) throw EnvironmentError("could not build the device probe:\n" + entry.log);
  return entry.dir / "probe";
}

std::vector<RunnerBuild> Builder::build(const std::vector<RunnerSource>& sources) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<RunnerBuild> results(sources.size());
  std::vector<fs::path> common_objs;
  std::string common_log;
  bool common_cached = false;
  // The common objects and every kernel and driver compile at the same time.
  auto common_job = std::async(std::launch::async, [&] {
    return common_objects(common_objs, common_log, common_cached);
  });

  const fs::path common = settings_.course_root / "common";
  const std::string common_headers = ContentHash().add_tree(common, kSourceExtensions).hex();
  std::vector<std::future<CacheEntry>> drivers, kernels;
  for (const auto& src : sources) {
    const std::string lab_headers = ContentHash().add_tree(src.lab_dir, {".cuh", ".h", ".hpp"}).hex();
    ContentHash base;
    base.add(toolchain_.version).add(settings_.arch).add(lab_headers);
    for (const auto& f : compile_flags()) base.add(f);

    const std::string driver_key = ContentHash(base).add(common_headers).add_file(src.lab_dir / "driver.cu").hex();
    drivers.push_back(std::async(std::launch::async, [&, src, driver_key] {
      return cached_build(settings_.cache_dir, "driver", driver_key, [&](const fs::path& work, std::string& log) {
        auto argv = std::vector<std::string>{toolchain_.nvcc.string()};
        for (const auto& f : compile_flags()) argv.push_back(f);
        argv.insert(argv.end(), {"-I" + src.lab_dir.string(), "-I" + common.string(), "-c",
                                 (src.lab_dir / "driver.cu").string(), "-o", (work / "driver.o").string()});
        return run_tool(argv, work, log, settings_.verbose);
      });
    }));

    const std::string kernel_key = ContentHash(base).add(common_headers).add_file(src.kernel).hex();
    kernels.push_back(std::async(std::launch::async, [&, src, kernel_key] {
      return cached_build(settings_.cache_dir, "kernel", kernel_key, [&](const fs::path& work, std::string& log) {
        // Compiled under a fixed name, so messages and the PTX file name do not
        // depend on what the submission was called.
        fs::copy_file(src.kernel, work / "kernel.cu", fs::copy_options::overwrite_existing);
        fs::create_directories(work / "keep");
        auto argv = std::vector<std::string>{toolchain_.nvcc.string()};
        for (const auto& f : compile_flags()) argv.push_back(f);
        argv.insert(argv.end(), {"--keep", "--keep-dir", (work / "keep").string(), "-I" + src.lab_dir.string(),
                                 "-I" + common.string(), "-c", (work / "kernel.cu").string(), "-o",
                                 (work / "kernel.o").string()});
        const bool ok = run_tool(argv, work, log, settings_.verbose);
        // The temporary folder's name is noise to a student: messages name the file as they know it.
        log = replace_all(log, (work / "kernel.cu").string(), src.display_name);
        std::error_code ec;
        if (ok) {
          fs::rename(work / "keep" / "kernel.ptx", work / "kernel.ptx", ec);
          std::ofstream(work / "ptxas.log") << log;
        }
        fs::remove_all(work / "keep", ec);
        return ok && fs::exists(work / "kernel.ptx");
      });
    }));
  }

  const bool common_ok = common_job.get();
  for (std::size_t i = 0; i < sources.size(); ++i) {
    const auto& src = sources[i];
    auto& r = results[i];
    const CacheEntry driver = drivers[i].get();
    const CacheEntry kernel = kernels[i].get();
    r.kernel.ok = kernel.ok;
    r.kernel.cached = kernel.cached;
    if (kernel.ok) {
      r.kernel.object = kernel.dir / "kernel.o";
      r.kernel.ptx_file = kernel.dir / "kernel.ptx";
      r.kernel.ptxas_log = read_file(kernel.dir / "ptxas.log");
    }
    if (!kernel.ok) {
      r.stage = "kernel";
      r.diagnostics = format_compiler_output(
          kernel.log, {{src.lab_dir.string() + "/", ""}, {common.string() + "/", "common/"}});
      r.kernel.diagnostics = r.diagnostics;
      continue;
    }
    if (!driver.ok) {
      r.stage = "driver";
      r.diagnostics = format_compiler_output(driver.log, {{src.lab_dir.string() + "/", ""}, {common.string() + "/", "common/"}});
      continue;
    }
    if (!common_ok) {
      r.stage = "common";
      r.diagnostics = format_compiler_output(common_log, {{common.string() + "/", "common/"}});
      continue;
    }
    ContentHash link_key;
    link_key.add(common_key()).add(driver.dir.filename().string()).add(kernel.dir.filename().string());
    for (const auto& l : src.link_libraries) link_key.add(l);
    const CacheEntry link = cached_build(settings_.cache_dir, "runner", link_key.hex(), [&](const fs::path& work, std::string& log) {
      auto argv = std::vector<std::string>{toolchain_.nvcc.string(), "-arch=" + settings_.arch};
      for (const auto& o : common_objs) argv.push_back(o.string());
      argv.push_back((driver.dir / "driver.o").string());
      argv.push_back((kernel.dir / "kernel.o").string());
      for (const auto& l : src.link_libraries) argv.push_back("-l" + l);
      argv.insert(argv.end(), {"-o", (work / "runner").string()});
      return run_tool(argv, work, log, settings_.verbose);
    });
    if (!link.ok) {
      r.stage = "link";
      r.diagnostics = format_compiler_output(link.log, {{settings_.cache_dir.string() + "/", ""}});
      if (auto missing = missing_symbol(link.log))
        r.diagnostics = *missing + "\n" + src.display_name + " must define it exactly as lab.cuh declares it.\n" + r.diagnostics;
      continue;
    }
    r.ok = true;
    r.cached = kernel.cached && driver.cached && link.cached && common_cached;
    r.runner = link.dir / "runner";
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (auto& r : results) r.seconds = seconds;
  return results;
}

}  // namespace grader
