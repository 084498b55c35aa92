// What Builder builds with, private to builder*.cpp: an entry of the build
// cache, made at most once and never seen half-built (builder_steps.cpp), one
// run of nvcc or of the linker through it (builder_steps.cpp), and the compile
// of a kernel.cu as hostile code (builder_kernel.cpp).
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "builder.hpp"

namespace grader::builder_detail {

inline const std::vector<std::string> kHeaderExtensions = {".cuh", ".h", ".hpp"};

// One cache entry: <cache>/<name>-<key>/ holds the outputs once complete.
// It is built in a private temporary folder and renamed into place, so a
// half-built entry is never seen, and two graders building the same entry at
// once both end up with a complete one.
struct CacheEntry {
  std::filesystem::path dir;
  bool cached = false;
  bool ok = false;
  std::string log;
};

CacheEntry cached_build(const std::filesystem::path& cache_dir, const std::string& name, const std::string& key,
                        const std::function<bool(const std::filesystem::path& work, std::string& log)>& make);

// Runs nvcc (or the linker through it); returns success and the combined output.
// `sandboxed` runs it inside bwrap with only `work` writable (isolated mode).
bool run_tool(std::vector<std::string> argv, const std::filesystem::path& work, std::string& log, bool verbose,
              bool sandboxed = false, std::string* stdout_text = nullptr);

struct KernelCompile {
  std::vector<std::string> nvcc;  // nvcc and the compile flags every unit shares
  RunnerSource source;
  std::filesystem::path common;        // the course's common/
  std::filesystem::path toolkit_root;  // whose headers a kernel.cu may include
  bool verbose = false;
};

// Builds kernel.o, kernel.ptx and ptxas.log in `work`, or returns false with
// the message to show in `log`.
bool compile_kernel(const KernelCompile& job, const std::filesystem::path& work, std::string& log);

}  // namespace grader::builder_detail
