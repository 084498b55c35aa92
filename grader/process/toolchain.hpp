// Finding the CUDA toolkit. The grader must work from a non-login shell, where
// /usr/local/cuda/bin is often not on PATH, so it looks in the usual places too.
#pragma once

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>

namespace grader {

class EnvironmentError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A command line that cannot work as typed (exit 2), found once the toolkit is known.
class UsageError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The oldest toolkit the course builds with: lab03 uses CUDA 13's cudaMemPrefetchAsync.
inline constexpr int kRequiredCudaMajor = 13;

struct Toolchain {
  std::filesystem::path nvcc;
  std::string version;  // "13.0.88", from nvcc --version
  std::optional<std::filesystem::path> ncu, compute_sanitizer, cuobjdump;
};

std::optional<std::filesystem::path> find_on_path(const std::string& program);
// CUDACXX, then PATH, then $CUDA_HOME/bin, then the compiler CMake found, then /usr/local/cuda/bin.
std::optional<std::filesystem::path> find_nvcc();
// Throws EnvironmentError naming what to install when nvcc is missing or broken.
Toolchain detect_toolchain();

// --arch must name a real GPU this nvcc can build for (sm_90, sm_80, sm_90a...).
// Throws UsageError saying what to write instead: a typo is the user's
// command line, never "kernel.cu does not build".
void check_arch(const Toolchain& toolchain, const std::string& arch);

}  // namespace grader
