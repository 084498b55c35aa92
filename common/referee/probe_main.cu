// The device probe: what GPU the grader is about to use, if any. The grader is
// host-only C++; it learns about the GPU by running this small program, so a
// machine without a driver still runs the grader (and is told why GPU steps
// were skipped).
//
//   probe --result F [--bandwidth]
#include <cuda_runtime.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "event_timer.cuh"
#include "lab/cuda_check.cuh"
#include "lab/device_buffer.cuh"
#include "protocol/stats.hpp"

using nlohmann::json;

namespace {

// cudaMemcpy device-to-device of 256 MiB (or a quarter of free memory),
// counting bytes read plus bytes written: the "peak" every lab's % is against.
double measure_memcpy_gbps() {
  std::size_t free_bytes = 0, total = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
  const std::size_t bytes = std::min<std::size_t>(256u << 20, free_bytes / 4) / 256 * 256;
  memlabs::DeviceBuffer<unsigned char> src(bytes), dst(bytes);
  CUDA_CHECK(cudaMemset(src.data(), 1, bytes));
  memlabs::EventTimer timer;
  std::vector<double> gbps;
  for (int i = 0; i < 25; ++i) {
    timer.start(nullptr);
    CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), bytes, cudaMemcpyDeviceToDevice, nullptr));
    timer.stop(nullptr);
    const double ms = timer.elapsed_ms();
    if (i >= 5) gbps.push_back(2.0 * bytes / (ms * 1e6));  // the first few warm up
  }
  return memlabs::median_interval(gbps).median;
}

json probe(bool bandwidth) {
  json j;
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  j["driver_version"] = driver;
  j["runtime_version"] = runtime;
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    j["devices"] = 0;
    if (driver == 0)
      j["reason"] = "no NVIDIA driver is loaded on this machine";
    else if (err == cudaErrorInsufficientDriver || driver < runtime)
      j["reason"] = "the driver supports CUDA " + std::to_string(driver / 1000) + "." +
                    std::to_string(driver % 1000 / 10) + ", and the course's programs are built with CUDA " +
                    std::to_string(runtime / 1000) + "." + std::to_string(runtime % 1000 / 10) +
                    ": install a driver that supports it (CUDA 13 needs the R580 driver or newer)";
    else if (err != cudaSuccess)
      j["reason"] = std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
    else
      j["reason"] = "the driver reports no CUDA device";
    return j;
  }
  j["devices"] = count;
  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp p{};
  CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
  j["name"] = p.name;
  j["cc_major"] = p.major;
  j["cc_minor"] = p.minor;
  j["arch"] = "sm_" + std::to_string(p.major * 10 + p.minor);
  // The same form as nvidia-smi's "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx".
  std::string uuid = "GPU-";
  for (int i = 0; i < 16; ++i) {
    char hex[3];
    std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned char>(p.uuid.bytes[i]));
    uuid += hex;
    if (i == 3 || i == 5 || i == 7 || i == 9) uuid += '-';
  }
  j["uuid"] = uuid;
  j["sms"] = p.multiProcessorCount;
  j["l2_bytes"] = p.l2CacheSize;
  j["global_mem_bytes"] = p.totalGlobalMem;
  j["shared_per_block"] = p.sharedMemPerBlock;
  j["shared_per_sm"] = p.sharedMemPerMultiprocessor;
  j["bus_width_bits"] = p.memoryBusWidth;
  j["managed_memory"] = p.managedMemory != 0;
  if (bandwidth) j["memcpy_gbps"] = measure_memcpy_gbps();
  return j;
}

}  // namespace

int main(int argc, char** argv) {
  std::string result_path;
  bool bandwidth = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--result" && i + 1 < argc)
      result_path = argv[++i];
    else if (a == "--bandwidth")
      bandwidth = true;
  }
  json j;
  try {
    j = probe(bandwidth);
  } catch (const std::exception& e) {
    j["devices"] = 0;
    j["reason"] = e.what();
  }
  if (result_path.empty()) {
    std::puts(j.dump(2).c_str());
    return 0;
  }
  std::ofstream(result_path + ".tmp") << j.dump(2) << '\n';
  return std::rename((result_path + ".tmp").c_str(), result_path.c_str()) == 0 ? 0 : 1;
}
