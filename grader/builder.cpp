#include "builder.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <future>
#include <iterator>
#include <random>
#include <regex>
#include <sstream>

#include "child_process.hpp"
#include "content_hash.hpp"
#include "diagnostics.hpp"
#include "isolation.hpp"
#include "sandbox.hpp"
#include "text.hpp"

namespace fs = std::filesystem;

namespace grader {
namespace {

constexpr double kCompileTimeout = 600;
const std::vector<std::string> kSourceExtensions = {".cu", ".cuh", ".hpp", ".h", ".cpp"};
const std::vector<std::string> kHeaderExtensions = {".cuh", ".h", ".hpp"};

// common/'s translation units, and which program links which.
const std::vector<std::string> kCommonUnits = {
    "referee_main.cu",  "referee_support.cu", "timing.cu",   "device_checks.cu", "serve.cu",
    "shared_memory.cu", "worker_main.cu",     "channel.cpp", "isolation.cpp",    "server_process.cpp"};
const std::vector<std::string> kRefereeUnits = {"referee_main",  "referee_support", "timing",
                                                "device_checks", "serve",           "shared_memory",
                                                "channel",       "isolation",       "server_process"};
const std::vector<std::string> kWorkerUnits = {"worker_main", "serve", "shared_memory", "channel"};

std::string stem_of(const std::string& unit) { return fs::path(unit).stem().string(); }

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
// `sandboxed` runs it inside bwrap with only `work` writable (isolated mode).
bool run_tool(std::vector<std::string> argv, const fs::path& work, std::string& log, bool verbose,
              bool sandboxed = false, std::string* stdout_text = nullptr) {
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
  if (stdout_text)
    o.capture_stdout_bytes = 16u << 20;
  else
    o.stdout_file = work / "tool.stdout";
  o.stderr_file = work / "tool.stderr";
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
  fs::remove(work / "tool.stdout", ec);
  fs::remove(o.stderr_file, ec);
  if (!r.started) {
    log += "could not start " + argv[0] + ": " + r.start_error + "\n";
    return false;
  }
  if (r.timed_out) log += argv[0] + " " + r.describe() + "\n";
  return r.exited && r.exit_code == 0;
}

// Copies every header of `from` (not its subfolders) into `to`.
void copy_headers(const fs::path& from, const fs::path& to) {
  fs::create_directories(to);
  std::error_code ec;
  for (fs::directory_iterator it(from, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    const auto ext = it->path().extension().string();
    if (std::find(kHeaderExtensions.begin(), kHeaderExtensions.end(), ext) != kHeaderExtensions.end())
      fs::copy_file(it->path(), to / it->path().filename(), fs::copy_options::overwrite_existing);
  }
}

bool under(const fs::path& p, const fs::path& root) {
  const std::string s = p.string(), r = root.string();
  return s == r || (s.size() > r.size() && s.compare(0, r.size(), r) == 0 && (r.back() == '/' || s[r.size()] == '/'));
}

}  // namespace

std::vector<std::string> parse_dependency_rule(const std::string& text) {
  std::vector<std::string> files;
  std::string word;
  bool target_done = false;
  const auto flush = [&] {
    if (word.empty()) return;
    if (!target_done && word.back() == ':') {
      target_done = true;  // "kernel.o:" names the target, not a dependency
    } else if (target_done && word != "\\" && word != ":") {
      files.push_back(word);
    } else if (!target_done && word == ":") {
      target_done = true;
    }
    word.clear();
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\' && i + 1 < text.size() && text[i + 1] == ' ') {  // an escaped space is part of a name
      word += ' ';
      ++i;
    } else if (c == '\\' && i + 1 < text.size() && text[i + 1] == '\n') {
      flush();
      ++i;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      flush();
    } else {
      word += c;
    }
  }
  flush();
  return files;
}

std::string foreign_includes(const std::vector<std::string>& dependencies, const std::vector<fs::path>& allowed_roots) {
  std::vector<std::string> foreign;
  for (const auto& d : dependencies) {
    std::error_code ec;
    const fs::path p = fs::weakly_canonical(fs::path(d), ec);
    bool ok = false;
    for (const auto& root : allowed_roots) ok = ok || under(ec ? fs::path(d) : p, root);
    if (!ok) foreign.push_back(fs::path(d).filename().string());
  }
  if (foreign.empty()) return "";
  std::string list;
  for (std::size_t i = 0; i < foreign.size() && i < 5; ++i) list += (i ? ", " : "") + foreign[i];
  return "kernel.cu includes a file that is neither the lab's nor common/'s header nor the toolkit's (" + list +
         "): a submission is built from kernel.cu and the lab's public headers only";
}

std::string forbidden_assembly(const std::string& assembly) {
  // Directives that read a file into the program or make up other directives.
  static const std::regex directive(R"((^|[\s;:])\.(incbin|include|macro|irp|irpc|rept|altmacro|purgem)\b)");
  std::istringstream in(assembly);
  std::string line;
  while (std::getline(in, line)) {
    // Without the text of string literals: a message that mentions ".include" is not one.
    std::string code;
    bool in_string = false, escaped = false;
    for (const char c : line) {
      if (in_string) {
        if (escaped)
          escaped = false;
        else if (c == '\\')
          escaped = true;
        else if (c == '"')
          in_string = false;
        continue;
      }
      if (c == '"') {
        in_string = true;
        code += "\"\"";
        continue;
      }
      if (c == '#') break;  // a comment to the end of the line
      code += c;
    }
    std::smatch m;
    if (std::regex_search(code, m, directive))
      return "kernel.cu's host code holds assembly with ." + m[2].str() +
             ", which reads other files into the program or builds directives; a submission may not";
  }
  return "";
}

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
  auto entry = cached_build(settings_.cache_dir, "common", common_key(), [&](const fs::path& work, std::string& out) {
    std::vector<std::future<std::pair<bool, std::string>>> jobs;
    for (const auto& u : kCommonUnits) {
      jobs.push_back(std::async(std::launch::async, [&, u] {
        std::string l;
        auto argv = std::vector<std::string>{toolchain_.nvcc.string()};
        for (const auto& f : compile_flags()) argv.push_back(f);
        argv.insert(argv.end(),
                    {"-I" + common.string(), "-c", (common / u).string(), "-o", (work / (stem_of(u) + ".o")).string()});
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
  auto entry = cached_build(settings_.cache_dir, "probe", h.hex(), [&](const fs::path& work, std::string& log) {
    return run_tool(
        {toolchain_.nvcc.string(), "-std=c++17", "-O2", "-I" + common.string(), (common / "probe_main.cu").string(),
         (common / "shared_memory.cu").string(), "-o", (work / "probe").string()},
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
  auto common_job =
      std::async(std::launch::async, [&] { return common_objects(common_objs, common_log, common_cached); });

  const fs::path common = settings_.course_root / "common";
  const fs::path toolkit_root = fs::weakly_canonical(toolchain_.nvcc).parent_path().parent_path();
  const std::string common_headers = ContentHash().add_tree(common, kSourceExtensions).hex();
  std::vector<std::future<CacheEntry>> worker_drivers, referee_drivers, kernels;
  for (const auto& src : sources) {
    const std::string lab_headers = ContentHash().add_tree(src.lab_dir, kHeaderExtensions).hex();
    ContentHash base;
    base.add(toolchain_.version).add(settings_.arch).add(lab_headers).add(common_headers);
    for (const auto& f : compile_flags()) base.add(f);

    // driver.cu twice: into the submission's program, and into the referee (which leaves out every call of kernel.cu).
    for (const bool referee : {false, true}) {
      const std::string key =
          ContentHash(base).add(referee ? "referee" : "worker").add_file(src.lab_dir / "driver.cu").hex();
      (referee ? referee_drivers : worker_drivers).push_back(std::async(std::launch::async, [&, src, key, referee] {
        return cached_build(settings_.cache_dir, referee ? "driver-referee" : "driver", key,
                            [&](const fs::path& work, std::string& log) {
                              auto argv = std::vector<std::string>{toolchain_.nvcc.string()};
                              for (const auto& f : compile_flags()) argv.push_back(f);
                              if (referee) argv.push_back("-DMEMLABS_REFEREE");
                              argv.insert(argv.end(),
                                          {"-I" + src.lab_dir.string(), "-I" + common.string(), "-c",
                                           (src.lab_dir / "driver.cu").string(), "-o", (work / "driver.o").string()});
                              return run_tool(argv, work, log, settings_.verbose);
                            });
      }));
    }

    const std::string kernel_key = ContentHash(base).add("kernel").add_file(src.kernel).hex();
    kernels.push_back(std::async(std::launch::async, [&, src, kernel_key] {
      return cached_build(settings_.cache_dir, "kernel", kernel_key, [&](const fs::path& work, std::string& log) {
        // A private folder with only what a submission may see, under fixed
        // names so messages and the PTX file name do not depend on what the
        // submission was called.
        const fs::path stage = work / "src";
        fs::create_directories(stage);
        fs::copy_file(src.kernel, stage / "kernel.cu", fs::copy_options::overwrite_existing);
        copy_headers(src.lab_dir, stage / "lab");
        copy_headers(common, stage / "common");
        fs::create_directories(work / "keep");
        auto flags = std::vector<std::string>{toolchain_.nvcc.string()};
        for (const auto& f : compile_flags()) flags.push_back(f);
        flags.insert(flags.end(), {"-I" + (stage / "lab").string(), "-I" + (stage / "common").string()});
        const auto shorten = [&](std::string text) {
          for (const auto& [from, to] :
               std::vector<std::pair<std::string, std::string>>{{(stage / "kernel.cu").string(), src.display_name},
                                                                {(stage / "lab").string() + "/", ""},
                                                                {(stage / "common").string() + "/", "common/"},
                                                                {work.string() + "/", ""}}) {
            for (std::size_t pos = 0; (pos = text.find(from, pos)) != std::string::npos; pos += to.size())
              text.replace(pos, from.size(), to);
          }
          return text;
        };
        // Every file it includes, before anything is compiled.
        std::string deps;
        auto dep_argv = flags;
        dep_argv.insert(dep_argv.end(), {"-M", (stage / "kernel.cu").string()});
        if (!run_tool(dep_argv, work, log, settings_.verbose, /*sandboxed=*/true, &deps)) {
          // A file outside the staged folder that does not exist here (in the
          // sandbox nothing of the course does) is the same refusal as one that does.
          static const std::regex missing(R"(error: (\S+): No such file or directory)");
          std::smatch m;
          const std::string all = log;
          if (std::regex_search(all, m, missing)) {
            const std::string foreign =
                foreign_includes({m[1].str().front() == '/' ? m[1].str() : (stage / m[1].str()).string()},
                                 {fs::weakly_canonical(stage)});
            if (!foreign.empty()) {
              log = foreign + "\n";
              return false;
            }
          }
          // Only what concerns the student's own file: the preprocessor may be
          // quoting a file the submission tried to pull in.
          std::istringstream lines(shorten(log));
          log = "kernel.cu could not be preprocessed:\n";
          for (std::string line; std::getline(lines, line);)
            if (line.rfind(src.display_name, 0) == 0) log += line + "\n";
          return false;
        }
        const std::string foreign = foreign_includes(
            parse_dependency_rule(deps),
            {fs::weakly_canonical(stage), toolkit_root, "/usr/include", "/usr/lib/gcc", "/usr/local/include"});
        if (!foreign.empty()) {
          log = foreign + "\n";
          return false;
        }
        auto argv = flags;
        argv.insert(argv.end(), {"--keep", "--keep-dir", (work / "keep").string(), "-Xcompiler", "-save-temps=obj",
                                 "-c", (stage / "kernel.cu").string(), "-o", (work / "kernel.o").string()});
        const bool ok = run_tool(argv, work, log, settings_.verbose, /*sandboxed=*/true);
        log = shorten(log);
        // The host assembly, exactly as the assembler read it; looked at even
        // when the build failed, since the assembler's errors could quote what
        // such a directive pulled in.
        std::error_code ec;
        for (fs::directory_iterator it(work, ec), end; !ec && it != end; it.increment(ec)) {
          if (it->path().extension() != ".s") continue;
          const std::string bad = forbidden_assembly(read_file(it->path()).value_or(""));
          if (!bad.empty()) {
            log = bad + "\n";
            return false;
          }
        }
        if (!ok) return false;
        fs::rename(work / "keep" / "kernel.ptx", work / "kernel.ptx", ec);
        std::ofstream(work / "ptxas.log") << log;
        fs::remove_all(work / "keep", ec);
        fs::remove_all(stage, ec);
        for (fs::directory_iterator it(work, ec), end; !ec && it != end; it.increment(ec))
          if (it->path().extension() == ".s" || it->path().extension() == ".ii") fs::remove(it->path(), ec);
        return fs::exists(work / "kernel.ptx");
      });
    }));
  }

  const bool common_ok = common_job.get();
  const auto objects_of = [&](const std::vector<std::string>& units) {
    std::vector<std::string> out;
    for (const auto& u : units)
      for (const auto& o : common_objs)
        if (o.stem() == u) out.push_back(o.string());
    return out;
  };
  for (std::size_t i = 0; i < sources.size(); ++i) {
    const auto& src = sources[i];
    auto& r = results[i];
    const CacheEntry driver = worker_drivers[i].get();
    const CacheEntry referee_driver = referee_drivers[i].get();
    const CacheEntry kernel = kernels[i].get();
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
      continue;
    }
    const auto rewrites = std::vector<std::pair<std::string, std::string>>{{src.lab_dir.string() + "/", ""},
                                                                           {common.string() + "/", "common/"}};
    if (!driver.ok || !referee_driver.ok) {
      r.stage = "driver";
      r.diagnostics = format_compiler_output(driver.ok ? referee_driver.log : driver.log, rewrites);
      continue;
    }
    if (!common_ok) {
      r.stage = "common";
      r.diagnostics = format_compiler_output(common_log, {{common.string() + "/", "common/"}});
      continue;
    }
    const auto link = [&](const std::string& name, const std::vector<std::string>& units,
                          const std::vector<fs::path>& extra) {
      ContentHash key;
      key.add(common_key()).add(name);
      for (const auto& e : extra) key.add(e.parent_path().filename().string());
      for (const auto& l : src.link_libraries) key.add(l);
      return cached_build(settings_.cache_dir, name, key.hex(), [&](const fs::path& work, std::string& log) {
        auto argv = std::vector<std::string>{toolchain_.nvcc.string(), "-arch=" + settings_.arch};
        for (const auto& o : objects_of(units)) argv.push_back(o);
        for (const auto& e : extra) argv.push_back(e.string());
        for (const auto& l : src.link_libraries) argv.push_back("-l" + l);
        argv.insert(argv.end(), {"-o", (work / name).string()});
        return run_tool(argv, work, log, settings_.verbose);
      });
    };
    const CacheEntry worker = link("worker", kWorkerUnits, {driver.dir / "driver.o", kernel.dir / "kernel.o"});
    if (!worker.ok) {
      r.stage = "link";
      r.diagnostics = format_compiler_output(worker.log, {{settings_.cache_dir.string() + "/", ""}});
      if (auto missing = missing_symbol(worker.log))
        r.diagnostics =
            *missing + "\n" + src.display_name + " must define it exactly as lab.cuh declares it.\n" + r.diagnostics;
      continue;
    }
    const CacheEntry referee = link("referee", kRefereeUnits, {referee_driver.dir / "driver.o"});
    if (!referee.ok) {
      r.stage = "referee";
      r.diagnostics = "the lab's referee does not link (a course problem):\n" +
                      format_compiler_output(referee.log, {{settings_.cache_dir.string() + "/", ""}});
      continue;
    }
    r.ok = true;
    r.cached = kernel.cached && driver.cached && worker.cached && referee.cached && common_cached;
    r.worker = worker.dir / "worker";
    r.referee = referee.dir / "referee";
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (auto& r : results) r.seconds = seconds;
  return results;
}

}  // namespace grader
