// Builds, with nvcc, the two programs a grade runs (common/referee/referee.cuh):
//   - the lab's referee: driver.cu (as MEMLABS_REFEREE) + common's referee;
//     trusted, built from course files only, one per lab;
//   - the submission's program (the worker): driver.cu + the kernel.cu being
//     graded + common's worker, and no library: lab.json's "link" libraries
//     are the referee's (driver.cu calls them under MEMLABS_REFEREE only).
// Every step is cached under .grader/cache by a SHA-256 of everything that
// goes into it, so an unchanged lab re-grades without compiling.
//
// A kernel.cu is compiled as hostile code: in a private folder holding only a
// copy of it and of the lab's and common/lab/'s headers, never the course; every
// file it includes must be one of those or the toolkit's and the system's
// headers, none of them a header of a library that would do the lab's work
// (CUB, Thrust, cuBLAS, ...), and its host assembly may not read files
// (.incbin, .include) or build directives (.macro, .irp, .rept). In isolated
// mode (batch grading) nvcc also runs inside the sandbox, where the course
// does not exist.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "toolchain.hpp"

namespace grader {
namespace builder_detail {
struct CacheEntry;  // builder_steps.hpp
}

struct BuildSettings {
  std::filesystem::path course_root;  // holds common/
  std::filesystem::path cache_dir;    // <course>/.grader/cache
  std::string arch = "sm_90";         // from the GPU when one is visible, else the default or --arch
  bool verbose = false;
};

struct KernelBuild {
  bool ok = false, cached = false;
  std::filesystem::path object, ptx_file;
  std::string ptxas_log;    // the -Xptxas -v report
  std::string diagnostics;  // compiler messages with short paths, first error first
};

struct RunnerBuild {
  bool ok = false, cached = false;
  double seconds = 0;
  std::string stage;              // where it failed: "kernel", "driver", "common", "link", "referee"
  std::string diagnostics;        // human-readable, short paths
  std::filesystem::path worker;   // the submission's program
  std::filesystem::path referee;  // the lab's referee
  KernelBuild kernel;
};

struct RunnerSource {
  std::filesystem::path lab_dir;  // driver.cu, lab.cuh
  std::filesystem::path kernel;   // the kernel.cu to build (student's, a fixture, or the solution)
  std::string display_name = "kernel.cu";
  // From lab.json "link": linked into the lab's referee only, where the
  // library is timed; the submission's program links none (a library there
  // could do the lab's work in the student's place).
  std::vector<std::string> referee_libraries;
};

// What a kernel.cu may include, and what its host assembly may not hold.
// Empty when the file list and the assembly are clean, else the sentence to show.
std::string foreign_includes(const std::vector<std::string>& dependencies,
                             const std::vector<std::filesystem::path>& allowed_roots);
// The headers of a library that would do a lab's work (CUB, Thrust, cuBLAS,
// ..., builder_checks.cpp's table) among the files below `header_roots`
// (the toolkit's and the system's) that kernel.cu's build reads; files below
// `staged` (kernel.cu, the lab's and common/lab/'s headers) are the course's. The
// refusal names the headers kernel.cu's own #include lines name (`source`),
// else the first library header read. Empty when there is none.
std::string library_includes(const std::vector<std::string>& dependencies,
                             const std::vector<std::filesystem::path>& header_roots,
                             const std::filesystem::path& staged, const std::string& source);
// The refusal for (header, library) pairs, as library_includes words it.
std::string library_refusal(const std::vector<std::pair<std::string, std::string>>& headers);
// The refusal for an include name that is a library's header ("cutlass/gemm.h"),
// where the preprocessor did not find it; nullopt for any other name.
std::optional<std::string> library_of_header(const std::string& include);
// For the undefined symbols of a failed link of the submission's program, the
// sentence to show when some are a library's functions (cublasSgemm_v2): the
// program links no library. Empty when none is.
std::string library_calls(const std::vector<std::string>& undefined_symbols);
std::string forbidden_assembly(const std::string& assembly);
// The files of a "make" dependency rule as nvcc -M writes it.
std::vector<std::string> parse_dependency_rule(const std::string& text);

class Builder {
 public:
  Builder(Toolchain toolchain, BuildSettings settings);
  // Builds several programs; the common objects are built once and the rest in parallel.
  std::vector<RunnerBuild> build(const std::vector<RunnerSource>& sources);
  // The device probe (host code only; independent of the arch).
  std::filesystem::path probe();
  const BuildSettings& settings() const { return settings_; }
  const Toolchain& toolchain() const { return toolchain_; }

 private:
  struct SourceCompiles;  // one source's driver and kernel compiles, under way
  struct CommonObjects;   // common/'s objects, once built

  std::vector<std::string> compile_flags() const;
  std::vector<std::string> nvcc_with_flags() const;  // nvcc, then compile_flags()
  std::string common_key() const;
  bool common_objects(std::vector<std::filesystem::path>& objects, std::string& log, bool& cached);
  SourceCompiles start_compiles(const RunnerSource& src, const std::string& common_headers,
                                const std::filesystem::path& toolkit_root);
  // The two programs of `src`, once its compiles are done, or where it failed.
  RunnerBuild link_runner(const RunnerSource& src, SourceCompiles& compiles, const CommonObjects& common_objs);
  builder_detail::CacheEntry link_program(const RunnerSource& src, const std::string& name,
                                          const std::vector<std::string>& units,
                                          const std::vector<std::filesystem::path>& extra,
                                          const std::vector<std::filesystem::path>& common_objects);

  Toolchain toolchain_;
  BuildSettings settings_;
};

}  // namespace grader
