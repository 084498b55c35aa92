#include "device.hpp"

#include <cstdlib>
#include <fstream>

#include "atomic_file.hpp"
#include "builder.hpp"
#include "child_process.hpp"
#include "content_hash.hpp"
#include "sandbox.hpp"
#include "text.hpp"

namespace fs = std::filesystem;

namespace grader {

std::string cuda_version_string(int v) {
  if (v <= 0) return "none";
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

namespace {

// The probe's answer holds for this boot of this machine with the same driver
// and the same visible devices: the next grade then need not start CUDA only
// to meet the same GPU again (0.16 s on an H100). No key without an NVIDIA
// driver, so a machine without one asks every time.
std::string kept_device_key(const fs::path& probe) {
  const auto boot = read_file("/proc/sys/kernel/random/boot_id");
  const auto driver = read_file("/proc/driver/nvidia/version");
  if (!boot || !driver) return "";
  ContentHash h;
  h.add("device/1").add(*boot).add(*driver).add(probe.string());
  for (const char* name : {"CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"}) {
    const char* v = std::getenv(name);
    h.add(std::string(name) + (v ? "=" + std::string(v) : " unset"));
  }
  return h.hex();
}

}  // namespace

DeviceInfo device_from_probe(const nlohmann::json& j) {
  DeviceInfo d;
  d.raw = j;
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
  if (j.contains("memcpy_gbps") && j["memcpy_gbps"].is_number()) d.memcpy_gbps = j["memcpy_gbps"].get<double>();
  return d;
}

DeviceInfo probe_device(Builder& builder, const fs::path& work_dir, bool measure_bandwidth) {
  DeviceInfo d;
  if (const char* no_gpu = std::getenv("GRADER_NO_GPU"); no_gpu && *no_gpu && std::string(no_gpu) != "0") {
    d.reason = "GRADER_NO_GPU is set";
    return d;
  }
  // `grader doctor` measures the bandwidth: always a run of its own. A sandboxed
  // grade (a batch's) asks every time: the GPU's UUID names the machine-wide lock,
  // and nothing a submission could have written may choose it.
  const bool keep = !measure_bandwidth && !isolation_from_environment().enabled();
  const std::string key = keep ? kept_device_key(builder.probe()) : "";
  const fs::path kept = builder.settings().cache_dir / ("device-" + key + ".json");
  if (!key.empty())
    if (const auto text = read_file(kept)) try {
        const DeviceInfo cached = device_from_probe(nlohmann::json::parse(*text));
        if (cached.present) return cached;
      } catch (const std::exception&) {
        // unreadable: ask the probe
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
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    d.reason = std::string("the device probe wrote an unreadable result: ") + e.what();
    return d;
  }
  d = device_from_probe(j);
  if (d.present && !key.empty()) {
    try {
      write_file_atomically(kept, j.dump() + "\n");
    } catch (const std::exception&) {
      // not kept: the next grade asks the probe again
    }
  }
  return d;
}

}  // namespace grader
