// Builder: what each program is made of and in what order, every step a
// cache entry (builder_steps.cpp). common/'s objects, each lab's driver.cu
// (for the worker and for the referee) and each kernel.cu (builder_kernel.cpp)
// compile at once; the two programs are linked when their parts are there.
#include "builder.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <future>

#include "builder_steps.hpp"
#include "content_hash.hpp"
#include "diagnostics.hpp"
#include "text.hpp"

namespace fs = std::filesystem;

namespace grader {
namespace {

const std::vector<std::string> kSourceExtensions = {".cu", ".cuh", ".hpp", ".h", ".cpp"};

// common/'s translation units, and which program links which. The .cpp units hold no
// device code, so nvcc hands them to the host compiler alone (no cudafe++ or cicc pass):
// the kernels they launch are in support_kernels.cu and device_checks.cu.
const std::vector<std::string> kCommonUnits = {"referee/referee_main.cpp",
                                               "referee/referee_support.cpp",
                                               "referee/timing.cpp",
                                               "referee/timing_slots.cpp",
                                               "referee/timing_report.cpp",
                                               "referee/device_checks.cu",
                                               "referee/support_kernels.cu",
                                               "referee/serve.cpp",
                                               "lab/shared_memory.cpp",
                                               "referee/worker_main.cpp",
                                               "protocol/channel.cpp",
                                               "host/isolation.cpp",
                                               "host/server_process.cpp",
                                               "host/server_launch.cpp",
                                               "host/process_table.cpp",
                                               "host/gpu_turn.cpp",
                                               "host/seal.cpp"};
const std::vector<std::string> kRefereeUnits = {"referee_main",  "referee_support", "timing",          "timing_slots",
                                                "timing_report", "device_checks",   "support_kernels", "serve",
                                                "shared_memory", "server_process",  "server_launch",   "process_table",
                                                "channel",       "isolation",       "gpu_turn",        "seal"};
const std::vector<std::string> kWorkerUnits = {"worker_main", "serve", "support_kernels", "shared_memory", "channel"};

// What a kernel.cu's build checks (builder_kernel.cpp); named again when a check is added.
const char* const kKernelChecks = "checks: includes, library headers, host assembly, #line directives and line markers";

std::string stem_of(const std::string& unit) { return fs::path(unit).stem().string(); }

// The objects of `units` among common/'s, in the order `units` names them.
std::vector<std::string> objects_of(const std::vector<std::string>& units,
                                    const std::vector<fs::path>& common_objects) {
  std::vector<std::string> out;
  for (const auto& u : units)
    for (const auto& o : common_objects)
      if (o.stem() == u) out.push_back(o.string());
  return out;
}

}  // namespace

// One source's compiles, under way.
struct Builder::SourceCompiles {
  std::future<builder_detail::CacheEntry> worker_driver, referee_driver, kernel;
};

struct Builder::CommonObjects {
  std::vector<fs::path> objects;
  std::string log;
  bool cached = false, ok = false;
};

Builder::Builder(Toolchain toolchain, BuildSettings settings)
    : toolchain_(std::move(toolchain)), settings_(std::move(settings)) {}

// C++17, with constexpr host functions callable on the device (std::min, std::max in a
// kernel), which much CUDA code takes for granted: without it an honest kernel.cu that
// called std::min did not build. It costs nothing; --extended-lambda (a __device__
// annotation on a lambda) made every nvcc run 60 % longer (0.57 to 0.92 s for lab07's
// kernel.cu here), and a lambda written inside a kernel needs no annotation.
std::vector<std::string> Builder::compile_flags() const {
  return {"-std=c++17", "--expt-relaxed-constexpr", "-O3", "-lineinfo", "-Xptxas", "-v", "-arch=" + settings_.arch};
}

std::vector<std::string> Builder::nvcc_with_flags() const {
  auto argv = std::vector<std::string>{toolchain_.nvcc.string()};
  for (const auto& f : compile_flags()) argv.push_back(f);
  return argv;
}

std::string Builder::common_key() const {
  ContentHash h;
  h.add(toolchain_.version).add(settings_.arch);
  for (const auto& f : compile_flags()) h.add(f);
  h.add_tree(settings_.course_root / "common", kSourceExtensions);
  // Which files become objects is the grader's choice, not common/'s: a grader
  // that compiles another list must not reuse an entry built from this one.
  for (const auto& u : kCommonUnits) h.add(u);
  return h.hex();
}

bool Builder::common_objects(std::vector<fs::path>& objects, std::string& log, bool& cached) {
  const fs::path common = settings_.course_root / "common";
  auto entry = builder_detail::cached_build(
      settings_.cache_dir, "common", common_key(), [&](const fs::path& work, std::string& out) {
        std::vector<std::future<std::pair<bool, std::string>>> jobs;
        for (const auto& u : kCommonUnits) {
          jobs.push_back(std::async(std::launch::async, [&, u] {
            std::string l;
            auto argv = nvcc_with_flags();
            argv.insert(argv.end(), {"-I" + common.string(), "-I" + (common / "lab").string(), "-c",
                                     (common / u).string(), "-o", (work / (stem_of(u) + ".o")).string()});
            const bool ok = builder_detail::run_tool(argv, work, l, settings_.verbose);
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
  for (const auto& u : kCommonUnits) objects.push_back(entry.dir / (stem_of(u) + ".o"));
  return entry.ok;
}

fs::path Builder::probe() {
  // Built with the grader from this course's common/ (probe_program.cpp): no nvcc wait.
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  const fs::path root = fs::weakly_canonical(settings_.course_root, ec);
  if (!exe.empty() && !root.empty()) {
    const fs::path prebuilt = exe.parent_path() / "grader-probe";
    const auto [r, e] = std::mismatch(root.begin(), root.end(), exe.begin(), exe.end());
    if (r == root.end() && ::access(prebuilt.c_str(), X_OK) == 0) return prebuilt;
  }
  const fs::path common = settings_.course_root / "common";
  ContentHash h;
  h.add(toolchain_.version).add_tree(common, kSourceExtensions);
  auto entry =
      builder_detail::cached_build(settings_.cache_dir, "probe", h.hex(), [&](const fs::path& work, std::string& log) {
        return builder_detail::run_tool(
            {toolchain_.nvcc.string(), "-std=c++17", "-O2", "-I" + common.string(),
             (common / "referee" / "probe_main.cu").string(), (common / "lab" / "shared_memory.cpp").string(), "-o",
             (work / "probe").string()},
            work, log, settings_.verbose);
      });
  if (!entry.ok) throw EnvironmentError("could not build the device probe:\n" + entry.log);
  return entry.dir / "probe";
}

std::vector<RunnerBuild> Builder::build(const std::vector<RunnerSource>& sources) {
  const auto t0 = std::chrono::steady_clock::now();
  CommonObjects common_objs;
  // The common objects and every kernel and driver compile at the same time.
  auto common_job = std::async(
      std::launch::async, [&] { return common_objects(common_objs.objects, common_objs.log, common_objs.cached); });

  const fs::path toolkit_root = fs::weakly_canonical(toolchain_.nvcc).parent_path().parent_path();
  const std::string common_headers = ContentHash().add_tree(settings_.course_root / "common", kSourceExtensions).hex();
  std::vector<SourceCompiles> compiles;
  for (const auto& src : sources) compiles.push_back(start_compiles(src, common_headers, toolkit_root));

  common_objs.ok = common_job.get();
  std::vector<RunnerBuild> results;
  for (std::size_t i = 0; i < sources.size(); ++i) results.push_back(link_runner(sources[i], compiles[i], common_objs));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (auto& r : results) r.seconds = seconds;
  return results;
}

Builder::SourceCompiles Builder::start_compiles(const RunnerSource& src, const std::string& common_headers,
                                                const fs::path& toolkit_root) {
  const fs::path common = settings_.course_root / "common";
  const std::string lab_headers = ContentHash().add_tree(src.lab_dir, builder_detail::kHeaderExtensions).hex();
  ContentHash base;
  base.add(toolchain_.version).add(settings_.arch).add(lab_headers).add(common_headers);
  for (const auto& f : compile_flags()) base.add(f);

  SourceCompiles jobs;
  // driver.cu twice: into the submission's program, and into the referee (which leaves out every call of kernel.cu).
  for (const bool referee : {false, true}) {
    const std::string key =
        ContentHash(base).add(referee ? "referee" : "worker").add_file(src.lab_dir / "driver.cu").hex();
    (referee ? jobs.referee_driver
             : jobs.worker_driver) = std::async(std::launch::async, [this, common, src, key, referee] {
      return builder_detail::cached_build(
          settings_.cache_dir, referee ? "driver-referee" : "driver", key, [&](const fs::path& work, std::string& log) {
            auto argv = nvcc_with_flags();
            if (referee) argv.push_back("-DMEMLABS_REFEREE");
            argv.insert(argv.end(), {"-I" + src.lab_dir.string(), "-I" + (common / "lab").string(), "-c",
                                     (src.lab_dir / "driver.cu").string(), "-o", (work / "driver.o").string()});
            return builder_detail::run_tool(argv, work, log, settings_.verbose);
          });
    });
  }

  // The checks a kernel.cu's build passed are part of its entry's key: an
  // entry a grader without one of them made was never refused by it.
  const std::string kernel_key = ContentHash(base).add("kernel").add(kKernelChecks).add_file(src.kernel).hex();
  const builder_detail::KernelCompile kernel{nvcc_with_flags(), src, common, toolkit_root, settings_.verbose};
  jobs.kernel = std::async(std::launch::async, [this, kernel, kernel_key] {
    return builder_detail::cached_build(
        settings_.cache_dir, "kernel", kernel_key,
        [&](const fs::path& work, std::string& log) { return builder_detail::compile_kernel(kernel, work, log); });
  });
  return jobs;
}

RunnerBuild Builder::link_runner(const RunnerSource& src, SourceCompiles& compiles, const CommonObjects& common_objs) {
  RunnerBuild r;
  const builder_detail::CacheEntry driver = compiles.worker_driver.get();
  const builder_detail::CacheEntry referee_driver = compiles.referee_driver.get();
  const builder_detail::CacheEntry kernel = compiles.kernel.get();
  r.kernel.ok = kernel.ok;
  r.kernel.cached = kernel.cached;
  if (kernel.ok) {
    r.kernel.object = kernel.dir / "kernel.o";
    r.kernel.ptx_file = kernel.dir / "kernel.ptx";
    r.kernel.ptxas_log = read_file(kernel.dir / "ptxas.log").value_or("");
  }
  if (!kernel.ok) {
    r.stage = "kernel";
    r.diagnostics = format_compiler_output(kernel.log, {});
    r.kernel.diagnostics = r.diagnostics;
    return r;
  }
  const fs::path common = settings_.course_root / "common";
  const auto rewrites = std::vector<std::pair<std::string, std::string>>{{src.lab_dir.string() + "/", ""},
                                                                         {common.string() + "/", "common/"}};
  if (!driver.ok || !referee_driver.ok) {
    r.stage = "driver";
    r.diagnostics = format_compiler_output(driver.ok ? referee_driver.log : driver.log, rewrites);
    return r;
  }
  if (!common_objs.ok) {
    r.stage = "common";
    r.diagnostics = format_compiler_output(common_objs.log, {{common.string() + "/", "common/"}});
    return r;
  }
  const builder_detail::CacheEntry worker = link_program(
      src, "worker", kWorkerUnits, {driver.dir / "driver.o", kernel.dir / "kernel.o"}, common_objs.objects);
  if (!worker.ok) {
    r.stage = "link";
    r.diagnostics = format_compiler_output(worker.log, {{settings_.cache_dir.string() + "/", ""}});
    // A library's function (cublasSgemm_v2 declared by hand): the program links none.
    const std::string library = library_calls(undefined_symbols(worker.log));
    if (!library.empty())
      r.diagnostics = library + "\n" + r.diagnostics;
    else if (auto missing = missing_symbol(worker.log))
      r.diagnostics =
          *missing + "\n" + src.display_name + " must define it exactly as lab.cuh declares it.\n" + r.diagnostics;
    return r;
  }
  const builder_detail::CacheEntry referee =
      link_program(src, "referee", kRefereeUnits, {referee_driver.dir / "driver.o"}, common_objs.objects);
  if (!referee.ok) {
    r.stage = "referee";
    r.diagnostics = "the lab's referee does not link (a course problem):\n" +
                    format_compiler_output(referee.log, {{settings_.cache_dir.string() + "/", ""}});
    return r;
  }
  r.ok = true;
  r.cached = kernel.cached && driver.cached && worker.cached && referee.cached && common_objs.cached;
  r.worker = worker.dir / "worker";
  r.referee = referee.dir / "referee";
  return r;
}

// The key holds the names of the entries `extra` comes from, which are hashes of their inputs.
// lab.json's "link" libraries go into the referee only, which times the library in its
// trusted server: linked into the submission's program, a library would be there for
// kernel.cu to call (cublasSgemm writing C after a decoy kernel), whatever its includes.
builder_detail::CacheEntry Builder::link_program(const RunnerSource& src, const std::string& name,
                                                 const std::vector<std::string>& units,
                                                 const std::vector<fs::path>& extra,
                                                 const std::vector<fs::path>& common_objects) {
  const std::vector<std::string> libraries = name == "referee" ? src.referee_libraries : std::vector<std::string>{};
  ContentHash key;
  key.add(common_key()).add(name);
  for (const auto& e : extra) key.add(e.parent_path().filename().string());
  // An entry of an older grader, which linked the libraries into both, is not this one.
  key.add(name == "referee" ? "libraries:" : "no libraries");
  for (const auto& l : libraries) key.add(l);
  return builder_detail::cached_build(
      settings_.cache_dir, name, key.hex(), [&](const fs::path& work, std::string& log) {
        auto argv = std::vector<std::string>{toolchain_.nvcc.string(), "-arch=" + settings_.arch};
        for (const auto& o : objects_of(units, common_objects)) argv.push_back(o);
        for (const auto& e : extra) argv.push_back(e.string());
        for (const auto& l : libraries) argv.push_back("-l" + l);
        argv.insert(argv.end(), {"-o", (work / name).string()});
        return builder_detail::run_tool(argv, work, log, settings_.verbose);
      });
}

}  // namespace grader
