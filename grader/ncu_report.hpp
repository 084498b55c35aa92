// Hardware counters from Nsight Compute (ncu): which counters a check asks
// for, how ncu is run on one kernel launch, and what its CSV log says. The
// manifest names a measure ("shared_bank_conflicts_per_request"); this file
// knows the ncu metrics behind it and how to turn them into one number and a
// sentence a student can act on.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace grader {

struct NcuMeasure {
  std::string name;     // as in lab.json
  std::string unit;     // how the value reads: "bank conflicts per shared-memory request"
  std::vector<std::string> metrics;  // the raw ncu metrics it needs
  std::string symptom;  // what a failing check reports (docs/json-output.md)
};

const std::vector<NcuMeasure>& ncu_measures();
const NcuMeasure* find_ncu_measure(const std::string& name);

// The arguments that go before the program's own: one launch of `kernel`,
// unmodified clocks (the grader never changes the GPU's settings), the
// measure's metrics only, a CSV log in `log_file`.
std::vector<std::string> ncu_arguments(const std::filesystem::path& ncu, const NcuMeasure& measure,
                                       const std::string& kernel, const std::filesystem::path& log_file);

struct NcuLog {
  // ok: one launch was profiled. not_permitted: the driver refuses access to
  // the counters (ERR_NVGPUCTRPERM). no_kernel: the program never launched the
  // kernel. failed: anything else ncu reports as an error.
  enum Status { ok, not_permitted, no_kernel, failed } status = failed;
  std::string message;                    // when not ok: one line, from ncu's own words
  std::string kernel;                     // the profiled launch's name, with its parameters
  std::map<std::string, double> metrics;  // metric name -> value (units as ncu prints them)
  std::vector<std::string> launched;      // no_kernel: the kernels ncu did see
};

NcuLog parse_ncu_log(const std::string& log);

struct NcuValue {
  double value = 0;
  std::string summary;               // "31.0 bank conflicts per shared-memory request"
  std::vector<std::string> details;  // the counters it came from
};

// Empty when a metric the measure needs is missing from the log.
std::optional<NcuValue> evaluate(const NcuMeasure& measure, const std::map<std::string, double>& metrics);

}  // namespace grader
