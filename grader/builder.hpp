// Builds runners with nvcc: common objects, the lab's driver, a kernel.cu,
// linked into one program. Every step is cached under .grader/cache by a
// content hash of everything that goes into it, so an unchanged lab re-grades
// without compiling, and the student's and the reference's kernels compile in
// parallel.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "toolchain.hpp"

namespace grader {

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
  std::string stage;        // where it failed: "kernel", "driver", "common", "link"
  std::string diagnostics;  // human-readable, short paths
  std::filesystem::path runner;
  KernelBuild kernel;
};

struct RunnerSource {
  std::filesystem::path lab_dir;       // driver.cu, lab.cuh
  std::filesystem::path kernel;        // the kernel.cu to build (student's, a fixture, or the solution)
  std::string display_name = "kernel.cu";
  std::vector<std::string> link_libraries;  // from lab.json "link"
};

class Builder {
 public:
  Builder(Toolchain toolchain, BuildSettings settings);
  // Builds several runners; the common objects are built once and the rest in parallel.
  std::vector<RunnerBuild> build(const std::vector<RunnerSource>& sources);
  // The device probe (host code only; independent of the arch).
  std::filesystem::path probe();
  const BuildSettings& settings() const { return settings_; }
  const Toolchain& toolchain() const { return toolchain_; }

 private:
  struct Step;
  std::vector<std::string> compile_flags() const;
  std::string common_key() const;
  bool common_objects(std::vector<std::filesystem::path>& objects, std::string& log, bool& cached);

  Toolchain toolchain_;
  BuildSettings settings_;
};

}  // namespace grader
