// Whether this user may read the GPU's performance counters, which every ncu
// check needs. The NVIDIA driver restricts them to administrators by default on
// many desktop installs (the module parameter RmProfilingAdminOnly: 1), and ncu
// then fails with ERR_NVGPUCTRPERM. `grader doctor` says so before a grade
// does, with the fix; a grade falls back where a check has a fallback.
#pragma once

#include <filesystem>
#include <string>

namespace grader {

struct CounterAccess {
  bool known = false;       // the driver's parameters could be read
  bool restricted = false;  // counters for administrators only, and this user is not one
  std::string summary;      // one line for doctor
};

// `params` is the driver's parameter file; `euid` the user asking (root may always read them).
CounterAccess counter_access(const std::filesystem::path& params = "/proc/driver/nvidia/params",
                             unsigned euid = static_cast<unsigned>(-1));

// What an administrator runs to let every user read the counters, and what WSL2 needs instead.
const std::string& counter_access_fix();

}  // namespace grader
