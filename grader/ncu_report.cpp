#include "ncu_report.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace grader {
namespace {

std::string fixed(double v, int precision) {
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(precision);
  os << v;
  return os.str();
}

std::string count(double v) { return fixed(v, 0); }

// One line of ncu's CSV: every field is quoted and no field holds a quote.
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out;
  std::string field;
  bool quoted = false;
  for (char ch : line) {
    if (ch == '"') quoted = !quoted;
    else if (ch == ',' && !quoted) out.push_back(field), field.clear();
    else if (ch != '\r' && ch != '\n') field += ch;
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

double ratio(double a, double b) { return b > 0 ? a / b : 0; }

}  // namespace

const std::vector<NcuMeasure>& ncu_measures() {
  static const std::vector<NcuMeasure> m = {
      {"shared_bank_conflicts_per_request",
       "bank conflicts per shared-memory request",
       {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "sm__sass_inst_executed_op_shared_ld.sum",
        "sm__sass_inst_executed_op_shared_st.sum"},
       "bank_conflicts"},
      {"global_sectors_per_request",
       "32-byte sectors per global-memory request",
       {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"},
       "uncoalesced"},
      {"local_memory_bytes",
       "bytes of local-memory traffic",
       {"l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum", "l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum"},
       "local_memory"},
  };
  return m;
}

const NcuMeasure* find_ncu_measure(const std::string& name) {
  for (const auto& m : ncu_measures())
    if (m.name == name) return &m;
  return nullptr;
}

std::vector<std::string> ncu_arguments(const std::filesystem::path& ncu, const NcuMeasure& measure,
                                       const std::string& kernel, const std::filesystem::path& log_file) {
  std::string metrics;
  for (const auto& m : measure.metrics) metrics += (metrics.empty() ? "" : ",") + m;
  return {ncu.string(),   "--clock-control", "none",  "--kernel-name", kernel, "--launch-count", "1",
          "--csv",        "--page",          "raw",   "--metrics",     metrics, "--log-file",
          log_file.string()};
}

NcuLog parse_ncu_log(const std::string& log) {
  NcuLog out;
  std::vector<std::vector<std::string>> rows;
  bool listing = false;
  for (const auto& line : lines_of(log)) {
    if (!line.empty() && line[0] == '"') {
      rows.push_back(csv_fields(line));
      continue;
    }
    if (line.find("ERR_NVGPUCTRPERM") != std::string::npos) {
      out.status = NcuLog::not_permitted;
      out.message = "this user may not read the GPU's performance counters (ERR_NVGPUCTRPERM)";
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
  if (out.status == NcuLog::no_kernel) {
    out.message = "ncu saw no launch of the kernel";
    return out;
  }
  // Row 0 names the columns, row 1 gives units, row 2 is the first launch.
  if (rows.size() < 3) {
    if (out.message.empty()) out.message = "ncu wrote no measurements";
    out.status = NcuLog::failed;
    return out;
  }
  const auto& names = rows[0];
  const auto& values = rows[2];
  for (std::size_t i = 0; i < names.size() && i < values.size(); ++i) {
    if (names[i] == "Kernel Name") out.kernel = values[i];
    if (names[i].find("__") == std::string::npos) continue;  // ncu's own columns, not metrics
    if (auto v = number(values[i])) out.metrics[names[i]] = *v;
  }
  out.status = NcuLog::ok;
  out.message.clear();
  return out;
}

std::optional<NcuValue> evaluate(const NcuMeasure& measure, const std::map<std::string, double>& metrics) {
  std::vector<double> v;
  for (const auto& name : measure.metrics) {
    const auto it = metrics.find(name);
    if (it == metrics.end()) return std::nullopt;
    v.push_back(it->second);
  }
  NcuValue out;
  if (measure.name == "shared_bank_conflicts_per_request") {
    // The worse of loads and stores: a 32-way conflict on one of them is what
    // the student must fix, and averaging it with clean stores would halve it.
    const double ld = v[0], st = v[1], ld_req = v[2], st_req = v[3];
    const bool loads_worse = ratio(ld, ld_req) >= ratio(st, st_req);
    out.value = std::max(ratio(ld, ld_req), ratio(st, st_req));
    out.summary = fixed(out.value, 1) + " " + measure.unit + (out.value > 0 ? loads_worse ? " (loads)" : " (stores)" : "");
    out.details.push_back("loads: " + fixed(ratio(ld, ld_req), 1) + " conflicts per request (" + count(ld) +
                          " over " + count(ld_req) + " requests); stores: " + fixed(ratio(st, st_req), 1) + " (" +
                          count(st) + " over " + count(st_req) + ")");
    if (ld_req + st_req == 0) out.details.push_back("the kernel executed no shared-memory loads or stores");
  } else if (measure.name == "global_sectors_per_request") {
    const double ld = v[0], st = v[1], ld_req = v[2], st_req = v[3];
    out.value = ratio(ld + st, ld_req + st_req);
    out.summary = fixed(out.value, 1) + " " + measure.unit;
    out.details.push_back("loads: " + fixed(ratio(ld, ld_req), 1) + " sectors per request (" + count(ld) + " over " +
                          count(ld_req) + "); stores: " + fixed(ratio(st, st_req), 1) + " (" + count(st) + " over " +
                          count(st_req) + "); a warp reading 32 consecutive floats needs 4");
  } else {
    out.value = v[0] + v[1];
    out.summary = count(out.value) + " " + measure.unit;
    out.details.push_back(count(v[0]) + " bytes loaded from and " + count(v[1]) + " bytes stored to local memory");
  }
  return out;
}

}  // namespace grader
