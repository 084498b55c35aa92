// Prebuilt reference runners. A published class copy has no solutions/, so
// `grader publish` builds each lab's reference runner once, as a fat binary
// (SASS for several GPU generations plus PTX of the newest, which later GPUs
// JIT-compile), and ships it as .reference/<lab-folder>/runner with a
// runner.json beside it. grade_lab uses it when the solution's source is absent.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "toolchain.hpp"

namespace grader {

inline constexpr const char* kReferenceDir = ".reference";
inline constexpr const char* kReferenceSchema = "cuda-memory-labs/reference-runner/1";

struct PrebuiltReference {
  std::filesystem::path runner, info_file;
  std::vector<std::string> archs;  // SASS: "sm_80", "sm_90"
  std::string ptx;                 // embedded PTX: "compute_90"
  std::string nvcc_version, source_sha256, lab;
  std::string problem;             // why it cannot be used (unreadable runner.json, not executable); empty if usable
};

// What the reference runner was built from, besides the solution: the lab's
// driver.cu and headers, and common/. A change to any of them means the
// prebuilt runner no longer matches the copy it is graded in.
std::string reference_source_hash(const std::filesystem::path& course_root, const std::filesystem::path& lab_dir);

// nullopt when the course has no .reference/<lab_folder>/runner.
std::optional<PrebuiltReference> find_prebuilt_reference(const std::filesystem::path& course_root,
                                                         const std::string& lab_folder);

// "sm_86" -> 86, "sm_100" -> 100; nullopt for anything else (sm_90a included:
// arch-specific code runs on one GPU only, useless in a class copy).
std::optional<int> sm_number(const std::string& arch);
// Whether a binary with SASS for `archs` and PTX for `ptx` runs on a GPU of
// `device_arch`: SASS runs on the same major version at an equal or newer
// minor; PTX is JIT-compiled for any GPU at least as new as it.
bool prebuilt_runs_on(const std::vector<std::string>& archs, const std::string& ptx, const std::string& device_arch);

struct FatBuildRequest {
  std::filesystem::path course_root, lab_dir, solution;
  std::vector<std::string> link_libraries;
  std::vector<std::string> archs;  // sm_XX, ascending; PTX of the last one is embedded too
  std::filesystem::path out_dir;   // receives runner and runner.json
  std::string lab_folder;
  bool verbose = false;
};

// Builds the runner (common runner objects + driver.cu + the solution) and
// writes runner.json. Returns false with nvcc's messages in `log`.
bool build_fat_reference(const Toolchain& toolchain, const FatBuildRequest& request, std::string& log);

}  // namespace grader
