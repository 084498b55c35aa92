#include "device.hpp"

#include <cstdlib>
#include <fstream>

#include "builder.hpp"
#include "child_process.hpp"

namespace fs = std::filesystem;

namespace grader {

std::string cuda_version_string(int v) {
  if (v <= 0) return "none";
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

DeviceInfo probe_device(Builder& builder, const fs::path& work_dir, bool measure_bandwidth) {
  DeviceInfo d;
  if (const char* no_gpu = std::getenv("GRADER_NO_GPU"); no_gpu && *no_gpu && std::string(no_gpu) != "0") {
    d.reason = "GRADER_NO_GPU is set";
    return d;
  }
  fs::create_directories(work_dir);
  const fs::path result = work_dir / "probe.json";
  ChildOptions o;
  o.argv = {builder.probe().string(), "--result", result.string()};
  if (measure_bandwidth) o.argv.push_back("--bandwidth");
  o.timeout_s = 60;
  o.stdout_file = work_dir / "probe.stdout";
  o.stderr_file = work_dir / "probe.stderr";
  const ChildResult r = run_child(o);
  std::ifstream in(result);
  if (!in) {
    d.reason = "the device probe failed (" + r.describe() + "): " + read_head(o.stderr_file, 2000);
    return d;
  }
  try {
    d.raw = nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    d.reason = std::string("the device probe wrote an unreadable result: ") + e.what();
    return d;
  }
  const auto& j = d.raw;
  d.driver_version = j.value("driver_version", 0);
  d.runtime_version = j.value("runtime_version", 0);
  d.present = j.value("devices", 0) > 0;
  d.reason = j.value("reason", "");
  if (!d.present) return d;
  d.name = j.value("name", "");
  d.arch = j.value("arch", "");
  d.uuid = j.value("uuid", "");
  d.sms = j.value("sms", 0);
  d.l2_bytes = j.value("l2_bytes", 0LL);
  d.global_mem_bytes = j.value("global_mem_bytes", 0LL);
  if (j.contains("memcpy_gbps")) d.memcpy_gbps = j["memcpy_gbps"].get<double>();
  return d;
}

}  // namespace grader
