// What GPU (if any) the grader will run on, learned from the probe program.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace grader {

class Builder;

struct DeviceInfo {
  bool present = false;
  std::string reason;  // why there is no device, in the runtime's words
  std::string name, arch;
  std::string uuid;  // "GPU-5e4a...": names the GPU's lock file (gpu_lock.hpp)
  int sms = 0, driver_version = 0, runtime_version = 0;
  long long l2_bytes = 0, global_mem_bytes = 0;
  std::optional<double> memcpy_gbps;
  nlohmann::json raw;
};

// Runs the probe, or reuses its answer from earlier in this boot (same driver,
// same visible devices; never when measuring the bandwidth). GRADER_NO_GPU=1
// pretends there is no device (to test the no-GPU path on a GPU machine).
DeviceInfo probe_device(Builder& builder, const std::filesystem::path& work_dir, bool measure_bandwidth);

// A DeviceInfo from the probe's result document.
DeviceInfo device_from_probe(const nlohmann::json& probe_result);

// "13.0" from 13000.
std::string cuda_version_string(int version);

}  // namespace grader
