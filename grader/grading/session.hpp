// Everything a command needs before it can grade: the course, the toolkit,
// the builder and the GPU (if any). Commands that need none of it (list,
// hint) only open the course, which keeps them instant.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "builder.hpp"
#include "course.hpp"
#include "device.hpp"
#include "options.hpp"
#include "toolchain.hpp"

namespace grader {

struct Session {
  GlobalOptions global;
  Course course;
  Toolchain toolchain;
  std::unique_ptr<Builder> builder;
  DeviceInfo device;

  // Throws EnvironmentError when nvcc is missing.
  static Session open(const GlobalOptions& global, bool measure_bandwidth = false);
  // A fresh private folder for one command's runs, under .grader/runs.
  std::filesystem::path new_run_dir(const std::string& tag) const;
  // Where this user's self-study calibration of this GPU and toolkit is kept
  // (calibration.hpp's user_calibration_file); nullopt without a GPU.
  std::optional<std::filesystem::path> user_calibration() const;
};

}  // namespace grader
