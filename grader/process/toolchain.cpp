#include "toolchain.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <regex>
#include <sstream>
#include <vector>

namespace fs = std::filesystem;

namespace grader {
namespace {

bool is_executable(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && access(p.c_str(), X_OK) == 0;
}

// Runs a trusted toolchain command (no student input in it) and returns stdout.
std::string capture(const std::string& command) {
  std::string out;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) return out;
  std::array<char, 512> buf{};
  while (fgets(buf.data(), buf.size(), pipe.get())) out += buf.data();
  return out;
}

std::optional<fs::path> find_cuda_tool(const fs::path& nvcc, const std::string& name) {
  if (auto p = find_on_path(name)) return p;
  for (const fs::path& dir : {nvcc.parent_path(), nvcc.parent_path().parent_path() / "nsight-compute"}) {
    if (is_executable(dir / name)) return dir / name;
  }
  return std::nullopt;
}

}  // namespace

std::optional<fs::path> find_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  if (!path) return std::nullopt;
  std::stringstream ss(path);
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    if (dir.empty()) continue;
    const fs::path candidate = fs::path(dir) / program;
    if (is_executable(candidate)) return candidate;
  }
  return std::nullopt;
}

std::optional<fs::path> find_nvcc() {
  if (const char* cudacxx = std::getenv("CUDACXX"); cudacxx && is_executable(cudacxx)) return fs::path(cudacxx);
  if (auto p = find_on_path("nvcc")) return p;
  std::vector<fs::path> candidates;
  if (const char* home = std::getenv("CUDA_HOME")) candidates.push_back(fs::path(home) / "bin/nvcc");
#ifdef GRADER_CMAKE_NVCC
  candidates.push_back(GRADER_CMAKE_NVCC);
#endif
  candidates.push_back("/usr/local/cuda/bin/nvcc");
  for (const auto& c : candidates)
    if (is_executable(c)) return c;
  return std::nullopt;
}

Toolchain detect_toolchain() {
  auto nvcc = find_nvcc();
  if (!nvcc)
    throw EnvironmentError(
        "nvcc (the CUDA compiler) was not found on PATH, in $CUDA_HOME/bin or in "
        "/usr/local/cuda/bin. Install the CUDA Toolkit, or set CUDACXX to the nvcc to use.");
  Toolchain t;
  t.nvcc = *nvcc;
  const std::string version_text = capture("'" + nvcc->string() + "' --version 2>&1");
  std::smatch m;
  if (std::regex_search(version_text, m, std::regex(R"(V(\d+\.\d+\.\d+))"))) t.version = m[1];
  if (t.version.empty())
    throw EnvironmentError(nvcc->string() + " --version did not report a version; is the toolkit broken?\n" +
                           version_text);
  if (const int major = std::stoi(t.version.substr(0, t.version.find('.'))); major < kRequiredCudaMajor)
    throw EnvironmentError(
        "this course needs CUDA " + std::to_string(kRequiredCudaMajor) + " or newer, and the nvcc found (" +
        nvcc->string() + ") is CUDA " + t.version +
        ": its labs use CUDA 13's forms of the runtime API (lab03's cudaMemPrefetchAsync takes a location and flags "
        "there). Install the CUDA 13 toolkit (developer.nvidia.com/cuda-downloads, or NVIDIA's package "
        "cuda-toolkit-13-0) and put its bin/ first on PATH, or set CUDACXX to its nvcc; its programs need a driver "
        "that supports CUDA 13 (R580 or newer).");
  t.ncu = find_cuda_tool(t.nvcc, "ncu");
  t.compute_sanitizer = find_cuda_tool(t.nvcc, "compute-sanitizer");
  t.cuobjdump = find_cuda_tool(t.nvcc, "cuobjdump");
  return t;
}

void check_arch(const Toolchain& toolchain, const std::string& arch) {
  // What this nvcc builds for: "sm_75 sm_80 ... sm_121".
  std::vector<std::string> known;
  std::istringstream list(capture("'" + toolchain.nvcc.string() + "' --list-gpu-code 2>/dev/null"));
  for (std::string word; list >> word;)
    if (word.rfind("sm_", 0) == 0) known.push_back(word);
  std::string known_text;
  for (const auto& k : known) known_text += (known_text.empty() ? "" : ", ") + k;
  const std::string examples =
      "write sm_ and the compute capability without its dot, e.g. sm_90 for an H100, "
      "sm_80 for an A100, sm_89 for an RTX 4090";
  std::smatch m;
  if (!std::regex_match(arch, m, std::regex(R"(sm_(\d{2,3})[af]?)"))) {
    std::smatch digits;
    const bool bare = std::regex_match(arch, digits, std::regex(R"((?:sm|compute_?|)(\d{2,3})|(\d)\.(\d))"));
    const std::string guess = !bare               ? ""
                              : digits[1].matched ? "sm_" + digits[1].str()
                                                  : "sm_" + digits[2].str() + digits[3].str();
    throw UsageError("--arch " + arch + " is not a GPU architecture" +
                     (guess.empty() ? "" : " (did you mean " + guess + "?)") + ": " + examples +
                     (known.empty() ? "" : "; this nvcc builds for " + known_text));
  }
  if (!known.empty() && std::find(known.begin(), known.end(), "sm_" + m[1].str()) == known.end())
    throw UsageError("--arch " + arch + ": nvcc " + toolchain.version + " cannot build for it; it builds for " +
                     known_text);
}

}  // namespace grader
