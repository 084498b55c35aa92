#include "ncu_report.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>

#include "counter_access.hpp"
#include "text.hpp"

namespace grader {
namespace {

// One line of ncu's CSV: every field is quoted and no field holds a quote.
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out;
  std::string field;
  bool quoted = false;
  for (char ch : line) {
    if (ch == '"')
      quoted = !quoted;
    else if (ch == ',' && !quoted)
      out.push_back(field), field.clear();
    else if (ch != '\r' && ch != '\n')
      field += ch;
  }
  out.push_back(field);
  return out;
}

// "1,015,808" and "7,695.52": ncu groups thousands with commas.
std::optional<double> number(std::string text) {
  std::string digits;
  for (char ch : text)
    if (ch != ',') digits += ch;
  if (digits.empty()) return std::nullopt;
  try {
    std::size_t used = 0;
    const double v = std::stod(digits, &used);
    if (used != digits.size() || !std::isfinite(v)) return std::nullopt;
    return v;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// "(32, 8, 1)" -> 256.
double product_of(const std::string& dims) {
  double p = 1;
  bool any = false;
  std::string digits;
  for (char ch : dims + ",") {
    if (std::isdigit(static_cast<unsigned char>(ch))) {
      digits += ch;
    } else if (!digits.empty()) {
      p *= std::stod(digits);
      digits.clear();
      any = true;
    }
  }
  return any ? p : 0;
}

}  // namespace

std::string readable_amount(double v) {
  if (v == 0 || std::abs(v) >= 0.1) return fixed(v, 1);
  // Two significant digits: 1 conflict in 32,768 requests reads 0.000031, not 0.0.
  return fixed(v, std::min(12, static_cast<int>(std::ceil(-std::log10(std::abs(v)))) + 1));
}

std::vector<std::string> ncu_arguments(const std::filesystem::path& ncu, const std::vector<std::string>& wanted,
                                       const std::filesystem::path& log_file) {
  std::string metrics;
  for (const auto& m : wanted) metrics += (metrics.empty() ? "" : ",") + m;
  return {ncu.string(),
          "--clock-control",
          "none",
          "--print-kernel-base",
          "mangled",
          "--launch-count",
          std::to_string(kMaxLaunchesInARun + 1),
          "--csv",
          "--page",
          "raw",
          "--metrics",
          metrics,
          "--log-file",
          log_file.string()};
}

NcuLog parse_ncu_log(const std::string& log) {
  NcuLog out;
  std::vector<std::vector<std::string>> rows;
  bool listing = false, connected = false;
  for (const auto& line : lines_of(log)) {
    if (line.rfind("==PROF== Connected to process", 0) == 0) connected = true;
    if (!line.empty() && line[0] == '"') {
      rows.push_back(csv_fields(line));
      continue;
    }
    if (line.find("ERR_NVGPUCTRPERM") != std::string::npos) {
      out.status = NcuLog::not_permitted;
      out.message = "this user may not read the GPU's performance counters (ERR_NVGPUCTRPERM): " + counter_access_fix();
      return out;
    }
    if (line.find("No kernels were profiled") != std::string::npos) out.status = NcuLog::no_kernel;
    if (line.rfind("Available Kernels", 0) == 0) {
      listing = true;
      continue;
    }
    // "1. dot_shuffle_kernel" under "Available Kernels:"
    const auto dot = line.find(". ");
    if (listing && dot != std::string::npos && dot > 0 && line.find_first_not_of("0123456789") == dot)
      out.launched.push_back(line.substr(dot + 2));
    if (line.rfind("==ERROR==", 0) == 0 && out.message.empty()) out.message = line.substr(10);
  }
  if (out.status == NcuLog::no_kernel && !connected) {
    // ncu's injection never reached the program (a sandbox without the tool's
    // libraries, say): it saw nothing at all, which says nothing of the program.
    out.status = NcuLog::failed;
    out.message = "ncu never connected to the program (its injection library did not load), so it saw no launch";
    return out;
  }
  if (out.status == NcuLog::no_kernel) {
    out.message = "ncu saw no launch of the kernel";
    return out;
  }
  // Row 0 names the columns, row 1 gives units, each row after it is a launch.
  if (rows.size() < 3) {
    if (out.message.empty()) out.message = "ncu wrote no measurements";
    out.status = NcuLog::failed;
    return out;
  }
  const auto& names = rows[0];
  for (std::size_t r = 2; r < rows.size(); ++r) {
    const auto& values = rows[r];
    NcuLaunch launch;
    for (std::size_t i = 0; i < names.size() && i < values.size(); ++i) {
      if (names[i] == "Kernel Name") launch.kernel = values[i];
      if (names[i] == "Grid Size") launch.blocks = product_of(values[i]);
      if (names[i].find("__") == std::string::npos) continue;  // ncu's own columns, not metrics
      if (auto v = number(values[i])) launch.metrics[names[i]] = *v;
    }
    out.launches.push_back(std::move(launch));
  }
  out.status = NcuLog::ok;
  out.message.clear();
  return out;
}

NcuFailure whose_failure(const NcuLog& log, RunCategory outcome) {
  if (log.status == NcuLog::not_permitted) return NcuFailure::machine;
  if (log.status == NcuLog::no_kernel) return NcuFailure::program;
  switch (outcome) {
    case RunCategory::timeout:
    case RunCategory::crash:
    case RunCategory::cuda_error:
    case RunCategory::process_limit:
      return NcuFailure::program;
    case RunCategory::ok:
    case RunCategory::no_result:
    case RunCategory::mismatch:
    case RunCategory::timed_failure:
    case RunCategory::interference:
    case RunCategory::usage:
    case RunCategory::error:
    case RunCategory::protocol:
    case RunCategory::no_device:
    case RunCategory::referee:
    case RunCategory::cancelled:
      return NcuFailure::tool;
  }
  return NcuFailure::tool;  // not reached
}

std::vector<NcuLaunch> judged_launches(const NcuMeasure& measure, const std::vector<NcuLaunch>& launches) {
  if (!measure.per_element || launches.size() < 2) return launches;
  NcuLaunch all = launches.front();
  for (std::size_t i = 1; i < launches.size(); ++i) {
    all.blocks += launches[i].blocks;
    for (const auto& [name, value] : launches[i].metrics) all.metrics[name] += value;
  }
  return {all};
}

NcuJudgement judge_launches(const NcuMeasure& measure, const std::vector<NcuLaunch>& launches, double bound,
                            double elements) {
  NcuJudgement out;
  if (launches.size() > static_cast<std::size_t>(kMaxProfiledLaunches)) {
    out.status = NcuJudgement::too_many_launches;
    return out;
  }
  const bool at_least = measure.rule == NcuMeasure::at_least;
  const auto meets = [&](double v) { return at_least ? v >= bound - 1e-9 : v <= bound + 1e-9; };
  auto judged = judged_launches(measure, launches);
  if (measure.per_stored_value) {
    const std::string& stores = measure.metrics.back();
    std::vector<NcuLaunch> storing;
    for (const auto& l : judged)
      if (l.metrics.count(stores) && l.metrics.at(stores) > 0) storing.push_back(l);
    // None stored anything: the first speaks, as 0 (stored_bytes_per_element says why).
    if (storing.empty() && !judged.empty()) storing.push_back(judged.front());
    judged = std::move(storing);
  }
  std::optional<NcuValue> worst;
  for (std::size_t i = 0; i < judged.size(); ++i) {
    const auto value = evaluate(measure, judged[i], elements);
    if (!value) return NcuJudgement{};  // a counter missing: not measured
    out.values.push_back(value->value);
    if (!meets(value->value)) ++out.failing;
    if (!worst || (at_least ? value->value < worst->value : value->value > worst->value)) {
      worst = value;
      out.worst_launch = i;
    }
  }
  if (!worst) return NcuJudgement{};
  out.worst = *worst;
  out.judged = judged.size();
  out.status = out.failing > 0 ? NcuJudgement::fails : NcuJudgement::ok;
  return out;
}

std::optional<NcuValue> evaluate(const NcuMeasure& measure, const NcuLaunch& launch, double elements) {
  std::vector<double> v;
  for (const auto& name : measure.metrics) {
    const auto it = launch.metrics.find(name);
    if (it == launch.metrics.end()) return std::nullopt;
    v.push_back(it->second);
  }
  if (measure.per_element && !(elements > 0)) return std::nullopt;
  return measure.value_of(NcuReading{measure, v, launch.blocks, elements});
}

}  // namespace grader
