// grader doctor — is this machine ready to grade? Toolkit, driver, GPU,
// measured copy bandwidth, the profilers; each line says what to do when not.
#include <iostream>

#include "app.hpp"
#include "calibration.hpp"
#include "counter_access.hpp"
#include "json_text.hpp"
#include "session.hpp"
#include "terminal.hpp"

namespace grader {
namespace {

std::string gb(long long bytes) { return std::to_string(bytes / 1000000) + " MB"; }

// Which timed thresholds this GPU's grades use (calibration.hpp); a calibration
// that does not read is the course's error, said here rather than in every grade.
CalibrationUse thresholds_here(const Session& s, std::string& error) {
  try {
    return calibration_for(s.course.root(), s.device.present ? s.device.name : "", s.user_calibration());
  } catch (const CalibrationError& e) {
    error = e.what();
    return {};
  }
}

// What the machine has, as JSON: the course, the toolkit and its tools, the
// driver and the GPU (or why there is none).
nlohmann::json doctor_json(const Course& course, const std::optional<Session>& session,
                           const std::optional<std::string>& toolkit_error) {
  nlohmann::json j = {{"schema", "cuda-memory-labs/doctor/1"}};
  j["course"] = course.root().string();
  j["labs"] = course.labs().size();
  j["state"] = course.state_dir().string();
  if (!course.state_note().empty()) j["state_note"] = course.state_note();
  if (!session) {
    j["toolkit"] = {{"ok", false}, {"error", toolkit_error.value_or("")}};
    return j;
  }
  const auto& t = session->toolchain;
  const auto& d = session->device;
  j["toolkit"] = {{"ok", true}, {"nvcc", t.nvcc.string()}, {"version", t.version}};
  j["ncu"] = t.ncu ? nlohmann::json(t.ncu->string()) : nlohmann::json(nullptr);
  j["compute_sanitizer"] =
      t.compute_sanitizer ? nlohmann::json(t.compute_sanitizer->string()) : nlohmann::json(nullptr);
  j["driver"] = cuda_version_string(d.driver_version);
  const CounterAccess counters = counter_access();
  j["counters"] = {{"known", counters.known}, {"restricted", counters.restricted}, {"summary", counters.summary}};
  j["runtime"] = cuda_version_string(d.runtime_version);
  j["arch"] = session->builder->settings().arch;
  j["gpu"] = d.present ? d.raw : nlohmann::json(nullptr);
  if (!d.present) j["no_gpu_reason"] = d.reason;
  std::string error;
  const CalibrationUse use = thresholds_here(*session, error);
  j["calibration"] = {{"state", error.empty() ? name_of(use.state) : "error"},
                      {"file", use.file.string()},
                      {"summary", error.empty() ? use.header(course.root().string()) : error}};
  return j;
}

// The same, one line a part, each marked as usable or not.
void print_doctor(const GlobalOptions& g, const Session& session) {
  const auto line = [](bool ok, const std::string& what, const std::string& text) {
    std::cout << "  " << (ok ? Style::pass_mark() : Style::fail_mark()) << " " << Style::bold(what) << "  " << text
              << "\n";
  };
  const auto& t = session.toolchain;
  const auto& d = session.device;
  line(true, "toolkit", "nvcc " + t.version + " at " + t.nvcc.string());
  line(d.driver_version > 0, "driver",
       d.driver_version > 0 ? "CUDA " + cuda_version_string(d.driver_version) : "no NVIDIA driver found");
  if (d.present) {
    line(true, "GPU",
         d.name + " · " + d.arch + " · " + std::to_string(d.sms) + " SMs · L2 " + gb(d.l2_bytes) + " · " +
             gb(d.global_mem_bytes));
    if (d.memcpy_gbps)
      line(true, "memcpy",
           std::to_string(static_cast<int>(*d.memcpy_gbps)) +
               " GB/s device-to-device (read + write): every lab's \"% of peak\" is against the copy "
               "bandwidth measured in the same run");
  } else {
    line(false, "GPU", "none: " + d.reason + ". Static checks still run; GPU steps are skipped (exit code 4).");
  }
  line(true, "arch",
       "building for " + session.builder->settings().arch +
           (g.arch.empty() ? (d.present ? " (this GPU)" : " (default; --arch to change)") : " (--arch)"));
  line(t.ncu.has_value(), "ncu", t.ncu ? t.ncu->string() : "not found: hardware-counter checks fall back to timing");
  if (d.present && t.ncu) {
    const CounterAccess counters = counter_access();
    line(!counters.restricted, "counters", counters.summary);
  }
  line(t.compute_sanitizer.has_value(), "compute-sanitizer",
       t.compute_sanitizer ? t.compute_sanitizer->string() : "not found: sanitizer checks are skipped");
  std::string error;
  const CalibrationUse use = thresholds_here(session, error);
  if (!error.empty())
    line(false, "thresholds", error);
  else if (d.present)
    line(use.state != CalibrationUse::State::uncalibrated, "thresholds", use.header(session.course.root().string()));
}

int run_doctor(const GlobalOptions& g) {
  const Course course = Course::discover(g.root);
  std::optional<Session> session;
  std::optional<std::string> toolkit_error;
  try {
    session.emplace(Session::open(g, /*measure_bandwidth=*/true));
  } catch (const EnvironmentError& e) {
    toolkit_error = e.what();
  }
  const int code = session && session->device.present ? kExitPass : kExitEnvironment;
  if (g.json) {
    std::cout << json_text(doctor_json(course, session, toolkit_error)) << "\n";
    return code;
  }
  std::cout << "course  " << course.root().string() << " (" << course.labs().size() << " labs)\n";
  if (!course.state_note().empty()) std::cout << "state   " << course.state_note() << "\n";
  std::cout << "\n";
  if (!session) {
    std::cout << "  " << Style::fail_mark() << " " << Style::bold("toolkit") << "  " << toolkit_error.value_or("")
              << "\n";
    return code;
  }
  print_doctor(g, *session);
  return code;
}

}  // namespace

Command doctor_command() {
  return {"doctor", "Check the toolkit, driver and GPU, and measure copy bandwidth",
          [](CLI::App&, GlobalOptions& g) -> std::function<int()> { return [&g] { return run_doctor(g); }; }};
}

}  // namespace grader
