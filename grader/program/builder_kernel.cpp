// kernel.cu compiled as hostile code: staged in a private folder with only
// the lab's headers and the lab API's (common/lab/), its #line directives and its includes
// (nvcc -M: no other file, and no header of a library that would do the lab's
// work) checked before anything is compiled, then compiled in the sandbox,
// and its preprocessed code's line markers and its host assembly checked even
// when the compile failed; what it shows of the compiler's messages is about
// its own files only. What may be included and assembled is decided in
// builder_checks.cpp, which files its lines may be said to come from in
// line_directives.cpp.
#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>

#include "builder_steps.hpp"
#include "diagnostics.hpp"
#include "line_directives.hpp"
#include "text.hpp"

namespace fs = std::filesystem;

namespace grader::builder_detail {
namespace {

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

// Messages name the files as the student knows them, not by the staged copies.
std::string short_paths(std::string text, const KernelCompile& job, const fs::path& stage, const fs::path& work) {
  for (const auto& [from, to] :
       std::vector<std::pair<std::string, std::string>>{{(stage / "kernel.cu").string(), job.source.display_name},
                                                        {(stage / "lab").string() + "/", ""},
                                                        {(stage / "common").string() + "/", "common/"},
                                                        {work.string() + "/", ""}}) {
    for (std::size_t pos = 0; (pos = text.find(from, pos)) != std::string::npos; pos += to.size())
      text.replace(pos, from.size(), to);
  }
  return text;
}

// Where a kernel.cu may include from besides its staged folder: the toolkit's and the system's headers.
std::vector<fs::path> header_roots(const KernelCompile& job) {
  return {job.toolkit_root, "/usr/include", "/usr/lib/gcc", "/usr/local/include"};
}

// Every file kernel.cu includes, before anything is compiled: false with the
// refusal (or the preprocessor's errors) in `log` when one is not allowed.
bool includes_allowed(const KernelCompile& job, const std::vector<std::string>& flags, const fs::path& stage,
                      const fs::path& work, std::string& log) {
  std::string deps;
  auto dep_argv = flags;
  dep_argv.insert(dep_argv.end(), {"-M", (stage / "kernel.cu").string()});
  if (!run_tool(dep_argv, work, log, job.verbose, /*sandboxed=*/true, &deps)) {
    // A file outside the staged folder that does not exist here (in the
    // sandbox nothing of the course does), or that the seal keeps the compiler
    // from reading, is the same refusal as one it could read.
    static const std::regex missing(R"(error: (\S+): (No such file or directory|Permission denied))");
    std::smatch m;
    const std::string all = log;
    if (std::regex_search(all, m, missing)) {
      // A library's header by its include name (cutlass/gemm.h), installed
      // here or not: the same refusal as one that was found.
      if (m[1].str().front() != '/') {
        if (auto library = library_of_header(m[1].str())) {
          log = *library + "\n";
          return false;
        }
      }
      const std::string foreign = foreign_includes(
          {m[1].str().front() == '/' ? m[1].str() : (stage / m[1].str()).string()}, {fs::weakly_canonical(stage)});
      if (!foreign.empty()) {
        log = foreign + "\n";
        return false;
      }
    }
    // Only what concerns the student's own file: the preprocessor may be
    // quoting a file the submission tried to pull in.
    std::istringstream lines(short_paths(log, job, stage, work));
    log = "kernel.cu could not be preprocessed:\n";
    for (std::string line; std::getline(lines, line);)
      if (line.rfind(job.source.display_name, 0) == 0) log += line + "\n";
    return false;
  }
  const std::vector<std::string> files = parse_dependency_rule(deps);
  std::vector<fs::path> roots = header_roots(job);
  roots.insert(roots.begin(), fs::weakly_canonical(stage));
  const std::string foreign = foreign_includes(files, roots);
  if (!foreign.empty()) {
    log = foreign + "\n";
    return false;
  }
  // Of the toolkit's and the system's headers, none of a library that would do the lab's work.
  const std::string library = library_includes(files, header_roots(job), fs::weakly_canonical(stage),
                                               read_file(stage / "kernel.cu").value_or(""));
  if (!library.empty()) {
    log = library + "\n";
    return false;
  }
  return true;
}

// The preprocessed kernel.cu (nvcc --keep's .ii, for the device and for the
// host), whose line markers say which file each line is from, whatever macro
// made a #line's file name: empty, or why it is refused.
std::string foreign_preprocessed_lines(const fs::path& work, const PublicFiles& files) {
  std::error_code ec;
  for (fs::directory_iterator it(work / "keep", ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() != ".ii") continue;
    const std::string bad = foreign_line_marker(read_file(it->path()).value_or(""), files);
    if (!bad.empty()) return bad;
  }
  return "";
}

// The host assembly, exactly as the assembler read it: empty, or why it is refused.
std::string forbidden_host_assembly(const fs::path& work) {
  std::error_code ec;
  for (fs::directory_iterator it(work, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() != ".s") continue;
    const std::string bad = forbidden_assembly(read_file(it->path()).value_or(""));
    if (!bad.empty()) return bad;
  }
  return "";
}

// Leaves the cache entry only what a grade reads: kernel.o, kernel.ptx, ptxas.log.
bool keep_outputs(const fs::path& work, const fs::path& stage, const std::string& log) {
  std::error_code ec;
  fs::rename(work / "keep" / "kernel.ptx", work / "kernel.ptx", ec);
  std::ofstream(work / "ptxas.log") << log;
  fs::remove_all(work / "keep", ec);
  fs::remove_all(stage, ec);
  for (fs::directory_iterator it(work, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".s" || it->path().extension() == ".ii") fs::remove(it->path(), ec);
  return fs::exists(work / "kernel.ptx");
}

}  // namespace

bool compile_kernel(const KernelCompile& job, const fs::path& work, std::string& log) {
  // A private folder with only what a submission may see, under fixed
  // names so messages and the PTX file name do not depend on what the
  // submission was called.
  const fs::path stage = work / "src";
  fs::create_directories(stage);
  fs::copy_file(job.source.kernel, stage / "kernel.cu", fs::copy_options::overwrite_existing);
  copy_headers(job.source.lab_dir, stage / "lab");
  copy_headers(job.common / "lab", stage / "common" / "lab");
  fs::create_directories(work / "keep");
  auto flags = job.nvcc;
  flags.insert(flags.end(), {"-I" + (stage / "lab").string(), "-I" + (stage / "common" / "lab").string()});
  const PublicFiles files(stage, work, header_roots(job));  // what its build may name (line_directives.hpp)
  // Before the preprocessor runs at all: its own #warning or #error would quote the file a #line names.
  const std::string renamed = foreign_line_directive(read_file(stage / "kernel.cu").value_or(""), files);
  if (!renamed.empty()) {
    log = renamed + "\n";
    return false;
  }
  if (!includes_allowed(job, flags, stage, work, log)) return false;

  auto argv = flags;
  argv.insert(argv.end(), {"--keep", "--keep-dir", (work / "keep").string(), "-Xcompiler", "-save-temps=obj", "-c",
                           (stage / "kernel.cu").string(), "-o", (work / "kernel.o").string()});
  const bool ok = run_tool(argv, work, log, job.verbose, /*sandboxed=*/true);
  // Only what the compiler said of kernel.cu and the files it may include:
  // whatever escaped the checks here, a message about another file quotes it.
  const std::string own = without_messages_about(log, [&](const std::string& f) { return files.contains(f); });
  if (own != log) log = own + "(the compiler's messages about other files are not shown)\n";
  log = short_paths(log, job, stage, work);
  // Looked at even when the build failed, since the compiler's and the
  // assembler's errors could quote what such a directive pulled in.
  for (const std::string& bad : {foreign_preprocessed_lines(work, files), forbidden_host_assembly(work)}) {
    if (!bad.empty()) {
      log = bad + "\n";
      return false;
    }
  }
  if (!ok) return false;
  return keep_outputs(work, stage, log);
}

}  // namespace grader::builder_detail
