#include "counter_access.hpp"

#include <unistd.h>

#include <fstream>

namespace grader {

const std::string& counter_access_fix() {
  static const std::string fix =
      "an administrator lets every user read them with "
      "`echo 'options nvidia NVreg_RestrictProfilingPermission=0' | sudo tee /etc/modprobe.d/nvidia-profiling.conf` "
      "then `sudo update-initramfs -u` and a reboot (under WSL2: NVIDIA Control Panel, Developer, Manage GPU "
      "Performance Counters, allow all users); until then the checks that read counters fall back or are not "
      "measured";
  return fix;
}

CounterAccess counter_access(const std::filesystem::path& params, unsigned euid) {
  if (euid == static_cast<unsigned>(-1)) euid = static_cast<unsigned>(::geteuid());
  CounterAccess a;
  std::ifstream in(params);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("RmProfilingAdminOnly:", 0) != 0) continue;
    a.known = true;
    const bool admin_only = line.find('1', sizeof("RmProfilingAdminOnly:") - 1) != std::string::npos;
    a.restricted = admin_only && euid != 0;
    a.summary = !admin_only ? "every user may read the GPU's performance counters (ncu checks run)"
                : euid == 0 ? "the GPU's performance counters are for administrators only, and this is root"
                            : "the GPU's performance counters are for administrators only (ERR_NVGPUCTRPERM): " +
                                  counter_access_fix();
    return a;
  }
  a.summary = "the driver's profiling setting could not be read (" + params.string() + ")";
  return a;
}

}  // namespace grader
